{{/*
chainintel-lib.migrate: the Job that runs `<binary> migrate` once per install and upgrade, as a
Helm pre-install/pre-upgrade hook, so schemas are migrated before any new replica starts and never
from every replica. It runs before the release's ConfigMap and ServiceAccount exist, so it gets a
ConfigMap of its own (<name>-migrate, the same settings as the service's ConfigMap), a hook one
weight ahead of it, and uses the namespace's default ServiceAccount without a token; the Secret
it reads must exist already (the umbrella chart creates it as an earlier hook, or it is
global.existingSecret / secret.name, or migrate.databaseURLSecret for the database URL).
Its container's environment is built in the Deployment's order (_deployment.tpl): envFrom the
ConfigMap, then envFromSecrets (whose keys win over the ConfigMap's), then env (the Secret's
variables, Kafka security, the extra env, extraEnv), so a name resolves alike in both.
Its pods carry their own name label (<name>-migrate) so no Service or PDB selects them.

Argument: dict "top" (the service chart's context) and optionally "env" (extra container env).
*/}}
{{- define "chainintel-lib.migrate" -}}
{{- $top := .top -}}
{{- $v := $top.Values -}}
{{- $m := $v.migrate | default dict -}}
{{- if $m.enabled -}}
{{- $name := printf "%s-migrate" (include "chainintel-lib.fullname" $top) | trunc 63 | trimSuffix "-" -}}
{{- $weight := $m.hookWeight | default 0 | int -}}
{{- include "chainintel-lib.checkMigrateWeight" (dict "top" $top "weight" $weight) -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}
  labels:
    helm.sh/chart: {{ include "chainintel-lib.chart" $top }}
    app.kubernetes.io/name: {{ $name }}
    app.kubernetes.io/instance: {{ $top.Release.Name }}
    app.kubernetes.io/component: migrate
    app.kubernetes.io/part-of: chainintel
    app.kubernetes.io/managed-by: {{ $top.Release.Service }}
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: {{ sub $weight 1 | quote }}
    # Kept after the hooks (replaced at the next install or upgrade): when a hook fails, Helm
    # deletes the earlier hooks' hook-succeeded objects, and the Job's later retries would then
    # find no ConfigMap to load.
    helm.sh/hook-delete-policy: before-hook-creation
data:
  {{- include "chainintel-lib.configData" $top | nindent 2 }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ $name }}
  labels:
    helm.sh/chart: {{ include "chainintel-lib.chart" $top }}
    app.kubernetes.io/name: {{ $name }}
    app.kubernetes.io/instance: {{ $top.Release.Name }}
    app.kubernetes.io/component: migrate
    app.kubernetes.io/part-of: chainintel
    app.kubernetes.io/managed-by: {{ $top.Release.Service }}
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: {{ $weight | quote }}
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  backoffLimit: {{ $m.backoffLimit | default 6 }}
  activeDeadlineSeconds: {{ $m.activeDeadlineSeconds | default 900 }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ $name }}
        app.kubernetes.io/instance: {{ $top.Release.Name }}
        app.kubernetes.io/component: migrate
        app.kubernetes.io/part-of: chainintel
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext:
        {{- include "chainintel-lib.podSecurityContext" $top | nindent 8 }}
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: migrate
          image: {{ include "chainintel-lib.image" $top | quote }}
          imagePullPolicy: {{ include "chainintel-lib.imagePullPolicy" $top }}
          command: ["/usr/local/bin/{{ required "binary is required" $v.binary }}"]
          args: ["migrate"]
          envFrom:
            - configMapRef:
                name: {{ $name }}
            {{- with include "chainintel-lib.envFromSecrets" $top | trim }}
            {{- . | nindent 12 }}
            {{- end }}
          env:
            {{- include "chainintel-lib.secretEnvWith" (dict "top" $top "databaseURLSecret" $m.databaseURLSecret) | trim | nindent 12 }}
            {{- with include "chainintel-lib.kafkaEnv" $top | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with .env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          resources:
            {{- toYaml ($m.resources | default $v.resources | default dict) | nindent 12 }}
          securityContext:
            {{- include "chainintel-lib.securityContext" $top | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with include "chainintel-lib.kafkaVolumeMounts" $top | trim }}
            {{- . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- with include "chainintel-lib.kafkaVolumes" $top | trim }}
        {{- . | nindent 8 }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
{{- end -}}

{{/*
The hook weight of the Secret the umbrella chart creates (chainintel/templates/secret.yaml): the
migrate Jobs, which read it, must come after it.
*/}}
{{- define "chainintel-lib.secretHookWeight" -}}-10{{- end -}}

{{/*
Fails the render when a migrate Job of a service chart under the umbrella, reading the Secret the
umbrella creates (no secret.name, no global.existingSecret), would run no later than that Secret's
hook: Helm runs hooks by weight, so a fresh install's Job would find no Secret.
Argument: dict "top" (the service chart's context) and "weight" (migrate.hookWeight).
*/}}
{{- define "chainintel-lib.checkMigrateWeight" -}}
{{- $top := .top -}}
{{- $g := include "chainintel-lib.global" $top | fromYaml -}}
{{- $umbrellaSecret := and (contains "/charts/" $top.Template.BasePath) (not ($top.Values.secret | default dict).name) (not $g.existingSecret) -}}
{{- $secretWeight := include "chainintel-lib.secretHookWeight" $top | int -}}
{{- if and $umbrellaSecret (le .weight $secretWeight) -}}
{{- fail (printf "%s: migrate.hookWeight %d must be above %d, the hook weight of the Secret the umbrella chart creates (%s): the migrate Job reads it, so it must run after it (Helm runs hooks by weight) or a fresh install fails. Raise it, or name an existing Secret (global.existingSecret)" (include "chainintel-lib.name" $top) .weight $secretWeight (include "chainintel-lib.secretName" $top)) -}}
{{- end -}}
{{- end -}}
