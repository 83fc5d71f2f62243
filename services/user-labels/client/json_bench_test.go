package client_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/user-labels/client"
	gojson "github.com/goccy/go-json"
)

// lookupAnswer is the answer BenchmarkInternalLookup1k's lookup gets: 1,000 addresses asked, a
// third labelled, a third in an entity.
func lookupAnswer() client.Lookup {
	lk := client.Lookup{Labels: map[string]client.Label{}, Entities: map[string][]client.EntityRef{}}
	for i := range 1000 {
		key := client.AddressRef{ChainType: "evm", Address: fmt.Sprintf("0x%040x", i)}.Key()
		switch i % 3 {
		case 0:
			lk.Labels[key] = client.Label{Name: fmt.Sprintf("label %d", i), Note: "a note on it"}
		case 1:
			lk.Entities[key] = []client.EntityRef{{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i%100), Name: "entity", Note: "n"}}
		}
	}
	return lk
}

// BenchmarkLookupAnswerJSON encodes a 1,000-address lookup answer as the service does and decodes
// it as the client does (goccy/go-json: httpx.FastJSON's options, httpx.UnmarshalFast), beside
// the same with encoding/json; the two lines it prints compare the JSON work of one lookup.
func BenchmarkLookupAnswerJSON(b *testing.B) {
	lk := lookupAnswer()
	b.Run("go-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			raw, err := gojson.MarshalWithOption(lk, gojson.UnorderedMap())
			if err != nil {
				b.Fatal(err)
			}
			var got client.Lookup
			if err := httpx.UnmarshalFast(raw, &got); err != nil || len(got.Labels) != len(lk.Labels) {
				b.Fatal(err, len(got.Labels))
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			raw, err := json.Marshal(lk)
			if err != nil {
				b.Fatal(err)
			}
			var got client.Lookup
			if err := json.Unmarshal(raw, &got); err != nil || len(got.Labels) != len(lk.Labels) {
				b.Fatal(err, len(got.Labels))
			}
		}
	})
}
