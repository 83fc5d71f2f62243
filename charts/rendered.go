package charts

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Rendered is the set of objects one chart rendered, indexed by kind and name.
type Rendered struct {
	Objects []Object
	byKey   map[string]Object
}

// NewRendered indexes objects; two objects of the same kind and name are an error (the API
// server would keep only one).
func NewRendered(objs []Object) (*Rendered, error) {
	r := &Rendered{Objects: objs, byKey: make(map[string]Object, len(objs))}
	for _, o := range objs {
		if prev, dup := r.byKey[o.Key()]; dup {
			return nil, fmt.Errorf("%s rendered twice (%s and %s)", o.Key(), prev.Source, o.Source)
		}
		r.byKey[o.Key()] = o
	}
	return r, nil
}

// Get returns the object of a kind and name.
func (r *Rendered) Get(kind, name string) (Object, bool) {
	o, ok := r.byKey[kind+"/"+name]
	return o, ok
}

// Kinds counts the objects of each kind.
func (r *Rendered) Kinds() map[string]int {
	n := map[string]int{}
	for _, o := range r.Objects {
		n[o.GVK.Kind]++
	}
	return n
}

// Of returns the rendered objects of Go type T (e.g. *appsv1.Deployment), in stream order.
func Of[T any](r *Rendered) []T {
	var out []T
	for _, o := range r.Objects {
		if v, ok := o.Obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// EnvValue is where one environment variable of a container comes from.
type EnvValue struct {
	Value  string                    // a literal: env value, or a ConfigMap's data
	Secret *corev1.SecretKeySelector // a key of a Secret
	Source *corev1.EnvVarSource      // any other valueFrom (fieldRef, resourceFieldRef)
}

// Env resolves a container's environment as the kubelet does: envFrom sources in order, then
// env, a later definition replacing an earlier one. ConfigMaps (envFrom or configMapKeyRef)
// must be among the rendered objects. Secrets loaded whole with envFrom are returned by name,
// since their keys are not known here.
func (r *Rendered) Env(c corev1.Container) (map[string]EnvValue, []string, error) {
	env := map[string]EnvValue{}
	var secrets []string
	for _, src := range c.EnvFrom {
		switch {
		case src.ConfigMapRef != nil:
			cm, err := r.configMap(src.ConfigMapRef.Name)
			if err != nil {
				return nil, nil, fmt.Errorf("container %s envFrom: %w", c.Name, err)
			}
			keys := make([]string, 0, len(cm.Data))
			for k := range cm.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				env[src.Prefix+k] = EnvValue{Value: cm.Data[k]}
			}
		case src.SecretRef != nil:
			secrets = append(secrets, src.SecretRef.Name)
		default:
			return nil, nil, fmt.Errorf("container %s: envFrom entry with no source", c.Name)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = EnvValue{Value: e.Value}
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = EnvValue{Secret: e.ValueFrom.SecretKeyRef}
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			cm, err := r.configMap(ref.Name)
			if err != nil {
				return nil, nil, fmt.Errorf("container %s env %s: %w", c.Name, e.Name, err)
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				return nil, nil, fmt.Errorf("container %s env %s: ConfigMap %s has no key %s", c.Name, e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = EnvValue{Value: v}
		default:
			env[e.Name] = EnvValue{Source: e.ValueFrom}
		}
	}
	return env, secrets, nil
}

func (r *Rendered) configMap(name string) (*corev1.ConfigMap, error) {
	o, ok := r.Get("ConfigMap", name)
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s is not rendered", name)
	}
	return o.Obj.(*corev1.ConfigMap), nil
}
