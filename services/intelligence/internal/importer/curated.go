package importer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
)

// MaxCuratedBytes bounds a curated file (64 MiB).
const MaxCuratedBytes = 64 << 20

type curatedFile struct {
	Entities  []curatedEntity  `json:"entities"`
	Addresses []curatedAddress `json:"addresses"`
	Tags      []curatedTag     `json:"tags"`
}

type curatedEntity struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Note        string `json:"note"`
	Description string `json:"description"`
	Website     string `json:"website"`
	Twitter     string `json:"twitter"`
	LinkedIn    string `json:"linkedin"`
	Service     string `json:"service"`
}

type curatedAddress struct {
	ChainType  string   `json:"chainType"`
	Chain      string   `json:"chain"`
	Address    string   `json:"address"`
	Entity     string   `json:"entity"`
	Label      string   `json:"label"`
	Confidence *float64 `json:"confidence"`
	Tags       []TagRef `json:"tags"`
}

type curatedTag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            *int   `json:"rank"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
	Chain           string `json:"chain"`
}

// ParseCurated reads the operator's curated format (docs/contracts.md): a JSON document with
// entities, addresses and tags, or a CSV file with the header
// chain_type,address,entity,label,confidence. The file is checked whole; any problem rejects it,
// and the error lists the problems (the first 20) with their positions.
func ParseCurated(r io.Reader, source string) (Batch, error) {
	br := bufio.NewReader(io.LimitReader(r, MaxCuratedBytes+1))
	first, err := firstNonSpace(br)
	if err != nil {
		return Batch{}, err
	}
	if first == '{' {
		return parseCuratedJSON(br, source)
	}
	return parseCuratedCSV(br, source)
}

func firstNonSpace(br *bufio.Reader) (byte, error) {
	for i := 0; ; i++ {
		b, err := br.Peek(i + 1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, errors.New("curated file is empty")
			}
			return 0, err
		}
		c := b[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0xEF || c == 0xBB || c == 0xBF {
			if i > 4096 {
				return 0, errors.New("curated file starts with only white space")
			}
			continue
		}
		return c, nil
	}
}

func parseCuratedJSON(r io.Reader, source string) (Batch, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return Batch{}, err
	}
	if len(raw) > MaxCuratedBytes {
		return Batch{}, fmt.Errorf("curated file over %d bytes", MaxCuratedBytes)
	}
	raw = bytes.TrimPrefix(raw, []byte("\xEF\xBB\xBF"))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f curatedFile
	if err := dec.Decode(&f); err != nil {
		return Batch{}, fmt.Errorf("curated JSON: %w", err)
	}
	if dec.More() {
		return Batch{}, errors.New("curated JSON: data after the document")
	}
	b := Batch{Source: source}
	var p problems
	b.Entities = curatedEntities(f.Entities, &p)
	b.Tags = curatedTags(f.Tags, &p)
	b.Claims = curatedClaims(f.Addresses, &p)
	if err := p.err("curated JSON"); err != nil {
		return Batch{}, err
	}
	b.dropNotWallets()
	b.dedupe()
	return b, nil
}

// curatedEntities checks the file's entities, recording each problem in p.
func curatedEntities(in []curatedEntity, p *problems) []attribution.Entity {
	var out []attribution.Entity
	entities := map[string]bool{}
	for i, e := range in {
		at := fmt.Sprintf("entities[%d]", i)
		if !attribution.ValidEntityID(e.ID) {
			p.addf("%s.id %q: want a slug matching ^[a-z0-9][a-z0-9_.-]{0,127}$", at, params.Trunc(e.ID))
			continue
		}
		if entities[e.ID] {
			p.addf("%s.id %q: listed twice", at, e.ID)
			continue
		}
		if strings.TrimSpace(e.Name) == "" {
			p.addf("%s.name: required", at)
		}
		if e.Service != "" && !attribution.ValidEntityID(e.Service) {
			p.addf("%s.service %q: want an entity id", at, params.Trunc(e.Service))
		}
		if len(e.Name) > 256 || len(e.Note) > 4096 || len(e.Description) > 16384 || len(e.Type) > 64 {
			p.addf("%s: name ≤ 256, type ≤ 64, note ≤ 4096, description ≤ 16384 bytes", at)
		}
		entities[e.ID] = true
		out = append(out, attribution.Entity{ID: e.ID, Name: e.Name, Type: e.Type, Note: e.Note,
			Description: e.Description, Website: e.Website, Twitter: e.Twitter, LinkedIn: e.LinkedIn, Service: e.Service})
	}
	return out
}

// curatedTags checks the file's tags, recording each problem in p.
func curatedTags(in []curatedTag, p *problems) []attribution.Tag {
	var out []attribution.Tag
	tags := map[string]bool{}
	for i, t := range in {
		at := fmt.Sprintf("tags[%d]", i)
		if !attribution.ValidEntityID(t.ID) {
			p.addf("%s.id %q: want a slug matching ^[a-z0-9][a-z0-9_.-]{0,127}$", at, params.Trunc(t.ID))
			continue
		}
		if tags[t.ID] {
			p.addf("%s.id %q: listed twice", at, t.ID)
			continue
		}
		if strings.TrimSpace(t.Label) == "" {
			p.addf("%s.label: required", at)
		}
		rank := 100
		if t.Rank != nil {
			rank = *t.Rank
		}
		tags[t.ID] = true
		out = append(out, attribution.Tag{ID: t.ID, Label: t.Label, Rank: rank, DisablePage: t.DisablePage,
			ExcludeEntities: t.ExcludeEntities, Chain: t.Chain})
	}
	return out
}

// curatedClaims checks the file's addresses, recording each problem in p.
func curatedClaims(in []curatedAddress, p *problems) []Claim {
	var out []Claim
	for i, a := range in {
		at := fmt.Sprintf("addresses[%d]", i)
		ct, addr, err := normalizeAddress(a.ChainType, a.Chain, a.Address)
		if err != nil {
			p.addf("%s: %v", at, err)
			continue
		}
		conf, ok := confidence(a.Confidence)
		if !ok {
			p.addf("%s.confidence: want a number from 0 to 1", at)
			continue
		}
		if a.Entity != "" && !attribution.ValidEntityID(a.Entity) {
			p.addf("%s.entity %q: want an entity id", at, params.Trunc(a.Entity))
			continue
		}
		if a.Entity == "" && a.Label == "" && len(a.Tags) == 0 {
			p.addf("%s: give an entity, a label or tags", at)
			continue
		}
		for j, tr := range a.Tags {
			if !attribution.ValidEntityID(tr.ID) {
				p.addf("%s.tags[%d].id %q: want a tag id", at, j, params.Trunc(tr.ID))
			}
			if len(tr.Params) > 256 {
				p.addf("%s.tags[%d].params: at most 256 bytes", at, j)
			}
		}
		if len(a.Label) > 256 {
			p.addf("%s.label: at most 256 bytes", at)
		}
		out = append(out, Claim{ChainType: string(ct), Address: addr, EntityID: a.Entity, Label: a.Label,
			Confidence: conf, Tags: a.Tags})
	}
	return out
}

func confidence(v *float64) (float32, bool) {
	if v == nil {
		return 1, true
	}
	if !(*v >= 0 && *v <= 1) {
		return 0, false
	}
	return float32(*v), true
}

var curatedCSVHeader = []string{"chain_type", "address", "entity", "label", "confidence"}

func parseCuratedCSV(r io.Reader, source string) (Batch, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return Batch{}, fmt.Errorf("curated CSV header: %w", err)
	}
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\xEF\xBB\xBF")
	}
	if len(head) != len(curatedCSVHeader) {
		return Batch{}, fmt.Errorf("curated file is neither JSON (starting with '{') nor CSV with the header %s", strings.Join(curatedCSVHeader, ","))
	}
	for i, h := range curatedCSVHeader {
		if strings.TrimSpace(head[i]) != h {
			return Batch{}, fmt.Errorf("curated CSV header: column %d is %q, want %q (header %s)", i+1, params.Trunc(head[i]), h, strings.Join(curatedCSVHeader, ","))
		}
	}
	b := Batch{Source: source}
	var p problems
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			p.addf("line %d: %v", line, err)
			break
		}
		if len(rec) != len(curatedCSVHeader) {
			p.addf("line %d: %d fields, want %d", line, len(rec), len(curatedCSVHeader))
			continue
		}
		ct, addr, err := normalizeAddress(strings.TrimSpace(rec[0]), "", strings.TrimSpace(rec[1]))
		if err != nil {
			p.addf("line %d: %v", line, err)
			continue
		}
		ent, label := strings.TrimSpace(rec[2]), rec[3]
		if ent != "" && !attribution.ValidEntityID(ent) {
			p.addf("line %d: entity %q: want an entity id", line, params.Trunc(ent))
			continue
		}
		if ent == "" && label == "" {
			p.addf("line %d: give an entity or a label", line)
			continue
		}
		var conf float32 = 1
		if s := strings.TrimSpace(rec[4]); s != "" {
			f, err := strconv.ParseFloat(s, 64)
			c, ok := confidence(&f)
			if err != nil || !ok {
				p.addf("line %d: confidence %q: want a number from 0 to 1", line, params.Trunc(s))
				continue
			}
			conf = c
		}
		if len(label) > 256 {
			p.addf("line %d: label: at most 256 bytes", line)
			continue
		}
		b.Claims = append(b.Claims, Claim{ChainType: string(ct), Address: addr, EntityID: ent, Label: label, Confidence: conf})
	}
	if err := p.err("curated CSV"); err != nil {
		return Batch{}, err
	}
	b.dropNotWallets()
	b.dedupe()
	return b, nil
}
