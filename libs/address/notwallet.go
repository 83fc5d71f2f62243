package address

import "github.com/chainintel/chainintel/libs/chains"

// NotWalletAddress is an address no one holds a key to that transfers name all the time, in
// its canonical form (Normalize).
type NotWalletAddress struct {
	Type    chains.Type
	Address string
	Why     string
}

// notWallets are the zero addresses, the other side of every token mint and burn, and the
// customary burn addresses. A claim on one would attribute every mint or burn to its entity (a
// GraphSense pack tags the EVM zero address as MakerDAO's faucet), and treating one as a wallet
// would join every mint recipient into one owner, so intelligence's importers and heuristics
// leave them out.
var notWallets = []NotWalletAddress{
	{chains.TypeEVM, "0x0000000000000000000000000000000000000000", "the zero address (the other side of every mint and burn)"},
	{chains.TypeEVM, "0x000000000000000000000000000000000000dead", "the burn address 0x…dEaD"},
	// Base58check of 41 followed by 20 zero bytes: TRC-20 mints come from it and burns go to it.
	{chains.TypeTron, "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb", "the zero address (the other side of every mint and burn)"},
}

// NotWallet says why addr (canonical, of chain type t) is no one's wallet, or false when it
// may be one.
func NotWallet(t chains.Type, addr string) (string, bool) {
	for _, n := range notWallets {
		if n.Type == t && n.Address == addr {
			return n.Why, true
		}
	}
	return "", false
}

// NotWallets lists every address NotWallet reports.
func NotWallets() []NotWalletAddress { return append([]NotWalletAddress(nil), notWallets...) }
