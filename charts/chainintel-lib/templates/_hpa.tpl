{{/*
chainintel-lib.hpa: a HorizontalPodAutoscaler on CPU (and memory when targetMemoryUtilizationPercentage
is set) when autoscaling.enabled. Consumers gain nothing past the topics' partition count: with
autoscaling.partitionBound, maxReplicas defaults to it and may not exceed it. minReplicas above
maxReplicas (set, or defaulted to the partitions) is refused, naming both.
*/}}
{{- define "chainintel-lib.hpa" -}}
{{- $a := .Values.autoscaling | default dict -}}
{{- if $a.enabled -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "chainintel-lib.fullname" . }}
  labels:
    {{- include "chainintel-lib.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "chainintel-lib.fullname" . }}
  {{- $min := $a.minReplicas | default 1 | int }}
  {{- $max := include "chainintel-lib.maxReplicas" . | int }}
  {{- if gt $min $max }}
  {{- $why := "" }}
  {{- if and $a.partitionBound (not $a.maxReplicas) }}{{ $why = ", the topic partitions its consumers share" }}{{ end }}
  {{- fail (printf "%s: autoscaling.minReplicas %d exceeds maxReplicas %d%s" (include "chainintel-lib.name" .) $min $max $why) }}
  {{- end }}
  minReplicas: {{ $min }}
  maxReplicas: {{ $max }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $a.targetCPUUtilizationPercentage | default 70 }}
    {{- with $a.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
  {{- with $a.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}

{{/*
The fixed replica count when autoscaling is off (replicaCount, default 1). A partition-bound
consumer is refused more replicas than partitions, as its maxReplicas is.
*/}}
{{- define "chainintel-lib.replicaCount" -}}
{{- $a := .Values.autoscaling | default dict -}}
{{- $n := .Values.replicaCount | default 1 | int -}}
{{- if $a.partitionBound -}}
{{- $partitions := include "chainintel-lib.partitions" . | int -}}
{{- if gt $n $partitions }}{{ fail (printf "%s: replicaCount %d exceeds the %d topic partitions its consumers share" (include "chainintel-lib.name" .) $n $partitions) }}{{ end -}}
{{- end -}}
{{- $n -}}
{{- end -}}

{{/* The topics' partition count: kafka.partitions, else global.kafka.partitions, else 8. */}}
{{- define "chainintel-lib.partitions" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- (.Values.kafka | default dict).partitions | default ($g.kafka | default dict).partitions | default 8 | int -}}
{{- end -}}

{{/* The autoscaler's maxReplicas (see chainintel-lib.hpa). */}}
{{- define "chainintel-lib.maxReplicas" -}}
{{- $a := .Values.autoscaling | default dict -}}
{{- if $a.partitionBound -}}
{{- $partitions := include "chainintel-lib.partitions" . | int -}}
{{- $max := $a.maxReplicas | default $partitions | int -}}
{{- if gt $max $partitions }}{{ fail (printf "%s: autoscaling.maxReplicas %d exceeds the %d topic partitions its consumers share" (include "chainintel-lib.name" .) $max $partitions) }}{{ end -}}
{{- $max -}}
{{- else -}}
{{- required "autoscaling.maxReplicas is required" $a.maxReplicas -}}
{{- end -}}
{{- end -}}
