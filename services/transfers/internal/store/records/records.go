// Package records holds the chain records the transfers store keeps (transfers, transactions,
// swaps), as its writes take them and its reads return them, and the names of the attribution
// groups they are rolled up by.
package records

import (
	"math/big"
	"strings"
	"time"
)

// TransferRow is one transfer as stored.
type TransferRow struct {
	Chain          string
	ID             string
	TxHash         string
	BlockHash      string
	BlockNumber    int64
	BlockTime      time.Time
	TxIndex        int32
	LogIndex       int32
	From, To       string
	Token          string // "" for the native coin
	TokenID        string
	TokenName      string
	TokenSymbol    string
	TokenDecimals  int32
	Amount         *big.Int
	UnitValue      float64
	USD            *float64
	Type           int16
	FromIsContract bool
	ToIsContract   bool
}

// TransactionRow is one transaction as stored.
type TransactionRow struct {
	Chain             string
	Hash              string
	BlockHash         string
	BlockNumber       int64
	BlockTime         time.Time
	TxIndex           int32
	From, To          string
	ContractCreated   string
	Nonce             int64
	Success           bool
	Value             *big.Int
	ValueUSD          *float64
	GasUsed           int64
	GasPrice          *big.Int
	EffectiveGasPrice *big.Int
	Fee               *big.Int
	FeeUSD            *float64
	MethodID          string
}

// SwapRow is one swap as stored.
type SwapRow struct {
	Chain          string
	ID             string
	TxHash         string
	BlockHash      string
	BlockNumber    int64
	BlockTime      time.Time
	LogIndex       int32
	Contract       string
	Sender         string
	Receiver       string
	Token0         string
	Token0ID       string
	Token0Name     string
	Token0Symbol   string
	Token0Decimals int32
	Amount0        *big.Int
	Token1         string
	Token1ID       string
	Token1Name     string
	Token1Symbol   string
	Token1Decimals int32
	Amount1        *big.Int
	USD            *float64
	Valid          bool
	Protocol       string
}

// Attribution groups. Every attributed address belongs to the groups its attribution names:
// "e:<entity>" (the entity, or the deposit service it is a deposit address of), "d:<entity>"
// (the entity's deposit addresses) and "t:<entityType>" — exactly the sets `base`/`from`/`to`
// name with an entity id, `deposit:` and `type:`.

// EntityGroup is the group of entity id's addresses.
func EntityGroup(id string) string { return "e:" + id }

// DepositGroup is the group of entity id's deposit addresses.
func DepositGroup(id string) string { return "d:" + id }

// TypeGroup is the group of the addresses of entities of type t.
func TypeGroup(t string) string { return "t:" + t }

// PairKept reports whether the group pair rollups hold the transfers from group g1 to g2: two
// different entity or type groups, so that from=<entity>&to=type:<t> and the like are sums of
// rollup rows. Pairs with deposit groups are not kept: they nearly doubled the pair rows (every
// deposit address is in its entity's group too, so a sweep is a pair of d:<x> and e:<x>) and a
// tenth of the write rate for a filter rarely asked.
func PairKept(g1, g2 string) bool {
	return g1 != g2 && !strings.HasPrefix(g1, "d:") && !strings.HasPrefix(g2, "d:")
}
