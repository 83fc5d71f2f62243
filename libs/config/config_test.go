package config

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type testCfg struct {
	Addr    string        `env:"ADDR" envDefault:":8080"`
	DBURL   string        `env:"DATABASE_URL,required"`
	Secret  string        `env:"SECRET" secret:"true"`
	Timeout time.Duration `env:"TIMEOUT" envDefault:"5s"`
	Brokers []string      `env:"BROKERS" envSeparator:","`
	Workers int           `env:"WORKERS" envDefault:"4"`
}

func (c testCfg) Validate() error {
	var p Problems
	if c.Workers < 1 {
		p.Addf("WORKERS must be at least 1, got %d", c.Workers)
	}
	return p.Err()
}

func TestLoadReportsEveryProblem(t *testing.T) {
	var c testCfg
	err := LoadFrom(&c, "SVC_", map[string]string{"SVC_WORKERS": "0", "SVC_TIMEOUT": "soon"})
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"SVC_DATABASE_URL", "SVC_TIMEOUT", "WORKERS must be at least 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestLoadDefaultsAndValues(t *testing.T) {
	var c testCfg
	err := LoadFrom(&c, "SVC_", map[string]string{"SVC_DATABASE_URL": "postgres://u:pw@h/db", "SVC_BROKERS": "a:9092,b:9092"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.Timeout != 5*time.Second || len(c.Brokers) != 2 || c.Workers != 4 {
		t.Fatalf("unexpected config %+v", c)
	}
}

func TestLogValueMasksSecrets(t *testing.T) {
	c := testCfg{DBURL: "postgres://u:hunter2@h/db", Secret: "s3cret"}
	var sb strings.Builder
	slog.New(slog.NewTextHandler(&sb, nil)).Info("config", "config", LogValue(c))
	out := sb.String()
	if strings.Contains(out, "hunter2") || strings.Contains(out, "s3cret") {
		t.Fatalf("secret leaked: %s", out)
	}
	if !strings.Contains(out, "postgres://u:***@h/db") {
		t.Fatalf("url not rendered: %s", out)
	}
}

func TestProblemsEmpty(t *testing.T) {
	var p Problems
	if p.Err() != nil {
		t.Fatal("empty problems must be nil")
	}
	p.Addf("x %d", 1)
	if !errors.Is(p.Err(), p[0]) {
		t.Fatal("joined error must wrap its parts")
	}
}

func TestDefaultsIgnoresRequired(t *testing.T) {
	var c testCfg
	if err := Defaults(&c); err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.Workers != 4 {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

func TestProblemsAddSkipsNil(t *testing.T) {
	var p Problems
	p.Add(nil, nil)
	if p.Err() != nil {
		t.Fatalf("nil errors recorded: %v", p.Err())
	}
	e := errors.New("boom")
	p.Add(nil, e)
	if len(p) != 1 || !errors.Is(p.Err(), e) {
		t.Fatalf("problems %v, want only boom", p)
	}
}

type peerCfg struct {
	Peer  string `env:"PEER_URL" envDefault:"http://peer:8080" envEmpty:"off"`
	Other string `env:"OTHER_URL" envDefault:"http://other:8080"`
	Inner struct {
		Peer string `env:"URL" envDefault:"http://inner:8080" envEmpty:"off"`
	} `envPrefix:"INNER_"`
}

// A variable set to the empty string empties a field tagged envEmpty:"off" (the peer it names is
// off), where caarlos0/env alone would apply the default; unset, the default applies; an untagged
// field keeps the default for an empty variable.
func TestEmptyTurnsOff(t *testing.T) {
	var c peerCfg
	if err := LoadFrom(&c, "SVC_", map[string]string{"SVC_PEER_URL": "", "SVC_OTHER_URL": "", "SVC_INNER_URL": ""}); err != nil {
		t.Fatal(err)
	}
	if c.Peer != "" || c.Other != "http://other:8080" || c.Inner.Peer != "" {
		t.Errorf("set empty: %+v", c)
	}
	var d peerCfg
	if err := LoadFrom(&d, "SVC_", map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if d.Peer != "http://peer:8080" || d.Inner.Peer != "http://inner:8080" {
		t.Errorf("unset: %+v", d)
	}
	t.Setenv("SVC_PEER_URL", "")
	var e peerCfg
	if err := Load(&e, "SVC_"); err != nil {
		t.Fatal(err)
	}
	if e.Peer != "" {
		t.Errorf("process environment, set empty: %+v", e)
	}
}
