package address

const (
	reasonDogecoinFormat  = "want a base58 P2PKH (D...) or P2SH (9... or A...) address"
	reasonDogecoinVersion = "base58 version byte is not dogecoin P2PKH (0x1e, D...) or P2SH (0x16, 9... or A...)"
)

func checkDogecoin(addr string, sc *scan) (string, string) {
	switch version, res := sc.base58Check(addr); res {
	case b58OK:
		if version != 0x1e && version != 0x16 {
			return "", reasonDogecoinVersion
		}
		return addr, ""
	case b58BadChecksum:
		return "", reasonBase58Checksum
	}
	return "", reasonDogecoinFormat
}
