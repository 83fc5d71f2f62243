{{/*
chainintel-lib.service: the ClusterIP Service in front of every pod of the service (http and ops
ports). Its http port is 8080 whatever ports.http is: every in-cluster URL of a peer names it
(the edge's upstreams, the services' *_URL defaults such as intelligence's
http://transfers:8080), and a chart cannot read another chart's values to follow an override.
ports.http is the container's port, which targetPort http forwards to.
*/}}
{{- define "chainintel-lib.service" -}}
{{- $svc := .Values.service | default dict -}}
{{- $ports := .Values.ports | default dict -}}
{{- if eq (int ($ports.ops | default 9090)) 8080 -}}
{{- fail (printf "%s: ports.ops 8080 is the Service's http port (every peer's URL names :8080); give the ops port another number" .Chart.Name) -}}
{{- end -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "chainintel-lib.fullname" . }}
  labels:
    {{- include "chainintel-lib.labels" . | nindent 4 }}
  {{- with $svc.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $svc.type | default "ClusterIP" }}
  selector:
    {{- include "chainintel-lib.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: 8080
      targetPort: http
      protocol: TCP
      appProtocol: http
    - name: ops
      port: {{ $ports.ops | default 9090 }}
      targetPort: ops
      protocol: TCP
      appProtocol: http
{{- end -}}
