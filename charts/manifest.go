package charts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Object is one decoded Kubernetes object of a manifest stream.
type Object struct {
	GVK    schema.GroupVersionKind
	Name   string
	Meta   metav1.Object
	Obj    runtime.Object
	Source string // helm's "# Source:" comment, or the position in the stream
}

// Key names the object uniquely within one namespace, e.g. "Deployment/edge".
func (o Object) Key() string { return o.GVK.Kind + "/" + o.Name }

// Decoder decodes manifests strictly into the API types of the kinds chainintel deploys. It is
// safe for concurrent use.
type Decoder struct {
	scheme  *runtime.Scheme
	decoder runtime.Decoder
}

// NewDecoder registers the API groups chainintel's manifests use: core, apps, batch,
// autoscaling/v2, policy, networking and prometheus-operator's monitoring.coreos.com/v1.
func NewDecoder() (*Decoder, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, autoscalingv2.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme, monitoringv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	cf := serializer.NewCodecFactory(s, serializer.EnableStrict)
	return &Decoder{scheme: s, decoder: cf.UniversalDeserializer()}, nil
}

// Decode splits a YAML stream into documents and decodes each one strictly: an unknown or
// duplicated field, a value of the wrong type, a missing apiVersion or kind, or a kind outside
// the scheme is an error naming the document. Empty and comment-only documents are skipped.
func (d *Decoder) Decode(stream []byte) ([]Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var out []Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("split document %d: %w", i, err)
		}
		source := sourceOf(doc, i)
		if isBlank(doc) {
			continue
		}
		obj, gvk, err := d.decoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if gvk == nil || gvk.Kind == "" || gvk.Version == "" {
			return nil, fmt.Errorf("%s: object without apiVersion or kind", source)
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return nil, fmt.Errorf("%s: %s has no object metadata", source, gvk)
		}
		if m.GetName() == "" {
			return nil, fmt.Errorf("%s: %s without metadata.name", source, gvk.Kind)
		}
		out = append(out, Object{GVK: *gvk, Name: m.GetName(), Meta: m, Obj: obj, Source: source})
	}
}

// sourceOf returns helm's "# Source: path" comment of a document, or its position.
func sourceOf(doc []byte, i int) string {
	for _, line := range strings.Split(string(doc), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "# Source: "); ok {
			return s
		}
	}
	return fmt.Sprintf("document %d", i)
}

// isBlank reports whether a document has nothing but blank lines, comments and separators.
func isBlank(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		l := strings.TrimSpace(line)
		if l != "" && !strings.HasPrefix(l, "#") && l != "---" {
			return false
		}
	}
	return true
}
