package address

const (
	reasonTronFormat  = "want a base58 address (T..., 34 characters) or 41 followed by 40 hex digits"
	reasonTronVersion = "base58 version byte is not tron's 0x41 (T...)"
)

const tronVersion = 0x41

func checkTron(addr string, full bool, sc *scan) (string, string) {
	if len(addr) == 42 && addr[0] == '4' && addr[1] == '1' {
		var hash [20]byte
		if !decodeHex(hash[:], addr[2:]) {
			return "", reasonTronFormat
		}
		if !full {
			return "", ""
		}
		return encodeBase58Check(tronVersion, &hash), ""
	}
	switch version, res := sc.base58Check(addr); res {
	case b58OK:
		if version != tronVersion {
			return "", reasonTronVersion
		}
		return addr, ""
	case b58BadChecksum:
		return "", reasonBase58Checksum
	}
	return "", reasonTronFormat
}

// decodeHex decodes the hex digits in s, of either case, into dst, which must be half as long.
func decodeHex(dst []byte, s string) bool {
	for i := range dst {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
