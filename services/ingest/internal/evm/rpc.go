package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// ClientOptions tune a Client. Zero values take the documented defaults.
type ClientOptions struct {
	// MaxBatch is the most calls sent in one JSON-RPC batch request; default 100.
	MaxBatch int
	// Attempts is how often a failing request is tried before the error is returned; default 5.
	Attempts int
	// Timeout bounds one HTTP request; default 30s.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Client calls a JSON-RPC endpoint in batches, retrying transport failures with backoff. It is
// safe for concurrent use.
type Client struct {
	c    *rpc.Client
	o    ClientOptions
	noBR atomic.Bool // the node lacks eth_getBlockReceipts
}

// Dial connects to url (http(s), ws(s) or an IPC path).
func Dial(ctx context.Context, url string, o ClientOptions) (*Client, error) {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 100
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	c, err := rpc.DialOptions(ctx, url, rpc.WithHTTPClient(&http.Client{Timeout: o.Timeout}))
	if err != nil {
		return nil, fmt.Errorf("dial JSON-RPC endpoint: %w", err)
	}
	return &Client{c: c, o: o}, nil
}

// Close closes the connection.
func (c *Client) Close() { c.c.Close() }

// IsCallError reports whether err is an error the node answered (a JSON-RPC error object, such
// as a revert), as opposed to a transport failure.
func IsCallError(err error) bool {
	var re rpc.Error
	return errors.As(err, &re)
}

// Batch sends elems in requests of at most MaxBatch calls. Transport failures are retried with
// backoff up to Attempts times; per-call errors are left in each element's Error.
func (c *Client) Batch(ctx context.Context, elems []rpc.BatchElem) error {
	for start := 0; start < len(elems); start += c.o.MaxBatch {
		chunk := elems[start:min(start+c.o.MaxBatch, len(elems))]
		if err := c.retry(ctx, func(ctx context.Context) error { return c.c.BatchCallContext(ctx, chunk) }); err != nil {
			return err
		}
	}
	return nil
}

// Call makes one call with retries.
func (c *Client) Call(ctx context.Context, result any, method string, args ...any) error {
	return c.retry(ctx, func(ctx context.Context) error {
		err := c.c.CallContext(ctx, result, method, args...)
		if IsCallError(err) {
			return permanent{err}
		}
		return err
	})
}

type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

func (c *Client) retry(ctx context.Context, f func(context.Context) error) error {
	backoff := 200 * time.Millisecond
	var err error
	for attempt := 1; ; attempt++ {
		err = f(ctx)
		var p permanent
		if err == nil || errors.As(err, &p) || ctx.Err() != nil {
			if errors.As(err, &p) {
				return p.error
			}
			return err
		}
		if attempt >= c.o.Attempts {
			return fmt.Errorf("JSON-RPC request failed %d times: %w", attempt, err)
		}
		c.o.Logger.Warn("JSON-RPC request failed; retrying", "error", err, "attempt", attempt, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// BlockNumber returns the node's head.
func (c *Client) BlockNumber(ctx context.Context) (uint64, error) {
	var n hexutil.Uint64
	if err := c.Call(ctx, &n, "eth_blockNumber"); err != nil {
		return 0, fmt.Errorf("eth_blockNumber: %w", err)
	}
	return uint64(n), nil
}

// ChainID returns the node's EIP-155 chain id.
func (c *Client) ChainID(ctx context.Context) (uint64, error) {
	var n hexutil.Uint64
	if err := c.Call(ctx, &n, "eth_chainId"); err != nil {
		return 0, fmt.Errorf("eth_chainId: %w", err)
	}
	return uint64(n), nil
}

// ErrNotFound says the node has no block at a height (yet).
var ErrNotFound = errors.New("block not found")

// Headers returns the headers of blocks from..to, in one batch.
func (c *Client) Headers(ctx context.Context, from, to uint64) ([]*Header, error) {
	if to < from {
		return nil, nil
	}
	hs := make([]*Header, to-from+1)
	elems := make([]rpc.BatchElem, len(hs))
	for i := range hs {
		elems[i] = rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{hexutil.Uint64(from + uint64(i)), false}, Result: &hs[i]}
	}
	if err := c.Batch(ctx, elems); err != nil {
		return nil, err
	}
	for i, e := range elems {
		if e.Error != nil {
			return nil, fmt.Errorf("eth_getBlockByNumber %d: %w", from+uint64(i), e.Error)
		}
		if hs[i] == nil {
			return nil, fmt.Errorf("header %d: %w", from+uint64(i), ErrNotFound)
		}
	}
	return hs, nil
}

// Blocks fetches blocks from..to with full transactions and their receipts: one batch of
// eth_getBlockByNumber and eth_getBlockReceipts, falling back to batched
// eth_getTransactionReceipt when the node lacks eth_getBlockReceipts.
func (c *Client) Blocks(ctx context.Context, from, to uint64) ([]*RawBlock, error) {
	if to < from {
		return nil, nil
	}
	n := int(to - from + 1)
	out := make([]*RawBlock, n)
	rawBlocks := make([]json.RawMessage, n)
	rawReceipts := make([]json.RawMessage, n)
	var elems []rpc.BatchElem
	for i := range n {
		num := hexutil.Uint64(from + uint64(i))
		elems = append(elems, rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{num, true}, Result: &rawBlocks[i]})
		if !c.noBR.Load() {
			elems = append(elems, rpc.BatchElem{Method: "eth_getBlockReceipts", Args: []any{num}, Result: &rawReceipts[i]})
		}
	}
	if err := c.Batch(ctx, elems); err != nil {
		return nil, err
	}
	var missing []int
	for _, e := range elems {
		if e.Error == nil {
			continue
		}
		if e.Method == "eth_getBlockReceipts" && unsupported(e.Error) {
			if !c.noBR.Swap(true) {
				c.o.Logger.Warn("node lacks eth_getBlockReceipts; falling back to eth_getTransactionReceipt", "error", e.Error)
			}
			continue
		}
		return nil, fmt.Errorf("%s %v: %w", e.Method, e.Args[0], e.Error)
	}
	for i := range n {
		b, err := ParseBlock(rawBlocks[i])
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", from+uint64(i), err)
		}
		if b == nil {
			return nil, fmt.Errorf("block %d: %w", from+uint64(i), ErrNotFound)
		}
		rs, err := ParseReceipts(rawReceipts[i])
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", from+uint64(i), err)
		}
		if rs == nil && len(b.Transactions) > 0 {
			missing = append(missing, i)
		}
		out[i] = &RawBlock{Block: b, Receipts: rs}
	}
	if len(missing) > 0 {
		if err := c.txReceipts(ctx, out, missing); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Client) txReceipts(ctx context.Context, out []*RawBlock, idx []int) error {
	var elems []rpc.BatchElem
	type slot struct{ b, t int }
	var slots []slot
	ptrs := make([][]*Receipt, len(out))
	for _, i := range idx {
		txs := out[i].Block.Transactions
		ptrs[i] = make([]*Receipt, len(txs))
		for j := range txs {
			elems = append(elems, rpc.BatchElem{Method: "eth_getTransactionReceipt", Args: []any{txs[j].Hash}, Result: &ptrs[i][j]})
			slots = append(slots, slot{i, j})
		}
	}
	if err := c.Batch(ctx, elems); err != nil {
		return err
	}
	for k, e := range elems {
		s := slots[k]
		if e.Error != nil {
			return fmt.Errorf("eth_getTransactionReceipt %s: %w", out[s.b].Block.Transactions[s.t].Hash.Hex(), e.Error)
		}
		if ptrs[s.b][s.t] == nil {
			return fmt.Errorf("receipt of %s: %w", out[s.b].Block.Transactions[s.t].Hash.Hex(), ErrNotFound)
		}
	}
	for _, i := range idx {
		rs := make([]Receipt, len(ptrs[i]))
		for j, p := range ptrs[i] {
			rs[j] = *p
		}
		out[i].Receipts = rs
	}
	return nil
}

// unsupported reports whether err says the method does not exist on the node.
func unsupported(err error) bool {
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == -32601 {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "method not found") || strings.Contains(msg, "not supported") ||
		strings.Contains(msg, "does not exist") || strings.Contains(msg, "not available")
}

// CallMsg is an eth_call request; Block nil means "latest".
type CallMsg struct {
	To    common.Address `json:"to"`
	Data  hexutil.Bytes  `json:"data"`
	Block *uint64        `json:"-"`
}

// CallResult is the answer to one call of a batch: Err is set when it reverted or the node
// refused it.
type CallResult struct {
	Data hexutil.Bytes
	Err  error
}

// CallBatch runs eth_call for each msg in batches. Transport failures are returned; per-call
// failures land in the results.
func (c *Client) CallBatch(ctx context.Context, msgs []CallMsg) ([]CallResult, error) {
	out := make([]CallResult, len(msgs))
	elems := make([]rpc.BatchElem, len(msgs))
	for i := range msgs {
		tag := any("latest")
		if msgs[i].Block != nil {
			tag = hexutil.Uint64(*msgs[i].Block)
		}
		elems[i] = rpc.BatchElem{Method: "eth_call", Args: []any{msgs[i], tag}, Result: &out[i].Data}
	}
	if err := c.Batch(ctx, elems); err != nil {
		return nil, err
	}
	for i, e := range elems {
		out[i].Err = e.Error
	}
	return out, nil
}

// BalanceResult is one eth_getBalance answer.
type BalanceResult struct {
	Value *hexutil.Big
	Err   error
}

// BalanceQuery asks for an address's native balance at a block.
type BalanceQuery struct {
	Address common.Address
	Block   uint64
}

// Balances reads native balances, batched. Transport failures are returned; per-call failures
// (such as state the node no longer has) land in the results.
func (c *Client) Balances(ctx context.Context, qs []BalanceQuery) ([]BalanceResult, error) {
	out := make([]BalanceResult, len(qs))
	elems := make([]rpc.BatchElem, len(qs))
	for i, q := range qs {
		elems[i] = rpc.BatchElem{Method: "eth_getBalance", Args: []any{q.Address, hexutil.Uint64(q.Block)}, Result: &out[i].Value}
	}
	if err := c.Batch(ctx, elems); err != nil {
		return nil, err
	}
	for i, e := range elems {
		out[i].Err = e.Error
		if e.Error == nil && out[i].Value == nil {
			out[i].Err = errors.New("empty eth_getBalance answer")
		}
	}
	return out, nil
}

// Contracts reports, batched, whether each address holds contract code at its block
// (IsContractCode: not for an account without code nor for an EIP-7702 delegated account).
func (c *Client) Contracts(ctx context.Context, qs []BalanceQuery) ([]bool, error) {
	codes := make([]hexutil.Bytes, len(qs))
	elems := make([]rpc.BatchElem, len(qs))
	addrs := make([]common.Address, len(qs))
	for i, q := range qs {
		addrs[i] = q.Address
		elems[i] = rpc.BatchElem{Method: "eth_getCode", Args: []any{q.Address, hexutil.Uint64(q.Block)}, Result: &codes[i]}
	}
	if err := c.Batch(ctx, elems); err != nil {
		return nil, err
	}
	out := make([]bool, len(qs))
	for i, e := range elems {
		if e.Error != nil {
			return nil, fmt.Errorf("eth_getCode %s: %w", Addr(addrs[i]), e.Error)
		}
		out[i] = IsContractCode(codes[i])
	}
	return out, nil
}
