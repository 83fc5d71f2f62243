package eventsv1

import "testing"

func TestChainFactEventIDs(t *testing.T) {
	const blk, other = "0xb1", "0xb2"
	for _, c := range []struct {
		got, moved, want string
	}{
		{TransactionEventID(&Transaction{Chain: "ethereum", Hash: "0xt", BlockHash: blk}),
			TransactionEventID(&Transaction{Chain: "ethereum", Hash: "0xt", BlockHash: other}), "tx:ethereum:0xt:0xb1"},
		{TransferEventID(&Transfer{Chain: "ethereum", Id: "0xt_3", BlockHash: blk}),
			TransferEventID(&Transfer{Chain: "ethereum", Id: "0xt_3", BlockHash: other}), "transfer:ethereum:0xt_3:0xb1"},
		{SwapEventID(&Swap{Chain: "base", Id: "0xt_4", BlockHash: blk}),
			SwapEventID(&Swap{Chain: "base", Id: "0xt_4", BlockHash: other}), "swap:base:0xt_4:0xb1"},
		{ContractEventID(&Contract{Chain: "polygon", Address: "0xc", BlockHash: blk, Bytecode: "0x00"}),
			ContractEventID(&Contract{Chain: "polygon", Address: "0xc", BlockHash: other, Bytecode: "0x00"}), "contract:polygon:0xc:0xb1"},
	} {
		if c.got != c.want {
			t.Errorf("id %q; want %q", c.got, c.want)
		}
		if c.moved == c.got {
			t.Errorf("%q: the fact re-included in another block keeps its id", c.got)
		}
	}
	if a, b := TokenEventID(&Token{Chain: "bsc", Address: "0xk", DiscoveredBlock: 1}), TokenEventID(&Token{Chain: "bsc", Address: "0xk", DiscoveredBlock: 2}); a != "token:bsc:0xk" || a != b {
		t.Errorf("token ids %q, %q; want token:bsc:0xk for both", a, b)
	}
}
