// Package evm reads an Ethereum JSON-RPC endpoint and decodes what it returns into chainintel's
// chain events: native value transfers, ERC-20 Transfer logs, Uniswap V2-style and V3 Swap logs
// and transaction details. Decoding is exact: amounts are 256-bit integers rendered in base 10.
package evm

import (
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Block is a block as eth_getBlockByNumber returns it with full transactions, keeping only the
// fields ingest uses.
type Block struct {
	Number       hexutil.Uint64 `json:"number"`
	Hash         common.Hash    `json:"hash"`
	ParentHash   common.Hash    `json:"parentHash"`
	Timestamp    hexutil.Uint64 `json:"timestamp"`
	Miner        common.Address `json:"miner"`
	BaseFee      *hexutil.Big   `json:"baseFeePerGas"`
	Transactions []Transaction  `json:"transactions"`
	Withdrawals  []Withdrawal   `json:"withdrawals"`
	Uncles       []common.Hash  `json:"uncles"`
	GasUsed      hexutil.Uint64 `json:"gasUsed"`
}

// Header is a block without transactions (eth_getBlockByNumber with false).
type Header struct {
	Number     hexutil.Uint64 `json:"number"`
	Hash       common.Hash    `json:"hash"`
	ParentHash common.Hash    `json:"parentHash"`
	Timestamp  hexutil.Uint64 `json:"timestamp"`
}

// Transaction is a transaction object of a block.
type Transaction struct {
	Hash     common.Hash     `json:"hash"`
	From     common.Address  `json:"from"`
	To       *common.Address `json:"to"`
	Nonce    hexutil.Uint64  `json:"nonce"`
	Value    *hexutil.Big    `json:"value"`
	GasPrice *hexutil.Big    `json:"gasPrice"`
	Input    hexutil.Bytes   `json:"input"`
	Index    hexutil.Uint64  `json:"transactionIndex"`
	Type     hexutil.Uint64  `json:"type"`
}

// Withdrawal is a beacon-chain withdrawal credited in a block (amount in gwei).
type Withdrawal struct {
	Address common.Address `json:"address"`
	Amount  hexutil.Uint64 `json:"amount"`
}

// Receipt is a transaction receipt.
type Receipt struct {
	TxHash            common.Hash     `json:"transactionHash"`
	TxIndex           hexutil.Uint64  `json:"transactionIndex"`
	BlockHash         common.Hash     `json:"blockHash"`
	Status            *hexutil.Uint64 `json:"status"` // absent before Byzantium
	GasUsed           hexutil.Uint64  `json:"gasUsed"`
	EffectiveGasPrice *hexutil.Big    `json:"effectiveGasPrice"`
	ContractAddress   *common.Address `json:"contractAddress"`
	Logs              []Log           `json:"logs"`
}

// Log is an event log of a receipt.
type Log struct {
	Address  common.Address `json:"address"`
	Topics   []common.Hash  `json:"topics"`
	Data     hexutil.Bytes  `json:"data"`
	LogIndex hexutil.Uint   `json:"logIndex"`
	TxHash   common.Hash    `json:"transactionHash"`
	Removed  bool           `json:"removed"`
}

// RawBlock is a block with its receipts, in transaction order, and, when the indexer reads
// call traces, the traces of its transactions in the same order (nil when not read).
type RawBlock struct {
	Block    *Block
	Receipts []Receipt
	Traces   []TxTrace
}

// Succeeded reports whether the receipt's transaction succeeded (pre-Byzantium receipts carry
// no status; their transactions are taken as successful).
func (r *Receipt) Succeeded() bool { return r.Status == nil || *r.Status == 1 }

// CallFrame is one call of a transaction as geth's callTracer reports it
// (debug_traceBlockByHash with {"tracer": "callTracer"}); Calls are the calls it made, in order.
type CallFrame struct {
	Type  string          `json:"type"` // CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE, CREATE2, SELFDESTRUCT
	From  common.Address  `json:"from"`
	To    *common.Address `json:"to"` // absent for a creation that failed
	Value *hexutil.Big    `json:"value"`
	Error string          `json:"error"` // set when the call reverted or failed: its effects and its calls' are undone
	Calls []CallFrame     `json:"calls"`
}

// TxTrace is the trace of one transaction of a block. TxHash is absent in the answers of some
// nodes; the traces are then matched to the block's transactions by position. Error is set,
// without a Result, by nodes that report a transaction's failed trace inline.
type TxTrace struct {
	TxHash common.Hash `json:"txHash"`
	Result CallFrame   `json:"result"`
	Error  string      `json:"error"`
}
