package params

import (
	"net/url"

	"github.com/chainintel/chainintel/libs/chains"
)

// Chains reads the multi-value chain filter name (chains, or a route's own name for it) and
// resolves it against the deployment's chains: nil when absent (every chain of set), else the
// named chains, each once, in the order given. A chain name that is not in the catalogue, or not
// configured on this deployment, is an error naming the parameter and the value: answering the
// empty result a filter on no chain would select reads, to the caller, as "no data" for a typo.
// Every route taking a chains filter reads it here, so they all refuse the same names the same
// way.
func Chains(q url.Values, name string, set *chains.Set) ([]chains.Chain, error) {
	names, err := List(q, name)
	if err != nil {
		return nil, err
	}
	return ResolveChains(name, names, set)
}

// ResolveChains is Chains for names already read from parameter name (a service whose
// parameters reach its application layer as a list): nil for none, else the named chains or an
// error naming the parameter and the offending value.
func ResolveChains(name string, names []string, set *chains.Set) ([]chains.Chain, error) {
	if len(names) == 0 {
		return nil, nil
	}
	cs, err := set.Resolve(names)
	if err != nil {
		return nil, Errorf(name, "%v", err)
	}
	return cs, nil
}
