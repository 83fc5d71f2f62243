package address

import (
	"bytes"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/mr-tron/base58"
)

const (
	evm      = chains.TypeEVM
	bitcoin  = chains.TypeBitcoin
	tron     = chains.TypeTron
	solana   = chains.TypeSolana
	dogecoin = chains.TypeDogecoin
	ton      = chains.TypeTON
)

type normalizeCase struct {
	name   string
	typ    chains.Type
	in     string
	want   string // canonical form; "" when in is invalid
	reason string // for invalid inputs, the expected Error.Reason
}

var normalizeCases = []normalizeCase{
	// EVM.
	{"binance 14 checksummed", evm, "0x28C6c06298d514Db089934071355E5743bf21d60", "0x28c6c06298d514db089934071355e5743bf21d60", ""},
	{"binance 14 lower", evm, "0x28c6c06298d514db089934071355e5743bf21d60", "0x28c6c06298d514db089934071355e5743bf21d60", ""},
	{"binance 14 upper", evm, "0x28C6C06298D514DB089934071355E5743BF21D60", "0x28c6c06298d514db089934071355e5743bf21d60", ""},
	{"usdt contract", evm, "0xdAC17F958D2ee523a2206206994597C13D831ec7", "0xdac17f958d2ee523a2206206994597c13d831ec7", ""},
	{"eip-55 vector 1", evm, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", ""},
	{"eip-55 vector 2", evm, "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359", ""},
	{"eip-55 vector 3", evm, "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xdbf03b407c01e7cd3cbea99509d93f8dddc8c6fb", ""},
	{"eip-55 vector 4", evm, "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb", "0xd1220a0cf47c7b9be7a2e6ba89f429762e7b9adb", ""},
	{"zero address", evm, "0x0000000000000000000000000000000000000000", "0x0000000000000000000000000000000000000000", ""},
	{"evm too short", evm, "0x12", "", reasonEVMFormat},
	{"evm 39 digits", evm, "0x28C6c06298d514Db089934071355E5743bf21d6", "", reasonEVMFormat},
	{"evm 41 digits", evm, "0x28C6c06298d514Db089934071355E5743bf21d600", "", reasonEVMFormat},
	{"evm no prefix", evm, "28c6c06298d514db089934071355e5743bf21d60ab", "", reasonEVMFormat},
	{"evm upper prefix", evm, "0X28c6c06298d514db089934071355e5743bf21d60", "", reasonEVMFormat},
	{"evm non-hex", evm, "0x28c6c06298d514db089934071355e5743bf21d6g", "", reasonEVMFormat},
	{"evm bad eip-55", evm, "0x28C6c06298d514Db089934071355E5743bf21D60", "", reasonEVMChecksum},
	{"evm bad eip-55 usdt", evm, "0xdAC17F958D2ee523a2206206994597C13D831eC7", "", reasonEVMChecksum},
	{"evm leading space", evm, " 0x28c6c06298d514db089934071355e5743bf21d60", "", reasonWhitespace},
	{"evm trailing newline", evm, "0x28c6c06298d514db089934071355e5743bf21d60\n", "", reasonWhitespace},
	{"evm trailing nbsp", evm, "0x28c6c06298d514db089934071355e5743bf21d60\u00a0", "", reasonWhitespace},
	{"evm empty", evm, "", "", reasonEmpty},
	{"evm tron hex", evm, "41a614f803b6fd780986a42c78ec9c7f77e6ded13c", "", reasonEVMFormat},

	// Bitcoin.
	{"genesis p2pkh", bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", ""},
	{"p2pkh", bitcoin, "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", ""},
	{"p2sh", bitcoin, "3LRW7jeCvQCRdPF8S3yUCfRAx4eqXFmdcr", "3LRW7jeCvQCRdPF8S3yUCfRAx4eqXFmdcr", ""},
	{"p2sh bip-13 era", bitcoin, "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", ""},
	{"p2wpkh", bitcoin, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", ""},
	{"p2wpkh upper", bitcoin, "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", ""},
	{"p2wsh", bitcoin, "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3", ""},
	{"taproot bip-86", bitcoin, "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297", "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297", ""},
	{"taproot bip-350", bitcoin, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", ""},
	{"segwit v16", bitcoin, "BC1SW50QGDZ25J", "bc1sw50qgdz25j", ""},
	{"segwit v2", bitcoin, "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", ""},
	{"p2pkh bad checksum", bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", "", reasonBase58Checksum},
	{"corrupted genesis address", bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SKdwdD2Gz4X", "", reasonBase58Checksum},
	{"p2pkh truncated", bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN", "", reasonBase58Checksum},
	{"p2pkh 20 characters", bitcoin, "1A1zP1eP5QGefi2DMPTf", "", reasonBitcoinFormat},
	{"p2pkh non-base58", bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0", "", reasonBitcoinFormat},
	{"testnet p2pkh", bitcoin, "mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r", "", reasonBitcoinVersion},
	{"testnet p2sh", bitcoin, "2NByiBUaEXrhmqAsg7BbLpcQSAQs1EDwt5w", "", reasonBitcoinVersion},
	{"tron as bitcoin", bitcoin, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "", reasonBitcoinVersion},
	{"dogecoin as bitcoin", bitcoin, "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", "", reasonBitcoinVersion},
	{"testnet segwit", bitcoin, "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "", reasonBech32HRP},
	{"bip-350 wrong hrp", bitcoin, "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut", "", reasonBech32HRP},
	{"bech32 mixed case", bitcoin, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mDq", "", reasonBech32MixedCase},
	{"bech32 bad checksum", bitcoin, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdp", "", reasonBech32Checksum},
	{"v1 in bech32", bitcoin, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", "", reasonWitnessEncoding},
	{"v16 in bech32", bitcoin, "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL", "", reasonWitnessEncoding},
	{"v0 in bech32m", bitcoin, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", "", reasonWitnessV0Encoding},
	{"witness version 17", bitcoin, "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", "", reasonWitnessVersion},
	{"program 1 byte", bitcoin, "bc1pw5dgrnzv", "", reasonWitnessLength},
	{"program 41 bytes", bitcoin, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", "", reasonWitnessLength},
	{"v0 program 16 bytes", bitcoin, "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", "", reasonWitnessV0Length},
	{"padding over 4 bits", bitcoin, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", "", reasonWitnessPadding},
	{"testnet non-zero padding", bitcoin, "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j", "", reasonBech32HRP},
	{"bech32 bad character", bitcoin, "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", "", reasonBech32Format},
	{"bech32 empty data", bitcoin, "bc1gmk9yu", "", reasonWitnessMissing},
	{"evm as bitcoin", bitcoin, "0x28c6c06298d514db089934071355e5743bf21d60", "", reasonBitcoinFormat},

	// Tron.
	{"usdt trc20", tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", ""},
	{"usdt trc20 hex", tron, "41a614f803b6fd780986a42c78ec9c7f77e6ded13c", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", ""},
	{"usdt trc20 hex upper", tron, "41A614F803B6FD780986A42C78EC9C7F77E6DED13C", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", ""},
	{"tron bad checksum", tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", "", reasonBase58Checksum},
	{"tron wrong version", tron, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "", reasonTronVersion},
	{"tron hex short", tron, "41a614f803b6fd780986a42c78ec9c7f77e6ded13", "", reasonTronFormat},
	{"tron hex non-hex", tron, "41a614f803b6fd780986a42c78ec9c7f77e6ded13g", "", reasonTronFormat},
	{"tron 0x hex", tron, "0xa614f803b6fd780986a42c78ec9c7f77e6ded13c", "", reasonTronFormat},
	{"tron solana", tron, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", "", reasonTronFormat},

	// Solana.
	{"solana wallet", solana, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", ""},
	{"system program", solana, "11111111111111111111111111111111", "11111111111111111111111111111111", ""},
	{"token program", solana, "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", ""},
	{"usdc mint", solana, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", ""},
	{"31 zero bytes", solana, "1111111111111111111111111111111", "", reasonSolanaFormat},
	{"33 zero bytes", solana, "111111111111111111111111111111111", "", reasonSolanaFormat},
	{"solana truncated", solana, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4", "", reasonSolanaFormat},
	{"solana non-base58", solana, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB40", "", reasonSolanaFormat},
	{"solana over 32 bytes", solana, strings.Repeat("z", 44), "", reasonSolanaFormat},
	{"bitcoin as solana", solana, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "", reasonSolanaFormat},

	// Dogecoin.
	{"dogecoin p2pkh", dogecoin, "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", ""},
	{"dogecoin p2pkh 2", dogecoin, "DJXvHTVFXxgKPxwCC1MfmHxNySoApA87Pc", "DJXvHTVFXxgKPxwCC1MfmHxNySoApA87Pc", ""},
	{"dogecoin p2sh A", dogecoin, "ADNbM5fBujCRBW1vqezNeAWmnsLp19ki3n", "ADNbM5fBujCRBW1vqezNeAWmnsLp19ki3n", ""},
	{"dogecoin p2sh 9", dogecoin, "9vtqCtAkxNM516GXbiLpMePpizZEisT8pN", "9vtqCtAkxNM516GXbiLpMePpizZEisT8pN", ""},
	{"dogecoin bad checksum", dogecoin, "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7M", "", reasonBase58Checksum},
	{"dogecoin wrong version", dogecoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "", reasonDogecoinVersion},
	{"dogecoin truncated", dogecoin, "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7", "", reasonDogecoinFormat},

	// TON.
	{"ton foundation bounceable", ton, "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", ""},
	{"ton foundation non-bounceable", ton, "UQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqEBI", "UQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqEBI", ""},
	{"ton foundation test-only", ton, "kQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqKYH", "kQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqKYH", ""},
	{"ton foundation raw", ton, "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8", "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8", ""},
	{"ton foundation raw upper", ton, "0:83DFD552E63729B472FCBCC8C45EBCC6691702558B68EC7527E1BA403A0F31A8", "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8", ""},
	{"usdt jetton base64url", ton, "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs", "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs", ""},
	{"usdt jetton base64", ton, "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id/sDs", "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id/sDs", ""},
	{"elector masterchain", ton, "Ef8zMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM0vF", "Ef8zMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM0vF", ""},
	{"elector raw", ton, "-1:3333333333333333333333333333333333333333333333333333333333333333", "-1:3333333333333333333333333333333333333333333333333333333333333333", ""},
	{"ton bad crc flags", ton, "UQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", "", reasonTONChecksum},
	{"ton bad crc", ton, "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2M", "", reasonTONChecksum},
	{"ton unknown tag", ton, "AACD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", "", reasonTONTag},
	{"ton workchain 1", ton, "EQGD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", "", reasonTONWorkchain},
	{"ton mixed alphabets", ton, "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sD+", "", reasonTONBase64},
	{"ton bad base64", ton, "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xq.2N", "", reasonTONBase64},
	{"ton 47 chars", ton, "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2", "", reasonTONFormat},
	{"ton raw workchain 1", ton, "1:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8", "", reasonTONWorkchain},
	{"ton raw workchain -0", ton, "-0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8", "", reasonTONWorkchain},
	{"ton raw 63 digits", ton, "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a", "", reasonTONRawHex},
	{"ton raw non-hex", ton, "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31ag", "", reasonTONRawHex},
	{"ton raw two colons", ton, "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31:8", "", reasonTONRawHex},
	{"ton raw 0x", ton, "0:0x83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31", "", reasonTONRawHex},
	{"evm as ton", ton, "0x28c6c06298d514db089934071355e5743bf21d60", "", reasonTONFormat},
}

func TestNormalize(t *testing.T) {
	for _, tc := range normalizeCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Normalize(tc.typ, tc.in)
			if valid := Valid(tc.typ, tc.in); valid != (tc.want != "") {
				t.Errorf("Valid(%s, %q) = %v, want %v", tc.typ, tc.in, valid, tc.want != "")
			}
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("Normalize(%s, %q) = %q, %v; want %q", tc.typ, tc.in, got, err, tc.want)
				}
				return
			}
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("Normalize(%s, %q) = %q, %v; want an *Error", tc.typ, tc.in, got, err)
			}
			if got != "" || ae.Type != tc.typ || ae.Addr != tc.in || ae.Reason != tc.reason {
				t.Errorf("Normalize(%s, %q) = %q, %+v; want reason %q", tc.typ, tc.in, got, *ae, tc.reason)
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		typ  chains.Type
		in   string
		want string
	}{
		{evm, "0x12", `invalid evm address "0x12": want 0x followed by 40 hex digits`},
		{bitcoin, "", `invalid bitcoin address "": empty`},
		{solana, " x", `invalid solana address " x": must not start or end with white space`},
		{ton, strings.Repeat("a", 200), `invalid ton address "` + strings.Repeat("a", 32) + `...": too long: 200 bytes, at most 128 allowed`},
		{tron, "T\x00", `invalid tron address "T\x00": ` + reasonTronFormat},
	} {
		_, err := Normalize(tc.typ, tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Normalize(%s, %q) error = %v, want %s", tc.typ, tc.in, err, tc.want)
		}
	}
}

func TestLengthLimit(t *testing.T) {
	// A base58 string of 129 ones would decode to 129 zero bytes; the limit is checked first.
	long := strings.Repeat("1", MaxLen+1)
	for _, typ := range chains.Types {
		if _, err := Normalize(typ, long); err == nil {
			t.Errorf("Normalize(%s, %d bytes) succeeded", typ, len(long))
		}
		if Valid(typ, long) {
			t.Errorf("Valid(%s, %d bytes) = true", typ, len(long))
		}
	}
	if got := DetectTypes(long); got != nil {
		t.Errorf("DetectTypes(%d bytes) = %v", len(long), got)
	}
}

func TestUnknownType(t *testing.T) {
	if _, err := Normalize("cosmos", "cosmos1xyz"); !errors.Is(err, ErrUnknownChain) || err.Error() != `unknown chain type "cosmos"` {
		t.Errorf("Normalize(cosmos) error = %v", err)
	}
	if Valid("cosmos", "cosmos1xyz") || Valid("", "0x28c6c06298d514db089934071355e5743bf21d60") {
		t.Error("Valid accepted an unknown chain type")
	}
}

func TestNormalizeForChain(t *testing.T) {
	for _, tc := range []struct {
		chain, in, want string
	}{
		{"ethereum", "0x28C6c06298d514Db089934071355E5743bf21d60", "0x28c6c06298d514db089934071355e5743bf21d60"},
		{"base", "0xdAC17F958D2ee523a2206206994597C13D831ec7", "0xdac17f958d2ee523a2206206994597c13d831ec7"},
		{"bitcoin", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"},
		{"tron", "41a614f803b6fd780986a42c78ec9c7f77e6ded13c", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},
		{"solana", "11111111111111111111111111111111", "11111111111111111111111111111111"},
		{"dogecoin", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"},
		{"ton", "-1:3333333333333333333333333333333333333333333333333333333333333333", "-1:3333333333333333333333333333333333333333333333333333333333333333"},
	} {
		got, err := NormalizeForChain(tc.chain, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeForChain(%q, %q) = %q, %v; want %q", tc.chain, tc.in, got, err, tc.want)
		}
	}
	_, err := NormalizeForChain("polygon", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	var ae *Error
	if !errors.As(err, &ae) || ae.Type != evm {
		t.Errorf("NormalizeForChain(polygon, tron address) error = %v, want an evm *Error", err)
	}
	if _, err := NormalizeForChain("ethereum-classic", "0x28c6c06298d514db089934071355e5743bf21d60"); !errors.Is(err, ErrUnknownChain) ||
		err.Error() != `unknown chain "ethereum-classic"` {
		t.Errorf("NormalizeForChain(unknown chain) error = %v", err)
	}
}

func TestDetectTypes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []chains.Type
	}{
		{"0x28C6c06298d514Db089934071355E5743bf21d60", []chains.Type{evm}},
		{"0x28C6c06298d514Db089934071355E5743bf21D60", nil}, // bad EIP-55 checksum
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", []chains.Type{bitcoin}},
		{"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", []chains.Type{bitcoin}},
		{"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", []chains.Type{bitcoin}},
		{"bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297", []chains.Type{bitcoin}},
		{"tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", nil},
		{"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", []chains.Type{tron}},
		{"41a614f803b6fd780986a42c78ec9c7f77e6ded13c", []chains.Type{tron}},
		{"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", []chains.Type{solana}},
		{"11111111111111111111111111111111", []chains.Type{solana}},
		{"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", []chains.Type{solana}},
		{"DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", []chains.Type{dogecoin}},
		{"ADNbM5fBujCRBW1vqezNeAWmnsLp19ki3n", []chains.Type{dogecoin}},
		{"9vtqCtAkxNM516GXbiLpMePpizZEisT8pN", []chains.Type{dogecoin}},
		{"EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", []chains.Type{ton}},
		{"UQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqEBI", []chains.Type{ton}},
		{"0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8", []chains.Type{ton}},
		{"UQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", nil}, // bad CRC
		{"", nil},
		{" 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", nil},
		{"hello", nil},
	} {
		got := DetectTypes(tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("DetectTypes(%q) = %v, want %v", tc.in, got, tc.want)
		}
		typ, ok := Detect(tc.in)
		if wantOK := len(tc.want) > 0; ok != wantOK || (ok && typ != tc.want[0]) {
			t.Errorf("Detect(%q) = %q, %v; want %v", tc.in, typ, ok, tc.want)
		}
	}
}

// Every valid address in the table is detected as its own type, and only as that type.
func TestDetectTable(t *testing.T) {
	for _, tc := range normalizeCases {
		if tc.want == "" {
			continue
		}
		if got := DetectTypes(tc.in); !slices.Equal(got, []chains.Type{tc.typ}) {
			t.Errorf("%s: DetectTypes(%q) = %v, want [%s]", tc.name, tc.in, got, tc.typ)
		}
	}
}

// The length bounds decodeBase58 checks before decoding must admit every encoding of n bytes.
func TestBase58Len(t *testing.T) {
	for _, n := range []int{25, 32} {
		lo, hi := base58Len(n)
		check := func(b []byte) {
			if s := base58.Encode(b); len(s) < lo || len(s) > hi {
				t.Fatalf("base58 of %x has %d characters, outside [%d, %d]", b, len(s), lo, hi)
			}
		}
		check(make([]byte, n))
		check(bytes.Repeat([]byte{0xff}, n))
		for zeros := 0; zeros <= n; zeros++ {
			for range 50 {
				b := make([]byte, n)
				rand.Read(b[zeros:])
				check(b)
			}
		}
	}
}

// BIP-350's non-zero padding vector is for testnet; build the mainnet equivalent: a taproot
// program whose 5-bit groups end in padding bits that are not zero, with a valid checksum.
func TestSegwitNonZeroPadding(t *testing.T) {
	_, data, _, err := bech32.DecodeGeneric("bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297")
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] |= 1 // 32 bytes fill 52 groups less 4 bits: the last group has 4 pad bits
	addr, err := bech32.EncodeM("bc", data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Normalize(bitcoin, addr); err == nil || err.(*Error).Reason != reasonWitnessPadding {
		t.Errorf("Normalize(bitcoin, %q) error = %v, want %q", addr, err, reasonWitnessPadding)
	}
}

func TestCRC16XMODEM(t *testing.T) {
	if got := crc16XMODEM([]byte("123456789")); got != 0x31c3 {
		t.Errorf("crc16XMODEM(123456789) = %#04x, want 0x31c3", got)
	}
}

func TestAllocations(t *testing.T) {
	for _, tc := range []struct {
		typ chains.Type
		in  string
	}{
		{evm, "0x28c6c06298d514db089934071355e5743bf21d60"},
		{evm, "0x28C6c06298d514Db089934071355E5743bf21d60"}, // Valid only: Normalize must lower-case
		{ton, "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N"},
		{ton, "0:83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8"},
		{tron, "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"}, // Valid only: Normalize must encode
	} {
		if n := testing.AllocsPerRun(100, func() { Valid(tc.typ, tc.in) }); n != 0 {
			t.Errorf("Valid(%s, %q) allocates %v times", tc.typ, tc.in, n)
		}
	}
	lower := "0x28c6c06298d514db089934071355e5743bf21d60"
	if n := testing.AllocsPerRun(100, func() { Normalize(evm, lower) }); n != 0 {
		t.Errorf("Normalize(evm, canonical) allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { Detect(lower) }); n != 0 {
		t.Errorf("Detect(evm address) allocates %v times", n)
	}
	// Rejecting a non-base58 string must not reach the decoder.
	if n := testing.AllocsPerRun(100, func() { Valid(solana, "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl") }); n != 0 {
		t.Errorf("Valid(solana, non-base58) allocates %v times", n)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, tc := range normalizeCases {
		f.Add(uint8(slices.Index(chains.Types, tc.typ)), tc.in)
	}
	f.Fuzz(func(t *testing.T, i uint8, addr string) {
		typ := chains.Types[int(i)%len(chains.Types)]
		got, err := Normalize(typ, addr)
		if valid := Valid(typ, addr); valid != (err == nil) {
			t.Fatalf("Valid(%s, %q) = %v but Normalize error = %v", typ, addr, valid, err)
		}
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || ae.Reason == "" {
				t.Fatalf("Normalize(%s, %q) error = %#v, want an *Error with a reason", typ, addr, err)
			}
			return
		}
		if got == "" {
			t.Fatalf("Normalize(%s, %q) returned an empty address", typ, addr)
		}
		again, err := Normalize(typ, got)
		if err != nil || again != got {
			t.Fatalf("Normalize(%s, %q) = %q, but Normalize(%s, %q) = %q, %v", typ, addr, got, typ, got, again, err)
		}
		if !Valid(typ, got) {
			t.Fatalf("Valid(%s, %q) = false for a normalised address", typ, got)
		}
		if !slices.Contains(DetectTypes(addr), typ) {
			t.Fatalf("DetectTypes(%q) = %v, missing %s", addr, DetectTypes(addr), typ)
		}
	})
}

func FuzzDetect(f *testing.F) {
	for _, tc := range normalizeCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		got := DetectTypes(addr)
		for _, typ := range chains.Types {
			if valid := Valid(typ, addr); valid != slices.Contains(got, typ) {
				t.Fatalf("DetectTypes(%q) = %v but Valid(%s) = %v", addr, got, typ, valid)
			}
		}
		typ, ok := Detect(addr)
		if ok != (len(got) > 0) || (ok && typ != got[0]) {
			t.Fatalf("Detect(%q) = %q, %v but DetectTypes = %v", addr, typ, ok, got)
		}
	})
}

func BenchmarkNormalizeEVM(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"lower", "0x28c6c06298d514db089934071355e5743bf21d60"},
		{"checksummed", "0x28C6c06298d514Db089934071355E5743bf21d60"},
		{"upper", "0x28C6C06298D514DB089934071355E5743BF21D60"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Normalize(evm, bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDetect(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"evm", "0x28C6c06298d514Db089934071355E5743bf21d60"},
		{"bitcoin-base58", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"},
		{"bitcoin-bech32", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
		{"tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},
		{"solana", "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"},
		{"dogecoin", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"},
		{"ton", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N"},
		{"invalid", "not an address"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				DetectTypes(bc.in)
			}
		})
	}
}

// Canonical keeps chain data it cannot check: a valid address is normalised, an invalid one is
// kept (lower-cased when hex), and an unknown chain's value likewise.
func TestCanonical(t *testing.T) {
	for _, c := range []struct{ chain, in, want string }{
		{"ethereum", "0xABCDEF0123456789ABCDEF0123456789ABCDEF01", "0xabcdef0123456789abcdef0123456789abcdef01"},
		{"ethereum", "0xNOTHEX", "0xnothex"},
		{"ethereum", "", ""},
		{"no-such-chain", "0XAB", "0xab"},
		{"no-such-chain", "SomeThing", "SomeThing"},
	} {
		if got := Canonical(c.chain, c.in); got != c.want {
			t.Errorf("Canonical(%q, %q) = %q, want %q", c.chain, c.in, got, c.want)
		}
	}
	if got := CanonicalHash("0XAbC"); got != "0xabc" {
		t.Errorf("CanonicalHash = %q", got)
	}
	if got := CanonicalHash("AbC"); got != "AbC" {
		t.Errorf("CanonicalHash = %q", got)
	}
}
