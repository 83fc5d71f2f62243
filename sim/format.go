package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"

	"github.com/chainintel/chainintel/libs/chains"
)

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58 encodes b (Bitcoin alphabet, leading zero bytes as '1').
func base58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// Enough room: log(256)/log(58) < 1.37.
	buf := make([]byte, len(b)*138/100+1)
	high := len(buf) - 1
	for _, c := range b[zeros:] {
		carry := int(c)
		j := len(buf) - 1
		for ; j > high || carry != 0; j-- {
			carry += 256 * int(buf[j])
			buf[j] = byte(carry % 58)
			carry /= 58
		}
		high = j
	}
	i := 0
	for i < len(buf) && buf[i] == 0 {
		i++
	}
	out := make([]byte, 0, zeros+len(buf)-i)
	for range zeros {
		out = append(out, '1')
	}
	for ; i < len(buf); i++ {
		out = append(out, base58Alphabet[buf[i]])
	}
	return string(out)
}

// base58Check encodes version||payload with a double-SHA-256 checksum.
func base58Check(version byte, payload []byte) string {
	b := make([]byte, 0, 1+len(payload)+4)
	b = append(b, version)
	b = append(b, payload...)
	h1 := sha256.Sum256(b)
	h2 := sha256.Sum256(h1[:])
	return base58(append(b, h2[:4]...))
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// newAddress returns a random address in the canonical form libs/address accepts for t.
func newAddress(r *rand.Rand, t chains.Type) string {
	switch t {
	case chains.TypeEVM:
		return "0x" + hex.EncodeToString(randBytes(r, 20))
	case chains.TypeSolana:
		for {
			b := randBytes(r, 32)
			if b[0] != 0 { // a leading zero byte shortens the encoding below 32 bytes' usual length
				return base58(b)
			}
		}
	case chains.TypeTron:
		return base58Check(0x41, randBytes(r, 20))
	case chains.TypeBitcoin:
		return base58Check(0x00, randBytes(r, 20))
	case chains.TypeDogecoin:
		return base58Check(0x1e, randBytes(r, 20))
	case chains.TypeTON:
		return "0:" + hex.EncodeToString(randBytes(r, 32))
	}
	return "0x" + hex.EncodeToString(randBytes(r, 20))
}

// addressFrom derives a stable address for t from a name, so token contracts keep their address
// whatever the seed.
func addressFrom(t chains.Type, name string) string {
	h := sha256.Sum256([]byte("chainintel-sim:" + name))
	seed := [32]byte(h)
	return newAddress(rand.New(rand.NewChaCha8(seed)), t)
}

// txHash returns a random transaction hash in the chain's usual form.
func txHash(r *rand.Rand, t chains.Type, buf []byte) string {
	switch t {
	case chains.TypeEVM:
		fill(r, buf[:32])
		dst := make([]byte, 66)
		dst[0], dst[1] = '0', 'x'
		hex.Encode(dst[2:], buf[:32])
		return string(dst)
	case chains.TypeSolana:
		fill(r, buf[:64])
		buf[0] |= 1
		return base58(buf[:64])
	default:
		fill(r, buf[:32])
		return hex.EncodeToString(buf[:32])
	}
}

func fill(r *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

// blockHash is a deterministic block hash for a chain and height.
func blockHash(seed int64, t chains.Type, chain string, number uint64) string {
	var b [64]byte
	n := copy(b[:], chain)
	for i := 0; i < 8; i++ {
		b[n+i] = byte(number >> (8 * i))
		b[n+8+i] = byte(uint64(seed) >> (8 * i))
	}
	h := sha256.Sum256(b[:n+16])
	if t == chains.TypeEVM {
		return "0x" + hex.EncodeToString(h[:])
	}
	if t == chains.TypeSolana {
		return base58(h[:])
	}
	return hex.EncodeToString(h[:])
}
