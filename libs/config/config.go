// Package config reads a service's typed configuration from the environment, validates it all at
// once and renders it for the start-up log with secrets masked.
//
// A service declares one struct with `env` tags (see github.com/caarlos0/env) and calls Load with
// its prefix. Fields tagged `secret:"true"` are masked when logged; URLs have their password
// masked. A struct that implements Validator gets its Validate called after parsing, and every
// problem (parse errors and validation errors) is reported together.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// Validator is implemented by configs with rules beyond parsing. Validate returns every problem
// it finds, joined with errors.Join.
type Validator interface {
	Validate() error
}

// Load fills cfg (a pointer to a struct) from environment variables named prefix+tag, applying
// defaults, then validates it. The error lists every problem found.
func Load(cfg any, prefix string) error {
	return LoadFrom(cfg, prefix, nil)
}

// LoadFrom is Load with an explicit environment (nil means the process environment).
func LoadFrom(cfg any, prefix string, environ map[string]string) error {
	opts := env.Options{Prefix: prefix, Environment: environ}
	var errs []error
	err := env.ParseWithOptions(cfg, opts)
	emptyOff(reflect.ValueOf(cfg), prefix, environ)
	if err != nil {
		var agg env.AggregateError
		if errors.As(err, &agg) {
			keys := envKeys(reflect.TypeOf(cfg), prefix)
			for _, e := range agg.Errors {
				var pe env.ParseError
				if errors.As(e, &pe) && keys[pe.Name] != "" {
					e = fmt.Errorf("%s: %w", keys[pe.Name], pe.Err)
				}
				errs = append(errs, e)
			}
		} else {
			errs = append(errs, err)
		}
	}
	if v, ok := cfg.(Validator); ok {
		if err := v.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %w", errors.Join(errs...))
	}
	return nil
}

// emptyOff empties the fields tagged `envEmpty:"off"` whose variable is set to the empty
// string. caarlos0/env applies a field's envDefault to a variable set but empty as to one not
// set, so without this `FOO_URL: ""` (a chart's value, or FOO_URL= in a shell) could not turn off
// a peer a field names by default: the tag says that empty means off for that field.
func emptyOff(v reflect.Value, prefix string, environ map[string]string) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), v.Field(i)
		if f.Type.Kind() == reflect.Struct {
			emptyOff(fv, prefix+f.Tag.Get("envPrefix"), environ)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if name == "" || f.Tag.Get("envEmpty") != "off" || !fv.CanSet() {
			continue
		}
		val, set := environ[prefix+name]
		if environ == nil {
			val, set = os.LookupEnv(prefix + name)
		}
		if set && val == "" {
			fv.Set(reflect.Zero(f.Type))
		}
	}
}

// envKeys maps struct field names to the environment variable that sets them, so parse errors
// can name the variable a person has to fix.
func envKeys(t reflect.Type, prefix string) map[string]string {
	out := map[string]string{}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Struct {
			for k, v := range envKeys(f.Type, prefix+f.Tag.Get("envPrefix")) {
				out[k] = v
			}
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("env"), ","); name != "" {
			out[f.Name] = prefix + name
		}
	}
	return out
}

// Defaults fills cfg with its `envDefault` values only, ignoring the environment. The local stack
// uses it to build a service config in-process and then override what it needs.
func Defaults(cfg any) error {
	err := env.ParseWithOptions(cfg, env.Options{Environment: map[string]string{}})
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	var rest []error
	for _, e := range agg.Errors {
		var notSet env.VarIsNotSetError
		if !errors.As(e, &notSet) {
			rest = append(rest, e)
		}
	}
	return errors.Join(rest...)
}

// Problems collects validation problems; its Err joins them (nil when there are none).
type Problems []error

// Addf records a problem.
func (p *Problems) Addf(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// Add records the errors that are not nil (each may join several problems).
func (p *Problems) Add(errs ...error) {
	for _, err := range errs {
		if err != nil {
			*p = append(*p, err)
		}
	}
}

// Err returns the joined problems, or nil.
func (p Problems) Err() error { return errors.Join(p...) }

// LogValue renders cfg as a slog group with secrets masked, for the start-up log line.
func LogValue(cfg any) slog.Value {
	return slog.GroupValue(attrs(reflect.ValueOf(cfg), "")...)
}

func attrs(v reflect.Value, _ string) []slog.Attr {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	t := v.Type()
	var out []slog.Attr
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Time{}) {
			sub := attrs(fv, f.Name)
			if f.Anonymous {
				out = append(out, sub...)
			} else {
				out = append(out, slog.Attr{Key: f.Name, Value: slog.GroupValue(sub...)})
			}
			continue
		}
		out = append(out, slog.Any(f.Name, display(f, fv)))
	}
	return out
}

func display(f reflect.StructField, v reflect.Value) any {
	if f.Tag.Get("secret") == "true" {
		if v.IsZero() {
			return ""
		}
		return "***"
	}
	if v.Kind() == reflect.String {
		return MaskURL(v.String())
	}
	if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String {
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = MaskURL(v.Index(i).String())
		}
		return strings.Join(parts, ",")
	}
	return v.Interface()
}

// MaskURL replaces the password of a URL-looking string with "***"; other strings are returned
// unchanged.
func MaskURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "***")
		return strings.Replace(u.String(), "%2A%2A%2A", "***", 1)
	}
	return s
}
