//go:build unix

package ansible

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/progress"
)

// slowPlaybook writes a playbook whose only task touches started, then
// sleeps, and a local inventory; it returns their paths.
func slowPlaybook(t *testing.T) (playbook, inventory, started string) {
	t.Helper()
	dir := t.TempDir()
	started = filepath.Join(dir, "started")
	playbook, inventory = filepath.Join(dir, "slow.yml"), filepath.Join(dir, "hosts")
	pb := `- name: Slow
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Wait
      ansible.builtin.shell: touch ` + started + `; sleep 60
`
	if err := os.WriteFile(playbook, []byte(pb), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inventory, []byte("localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return playbook, inventory, started
}

func waitForFile(t *testing.T, path string, done <-chan struct{}) {
	t.Helper()
	waitUntil(t, func() bool { _, err := os.Stat(path); return err == nil }, done,
		"the run ended before its task started", func() string { return path + " never appeared" })
}

// waitUntil polls cond until it holds. The test fails with ended when done
// closes first (a nil done never does), and with never() after two
// minutes: a hang detector, not a timing assertion.
func waitUntil(t *testing.T, cond func() bool, done <-chan struct{}, ended string, never func() string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			t.Fatal(ended)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal(never())
		}
	}
}

// RunCommandLine, the library path of `progressotel run --
// ansible-playbook`: a signal for the command reaches ansible-playbook,
// not ansible-runner (whose "canceled" is 254), so the run ends as plain
// ansible-playbook does (SIGINT: status 99; SIGTERM: killed by it); and
// cancelling ctx stops it as Run does. Either way the operation ends when
// the run ended, after the stop, not at Ansible's last event; the display
// text goes to WithDisplay.
func TestRunCommandLineStops(t *testing.T) {
	requireAnsible(t)
	for _, tc := range []struct {
		name   string
		sig    syscall.Signal // 0: cancel ctx
		want   adapter.Exit
		cancel bool
	}{
		{"SIGINT", syscall.SIGINT, adapter.Exit{Code: 99}, false},
		{"SIGTERM", syscall.SIGTERM, adapter.Exit{Signal: syscall.SIGTERM}, false},
		{"cancel", 0, adapter.Exit{Code: 254}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb, inv, started := slowPlaybook(t)
			c := newCapture(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sigs := make(chan os.Signal, 1)
			var display bytes.Buffer
			type result struct {
				res  Result
				exit adapter.Exit
				err  error
			}
			done := make(chan result, 1)
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				res, exit, err := RunCommandLine(ctx, adapter.Command{Argv: []string{"ansible-playbook", "-i", inv, pb}, Signals: sigs},
					append(c.options(t), WithDisplay(&display))...)
				done <- result{res, exit, err}
			}()
			waitForFile(t, started, ended)
			stopped := time.Now()
			if tc.cancel {
				cancel()
			} else {
				sigs <- tc.sig
			}
			r := <-done
			checkRun(t, c, r.res)
			if r.exit != tc.want {
				t.Fatalf("exit %+v, want %+v (err %v)", r.exit, tc.want, r.err)
			}
			if r.err == nil || tc.cancel && !errors.Is(r.err, context.Canceled) {
				t.Fatalf("err = %v", r.err)
			}
			of := c.sink.OfType(progress.TypeOperationFailed)
			if len(of) != 1 {
				t.Fatalf("OperationFailed %v", of)
			}
			// Ordering, not timing: Ansible's last event (the task's
			// start) came before the started file.
			if of[0].Timestamp.Before(stopped) {
				t.Errorf("OperationFailed at %v, before the stop at %v", of[0].Timestamp, stopped)
			}
			if !strings.Contains(display.String(), "TASK [Wait") {
				t.Errorf("display %q: want Ansible's text", display.String())
			}
			if len(c.spans.Started()) != len(c.spans.Ended()) {
				t.Errorf("%d spans started, %d ended", len(c.spans.Started()), len(c.spans.Ended()))
			}
		})
	}
}

// adapter.Command.Exited runs once ansible-playbook has exited and its output
// is read, before the run's final event: a marker recorded there comes
// after every event of the run and right before OperationCompleted.
func TestRunCommandLineExited(t *testing.T) {
	requireAnsible(t)
	dir := t.TempDir()
	pb, inv := filepath.Join(dir, "quick.yml"), filepath.Join(dir, "hosts")
	if err := os.WriteFile(pb, []byte("- name: Quick\n  hosts: localhost\n  gather_facts: false\n  tasks:\n    - name: Say\n      ansible.builtin.debug:\n        msg: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inv, []byte("localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	rec := c.sink.Recorder()
	exited := 0
	res, exit, err := RunCommandLine(context.Background(), adapter.Command{Argv: []string{"ansible-playbook", "-i", inv, pb},
		Exited: func() {
			exited++
			if err := rec.Record(context.Background(), progress.Event{Type: "test/ToolExited"}); err != nil {
				t.Error(err)
			}
		},
	}, c.options(t)...)
	if err != nil || exit.Code != 0 {
		t.Fatalf("exit %v, err %v", exit, err)
	}
	checkRun(t, c, res)
	got := c.sink.Types()
	if exited != 1 || len(got) < 3 || got[len(got)-2] != "test/ToolExited" || got[len(got)-1] != progress.TypeOperationCompleted ||
		!slices.Contains(got, TypePlaybookResult) {
		t.Fatalf("Exited called %d times; records %v: want the marker after the run's events, right before OperationCompleted", exited, got)
	}
}
