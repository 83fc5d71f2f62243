{{/*
Kafka TLS and SASL, for a managed Kafka (MSK, Confluent Cloud, Aiven). Read from kafka.tls /
kafka.sasl of the service, else global.kafka.tls / global.kafka.sasl:

  tls:
    enabled: false
    caSecret: {name: "", key: ca.crt}   # a private CA's PEM bundle, mounted as a file
    serverName: ""                      # empty: each broker's host name
    insecureSkipVerify: false           # testing only
  sasl:
    mechanism: none                     # none | plain | scram-sha-256 | scram-sha-512
    existingSecret: {name: "", usernameKey: username, passwordKey: password}

The Deployment and the migrate Job get the same settings (the Job loads and checks the whole
configuration, CA file included), as container env rather than the ConfigMap: the username and
password come from the Secret by secretKeyRef, never through a ConfigMap.
*/}}
{{- define "chainintel-lib.kafkaSecurity" -}}
{{- $k := .Values.kafka | default dict -}}
{{- $gk := (include "chainintel-lib.global" . | fromYaml).kafka | default dict -}}
{{- $tls := $k.tls | default $gk.tls | default dict -}}
{{- $sasl := $k.sasl | default $gk.sasl | default dict -}}
{{- toYaml (dict "tls" $tls "sasl" $sasl) -}}
{{- end -}}

{{/* Where the Kafka CA bundle is mounted. */}}
{{- define "chainintel-lib.kafkaCADir" -}}/etc/chainintel/kafka-ca{{- end -}}

{{/* The Kafka CA Secret's name when TLS with a CA Secret is on, else empty. */}}
{{- define "chainintel-lib.kafkaCASecret" -}}
{{- if (.Values.uses | default dict).kafka -}}
{{- $tls := (include "chainintel-lib.kafkaSecurity" . | fromYaml).tls -}}
{{- $ca := $tls.caSecret | default dict -}}
{{- if and $ca.name (not $tls.enabled) -}}
{{- fail "kafka.tls.caSecret is set but kafka.tls.enabled is false: the connection would be plaintext" -}}
{{- end -}}
{{- if $tls.enabled }}{{ $ca.name | default "" }}{{ end -}}
{{- end -}}
{{- end -}}

{{/* The Kafka TLS and SASL container env (a list of EnvVar), empty for plaintext. */}}
{{- define "chainintel-lib.kafkaEnv" -}}
{{- if (.Values.uses | default dict).kafka -}}
{{- $p := .Values.envPrefix -}}
{{- $sec := include "chainintel-lib.kafkaSecurity" . | fromYaml -}}
{{- $tls := $sec.tls -}}
{{- $sasl := $sec.sasl -}}
{{- $caSecret := include "chainintel-lib.kafkaCASecret" . -}}
{{- if $tls.enabled }}
- name: {{ $p }}KAFKA_TLS
  value: "true"
{{- if $caSecret }}
- name: {{ $p }}KAFKA_TLS_CA_FILE
  value: {{ printf "%s/%s" (include "chainintel-lib.kafkaCADir" .) (($tls.caSecret | default dict).key | default "ca.crt") | quote }}
{{- end }}
{{- with $tls.serverName }}
- name: {{ $p }}KAFKA_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if $tls.insecureSkipVerify }}
- name: {{ $p }}KAFKA_TLS_INSECURE_SKIP_VERIFY
  value: "true"
{{- end }}
{{- end }}
{{- $mech := lower ($sasl.mechanism | default "none") -}}
{{- if ne $mech "none" -}}
{{- if not (has $mech (list "plain" "scram-sha-256" "scram-sha-512")) -}}
{{- fail (printf "kafka.sasl.mechanism %q: must be none, plain, scram-sha-256 or scram-sha-512" $mech) -}}
{{- end -}}
{{- $s := $sasl.existingSecret | default dict -}}
{{- $name := required "kafka.sasl.existingSecret.name is required with a SASL mechanism (the Secret holding the Kafka username and password)" $s.name }}
- name: {{ $p }}KAFKA_SASL_MECHANISM
  value: {{ $mech | quote }}
- name: {{ $p }}KAFKA_SASL_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: {{ $s.usernameKey | default "username" }}
- name: {{ $p }}KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: {{ $s.passwordKey | default "password" }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The Kafka CA bundle's volumeMount (a list), empty without a CA Secret. */}}
{{- define "chainintel-lib.kafkaVolumeMounts" -}}
{{- if include "chainintel-lib.kafkaCASecret" . }}
- name: kafka-ca
  mountPath: {{ include "chainintel-lib.kafkaCADir" . }}
  readOnly: true
{{- end -}}
{{- end -}}

{{/* The Kafka CA bundle's volume (a list), empty without a CA Secret. */}}
{{- define "chainintel-lib.kafkaVolumes" -}}
{{- with include "chainintel-lib.kafkaCASecret" . }}
- name: kafka-ca
  secret:
    secretName: {{ . }}
{{- end -}}
{{- end -}}
