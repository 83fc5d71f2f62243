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

// MaxProtocols is how many protocols one /swaps query may name.
const MaxProtocols = 50

// swapFilters parses the /swaps filters beyond /transfers's: senders, receivers,
// counterparties, protocols and the token amount ranges.
func (p Parser) swapFilters(q url.Values, s *Swaps) error {
	var err error
	if s.Senders, err = p.refs(q, "senders", true, true, s.Chains); err != nil {
		return err
	}
	if s.Receivers, err = p.refs(q, "receivers", true, true, s.Chains); err != nil {
		return err
	}
	if s.Counterparties, err = p.refs(q, "counterparties", false, false, s.Chains); err != nil {
		return err
	}
	if len(s.Counterparties) > 0 && len(s.Base) == 0 {
		return params.Errorf("counterparties", "selects swaps between base and these; give base too")
	}
	if s.Protocols, err = params.List(q, "protocols"); err != nil {
		return err
	}
	if len(s.Protocols) > MaxProtocols {
		return params.Errorf("protocols", "at most %d, got %d", MaxProtocols, len(s.Protocols))
	}
	for _, v := range s.Protocols {
		if !slugRE.MatchString(v) {
			return params.Errorf("protocols", "%q is not a protocol id such as uniswap-v3", short(v))
		}
	}
	if s.Value0Gte, s.Value0Lte, err = params.FloatRange(q, "value0Gte", "value0Lte"); err != nil {
		return err
	}
	s.Value1Gte, s.Value1Lte, err = params.FloatRange(q, "value1Gte", "value1Lte")
	return err
}

// MaxTags is how many tag ids one /counterparties query may name.
const MaxTags = 50

// counterpartyTags parses /counterparties' tags: tag ids as intelligence names them (any text,
// matched exactly), without repeats.
func counterpartyTags(q url.Values) ([]string, error) {
	ts, err := params.List(q, "tags")
	if err != nil {
		return nil, err
	}
	if len(ts) > MaxTags {
		return nil, params.Errorf("tags", "at most %d, got %d", MaxTags, len(ts))
	}
	return ts, nil
}
