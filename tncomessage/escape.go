package tncomessage

import "strings"

// EscapeSegment makes a detail key safe to join into a path: '%' becomes
// "%25" and '.' becomes "%2E", so a key containing the separator never
// collides with a nested path. UnescapeSegment undoes it.
func EscapeSegment(s string) string {
	if !strings.ContainsAny(s, ".%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			b.WriteString("%25")
		case '.':
			b.WriteString("%2E")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// EscapedLen is len(EscapeSegment(s)), without building it.
func EscapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '.' {
			n += 2
		}
	}
	return n
}

// UnescapeSegment reverses EscapeSegment; "%2e" is read as '.' too.
// Malformed escapes are kept as they are. It allocates only when s holds
// an escape.
func UnescapeSegment(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			switch s[i+1 : i+3] {
			case "25":
				b.WriteByte('%')
				i += 2
				continue
			case "2E", "2e":
				b.WriteByte('.')
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
