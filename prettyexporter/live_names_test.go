package prettyexporter

import (
	"testing"
	"time"

	"github.com/rivo/uniseg"
	"golang.org/x/text/width"

	"github.com/progressotel/progressotel/progress"
)

// TestLiveEventNames: the common event types the live view reads are
// the ones package progress records (the view keeps its own copies, not
// to import progress).
func TestLiveEventNames(t *testing.T) {
	for ours, theirs := range map[string]string{
		typeOperationStarted: progress.TypeOperationStarted, typeProgress: progress.TypeProgress,
		typeOperationCompleted: progress.TypeOperationCompleted, typeOperationFailed: progress.TypeOperationFailed,
		typeEventsDropped: progress.TypeEventsDropped,
	} {
		if ours != theirs {
			t.Errorf("the live view reads %q, the source records %q", ours, theirs)
		}
	}
}

// TestLiveGlyphWidths: every glyph is one column wide, and not of
// ambiguous East Asian width, so that a terminal set up for CJK does not
// draw it two columns wide and break the alignment.
func TestLiveGlyphWidths(t *testing.T) {
	for _, g := range []string{glyphPending, glyphRunning, glyphOK, glyphSkipped, glyphFailed, glyphUnreachable, glyphCancelled, glyphTimeout, glyphRescued, glyphIgnored, barDone, barLeft} {
		if w := uniseg.StringWidth(g); w != 1 {
			t.Errorf("%q is %d columns", g, w)
		}
		for _, r := range g {
			if k := width.LookupRune(r).Kind(); k == width.EastAsianAmbiguous || k == width.EastAsianWide {
				t.Errorf("%q (%U) has East Asian width %v", g, r, k)
			}
		}
	}
}

// TestLiveDisplayWidth: CJK and emoji are two columns, combining marks
// none, and a cut never splits a grapheme.
func TestLiveDisplayWidth(t *testing.T) {
	for s, w := range map[string]int{
		"abc": 3, "组件": 4, "🚀": 2, "e\u0301": 1, "👩‍💻": 2, "🇫🇷": 2, "\x1b[1mab\x1b[0m": 2,
	} {
		if got := displayWidth([]byte(s)); got != w {
			t.Errorf("width of %q: %d, want %d", s, got, w)
		}
	}
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"组件部署", 5, "组件…"},
		{"ab🚀cd", 4, "ab…"},
		{"ab🚀cd", 5, "ab🚀…"},
		{"e\u0301e\u0301e\u0301", 2, "e\u0301…"},
		{"\x1b[1mbold text\x1b[0m", 5, "\x1b[1mbold…"},
	} {
		if got := string(cutWidth(nil, []byte(c.in), c.max, false)); got != c.want {
			t.Errorf("cut %q to %d: %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// TestLiveDurations: how durations read.
func TestLiveDurations(t *testing.T) {
	for _, c := range []struct {
		d       time.Duration
		running bool
		want    string
	}{
		{400 * time.Millisecond, false, "0.4s"}, {12300 * time.Millisecond, false, "12s"},
		{12300 * time.Millisecond, true, "12s"}, {1500 * time.Millisecond, true, "1s"},
		{65 * time.Second, false, "1m05s"}, {2*time.Hour + 3*time.Minute, true, "2h03m"}, {-time.Second, false, "0.0s"},
	} {
		if got := string(appendDuration(nil, c.d, c.running)); got != c.want {
			t.Errorf("%v (running %v): %q, want %q", c.d, c.running, got, c.want)
		}
	}
}
