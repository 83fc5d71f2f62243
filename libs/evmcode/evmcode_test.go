package evmcode

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

func code(t testing.TB, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(h, "0x"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFunctionSighashes(t *testing.T) {
	for _, c := range []struct {
		name string
		code string
		want []string
	}{
		{"none", "0x", nil},
		// DUP1 PUSH4 a9059cbb EQ PUSH2 0040 JUMPI, DUP1 PUSH4 70a08231 EQ ..., and the first again.
		{"dispatcher", "0x8063a9059cbb146100405780637" + "0a082311461004057806363a9059cbb1461004057", []string{"0x70a08231", "0xa9059cbb"}},
		// PUSH4 followed by GT (a binary-search pivot) is not a comparison with the selector.
		{"pivot", "0x806370a0823111610040578063a9059cbb14", []string{"0xa9059cbb"}},
		// PUSH32 data holding 63 xx xx xx xx 14 is data, not code.
		{"push32 data", "0x7f63deadbeef1400000000000000000000000000000000000000000000000000000000", nil},
		// PUSH1 63 is data: the walk goes on at the byte after it, and the PUSH4 there counts.
		{"push1 data", "0x6063" + "6312345678" + "14", []string{"0x12345678"}},
		// PUSH4's four bytes are data even when they hold PUSH4 EQ themselves.
		{"push4 in push4", "0x63" + "63aabbcc" + "dd14", nil},
		// The comparison is the code's last byte.
		{"eq last", "0x63cafebabe14", []string{"0xcafebabe"}},
		// Code ending inside a PUSH4, or right after it with no EQ.
		{"truncated", "0x6312", nil},
		{"no eq", "0x63cafebabe", nil},
		// Upper-case hex never comes out: selectors are lower-case hex.
		{"case", "0x63ABCDEF0114", []string{"0xabcdef01"}},
	} {
		if got := FunctionSighashes(code(t, c.code)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// opcodeStarts marks the bytes of b that are opcodes, walking it as the EVM does: the n bytes
// after PUSHn are its data.
func opcodeStarts(b []byte) []bool {
	out := make([]bool, len(b))
	for i := 0; i < len(b); i++ {
		out[i] = true
		if b[i] >= opPush1 && b[i] <= opPush32 {
			i += int(b[i]-opPush1) + 1
		}
	}
	return out
}

// FuzzFunctionSighashes: for any code, the selectors are sorted, distinct, "0x" and 8 lower-case
// hex digits, and exactly those of the PUSH4 opcodes (not push data) followed by EQ.
func FuzzFunctionSighashes(f *testing.F) {
	f.Add([]byte{0x80, 0x63, 0xa9, 0x05, 0x9c, 0xbb, 0x14})
	f.Add([]byte{0x60, 0x63, 0x63, 0x12, 0x34, 0x56, 0x78, 0x14})
	f.Add([]byte{0x7f, 0x63})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := FunctionSighashes(b)
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("%x: %v not sorted and distinct", b, got)
		}
		var want []string
		starts := opcodeStarts(b)
		for i, op := range starts {
			if op && b[i] == opPush4 && i+5 < len(b) && b[i+5] == opEQ {
				want = append(want, "0x"+hex.EncodeToString(b[i+1:i+5]))
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%x: %v, want %v", b, got, want)
		}
		for _, s := range got {
			if len(s) != 10 || !strings.HasPrefix(s, "0x") || !bytes.Equal([]byte(s), bytes.ToLower([]byte(s))) {
				t.Fatalf("%x: selector %q", b, s)
			}
		}
	})
}

func TestIsDelegation(t *testing.T) {
	target := "4444444444444444444444444444444444444444"
	for _, c := range []struct {
		hex  string
		want bool
	}{
		{"0xef0100" + target, true},
		{"EF0100" + strings.ToUpper(target), true},
		{"0xef0100" + target + "00", false}, // 24 bytes
		{"0xef0100" + target[2:], false},    // 22 bytes
		{"0xef0000" + target, false},
		{"0x6080604052", false},
		{"", false},
	} {
		if got := IsDelegationHex(c.hex); got != c.want {
			t.Errorf("IsDelegationHex(%q) = %v, want %v", c.hex, got, c.want)
		}
		if b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(c.hex, "0x"), "0X")); err == nil {
			if got := IsDelegation(b); got != c.want {
				t.Errorf("IsDelegation(%s) = %v, want %v", c.hex, got, c.want)
			}
		}
	}
}
