package attribution

import "bytes"

// KeyRewriter renames the operator-named object keys of a JSON stream fed to it in pieces of
// any size; everything else (values, strings that happen to read "serviceEntity", whitespace,
// number formatting) passes through byte for byte. It holds only the key being read.
type KeyRewriter struct {
	names    Names
	stack    []byte // open containers, '{' or '['
	expect   bool   // the next string opens an object key
	inString bool
	escape   bool
	inKey    bool
	key      []byte // the key being read, quotes included
	out      []byte
}

// NewKeyRewriter returns a rewriter for one JSON document.
func NewKeyRewriter(n Names) *KeyRewriter { return &KeyRewriter{names: n} }

// Rewrite consumes p and returns the bytes ready to be written; a key split across calls is
// held until it ends. The returned slice is valid until the next call.
func (k *KeyRewriter) Rewrite(p []byte) []byte {
	k.out = k.out[:0]
	for i := 0; i < len(p); i++ {
		c := p[i]
		if k.inString && !k.inKey && !k.escape {
			// Inside a value string: copy up to the next quote or backslash at once.
			j := bytes.IndexAny(p[i:], "\"\\")
			if j < 0 {
				k.out = append(k.out, p[i:]...)
				break
			}
			k.out = append(k.out, p[i:i+j]...)
			i += j
			c = p[i]
		}
		if k.inString {
			k.stringByte(c)
			continue
		}
		switch c {
		case '{':
			k.stack = append(k.stack, c)
			k.expect = true
		case '[':
			k.stack = append(k.stack, c)
			k.expect = false
		case '}', ']':
			if len(k.stack) > 0 {
				k.stack = k.stack[:len(k.stack)-1]
			}
			k.expect = false
		case ',':
			k.expect = len(k.stack) > 0 && k.stack[len(k.stack)-1] == '{'
		case ':':
			k.expect = false
		case '"':
			k.inString, k.inKey = true, k.expect
			if k.inKey {
				k.key = append(k.key[:0], c)
				continue
			}
		}
		k.out = append(k.out, c)
	}
	return k.out
}

func (k *KeyRewriter) stringByte(c byte) {
	end := false
	switch {
	case k.escape:
		k.escape = false
	case c == '\\':
		k.escape = true
	case c == '"':
		end = true
		k.inString = false
	}
	if !k.inKey {
		k.out = append(k.out, c)
		return
	}
	k.key = append(k.key, c)
	if !end {
		return
	}
	k.inKey = false
	name := string(k.key[1 : len(k.key)-1])
	if renamed := k.names.Outward(name); renamed != name {
		k.out = append(append(append(k.out, '"'), renamed...), '"')
		return
	}
	k.out = append(k.out, k.key...)
}
