package address

const reasonSolanaFormat = "want the base58 encoding of 32 bytes (32 to 44 characters)"

func checkSolana(addr string, sc *scan) (string, string) {
	if len(sc.base58(addr)) != 32 {
		return "", reasonSolanaFormat
	}
	return addr, ""
}
