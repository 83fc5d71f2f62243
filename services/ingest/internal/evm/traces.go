package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"
	"golang.org/x/sync/errgroup"
)

// callTracer asks debug_trace* for geth's built-in call tracer, which every major execution
// client (geth, erigon, reth, nethermind) serves in the same shape, with a longer time per
// transaction than geth's default 5 s, so one heavy transaction on a busy node does not fail
// its block's round (a failed trace fails the round: see Traces).
var callTracer = map[string]any{"tracer": "callTracer", "timeout": "20s"}

// ErrNoTraces says the node does not serve debug_traceBlockByHash with the call tracer.
var ErrNoTraces = fmt.Errorf("the node does not serve debug_traceBlockByHash with the callTracer (start geth with --http.api including debug)")

// traceConcurrency is how many blocks' traces are asked at once, one block per request: a
// mainnet block's trace runs to megabytes, so a round's blocks in one batch could pass a node's
// limit on a batch's answer (geth's is 25 MB) on every try.
const traceConcurrency = 4

// SupportsTraces asks the node to trace a call (debug_traceCall with the call tracer, at the
// latest block: unlike a block's trace, it is served at a new chain's genesis too). served is
// false, with the node's answer in why, when the node refuses it: a JSON-RPC error, or an HTTP
// 4xx (a gateway refusing debug_* to this plan); err is set when the node cannot be asked now
// (a transport failure, an HTTP 5xx, a rate limit: HTTP 408 or 429, or a JSON-RPC error saying
// so), for the caller to ask again.
func (c *Client) SupportsTraces(ctx context.Context) (served bool, why string, err error) {
	var out json.RawMessage
	err = c.Call(ctx, &out, "debug_traceCall", map[string]any{"to": common.Address{}}, "latest", callTracer)
	var he rpc.HTTPError
	switch {
	case err == nil:
		return true, "", nil
	case rateLimited(err):
		return false, "", err
	case IsCallError(err):
		return false, err.Error(), nil
	case errors.As(err, &he) && he.StatusCode >= 400 && he.StatusCode < 500:
		return false, he.Status, nil
	}
	return false, "", err
}

// rateLimited reports whether err is a node's or a gateway's "not now": HTTP 408 or 429, or a
// JSON-RPC error with the limit code (-32005) or words.
func rateLimited(err error) bool {
	var he rpc.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusRequestTimeout || he.StatusCode == http.StatusTooManyRequests
	}
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == -32005 {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "rate limit") || strings.Contains(msg, "too many requests") || strings.Contains(msg, "limit exceeded")
}

// Traces reads the call traces of blocks, by hash (so a trace is of the very block fetched,
// whatever branch the node follows by now), one block per request, traceConcurrency at a time,
// and sets each block's Traces. A block without transactions is not asked (geth refuses to trace
// a genesis). A transaction whose trace failed fails the whole read.
func (c *Client) Traces(ctx context.Context, blocks []*RawBlock) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(traceConcurrency)
	for _, rb := range blocks {
		if len(rb.Block.Transactions) == 0 {
			rb.Traces = []TxTrace{}
			continue
		}
		g.Go(func() error { return c.blockTraces(ctx, rb) })
	}
	return g.Wait()
}

func (c *Client) blockTraces(ctx context.Context, rb *RawBlock) error {
	var out []TxTrace
	err := c.Call(ctx, &out, "debug_traceBlockByHash", rb.Block.Hash, callTracer)
	switch {
	case err != nil && IsCallError(err) && unsupported(err):
		return fmt.Errorf("block %d: %w: %v", uint64(rb.Block.Number), ErrNoTraces, err)
	case err != nil:
		return fmt.Errorf("debug_traceBlockByHash %d: %w", uint64(rb.Block.Number), err)
	}
	for i := range out {
		if out[i].Error != "" {
			return fmt.Errorf("debug_traceBlockByHash %d: the trace of transaction %d failed: %s", uint64(rb.Block.Number), i, out[i].Error)
		}
	}
	if out == nil {
		out = []TxTrace{}
	}
	rb.Traces = out
	return nil
}

// checkTraces tells whether rb's traces are those of its transactions.
func checkTraces(rb *RawBlock) error {
	b := rb.Block
	if len(rb.Traces) != len(b.Transactions) {
		return fmt.Errorf("block %d: %d traces for %d transactions", uint64(b.Number), len(rb.Traces), len(b.Transactions))
	}
	for i := range rb.Traces {
		if h := rb.Traces[i].TxHash; h != (common.Hash{}) && h != b.Transactions[i].Hash {
			return fmt.Errorf("block %d: trace %d is of %s, not %s", uint64(b.Number), i, h.Hex(), b.Transactions[i].Hash.Hex())
		}
	}
	return nil
}

// internalTransfers lists the native value moved by the calls of a successful transaction
// (not by the transaction itself, its _ext transfer): every CALL, CREATE, CREATE2 and
// SELFDESTRUCT below the top frame with a positive value between two different accounts,
// skipping every call that failed together with the calls it made (their effects are undone).
// DELEGATECALL and CALLCODE move nothing (the code runs in the caller's account), STATICCALL
// cannot. Transfers are numbered in the order the calls were made: <txHash>_int0, _int1, ...
// Every contract a successful CREATE or CREATE2 below the top frame made is listed in
// Decoded.InternalCreations, with or without value.
func (x *decoder) internalTransfers(hash, sender string, txIndex uint32, top *CallFrame) {
	n := 0
	var walk func(f *CallFrame)
	walk = func(f *CallFrame) {
		for i := range f.Calls {
			c := &f.Calls[i]
			if c.Error != "" {
				continue
			}
			if (c.Type == "CREATE" || c.Type == "CREATE2") && c.To != nil {
				x.d.InternalCreations = append(x.d.InternalCreations, Creation{Address: Addr(*c.To), Creator: Addr(c.From), Sender: sender, TxHash: hash})
			}
			if t := x.internalTransfer(hash, txIndex, n, c); t != nil {
				x.d.Transfers = append(x.d.Transfers, t)
				x.touch(t.From, "")
				x.touch(t.To, "")
				n++
			}
			walk(c)
		}
	}
	walk(top)
}

// internalTransfer is the transfer frame c made, nil when it moved no value.
func (x *decoder) internalTransfer(hash string, txIndex uint32, n int, c *CallFrame) *eventsv1.Transfer {
	switch c.Type {
	case "CALL", "CREATE", "CREATE2", "SELFDESTRUCT":
	default:
		return nil
	}
	if c.To == nil || c.Value == nil || c.Value.ToInt().Sign() <= 0 || *c.To == c.From {
		return nil
	}
	d := x.d
	return &eventsv1.Transfer{
		Id: hash + "_int" + strconv.Itoa(n), Chain: x.chain, TransactionHash: hash, BlockHash: d.Hash, BlockNumber: d.Number,
		BlockTimeMs: d.TimeMs, From: Addr(c.From), To: Addr(*c.To), Amount: c.Value.ToInt().String(),
		Type: eventsv1.TransferType_TRANSFER_TYPE_INTERNAL, TxIndex: txIndex,
	}
}
