{{/* chainintel-lib.servicemonitor: a prometheus-operator ServiceMonitor scraping /metrics on the ops port when serviceMonitor.enabled. */}}
{{- define "chainintel-lib.servicemonitor" -}}
{{- $m := .Values.serviceMonitor | default dict -}}
{{- if $m.enabled -}}
{{- include "chainintel-lib.servicemonitorAdmitted" . -}}
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


{{/*
chainintel-lib.servicemonitorAdmitted: refuses to render a ServiceMonitor whose scrapes the
service's own NetworkPolicy would block: the policy on, and no namespace admitted to the ops
port (networkPolicy.metricsNamespaces, else global.networkPolicy.metricsNamespaces) nor an
extraIngress rule that covers it (one without ports, a port entry without a port, one naming the
ops port by name or number, or a numeric range port..endPort holding it).
Without this the install succeeds and Prometheus shows every target down.
*/}}
{{- define "chainintel-lib.servicemonitorAdmitted" -}}
{{- $np := .Values.networkPolicy | default dict -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- $gnp := $g.networkPolicy | default dict -}}
{{- $metricsNamespaces := $np.metricsNamespaces | default $gnp.metricsNamespaces | default list -}}
{{- $opsPort := toString ((.Values.ports | default dict).ops | default 9090) -}}
{{- $admitted := gt (len $metricsNamespaces) 0 -}}
{{- range $np.extraIngress -}}
{{- if not .ports }}{{ $admitted = true }}{{ end -}}
{{- range .ports -}}
{{- /* A port entry without a port is every port; a numeric port with endPort a range. */ -}}
{{- if or (not .port) (has (toString .port) (list "ops" $opsPort)) }}{{ $admitted = true }}{{ end -}}
{{- if and .endPort (regexMatch "^[0-9]+$" (toString .port)) (le (int .port) (int $opsPort)) (ge (int .endPort) (int $opsPort)) }}{{ $admitted = true }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if and $np.enabled (not $admitted) -}}
{{- fail (printf "%s: serviceMonitor.enabled with networkPolicy.enabled, but the NetworkPolicy admits no Prometheus to the ops port, so every scrape would be blocked: set global.networkPolicy.metricsNamespaces (or %s.networkPolicy.metricsNamespaces) to Prometheus' namespace, e.g. [monitoring], or add a networkPolicy.extraIngress rule for the ops port" (include "chainintel-lib.name" .) (include "chainintel-lib.name" .)) -}}
{{- end -}}
{{- end -}}
