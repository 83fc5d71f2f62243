{{/*
chainintel-lib.networkpolicy: the service's pods accept traffic only from pods of the same
release (app.kubernetes.io/instance), plus, on the HTTP port, from the namespaces in
networkPolicy.ingressNamespaces (the edge: the ingress controller's) and, on the ops port, from
networkPolicy.metricsNamespaces (Prometheus). Internal routes (/internal/...) are therefore never
reachable from outside the release; the ingress reaches only the edge, which never routes them.
*/}}
{{- define "chainintel-lib.networkpolicy" -}}
{{- $np := .Values.networkPolicy | default dict -}}
{{- if $np.enabled -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "chainintel-lib.fullname" . }}
  labels:
    {{- include "chainintel-lib.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "chainintel-lib.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
  ingress:
    - from:
        - podSelector:
            matchLabels:
              app.kubernetes.io/instance: {{ .Release.Name }}
      ports:
        - port: http
          protocol: TCP
        - port: ops
          protocol: TCP
    {{- range $np.ingressNamespaces }}
    - from:
        - namespaceSelector:
            matchLabels:
              kubernetes.io/metadata.name: {{ . }}
      ports:
        - port: http
          protocol: TCP
    {{- end }}
    {{- range $np.metricsNamespaces }}
    - from:
        - namespaceSelector:
            matchLabels:
              kubernetes.io/metadata.name: {{ . }}
      ports:
        - port: ops
          protocol: TCP
    {{- end }}
    {{- with $np.extraIngress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}
{{- end -}}
