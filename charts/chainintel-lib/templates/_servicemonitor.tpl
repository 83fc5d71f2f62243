{{/* chainintel-lib.servicemonitor: a prometheus-operator ServiceMonitor scraping /metrics on the ops port when serviceMonitor.enabled. */}}
{{- define "chainintel-lib.servicemonitor" -}}
{{- $m := .Values.serviceMonitor | default dict -}}
{{- if $m.enabled -}}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "chainintel-lib.fullname" . }}
  labels:
    {{- include "chainintel-lib.labels" . | nindent 4 }}
    {{- with $m.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "chainintel-lib.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: ops
      path: /metrics
      scheme: http
      interval: {{ $m.interval | default "30s" }}
      scrapeTimeout: {{ $m.scrapeTimeout | default "10s" }}
      {{- with $m.relabelings }}
      relabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
{{- end -}}
