package http

import (
	"fmt"
	"net/url"
	"strings"
)

// PathError says why a request path was refused before routing (400).
type PathError struct {
	Segment int    // 1-based index of the offending segment
	Raw     string // the segment as the client sent it
	Reason  string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("path segment %d (%q) %s", e.Segment, e.Raw, e.Reason)
}

// CanonicalPath splits an escaped request path on its literal "/" only, decodes each segment and
// re-encodes it in one canonical form. It returns the decoded path (url.URL.Path) and the
// canonical escaped path (url.URL.RawPath): the edge routes on the latter and forwards exactly it,
// and services route on the escaped path too (libs/httpx NewEngine), so both see the same
// segments and nothing between them re-resolves the path.
//
// A segment is refused when it is empty ("//"; a trailing "/" is kept and matches no route), a
// dot segment in any encoding ("..", "%2e%2e", ".%2E"), holds a backslash or a control character
// (NUL included) once decoded, or is not valid percent-encoding. An encoded "/" (%2F) is data:
// it stays inside its segment (base64 addresses hold "/") and is forwarded encoded.
func CanonicalPath(escaped string) (decoded, canonical string, err error) {
	if !strings.HasPrefix(escaped, "/") {
		return "", "", &PathError{Segment: 0, Raw: escaped, Reason: "does not start with /"}
	}
	if plainPath(escaped) {
		return escaped, escaped, nil // already canonical: nothing to decode or encode
	}
	segs := strings.Split(escaped[1:], "/")
	var dec, can strings.Builder
	dec.Grow(len(escaped))
	can.Grow(len(escaped))
	for i, s := range segs {
		v, err := url.PathUnescape(s)
		if err != nil {
			return "", "", &PathError{Segment: i + 1, Raw: s, Reason: "is not valid percent-encoding"}
		}
		if reason := badSegment(v, i == len(segs)-1); reason != "" {
			return "", "", &PathError{Segment: i + 1, Raw: s, Reason: reason}
		}
		dec.WriteByte('/')
		dec.WriteString(v)
		can.WriteByte('/')
		escapeSegment(&can, v)
	}
	return dec.String(), can.String(), nil
}

// plainPath reports whether p ("/..." ) holds only pchars and "/", with no empty segment but a
// trailing one and no dot segment: the common case, canonical as it is.
func plainPath(p string) bool {
	segStart := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			if !isPchar(p[i]) {
				return false
			}
			continue
		}
		seg := p[segStart:i]
		if (seg == "" && i < len(p)) || seg == "." || seg == ".." {
			return false
		}
		segStart = i + 1
	}
	return true
}

func badSegment(v string, last bool) string {
	switch {
	case v == "" && !last:
		return "is empty (\"//\")"
	case v == "." || v == "..":
		return "is a dot segment"
	}
	for i := 0; i < len(v); i++ {
		switch b := v[i]; {
		case b == '\\':
			return "holds a backslash"
		case b < 0x20 || b == 0x7f:
			return fmt.Sprintf("holds a control character (%%%02X)", b)
		}
	}
	return ""
}

// escapeSegment writes v with every byte that is not an RFC 3986 pchar percent-encoded
// (unreserved, sub-delims, ":" and "@" stay literal; "/", "%", "?", "#", spaces and non-ASCII
// bytes are encoded, in upper-case hex).
func escapeSegment(b *strings.Builder, v string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(v); i++ {
		c := v[i]
		if isPchar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
}

func isPchar(c byte) bool { return pchars[c] }

// pchars marks the bytes RFC 3986 allows literally in a path segment.
var pchars = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&'()*+,;=:@" {
		t[c] = true
	}
	return t
}()
