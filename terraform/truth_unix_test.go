//go:build unix

package terraform

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/progressotel/progressotel/adapter"
	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// The OpenTofu cases of issue 33, with the real tool: whatever a live
// message says first, the run's final record agrees with the tool's own
// final word (its summary, or its stream's end), which checkRun checks
// besides what each test asserts. Their streams are recorded with -record
// (tofu-apply-killed, tofu-apply-cut) and decoded by TestGolden.

// TestKilledToolSpansEndWhenItDied (case 8): tofu SIGKILLed while two
// provisioners run. The operations and provisioner runs it never ended
// end when it died (the stream's end), not at their start: failed, "the
// tool reported no end".
func TestKilledToolSpansEndWhenItDied(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("looks for processes in /proc")
	}
	bin := tofu(t)
	polite, stubborn := marker(), marker()
	t.Cleanup(func() { killAll(polite, stubborn) })
	c := newCapture(t)
	r := startRun(Command{Binary: bin, Dir: workdir(t, "slow"), Args: []string{"apply"}, Init: true, Env: offline(t),
		Vars: map[string]any{"polite_marker": polite, "stubborn_marker": stubborn}},
		c.opts(adapter.WithGracePeriod(time.Minute), recordTo(t, "tofu-apply-killed.jsonl"))...)
	defer r.cancel()
	waitFor(t, r.done, func() bool { return slowReady(c, polite, stubborn) })
	time.Sleep(2 * time.Second) // the provisioners have run a while
	pid := toolOf(t, polite)
	killedAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Run did not return after the tool was killed")
	}
	res, err := r.res, r.err
	checkRun(t, c, res)
	if !errors.Is(err, ErrIncomplete) && res.ExitCode != 128+9 {
		t.Errorf("err %v, exit %d; want the tool's death", err, res.ExitCode)
	}
	for _, name := range []string{"create terraform_data.polite", "create terraform_data.stubborn", "provision local-exec"} {
		for _, s := range c.spansNamed(name) {
			if s.EndTime().Before(killedAt) {
				t.Errorf("span %s ends at %v (%v after its start), before the tool was killed at %v",
					name, s.EndTime(), s.EndTime().Sub(s.StartTime()), killedAt)
			}
			if attr(s, outcomes.Key) != outcomes.Failed || s.Status().Code != codes.Error || s.Status().Description != noEnd {
				t.Errorf("span %s: outcome %q, status %v", name, attr(s, outcomes.Key), s.Status())
			}
		}
	}
	if n := len(c.spansNamed("provision local-exec")); n != 2 {
		t.Errorf("%d provisioner spans, want 2", n)
	}
}

// TestCutStreamAfterExitZeroFails (case 10): a stream cut in the middle of
// the apply (operations started, none completed, no summary) from a tool
// that then exits 0 is no completed operation: OperationCompleted needs
// both the exit status and the tool's final message (docs/cli.md).
func TestCutStreamAfterExitZeroFails(t *testing.T) {
	bin := tofu(t)
	// The real tool behind a pipe that ends after its first apply_start;
	// the wrapper then exits 0.
	wrapper := filepath.Join(t.TempDir(), "tofu")
	script := fmt.Sprintf("#!/bin/sh\n%q \"$@\" | sed '/\"type\":\"apply_start\"/q'\nexit 0\n", bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	res, err := Run(t.Context(), Command{Binary: wrapper, Dir: workdir(t, "lifecycle"), Args: []string{"apply"}, Init: true,
		Env: offline(t), SensitiveVars: map[string]any{"db_password": dbPassword}}, c.opts(recordTo(t, "tofu-apply-cut.jsonl"))...)
	checkRun(t, c, res)
	if res.ExitCode != 0 || len(c.sink.OfType(TypeApplyStarted)) == 0 {
		t.Fatalf("exit %d, %d ApplyStarted: the stream was not cut inside the apply", res.ExitCode, len(c.sink.OfType(TypeApplyStarted)))
	}
	if !errors.Is(err, ErrIncomplete) || res.OK() {
		t.Errorf("err %v, OK %v; want ErrIncomplete", err, res.OK())
	}
	if n := len(c.sink.OfType(progress.TypeOperationFailed)); n != 1 {
		t.Errorf("%d OperationFailed, want 1", n)
	}
}

// TestCreateWithProvisionerIsChanged (case 9): a create that ran a
// provisioner is changed on its span, as a delete is, whatever its
// provisioner run says (ok).
func TestCreateWithProvisionerIsChanged(t *testing.T) {
	bin, dir := tofu(t), workdir(t, "lifecycle")
	cmd := func(sub string) Command {
		return Command{Binary: bin, Dir: dir, Args: []string{sub}, Init: sub == "apply", Env: offline(t),
			SensitiveVars: map[string]any{"db_password": dbPassword}}
	}
	for _, sub := range []string{"apply", "destroy"} {
		c := newCapture(t)
		res, err := Run(t.Context(), cmd(sub), c.opts()...)
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		checkRun(t, c, res)
		action := map[string]string{"apply": "create", "destroy": "delete"}[sub]
		s := only(t, c.spansNamed(action+" terraform_data.app"))
		if attr(s, outcomes.Key) != outcomes.Changed || s.Status().Code == codes.Error {
			t.Errorf("%s terraform_data.app: outcome %q, status %v; want changed", action, attr(s, outcomes.Key), s.Status())
		}
	}
}

// toolOf is the pid of the tool whose provisioner runs the sleep marked m:
// the sleep's shell's parent.
func toolOf(t *testing.T, m string) int {
	t.Helper()
	procs := testutil.ProcessesWith("sleep " + m)
	if len(procs) == 0 {
		t.Fatalf("no sleep %s", m)
	}
	pid, _ := strconv.Atoi(procs[0][:strings.IndexByte(procs[0], ':')])
	for range 3 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if strings.HasSuffix(exe, "/tofu") {
			return pid
		}
		// pid (comm) state ppid ...
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		pid, _ = strconv.Atoi(fields[1])
	}
	t.Fatalf("no tofu above sleep %s", m)
	return 0
}

// killAll kills the processes whose command line holds one of the markers.
func killAll(markers ...string) {
	for _, m := range markers {
		for _, p := range testutil.ProcessesWith(m) {
			if pid, err := strconv.Atoi(p[:strings.IndexByte(p, ':')]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}
