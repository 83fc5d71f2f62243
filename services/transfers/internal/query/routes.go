package query

import (
	"net/url"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
)

// TxTransfers is a parsed GET /transfers/tx/{hash}.
type TxTransfers struct {
	Chain string // "": every configured chain
	Type  string // external, internal, token; "": every type
}

// TxTransfers parses the query of GET /transfers/tx/{hash}.
func (p Parser) TxTransfers(q url.Values) (TxTransfers, error) {
	if err := known(q, "chain", "transferType"); err != nil {
		return TxTransfers{}, err
	}
	var t TxTransfers
	var err error
	if t.Type, err = params.Enum(q, "transferType", "", "external", "internal", "token"); err != nil {
		return t, err
	}
	name, err := params.One(q, "chain")
	if err != nil || name == "" {
		return t, err
	}
	cs, err := p.Chains.Resolve([]string{name})
	if err != nil {
		return t, params.Errorf("chain", "%v", err)
	}
	t.Chain = cs[0].Name
	return t, nil
}

// Volume is a parsed /volume/address|entity/... query.
type Volume struct {
	Chains []chains.Chain
}

// Volume parses the query of GET /volume/....
func (p Parser) Volume(q url.Values) (Volume, error) {
	if err := known(q, "chains"); err != nil {
		return Volume{}, err
	}
	cs, err := p.chains(q)
	return Volume{Chains: cs}, err
}
