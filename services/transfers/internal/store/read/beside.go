package read

import (
	"context"

	"github.com/chainintel/chainintel/libs/chains"
)

// TransferPage is a page of transfers, the capped count of every match, and the attributions
// read beside the page (Page.Attributions).
type TransferPage struct {
	Rows  []TransferRow
	Count int
	// Attributed is nil when no attributions were read beside the page (not asked, the plan
	// did not know the page's addresses before reading it, or the read failed).
	Attributed *Attributed
}

// Attributed is the attributions of some addresses: Asked holds every address read, Attrs those
// the read model knows (as Attributions returns them).
type Attributed struct {
	Asked map[AddressKey]bool
	Attrs map[AddressKey]Attribution
}

// Covers reports whether every address of keys was read.
func (a *Attributed) Covers(keys []AddressKey) bool {
	if a == nil {
		return false
	}
	for _, k := range keys {
		if !a.Asked[k] {
			return false
		}
	}
	return true
}

// besideRead reads the attributions of a page's addresses in the background, started by the
// plan that learns them before it reads the page's transfers. Its nil value reads nothing.
type besideRead struct {
	done chan struct{} // nil: not started
	res  Attributed
	err  error
}

// start reads the attributions of the addresses (chains[i], addrs[i]); only the first call of a
// read starts one.
func (r *besideRead) start(ctx context.Context, s *Reader, chainNames, addrs []string) {
	if r == nil || r.done != nil {
		return
	}
	r.done = make(chan struct{})
	r.res.Asked = make(map[AddressKey]bool, len(addrs))
	var keys []AddressKey
	for i, a := range addrs {
		k := AddressKey{ChainType: chainTypeOf(chainNames[i]), Address: a}
		if a == "" || r.res.Asked[k] {
			continue
		}
		r.res.Asked[k] = true
		keys = append(keys, k)
	}
	go func() {
		defer close(r.done)
		r.res.Attrs, r.err = s.attrs.Attributions(ctx, keys)
	}()
}

// wait waits for the read, if one started, and returns what it read (nil: nothing, or it failed).
func (r *besideRead) wait() *Attributed {
	if r == nil || r.done == nil {
		return nil
	}
	<-r.done
	if r.err != nil {
		return nil
	}
	return &r.res
}

// chainTypeOf is the type of the chain named chain ("" when unknown), as attributions are keyed.
func chainTypeOf(chain string) string {
	if c, ok := chains.Lookup(chain); ok {
		return string(c.Type)
	}
	return ""
}
