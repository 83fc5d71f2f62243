package store

import (
	"context"
	"slices"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// flowsCopyColumns are the columns countFirst copies into market.flows.
var flowsCopyColumns = []string{"chain", "id", "chain_type", "block", "hour", "token", "from_addr", "to_addr", "value", "usd", "counted", "block_time"}

// countFirst stores the copies of the natural ids the batch saw first (no copy of them is
// stored and each occurs once in fs): each counts unless its block is orphaned, as flows_settle
// would decide. The copies are written with COPY (the writers' chain lock and the check before
// guarantee none is stored yet, so there is nothing to conflict with), and the counted ones are
// summed and classified here per (token, hour), and per (token, hour, address) for closed hours,
// so the rollups take one upsert per key instead of one per transfer (flows_rollup_first.sql).
func countFirst(ctx context.Context, tx pgx.Tx, fs []app.Flow, marks flowMarks) error {
	if len(fs) == 0 {
		return nil
	}
	orphaned, err := orphanedOf(ctx, tx, fs)
	if err != nil {
		return err
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"market", "flows"}, flowsCopyColumns,
		pgx.CopyFromSlice(len(fs), func(i int) ([]any, error) {
			f := &fs[i]
			counted := !orphaned[blockKey{f.Chain, f.BlockHash}]
			return []any{f.Chain, f.ID, f.ChainType, f.BlockHash, f.Time.UTC().Truncate(time.Hour), f.Token, f.From, f.To,
				f.Value, f.USD, counted, f.Time.UTC()}, nil
		}))
	if err != nil {
		return err
	}
	counted := slices.DeleteFunc(slices.Clone(fs), func(f app.Flow) bool { return orphaned[blockKey{f.Chain, f.BlockHash}] })
	if len(counted) == 0 {
		return nil
	}
	classes, err := classesOf(ctx, tx, counted)
	if err != nil {
		return err
	}
	agg := rollupBatch{classes: classes, marks: marks}
	for i := range counted {
		agg.add(&counted[i])
	}
	_, err = tx.Exec(ctx, sqlFlowsRollupFirst, agg.args()...)
	return err
}

type blockKey struct{ chain, hash string }

// orphanedOf is which of the blocks of fs are orphaned.
func orphanedOf(ctx context.Context, tx pgx.Tx, fs []app.Flow) (map[blockKey]bool, error) {
	seen := map[blockKey]bool{}
	var chains, hashes []string
	for i := range fs {
		if k := (blockKey{fs[i].Chain, fs[i].BlockHash}); !seen[k] {
			seen[k] = true
			chains, hashes = append(chains, k.chain), append(hashes, k.hash)
		}
	}
	rows, err := tx.Query(ctx, sqlOrphansOf, chains, hashes)
	if err != nil {
		return nil, err
	}
	orphaned := map[blockKey]bool{}
	var k blockKey
	_, err = pgx.ForEachRow(rows, []any{&k.chain, &k.hash}, func() error {
		orphaned[k] = true
		return nil
	})
	return orphaned, err
}

// addressKey is an address of a chain type.
type addressKey struct{ chainType, address string }

// classesOf is the CEX/DEX class of every sender and receiver of fs that has one. The writers'
// shared lock keeps classes from changing until the batch commits.
func classesOf(ctx context.Context, tx pgx.Tx, fs []app.Flow) (map[addressKey]string, error) {
	seen := make(map[addressKey]bool, 2*len(fs))
	var types, addrs []string
	for i := range fs {
		for _, a := range [2]string{fs[i].From, fs[i].To} {
			if k := (addressKey{fs[i].ChainType, a}); !seen[k] {
				seen[k] = true
				types, addrs = append(types, k.chainType), append(addrs, k.address)
			}
		}
	}
	rows, err := tx.Query(ctx, sqlClassesOf, types, addrs)
	if err != nil {
		return nil, err
	}
	classes := map[addressKey]string{}
	var k addressKey
	var class string
	_, err = pgx.ForEachRow(rows, []any{&k.chainType, &k.address, &class}, func() error {
		classes[k] = class
		return nil
	})
	return classes, err
}

type hourKey struct {
	chain, token string
	hour         time.Time
}

type legKey struct {
	hourKey
	address string
}

type leg struct {
	chainType                        string
	inUSD, inValue, outUSD, outValue float64
}

type hourSum struct {
	transfers                    int64
	usd, value                   float64
	cexIn, cexOut, dexIn, dexOut float64
}

// rollupBatch is a batch's counted transfers summed per (chain, token, hour), their USD in and
// out of CEX and DEX addresses by the classes of their receivers and senders, and per (chain,
// token, hour, address) for the hours marks has closed.
type rollupBatch struct {
	classes map[addressKey]string
	marks   flowMarks
	legs    map[legKey]*leg
	hours   map[hourKey]*hourSum
}

func (b *rollupBatch) add(f *app.Flow) {
	if b.hours == nil {
		b.legs, b.hours = map[legKey]*leg{}, map[hourKey]*hourSum{}
	}
	hk := hourKey{f.Chain, f.Token, f.Time.UTC().Truncate(time.Hour)}
	h := b.hours[hk]
	if h == nil {
		h = &hourSum{}
		b.hours[hk] = h
	}
	h.transfers++
	h.usd += f.USD
	h.value += f.Value
	switch b.classes[addressKey{f.ChainType, f.To}] {
	case "cex", "cex_deposit":
		h.cexIn += f.USD
	case "dex":
		h.dexIn += f.USD
	}
	switch b.classes[addressKey{f.ChainType, f.From}] {
	case "cex":
		h.cexOut += f.USD
	case "cex_deposit":
		// a deposit address's payment is its sweep into its exchange, whose wallet counts it as
		// received: internal to the exchange, so neither inflow nor outflow
		h.cexIn -= f.USD
	case "dex":
		h.dexOut += f.USD
	}
	if !b.marks.closed(f.Chain, hk.hour) {
		return
	}
	to := b.leg(legKey{hk, f.To}, f.ChainType)
	to.inUSD += f.USD
	to.inValue += f.Value
	from := b.leg(legKey{hk, f.From}, f.ChainType)
	from.outUSD += f.USD
	from.outValue += f.Value
}

func (b *rollupBatch) leg(k legKey, chainType string) *leg {
	l := b.legs[k]
	if l == nil {
		l = &leg{chainType: chainType}
		b.legs[k] = l
	}
	return l
}

// args are sqlFlowsRollupFirst's arguments, each key once.
func (b *rollupBatch) args() []any {
	n := len(b.legs)
	lChains, lTypes, lTokens, lAddrs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	lHours := make([]time.Time, n)
	inUSD, inValue, outUSD, outValue := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	i := 0
	for k, l := range b.legs {
		lChains[i], lTypes[i], lTokens[i], lHours[i], lAddrs[i] = k.chain, l.chainType, k.token, k.hour, k.address
		inUSD[i], inValue[i], outUSD[i], outValue[i] = l.inUSD, l.inValue, l.outUSD, l.outValue
		i++
	}
	m := len(b.hours)
	hChains, hTokens, hHours := make([]string, m), make([]string, m), make([]time.Time, m)
	transfers := make([]int64, m)
	usds, values := make([]float64, m), make([]float64, m)
	cexIn, cexOut, dexIn, dexOut := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
	i = 0
	for k, h := range b.hours {
		hChains[i], hTokens[i], hHours[i] = k.chain, k.token, k.hour
		transfers[i], usds[i], values[i] = h.transfers, h.usd, h.value
		cexIn[i], cexOut[i], dexIn[i], dexOut[i] = h.cexIn, h.cexOut, h.dexIn, h.dexOut
		i++
	}
	return []any{lChains, lTypes, lTokens, lHours, lAddrs, inUSD, inValue, outUSD, outValue,
		hChains, hTokens, hHours, transfers, usds, values, cexIn, cexOut, dexIn, dexOut}
}
