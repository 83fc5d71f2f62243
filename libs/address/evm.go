package address

import (
	"hash"
	"io"
	"strings"
	"sync"

	"golang.org/x/crypto/sha3"
)

const (
	reasonEVMFormat   = "want 0x followed by 40 hex digits"
	reasonEVMChecksum = "mixed-case address fails the EIP-55 checksum (check for a typo, or write it all in lower case)"
)

func checkEVM(addr string, build bool) (string, string) {
	if len(addr) != 42 || addr[0] != '0' || addr[1] != 'x' {
		return "", reasonEVMFormat
	}
	var lower, upper bool
	for i := 2; i < len(addr); i++ {
		switch c := addr[i]; {
		case '0' <= c && c <= '9':
		case 'a' <= c && c <= 'f':
			lower = true
		case 'A' <= c && c <= 'F':
			upper = true
		default:
			return "", reasonEVMFormat
		}
	}
	if lower && upper && !eip55Valid(addr[2:]) {
		return "", reasonEVMChecksum
	}
	if !upper {
		return addr, ""
	}
	if !build {
		return "", ""
	}
	return strings.ToLower(addr), ""
}

// keccakScratch is the reusable state of one EIP-55 check, pooled so that checks allocate
// nothing.
type keccakScratch struct {
	h     hash.Hash
	lower [40]byte
	sum   [32]byte
}

var keccakPool = sync.Pool{New: func() any {
	return &keccakScratch{h: sha3.NewLegacyKeccak256()}
}}

// eip55Valid reports whether the 40 hex digits in digits carry the EIP-55 checksum: a letter is
// upper case exactly when the matching nibble of keccak256(lower-case digits) is 8 or more.
func eip55Valid(digits string) bool {
	k := keccakPool.Get().(*keccakScratch)
	defer keccakPool.Put(k)
	for i := range len(digits) {
		k.lower[i] = digits[i] | 0x20 // lower-cases A-F, leaves 0-9 alone
	}
	k.h.Reset()
	k.h.Write(k.lower[:])
	sum := k.sum[:]
	if r, ok := k.h.(io.Reader); ok {
		r.Read(sum) // squeezes without the copy Sum makes; Reset above restarts absorbing
	} else {
		sum = k.h.Sum(sum[:0])
	}
	for i := range len(digits) {
		c := digits[i]
		if c <= '9' {
			continue
		}
		nibble := sum[i/2]
		if i%2 == 0 {
			nibble >>= 4
		}
		if (c <= 'F') != (nibble&0x0f >= 8) {
			return false
		}
	}
	return true
}
