{{/* chainintel-lib.configmap: the service's non-secret environment (see chainintel-lib.configData). */}}
{{- define "chainintel-lib.configmap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "chainintel-lib.fullname" . }}
  labels:
    {{- include "chainintel-lib.labels" . | nindent 4 }}
data:
  {{- include "chainintel-lib.configData" . | nindent 2 }}
{{- end -}}
