{{/* chainintel-lib.pdb: a PodDisruptionBudget over the service's pods when pdb.enabled (minAvailable, else maxUnavailable). */}}
{{- define "chainintel-lib.pdb" -}}
{{- $p := .Values.pdb | default dict -}}
{{- if $p.enabled -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "chainintel-lib.fullname" . }}
  labels:
    {{- include "chainintel-lib.labels" . | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" $p.minAvailable) }}
  minAvailable: {{ $p.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $p.maxUnavailable | default 1 }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "chainintel-lib.selectorLabels" . | nindent 6 }}
{{- end -}}
{{- end -}}
