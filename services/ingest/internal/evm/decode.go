package evm

import (
	"encoding/hex"
	"fmt"
	"strconv"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/holiman/uint256"
)

// Event signatures (topic 0).
var (
	// Transfer(address indexed from, address indexed to, uint256 value)
	TopicTransfer = common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
	// Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)
	TopicSwapV2 = common.HexToHash("0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822")
	// Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)
	TopicSwapV3 = common.HexToHash("0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67")
)

// Protocol names of Swap.protocol.
const (
	ProtocolV2 = "uniswap_v2"
	ProtocolV3 = "uniswap_v3"
)

// Touch is an (address, token) pair whose balance a block changed; Token is "" for the native
// coin.
type Touch struct{ Address, Token string }

// Decoded is what one block says, before enrichment with token metadata, pool tokens, prices
// and balances.
type Decoded struct {
	Number     uint64
	Hash       string
	ParentHash string
	TimeMs     int64
	// Transfers and swaps carry addresses and exact amounts; token metadata, pool tokens and
	// USD values are filled in by the caller.
	Transactions []*eventsv1.Transaction
	Transfers    []*eventsv1.Transfer
	Swaps        []*eventsv1.Swap
	Touched      []Touch
	Tokens       []string // token contracts that emitted a decoded Transfer, in first-seen order
	Pools        []string // contracts that emitted a decoded Swap
	Created      []string // contracts created in the block
	// InternalCreations are the contracts created inside calls, read from call traces (none
	// when traces are not read).
	InternalCreations []Creation
}

// Creation is a contract created inside a call of transaction TxHash sent by Sender: Creator is
// the contract whose CREATE or CREATE2 made it.
type Creation struct{ Address, Creator, Sender, TxHash string }

// Addr renders an address in chainintel's canonical EVM form (lower-case hex).
func Addr(a common.Address) string {
	var b [42]byte
	b[0], b[1] = '0', 'x'
	hex.Encode(b[2:], a[:])
	return string(b[:])
}

// HashHex renders a hash in lower-case hex.
func HashHex(h common.Hash) string {
	var b [66]byte
	b[0], b[1] = '0', 'x'
	hex.Encode(b[2:], h[:])
	return string(b[:])
}

var zeroAddr common.Address

// decoder accumulates one block's events, remembering what it has already listed.
type decoder struct {
	chain     string
	d         *Decoded
	seenTouch map[Touch]struct{}
	seenToken map[string]bool
	seenPool  map[string]bool
	amt       uint256.Int // scratch for token amounts
}

// Decode turns a block and its receipts into chain events for chain. It fails when the
// receipts do not belong to the block's transactions (a node answering from two forks).
func Decode(chain string, rb *RawBlock) (*Decoded, error) {
	b := rb.Block
	if len(rb.Receipts) != len(b.Transactions) {
		return nil, fmt.Errorf("block %d: %d receipts for %d transactions", uint64(b.Number), len(rb.Receipts), len(b.Transactions))
	}
	if rb.Traces != nil {
		if err := checkTraces(rb); err != nil {
			return nil, err
		}
	}
	x := &decoder{
		chain:     chain,
		d:         &Decoded{Number: uint64(b.Number), Hash: HashHex(b.Hash), ParentHash: HashHex(b.ParentHash), TimeMs: int64(b.Timestamp) * 1000},
		seenTouch: make(map[Touch]struct{}, 4*len(b.Transactions)),
		seenToken: map[string]bool{},
		seenPool:  map[string]bool{},
	}
	// The fee recipient is paid in every block with transactions.
	if len(b.Transactions) > 0 {
		x.touch(Addr(b.Miner), "")
	}
	for _, w := range b.Withdrawals {
		if w.Amount > 0 {
			x.touch(Addr(w.Address), "")
		}
	}
	for i := range b.Transactions {
		tx := &b.Transactions[i]
		rc := &rb.Receipts[i]
		if rc.TxHash != tx.Hash {
			return nil, fmt.Errorf("block %d: receipt %d is for %s, not %s", x.d.Number, i, rc.TxHash.Hex(), tx.Hash.Hex())
		}
		if rc.BlockHash != (common.Hash{}) && rc.BlockHash != b.Hash {
			return nil, fmt.Errorf("block %d: receipt of %s is from block %s, not %s", x.d.Number, tx.Hash.Hex(), rc.BlockHash.Hex(), b.Hash.Hex())
		}
		var trace *CallFrame
		if rb.Traces != nil {
			trace = &rb.Traces[i].Result
		}
		x.transaction(tx, rc, trace)
	}
	return x.d, nil
}

func (x *decoder) touch(addr, token string) {
	t := Touch{addr, token}
	if _, ok := x.seenTouch[t]; !ok {
		x.seenTouch[t] = struct{}{}
		x.d.Touched = append(x.d.Touched, t)
	}
}

// transaction decodes one transaction with its receipt: the transaction event, its external
// transfer and, when it succeeded, its logs and the internal transfers of its trace (nil when
// traces are not read).
func (x *decoder) transaction(tx *Transaction, rc *Receipt, trace *CallFrame) {
	d := x.d
	hash := HashHex(tx.Hash)
	from := Addr(tx.From)
	ok := rc.Succeeded()
	t := &eventsv1.Transaction{
		Chain: x.chain, Hash: hash, BlockNumber: d.Number, BlockHash: d.Hash, BlockTimeMs: d.TimeMs, TxIndex: uint32(tx.Index),
		From: from, Nonce: uint64(tx.Nonce), Success: ok, Value: bigDec(tx.Value), GasUsed: uint64(rc.GasUsed),
		GasPrice: bigDec(tx.GasPrice),
	}
	egp := rc.EffectiveGasPrice
	if egp == nil {
		egp = tx.GasPrice
	}
	t.EffectiveGasPrice = bigDec(egp)
	var fee uint256.Int
	if egp != nil {
		fee.SetFromBig(egp.ToInt())
		fee.Mul(&fee, uint256.NewInt(uint64(rc.GasUsed)))
	}
	t.Fee = fee.Dec()
	if len(tx.Input) >= 4 {
		t.MethodId = "0x" + hex.EncodeToString(tx.Input[:4])
	}
	to := ""
	if tx.To != nil {
		to = Addr(*tx.To)
		t.To = to
	} else if rc.ContractAddress != nil && ok {
		t.ContractCreated = Addr(*rc.ContractAddress)
		to = t.ContractCreated
		d.Created = append(d.Created, to)
	}
	d.Transactions = append(d.Transactions, t)
	x.touch(from, "") // the sender pays the fee, even when the transaction fails
	if !ok {
		return // a failed transaction moves no value and its logs are discarded
	}
	if tx.Value != nil && tx.Value.ToInt().Sign() > 0 && to != "" {
		d.Transfers = append(d.Transfers, &eventsv1.Transfer{
			Id: hash + "_ext", Chain: x.chain, TransactionHash: hash, BlockHash: d.Hash, BlockNumber: d.Number, BlockTimeMs: d.TimeMs,
			From: from, To: to, Amount: t.Value, Type: eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL, TxIndex: t.TxIndex,
		})
		x.touch(to, "")
	}
	if trace != nil {
		x.internalTransfers(hash, from, t.TxIndex, trace)
	}
	for j := range rc.Logs {
		l := &rc.Logs[j]
		if l.Removed || len(l.Topics) == 0 {
			continue
		}
		switch l.Topics[0] {
		case TopicTransfer:
			x.tokenTransfer(hash, t.TxIndex, l)
		case TopicSwapV2, TopicSwapV3:
			x.swap(hash, l)
		}
	}
}

// tokenTransfer decodes an ERC-20 Transfer log.
func (x *decoder) tokenTransfer(hash string, txIndex uint32, l *Log) {
	// ERC-721 emits the same signature with the token id as a fourth topic.
	if len(l.Topics) != 3 || len(l.Data) != 32 {
		return
	}
	d := x.d
	x.amt.SetBytes32(l.Data)
	token := Addr(l.Address)
	tr := &eventsv1.Transfer{
		Id: hash + "_" + strconv.FormatUint(uint64(l.LogIndex), 10), Chain: x.chain, TransactionHash: hash, BlockHash: d.Hash,
		BlockNumber: d.Number, BlockTimeMs: d.TimeMs, From: topicAddr(l.Topics[1]), To: topicAddr(l.Topics[2]),
		TokenAddress: token, Amount: x.amt.Dec(), Type: eventsv1.TransferType_TRANSFER_TYPE_TOKEN, TxIndex: txIndex,
		LogIndex: uint32(l.LogIndex),
	}
	d.Transfers = append(d.Transfers, tr)
	if !x.seenToken[token] {
		x.seenToken[token] = true
		d.Tokens = append(d.Tokens, token)
	}
	if tr.From != Addr(zeroAddr) {
		x.touch(tr.From, token)
	}
	if tr.To != Addr(zeroAddr) {
		x.touch(tr.To, token)
	}
}

// swap decodes a V2 or V3 Swap log.
func (x *decoder) swap(hash string, l *Log) {
	s := decodeSwap(l)
	if s == nil {
		return
	}
	d := x.d
	s.Id = hash + "_" + strconv.FormatUint(uint64(l.LogIndex), 10)
	s.Chain, s.TransactionHash, s.BlockHash, s.BlockNumber, s.BlockTimeMs = x.chain, hash, d.Hash, d.Number, d.TimeMs
	d.Swaps = append(d.Swaps, s)
	if !x.seenPool[s.ContractAddress] {
		x.seenPool[s.ContractAddress] = true
		d.Pools = append(d.Pools, s.ContractAddress)
	}
}

// decodeSwap reads a V2 or V3 Swap log; nil when its shape is not the standard one.
func decodeSwap(l *Log) *eventsv1.Swap {
	if len(l.Topics) != 3 {
		return nil
	}
	s := &eventsv1.Swap{ContractAddress: Addr(l.Address), Sender: topicAddr(l.Topics[1]), Receiver: topicAddr(l.Topics[2]),
		LogIndex: uint32(l.LogIndex)}
	var sign0, sign1 int
	if l.Topics[0] == TopicSwapV2 {
		if len(l.Data) != 4*32 {
			return nil
		}
		// From the pool's view: what came in is positive, what went out negative.
		var in0, in1, out0, out1 uint256.Int
		in0.SetBytes32(l.Data[0:32])
		in1.SetBytes32(l.Data[32:64])
		out0.SetBytes32(l.Data[64:96])
		out1.SetBytes32(l.Data[96:128])
		s.Amount0, sign0 = signedDiff(&in0, &out0)
		s.Amount1, sign1 = signedDiff(&in1, &out1)
		s.Protocol = ProtocolV2
	} else {
		if len(l.Data) != 5*32 {
			return nil
		}
		s.Amount0, sign0 = int256Dec(l.Data[0:32])
		s.Amount1, sign1 = int256Dec(l.Data[32:64])
		s.Protocol = ProtocolV3
	}
	s.Valid = sign0*sign1 < 0
	return s
}

// signedDiff renders in-out in base 10 and returns its sign.
func signedDiff(in, out *uint256.Int) (string, int) {
	switch in.Cmp(out) {
	case 0:
		return "0", 0
	case 1:
		var d uint256.Int
		d.Sub(in, out)
		return d.Dec(), 1
	default:
		var d uint256.Int
		d.Sub(out, in)
		return "-" + d.Dec(), -1
	}
}

// int256Dec renders a two's-complement 256-bit word in base 10 and returns its sign.
func int256Dec(word []byte) (string, int) {
	var v uint256.Int
	v.SetBytes32(word)
	if v.IsZero() {
		return "0", 0
	}
	if word[0]&0x80 == 0 {
		return v.Dec(), 1
	}
	v.Neg(&v)
	return "-" + v.Dec(), -1
}

func topicAddr(h common.Hash) string { return Addr(common.BytesToAddress(h[12:])) }

func bigDec(b *hexutil.Big) string {
	if b == nil {
		return "0"
	}
	return b.ToInt().String()
}
