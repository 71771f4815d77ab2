// Package tmuxtest runs a command in a real terminal, a tmux pane, for
// the tests of the live view: it captures what the pane shows and resizes
// it. Each Pane has a tmux server of its own (its own socket), so tests
// running at the same time never see each other's panes.
package tmuxtest

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rivo/uniseg"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// Pane is a tmux pane running one command.
type Pane struct {
	t       testing.TB
	tmux    string
	sock    string
	resized time.Time
}

// Start runs command (a shell command line) in dir, in a new pane of
// width×height cells. When the command ends, the pane prints
// "__EXIT=<status>" and stays, so that its last screen can be read.
// The server is killed when the test ends. With -short the test is
// skipped: these tests run whole programs for seconds.
func Start(t testing.TB, dir string, width, height int, command string) *Pane {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no program in tmux")
	}
	p := &Pane{t: t, tmux: testutil.RequireTool(t, "tmux", "apt-get install tmux"), sock: filepath.Join(t.TempDir(), "tmux.sock")}
	shell := command + "; echo __EXIT=$?; sleep 3600"
	p.run("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height),
		"-c", dir, "-s", "test", "sh", "-c", shell)
	t.Cleanup(func() { _ = exec.Command(p.tmux, "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *Pane) run(args ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		p.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// Capture returns the pane's visible lines, wrapped lines joined (so
// that a row the terminal had to wrap shows as one line wider than the
// pane), trailing blanks trimmed, trailing empty lines dropped.
func (p *Pane) Capture() []string {
	p.t.Helper()
	out := p.run("capture-pane", "-p", "-J", "-t", "test")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// History returns the pane's scrollback and screen, wrapped lines
// joined.
func (p *Pane) History() []string {
	p.t.Helper()
	out := p.run("capture-pane", "-p", "-J", "-S", "-", "-t", "test")
	return strings.Split(strings.TrimRight(out, "\n"), "\n")
}

// Resize resizes the pane's window.
func (p *Pane) Resize(width, height int) {
	p.t.Helper()
	p.run("resize-window", "-t", "test", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height))
	p.resized = time.Now()
}

// resizeGrace is how long after a resize the screen may still show the
// old frame as the terminal rewrapped it: the program learns the new size
// at its next frame (within 100 ms; five times that on a loaded machine).
const resizeGrace = 500 * time.Millisecond

// Size returns the pane's size in cells.
func (p *Pane) Size() (width, height int) {
	p.t.Helper()
	out := strings.Fields(p.run("display-message", "-p", "-t", "test", "#{pane_width} #{pane_height}"))
	if len(out) != 2 {
		p.t.Fatalf("pane size %q", out)
	}
	width, _ = strconv.Atoi(out[0])
	height, _ = strconv.Atoi(out[1])
	return width, height
}

// Exited reports whether the command ended, with its status.
func Exited(lines []string) (status int, ok bool) {
	for _, l := range lines {
		if s, found := strings.CutPrefix(l, "__EXIT="); found {
			n, err := strconv.Atoi(s)
			return n, err == nil
		}
	}
	return 0, false
}

// Wait captures the pane every 100 ms and calls check with each screen,
// until the command ends or timeout passes (a failure). It returns the
// last screen.
func (p *Pane) Wait(timeout time.Duration, check func(lines []string)) []string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		lines := p.Capture()
		check(lines)
		if _, ok := Exited(lines); ok {
			return lines
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the command did not end within %v; the pane shows:\n%s", timeout, strings.Join(lines, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Width is the display width of a captured line.
func Width(line string) int { return uniseg.StringWidth(line) }

// Dump formats lines for a failure message.
func Dump(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%2d|%s\n", i, l)
	}
	return b.String()
}

// isLiveHeader reports whether a line is the header row of an operation
// being drawn in the live area: "▸ <operation> ...  running 12s".
func isLiveHeader(l string) bool {
	if !strings.HasPrefix(l, "▸ ") {
		return false
	}
	i := strings.LastIndex(l, "  running ")
	return i > 0 && strings.IndexFunc(l[i+len("  running "):], func(r rune) bool { return r < '0' || r > '9' && r != 's' && r != 'm' && r != 'h' }) < 0
}

// CheckLiveArea checks a screen of the pane on which the live view may be
// drawn: the live area (from the first header of a running operation to
// the bottom) has at most height-1 rows, none of them as wide as the pane
// (the capture joins wrapped lines, so a wrapped row shows as wider), and
// each operation's header is on screen once: no stale frame is left
// behind. It returns the live area's rows (none when no operation is
// running). Right after a resize, until the program has had time to draw
// at the new size, it checks nothing.
func (p *Pane) CheckLiveArea(t testing.TB, lines []string) []string {
	t.Helper()
	width, height := p.Size()
	if time.Since(p.resized) < resizeGrace {
		return nil
	}
	start := -1
	seen := map[string]bool{}
	for i, l := range lines {
		if !isLiveHeader(l) {
			continue
		}
		if start < 0 {
			start = i
		}
		op := l[:strings.LastIndex(l, "  running ")]
		op = strings.TrimRight(op, " ")
		if seen[op] {
			t.Fatalf("the header %q is on screen twice: a stale frame\n%s", op, Dump(lines))
		}
		seen[op] = true
	}
	if start < 0 {
		return nil
	}
	area := lines[start:]
	if n := len(area); n > height-1 {
		t.Fatalf("the live area has %d rows on a pane of %d\n%s", n, height, Dump(lines))
	}
	for _, l := range area {
		if w := Width(l); w >= width {
			t.Fatalf("a row of %d columns on a pane of %d (wrapped or as wide as the terminal): %q\n%s", w, width, l, Dump(lines))
		}
	}
	return area
}
