package address

import (
	"encoding/base64"
	"strings"
)

const (
	reasonTONFormat    = "want a raw address (0:<64 hex digits> or -1:<64 hex digits>) or a 48-character user-friendly address (EQ..., UQ...)"
	reasonTONWorkchain = "workchain must be 0 or -1"
	reasonTONRawHex    = "raw address must have 64 hex digits after the colon"
	reasonTONBase64    = "user-friendly address must be 48 characters of base64 or base64url"
	reasonTONTag       = "user-friendly address has unknown flags: want EQ... (bounceable) or UQ... (non-bounceable)"
	reasonTONChecksum  = "user-friendly address checksum does not match (check for a typo)"
)

const (
	tonBounceable    = 0x11
	tonNonBounceable = 0x51
	tonTestOnly      = 0x80
)

func checkTON(addr string, full bool) (string, string) {
	if colon := strings.IndexByte(addr, ':'); colon >= 0 {
		return checkTONRaw(addr, colon, full)
	}
	if len(addr) == 48 {
		return checkTONFriendly(addr)
	}
	return "", reasonTONFormat
}

func checkTONRaw(addr string, colon int, full bool) (string, string) {
	if wc := addr[:colon]; wc != "0" && wc != "-1" {
		return "", reasonTONWorkchain
	}
	digits := addr[colon+1:]
	if len(digits) != 64 {
		return "", reasonTONRawHex
	}
	upper := false
	for i := range len(digits) {
		switch c := digits[i]; {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			upper = true
		default:
			return "", reasonTONRawHex
		}
	}
	if !upper {
		return addr, ""
	}
	if !full {
		return "", ""
	}
	return strings.ToLower(addr), ""
}

func checkTONFriendly(addr string) (string, string) {
	// Pick the alphabet from the characters used and refuse a mix of both, and anything the
	// decoder would otherwise skip (it ignores line breaks).
	var std, url bool
	for i := range len(addr) {
		switch c := addr[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '+' || c == '/':
			std = true
		case c == '-' || c == '_':
			url = true
		default:
			return "", reasonTONBase64
		}
	}
	if std && url {
		return "", reasonTONBase64
	}
	enc := base64.RawStdEncoding
	if url {
		enc = base64.RawURLEncoding
	}
	var src [48]byte
	var b [36]byte
	copy(src[:], addr)
	if n, err := enc.Decode(b[:], src[:]); err != nil || n != len(b) {
		return "", reasonTONBase64
	}
	if tag := b[0] &^ tonTestOnly; tag != tonBounceable && tag != tonNonBounceable {
		return "", reasonTONTag
	}
	if b[1] != 0x00 && b[1] != 0xff {
		return "", reasonTONWorkchain
	}
	if crc16XMODEM(b[:34]) != uint16(b[34])<<8|uint16(b[35]) {
		return "", reasonTONChecksum
	}
	return addr, ""
}

// crc16XMODEM is CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection.
func crc16XMODEM(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
