package main_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"golang.org/x/sys/unix"

	"github.com/progressotel/progressotel/internal/kit/procctl"
	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// openPTY opens a pseudo-terminal: the master, and the terminal itself.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return master, tty
}

// Ctrl-C on the terminal reaches the command once: the terminal sends
// SIGINT to its foreground process group, progressotel and the command
// alike, and progressotel does not send a second one (OpenTofu takes a
// second interrupt as "stop now, without cleaning up").
func TestCtrlCOnTheTerminalReachesTheCommandOnce(t *testing.T) {
	master, tty := openPTY(t)
	dir := t.TempDir()
	ready, count, stop := filepath.Join(dir, "ready"), filepath.Join(dir, "count"), filepath.Join(dir, "stop")
	// Perl counts every signal its handler is called for (a shell's
	// trap is a flag: two signals before it runs count as one).
	s := filepath.Join(dir, "count-sigint.pl")
	if err := os.WriteFile(s, []byte(`
$SIG{INT} = sub { open(my $f, '>>', '`+count+`') or die; print $f "int\n"; close $f };
open(my $r, '>', '`+ready+`') or die; close $r;
until (-e '`+stop+`') { select(undef, undef, undef, 0.05) }
`), 0o600); err != nil {
		t.Fatal(err)
	}
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Skip("needs perl, to count signals")
	}
	p := startWith(t, nil, func(c *exec.Cmd) {
		// progressotel leads a session whose controlling terminal is
		// the pseudo-terminal, as a shell's foreground job is.
		c.Stdin = tty
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}, "run", "--", perl, s)
	waitFile(t, ready)
	if _, err := master.Write([]byte{0x03}); err != nil { // ^C
		t.Fatal(err)
	}
	waitFile(t, count)
	// A forwarded copy would follow within milliseconds; give it far
	// more than that to show up.
	time.Sleep(time.Second)
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := p.wait(time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d signal %v\n%s", r.code, r.signal, r.stderr)
	}
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "int"); n != 1 {
		t.Fatalf("the command got %d SIGINTs, want 1", n)
	}
}

// Ctrl-C in a terminal stops a tool that runs in a process group of its
// own (ansible-runner, tofu) as it stops the plain tool: progressotel,
// which alone gets the terminal's SIGINT, sends it to the tool's whole
// group once. ansible-playbook exits 99 ("User interrupted execution"),
// not ansible-runner's 254; tofu stops gracefully (one interrupt) and
// exits 1. A script in progressotel's own group gets the terminal's SIGINT
// itself and dies of it, and so does progressotel. Each run is cancelled,
// not failed: one rule for all three.
func TestCtrlCOnTheTerminalStopsATool(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (env []string, dir, started string, argv []string)
		code  int
		sig   syscall.Signal // the signal progressotel dies of, as the command did
		text  string         // in the tool's output; "": none to look for
	}{
		{"ansible-playbook", func(t *testing.T) ([]string, string, string, []string) {
			dir := needAnsible(t)
			return []string{"ANSIBLE_NOCOLOR=1"}, dir, filepath.Join(dir, "started"), []string{"ansible-playbook", "-i", "inventory", "slow.yml"}
		}, 99, 0, "User interrupted execution"},
		{"tofu", func(t *testing.T) ([]string, string, string, []string) {
			env := tofuEnv(t, tofuDir(t))
			started := filepath.Join(t.TempDir(), "started")
			cfg := tofuConfig(t, `
resource "terraform_data" "slow" {
  input = "x"
  provisioner "local-exec" {
    command = "touch `+started+`; sleep 60"
  }
}
`)
			return env, "", started, []string{"tofu", "-chdir=" + cfg, "apply", "-auto-approve"}
		}, 1, 0, ""}, // "Interrupt received" races the provisioner's own death by the SIGINT
		{"script", func(t *testing.T) ([]string, string, string, []string) {
			started := filepath.Join(t.TempDir(), "started")
			return nil, "", started, []string{"sh", "-c", "touch " + started + "; while :; do sleep 0.05; done"}
		}, -1, syscall.SIGINT, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, dir, started, argv := tc.setup(t)
			master, tty := openPTY(t)
			p := startWith(t, env, func(c *exec.Cmd) {
				c.Dir = dir
				c.Stdin = tty
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			}, append([]string{"run", "--"}, argv...)...)
			waitFile(t, started)
			if _, err := master.Write([]byte{0x03}); err != nil { // ^C
				t.Fatal(err)
			}
			r := p.wait(2 * time.Minute)
			if r.code != tc.code || r.signal != tc.sig {
				t.Fatalf("exit %d signal %v, want %d\n%s\n%s", r.code, r.signal, tc.code, r.stdout, r.stderr)
			}
			out := r.stdout + r.stderr
			if !strings.Contains(out, tc.text) || strings.Contains(out, "Two interrupts") {
				t.Fatalf("output: want one interrupt (%q)\n%s", tc.text, out)
			}
			if last := r.records[len(r.records)-1]; last.str("message") != "common/OperationFailed" ||
				!cancelledWords.MatchString(last.details()["description"].(string)) {
				t.Fatalf("last record %s %v: not cancelled", last.str("message"), last.details())
			}
		})
	}
}

// A vars_prompt on a terminal: ansible-runner holds ansible-playbook's
// terminal, so the prompt cannot reach the user. The run stops at once
// with a message that names the fix and ansible-playbook's own status for
// a prompt it gets no answer to (250), never runner's 254.
func TestRunAnsiblePlaybookThatPromptsOnATerminal(t *testing.T) {
	dir := needAnsible(t)
	_, tty := openPTY(t)
	p := startWith(t, []string{"ANSIBLE_NOCOLOR=1"}, func(c *exec.Cmd) {
		c.Dir = dir
		c.Stdin = tty
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}, "run", "--", "ansible-playbook", "-i", "inventory", "prompt.yml")
	r := p.wait(5 * time.Minute)
	if r.code != 250 || !strings.Contains(r.stderr, "-e release=VALUE") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := types(r.records); !slices.Contains(got, "ansible/VarPrompt") || got[len(got)-1] != "common/OperationFailed" {
		t.Fatalf("records %v", got)
	}
}

// In live mode the command's stderr goes through the live view. A process
// the command left in the background, holding that stderr, does not keep
// the run waiting: the operation ends when the command exits, with its
// duration, as without the live view (where the command writes to the
// terminal itself). Before, exec waited procctl's 5 s drain for the pipe.
func TestLiveRunEndsWhenTheCommandExits(t *testing.T) {
	srv := otlptest.StartHTTP(t)
	master, tty := openPTY(t)
	go func() { _, _ = io.Copy(io.Discard, master) }()
	stop := filepath.Join(t.TempDir(), "stop")
	t.Cleanup(func() { _ = os.WriteFile(stop, nil, 0o600) })
	p := startWith(t, []string{"OTEL_LOGS_EXPORTER=live,otlp", "PROGRESSOTEL_OUTPUT=", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + srv.Addr},
		func(c *exec.Cmd) {
			c.Stdin, c.Stderr = tty, tty
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		}, "run", "--", "sh", "-c", "(until [ -e "+stop+" ]; do sleep 0.1; done) >/dev/null & echo left a process behind >&2")
	r := p.wait(2 * time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	var completed *logspb.LogRecord
	for _, rec := range srv.Records() {
		if rec.Rec.GetEventName() == "common/OperationCompleted" {
			completed = rec.Rec
		}
	}
	if completed == nil {
		t.Fatal("no OperationCompleted")
	}
	for _, kv := range completed.GetAttributes() {
		// A bound far above a shell's start and exit, and the drain's
		// length: the operation did not wait for the pipe.
		if kv.GetKey() == "progress.details.durationMs" && kv.GetValue().GetIntValue() >= procctl.DrainTimeout.Milliseconds() {
			t.Fatalf("the operation took %d ms: it waited for the process left behind", kv.GetValue().GetIntValue())
		} else if kv.GetKey() == "progress.details.durationMs" {
			return
		}
	}
	t.Fatalf("no durationMs in %v", completed.GetAttributes())
}

// emit and transition outside a run, under OTEL_LOGS_EXPORTER=live on a
// terminal, show the event as a line: no one-line tree of their own (the
// "phantom tree"), which is an operation's view.
func TestEmitOutsideARunUnderLiveShowsTheEventOnly(t *testing.T) {
	for _, args := range [][]string{
		{"emit", "--type", "deploy/Step", "--detail", "n=1"},
		{"transition", "--stream", "provisioning", "--status", "True", "--reason", "Provisioned", "--resource-type", "cluster", "--resource-id", "c1"},
	} {
		master, tty := openPTY(t)
		var screen bytes.Buffer
		copied := make(chan struct{})
		go func() { _, _ = io.Copy(&screen, master); close(copied) }()
		p := startWith(t, []string{"OTEL_LOGS_EXPORTER=live", "PROGRESSOTEL_OUTPUT="}, func(c *exec.Cmd) {
			c.Stdin, c.Stderr = tty, tty
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		}, args...)
		r := p.wait(time.Minute)
		tty.Close()
		<-copied
		out := screen.String()
		if r.code != 0 || !strings.Contains(out, args[2][strings.LastIndex(args[2], "/")+1:]) {
			t.Fatalf("%v: exit %d, screen %q", args, r.code, out)
		}
		if strings.Contains(out, "▸") {
			t.Errorf("%v: a tree of its own: %q", args, out)
		}
	}
}

// progressotel's own warnings on a terminal are cut to its width, as the
// live view's lines are, and the no-exporter warning is printed once per
// top-level run, not again by each run nested in it.
func TestOwnWarningsFitTheTerminalOncePerRun(t *testing.T) {
	master, tty := openPTY(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 40}); err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&screen, master); close(copied) }()
	p := startWith(t, []string{"OTEL_LOGS_EXPORTER=", "PROGRESSOTEL_OUTPUT="}, func(c *exec.Cmd) {
		c.Stdin, c.Stderr = tty, tty
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}, "run", "--", "progressotel", "run", "--", "true")
	r := p.wait(time.Minute)
	tty.Close()
	<-copied
	if r.code != 0 {
		t.Fatalf("exit %d: %q", r.code, screen.String())
	}
	lines := strings.Split(strings.ReplaceAll(screen.String(), "\r\n", "\n"), "\n")
	warnings := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "progressotel: no exporter") {
			warnings++
			if w := utf8.RuneCountInString(l); w >= 40 {
				t.Errorf("a warning of %d columns on a terminal of 40: %q", w, l)
			}
		}
	}
	if warnings != 1 {
		t.Errorf("%d no-exporter warnings, want 1: %q", warnings, screen.String())
	}
}

// On a terminal, ansible-playbook through progressotel (no live view)
// writes what it writes alone: coloured, its banners as wide as the
// terminal, byte for byte.
func TestAnsibleOnATerminalAsBare(t *testing.T) {
	needTool(t, "ansible-playbook")
	needTool(t, "ansible-runner")
	dir, err := filepath.Abs(filepath.Join("testdata", "corpus", "ansible"))
	if err != nil {
		t.Fatal(err)
	}
	screen := func(argv ...string) (string, string) {
		master, tty := openPTY(t)
		if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 100}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		copied := make(chan struct{})
		go func() { _, _ = io.Copy(&out, master); close(copied) }()
		cmd := exec.Command(argv[0], argv[1:]...)
		var stderr bytes.Buffer
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, tty, &stderr
		cmd.Env = append(os.Environ(), "OTEL_LOGS_EXPORTER=json", "PROGRESSOTEL_OUTPUT="+filepath.Join(t.TempDir(), "records.jsonl"))
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, &stderr)
		}
		tty.Close()
		<-copied
		return out.String(), stderr.String()
	}
	bareOut, bareErr := screen("ansible-playbook", "05-handlers.yml")
	out, stderr := screen(filepath.Join(binDir, "progressotel"), "run", "--", "ansible-playbook", "05-handlers.yml")
	if !strings.Contains(bareOut, "\x1b[") {
		t.Fatalf("the bare run did not colour: %q", bareOut)
	}
	if out != bareOut || stderr != bareErr {
		t.Errorf("not the bare output:\n%s\nstderr:\n%s", testutil.DiffLines(bareOut, out), testutil.DiffLines(bareErr, stderr))
	}
}
