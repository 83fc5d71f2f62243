package charts

import (
	"os"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
)

// deploymentEnv is the resolved environment of the first container of Deployment name.
func deploymentEnv(t *testing.T, r *Rendered, name string) map[string]EnvValue {
	t.Helper()
	for _, d := range Of[*appsv1.Deployment](r) {
		if d.Name != name {
			continue
		}
		env, _, err := r.Env(d.Spec.Template.Spec.Containers[0])
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	t.Fatalf("no Deployment/%s rendered", name)
	return nil
}

// A service's own redis.url wins over global.redisURLSecret (values.yaml): the edge reads its own
// URL, in the Deployment and the migrate Job, while stream-fanout, with no own value, still reads
// the global Secret.
func TestRedisOwnURLWinsOverGlobalSecret(t *testing.T) {
	r := render(t, "./chainintel", nil, "global.redisURLSecret.name=redis-auth", "global.redisURLSecret.key=url",
		"edge.redis.url=redis://own:6379/1")
	if v := deploymentEnv(t, r, "edge")["EDGE_REDIS_URL"]; v.Secret != nil || v.Value != "redis://own:6379/1" {
		t.Errorf("edge: EDGE_REDIS_URL = %+v, want the edge's own redis://own:6379/1", v)
	}
	if v := deploymentEnv(t, r, "stream-fanout")["STREAM_REDIS_URL"]; v.Secret == nil || v.Secret.Name != "redis-auth" {
		t.Errorf("stream-fanout: STREAM_REDIS_URL = %+v, want from Secret redis-auth", v)
	}
	if v := jobEnv(t, r, "edge-migrate")["EDGE_REDIS_URL"]; v.Secret != nil || v.Value != "redis://own:6379/1" {
		t.Errorf("Job/edge-migrate: EDGE_REDIS_URL = %+v, want the edge's own redis://own:6379/1", v)
	}
}

// jobEnv is the resolved environment of the first container of Job name.
func jobEnv(t *testing.T, r *Rendered, name string) map[string]EnvValue {
	t.Helper()
	for _, j := range Of[*batchv1.Job](r) {
		if j.Name != name {
			continue
		}
		env, _, err := r.Env(j.Spec.Template.Spec.Containers[0])
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	t.Fatalf("no Job/%s rendered", name)
	return nil
}

// An OTLP endpoint without a scheme (the gRPC habit host:4317, which the old chart comment
// suggested) or without a host would crash-loop every service at start; the render refuses it
// and says what to use. Either scheme with a host renders.
func TestOTLPEndpointNeedsAScheme(t *testing.T) {
	for _, set := range []string{"global.otlpEndpoint=otel-collector:4317", "edge.telemetry.otlpEndpoint=otel:4318"} {
		msg := renderFails(t, "./chainintel", nil, set)
		if !strings.Contains(msg, "http://otel-collector:4318") || !strings.Contains(msg, "OTLP/HTTP") {
			t.Errorf("%s: error %q, want it to say to use http://otel-collector:4318 (OTLP/HTTP)", set, msg)
		}
	}
	// A scheme and no host: the services refuse it at start too (libs/telemetry).
	for _, set := range []string{"global.otlpEndpoint=http://", "edge.telemetry.otlpEndpoint=https:///v1"} {
		msg := renderFails(t, "./chainintel", nil, set)
		if !strings.Contains(msg, "has no host") || !strings.Contains(msg, "otlpEndpoint") {
			t.Errorf("%s: error %q, want it to say the otlpEndpoint URL has no host", set, msg)
		}
	}
	for _, ep := range []string{"http://otel:4318", "https://otel.example:4318", "http://10.0.0.5:4318/"} {
		r := render(t, "./chainintel", nil, "global.otlpEndpoint="+ep)
		if v := deploymentEnv(t, r, "transfers")["TRANSFERS_OTLP_ENDPOINT"]; v.Value != ep {
			t.Errorf("global.otlpEndpoint=%s: TRANSFERS_OTLP_ENDPOINT = %+v", ep, v)
		}
	}
}

// revisionHistoryLimit 0 (keep no old ReplicaSets) is a value, not "unset": it renders as 0, and
// only an unset limit takes the default 5.
func TestRevisionHistoryLimitKeepsZero(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want int32
	}{
		{[]string{"revisionHistoryLimit=0"}, 0},
		{[]string{"revisionHistoryLimit=2"}, 2},
		{[]string{"revisionHistoryLimit=null"}, 5},
		{nil, 5},
	} {
		r := render(t, "./balances", nil, c.sets...)
		d := Of[*appsv1.Deployment](r)[0]
		if got := d.Spec.RevisionHistoryLimit; got == nil || *got != c.want {
			t.Errorf("%v: revisionHistoryLimit %v, want %d", c.sets, got, c.want)
		}
	}
}

// exampleVarRe matches the env example of the values files and docs/kubernetes.md: "(X and
// P_X both set P_X)", with or without backquotes.
var exampleVarRe = regexp.MustCompile("\\(`?([A-Z0-9_]+)`? and\\s+`?([A-Z0-9_]+)`? both (?:set|give) `?([A-Z0-9_]+)`?\\)")

// The variable each example of `env:` names is one the service reads, so copying the example
// configures something.
func TestEnvExampleVarsExist(t *testing.T) {
	byPrefix := map[string]serviceFacts{}
	for _, f := range facts(t) {
		byPrefix[f.Prefix] = f
	}
	files := []string{"../docs/kubernetes.md"}
	for _, svc := range serviceNames {
		files = append(files, svc+"/values.yaml")
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		ms := exampleVarRe.FindAllStringSubmatch(string(b), -1)
		if len(ms) == 0 {
			t.Errorf("%s: no env example (X and P_X both set P_X) found", file)
		}
		for _, m := range ms {
			name := m[3]
			var f serviceFacts
			for p, pf := range byPrefix {
				if strings.HasPrefix(name, p) && m[2] == name && name == p+m[1] {
					f = pf
				}
			}
			if f.Name == "" {
				t.Errorf("%s: example %q: %s is not a service's prefix plus %s", file, m[0], name, m[1])
			} else if !f.Vars[name] {
				t.Errorf("%s: example %q: %s reads no %s", file, m[0], f.Name, name)
			}
		}
	}
}

// A service without PostgreSQL documents no database URL in its values: the chart never sets
// one for it.
func TestNoDatabaseValuesWithoutPostgres(t *testing.T) {
	for _, svc := range serviceNames {
		f := facts(t)[svc]
		if f.Postgres {
			continue
		}
		b, err := os.ReadFile(svc + "/values.yaml")
		if err != nil {
			t.Fatal(err)
		}
		for _, word := range []string{f.Prefix + "DATABASE_URL", "databaseURL"} {
			if strings.Contains(string(b), word) {
				t.Errorf("%s/values.yaml mentions %s, but %s has no database", svc, word, svc)
			}
		}
	}
}

// The Go runtime's variables given in a service's env (or an ingester's) reach it by their bare names (the runtime
// and service.TuneRuntime read no prefixed ones), each once: no prefixed copy, and no second
// definition in the container's env beside the ConfigMap's.
func TestGoRuntimeEnvIsUnprefixed(t *testing.T) {
	r := render(t, "./chainintel", nil, "edge.env.GOMEMLIMIT=400MiB", "edge.env.GODEBUG=madvdontneed=1",
		"transfers.env.GOGC=200", "transfers.env.GOMAXPROCS=2", "ingest.ingesters[0].name=ethereum",
		"ingest.ingesters[0].rpcURL=http://rpc:8545", "ingest.ingesters[0].env.GOMEMLIMIT=300MiB")
	for _, tc := range []struct{ deploy, name, value, prefixed string }{
		{"ingest-ethereum", "GOMEMLIMIT", "300MiB", "INGEST_GOMEMLIMIT"},
		{"edge", "GOMEMLIMIT", "400MiB", "EDGE_GOMEMLIMIT"},
		{"edge", "GODEBUG", "madvdontneed=1", "EDGE_GODEBUG"},
		{"transfers", "GOGC", "200", "TRANSFERS_GOGC"},
		{"transfers", "GOMAXPROCS", "2", "TRANSFERS_GOMAXPROCS"},
	} {
		env := deploymentEnv(t, r, tc.deploy)
		if got := env[tc.name].Value; got != tc.value {
			t.Errorf("Deployment/%s: %s=%q, want %q", tc.deploy, tc.name, got, tc.value)
		}
		if _, ok := env[tc.prefixed]; ok {
			t.Errorf("Deployment/%s: sets %s, which nothing reads", tc.deploy, tc.prefixed)
		}
		for _, d := range Of[*appsv1.Deployment](r) {
			if d.Name != tc.deploy {
				continue
			}
			c := d.Spec.Template.Spec.Containers[0]
			n := 0
			for _, e := range c.Env {
				if e.Name == tc.name {
					n++
				}
			}
			for _, src := range c.EnvFrom {
				if src.ConfigMapRef != nil {
					if _, ok := configMapData(t, r, src.ConfigMapRef.Name)[tc.name]; ok {
						n++
					}
				}
			}
			if n != 1 {
				t.Errorf("Deployment/%s: %s defined %d times, want once", tc.deploy, tc.name, n)
			}
		}
	}
	if got := jobEnv(t, r, "edge-migrate")["GOMEMLIMIT"].Value; got != "400MiB" {
		t.Errorf("Job/edge-migrate: GOMEMLIMIT=%q, want 400MiB as its Deployment", got)
	}
}
