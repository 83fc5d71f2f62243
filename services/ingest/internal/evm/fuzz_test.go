package evm

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

var signedInt = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// FuzzDecodeLog feeds arbitrary logs (as a node could answer them) through Decode: it never
// panics, and what it emits is exact and well-formed.
func FuzzDecodeLog(f *testing.F) {
	word := func(v int64) []byte { return common.LeftPadBytes(big.NewInt(v).Bytes(), 32) }
	neg := make([]byte, 32)
	for i := range neg {
		neg[i] = 0xff
	}
	f.Add(TopicTransfer[:], 3, append([]byte{}, word(1000)...))
	f.Add(TopicTransfer[:], 4, []byte{})
	f.Add(TopicSwapV2[:], 3, append(append(append(word(5), word(0)...), word(0)...), word(7)...))
	f.Add(TopicSwapV3[:], 3, append(append(append(append(neg, word(9)...), word(1)...), word(1)...), word(1)...))
	f.Add(TopicSwapV3[:], 3, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, topic0 []byte, ntopics int, data []byte) {
		if ntopics < 0 || ntopics > 5 {
			return
		}
		topics := make([]common.Hash, ntopics)
		if ntopics > 0 {
			topics[0] = common.BytesToHash(topic0)
		}
		for i := 1; i < ntopics; i++ {
			topics[i] = common.BytesToHash(append([]byte{byte(i)}, data...))
		}
		tx := common.HexToHash("0x01")
		rb := &RawBlock{
			Block:    &Block{Number: 1, Hash: common.HexToHash("0xb1"), Transactions: []Transaction{{Hash: tx, Value: (*hexutil.Big)(big.NewInt(0))}}},
			Receipts: []Receipt{{TxHash: tx, Logs: []Log{{Address: common.HexToAddress("0xaa"), Topics: topics, Data: data}}}},
		}
		d, err := Decode("ethereum", rb)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range d.Transfers {
			if !signedInt.MatchString(tr.Amount) || strings.HasPrefix(tr.Amount, "-") {
				t.Fatalf("transfer amount %q", tr.Amount)
			}
		}
		for _, s := range d.Swaps {
			if !signedInt.MatchString(s.Amount0) || !signedInt.MatchString(s.Amount1) {
				t.Fatalf("swap amounts %q %q", s.Amount0, s.Amount1)
			}
			if s.Valid && strings.HasPrefix(s.Amount0, "-") == strings.HasPrefix(s.Amount1, "-") {
				t.Fatalf("valid swap with same-signed amounts %q %q", s.Amount0, s.Amount1)
			}
		}
	})
}

// FuzzParseBlock feeds arbitrary JSON to the block and receipt parsers: errors, never panics.
func FuzzParseBlock(f *testing.F) {
	f.Add([]byte(`{"number":"0x1","hash":"0x` + strings.Repeat("ab", 32) + `","transactions":[{"hash":"0x` + strings.Repeat("01", 32) + `","value":"0x10","input":"0xa9059cbb"}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"transactionHash":"0x01","status":"0x1","logs":[{"topics":["0x01"],"data":"0x"}]}]`))
	f.Add([]byte(`{"number":"0xzz"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if b, err := ParseBlock(json.RawMessage(raw)); err == nil && b != nil {
			rs := make([]Receipt, len(b.Transactions))
			for i := range rs {
				rs[i].TxHash = b.Transactions[i].Hash
			}
			_, _ = Decode("ethereum", &RawBlock{Block: b, Receipts: rs})
		}
		_, _ = ParseReceipts(json.RawMessage(raw))
	})
}

// FuzzTokenText feeds arbitrary eth_call answers to the name/symbol/decimals/address decoders.
func FuzzTokenText(f *testing.F) {
	f.Add(hexutil.MustDecode("0x0000000000000000000000000000000000000000000000000000000000000020" +
		"0000000000000000000000000000000000000000000000000000000000000004" + "5553444300000000000000000000000000000000000000000000000000000000"))
	f.Add(common.RightPadBytes([]byte("MKR"), 32))
	f.Add([]byte{})
	f.Add(common.LeftPadBytes([]byte{18}, 32))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _ := decodeText(CallResult{Data: data})
		if !utf8.ValidString(s) || len(s) > 128 {
			t.Fatalf("text %q", s)
		}
		if d, ok := decodeDecimals(CallResult{Data: data}); ok && (d < 0 || d > 255) {
			t.Fatalf("decimals %d", d)
		}
		if a, ok := decodeAddress(CallResult{Data: data}); ok && len(a) != 42 {
			t.Fatalf("address %q", a)
		}
	})
}

func TestDecodeText(t *testing.T) {
	for _, c := range []struct {
		hex      string
		want     string
		standard bool
	}{
		{"0x0000000000000000000000000000000000000000000000000000000000000020" +
			"0000000000000000000000000000000000000000000000000000000000000004" + "5553444300000000000000000000000000000000000000000000000000000000", "USDC", true},
		{"0x4d616b6572000000000000000000000000000000000000000000000000000000", "Maker", false}, // bytes32 name (MKR)
		{"0x", "", false},
	} {
		got, ok := decodeText(CallResult{Data: hexutil.MustDecode(c.hex)})
		if got != c.want || ok != c.standard {
			t.Errorf("%s: %q %v, want %q %v", c.hex[:10], got, ok, c.want, c.standard)
		}
	}
	if _, ok := decodeText(CallResult{Err: errMalformed}); ok {
		t.Error("a reverted call decoded")
	}
	if d, ok := decodeDecimals(CallResult{Data: common.LeftPadBytes([]byte{6}, 32)}); !ok || d != 6 {
		t.Errorf("decimals %d %v", d, ok)
	}
	if _, ok := decodeDecimals(CallResult{Data: common.LeftPadBytes([]byte{1, 0}, 32)}); ok {
		t.Error("decimals 256 accepted")
	}
}

func TestInt256(t *testing.T) {
	minus := make([]byte, 32)
	for i := range minus {
		minus[i] = 0xff
	}
	if s, sign := int256Dec(minus); s != "-1" || sign != -1 {
		t.Fatalf("%s %d", s, sign)
	}
	min256 := make([]byte, 32)
	min256[0] = 0x80
	want := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 255)).String()
	if s, _ := int256Dec(min256); s != want {
		t.Fatalf("%s, want %s", s, want)
	}
}
