{{/*
chainintel-lib: names, labels, image, secrets and environment shared by every service chart.

Every template takes the service chart's top-level context (.) unless it says otherwise. A service
chart's values.yaml declares what the templates read; the library supplies defaults only for
knobs that rarely change (probe timings, update strategy).
*/}}

{{/* The service's name, e.g. "edge". */}}
{{- define "chainintel-lib.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The name of the service's objects. It is the service name without the release name, so the
in-cluster URLs are the ones the services default to (http://transfers:8080): install one
chainintel release per namespace.
*/}}
{{- define "chainintel-lib.fullname" -}}
{{- default (include "chainintel-lib.name" .) .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
chainintel-lib.fullname of a service chart, seen from the umbrella chart (Ingress backend,
NOTES, the alerts' Prometheus jobs): fullnameOverride, else nameOverride, else the chart's name.
Argument: dict "chart" (the service chart's name, e.g. "edge") "values" (its values under the
umbrella, e.g. .Values.edge).
*/}}
{{- define "chainintel-lib.serviceFullname" -}}
{{- $v := .values | default dict -}}
{{- $name := $v.nameOverride | default .chart | trunc 63 | trimSuffix "-" -}}
{{- $v.fullnameOverride | default $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "chainintel-lib.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that select the service's serving pods (Service, PDB, NetworkPolicy, HPA target). */}}
{{- define "chainintel-lib.selectorLabels" -}}
app.kubernetes.io/name: {{ include "chainintel-lib.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "chainintel-lib.labels" -}}
helm.sh/chart: {{ include "chainintel-lib.chart" . }}
{{ include "chainintel-lib.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: {{ .Values.component | default "service" }}
app.kubernetes.io/part-of: chainintel
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The global values, or an empty map when the chart is installed on its own. */}}
{{- define "chainintel-lib.global" -}}
{{- toYaml (.Values.global | default dict) -}}
{{- end -}}

{{/*
The container image: [global.image.registry/]image.repository:tag, where tag is image.tag, else
global.image.tag, else the chart's appVersion. A tag starting with "sha256:" is used as a digest.
*/}}
{{- define "chainintel-lib.image" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- $gi := $g.image | default dict -}}
{{- $repo := .Values.image.repository -}}
{{- with $gi.registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}{{ end -}}
{{- $tag := .Values.image.tag | default $gi.tag | default .Chart.AppVersion | toString -}}
{{- if hasPrefix "sha256:" $tag -}}
{{- printf "%s@%s" $repo $tag -}}
{{- else -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}
{{- end -}}

{{- define "chainintel-lib.imagePullPolicy" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- .Values.image.pullPolicy | default ($g.image | default dict).pullPolicy | default "IfNotPresent" -}}
{{- end -}}

{{/*
The Secret holding the shared internal secret and the database URL: secret.name, else
global.existingSecret, else the one the umbrella chart creates (chainintel-lib.releaseFullname).
*/}}
{{- define "chainintel-lib.secretName" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- $s := .Values.secret | default dict -}}
{{- $s.name | default $g.existingSecret | default (include "chainintel-lib.releaseFullname" .) -}}
{{- end -}}

{{/* The name of the release's own objects (Secret, Ingress): the release name, with "-chainintel" unless it contains it. */}}
{{- define "chainintel-lib.releaseFullname" -}}
{{- if contains "chainintel" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-chainintel" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "chainintel-lib.serviceAccountName" -}}
{{- $sa := .Values.serviceAccount | default dict -}}
{{- if $sa.create -}}
{{- $sa.name | default (include "chainintel-lib.fullname" .) -}}
{{- else -}}
{{- $sa.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* A list or a comma-separated string, joined with commas. Argument: the value. */}}
{{- define "chainintel-lib.csv" -}}
{{- if kindIs "slice" . -}}
{{- $out := list -}}
{{- range . -}}
{{- if kindIs "map" . }}{{ $out = append $out .name }}{{ else }}{{ $out = append $out (toString .) }}{{ end -}}
{{- end -}}
{{- join "," $out -}}
{{- else if . -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/*
The service's non-secret configuration as a map of environment variables (rendered into the
ConfigMap the Deployment loads with envFrom, and into the migrate Job's own ConfigMap, a hook
made before the Job since the release's ConfigMap does not exist yet when it runs). Every name
carries the service's prefix (envPrefix), but for the Go runtime's GOMEMLIMIT, GOGC, GOMAXPROCS
and GODEBUG given in env.
*/}}
{{- define "chainintel-lib.configData" -}}
{{- $v := .Values -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- $p := required "envPrefix is required (e.g. EDGE_)" $v.envPrefix -}}
{{- $uses := $v.uses | default dict -}}
{{- $ports := $v.ports | default dict -}}
{{- $tel := $v.telemetry | default dict -}}
{{- $d := dict -}}
{{- $_ := set $d (print $p "HTTP_ADDR") (printf ":%v" ($ports.http | default 8080)) -}}
{{- $_ := set $d (print $p "OPS_ADDR") (printf ":%v" ($ports.ops | default 9090)) -}}
{{- $_ := set $d (print $p "LOG_LEVEL") ($v.logLevel | default $g.logLevel | default "info") -}}
{{- $_ := set $d (print $p "SHUTDOWN_TIMEOUT") ($v.shutdownTimeout | default "25s") -}}
{{- with $tel.otlpEndpoint | default $g.otlpEndpoint -}}
{{- /* The services refuse an endpoint without an http(s) scheme and a host at start
(libs/telemetry Config.Validate): failing the render says so at `helm upgrade` instead of a
crash-looping rollout. The scheme is checked before urlParse, which fails on the gRPC habit
10.0.0.5:4317 with a message naming no value. */ -}}
{{- if not (or (hasPrefix "http://" (toString .)) (hasPrefix "https://" (toString .))) -}}
{{- fail (printf "otlpEndpoint %q (global.otlpEndpoint or <service>.telemetry.otlpEndpoint): the services speak OTLP/HTTP and need a URL with an http:// or https:// scheme, e.g. http://otel-collector:4318, not the OTLP/gRPC host:4317" (toString .)) -}}
{{- end -}}
{{- if not (urlParse (toString .)).host -}}
{{- fail (printf "otlpEndpoint %q (global.otlpEndpoint or <service>.telemetry.otlpEndpoint): the URL has no host; want e.g. http://otel-collector:4318" (toString .)) -}}
{{- end -}}
{{- $_ := set $d (print $p "OTLP_ENDPOINT") (toString .) -}}
{{- end -}}
{{- $ratio := $g.traceSampleRatio -}}
{{- if and (hasKey $tel "traceSampleRatio") (not (kindIs "invalid" $tel.traceSampleRatio)) }}{{ $ratio = $tel.traceSampleRatio }}{{ end -}}
{{- if and (not (kindIs "invalid" $ratio)) (ne (toString $ratio) "") }}{{ $_ := set $d (print $p "TRACE_SAMPLE_RATIO") (toString $ratio) }}{{ end -}}
{{- if $uses.postgres -}}
{{- $db := $v.database | default dict -}}
{{- $_ := set $d (print $p "DATABASE_MAX_CONNS") (toString ($db.maxConns | default 16)) -}}
{{- end -}}
{{- if $uses.kafka -}}
{{- $k := $v.kafka | default dict -}}
{{- $gk := $g.kafka | default dict -}}
{{- $brokers := include "chainintel-lib.csv" ($k.brokers | default $gk.brokers | default "kafka:9092") -}}
{{- $_ := set $d (print $p "KAFKA_BROKERS") $brokers -}}
{{- with $k.partitions | default $gk.partitions }}{{ $_ := set $d (print $p "KAFKA_PARTITIONS") (toString .) }}{{ end -}}
{{- with $k.replicationFactor | default $gk.replicationFactor }}{{ $_ := set $d (print $p "KAFKA_REPLICATION_FACTOR") (toString .) }}{{ end -}}
{{- end -}}
{{- if and $uses.redis (not (include "chainintel-lib.redisURLSecret" . | fromYaml)) -}}
{{- $r := $v.redis | default dict -}}
{{- $_ := set $d (print $p "REDIS_URL") ($r.url | default $g.redisURL | default "redis://redis:6379/0") -}}
{{- end -}}
{{- with include "chainintel-lib.csv" ($v.chains | default $g.chains) }}{{ $_ := set $d (print $p "CHAINS") . }}{{ end -}}
{{- range $name, $url := $v.upstreams | default dict -}}
{{- $_ := set $d (printf "%sUPSTREAM_%s" $p ($name | upper | replace "-" "_")) (toString $url) -}}
{{- end -}}
{{- range $k, $val := $v.env | default dict -}}
{{- if not (kindIs "invalid" $val) -}}
{{- $name := include "chainintel-lib.envName" (dict "prefix" $p "name" $k) -}}
{{- $_ := set $d $name (toString $val) -}}
{{- end -}}
{{- end -}}
{{- toYaml $d -}}
{{- end -}}

{{/*
The variable a name given in an env: map sets: the name with the service's prefix unless it has
it already. The Go runtime's own variables keep their bare names: the runtime (and
libs/service TuneRuntime, which leaves a set GOMEMLIMIT or GOGC alone) reads no prefixed ones.
Argument: dict "prefix" and "name".
*/}}
{{- define "chainintel-lib.envName" -}}
{{- if or (hasPrefix .prefix .name) (has .name (list "GOMEMLIMIT" "GOGC" "GOMAXPROCS" "GODEBUG")) -}}
{{- .name -}}
{{- else -}}
{{- print .prefix .name -}}
{{- end -}}
{{- end -}}

{{/*
The Secret key holding the Redis URL ({name, key}) of a service that uses Redis: redis.urlSecret,
else global.redisURLSecret unless the service sets its own redis.url (a service's own value wins
over the global one, Secret or not); empty when none applies (the URL then goes into the
ConfigMap).
*/}}
{{- define "chainintel-lib.redisURLSecret" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- $r := .Values.redis | default dict -}}
{{- $rs := $r.urlSecret | default dict -}}
{{- if and (not $rs.name) (not $r.url) }}{{ $rs = $g.redisURLSecret | default dict }}{{ end -}}
{{- if and (.Values.uses | default dict).redis $rs.name -}}
{{- toYaml (dict "name" $rs.name "key" (required "redis.urlSecret / global.redisURLSecret needs a key" $rs.key)) -}}
{{- end -}}
{{- end -}}

{{/*
The secret environment every container gets: the internal secret, the database URL, and the
Redis URL when a Secret holds it.
*/}}
{{- define "chainintel-lib.secretEnv" -}}
{{- include "chainintel-lib.secretEnvWith" (dict "top" .) -}}
{{- end -}}

{{/*
chainintel-lib.secretEnv with the database URL from another Secret when "databaseURLSecret"
({name, key}) names one: the migrate Job's migrate.databaseURLSecret, for a direct or
session-mode connection where the serving pods go through a transaction-mode pooler. The
internal secret still comes from the service's Secret. Argument: dict "top" (the service
chart's context) and optionally "databaseURLSecret".
*/}}
{{- define "chainintel-lib.secretEnvWith" -}}
{{- $top := .top -}}
{{- $p := $top.Values.envPrefix -}}
{{- $s := $top.Values.secret | default dict -}}
{{- $name := include "chainintel-lib.secretName" $top -}}
{{- $db := dict "name" $name "key" ($s.databaseURLKey | default "database-url") -}}
{{- with .databaseURLSecret | default dict -}}
{{- if .name }}{{ $db = dict "name" .name "key" (required "migrate.databaseURLSecret needs a key" .key) }}{{ end -}}
{{- end }}
- name: {{ $p }}INTERNAL_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: {{ $s.internalSecretKey | default "internal-secret" }}
{{- if ($top.Values.uses | default dict).postgres }}
- name: {{ $p }}DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $db.name }}
      key: {{ $db.key }}
{{- end }}
{{- with include "chainintel-lib.redisURLSecret" $top | fromYaml }}
- name: {{ $p }}REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .name }}
      key: {{ .key }}
{{- end }}
{{- end -}}

{{/*
The checksum of the Secrets the pods read, as a pod annotation (checksum/secret), so a change
rolls them as checksum/config does for the ConfigMap. For the umbrella's own Secret it hashes the
values it is made from (global.internalSecret, global.databaseURL): the random internal secret
is kept across upgrades and must not roll anything. For a Secret the chart does not make
(existingSecret, secret.name, the Redis URL's) it hashes the Secret's data as `lookup` finds it
at upgrade, so `helm upgrade` after rotating one rolls the pods. Under `helm template` (Argo CD)
lookup finds nothing: only the names are hashed, and a rotation needs a rollout restart.
*/}}
{{- define "chainintel-lib.secretChecksum" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- $own := not (or (.Values.secret | default dict).name $g.existingSecret) -}}
{{- $names := list (include "chainintel-lib.secretName" .) -}}
{{- with include "chainintel-lib.redisURLSecret" . | fromYaml }}{{ $names = append $names .name }}{{ end -}}
{{- $in := dict "names" $names -}}
{{- if $own -}}
{{- $_ := set $in "internalSecret" ($g.internalSecret | default "" | toString) -}}
{{- $_ := set $in "databaseURL" ($g.databaseURL | default "" | toString) -}}
{{- end -}}
{{- range $i, $name := $names -}}
{{- if or $i (not $own) -}}
{{- $found := lookup "v1" "Secret" $.Release.Namespace $name -}}
{{- $_ := set $in (printf "data-%s" $name) (($found | default dict).data | default dict) -}}
{{- end -}}
{{- end -}}
{{- toYaml $in | sha256sum -}}
{{- end -}}

{{/* Secrets loaded whole into the environment (envFromSecrets), global ones first. */}}
{{- define "chainintel-lib.envFromSecrets" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- range concat ($g.envFromSecrets | default list) (.Values.envFromSecrets | default list) }}
- secretRef:
    name: {{ . }}
{{- end }}
{{- end -}}

{{- define "chainintel-lib.podSecurityContext" -}}
{{- toYaml (.Values.podSecurityContext | default (dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532 "seccompProfile" (dict "type" "RuntimeDefault"))) -}}
{{- end -}}

{{- define "chainintel-lib.securityContext" -}}
{{- toYaml (.Values.securityContext | default (dict "runAsNonRoot" true "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "capabilities" (dict "drop" (list "ALL")) "seccompProfile" (dict "type" "RuntimeDefault"))) -}}
{{- end -}}

{{/* A probe on the ops port. Arguments: dict "path" "/livez" "defaults" dict "values" dict. */}}
{{- define "chainintel-lib.probe" -}}
httpGet:
  path: {{ .path }}
  port: ops
{{ toYaml (merge (deepCopy (.values | default dict)) .defaults) }}
{{- end -}}
