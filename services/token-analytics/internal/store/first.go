package store

import (
	"context"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// flowsCopyColumns are the columns countFirst copies into market.flows.
var flowsCopyColumns = []string{"chain", "id", "chain_type", "block_hash", "hour", "token", "from_addr", "to_addr", "value", "usd", "counted"}

// countFirst stores the copies of the natural ids the batch claimed first (claimIDs returned
// them and each occurs once in fs): no other copy of them exists, so each counts unless its
// block is orphaned, as flows_settle would decide. The copies are written with COPY (the claim
// guarantees none is stored yet, so there is nothing to conflict with), and the counted ones are
// summed here per (token, hour, address) and per (token, hour), so the rollups take one upsert
// per key instead of one per transfer (flows_rollup_first.sql).
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
				f.Value, f.USD, counted}, nil
		}))
	if err != nil {
		return err
	}
	var agg rollupBatch
	for i := range fs {
		if f := &fs[i]; !orphaned[blockKey{f.Chain, f.BlockHash}] {
			agg.add(f)
		}
	}
	if len(agg.hours) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, sqlFlowsRollupFirst, agg.args(marks)...)
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
	transfers  int64
	usd, value float64
}

// rollupBatch is a batch's counted transfers summed per (chain, token, hour, address) and per
// (chain, token, hour).
type rollupBatch struct {
	legs  map[legKey]*leg
	hours map[hourKey]*hourSum
}

func (b *rollupBatch) add(f *app.Flow) {
	if b.legs == nil {
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

// args are sqlFlowsRollupFirst's arguments, each key once; a leg is closed when its hour is
// before its chain's rolled_until in marks.
func (b *rollupBatch) args(marks flowMarks) []any {
	n := len(b.legs)
	lChains, lTypes, lTokens, lAddrs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	lHours := make([]time.Time, n)
	inUSD, inValue, outUSD, outValue := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	closed := make([]bool, n)
	i := 0
	for k, l := range b.legs {
		lChains[i], lTypes[i], lTokens[i], lHours[i], lAddrs[i] = k.chain, l.chainType, k.token, k.hour, k.address
		inUSD[i], inValue[i], outUSD[i], outValue[i] = l.inUSD, l.inValue, l.outUSD, l.outValue
		closed[i] = marks.closed(k.chain, k.hour)
		i++
	}
	m := len(b.hours)
	hChains, hTokens, hHours := make([]string, m), make([]string, m), make([]time.Time, m)
	transfers, usds, values := make([]int64, m), make([]float64, m), make([]float64, m)
	i = 0
	for k, h := range b.hours {
		hChains[i], hTokens[i], hHours[i] = k.chain, k.token, k.hour
		transfers[i], usds[i], values[i] = h.transfers, h.usd, h.value
		i++
	}
	return []any{lChains, lTypes, lTokens, lHours, lAddrs, inUSD, inValue, outUSD, outValue,
		hChains, hTokens, hHours, transfers, usds, values, closed}
}
