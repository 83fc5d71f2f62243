package http

import (
	"errors"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

var fuzzTypes = app.NewChainTypes(nil)

// isBadRequest fails unless err is a 400 for the caller.
func isBadRequest(t *testing.T, err error) {
	t.Helper()
	var se *httpx.StatusError
	if !errors.As(err, &se) || se.Status != 400 || se.Message == "" {
		t.Fatalf("error %v (%T) is not a 400 with a message", err, err)
	}
}

// checkRef fails unless ref is canonical: it normalises to itself.
func checkRef(t *testing.T, ref app.AddressRef) {
	t.Helper()
	again, err := fuzzTypes.NormalizeRef(ref.ChainType, ref.Address)
	if err != nil || again != ref {
		t.Fatalf("%+v is not canonical: %+v %v", ref, again, err)
	}
}

func checkText(t *testing.T, what, s string, max int) {
	t.Helper()
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		t.Fatalf("%s %q passed validation", what, s)
	}
}

func FuzzDecodeLabels(f *testing.F) {
	for _, s := range []string{
		`[{"name":"a","note":"","address":"0x00000000000000000000000000000000000000AB","chainType":"evm"}]`,
		`[{"name":"a","note":"n","address":"` + btcUpper + `","chainType":"bitcoin"},{"name":"b","note":"","address":"` + tonRaw + `","chainType":"ton"}]`,
		`[{"name":"a","note":"","address":"` + tronHex + `","chainType":"tron","x":1}]`,
		`[{"name":"a"}]`, `[]`, `{}`, `null`, `[null]`, `[{"name":1}]`, `[{"name":"\u00e9\ud800"}]`,
		`{"name":"a","note":""}`, `{"name":"a","note":"","address":"` + solAddr + `","chainType":"solana"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := decodeLabels(data)
		if err != nil {
			isBadRequest(t, err)
		} else {
			seen := map[app.AddressRef]bool{}
			for _, li := range in {
				l, err := fuzzTypes.ValidateLabel("labels[0]", li)
				if err != nil {
					isBadRequest(t, err)
					continue
				}
				if l.Name == "" {
					t.Fatal("empty name passed validation")
				}
				checkText(t, "name", l.Name, app.MaxNameRunes)
				checkText(t, "note", l.Note, app.MaxNoteRunes)
				checkRef(t, l.Ref())
				seen[l.Ref()] = true
			}
		}
		// The PUT body decoder takes the same bytes.
		if u, err := decodeLabelUpdate(data); err != nil {
			isBadRequest(t, err)
		} else if _, err := fuzzTypes.ValidateLabel("", app.LabelInput{Name: u.Name, Note: u.Note, Address: evmAddr(1), ChainType: "evm"}); err != nil {
			isBadRequest(t, err)
		}
	})
}

func FuzzDecodeEntities(f *testing.F) {
	for _, s := range []string{
		`{"name":"n","note":"","addresses":{"evm":["0x00000000000000000000000000000000000000AB"]},"shareable":true}`,
		`[{"addresses":{}},{"name":"x","addresses":{"bitcoin":["` + btcUpper + `","` + btcLower + `"],"ton":["` + tonFriend + `"]}}]`,
		`{"addresses":{"dogecoin":["` + dogeAddr + `"],"tron":["` + tronHex + `"]}}`,
		`{"addresses":null}`, `{"addresses":{"eth":[]}}`, `{"addresses":{"evm":null}}`, `[]`, `[1]`, `"x"`, `{"x":1}`,
		` [ {"addresses":{"evm":["0x1"]}} ] `, `{"addresses":{"evm":["` + evmAddr(1) + `"]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bodies, array, err := decodeEntities(data)
		if err != nil {
			isBadRequest(t, err)
		} else {
			if !array && len(bodies) != 1 {
				t.Fatalf("one object decoded as %d", len(bodies))
			}
			for _, b := range bodies {
				in, err := fuzzTypes.ValidateEntity("entities[0]", b)
				if err != nil {
					isBadRequest(t, err)
					continue
				}
				checkText(t, "name", in.Name, app.MaxNameRunes)
				checkText(t, "note", in.Note, app.MaxNoteRunes)
				if len(in.Addresses) > app.MaxEntityAddresses {
					t.Fatalf("%d addresses passed validation", len(in.Addresses))
				}
				sorted := slices.Clone(in.Addresses)
				app.SortRefs(sorted)
				if !slices.Equal(sorted, in.Addresses) || len(slices.Compact(sorted)) != len(in.Addresses) {
					t.Fatalf("addresses not sorted and distinct: %v", in.Addresses)
				}
				for _, r := range in.Addresses {
					checkRef(t, r)
				}
			}
		}
		// PUT and only_add bodies take the same bytes.
		if b, err := decodeEntity(data); err != nil {
			isBadRequest(t, err)
		} else if _, err := fuzzTypes.ValidateEntity("", b); err != nil {
			isBadRequest(t, err)
		}
		if m, err := decodeAddresses(data); err != nil {
			isBadRequest(t, err)
		} else if refs, err := fuzzTypes.ValidateAddresses("", m); err != nil {
			isBadRequest(t, err)
		} else if len(refs) > app.MaxEntityAddresses {
			t.Fatalf("%d addresses passed validation", len(refs))
		}
	})
}

func FuzzParseLabelID(f *testing.F) {
	for _, s := range []string{
		evmAddr(1) + ":evm", "0x00000000000000000000000000000000000000AB:evm", btcUpper + ":bitcoin",
		tonRaw + ":ton", tonFriend + ":ton", tronHex + ":tron", solAddr + ":solana", dogeAddr + ":dogecoin",
		"nocolon", ":evm", evmAddr(1) + ":", "a:b:c", strings.Repeat("0", 200) + ":evm", " " + evmAddr(1) + ":evm",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ref, err := fuzzTypes.ParseLabelID(id)
		if err != nil {
			refs, err := fuzzTypes.ParseLabelIDs("label", []string{id}, false)
			if err == nil || refs != nil {
				t.Fatalf("ParseLabelIDs accepted %q that ParseLabelID refused", id)
			}
			isBadRequest(t, err)
			return
		}
		checkRef(t, ref)
		// The canonical id parses to the same label.
		again, err := fuzzTypes.ParseLabelID(ref.Address + ":" + ref.ChainType)
		if err != nil || again != ref {
			t.Fatalf("%q → %+v, but its canonical id gives %+v %v", id, ref, again, err)
		}
	})
}

func FuzzDeleteLabelsQuery(f *testing.F) {
	for _, s := range []string{
		"labels=" + evmAddr(1) + ":evm," + btcLower + ":bitcoin",
		"labels=" + evmAddr(1) + ":evm&labels=" + url.QueryEscape(tonRaw+":ton"),
		"labels=" + evmAddr(1) + ":evm,," + evmAddr(1) + ":evm", "labels=", "", "labels=x", "labels=%zz",
		"labels=" + url.QueryEscape(tonFriend+":ton") + "&other=1", "labels=" + strings.Repeat("a,", 600),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/url refuses it before any handler runs
		}
		refs, err := labelsParam(fuzzTypes, q)
		if err != nil {
			isBadRequest(t, err)
			return
		}
		if len(refs) == 0 {
			t.Fatal("an empty list was accepted")
		}
		seen := map[app.AddressRef]bool{}
		for _, r := range refs {
			if seen[r] {
				t.Fatalf("duplicate %+v", r)
			}
			seen[r] = true
			checkRef(t, r)
		}
	})
}

// The alert body decoder and the rules behind it refuse with a 400 or accept an alert whose
// every value passes the stream filters' syntax again, within the limits.
func FuzzDecodeAlert(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","enabled":true,"base":null,"from":["0x28c6c06298d514db089934071355e5743bf21d60"],"alertMethodId":1}`,
		`{"name":"a","enabled":false,"base":["binance"],"to":["!type:cex, deposit:okx"],"tokens":["usd-coin"],"chains":["ethereum"],"usdGte":1.5,"usdLte":2,"valueGte":0,"valueLte":null,"description":"d","alertMethodId":7}`,
		`{"name":"a","enabled":true,"base":[],"usdGte":1e7,"alertMethodId":1}`,
		`{"name":"a","enabled":true,"base":null,"usdGte":"5","alertMethodId":1}`,
		`{"name":"","enabled":true,"base":null,"alertMethodId":1.5}`, `{"enabled":true}`, `{}`, `[]`, `null`,
		`{"name":"a","enabled":true,"base":["!x"],"from":"a","alertMethodId":1}`, `{"name":"a","enabled":true,"base":null,"usdGte":1e999,"alertMethodId":1}`,
	} {
		f.Add([]byte(s))
	}
	svc := app.New(nil, fuzzTypes)
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeAlert(data)
		if err != nil {
			isBadRequest(t, err)
			return
		}
		in, err := svc.ValidateAlert(b)
		if err != nil {
			isBadRequest(t, err)
			return
		}
		if in.Name == "" {
			t.Fatal("empty name passed validation")
		}
		checkText(t, "name", in.Name, app.MaxAlertNameRunes)
		if in.Description != nil {
			checkText(t, "description", *in.Description, app.MaxAlertDescriptionRunes)
		}
		for _, l := range []struct {
			name     string
			vals     []string
			neg, pre bool
		}{{"base", in.Base, false, false}, {"from", in.From, true, true}, {"to", in.To, true, true}} {
			if len(l.vals) > app.MaxAlertValues {
				t.Fatalf("%s: %d values passed", l.name, len(l.vals))
			}
			for _, v := range l.vals {
				if _, err := params.ParseReference(l.name, v, l.neg, l.pre); err != nil || v == "" || strings.Contains(v, ",") {
					t.Fatalf("%s value %q passed validation but does not parse again: %v", l.name, v, err)
				}
			}
		}
		if in.From == nil || in.To == nil || in.Tokens == nil {
			t.Fatal("a nil list passed validation")
		}
		for _, bound := range [][2]*float64{{in.USDGte, in.USDLte}, {in.ValueGte, in.ValueLte}} {
			for _, v := range bound {
				if v != nil && (*v < 0 || math.IsInf(*v, 0) || math.IsNaN(*v)) {
					t.Fatalf("bound %v passed validation", *v)
				}
			}
			if bound[0] != nil && bound[1] != nil && *bound[0] > *bound[1] {
				t.Fatalf("inverted bounds passed validation")
			}
		}
	})
}
