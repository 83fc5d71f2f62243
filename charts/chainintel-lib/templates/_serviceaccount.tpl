{{/* chainintel-lib.serviceaccount: the service's own identity; no API token is mounted (services never call the Kubernetes API). */}}
{{- define "chainintel-lib.serviceaccount" -}}
{{- $sa := .Values.serviceAccount | default dict -}}
{{- if $sa.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "chainintel-lib.serviceAccountName" . }}
  labels:
    {{- include "chainintel-lib.labels" . | nindent 4 }}
  {{- with $sa.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: false
{{- end -}}
{{- end -}}
