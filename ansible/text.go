package ansible

import (
	"strings"
	"unicode/utf8"
)

// cleanText makes Ansible's display text safe to log and to put in an
// error: terminal escape sequences (Ansible colours its output) and other
// control characters are removed, \r\n becomes \n, and the text is cut to
// at most max bytes at a UTF-8 boundary.
func cleanText(s string, max int) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < max; {
		c := s[i]
		switch {
		case c == 0x1b: // ESC: skip a CSI sequence (ESC [ params final) or ESC + one byte
			i++
			if i < len(s) && s[i] == '[' {
				i++
				for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
					i++
				}
			}
			i++
		case c == '\n' || c == '\t':
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
	return strings.TrimSpace(b.String())
}

// tail keeps the last max lines of text, for error messages.
type tail struct {
	max   int
	lines []string
}

func (t *tail) add(text string) {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimRight(l, " "); l == "" {
			continue
		}
		if len(t.lines) == t.max {
			copy(t.lines, t.lines[1:])
			t.lines = t.lines[:t.max-1]
		}
		t.lines = append(t.lines, l)
	}
}

func (t *tail) String() string { return strings.Join(t.lines, "\n") }
