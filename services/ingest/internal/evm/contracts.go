package evm

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

// Function selectors.
var (
	selName      = []byte{0x06, 0xfd, 0xde, 0x03}
	selSymbol    = []byte{0x95, 0xd8, 0x9b, 0x41}
	selDecimals  = []byte{0x31, 0x3c, 0xe5, 0x67}
	selToken0    = []byte{0x0d, 0xfe, 0x16, 0x81}
	selToken1    = []byte{0xd2, 0x12, 0x20, 0xa7}
	selBalanceOf = []byte{0x70, 0xa0, 0x82, 0x31}
)

var stringArgs = abi.Arguments{{Type: mustType("string")}}

func mustType(t string) abi.Type {
	ty, err := abi.NewType(t, "", nil)
	if err != nil {
		panic(err)
	}
	return ty
}

// TokenMeta is what a token contract says about itself.
type TokenMeta struct {
	Address  string
	Name     string
	Symbol   string
	Decimals int32
	// NonStandard is set when a field came from a bytes32 answer, a call reverted or answered
	// garbage, or decimals is missing.
	NonStandard bool
}

// TokenMetadata calls name(), symbol() and decimals() on each token, batched, at the latest
// block. Reverts and malformed answers are tolerated: the field stays empty (decimals 0) and
// NonStandard is set. Only transport failures are errors.
func (c *Client) TokenMetadata(ctx context.Context, tokens []string) ([]TokenMeta, error) {
	msgs := make([]CallMsg, 0, 3*len(tokens))
	for _, t := range tokens {
		a := common.HexToAddress(t)
		msgs = append(msgs, CallMsg{To: a, Data: selName}, CallMsg{To: a, Data: selSymbol}, CallMsg{To: a, Data: selDecimals})
	}
	res, err := c.CallBatch(ctx, msgs)
	if err != nil {
		return nil, err
	}
	out := make([]TokenMeta, len(tokens))
	for i, t := range tokens {
		m := TokenMeta{Address: t}
		var ok1, ok2, ok3 bool
		m.Name, ok1 = decodeText(res[3*i])
		m.Symbol, ok2 = decodeText(res[3*i+1])
		m.Decimals, ok3 = decodeDecimals(res[3*i+2])
		m.NonStandard = !ok1 || !ok2 || !ok3
		out[i] = m
	}
	return out, nil
}

// decodeText reads an ABI string, or a bytes32 right-padded with zeros (early tokens such as
// MKR); ok is false for anything else.
func decodeText(r CallResult) (string, bool) {
	if r.Err != nil || len(r.Data) == 0 {
		return "", false
	}
	if len(r.Data) >= 64 {
		if v, err := stringArgs.Unpack(r.Data); err == nil && len(v) == 1 {
			if s, ok := v[0].(string); ok && utf8.ValidString(s) {
				return clean(s), true
			}
		}
	}
	if len(r.Data) == 32 {
		s := string(bytes.TrimRight(r.Data, "\x00"))
		if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
			return clean(s), false
		}
	}
	return "", false
}

func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 128 {
		s = s[:128]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return strings.TrimSpace(s)
}

func decodeDecimals(r CallResult) (int32, bool) {
	if r.Err != nil || len(r.Data) < 32 {
		return 0, false
	}
	var v uint256.Int
	v.SetBytes32(r.Data[:32])
	if !v.IsUint64() || v.Uint64() > 255 {
		return 0, false
	}
	return int32(v.Uint64()), true
}

// PoolTokens is a pool's token pair; OK is false when the contract does not answer token0() and
// token1() with addresses.
type PoolTokens struct {
	Pool, Token0, Token1 string
	OK                   bool
}

// PoolTokens calls token0() and token1() on each pool, batched.
func (c *Client) PoolTokens(ctx context.Context, pools []string) ([]PoolTokens, error) {
	msgs := make([]CallMsg, 0, 2*len(pools))
	for _, p := range pools {
		a := common.HexToAddress(p)
		msgs = append(msgs, CallMsg{To: a, Data: selToken0}, CallMsg{To: a, Data: selToken1})
	}
	res, err := c.CallBatch(ctx, msgs)
	if err != nil {
		return nil, err
	}
	out := make([]PoolTokens, len(pools))
	for i, p := range pools {
		t0, ok0 := decodeAddress(res[2*i])
		t1, ok1 := decodeAddress(res[2*i+1])
		out[i] = PoolTokens{Pool: p, Token0: t0, Token1: t1, OK: ok0 && ok1}
	}
	return out, nil
}

func decodeAddress(r CallResult) (string, bool) {
	if r.Err != nil || len(r.Data) != 32 {
		return "", false
	}
	for _, b := range r.Data[:12] {
		if b != 0 {
			return "", false
		}
	}
	return Addr(common.BytesToAddress(r.Data[12:])), true
}

// TokenBalance is one balanceOf answer; Err is set when the call failed.
type TokenBalance struct {
	Value uint256.Int
	Err   error
}

// TokenBalanceQuery asks for balanceOf(Holder) on Token at Block.
type TokenBalanceQuery struct {
	Holder, Token common.Address
	Block         uint64
}

// TokenBalances calls balanceOf for each query, batched.
func (c *Client) TokenBalances(ctx context.Context, qs []TokenBalanceQuery) ([]TokenBalance, error) {
	msgs := make([]CallMsg, len(qs))
	for i, q := range qs {
		data := make([]byte, 4+32)
		copy(data, selBalanceOf)
		copy(data[4+12:], q.Holder[:])
		msgs[i] = CallMsg{To: q.Token, Data: data, Block: &qs[i].Block}
	}
	res, err := c.CallBatch(ctx, msgs)
	if err != nil {
		return nil, err
	}
	out := make([]TokenBalance, len(qs))
	for i, r := range res {
		switch {
		case r.Err != nil:
			out[i].Err = r.Err
		case len(r.Data) < 32:
			out[i].Err = errMalformed
		default:
			out[i].Value.SetBytes32(r.Data[:32])
		}
	}
	return out, nil
}

type malformed struct{}

func (malformed) Error() string { return "balanceOf answered fewer than 32 bytes" }

var errMalformed error = malformed{}
