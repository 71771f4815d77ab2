package kubetest

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RunInTmux runs command (a shell command line) in dir, in a real
// terminal of width×height cells (a tmux server of its own), until it
// ends or timeout passes (a failure), and returns the terminal's whole
// scrollback and the command's status. The main module's tmuxtest does
// more for its live-view tests; this module may not import it.
func RunInTmux(t testing.TB, dir string, width, height int, command string, timeout time.Duration) (history []string, status int) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no program in tmux")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is not installed (apt-get install tmux): %v", err)
	}
	sock := t.TempDir() + "/tmux.sock"
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).Output()
		if err != nil {
			t.Fatalf("tmux %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	run("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height),
		"-c", dir, "-s", "test", "sh", "-c", command+"; echo __EXIT=$?; sleep 3600")
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		screen := run("capture-pane", "-p", "-J", "-t", "test")
		for _, l := range strings.Split(screen, "\n") {
			if s, ok := strings.CutPrefix(strings.TrimRight(l, " "), "__EXIT="); ok {
				status, _ = strconv.Atoi(s)
				out := run("capture-pane", "-p", "-J", "-S", "-", "-t", "test")
				return strings.Split(strings.TrimRight(out, "\n"), "\n"), status
			}
		}
		if time.Now().After(deadline) { // a hang detector, not a timing assertion
			t.Fatalf("the command did not end within %v; the terminal shows:\n%s", timeout, screen)
		}
	}
}
