package main

import (
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/internal/testkit/tmuxtest"
)

// TestDemoInTmux runs `make demo` in a real terminal, a tmux pane, and
// reads the screen as it unfolds: the live view draws one tree for the
// operation, never more rows than the pane nor a row as wide as it, with
// no stale frame left behind, also after the pane shrinks mid-run; at the
// end the live area is gone and the final state stays: the header with
// its status, nothing left running under it, then the driver's own last
// line, printed above the view. (How each host's task ended is the
// adapter's spans' outcome: prettyexporter's TestLiveSpans* and
// TestLiveRealAnsible check the view's side.)
func TestDemoInTmux(t *testing.T) {
	root := testutil.RepoRoot(t)
	pane := tmuxtest.Start(t, root, 110, 30, "make --no-print-directory demo")
	resized, sawLive, sawResized := false, false, false
	last := pane.Wait(5*time.Minute, func(lines []string) {
		w, _ := pane.Size()
		if area := pane.CheckLiveArea(t, lines); len(area) > 0 {
			sawLive = true
			sawResized = sawResized || resized && w == 64
			if !resized && (!strings.Contains(area[0], "Install  resource::nginx::1.0/nginx-web-tier  trace ") || !strings.Contains(area[0], "tx=7d9b1c52-tx")) {
				t.Fatalf("header %q: want operation, resource, trace id and transaction id", area[0])
			}
			if !resized {
				pane.Resize(64, 16) // the terminal shrinks mid-run
				resized = true
			}
		}
	})
	if status, _ := tmuxtest.Exited(last); status != 0 {
		t.Fatalf("make demo exited with %d:\n%s", status, tmuxtest.Dump(last))
	}
	if !sawLive {
		t.Fatalf("the live area never showed:\n%s", tmuxtest.Dump(last))
	}
	if !sawResized {
		t.Errorf("no frame at the new size was captured before the run ended")
	}
	screen := strings.Join(pane.History(), "\n")
	for _, want := range []string{
		"✓ Install  resource::nginx::1.0/nginx-web-tier", // the final header, done
		"play Install nginx on web tier",
		"ansible-driver: done:",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, screen)
		}
	}
	final := strings.LastIndex(screen, "✓ Install  resource::")
	if final >= 0 && (strings.Contains(screen[final:], "▸") || strings.Contains(screen[final:], "running")) {
		t.Errorf("a finished operation shows a part still running:\n%s", screen[final:])
	}
	if strings.Contains(strings.Join(last, "\n"), "running ") {
		t.Errorf("a live area is left after the end:\n%s", tmuxtest.Dump(last))
	}
}
