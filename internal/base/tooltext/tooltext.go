// Package tooltext makes the text a tool wrote (Ansible's display text,
// OpenTofu's messages and stderr, ansible-runner's errors) safe to show on
// a terminal, log, or put in an event: terminal escape sequences and
// control characters are removed, and invalid UTF-8 is dropped.
package tooltext

import (
	"strings"
	"unicode/utf8"
)

// Text returns s without escape sequences and control characters other
// than newline and tab ("\r\n" becomes "\n"), cut to at most max bytes
// at a UTF-8 boundary; max <= 0: no limit.
func Text(s string, max int) string { return clean(s, max, true) }

// Line is Text for one line: newlines are removed too, and there is no
// limit.
func Line(s string) string { return clean(s, 0, false) }

// clean removes the escape sequences (see EscapeEnd), the C0 controls
// other than tab (and newline when newlines is set), DEL, the C1 controls
// and invalid UTF-8.
func clean(s string, max int, newlines bool) string {
	if max <= 0 {
		max = len(s)
	}
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < max; {
		c := s[i]
		switch {
		case c == 0x1b:
			i = EscapeEnd(s, i)
		case c == '\t' || c == '\n' && newlines:
			b.WriteByte(c)
			i++
		case c < 0x20 || c == 0x7f:
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || r >= 0x80 && r < 0xa0 { // invalid, C1 controls
				i++
				continue
			}
			if b.Len()+n > max {
				i = len(s)
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

// EscapeEnd returns the index just after the escape sequence that starts
// at b[i] (an ESC): a CSI sequence (ESC [ parameters final byte: colours,
// cursor movement), an OSC, DCS, SOS, PM or APC string (window titles,
// hyperlinks; ended by BEL or ESC \), or ESC and one more byte. An
// unfinished sequence runs to the end of b.
func EscapeEnd[T ~string | ~[]byte](b T, i int) int {
	if i+1 >= len(b) {
		return len(b)
	}
	switch b[i+1] {
	case '[':
		return CSIEnd(b, i+2)
	case ']', 'P', 'X', '^', '_':
		for j := i + 2; j < len(b); j++ {
			if b[j] == 0x07 {
				return j + 1
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2
			}
		}
		return len(b)
	}
	return i + 2
}

// CSIEnd returns the index just after a CSI sequence's final byte
// (0x40–0x7e), its parameters starting at b[i].
func CSIEnd[T ~string | ~[]byte](b T, i int) int {
	for ; i < len(b); i++ {
		if b[i] >= 0x40 && b[i] <= 0x7e {
			return i + 1
		}
	}
	return len(b)
}
