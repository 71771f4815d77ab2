//go:build unix

package terraform

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/progress"
)

// TestInterruptedToolIsCancelled stops a real apply the way Ctrl-C in a
// terminal does, SIGINT to the tool's process group, while a driver streams
// its output: the run's context is never cancelled, and the tool's own
// interrupt notice is what says the stopped operations were cancelled.
func TestInterruptedToolIsCancelled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("signals a process group")
	}
	polite, stubborn := marker(), marker()
	dir := workdir(t, "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := append(offline(t), "TF_IN_AUTOMATION=1")
	initCmd := exec.CommandContext(ctx, tofu(t), "init", "-input=false")
	initCmd.Dir, initCmd.Env = dir, append(initCmd.Environ(), env...)
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, tofu(t), "apply", "-json", "-input=false", "-auto-approve",
		"-var", "polite_marker="+polite, "-var", "stubborn_marker="+stubborn)
	cmd.Dir, cmd.Env = dir, append(cmd.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }) // what the tool leaves behind

	c := newCapture(t)
	done := make(chan struct{})
	var (
		res    Result
		runErr error
		raw    bytes.Buffer
	)
	go func() {
		defer close(done)
		res, runErr = Stream(context.Background(), stdout, c.opts(rawTee(&raw))...)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the tool's stream:\n%s", raw.Bytes())
		}
	})
	waitFor(t, done, func() bool { return slowReady(c, polite, stubborn) })
	if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Stream did not return")
	}
	_ = cmd.Wait()
	checkRun(t, c, res)

	if !errors.Is(runErr, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", runErr)
	}
	assertCancelled(t, c, res, raw.Bytes(), false, []string{"terraform_data.polite", "terraform_data.stubborn"}, "terraform_data.quick")
	evs := c.sink.Events()
	assertFraming(t, evs, progress.TypeOperationFailed)
	if d, _ := evs[len(evs)-1].Details["description"].(string); !strings.HasPrefix(d, "the tool was interrupted") {
		t.Errorf("OperationFailed description %q", d)
	}
	if s := only(t, c.spansNamed("terraform")); attr(s, outcomes.Key) != outcomes.Cancelled {
		t.Errorf("command span outcome %q", attr(s, outcomes.Key))
	}
}
