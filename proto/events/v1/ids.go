package eventsv1

import "strconv"

// Event ids of chain facts, sent in the event-id header by every producer (the indexer and the
// simulator alike): "<kind>:<chain>:<natural id>:<blockHash>". The same fact published again
// (a redelivery, a block indexed again after a crash) has the same id, so a consumer that
// de-duplicates on it drops the copy; the fact re-included in another block after a reorg has
// another id, since it carries the new block's hash, number and time.

// TransactionEventID is "tx:<chain>:<hash>:<blockHash>".
func TransactionEventID(m *Transaction) string {
	return chainFactID("tx", m.GetChain(), m.GetHash(), m.GetBlockHash())
}

// TransferEventID is "transfer:<chain>:<id>:<blockHash>".
func TransferEventID(m *Transfer) string {
	return chainFactID("transfer", m.GetChain(), m.GetId(), m.GetBlockHash())
}

// SwapEventID is "swap:<chain>:<id>:<blockHash>".
func SwapEventID(m *Swap) string {
	return chainFactID("swap", m.GetChain(), m.GetId(), m.GetBlockHash())
}

// ContractEventID is "contract:<chain>:<address>:<blockHash>", the block being the one the code
// was read at (the creation's, or the first sight's).
func ContractEventID(m *Contract) string {
	return chainFactID("contract", m.GetChain(), m.GetAddress(), m.GetBlockHash())
}

// BlockEventID is "block:<chain>:<number>:<hash>".
func BlockEventID(m *Block) string {
	return chainFactID("block", m.GetChain(), strconv.FormatUint(m.GetNumber(), 10), m.GetHash())
}

// TokenEventID is "token:<chain>:<address>": a token's metadata does not depend on a block.
func TokenEventID(m *Token) string {
	return "token:" + m.GetChain() + ":" + m.GetAddress()
}

func chainFactID(kind, chain, id, blockHash string) string {
	return kind + ":" + chain + ":" + id + ":" + blockHash
}
