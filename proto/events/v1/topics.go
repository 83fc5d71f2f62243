// Package eventsv1 holds chainintel's event schemas (generated from proto/chainintel/events/v1)
// and the catalogue of topics that carry them.
package eventsv1

import "strings"

// Topic names: <domain>.<event>.v<N>.
const (
	TopicTransactions = "chain.transactions.v1"
	TopicTransfers    = "chain.transfers.v1"
	TopicSwaps        = "chain.swaps.v1"
	TopicBalances     = "chain.balances.v1"
	TopicReorgs       = "chain.reorgs.v1"
	TopicBlocks       = "chain.blocks.v1"
	TopicTokens       = "chain.tokens.v1"
	TopicContracts    = "chain.contracts.v1"
	TopicAttributions = "intel.attributions.v1"
	TopicMarketTokens = "market.tokens.v1"
	TopicPrices       = "market.prices.v1"
	TopicUsageCalls   = "usage.calls.v1"
	TopicUserChanges  = "user.changes.v1"
)

// TopicInfo describes a topic of the catalogue.
type TopicInfo struct {
	Name      string
	Compacted bool   // keyed state: consumers read it whole to build a read model
	Key       string // what the record key is
	Message   string // the protobuf message it carries
}

// Topics is every topic chainintel uses.
var Topics = []TopicInfo{
	{TopicTransactions, false, "<chain>:<txHash>", "Transaction"},
	{TopicTransfers, false, "<chain>:<txHash>", "Transfer"},
	{TopicSwaps, false, "<chain>:<txHash>", "Swap"},
	{TopicBalances, false, "<chain>:<address>", "BalanceObservation"},
	{TopicReorgs, false, "<chain>", "Reorg"},
	{TopicBlocks, false, "<chain>", "Block"},
	{TopicTokens, false, "<chain>:<address>", "Token"},
	{TopicContracts, false, "<chain>:<address>", "Contract"},
	{TopicAttributions, true, "<chainType>:<address>", "Attribution"},
	{TopicMarketTokens, true, "<pricingId>", "MarketToken"},
	{TopicPrices, false, "<pricingId>", "Price"},
	{TopicUsageCalls, false, "<apiKeyId>", "UsageCall"},
	{TopicUserChanges, false, "<userId>", "UserChange"},
}

// IsCompacted reports whether the catalogue says topic is compacted (false for a topic it does
// not list).
func IsCompacted(topic string) bool {
	for _, t := range Topics {
		if t.Name == topic {
			return t.Compacted
		}
	}
	return false
}

// TopicNames are the names of every topic of the catalogue.
func TopicNames() []string {
	names := make([]string, len(Topics))
	for i, t := range Topics {
		names[i] = t.Name
	}
	return names
}

// ChainKey is the record key of chain data: "<chain>:<txHash>".
func ChainKey(chain, txHash string) string { return chain + ":" + txHash }

// AttributionKey is the record key of an attribution: "<chainType>:<address>".
func AttributionKey(chainType, address string) string { return chainType + ":" + address }

// SplitAttributionKey splits "<chainType>:<address>".
func SplitAttributionKey(key string) (chainType, address string, ok bool) {
	return strings.Cut(key, ":")
}
