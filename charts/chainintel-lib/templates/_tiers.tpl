{{/*
The tier table (docs/edge.md, Tiers): rate limits, credit limits, overage and stream quotas. The
edge enforces the first three and stream-fanout the last two and the credit limits, so both must
read one table: global.tiers (the table inline, which the umbrella renders once into the
ConfigMap <fullname>-tiers, <fullname> being chainintel-lib.releaseFullname: release myrel gives
myrel-chainintel-tiers) or global.tiersConfigMap (an existing ConfigMap with the key
tiers.yaml). Neither: both services use their built-in table. Either replaces the built-in table
(keys whose tier it lacks get 403). A chart whose uses.tiers is true
mounts the ConfigMap read-only and points <PREFIX>TIERS_FILE at it.
*/}}

{{/* The directory the table is mounted in, and the file the services read. */}}
{{- define "chainintel-lib.tiersDir" -}}/etc/chainintel/tiers{{- end -}}
{{- define "chainintel-lib.tiersKey" -}}tiers.yaml{{- end -}}

{{/*
The ConfigMap holding the table, or "" for the built-in one. Argument: a chart's context (the
umbrella's or a service chart's).
*/}}
{{- define "chainintel-lib.tiersConfigMapName" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- if and $g.tiers $g.tiersConfigMap -}}
{{- fail "set global.tiers or global.tiersConfigMap, not both" -}}
{{- end -}}
{{- if $g.tiersConfigMap -}}
{{- $g.tiersConfigMap -}}
{{- else if $g.tiers -}}
{{- printf "%s-tiers" (include "chainintel-lib.releaseFullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
The ConfigMap a service mounts ("" when it reads no table or the built-in one). Only the umbrella
renders global.tiers into a ConfigMap; a service chart installed on its own (not under charts/
of another chart) refuses it, since a second release given the same values would hold a second
copy of the table that could drift from the first: create one ConfigMap and name it in
global.tiersConfigMap of both releases instead.
*/}}
{{- define "chainintel-lib.serviceTiersConfigMap" -}}
{{- if (.Values.uses | default dict).tiers -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- if and $g.tiers (not $g.tiersConfigMap) (not (contains "/charts/" .Template.BasePath)) -}}
{{- fail (printf "%s installed on its own cannot render global.tiers (only the umbrella chart renders it, once for the edge and stream-fanout): create a ConfigMap with the key tiers.yaml and set global.tiersConfigMap" (include "chainintel-lib.name" .)) -}}
{{- end -}}
{{- include "chainintel-lib.tiersConfigMapName" . -}}
{{- end -}}
{{- end -}}

{{/*
global.tiers validated and rendered as the file the services load ({tiers: [...]}). The rules are
those of services/edge/tiers.New, checked here so a wrong table fails the install instead of
crash-looping both services; keys the table does not know are refused too (the services' YAML
decoder would ignore a misspelt quota and leave it 0). Numbers are written as integers whatever
the values file made of them.
*/}}
{{- define "chainintel-lib.tiersYAML" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- if not (kindIs "slice" $g.tiers) -}}
{{- fail "global.tiers must be a list of tiers ({name, rate, burst, heavyRate, api, includedCredits, overage, streamHourly, streamMonthly}; docs/edge.md, Tiers)" -}}
{{- end -}}
{{- $seen := dict -}}
tiers:
{{- range $i, $t := $g.tiers -}}
{{- $tier := include "chainintel-lib.tier" (dict "i" $i "tier" $t) -}}
{{- $name := (fromYaml $tier).name -}}
{{- if hasKey $seen $name -}}
{{- fail (printf "global.tiers[%d]: tier %q is listed twice" $i $name) -}}
{{- end -}}
{{- $_ := set $seen $name true }}
  - {{ $tier | nindent 4 | trim }}
{{- end -}}
{{- end -}}

{{/* One tier of global.tiers, validated, as YAML. Argument: dict "i" (its index) "tier". */}}
{{- define "chainintel-lib.tier" -}}
{{- $t := .tier -}}
{{- if not (kindIs "map" $t) -}}
{{- fail (printf "global.tiers[%d] must be a map (name, rate, burst, heavyRate, ...), not %v" .i $t) -}}
{{- end -}}
{{- $where := printf "global.tiers[%d]" .i -}}
{{- $known := list "name" "rate" "burst" "heavyRate" "api" "includedCredits" "overage" "streamHourly" "streamMonthly" -}}
{{- range $k, $_ := $t -}}
{{- if not (has $k $known) -}}
{{- fail (printf "%s: unknown key %q; a tier has %s" $where $k (join ", " $known)) -}}
{{- end -}}
{{- end -}}
{{- $name := $t.name | default "" | toString -}}
{{- if not (regexMatch "^[a-z0-9][a-z0-9_-]{0,31}$" $name) -}}
{{- fail (printf "%s: name %q must match ^[a-z0-9][a-z0-9_-]{0,31}$" $where $name) -}}
{{- end -}}
{{- $where = printf "%s (%s)" $where $name -}}
{{- $out := dict "name" $name -}}
{{- range $k := list "rate" "burst" "heavyRate" "includedCredits" "streamHourly" "streamMonthly" -}}
{{- $v := index $t $k -}}
{{- $positive := has $k (list "rate" "burst" "heavyRate") -}}
{{- if kindIs "invalid" $v -}}
{{- if $positive }}{{ fail (printf "%s: %s is required" $where $k) }}{{ end -}}
{{- $v = 0 -}}
{{- end -}}
{{- if not (or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v)) -}}
{{- fail (printf "%s: %s must be a whole number, not %q" $where $k (toString $v)) -}}
{{- end -}}
{{- if ne (float64 $v) (float64 (int64 $v)) -}}
{{- fail (printf "%s: %s must be a whole number, not %v" $where $k $v) -}}
{{- end -}}
{{- if and $positive (le (int64 $v) 0) -}}
{{- fail (printf "%s: %s must be positive" $where $k) -}}
{{- end -}}
{{- if lt (int64 $v) 0 -}}
{{- fail (printf "%s: %s must not be negative" $where $k) -}}
{{- end -}}
{{- $_ := set $out $k (int64 $v) -}}
{{- end -}}
{{- range $k := list "api" "overage" -}}
{{- $v := index $t $k -}}
{{- if kindIs "invalid" $v }}{{ $v = false }}{{ end -}}
{{- if not (kindIs "bool" $v) -}}
{{- fail (printf "%s: %s must be true or false, not %q" $where $k (toString $v)) -}}
{{- end -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* The pod annotation that rolls the pods when global.tiers changes (none for an existing ConfigMap, whose content the chart cannot see). */}}
{{- define "chainintel-lib.tiersChecksum" -}}
{{- $g := include "chainintel-lib.global" . | fromYaml -}}
{{- if and (include "chainintel-lib.serviceTiersConfigMap" .) $g.tiers -}}
{{- include "chainintel-lib.tiersYAML" . | sha256sum -}}
{{- end -}}
{{- end -}}
