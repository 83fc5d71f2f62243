{{/*
chainintel-lib.networkpolicy: the service's pods accept traffic from pods of the same release
(app.kubernetes.io/instance) on both ports; on the HTTP port also from every chainintel pod of
the namespace (app.kubernetes.io/part-of: chainintel, which every Deployment and Job of these
charts carries), so services installed from their own charts as separate releases reach each
other (the edge its upstreams, intelligence user-labels, ...); on the HTTP port from the
namespaces in networkPolicy.ingressNamespaces (the edge: the ingress controller's); and on the
ops port from networkPolicy.metricsNamespaces, else global.networkPolicy.metricsNamespaces
(Prometheus). Internal routes (/internal/...) are therefore never reachable from outside the
namespace's chainintel pods; the ingress reaches only the edge, which never routes them.
*/}}
{{- define "chainintel-lib.networkpolicy" -}}
{{- $np := .Values.networkPolicy | default dict -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- $gnp := $g.networkPolicy | default dict -}}
{{- $metricsNamespaces := $np.metricsNamespaces | default $gnp.metricsNamespaces | default list -}}
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
    - from:
        - podSelector:
            matchLabels:
              app.kubernetes.io/part-of: chainintel
      ports:
        - port: http
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
    {{- range $metricsNamespaces }}
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
