package tncomessage

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonStrings are inputs with every ASCII byte, the C1 controls, the line
// separators, invalid UTF-8 and text around them.
func jsonStrings() []string {
	var ascii strings.Builder
	for c := range utf8.RuneSelf {
		ascii.WriteByte(byte(c))
	}
	return []string{"", "plain", ascii.String(), "<a href=\"x\">&amp;</a>", "\u0080\u0085\u009b\u009f\u00a0",
		"line\u2028para\u2029", "bad \xff\xfe utf-8 \xe2\x82", "\u202e rtl é 世界 🚀 \u200b\u2066\ue000\U000e0041\U0010fffd", "tab\there\r\nnext\b\f"}
}

func TestStdEscapesAreEncodingJSONs(t *testing.T) {
	for _, s := range jsonStrings() {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendStdString(nil, s); string(got) != string(want) {
			t.Errorf("AppendStdString(%q)\n got %s\nwant %s", s, got, want)
		}
	}
}

func TestTerminalEscapesArePrintable(t *testing.T) {
	for _, s := range jsonStrings() {
		got := AppendJSONString(nil, s, TerminalEscapes)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendJSONString(%q) = %s: not JSON: %v", s, got, err)
		}
		if want := perByteValid(s); back != want {
			t.Errorf("AppendJSONString(%q) reads back as %q, want %q", s, back, want)
		}
		for _, r := range string(got) {
			if r == utf8.RuneError || !strconv.IsPrint(r) {
				t.Errorf("AppendJSONString(%q) = %s: holds %U raw", s, got, r)
			}
		}
		if strings.Contains(s, "<") && !strings.Contains(string(got), "<") {
			t.Errorf("AppendJSONString(%q) = %s: escaped HTML, which only StdEscapes does", s, got)
		}
	}
}

// perByteValid replaces each byte of invalid UTF-8 with U+FFFD, as
// encoding/json does.
func perByteValid(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError, one byte at a time
	}
	return b.String()
}
