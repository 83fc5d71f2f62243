package address

import (
	"crypto/sha256"

	"github.com/mr-tron/base58"
)

// base58Digit marks the bytes of the bitcoin base58 alphabet.
var base58Digit = func() (d [256]bool) {
	for _, c := range "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz" {
		d[c] = true
	}
	return d
}()

// base58Len is the range of lengths of the base58 encodings of n bytes: at least one digit per
// byte (each leading zero byte is one '1'), at most ceil(n * log(256)/log(58)).
func base58Len(n int) (lo, hi int) {
	return n, (n*1365658 + 999999) / 1000000
}

// decodeBase58 decodes s if it is the base58 encoding of 25 bytes (base58check addresses) to 32
// bytes (solana), and returns nil otherwise. It checks length and alphabet before calling the
// decoder, so rejecting most inputs costs no allocation.
func decodeBase58(s string) []byte {
	lo, _ := base58Len(25)
	_, hi := base58Len(32)
	if len(s) < lo || len(s) > hi {
		return nil
	}
	for i := range len(s) {
		if !base58Digit[s[i]] {
			return nil
		}
	}
	b, err := base58.Decode(s)
	if err != nil || len(b) < 25 || len(b) > 32 {
		return nil
	}
	return b
}

// base58check outcomes.
type b58Result int

const (
	b58OK          b58Result = iota
	b58BadFormat             // not base58, or not 25 bytes
	b58BadChecksum           // the four trailing bytes are not the checksum
)

// base58Check checks that addr is made of a version byte, a 20-byte hash and the first four
// bytes of the double SHA-256 of both, base58-encoded, and returns its version byte.
func (sc *scan) base58Check(addr string) (version byte, res b58Result) {
	if !sc.checked {
		sc.version, sc.res = decodeBase58Check(sc.base58(addr))
		sc.checked = true
	}
	return sc.version, sc.res
}

func decodeBase58Check(b []byte) (version byte, res b58Result) {
	if len(b) != 25 {
		return 0, b58BadFormat
	}
	if sum := base58Checksum(b[:21]); [4]byte(b[21:]) != sum {
		return 0, b58BadChecksum
	}
	return b[0], b58OK
}

func base58Checksum(b []byte) [4]byte {
	h := sha256.Sum256(b)
	h = sha256.Sum256(h[:])
	return [4]byte(h[:4])
}

// encodeBase58Check is the inverse of decodeBase58Check.
func encodeBase58Check(version byte, hash *[20]byte) string {
	var b [25]byte
	b[0] = version
	copy(b[1:21], hash[:])
	sum := base58Checksum(b[:21])
	copy(b[21:], sum[:])
	return base58.Encode(b[:])
}
