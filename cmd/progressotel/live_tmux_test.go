package main_test

import (
	"fmt"
	"path/filepath"
	"regexp"
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
	if !strings.Contains(history, "✓ Install") {
		t.Errorf("no final header:\n%s", history)
	}
	checkFinished(t, pane.History(), "✓ Install")
}

// checkFinished checks the end of a run on the terminal: from the final
// header on, nothing says it is still running ("▸", "running", "… ago").
func checkFinished(t *testing.T, history []string, header string) {
	t.Helper()
	final := -1
	for i, l := range history {
		if strings.HasPrefix(l, header+"  ") {
			final = i
		}
	}
	if final < 0 {
		t.Fatalf("no final header %q:\n%s", header, strings.Join(history, "\n"))
	}
	for _, l := range history[final:] {
		if strings.Contains(l, "▸") || strings.Contains(l, "running") || strings.HasSuffix(l, " ago") {
			t.Errorf("a finished operation still shows %q:\n%s", l, strings.Join(history[final:], "\n"))
		}
	}
}

// TestRunNestedInTmux: a run whose command runs another progressotel run
// (a script calling the CLI again): the nested run's spans, handed over
// the socket, are rows of the outer live tree while it runs, where the
// CLI's spans put them: the outer operation (Deploy), then the nested
// operation by the name it was given (migrate), not the nested run's span
// named after its executable (sh).
// Its failure is in the outer run's final screen and failure summary,
// with the nested command's status. The nested runs, which inherit
// OTEL_LOGS_EXPORTER=live, print nothing of their own through the outer
// view. Rows never reach the pane's width.
func TestRunNestedInTmux(t *testing.T) {
	bin := filepath.Join(binDir, "progressotel")
	script := fmt.Sprintf(`%[1]s run --operation migrate -- sh -c "sleep 1.5; exit 3"; `+
		`%[1]s run --operation seed -- sh -c "sleep 1"; exit 0`, bin)
	command := fmt.Sprintf("OTEL_LOGS_EXPORTER=live %s run --operation Deploy -- sh -c '%s'", bin, script)
	const width = 120
	pane := tmuxtest.Start(t, t.TempDir(), width, 20, command)
	sawNested := false
	last := pane.Wait(2*time.Minute, func(lines []string) {
		area := pane.CheckLiveArea(t, lines)
		for i := 1; i < len(area); i++ {
			// A nested operation, by its name, running right under Deploy.
			if strings.HasPrefix(area[i-1], "  ▸ Deploy") && (strings.HasPrefix(area[i], "    ▸ migrate") || strings.HasPrefix(area[i], "    ▸ seed")) {
				sawNested = true
			}
		}
	})
	if status, _ := tmuxtest.Exited(last); status != 0 {
		t.Fatalf("exit %d:\n%s", status, tmuxtest.Dump(last))
	}
	if !sawNested {
		t.Errorf("the nested run was never a row of the outer tree:\n%s", tmuxtest.Dump(last))
	}
	history := pane.History()
	joined := strings.Join(history, "\n")
	for _, want := range []string{"✓ Deploy  ", "    ✗ migrate  failed  ",
		"✗ Deploy finished with failures: 1 failure", "  ✗ Deploy › migrate  failed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q:\n%s", want, joined)
		}
	}
	// The nested command's status, from its span or its OperationFailed
	// (its records reach the outer run too), whichever the view took.
	if !regexp.MustCompile(`    ✗ migrate  failed  (INTERNAL_ERROR: )?sh exited with status 3`).MatchString(joined) {
		t.Errorf("the nested failure without its status:\n%s", joined)
	}
	for _, own := range []string{"operation=seed", "operation=migrate", "migrate failed:", "seed  trace"} {
		if strings.Contains(joined, own) {
			t.Errorf("a nested run printed %q of its own:\n%s", own, joined)
		}
	}
	checkFinished(t, history, "✓ Deploy")
	for _, l := range history[len(history)-8:] { // the final block and the summary, the view's own lines
		if w := tmuxtest.Width(l); w >= width {
			t.Errorf("a line of %d columns on a pane of %d: %q", w, width, l)
		}
	}
}

// TestRunPrettyInOrderInTmux: with the pretty format on a terminal, a
// person reads events and the command's output in the order they
// happened: common/OperationStarted, the command's stderr line, then
// common/OperationCompleted, each line once; no absent value shows as
// <nil>.
func TestRunPrettyInOrderInTmux(t *testing.T) {
	command := fmt.Sprintf(`OTEL_LOGS_EXPORTER=pretty %s run --operation Install -- sh -c 'echo tool-stderr-line >&2'`,
		filepath.Join(binDir, "progressotel"))
	pane := tmuxtest.Start(t, t.TempDir(), 120, 20, command)
	last := pane.Wait(time.Minute, func([]string) {})
	if status, _ := tmuxtest.Exited(last); status != 0 {
		t.Fatalf("exit %d:\n%s", status, tmuxtest.Dump(last))
	}
	history := strings.Join(pane.History(), "\n")
	started := strings.Index(history, "common/OperationStarted")
	tool := strings.Index(history, "tool-stderr-line")
	done := strings.Index(history, "common/OperationCompleted")
	if started < 0 || tool < started || done < tool || strings.Count(history, "tool-stderr-line") != 1 {
		t.Errorf("not in the order things happened:\n%s", history)
	}
	if strings.Contains(history, "<nil>") {
		t.Errorf("an absent value printed:\n%s", history)
	}
}

// TestRunStdoutToDevNullInTmux: `>/dev/null` is not the terminal: the
// command's stdout, sent there, does not reach the screen through the
// live view, while its stderr (the terminal) does.
func TestRunStdoutToDevNullInTmux(t *testing.T) {
	command := fmt.Sprintf(`OTEL_LOGS_EXPORTER=live %s run --operation Install -- sh -c 'echo out-to-null; echo err-to-screen >&2' >/dev/null`,
		filepath.Join(binDir, "progressotel"))
	pane := tmuxtest.Start(t, t.TempDir(), 120, 20, command)
	last := pane.Wait(time.Minute, func([]string) {})
	if status, _ := tmuxtest.Exited(last); status != 0 {
		t.Fatalf("exit %d:\n%s", status, tmuxtest.Dump(last))
	}
	history := strings.Join(pane.History(), "\n")
	if strings.Contains(history, "out-to-null") || !strings.Contains(history, "err-to-screen") {
		t.Errorf("stdout sent to /dev/null shown, or stderr lost:\n%s", history)
	}
}
