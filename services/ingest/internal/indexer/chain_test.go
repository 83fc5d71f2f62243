package indexer_test

import (
	"encoding/binary"
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// scripted is a made-up chain served over JSON-RPC. Its branch can be switched to simulate a
// reorg. Balances follow its transfers exactly (gas is free), so the test knows every answer.

type mtx struct {
	hash     common.Hash
	from, to common.Address
	value    *big.Int // native value
	token    bool     // an ERC-20 transfer of amount from→to instead
	amount   *big.Int
	fail     bool
}

type mblock struct {
	number       uint64
	hash, parent common.Hash
	txs          []mtx
	native       map[common.Address]*big.Int // balances after the block
	tokens       map[common.Address]*big.Int
	at           int64 // the block's time in Unix seconds; 0: 1_700_000_000 + 12 × number
}

var (
	tokenAddr = common.HexToAddress("0x00000000000000000000000000000000000070cc")
	miner     = common.HexToAddress("0x000000000000000000000000000000000000c0de")
	accounts  = func() []common.Address {
		var out []common.Address
		for i := 1; i <= 6; i++ {
			out = append(out, common.BigToAddress(big.NewInt(int64(0xa000+i))))
		}
		return out
	}()
)

// branch builds blocks 0..n; blocks up to shared come from base (the common history).
func branch(name string, n uint64, base []*mblock, shared uint64) []*mblock {
	r := rand.New(rand.NewPCG(uint64(len(name)), uint64(name[0])))
	var out []*mblock
	for i := uint64(0); i <= n; i++ {
		if base != nil && i <= shared {
			out = append(out, base[i])
			continue
		}
		b := &mblock{number: i, native: map[common.Address]*big.Int{}, tokens: map[common.Address]*big.Int{}}
		b.hash = crypto.Keccak256Hash([]byte(name), binary.BigEndian.AppendUint64(nil, i))
		if i == 0 {
			for _, a := range accounts {
				b.native[a] = new(big.Int).Mul(big.NewInt(1000), big.NewInt(1e18))
				b.tokens[a] = new(big.Int).Mul(big.NewInt(5000), big.NewInt(1e18))
			}
			out = append(out, b)
			continue
		}
		prev := out[i-1]
		b.parent = prev.hash
		for a, v := range prev.native {
			b.native[a] = new(big.Int).Set(v)
		}
		for a, v := range prev.tokens {
			b.tokens[a] = new(big.Int).Set(v)
		}
		for k := 0; k < 3+r.IntN(3); k++ {
			from, to := accounts[r.IntN(len(accounts))], accounts[r.IntN(len(accounts))]
			tx := mtx{from: from, to: to, value: new(big.Int), amount: new(big.Int)}
			tx.hash = crypto.Keccak256Hash([]byte(name), binary.BigEndian.AppendUint64(nil, i), []byte{byte(k)})
			amt := new(big.Int).Mul(big.NewInt(int64(1+r.IntN(9))), big.NewInt(1e17+int64(r.IntN(1e6))))
			switch r.IntN(5) {
			case 0:
				tx.fail = true
				tx.value = amt
			case 1, 2:
				tx.token = true
				tx.amount = amt
				b.tokens[from].Sub(b.tokens[from], amt)
				b.tokens[to].Add(b.tokens[to], amt)
			default:
				tx.value = amt
				b.native[from].Sub(b.native[from], amt)
				b.native[to].Add(b.native[to], amt)
			}
			b.txs = append(b.txs, tx)
		}
		out = append(out, b)
	}
	return out
}

type scriptedChain struct {
	mu     sync.Mutex
	blocks []*mblock
	head   uint64
}

func (c *scriptedChain) set(blocks []*mblock, head uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks, c.head = blocks, head
}

func word(v *big.Int) string {
	return "0x" + common.Bytes2Hex(common.LeftPadBytes(v.Bytes(), 32))
}

func (b *mblock) json(full bool) map[string]any {
	txs := []any{}
	for i, tx := range b.txs {
		if !full {
			txs = append(txs, tx.hash)
			continue
		}
		to, input, value := tx.to, "0x", tx.value
		if tx.token {
			to = tokenAddr
			input = "0xa9059cbb" + strings.TrimPrefix(word(new(big.Int).SetBytes(tx.to.Bytes())), "0x") + strings.TrimPrefix(word(tx.amount), "0x")
			value = new(big.Int)
		}
		txs = append(txs, map[string]any{"hash": tx.hash, "from": tx.from, "to": to, "nonce": hexutil.EncodeUint64(b.number*10 + uint64(i)),
			"value": hexutil.EncodeBig(value), "gasPrice": "0x0", "input": input, "transactionIndex": hexutil.EncodeUint64(uint64(i)), "type": "0x0"})
	}
	at := uint64(1_700_000_000) + 12*b.number
	if b.at != 0 {
		at = uint64(b.at)
	}
	return map[string]any{"number": hexutil.EncodeUint64(b.number), "hash": b.hash, "parentHash": b.parent,
		"timestamp": hexutil.EncodeUint64(at), "miner": miner, "transactions": txs, "withdrawals": []any{}}
}

func (b *mblock) receipts() []any {
	out := []any{}
	logIdx := 0
	for i, tx := range b.txs {
		status := "0x1"
		if tx.fail {
			status = "0x0"
		}
		logs := []any{}
		if tx.token && !tx.fail {
			logs = append(logs, map[string]any{"address": tokenAddr, "logIndex": hexutil.EncodeUint64(uint64(logIdx)), "transactionHash": tx.hash,
				"topics": []string{"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
					word(new(big.Int).SetBytes(tx.from.Bytes())), word(new(big.Int).SetBytes(tx.to.Bytes()))},
				"data": word(tx.amount), "removed": false})
			logIdx++
		}
		out = append(out, map[string]any{"transactionHash": tx.hash, "transactionIndex": hexutil.EncodeUint64(uint64(i)), "blockHash": b.hash,
			"status": status, "gasUsed": "0x5208", "effectiveGasPrice": "0x0", "contractAddress": nil, "logs": logs})
	}
	return out
}

func abiString(s string) string {
	b := make([]byte, 0, 96)
	b = append(b, common.LeftPadBytes([]byte{0x20}, 32)...)
	b = append(b, common.LeftPadBytes(big.NewInt(int64(len(s))).Bytes(), 32)...)
	b = append(b, common.RightPadBytes([]byte(s), 32)...)
	return hexutil.Encode(b)
}

func (c *scriptedChain) handler() rpctest.Handler {
	return func(method string, params []json.RawMessage) (any, *rpctest.Error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		num := func(p json.RawMessage) (uint64, bool) {
			s := rpctest.String(p)
			if s == "latest" {
				return c.head, true
			}
			n, err := hexutil.DecodeUint64(s)
			return n, err == nil && n <= c.head
		}
		switch method {
		case "eth_blockNumber":
			return hexutil.EncodeUint64(c.head), nil
		case "eth_chainId":
			return "0x1", nil
		case "eth_getBlockByNumber":
			n, ok := num(params[0])
			if !ok {
				return nil, nil
			}
			var full bool
			_ = json.Unmarshal(params[1], &full)
			return c.blocks[n].json(full), nil
		case "eth_getBlockReceipts":
			n, ok := num(params[0])
			if !ok {
				return nil, nil
			}
			return c.blocks[n].receipts(), nil
		case "eth_getBalance":
			n, ok := num(params[1])
			if !ok {
				return nil, &rpctest.Error{Code: -32000, Message: "header not found"}
			}
			v := c.blocks[n].native[common.HexToAddress(rpctest.String(params[0]))]
			if v == nil {
				v = new(big.Int)
			}
			return hexutil.EncodeBig(v), nil
		case "eth_getCode":
			if common.HexToAddress(rpctest.String(params[0])) == tokenAddr {
				return "0x6080", nil
			}
			return "0x", nil
		case "eth_call":
			var msg struct {
				To   common.Address `json:"to"`
				Data hexutil.Bytes  `json:"data"`
			}
			_ = json.Unmarshal(params[0], &msg)
			if msg.To != tokenAddr || len(msg.Data) < 4 {
				return nil, rpctest.Revert
			}
			switch hexutil.Encode(msg.Data[:4]) {
			case "0x06fdde03":
				return abiString("Test Token"), nil
			case "0x95d89b41":
				return abiString("TT"), nil
			case "0x313ce567":
				return word(big.NewInt(18)), nil
			case "0x70a08231":
				n, ok := num(params[1])
				if !ok || len(msg.Data) != 36 {
					return nil, rpctest.Revert
				}
				v := c.blocks[n].tokens[common.BytesToAddress(msg.Data[16:36])]
				if v == nil {
					v = new(big.Int)
				}
				return word(v), nil
			}
			return nil, rpctest.Revert
		}
		return nil, rpctest.MethodNotFound(method)
	}
}
