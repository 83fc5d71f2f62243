// Package address validates, normalises and detects the chain type of blockchain addresses typed
// by users. Every service that takes an address as input checks it here, so that an address is
// stored and compared in one canonical form whichever service received it.
//
// The accepted formats per chain type are:
//
//   - evm: "0x" followed by 40 hex digits. All-lower and all-upper case digits are accepted as
//     they are; mixed case must match the EIP-55 checksum. The canonical form is lower case.
//   - bitcoin: mainnet base58check P2PKH ("1...", version 0x00) and P2SH ("3...", version 0x05),
//     kept as given; mainnet segwit addresses with human-readable part "bc" (BIP-173/BIP-350):
//     witness version 0 in bech32 with a 20- or 32-byte program, versions 1 to 16 (taproot is
//     version 1) in bech32m with a 2- to 40-byte program. Segwit addresses may be all upper
//     case; the canonical form is lower case.
//   - tron: base58check with version byte 0x41 and a 20-byte payload ("T..."), kept as given; the
//     hex form "41" followed by 40 hex digits is accepted and converted to base58check.
//   - solana: any base58 string that decodes to exactly 32 bytes, kept as given.
//   - dogecoin: base58check P2PKH ("D...", version 0x1e) and P2SH ("9..." or "A...", version
//     0x16), kept as given.
//   - ton: the raw form "<workchain>:<64 hex digits>" with workchain 0 or -1, canonically lower
//     case; and the 48-character user-friendly form in base64 or base64url (36 bytes: a tag of
//     0x11 bounceable or 0x51 non-bounceable, optionally with the 0x80 test-only flag, the
//     workchain byte 0x00 or 0xff, the 32-byte account id and a CRC16-XMODEM checksum), kept as
//     given. The two forms are not converted into each other: the user-friendly form carries
//     flags the raw form lacks.
//
// Base58 encoding is canonical (a decoded value has exactly one encoding), so forms kept as given
// are canonical too.
//
// Every input is first checked for emptiness, surrounding white space and length (at most
// [MaxLen] bytes) before any decoding is attempted.
package address

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/chains"
)

// MaxLen is the longest input, in bytes, that is looked at. No valid address of any supported
// chain type comes close to it.
const MaxLen = 128

// ErrUnknownChain is wrapped by the errors for chain names and chain types this package does
// not know.
var ErrUnknownChain = errors.New("unknown chain")

// Error reports an address that is not valid for a chain type. Its message is meant to be shown
// to the user who typed the address, for example:
//
//	invalid evm address "0x12": want 0x followed by 40 hex digits
type Error struct {
	Type   chains.Type // the chain type the address was checked against
	Addr   string      // the input; shortened and ended with "..." when longer than MaxLen
	Reason string      // what is wrong and what was expected
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid %s address %q: %s", e.Type, e.Addr, e.Reason)
}

// Reasons shared by every chain type.
const (
	reasonEmpty      = "empty"
	reasonWhitespace = "must not start or end with white space"
)

// Normalize validates addr for chain type t and returns its canonical stored form (see the
// package documentation for the formats accepted per type). An invalid address yields an
// *[Error]; an unknown chain type yields an error wrapping [ErrUnknownChain]. When addr is
// already canonical the result is addr itself, not a copy.
func Normalize(t chains.Type, addr string) (string, error) {
	if !known(t) {
		return "", fmt.Errorf("%w type %q", ErrUnknownChain, t)
	}
	if len(addr) > MaxLen {
		return "", &Error{
			Type:   t,
			Addr:   addr[:32] + "...",
			Reason: fmt.Sprintf("too long: %d bytes, at most %d allowed", len(addr), MaxLen),
		}
	}
	if reason := precheck(addr); reason != "" {
		return "", &Error{Type: t, Addr: addr, Reason: reason}
	}
	var sc scan
	out, reason := check(t, addr, true, &sc)
	if reason != "" {
		return "", &Error{Type: t, Addr: addr, Reason: reason}
	}
	return out, nil
}

// Valid reports whether addr is a valid address for chain type t, that is whether Normalize
// would succeed. It builds no canonical form: checking an evm or ton address, or a tron address
// in hex, allocates nothing, and base58 and bech32 checks allocate only what decoding needs.
func Valid(t chains.Type, addr string) bool {
	if !known(t) || len(addr) > MaxLen || precheck(addr) != "" {
		return false
	}
	var sc scan
	_, reason := check(t, addr, false, &sc)
	return reason == ""
}

// DetectTypes returns every chain type for which addr is valid, in [chains.Types] order, or nil
// if there is none. The supported formats barely overlap, so the result usually has at most one
// element; for example a base58 string decoding to 32 bytes is only a solana address.
func DetectTypes(addr string) []chains.Type {
	if len(addr) > MaxLen || precheck(addr) != "" {
		return nil
	}
	var out []chains.Type
	var sc scan // shared, so that base58 is decoded once for all the types using it
	for _, t := range chains.Types {
		if _, reason := check(t, addr, false, &sc); reason == "" {
			out = append(out, t)
		}
	}
	return out
}

// Detect returns the most likely chain type of addr, which is the first element of
// DetectTypes(addr), and false if addr is valid for no chain type.
func Detect(addr string) (chains.Type, bool) {
	if len(addr) > MaxLen || precheck(addr) != "" {
		return "", false
	}
	var sc scan
	for _, t := range chains.Types {
		if _, reason := check(t, addr, false, &sc); reason == "" {
			return t, true
		}
	}
	return "", false
}

// NormalizeForChain is Normalize for the type of the chain with public name chain (see
// [chains.Lookup]). An unknown chain name yields an error wrapping [ErrUnknownChain].
func NormalizeForChain(chain string, addr string) (string, error) {
	c, ok := chains.Lookup(chain)
	if !ok {
		return "", fmt.Errorf("%w %q", ErrUnknownChain, chain)
	}
	return Normalize(c.Type, addr)
}

// Canonical is addr in its canonical form for chain. A value the chain does not accept is kept
// as given, lower-cased when hex, so a consumer stores chain data it cannot check rather than
// dropping it; "" stays "".
func Canonical(chain, addr string) string {
	if addr == "" {
		return ""
	}
	if a, err := NormalizeForChain(chain, addr); err == nil {
		return a
	}
	return CanonicalHash(addr)
}

// CanonicalHash is a block or transaction hash as stored: lower-cased when hex, else as given.
func CanonicalHash(h string) string {
	if strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X") {
		return strings.ToLower(h)
	}
	return h
}

func known(t chains.Type) bool {
	switch t {
	case chains.TypeEVM, chains.TypeBitcoin, chains.TypeTron, chains.TypeSolana, chains.TypeDogecoin, chains.TypeTON:
		return true
	}
	return false
}

// check validates addr, which passed precheck, for the known chain type t. For a valid addr it
// returns an empty reason and, when full is set, the canonical form; for an invalid one, the
// reason. With full unset the canonical form may be left empty and the reason be less specific,
// which spares the allocations; validity is the same either way. sc carries the decoding work
// shared between the types checked for one addr.
func check(t chains.Type, addr string, full bool, sc *scan) (canonical, reason string) {
	switch t {
	case chains.TypeEVM:
		return checkEVM(addr, full)
	case chains.TypeBitcoin:
		return checkBitcoin(addr, full, sc)
	case chains.TypeTron:
		return checkTron(addr, full, sc)
	case chains.TypeSolana:
		return checkSolana(addr, sc)
	case chains.TypeDogecoin:
		return checkDogecoin(addr, sc)
	case chains.TypeTON:
		return checkTON(addr, full)
	}
	panic("address: check of unknown chain type " + string(t))
}

// scan memoises the base58 decoding of one input, which bitcoin, tron, dogecoin and solana
// share.
type scan struct {
	decoded bool
	b58     []byte // nil if the input is not the base58 encoding of 25 to 32 bytes

	checked bool // whether version and res hold the result of base58Check
	version byte
	res     b58Result
}

func (sc *scan) base58(addr string) []byte {
	if !sc.decoded {
		sc.b58 = decodeBase58(addr)
		sc.decoded = true
	}
	return sc.b58
}

// precheck applies the checks common to every chain type, except the length limit, which
// callers apply first.
func precheck(addr string) string {
	if addr == "" {
		return reasonEmpty
	}
	first, _ := utf8.DecodeRuneInString(addr)
	last, _ := utf8.DecodeLastRuneInString(addr)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return reasonWhitespace
	}
	return ""
}
