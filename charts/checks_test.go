package charts

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	nameLabel     = "app.kubernetes.io/name"
	instanceLabel = "app.kubernetes.io/instance"
	partOfLabel   = "app.kubernetes.io/part-of"
	ingesterLabel = "chainintel.io/ingester"
	hookAnno      = "helm.sh/hook"
	hookDelete    = "helm.sh/hook-delete-policy"
	hookWeight    = "helm.sh/hook-weight"
)

// expect is what a render's generic checks depend on.
type expect struct {
	// secret every <PREFIX>INTERNAL_SECRET and <PREFIX>DATABASE_URL must come from, and
	// whether the render creates it.
	secretName     string
	secretRendered bool
	// ingressNamespaces: the namespaces, per service, that may reach its HTTP port besides the
	// release's own pods.
	ingressNamespaces map[string][]string
	// metricsNamespaces: namespaces that may reach every service's ops port.
	metricsNamespaces []string
	// extraVars: variables (without prefix) the values add that no service reads; any other
	// rendered variable must be one the service reads.
	extraVars []string
}

// workload is one rendered Deployment with its resolved container environment.
type workload struct {
	d     *appsv1.Deployment
	svc   string
	facts serviceFacts
	c     corev1.Container
	env   map[string]EnvValue
}

// checkPlatform runs the checks every render of every chart must pass, and returns the
// Deployments it checked.
func checkPlatform(t *testing.T, r *Rendered, ex expect) []workload {
	t.Helper()
	all := facts(t)
	checkNamesAndLabels(t, r)

	var ws []workload
	for _, d := range Of[*appsv1.Deployment](r) {
		ws = append(ws, checkDeployment(t, r, all, ex, d))
	}
	if len(ws) == 0 {
		t.Fatal("no Deployment rendered")
	}
	checkServices(t, r, ws)
	checkJobs(t, r, all, ex, ws)
	checkHPAs(t, r, ws)
	checkPDBs(t, r, ws)
	checkNetworkPolicies(t, r, ex, ws)
	checkServiceMonitors(t, r)
	checkSecret(t, r, ex)
	for _, sa := range Of[*corev1.ServiceAccount](r) {
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			t.Errorf("ServiceAccount %s mounts an API token; no service calls the Kubernetes API", sa.Name)
		}
	}
	return ws
}

// checkNamesAndLabels applies the API server's name and label rules.
func checkNamesAndLabels(t *testing.T, r *Rendered) {
	t.Helper()
	for _, o := range r.Objects {
		nameErrs := validation.IsDNS1123Subdomain(o.Name)
		if o.GVK.Kind == "Service" {
			nameErrs = validation.IsDNS1035Label(o.Name)
		}
		for _, e := range nameErrs {
			t.Errorf("%s: invalid name: %s", o.Key(), e)
		}
		if ns := o.Meta.GetNamespace(); ns != "" && ns != namespace {
			t.Errorf("%s: namespace %q; charts leave it to the release", o.Key(), ns)
		}
		for k, v := range o.Meta.GetLabels() {
			for _, e := range validation.IsQualifiedName(k) {
				t.Errorf("%s: label key %q: %s", o.Key(), k, e)
			}
			for _, e := range validation.IsValidLabelValue(v) {
				t.Errorf("%s: label %s value %q: %s", o.Key(), k, v, e)
			}
		}
		if o.Meta.GetLabels()[partOfLabel] != "chainintel" {
			t.Errorf("%s: missing app.kubernetes.io/part-of: chainintel", o.Key())
		}
		// Every pod carries it too: the NetworkPolicies admit other chainintel releases of the
		// namespace by it.
		var podLabels map[string]string
		switch obj := o.Obj.(type) {
		case *appsv1.Deployment:
			podLabels = obj.Spec.Template.Labels
		case *batchv1.Job:
			podLabels = obj.Spec.Template.Labels
		default:
			continue
		}
		if podLabels[partOfLabel] != "chainintel" {
			t.Errorf("%s: pod template lacks app.kubernetes.io/part-of: chainintel", o.Key())
		}
	}
}

func checkDeployment(t *testing.T, r *Rendered, all map[string]serviceFacts, ex expect, d *appsv1.Deployment) workload {
	t.Helper()
	where := "Deployment/" + d.Name
	pod := d.Spec.Template
	svc := pod.Labels[nameLabel]
	f, ok := all[svc]
	if !ok {
		t.Fatalf("%s: pod label %s=%q is not a chainintel service", where, nameLabel, svc)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("%s: selector %v does not select its own pods %v (%v)", where, d.Spec.Selector, pod.Labels, err)
	}
	for _, e := range validation.IsValidLabelValue(pod.Labels[nameLabel]) {
		t.Errorf("%s: %s", where, e)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", where, len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if c.Name != svc {
		t.Errorf("%s: container %q, want %q", where, c.Name, svc)
	}
	if want := []string{"/usr/local/bin/" + svc}; !slices.Equal(c.Command, want) || !slices.Equal(c.Args, []string{"serve"}) {
		t.Errorf("%s: runs %v %v, want %v [serve]", where, c.Command, c.Args, want)
	}
	if !strings.Contains(c.Image, "chainintel/"+svc+":") && !strings.Contains(c.Image, "chainintel/"+svc+"@") {
		t.Errorf("%s: image %q is not chainintel/%s", where, c.Image, svc)
	}
	env, envSecrets, err := r.Env(c)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	checkEnv(t, where, f, env, ex)
	for _, s := range envSecrets {
		if s == "" {
			t.Errorf("%s: envFrom a Secret without a name", where)
		}
	}

	// Ports and probes: HTTP and ops ports agree with <PREFIX>HTTP_ADDR / OPS_ADDR, and every
	// probe hits the ops port.
	ports := map[string]int32{}
	for _, p := range c.Ports {
		for _, e := range validation.IsValidPortName(p.Name) {
			t.Errorf("%s: port name %q: %s", where, p.Name, e)
		}
		ports[p.Name] = p.ContainerPort
	}
	for name, addrVar := range map[string]string{"http": "HTTP_ADDR", "ops": "OPS_ADDR"} {
		p, ok := ports[name]
		if !ok {
			t.Errorf("%s: no %q container port", where, name)
			continue
		}
		if got := env[f.Prefix+addrVar].Value; got != fmt.Sprintf(":%d", p) {
			t.Errorf("%s: %s%s=%q but the %s port is %d", where, f.Prefix, addrVar, got, name, p)
		}
	}
	probes := map[string]*corev1.Probe{"/startupz": c.StartupProbe, "/livez": c.LivenessProbe, "/readyz": c.ReadinessProbe}
	for path, p := range probes {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s: no HTTP probe on %s", where, path)
			continue
		}
		if p.HTTPGet.Path != path || portNumber(p.HTTPGet.Port, ports) != ports["ops"] {
			t.Errorf("%s: probe %s:%s, want %s on the ops port (%d)", where, p.HTTPGet.Port.String(), p.HTTPGet.Path, path, ports["ops"])
		}
	}
	checkResources(t, where, c.Resources)
	checkSecurity(t, where, pod.Spec, c)
	checkVolumes(t, where, pod.Spec, c)
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("%s: mounts a service account token", where)
	}
	checkNoServiceLinks(t, where, pod.Spec)
	if sa := pod.Spec.ServiceAccountName; sa != "" && sa != "default" {
		if _, ok := r.Get("ServiceAccount", sa); !ok {
			t.Errorf("%s: ServiceAccount %s is not rendered", where, sa)
		}
	}

	// Graceful stop: the grace period covers the preStop sleep and the service's own drain.
	drain, err := time.ParseDuration(env[f.Prefix+"SHUTDOWN_TIMEOUT"].Value)
	if err != nil {
		t.Errorf("%s: %sSHUTDOWN_TIMEOUT: %v", where, f.Prefix, err)
	}
	var sleep time.Duration
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds <= 0 {
		t.Errorf("%s: no preStop sleep (endpoints must forget the pod before it stops)", where)
	} else {
		sleep = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= drain+sleep {
		t.Errorf("%s: terminationGracePeriodSeconds %v not above SHUTDOWN_TIMEOUT %v + preStop %v", where, g, drain, sleep)
	}
	if anno := pod.Annotations["checksum/config"]; len(anno) != 64 {
		t.Errorf("%s: no checksum/config annotation (config changes would not roll the pods)", where)
	}
	return workload{d: d, svc: svc, facts: f, c: c, env: env}
}

// checkEnv: the service's variables all carry its prefix; the shared secret and the database URL
// come from the Secret; each dependency the service has is configured.
func checkEnv(t *testing.T, where string, f serviceFacts, env map[string]EnvValue, ex expect) {
	t.Helper()
	checkEnvNames(t, where, f, env, ex)
	checkEnvSecrets(t, where, f, env, ex)
	checkEnvDependencies(t, where, f, env)
}

// checkEnvNames: every variable is a valid name with the service's prefix that the service reads.
func checkEnvNames(t *testing.T, where string, f serviceFacts, env map[string]EnvValue, ex expect) {
	t.Helper()
	for name := range env {
		for _, e := range validation.IsEnvVarName(name) {
			t.Errorf("%s: env %q: %s", where, name, e)
		}
		if !strings.HasPrefix(name, f.Prefix) {
			t.Errorf("%s: env %s lacks the service's prefix %s", where, name, f.Prefix)
		} else if !f.Vars[name] && !slices.Contains(ex.extraVars, strings.TrimPrefix(name, f.Prefix)) {
			t.Errorf("%s: env %s is not a variable %s reads (its internal/config, libs/service, libs/telemetry)", where, name, f.Name)
		}
	}
}

// checkEnvSecrets: the shared secret, and the database URL of a service with a database (only
// of one), come from the expected Secret's keys.
func checkEnvSecrets(t *testing.T, where string, f serviceFacts, env map[string]EnvValue, ex expect) {
	t.Helper()
	fromSecret := func(name, key string) {
		v, ok := env[f.Prefix+name]
		switch {
		case !ok:
			t.Errorf("%s: no %s%s", where, f.Prefix, name)
		case v.Secret == nil:
			t.Errorf("%s: %s%s is not from a Secret", where, f.Prefix, name)
		case v.Secret.Name != ex.secretName || v.Secret.Key != key:
			t.Errorf("%s: %s%s from Secret %s key %s, want %s key %s", where, f.Prefix, name, v.Secret.Name, v.Secret.Key, ex.secretName, key)
		}
	}
	fromSecret("INTERNAL_SECRET", "internal-secret")
	if f.Postgres {
		fromSecret("DATABASE_URL", "database-url")
	} else if _, ok := env[f.Prefix+"DATABASE_URL"]; ok {
		t.Errorf("%s: %sDATABASE_URL set for a service without a database", where, f.Prefix)
	}
}

// checkEnvDependencies: Kafka's brokers and the Redis URL are set exactly for the services that
// use them, the Redis URL from a named Secret key or as a redis:// URL.
func checkEnvDependencies(t *testing.T, where string, f serviceFacts, env map[string]EnvValue) {
	t.Helper()
	needs := map[string]bool{"KAFKA_BROKERS": f.Kafka, "REDIS_URL": f.Redis}
	for name, need := range needs {
		v, has := env[f.Prefix+name]
		if need && (!has || (v.Value == "" && v.Secret == nil)) {
			t.Errorf("%s: %s%s not set", where, f.Prefix, name)
		}
		if !need && has {
			t.Errorf("%s: %s%s set for a service that does not use it", where, f.Prefix, name)
		}
	}
	if !f.Redis {
		return
	}
	if v := env[f.Prefix+"REDIS_URL"]; v.Secret != nil {
		if v.Secret.Name == "" || v.Secret.Key == "" {
			t.Errorf("%s: %sREDIS_URL from Secret %q key %q", where, f.Prefix, v.Secret.Name, v.Secret.Key)
		}
	} else if u, err := url.Parse(v.Value); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		t.Errorf("%s: %sREDIS_URL %q is not a redis:// URL", where, f.Prefix, v.Value)
	}
}

// checkNoServiceLinks: Kubernetes' service links would put <SERVICE>_* variables (EDGE_PORT,
// STREAM_FANOUT_SERVICE_HOST, ...) into the services' own environment prefixes.
func checkNoServiceLinks(t *testing.T, where string, spec corev1.PodSpec) {
	t.Helper()
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Errorf("%s: service links on; they would inject <SERVICE>_* variables under the services' prefixes", where)
	}
}

func portNumber(p intstr.IntOrString, named map[string]int32) int32 {
	if p.Type == intstr.String {
		if n, ok := named[p.StrVal]; ok {
			return n
		}
		return -1
	}
	return p.IntVal
}

func checkResources(t *testing.T, where string, res corev1.ResourceRequirements) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := res.Requests[name]
		lim, hasLim := res.Limits[name]
		if !hasReq || req.IsZero() || !hasLim || lim.IsZero() {
			t.Errorf("%s: %s request and limit must both be set (requests %v, limits %v)", where, name, res.Requests, res.Limits)
			continue
		}
		if req.Cmp(lim) > 0 {
			t.Errorf("%s: %s request %s above limit %s", where, name, req.String(), lim.String())
		}
	}
}

// checkSecurity: non-root, read-only root filesystem, no privilege escalation, every capability
// dropped, RuntimeDefault seccomp.
func checkSecurity(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	psc := spec.SecurityContext
	sc := c.SecurityContext
	if psc == nil || sc == nil {
		t.Errorf("%s: no pod or container securityContext", where)
		return
	}
	nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (sc.RunAsNonRoot == nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot)
	if !nonRoot {
		t.Errorf("%s: runAsNonRoot not true", where)
	}
	for _, uid := range []*int64{psc.RunAsUser, sc.RunAsUser} {
		if uid != nil && *uid == 0 {
			t.Errorf("%s: runs as uid 0", where)
		}
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: root filesystem not read-only", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation not false", where)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", where)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities %v, want drop ALL and add none", where, sc.Capabilities)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccomp profile %v, want RuntimeDefault", where, seccomp)
	}
}

func checkVolumes(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	vols := map[string]bool{}
	for _, v := range spec.Volumes {
		vols[v.Name] = true
	}
	for _, m := range c.VolumeMounts {
		if !vols[m.Name] {
			t.Errorf("%s: volumeMount %s has no volume", where, m.Name)
		}
	}
}

// checkServices: each Service selects pods that have the ports it targets, and every
// Deployment is behind the Service named after its service.
func checkServices(t *testing.T, r *Rendered, ws []workload) {
	t.Helper()
	for _, s := range Of[*corev1.Service](r) {
		var selected []workload
		for _, w := range ws {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.d.Spec.Template.Labels)) {
				selected = append(selected, w)
			}
		}
		if len(selected) == 0 {
			t.Errorf("Service/%s selects no rendered pods (%v)", s.Name, s.Spec.Selector)
			continue
		}
		for _, w := range selected {
			if w.svc != s.Name {
				t.Errorf("Service/%s selects pods of %s", s.Name, w.svc)
			}
			named := map[string]int32{}
			for _, p := range w.c.Ports {
				named[p.Name] = p.ContainerPort
			}
			for _, p := range s.Spec.Ports {
				if portNumber(p.TargetPort, named) <= 0 {
					t.Errorf("Service/%s port %s targets %s, which pods of %s do not have", s.Name, p.Name, p.TargetPort.String(), w.d.Name)
				}
			}
		}
	}
	for _, w := range ws {
		o, ok := r.Get("Service", w.svc)
		if !ok {
			t.Errorf("Deployment/%s: no Service %s", w.d.Name, w.svc)
			continue
		}
		if !labels.SelectorFromSet(o.Obj.(*corev1.Service).Spec.Selector).Matches(labels.Set(w.d.Spec.Template.Labels)) {
			t.Errorf("Service/%s does not select Deployment/%s", w.svc, w.d.Name)
		}
	}
}

// checkJobs: one migrate hook Job per service that owns a schema or uses Kafka (its migrate
// creates the topics it produces or consumes), none for the others, running `<svc> migrate`
// with the same configuration as the service's Deployment.
func checkJobs(t *testing.T, r *Rendered, all map[string]serviceFacts, ex expect, ws []workload) {
	t.Helper()
	// A service's Job is compared with its first Deployment (ingest: the first chain's, whose
	// settings the Job is given).
	bySvc := map[string]workload{}
	for _, w := range ws {
		if _, ok := bySvc[w.svc]; !ok {
			bySvc[w.svc] = w
		}
	}
	jobs := map[string]*batchv1.Job{}
	for _, j := range Of[*batchv1.Job](r) {
		where := "Job/" + j.Name
		svc, ok := strings.CutSuffix(j.Name, "-migrate")
		if !ok {
			t.Errorf("%s: not a migrate Job", where)
			continue
		}
		w, ok := bySvc[svc]
		if !ok {
			t.Errorf("%s: no Deployment of %s rendered", where, svc)
			continue
		}
		jobs[svc] = j
		if hooks := strings.Split(j.Annotations[hookAnno], ","); !slices.Equal(hooks, []string{"pre-install", "pre-upgrade"}) {
			t.Errorf("%s: hook %q, want pre-install,pre-upgrade", where, j.Annotations[hookAnno])
		}
		if del := strings.Split(j.Annotations[hookDelete], ","); !slices.Contains(del, "before-hook-creation") || !slices.Contains(del, "hook-succeeded") {
			t.Errorf("%s: hook-delete-policy %q, want before-hook-creation and hook-succeeded", where, j.Annotations[hookDelete])
		}
		spec := j.Spec.Template.Spec
		if spec.RestartPolicy != corev1.RestartPolicyNever && spec.RestartPolicy != corev1.RestartPolicyOnFailure {
			t.Errorf("%s: restartPolicy %q", where, spec.RestartPolicy)
		}
		if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit < 1 {
			t.Errorf("%s: no retries (PostgreSQL may still be starting)", where)
		}
		if len(spec.Containers) != 1 {
			t.Errorf("%s: %d containers", where, len(spec.Containers))
			continue
		}
		c := spec.Containers[0]
		if !slices.Equal(c.Command, []string{"/usr/local/bin/" + svc}) || !slices.Equal(c.Args, []string{"migrate"}) {
			t.Errorf("%s: runs %v %v, want [/usr/local/bin/%s] [migrate]", where, c.Command, c.Args, svc)
		}
		if c.Image != w.c.Image {
			t.Errorf("%s: image %s, the Deployment runs %s", where, c.Image, w.c.Image)
		}
		// It runs before the release's ConfigMap exists: the only ConfigMap it may load is a
		// hook of the same events made before it (a lower weight).
		for _, src := range c.EnvFrom {
			if src.ConfigMapRef != nil {
				checkHookConfigMap(t, where, r, j, src.ConfigMapRef.Name)
			}
		}
		env, _, err := r.Env(c)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		checkEnv(t, where, all[svc], env, ex)
		// The tier table is the exception: migrations do not read it, and its ConfigMap, an
		// ordinary object, does not exist yet when the hook runs (see checkTiers).
		tiersFile := all[svc].Prefix + "TIERS_FILE"
		if _, ok := env[tiersFile]; ok {
			t.Errorf("%s: sets %s, a file the Job does not mount", where, tiersFile)
		}
		for name, dv := range w.env {
			jv, ok := env[name]
			if name == tiersFile {
				continue
			}
			if !ok {
				t.Errorf("%s: lacks %s, which the Deployment has", where, name)
			} else if jv.Value != dv.Value || (jv.Secret == nil) != (dv.Secret == nil) || (jv.Secret != nil && *jv.Secret != *dv.Secret) {
				t.Errorf("%s: %s differs from the Deployment's (%+v vs %+v)", where, name, jv, dv)
			}
		}
		checkResources(t, where, c.Resources)
		checkSecurity(t, where, spec, c)
		checkVolumes(t, where, spec, c)
		checkNoServiceLinks(t, where, spec)
		// No Service or PDB may take migrate pods for serving pods.
		for _, s := range Of[*corev1.Service](r) {
			if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(j.Spec.Template.Labels)) {
				t.Errorf("%s: its pods are selected by Service/%s", where, s.Name)
			}
		}
	}
	for _, w := range ws {
		_, has := jobs[w.svc]
		if w.facts.Migrates() && !has {
			t.Errorf("no migrate Job for %s, which owns a schema or uses Kafka", w.svc)
		}
		if !w.facts.Migrates() && has {
			t.Errorf("a migrate Job for %s, which owns no schema and uses no Kafka", w.svc)
		}
	}
}

// checkHookConfigMap: ConfigMap name, which Job j loads, is a hook of j's events with j's delete
// policy and a lower weight, so Helm makes it before the Job and deletes it with the Job.
func checkHookConfigMap(t *testing.T, where string, r *Rendered, j *batchv1.Job, name string) {
	t.Helper()
	o, ok := r.Get("ConfigMap", name)
	if !ok {
		t.Errorf("%s: loads ConfigMap %s, which is not rendered", where, name)
		return
	}
	cm := o.Obj.(*corev1.ConfigMap)
	if cm.Annotations[hookAnno] != j.Annotations[hookAnno] {
		t.Errorf("%s: loads ConfigMap %s (hook %q), which is not a hook like the Job (%q): a pre-install hook runs before the release's objects",
			where, name, cm.Annotations[hookAnno], j.Annotations[hookAnno])
		return
	}
	// Only replaced by the next release's: a failing hook makes Helm delete the earlier hooks'
	// hook-succeeded objects, and the Job's retries would find no ConfigMap.
	if cm.Annotations[hookDelete] != "before-hook-creation" {
		t.Errorf("%s: ConfigMap %s has hook-delete-policy %q, want before-hook-creation only", where, name, cm.Annotations[hookDelete])
	}
	cw, err1 := strconv.Atoi(cm.Annotations[hookWeight])
	jw, err2 := strconv.Atoi(j.Annotations[hookWeight])
	if err1 != nil || err2 != nil || cw >= jw {
		t.Errorf("%s: ConfigMap %s has hook weight %q, the Job %q: want the ConfigMap's lower", where, name, cm.Annotations[hookWeight], j.Annotations[hookWeight])
	}
}

// checkHPAs: each autoscaler targets a rendered Deployment that leaves replicas to it; ingest is
// never autoscaled; consumers are not scaled past the topics' partitions.
func checkHPAs(t *testing.T, r *Rendered, ws []workload) {
	t.Helper()
	byName := map[string]workload{}
	for _, w := range ws {
		byName[w.d.Name] = w
	}
	scaled := map[string]bool{}
	for _, h := range Of[*autoscalingv2.HorizontalPodAutoscaler](r) {
		where := "HorizontalPodAutoscaler/" + h.Name
		ref := h.Spec.ScaleTargetRef
		w, ok := byName[ref.Name]
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || !ok {
			t.Errorf("%s: targets %s %s/%s, not a rendered Deployment", where, ref.APIVersion, ref.Kind, ref.Name)
			continue
		}
		scaled[ref.Name] = true
		if w.svc == "ingest" {
			t.Errorf("%s: autoscales ingest, which must run exactly one replica per chain", where)
		}
		if w.d.Spec.Replicas != nil {
			t.Errorf("%s: Deployment/%s also sets replicas (each apply would reset the autoscaler)", where, ref.Name)
		}
		minR := int32(1)
		if h.Spec.MinReplicas != nil {
			minR = *h.Spec.MinReplicas
		}
		if minR < 1 || h.Spec.MaxReplicas < minR {
			t.Errorf("%s: replicas %d..%d", where, minR, h.Spec.MaxReplicas)
		}
		cpu := false
		for _, m := range h.Spec.Metrics {
			if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
				m.Resource.Target.Type == autoscalingv2.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil {
				cpu = true
			}
		}
		if !cpu {
			t.Errorf("%s: does not scale on CPU utilization", where)
		}
		if isPartitionBound(w.svc) {
			partitions := 8
			if p := w.env[w.facts.Prefix+"KAFKA_PARTITIONS"].Value; p != "" {
				n, err := strconv.Atoi(p)
				if err != nil {
					t.Errorf("%s: %sKAFKA_PARTITIONS=%q", where, w.facts.Prefix, p)
				}
				partitions = n
			}
			if int(h.Spec.MaxReplicas) > partitions {
				t.Errorf("%s: maxReplicas %d above the %d partitions its consumers share", where, h.Spec.MaxReplicas, partitions)
			}
		}
	}
	for _, w := range ws {
		if !scaled[w.d.Name] && (w.d.Spec.Replicas == nil || *w.d.Spec.Replicas < 1) {
			t.Errorf("Deployment/%s: neither replicas nor an autoscaler", w.d.Name)
		}
	}
}

// isPartitionBound: services whose work is consuming shared topics in one consumer group, so
// replicas past the partition count idle. (stream-fanout reads the whole topic in every replica;
// the edge and user-labels scale with HTTP traffic.)
func isPartitionBound(svc string) bool {
	switch svc {
	case "transfers", "intelligence", "balances", "token-analytics":
		return true
	}
	return false
}

// checkPDBs: each budget selects a rendered Deployment and leaves room for a voluntary eviction.
func checkPDBs(t *testing.T, r *Rendered, ws []workload) {
	t.Helper()
	for _, p := range Of[*policyv1.PodDisruptionBudget](r) {
		where := "PodDisruptionBudget/" + p.Name
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || sel.Empty() {
			t.Errorf("%s: selector %v (%v)", where, p.Spec.Selector, err)
			continue
		}
		var matched []workload
		for _, w := range ws {
			if sel.Matches(labels.Set(w.d.Spec.Template.Labels)) {
				matched = append(matched, w)
			}
		}
		if len(matched) == 0 {
			t.Errorf("%s selects no rendered pods", where)
			continue
		}
		if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
			t.Errorf("%s: set exactly one of minAvailable and maxUnavailable", where)
		}
		if p.Spec.MinAvailable != nil && p.Spec.MinAvailable.Type == intstr.Int {
			for _, w := range matched {
				least := int32(1)
				if w.d.Spec.Replicas != nil {
					least = *w.d.Spec.Replicas
				} else if h, ok := r.Get("HorizontalPodAutoscaler", w.d.Name); ok {
					if mr := h.Obj.(*autoscalingv2.HorizontalPodAutoscaler).Spec.MinReplicas; mr != nil {
						least = *mr
					}
				}
				if p.Spec.MinAvailable.IntVal >= least {
					t.Errorf("%s: minAvailable %d with as few as %d replicas blocks every drain", where, p.Spec.MinAvailable.IntVal, least)
				}
			}
		}
	}
}

// checkNetworkPolicies: every service's pods are covered by a policy that admits only pods of
// the release, plus the allowed namespaces on the allowed ports.
func checkNetworkPolicies(t *testing.T, r *Rendered, ex expect, ws []workload) {
	t.Helper()
	pols := Of[*networkingv1.NetworkPolicy](r)
	for _, w := range ws {
		var mine []*networkingv1.NetworkPolicy
		for _, p := range pols {
			sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
			if err == nil && !sel.Empty() && sel.Matches(labels.Set(w.d.Spec.Template.Labels)) {
				mine = append(mine, p)
			}
		}
		if len(mine) == 0 {
			t.Errorf("Deployment/%s: no NetworkPolicy covers its pods", w.d.Name)
		}
		for _, p := range mine {
			where := "NetworkPolicy/" + p.Name
			if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
				t.Errorf("%s: does not restrict ingress", where)
			}
			for i, rule := range p.Spec.Ingress {
				if len(rule.From) == 0 {
					t.Errorf("%s: ingress rule %d admits every source", where, i)
				}
				if len(rule.Ports) == 0 {
					t.Errorf("%s: ingress rule %d admits every port", where, i)
				}
				var ports []string
				for _, pp := range rule.Ports {
					if pp.Port == nil {
						t.Errorf("%s: rule %d admits every port", where, i)
						continue
					}
					ports = append(ports, pp.Port.String())
				}
				for _, peer := range rule.From {
					checkPeer(t, where, i, peer, ports, w.svc, ex)
				}
			}
		}
	}
}

func checkPeer(t *testing.T, where string, i int, peer networkingv1.NetworkPolicyPeer, ports []string, svc string, ex expect) {
	t.Helper()
	switch {
	case peer.IPBlock != nil:
		t.Errorf("%s: rule %d admits an IP block %v", where, i, peer.IPBlock.CIDR)
	case peer.NamespaceSelector == nil && peer.PodSelector != nil:
		sel := peer.PodSelector
		switch {
		case len(sel.MatchExpressions) > 0 || len(sel.MatchLabels) != 1:
			t.Errorf("%s: rule %d admits pods %v, want the release's or the namespace's chainintel pods", where, i, sel)
		case sel.MatchLabels[instanceLabel] == releaseName:
		case sel.MatchLabels[partOfLabel] == "chainintel":
			// Other releases of chainintel in the namespace (services installed from their own
			// charts) reach the HTTP port only, never ops.
			if !slices.Equal(ports, []string{"http"}) {
				t.Errorf("%s: chainintel pods of the namespace admitted on %v, want the http port only", where, ports)
			}
		default:
			t.Errorf("%s: rule %d admits pods %v, want the release's (%s=%s) or %s=chainintel", where, i, sel, instanceLabel, releaseName, partOfLabel)
		}
	case peer.NamespaceSelector != nil:
		ns := peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]
		if ns == "" {
			t.Errorf("%s: rule %d admits namespaces %v, want one by name", where, i, peer.NamespaceSelector)
			return
		}
		switch {
		case slices.Contains(ex.ingressNamespaces[svc], ns):
			if !slices.Equal(ports, []string{"http"}) {
				t.Errorf("%s: namespace %s admitted on %v, want the http port only", where, ns, ports)
			}
		case slices.Contains(ex.metricsNamespaces, ns):
			if !slices.Equal(ports, []string{"ops"}) {
				t.Errorf("%s: metrics namespace %s admitted on %v, want the ops port only", where, ns, ports)
			}
		default:
			t.Errorf("%s: rule %d admits namespace %s, which may not reach %s", where, i, ns, svc)
		}
	default:
		t.Errorf("%s: rule %d has an empty peer (admits everything)", where, i)
	}
}

// checkServiceMonitors: each scrapes /metrics on the ops port of a rendered Service.
func checkServiceMonitors(t *testing.T, r *Rendered) {
	t.Helper()
	for _, m := range Of[*monitoringv1.ServiceMonitor](r) {
		where := "ServiceMonitor/" + m.Name
		sel, err := metav1.LabelSelectorAsSelector(&m.Spec.Selector)
		if err != nil || sel.Empty() {
			t.Errorf("%s: selector %v (%v)", where, m.Spec.Selector, err)
			continue
		}
		var svcs []*corev1.Service
		for _, s := range Of[*corev1.Service](r) {
			if sel.Matches(labels.Set(s.Labels)) {
				svcs = append(svcs, s)
			}
		}
		if len(svcs) != 1 {
			t.Errorf("%s selects %d Services, want 1", where, len(svcs))
			continue
		}
		if len(m.Spec.Endpoints) == 0 {
			t.Errorf("%s: no endpoints", where)
		}
		for _, ep := range m.Spec.Endpoints {
			if ep.Port != "ops" || ep.Path != "/metrics" {
				t.Errorf("%s: scrapes port %q path %q, want ops /metrics", where, ep.Port, ep.Path)
			}
		}
		if !slices.ContainsFunc(svcs[0].Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "ops" }) {
			t.Errorf("%s: Service/%s has no ops port", where, svcs[0].Name)
		}
	}
}

// checkSecret: the Secret is rendered (with both keys, as a hook ahead of every migrate Job)
// exactly when the chart is to create it.
func checkSecret(t *testing.T, r *Rendered, ex expect) {
	t.Helper()
	secrets := Of[*corev1.Secret](r)
	if !ex.secretRendered {
		if len(secrets) > 0 {
			t.Errorf("rendered Secret %s, but the Secret is %s (existing)", secrets[0].Name, ex.secretName)
		}
		return
	}
	o, ok := r.Get("Secret", ex.secretName)
	if !ok {
		t.Fatalf("Secret %s not rendered", ex.secretName)
	}
	s := o.Obj.(*corev1.Secret)
	if len(s.Data["internal-secret"]) < 16 {
		t.Errorf("Secret %s: internal-secret shorter than 16 bytes", s.Name)
	}
	if u, err := url.Parse(string(s.Data["database-url"])); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Errorf("Secret %s: database-url %q is not a postgres URL", s.Name, s.Data["database-url"])
	}
	if !slices.Equal(strings.Split(s.Annotations[hookAnno], ","), []string{"pre-install", "pre-upgrade"}) {
		t.Errorf("Secret %s: hook %q; the migrate hooks need it before the release's objects exist", s.Name, s.Annotations[hookAnno])
	}
	sw, err := strconv.Atoi(s.Annotations[hookWeight])
	if err != nil {
		t.Errorf("Secret %s: hook weight %q", s.Name, s.Annotations[hookWeight])
	}
	for _, j := range Of[*batchv1.Job](r) {
		jw, err := strconv.Atoi(j.Annotations[hookWeight])
		if err != nil || jw <= sw {
			t.Errorf("Job/%s: hook weight %q not after the Secret's %d", j.Name, j.Annotations[hookWeight], sw)
		}
	}
}
