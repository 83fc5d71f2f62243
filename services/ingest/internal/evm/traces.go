package evm

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"
)

// callTracer asks debug_trace* for geth's built-in call tracer, which every major execution
// client (geth, erigon, reth, nethermind) serves in the same shape.
var callTracer = map[string]any{"tracer": "callTracer"}

// ErrNoTraces says the node does not serve debug_traceBlockByHash with the call tracer.
var ErrNoTraces = fmt.Errorf("the node does not serve debug_traceBlockByHash with the callTracer (start geth with --http.api including debug)")

// SupportsTraces asks the node to trace its latest block: false when it says it lacks the
// method (or serves it to other plans only), an error when it cannot be asked at all. Any other
// refusal (such as geth's "genesis is not traceable" on a new chain) means the method is served.
func (c *Client) SupportsTraces(ctx context.Context) (bool, error) {
	var h *Header
	if err := c.Call(ctx, &h, "eth_getBlockByNumber", "latest", false); err != nil {
		return false, fmt.Errorf("eth_getBlockByNumber latest: %w", err)
	}
	if h == nil {
		return false, fmt.Errorf("latest block: %w", ErrNotFound)
	}
	var out json.RawMessage
	err := c.Call(ctx, &out, "debug_traceBlockByHash", h.Hash, callTracer)
	if err != nil && IsCallError(err) {
		return !unsupported(err), nil
	}
	return err == nil, err
}

// Traces reads the call traces of blocks, by hash (so a trace is of the very block fetched,
// whatever branch the node follows by now), in one batch, and sets each block's Traces. A block
// without transactions is not asked (geth refuses to trace a genesis).
func (c *Client) Traces(ctx context.Context, blocks []*RawBlock) error {
	out := make([][]TxTrace, len(blocks))
	var elems []rpc.BatchElem
	var asked []int
	for i, rb := range blocks {
		if len(rb.Block.Transactions) == 0 {
			blocks[i].Traces = []TxTrace{}
			continue
		}
		elems = append(elems, rpc.BatchElem{Method: "debug_traceBlockByHash", Args: []any{rb.Block.Hash, callTracer}, Result: &out[i]})
		asked = append(asked, i)
	}
	if err := c.Batch(ctx, elems); err != nil {
		return err
	}
	for k, e := range elems {
		rb := blocks[asked[k]]
		if e.Error != nil {
			if unsupported(e.Error) {
				return fmt.Errorf("block %d: %w: %v", uint64(rb.Block.Number), ErrNoTraces, e.Error)
			}
			return fmt.Errorf("debug_traceBlockByHash %d: %w", uint64(rb.Block.Number), e.Error)
		}
		rb.Traces = out[asked[k]]
		if rb.Traces == nil {
			rb.Traces = []TxTrace{}
		}
	}
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
