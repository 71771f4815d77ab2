package testutil

import "testing"

func TestDiffLines(t *testing.T) {
	if d := DiffLines("a\nb\n", "a\nb\n"); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	want := "line 2:\n- \"b\"\n+ \"B\\x1b\"\nline 4:\n- \"\"\n+ \"extra\"\n"
	if d := DiffLines("a\nb\nc\n", "a\nB\x1b\nc\nextra"); d != want {
		t.Errorf("got\n%s\nwant\n%s", d, want)
	}
}
