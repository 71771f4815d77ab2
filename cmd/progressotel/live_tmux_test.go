package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/tmuxtest"
)

// TestRunLiveViewInTmux: `progressotel run` with the live view on a real
// terminal (a tmux pane): the command's own output is printed above the
// live area, each line once, never inside it, while the area shows the
// operation and the events the command emits; at the end the operation's
// final header stays.
func TestRunLiveViewInTmux(t *testing.T) {
	script := `for i in 1 2 3 4 5 6; do echo "tool line $i"; echo "tool error $i" >&2; ` +
		`progressotel emit --type deploy/HostStarted --detail host=web-$i; sleep 0.3; done`
	command := fmt.Sprintf("OTEL_LOGS_EXPORTER=live %s run --operation Install -- sh -c '%s'",
		filepath.Join(binDir, "progressotel"), script)
	pane := tmuxtest.Start(t, t.TempDir(), 100, 20, command)
	sawArea := false
	last := pane.Wait(2*time.Minute, func(lines []string) {
		area := pane.CheckLiveArea(t, lines)
		if len(area) == 0 {
			return
		}
		sawArea = true
		for _, l := range area {
			if strings.Contains(l, "tool ") {
				t.Fatalf("the command's output inside the live area:\n%s", tmuxtest.Dump(lines))
			}
		}
	})
	if status, _ := tmuxtest.Exited(last); status != 0 {
		t.Fatalf("exit %d:\n%s", status, tmuxtest.Dump(last))
	}
	if !sawArea {
		t.Fatalf("no live area was drawn:\n%s", tmuxtest.Dump(last))
	}
	history := strings.Join(pane.History(), "\n")
	for i := 1; i <= 6; i++ {
		for _, l := range []string{fmt.Sprintf("tool line %d", i), fmt.Sprintf("tool error %d", i)} {
			if n := strings.Count(history, l+"\n"); n != 1 {
				t.Errorf("%q printed %d times:\n%s", l, n, history)
			}
		}
	}
	if !strings.Contains(history, "✓ Install") || !strings.Contains(history, "deploy/HostStarted  host=web-6") {
		t.Errorf("no final header or last event:\n%s", history)
	}
}
