//go:build unix

package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// cancelledWords say that the user stopped a run: the description of its
// OperationFailed, whose span ends cancelled (cicd.pipeline.result
// cancellation), not failed.
var cancelledWords = regexp.MustCompile(`^cancelled|interrupted`)

// ending is how a process ended: its exit code, or the signal that killed
// it.
type ending struct {
	code   int
	signal syscall.Signal
}

// plainEnding runs argv without progressotel, in a session of its own (no
// terminal), sends it sig once the started file exists, and returns how it
// ended: what the user's command does on that signal, to compare with.
func plainEnding(t *testing.T, env []string, dir, started string, sig syscall.Signal, argv ...string) ending {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// What the command left running (a task's sleep) may hold the output
	// open after it ended.
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	waitFile(t, started)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // a hang detector, not a timing assertion
		t.Fatalf("%v still running after %v\n%s", argv, sig, out.String())
	}
	e := ending{code: cmd.ProcessState.ExitCode()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.signal = ws.Signal()
	}
	return e
}

// SIGINT or SIGTERM to progressotel (no terminal: a CI job, a service, a
// driver's subprocess) stops the command as the same signal sent to the
// command itself would: progressotel ends exactly as the plain command
// does (ansible-playbook exits 99 on SIGINT and dies of SIGTERM; its
// ansible-runner's own status, 254, is not the user's), re-raising the
// signal where the command died of it. The operation ends then: its
// OperationFailed is stamped after the signal, not at the tool's last
// event.
func TestStopEndsAsThePlainCommand(t *testing.T) {
	type tool struct {
		name  string
		setup func(t *testing.T) (env []string, dir, started string, argv []string)
	}
	tools := []tool{
		{"ansible-playbook", func(t *testing.T) ([]string, string, string, []string) {
			dir := needAnsible(t)
			return []string{"ANSIBLE_NOCOLOR=1"}, dir, filepath.Join(dir, "started"), []string{"ansible-playbook", "-i", "inventory", "slow.yml"}
		}},
		{"tofu", func(t *testing.T) ([]string, string, string, []string) {
			bin := tofuDir(t)
			env := tofuEnv(t, bin)
			started := filepath.Join(t.TempDir(), "started")
			cfg := tofuConfig(t, `
resource "terraform_data" "slow" {
  input = "x"
  provisioner "local-exec" {
    command = "touch `+started+`; sleep 60"
  }
}
`)
			return env, "", started, []string{filepath.Join(bin, "tofu"), "-chdir=" + cfg, "apply", "-auto-approve"}
		}},
		{"sh", func(t *testing.T) ([]string, string, string, []string) {
			started := filepath.Join(t.TempDir(), "started")
			return nil, "", started, []string{"sh", "-c", "touch " + started + "; while :; do sleep 0.05; done"}
		}},
	}
	for _, tl := range tools {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(tl.name+"/"+sig.String(), func(t *testing.T) {
				// Each run in a fresh directory: tofu's state, Ansible's
				// retry files are the first run's.
				env, dir, started, argv := tl.setup(t)
				want := plainEnding(t, env, dir, started, sig, argv...)
				t.Logf("the plain command ended with %+v", want)
				env, dir, started, argv = tl.setup(t)

				p := startWith(t, env, func(c *exec.Cmd) {
					c.Dir = dir
					c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				}, append([]string{"run", "--"}, argv...)...)
				waitFile(t, started)
				signalled := time.Now().UTC()
				if err := p.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				r := p.wait(2 * time.Minute)
				if got := (ending{r.code, r.signal}); got != want {
					t.Fatalf("progressotel ended with %+v, the plain command with %+v\n%s", got, want, r.stderr)
				}
				if len(r.records) == 0 {
					t.Fatal("no records")
				}
				last := r.records[len(r.records)-1]
				if last.str("message") != "common/OperationFailed" {
					t.Fatalf("last record %s %v; records %v\n%s", last.str("message"), last.details(), types(r.records), r.stderr)
				}
				ended, err := time.Parse(time.RFC3339Nano, last.str("@timestamp"))
				if err != nil {
					t.Fatal(err)
				}
				// Ordering, not timing: the tool's last event came before
				// the started file, so a stamp from it would be earlier.
				if ended.Before(signalled.Truncate(time.Millisecond)) {
					t.Fatalf("OperationFailed at %v, before the signal at %v", ended, signalled)
				}
				// Stopped by the user: cancelled, the one rule for every tool.
				if d, _ := last.details()["description"].(string); !cancelledWords.MatchString(d) {
					t.Fatalf("OperationFailed %q: not cancelled", d)
				}
			})
		}
	}
}
