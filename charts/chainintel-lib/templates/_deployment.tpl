{{/*
chainintel-lib.deployment renders one Deployment of the service.

Argument: dict
  "top"      the service chart's context
  "instance" (optional) a dict that specialises this Deployment:
     suffix    appended to the name ("ingest-ethereum")
     labels    extra labels, added to the selector as well (they must tell instances apart)
     env       extra container env (a list of EnvVar)
     replicas  a fixed replica count (ignores replicaCount and autoscaling)
     strategy  the Deployment strategy
     resources the container resources (default: resources)

The container runs `/usr/local/bin/<binary> serve` with the service's environment: envFrom the
ConfigMap, then envFromSecrets; env the Secret's variables (internal secret, database URL, a
Secret-held Redis URL), Kafka TLS and SASL (_kafka.tpl, with the CA bundle mounted),
<PREFIX>TIERS_FILE (uses.tiers, with a tier table configured: see _tiers.tpl), the instance's env
and extraEnv. A later envFrom source wins over an earlier one and env over every envFrom, so an
envFromSecrets key beats the ConfigMap's and loses to the Secret's variables. The migrate Job
(_migrate.tpl) builds its environment in the same order from its own copy of the ConfigMap, so a
name resolves alike in both. <PREFIX>TIERS_FILE stays out of the ConfigMap, whose settings the
migrate Job shares: the Job runs before the table's ConfigMap exists and does not mount it.
Probes hit the ops port. On
SIGTERM the service fails readiness and drains for up to SHUTDOWN_TIMEOUT; the preStop sleep lets
endpoints and the ingress forget the pod first, and terminationGracePeriodSeconds covers both.
*/}}
{{- define "chainintel-lib.deployment" -}}
{{- $top := .top -}}
{{- $v := $top.Values -}}
{{- $inst := .instance | default dict -}}
{{- $name := include "chainintel-lib.fullname" $top -}}
{{- with $inst.suffix }}{{ $name = printf "%s-%s" $name . | trunc 63 | trimSuffix "-" }}{{ end -}}
{{- $instLabels := $inst.labels | default dict -}}
{{- $probes := $v.probes | default dict -}}
{{- $ports := $v.ports | default dict -}}
{{- $autoscaling := $v.autoscaling | default dict -}}
{{- /* hasKey, not `default`: 0 is a value here (no preStop sleep, no grace), and null the default. */ -}}
{{- $preStop := 5 -}}
{{- if and (hasKey $v "preStopSleepSeconds") (not (kindIs "invalid" $v.preStopSleepSeconds)) }}{{ $preStop = $v.preStopSleepSeconds | int }}{{ end -}}
{{- $grace := 40 -}}
{{- if and (hasKey $v "terminationGracePeriodSeconds") (not (kindIs "invalid" $v.terminationGracePeriodSeconds)) }}{{ $grace = $v.terminationGracePeriodSeconds | int }}{{ end -}}
{{- if or (lt $preStop 0) (lt $grace 0) -}}
{{- fail (printf "preStopSleepSeconds (%d) and terminationGracePeriodSeconds (%d) must not be negative" $preStop $grace) -}}
{{- end -}}
{{- $tiersCM := include "chainintel-lib.serviceTiersConfigMap" $top -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "chainintel-lib.labels" $top | nindent 4 }}
    {{- with $instLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  {{- if hasKey $inst "replicas" }}
  replicas: {{ $inst.replicas }}
  {{- else if not $autoscaling.enabled }}
  replicas: {{ include "chainintel-lib.replicaCount" $top }}
  {{- end }}
  revisionHistoryLimit: {{ ternary 5 $v.revisionHistoryLimit (kindIs "invalid" $v.revisionHistoryLimit) }}
  strategy:
    {{- toYaml ($inst.strategy | default $v.strategy | default (dict "type" "RollingUpdate" "rollingUpdate" (dict "maxSurge" "25%" "maxUnavailable" 0))) | nindent 4 }}
  selector:
    matchLabels:
      {{- include "chainintel-lib.selectorLabels" $top | nindent 6 }}
      {{- with $instLabels }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
  template:
    metadata:
      labels:
        {{- include "chainintel-lib.selectorLabels" $top | nindent 8 }}
        {{- with $instLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        app.kubernetes.io/component: {{ $v.component | default "service" }}
        app.kubernetes.io/part-of: chainintel
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "chainintel-lib.configData" $top | sha256sum }}
        checksum/secret: {{ include "chainintel-lib.secretChecksum" $top }}
        {{- with include "chainintel-lib.tiersChecksum" $top }}
        checksum/tiers: {{ . }}
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "chainintel-lib.serviceAccountName" $top }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $grace }}
      securityContext:
        {{- include "chainintel-lib.podSecurityContext" $top | nindent 8 }}
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      containers:
        - name: {{ include "chainintel-lib.name" $top }}
          image: {{ include "chainintel-lib.image" $top | quote }}
          imagePullPolicy: {{ include "chainintel-lib.imagePullPolicy" $top }}
          command: ["/usr/local/bin/{{ required "binary is required" $v.binary }}"]
          args: ["serve"]
          ports:
            - name: http
              containerPort: {{ $ports.http | default 8080 }}
              protocol: TCP
            - name: ops
              containerPort: {{ $ports.ops | default 9090 }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "chainintel-lib.fullname" $top }}
            {{- with include "chainintel-lib.envFromSecrets" $top | trim }}
            {{- . | nindent 12 }}
            {{- end }}
          env:
            {{- include "chainintel-lib.secretEnv" $top | trim | nindent 12 }}
            {{- with include "chainintel-lib.kafkaEnv" $top | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- if $tiersCM }}
            - name: {{ $v.envPrefix }}TIERS_FILE
              value: {{ printf "%s/%s" (include "chainintel-lib.tiersDir" $top) (include "chainintel-lib.tiersKey" $top) | quote }}
            {{- end }}
            {{- with $inst.env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          startupProbe:
            {{- include "chainintel-lib.probe" (dict "path" "/startupz" "values" $probes.startup "defaults" (dict "periodSeconds" 2 "timeoutSeconds" 2 "failureThreshold" 60)) | nindent 12 }}
          livenessProbe:
            {{- include "chainintel-lib.probe" (dict "path" "/livez" "values" $probes.liveness "defaults" (dict "periodSeconds" 10 "timeoutSeconds" 2 "failureThreshold" 3)) | nindent 12 }}
          readinessProbe:
            {{- include "chainintel-lib.probe" (dict "path" "/readyz" "values" $probes.readiness "defaults" (dict "periodSeconds" 5 "timeoutSeconds" 2 "failureThreshold" 2)) | nindent 12 }}
          {{- if gt $preStop 0 }}
          lifecycle:
            preStop:
              sleep:
                seconds: {{ $preStop }}
          {{- end }}
          resources:
            {{- toYaml ($inst.resources | default $v.resources | default dict) | nindent 12 }}
          securityContext:
            {{- include "chainintel-lib.securityContext" $top | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with include "chainintel-lib.kafkaVolumeMounts" $top | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- if $tiersCM }}
            - name: tiers
              mountPath: {{ include "chainintel-lib.tiersDir" $top }}
              readOnly: true
            {{- end }}
            {{- with $v.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- with include "chainintel-lib.kafkaVolumes" $top | trim }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- if $tiersCM }}
        - name: tiers
          configMap:
            name: {{ $tiersCM }}
            items:
              - key: {{ include "chainintel-lib.tiersKey" $top }}
                path: {{ include "chainintel-lib.tiersKey" $top }}
        {{- end }}
        {{- with $v.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
