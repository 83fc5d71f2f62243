// Package tiers is the edge's tier table: per tier, the standard rate and burst, the heavy rate,
// whether the API-tier endpoints are open, the credits included per billing period, whether
// overage is allowed, and the stream quotas. The table comes from a YAML or JSON file named in
// configuration, or the built-in Default. Services that enforce part of it (stream-fanout:
// stream quotas and credit limits) import this package and read the same file.
package tiers

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"

	"gopkg.in/yaml.v3"
)

// Tier is one rate and credit plan.
type Tier struct {
	Name string `yaml:"name" json:"name"`
	// Rate is the standard class's sustained requests per second per key; Burst the requests a
	// key may make at once on top of an idle budget.
	Rate  int `yaml:"rate" json:"rate"`
	Burst int `yaml:"burst" json:"burst"`
	// HeavyRate is requests per second per key and heavy route (API.md: 1).
	HeavyRate int `yaml:"heavyRate" json:"heavyRate"`
	// API opens the API-tier endpoints (/transfers/histogram).
	API bool `yaml:"api" json:"api"`
	// IncludedCredits per billing period; Overage lets calls go on once they are spent (billed
	// as extra credits), otherwise a credited call whose most possible cost does not fit in what
	// is left gets 429 "credit limit reached".
	IncludedCredits int64 `yaml:"includedCredits" json:"includedCredits"`
	Overage         bool  `yaml:"overage" json:"overage"`
	// Stream quotas (enforced by stream-fanout): delivered transfers per hour and per month.
	StreamHourly  int64 `yaml:"streamHourly" json:"streamHourly"`
	StreamMonthly int64 `yaml:"streamMonthly" json:"streamMonthly"`
}

// CreditLimit is the credits a caller of the tier may use in a billing period, and whether
// there is such a limit (a tier without overage); the edge refuses credited calls past it and
// stream-fanout ends streams past it.
func (t Tier) CreditLimit() (int64, bool) { return t.IncludedCredits, !t.Overage }

// Table is a validated set of tiers by name. The zero value is empty; use Default or Load.
type Table struct{ byName map[string]Tier }

// Default is the built-in table: free, basic, pro and api. Every tier gets the API.md standard
// rate (20/s) and heavy rate (1/s) and stream quotas (10,000/hour, 1,000,000/month); they differ
// in burst, credits and access.
func Default() Table {
	t, err := New([]Tier{
		{Name: "free", Rate: 5, Burst: 10, HeavyRate: 1, IncludedCredits: 1_000, StreamHourly: 1_000, StreamMonthly: 10_000},
		{Name: "basic", Rate: 20, Burst: 20, HeavyRate: 1, IncludedCredits: 100_000, StreamHourly: 10_000, StreamMonthly: 1_000_000},
		{Name: "pro", Rate: 20, Burst: 50, HeavyRate: 1, IncludedCredits: 1_000_000, Overage: true, StreamHourly: 10_000, StreamMonthly: 1_000_000},
		{Name: "api", Rate: 20, Burst: 100, HeavyRate: 1, API: true, IncludedCredits: 10_000_000, Overage: true, StreamHourly: 10_000, StreamMonthly: 1_000_000},
	})
	if err != nil {
		panic(err) // the built-in table is valid
	}
	return t
}

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// New validates tiers and returns their table; the error lists every problem.
func New(list []Tier) (Table, error) {
	var errs []error
	t := Table{byName: make(map[string]Tier, len(list))}
	for i, tr := range list {
		where := fmt.Sprintf("tier %d (%q)", i, tr.Name)
		if !validName.MatchString(tr.Name) {
			errs = append(errs, fmt.Errorf("%s: name must match %s", where, validName))
		}
		if _, dup := t.byName[tr.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: duplicate name", where))
		}
		if tr.Rate <= 0 || tr.Burst <= 0 || tr.HeavyRate <= 0 {
			errs = append(errs, fmt.Errorf("%s: rate, burst and heavyRate must be positive", where))
		}
		if tr.IncludedCredits < 0 || tr.StreamHourly < 0 || tr.StreamMonthly < 0 {
			errs = append(errs, fmt.Errorf("%s: includedCredits and stream quotas must not be negative", where))
		}
		t.byName[tr.Name] = tr
	}
	if len(list) == 0 {
		errs = append(errs, errors.New("the tier table is empty"))
	}
	return t, errors.Join(errs...)
}

// Load reads a table from a YAML (or JSON) file: either a list of tiers or {"tiers": [...]}.
func Load(path string) (Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Table{}, fmt.Errorf("read tier table: %w", err)
	}
	var list []Tier
	if err := yaml.Unmarshal(b, &list); err != nil {
		var doc struct {
			Tiers []Tier `yaml:"tiers"`
		}
		if err2 := yaml.Unmarshal(b, &doc); err2 != nil {
			return Table{}, fmt.Errorf("tier table %s: %w", path, err2)
		}
		list = doc.Tiers
	}
	t, err := New(list)
	if err != nil {
		return Table{}, fmt.Errorf("tier table %s: %w", path, err)
	}
	return t, nil
}

// FromFile loads path, or returns Default when path is empty.
func FromFile(path string) (Table, error) {
	if path == "" {
		return Default(), nil
	}
	return Load(path)
}

// Get returns the tier named name.
func (t Table) Get(name string) (Tier, bool) {
	tr, ok := t.byName[name]
	return tr, ok
}

// Names lists the tiers, sorted.
func (t Table) Names() []string {
	out := make([]string, 0, len(t.byName))
	for n := range t.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
