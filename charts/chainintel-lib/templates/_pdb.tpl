{{/*
chainintel-lib.pdb: a PodDisruptionBudget over the service's pods when pdb.enabled (minAvailable,
else maxUnavailable). A whole-number minAvailable at or above the fewest replicas the service can
run (replicaCount, or autoscaling.minReplicas) would refuse every eviction and block kubectl
drain, so it is refused.
*/}}
{{- define "chainintel-lib.pdb" -}}
{{- $p := .Values.pdb | default dict -}}
{{- if $p.enabled -}}
{{- if and (not (kindIs "invalid" $p.minAvailable)) (not (kindIs "string" $p.minAvailable)) -}}
{{- $a := .Values.autoscaling | default dict -}}
{{- $fewest := ternary ($a.minReplicas | default 1) (.Values.replicaCount | default 1) (not (not $a.enabled)) | int -}}
{{- if ge ($p.minAvailable | int) $fewest }}{{ fail (printf "%s: pdb.minAvailable %d with as few as %d replicas would block every drain; use pdb.maxUnavailable, or more replicas" (include "chainintel-lib.name" .) ($p.minAvailable | int) $fewest) }}{{ end -}}
{{- end -}}
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
