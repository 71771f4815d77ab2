package ansible

import (
	"strings"
	"testing"
)

// The event markers runner's display callback writes around a display
// outside a callback are taken out of stderr whole, however the writes cut
// them, and nothing else is held back once the output ends.
func TestMarkerStripper(t *testing.T) {
	marker := "\x1b[KeyJ1dWlkIjogIjEyMyJ9\x1b[20D\x1b[K"
	text := marker + "[WARNING]: a warning\n" + "\x1b[Ke30=\x1b[4D\x1b[K" + "plain \x1b[1;35mcolour\x1b[0m\n"
	want := "[WARNING]: a warning\nplain \x1b[1;35mcolour\x1b[0m\n"
	for size := 1; size <= len(text); size++ {
		var out strings.Builder
		m := &markerStripper{w: &out}
		for i := 0; i < len(text); i += size {
			_, _ = m.Write([]byte(text[i:min(i+size, len(text))]))
		}
		m.flush()
		if out.String() != want {
			t.Fatalf("writes of %d bytes: %q, want %q", size, out.String(), want)
		}
	}
}

// The arguments ANSIBLE_DISPLAY_ARGS_TO_STDOUT added to a banner are taken
// out, the stars counted as Display.banner counts them for the name alone.
func TestStripBannerArgs(t *testing.T) {
	stars := func(n int) string { return strings.Repeat("*", n) }
	for _, tc := range []struct{ name, in, args, want string }{
		{"task", "\nTASK [hello msg=hi] " + stars(79-len("TASK [hello msg=hi]")), "msg=hi",
			"\nTASK [hello] " + stars(79-len("TASK [hello]"))},
		{"handler, check mode", "\nRUNNING HANDLER [restart name=x] [CHECK MODE] ***", "name=x",
			"\nRUNNING HANDLER [restart] [CHECK MODE] " + stars(79-len("RUNNING HANDLER [restart] [CHECK MODE]"))},
		{"arguments over lines", "\nTASK [script script=a\nb\n] ***", "script=a\nb\n", "\nTASK [script] " + stars(79-len("TASK [script]"))},
		// Two columns a character, three bytes.
		{"wide name", "\nTASK [日本 msg=x] ***", "msg=x", "\nTASK [日本] " + stars(79-len("TASK [日本]")+2)},
		{"long name", "\nTASK [" + strings.Repeat("n", 80) + " a=b] ***", "a=b", "\nTASK [" + strings.Repeat("n", 80) + "] ***"},
		{"not a banner", "ok: [localhost] => msg=hi]", "msg=hi", "ok: [localhost] => msg=hi]"},
	} {
		if got := stripBannerArgs(tc.in, tc.args, 79); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
