{{/*
chainintel-lib.documents: joins rendered objects (a list of strings) into one YAML stream,
leaving out the empty ones (a disabled HPA, PDB, ...), so no empty document reaches Helm.
*/}}
{{- define "chainintel-lib.documents" -}}
{{- $out := list -}}
{{- range . -}}
{{- if trim . }}{{ $out = append $out (trim .) }}{{ end -}}
{{- end -}}
{{- join "\n---\n" $out -}}
{{- end -}}

{{/*
chainintel-lib.all: every object of a service that runs as one Deployment. A service chart's
templates include it (or the individual templates, as ingest does for its per-chain Deployments).
*/}}
{{- define "chainintel-lib.all" -}}
{{- include "chainintel-lib.documents" (list
  (include "chainintel-lib.serviceaccount" .)
  (include "chainintel-lib.configmap" .)
  (include "chainintel-lib.service" .)
  (include "chainintel-lib.deployment" (dict "top" .))
  (include "chainintel-lib.hpa" .)
  (include "chainintel-lib.pdb" .)
  (include "chainintel-lib.servicemonitor" .)
  (include "chainintel-lib.networkpolicy" .)
  (include "chainintel-lib.migrate" (dict "top" .))
) -}}
{{- end -}}
