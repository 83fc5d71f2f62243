package charts

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// kafkaSecure is a managed Kafka: TLS with a private CA from a Secret and a server name, and
// SCRAM credentials from an existing Secret.
var kafkaSecure = []string{
	"global.kafka.tls.enabled=true", "global.kafka.tls.caSecret.name=kafka-ca", "global.kafka.tls.caSecret.key=bundle.pem",
	"global.kafka.tls.serverName=kafka.internal",
	"global.kafka.sasl.mechanism=scram-sha-512", "global.kafka.sasl.existingSecret.name=kafka-creds",
	"global.kafka.sasl.existingSecret.usernameKey=user", "global.kafka.sasl.existingSecret.passwordKey=pass",
}

// Every service that uses Kafka gets the TLS and SASL settings: the CA bundle mounted from its
// Secret as the file KAFKA_TLS_CA_FILE names, the credentials by secretKeyRef, none of it in a
// ConfigMap; services without Kafka get none of it.
func TestKafkaSecurityReachesEveryService(t *testing.T) {
	r := render(t, "./chainintel", nil, kafkaSecure...)
	ex := defaultExpect()
	ex.secretRendered = true
	ws := checkPlatform(t, r, ex)
	kafkaUsers := 0
	for _, w := range ws {
		p, where := w.facts.Prefix, "Deployment/"+w.d.Name
		if !w.facts.Kafka {
			for name := range w.env {
				if strings.HasPrefix(name, p+"KAFKA_") {
					t.Errorf("%s: %s set for a service without Kafka", where, name)
				}
			}
			continue
		}
		kafkaUsers++
		for name, want := range map[string]string{"KAFKA_TLS": "true", "KAFKA_TLS_CA_FILE": "/etc/chainintel/kafka-ca/bundle.pem",
			"KAFKA_TLS_SERVER_NAME": "kafka.internal", "KAFKA_SASL_MECHANISM": "scram-sha-512"} {
			if got := w.env[p+name]; got.Value != want || got.Secret != nil {
				t.Errorf("%s: %s%s = %+v, want %q", where, p, name, got, want)
			}
		}
		for name, key := range map[string]string{"KAFKA_SASL_USERNAME": "user", "KAFKA_SASL_PASSWORD": "pass"} {
			if s := w.env[p+name].Secret; s == nil || s.Name != "kafka-creds" || s.Key != key {
				t.Errorf("%s: %s%s = %+v, want Secret kafka-creds key %s", where, p, name, w.env[p+name], key)
			}
		}
		if _, ok := w.env[p+"KAFKA_TLS_INSECURE_SKIP_VERIFY"]; ok {
			t.Errorf("%s: KAFKA_TLS_INSECURE_SKIP_VERIFY set though not asked for", where)
		}
		checkKafkaCAMount(t, where, w.d.Spec.Template.Spec, w.c)
	}
	if kafkaUsers == 0 {
		t.Fatal("no Deployment uses Kafka")
	}
	for _, cm := range Of[*corev1.ConfigMap](r) {
		for k := range cm.Data {
			if strings.Contains(k, "KAFKA_SASL") || strings.Contains(k, "KAFKA_TLS") {
				t.Errorf("ConfigMap/%s holds %s: Kafka security settings belong to the Deployments", cm.Name, k)
			}
		}
	}
	// The migrate Jobs load and check the same configuration (checkPlatform compares their env
	// with the Deployments'), so they mount the CA bundle too.
	for _, j := range Of[*batchv1.Job](r) {
		if len(j.Spec.Template.Spec.Containers) == 1 && slices.ContainsFunc(j.Spec.Template.Spec.Containers[0].Env, func(e corev1.EnvVar) bool {
			return strings.HasSuffix(e.Name, "KAFKA_TLS_CA_FILE")
		}) {
			checkKafkaCAMount(t, "Job/"+j.Name, j.Spec.Template.Spec, j.Spec.Template.Spec.Containers[0])
		}
	}

	// With default values nothing of it is rendered: plaintext, as to the development broker.
	for _, w := range checkPlatform(t, render(t, "./chainintel", nil), ex) {
		for name := range w.env {
			if strings.Contains(name, "KAFKA_TLS") || strings.Contains(name, "KAFKA_SASL") {
				t.Errorf("Deployment/%s: %s set by default", w.d.Name, name)
			}
		}
		if slices.ContainsFunc(w.d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "kafka-ca" }) {
			t.Errorf("Deployment/%s: kafka-ca volume by default", w.d.Name)
		}
	}
}

// checkKafkaCAMount: the container mounts the CA Secret's key where KAFKA_TLS_CA_FILE points.
func checkKafkaCAMount(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "kafka-ca" })
	if i < 0 || spec.Volumes[i].Secret == nil || spec.Volumes[i].Secret.SecretName != "kafka-ca" {
		t.Errorf("%s: no kafka-ca volume from Secret kafka-ca", where)
	}
	j := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "kafka-ca" })
	if j < 0 || c.VolumeMounts[j].MountPath != "/etc/chainintel/kafka-ca" || !c.VolumeMounts[j].ReadOnly {
		t.Errorf("%s: kafka-ca not mounted read-only at /etc/chainintel/kafka-ca", where)
	}
}

// A service chart on its own takes a per-service override; TLS without a CA Secret trusts the
// system roots, and PLAIN is accepted.
func TestKafkaSecurityServiceOverride(t *testing.T) {
	r := render(t, "./transfers", nil, "kafka.tls.enabled=true", "kafka.sasl.mechanism=plain", "kafka.sasl.existingSecret.name=creds")
	ws := checkPlatform(t, r, defaultExpect())
	w := findWorkload(t, ws, "transfers")
	if w.env["TRANSFERS_KAFKA_TLS"].Value != "true" || w.env["TRANSFERS_KAFKA_SASL_MECHANISM"].Value != "plain" {
		t.Errorf("env %+v / %+v", w.env["TRANSFERS_KAFKA_TLS"], w.env["TRANSFERS_KAFKA_SASL_MECHANISM"])
	}
	if _, ok := w.env["TRANSFERS_KAFKA_TLS_CA_FILE"]; ok {
		t.Error("KAFKA_TLS_CA_FILE set without a CA Secret")
	}
	if s := w.env["TRANSFERS_KAFKA_SASL_PASSWORD"].Secret; s == nil || s.Name != "creds" || s.Key != "password" {
		t.Errorf("password %+v, want Secret creds key password", w.env["TRANSFERS_KAFKA_SASL_PASSWORD"])
	}
}

func TestKafkaSecurityRefusesBadValues(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"global.kafka.sasl.mechanism=scram-sha-256"}, "kafka.sasl.existingSecret.name is required"},
		{[]string{"global.kafka.sasl.mechanism=oauthbearer", "global.kafka.sasl.existingSecret.name=x"}, `kafka.sasl.mechanism "oauthbearer": must be none, plain, scram-sha-256 or scram-sha-512`},
		{[]string{"global.kafka.tls.caSecret.name=kafka-ca"}, "kafka.tls.caSecret is set but kafka.tls.enabled is false"},
	} {
		t.Run(strings.Join(c.sets, " "), func(t *testing.T) {
			if msg := renderFails(t, "./chainintel", nil, c.sets...); !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not say %q", msg, c.want)
			}
		})
	}
}
