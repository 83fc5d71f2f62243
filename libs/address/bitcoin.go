package address

import (
	"errors"
	"strings"

	"github.com/btcsuite/btcd/btcutil/bech32"
)

const (
	reasonBitcoinFormat     = "want a base58 P2PKH (1...) or P2SH (3...) address, or a bech32 segwit address (bc1...)"
	reasonBitcoinVersion    = "base58 version byte is not bitcoin mainnet P2PKH (0x00, 1...) or P2SH (0x05, 3...)"
	reasonBase58Checksum    = "base58check checksum does not match (check for a typo)"
	reasonBech32Format      = "malformed bech32 address: want bc1 followed by at most 87 characters of the bech32 alphabet"
	reasonBech32Checksum    = "bech32 checksum does not match (check for a typo)"
	reasonBech32MixedCase   = "bech32 address mixes upper and lower case"
	reasonBech32HRP         = "segwit address is not for bitcoin mainnet: want the bc1 prefix"
	reasonWitnessMissing    = "segwit address has no witness version and program"
	reasonWitnessVersion    = "segwit witness version must be 0 to 16"
	reasonWitnessV0Encoding = "segwit version 0 address must use bech32, not bech32m"
	reasonWitnessEncoding   = "segwit version 1+ address must use bech32m, not bech32"
	reasonWitnessV0Length   = "segwit version 0 program must be 20 or 32 bytes"
	reasonWitnessLength     = "segwit program must be 2 to 40 bytes"
	reasonWitnessPadding    = "segwit program has invalid padding"
)

func checkBitcoin(addr string, full bool, sc *scan) (string, string) {
	if len(addr) >= 3 && strings.EqualFold(addr[:3], "bc1") {
		return checkSegwit(addr, full)
	}
	switch version, res := sc.base58Check(addr); res {
	case b58OK:
		if version != 0x00 && version != 0x05 {
			return "", reasonBitcoinVersion
		}
		return addr, ""
	case b58BadChecksum:
		return "", reasonBase58Checksum
	}
	if full {
		// A well-formed segwit address of another network (tb1..., bcrt1..., ltc1...) deserves
		// a better reason than "not base58".
		if hrp, _, _, err := bech32.DecodeGeneric(addr); err == nil && hrp != "bc" {
			return "", reasonBech32HRP
		}
	}
	return "", reasonBitcoinFormat
}

// checkSegwit checks a segwit address (BIP-173, BIP-350) with human-readable part "bc".
func checkSegwit(addr string, full bool) (string, string) {
	hrp, data, enc, err := bech32.DecodeGeneric(addr)
	if err != nil {
		var mixed bech32.ErrMixedCase
		var checksum bech32.ErrInvalidChecksum
		switch {
		case errors.As(err, &mixed):
			return "", reasonBech32MixedCase
		case errors.As(err, &checksum):
			return "", reasonBech32Checksum
		}
		return "", reasonBech32Format
	}
	if hrp != "bc" {
		return "", reasonBech32HRP
	}
	if len(data) == 0 {
		return "", reasonWitnessMissing
	}
	if data[0] > 16 {
		return "", reasonWitnessVersion
	}
	version := data[0]
	switch {
	case version == 0 && enc != bech32.Version0:
		return "", reasonWitnessV0Encoding
	case version != 0 && enc != bech32.VersionM:
		return "", reasonWitnessEncoding
	}
	program, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil {
		return "", reasonWitnessPadding
	}
	switch {
	case len(program) < 2 || len(program) > 40:
		return "", reasonWitnessLength
	case version == 0 && len(program) != 20 && len(program) != 32:
		return "", reasonWitnessV0Length
	}
	if addr[0] == 'b' { // no mixed case, so all lower case
		return addr, ""
	}
	if !full {
		return "", ""
	}
	return strings.ToLower(addr), ""
}
