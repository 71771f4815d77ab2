//go:build unix

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitingScript traps sig (a shell name: TERM, HUP, INT), writes READY,
// then loops until killed; on sig it writes the signal to OUT and exits 7.
func waitingScript(t *testing.T, sig string) (path, ready, out string) {
	dir := t.TempDir()
	ready, out = filepath.Join(dir, "ready"), filepath.Join(dir, "out")
	path = script(t, `trap 'echo got-`+sig+` > `+out+`; exit 7' `+sig+`
touch `+ready+`
while :; do sleep 0.05; done
`)
	return path, ready, out
}

// SIGTERM and SIGHUP sent to progressotel reach the command, whose exit
// status then is progressotel's.
func TestSIGTERMAndSIGHUPReachTheCommand(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGTERM, "TERM"}, {syscall.SIGHUP, "HUP"}} {
		t.Run(tc.name, func(t *testing.T) {
			s, ready, out := waitingScript(t, tc.name)
			p := start(t, nil, "run", "--", s)
			waitFile(t, ready)
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			r := p.wait(time.Minute)
			if r.code != 7 || r.signal != 0 {
				t.Fatalf("exit %d signal %v, want 7 (the command's)\n%s", r.code, r.signal, r.stderr)
			}
			if b, _ := os.ReadFile(out); strings.TrimSpace(string(b)) != "got-"+tc.name {
				t.Fatalf("the command saw %q", b)
			}
		})
	}
}

// With no controlling terminal (a CI job, a service, a driver's
// subprocess), nothing else sends the command a SIGINT: it is forwarded.
func TestSIGINTIsForwardedWithoutATerminal(t *testing.T) {
	s, ready, out := waitingScript(t, "INT")
	// A session of its own: no controlling terminal, whatever the
	// test's.
	p := startWith(t, nil, func(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }, "run", "--", s)
	waitFile(t, ready)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait(time.Minute)
	if r.code != 7 {
		t.Fatalf("exit %d signal %v, want 7\n%s", r.code, r.signal, r.stderr)
	}
	if b, _ := os.ReadFile(out); strings.TrimSpace(string(b)) != "got-INT" {
		t.Fatalf("the command saw %q", b)
	}
}

// A command killed by a signal: progressotel dies of the same signal
// where the Go runtime allows (SIGHUP, SIGINT, SIGTERM, SIGKILL), else
// exits with 128+N; the run reports OperationFailed either way.
func TestCommandKilledBySignal(t *testing.T) {
	for _, tc := range []struct {
		kill    string
		signal  syscall.Signal // progressotel's death, or 0
		code    int            // progressotel's exit code when not killed
		message string
	}{
		{"TERM", syscall.SIGTERM, -1, "sh killed by signal SIGTERM"},
		{"KILL", syscall.SIGKILL, -1, "sh killed by signal SIGKILL"},
		{"HUP", syscall.SIGHUP, -1, "sh killed by signal SIGHUP"},
		{"SEGV", 0, 128 + int(syscall.SIGSEGV), "sh killed by signal SIGSEGV"},
		{"USR1", 0, 128 + int(syscall.SIGUSR1), "sh killed by signal SIGUSR1"},
	} {
		t.Run(tc.kill, func(t *testing.T) {
			r := runPO(t, nil, "run", "--", "sh", "-c", "kill -"+tc.kill+" $$")
			if r.signal != tc.signal || r.code != tc.code {
				t.Fatalf("progressotel ended with code %d signal %v, want code %d signal %v\n%s", r.code, r.signal, tc.code, tc.signal, r.stderr)
			}
			if len(r.records) != 2 || r.records[1].details()["description"] != tc.message {
				t.Fatalf("records %v", r.records)
			}
		})
	}
}

// A signal progressotel was started with ignored (nohup) stays ignored,
// for progressotel and for the command, as without progressotel.
func TestIgnoredSignalStaysIgnored(t *testing.T) {
	bin := filepath.Join(binDir, "progressotel")
	r := runPO(t, nil, "run", "--adapter", "none", "--", "sh", "-c",
		`trap '' HUP; exec `+bin+` run -- sh -c 'kill -HUP $$; echo survived'`)
	if r.code != 0 || !strings.Contains(r.stdout, "survived") {
		t.Fatalf("exit %d signal %v stdout %q: SIGHUP was not ignored\n%s", r.code, r.signal, r.stdout, r.stderr)
	}
}
