package filter

import (
	"errors"
	"slices"
	"testing"
)

// knownSet is a Known of fixed entity ids and entity types.
type knownSet struct{ entities, types []string }

func (k knownSet) Entity(id string) bool { return slices.Contains(k.entities, id) }
func (k knownSet) Types() []string       { return k.types }

// checkNames is the first refusal of CheckName over s's references, as the stream checks them.
func checkNames(s Spec, k Known) error {
	for _, n := range s.Names() {
		if err := CheckName(n, k); err != nil {
			return err
		}
	}
	return nil
}

// TestCheckName: a reference to an operator entity, deposit service or entity type the service
// does not know is refused in GET /transfers' words, naming the field; a known one, a documented
// type, an address and a user entity (looked up elsewhere) pass.
func TestCheckName(t *testing.T) {
	k := knownSet{entities: []string{"binance", "okx"}, types: []string{"bridge", "cex"}}
	refused := map[string]string{
		`{"from":["no-such-entity-zz"]}`:              `from: unknown entity "no-such-entity-zz"`,
		`{"to":["binance","!nope"]}`:                  `to: unknown entity "nope"`,
		`{"from":["type:zzz"]}`:                       `from: type:zzz is not an entity type (one of bridge, cex, dex, fund, individual, user)`,
		`{"to":["deposit:no-such"]}`:                  `to: unknown entity "no-such" in deposit:no-such`,
		`{"base":"ghost","counterparties":"binance"}`: `base: unknown entity "ghost"`,
		`{"base":"binance","counterparties":"ghost"}`: `counterparties: unknown entity "ghost"`,
		`{"from":["binance"],"to":["type:zzz","no"]}`: `to: type:zzz is not an entity type (one of bridge, cex, dex, fund, individual, user)`,
	}
	for js, want := range refused {
		s, err := parse(t, js)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		err = checkNames(s, k)
		var fe *Error
		if !errors.As(err, &fe) || err.Error() != want {
			t.Errorf("%s: got %v, want %s", js, err, want)
		}
	}
	for _, js := range []string{`{"from":["binance","type:bridge","type:fund","deposit:okx","!type:user"]}`,
		`{"to":["0x28c6c06298d514db089934071355e5743bf21d60","6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"]}`, `{"tokens":["tether"]}`} {
		s, err := parse(t, js)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if err := checkNames(s, k); err != nil {
			t.Errorf("%s: %v", js, err)
		}
	}
}
