package tooltext

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"\x1b[0;31mERROR! boom\x1b[0m\r\n", 100, "ERROR! boom\n"},
		{"a\x00b\x07c\u009bd\x7f", 100, "abcd"},
		{"line 1\r\nline 2", 100, "line 1\nline 2"},
		{"caf\xe9", 100, "caf"},
		{"\x1b7x\x1bM\x1b", 100, "x"},                         // ESC and one byte; a lone ESC at the end
		{strings.Repeat("é", 10), 9, strings.Repeat("é", 4)},  // cut on a rune boundary
		{strings.Repeat("a", 10), 0, strings.Repeat("a", 10)}, // no limit
	} {
		if got := Text(tc.in, tc.max); got != tc.want {
			t.Errorf("Text(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[0;31mERROR!\x1b[0m bad\x07 \u0085line\ttab": "ERROR! bad line\ttab",
		"two\r\nlines\n":       "twolines",
		"\x1b[2J\x1b[Hcleared": "cleared",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}
