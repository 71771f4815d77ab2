//go:build unix

package terraform

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// -json cannot answer an approval prompt: which applies would prompt.
func TestTerraformPrompts(t *testing.T) {
	for _, tc := range []struct {
		args   string
		prompt bool
	}{
		{"apply", true},
		{"apply -auto-approve", false},
		{"apply --auto-approve=true", false},
		{"apply tfplan", false},
		{"apply -var=a=b", true},
		{"destroy", true},
		{"destroy -auto-approve", false},
		{"plan", false},
		{"init", false},
	} {
		_, sub, rest, _ := cmdline.SplitSubcommand(strings.Fields(tc.args))
		if got := prompts(sub, rest); got != tc.prompt {
			t.Errorf("%s: prompts %v, want %v", tc.args, got, tc.prompt)
		}
	}
}

// RunCommandLine, the library path of `progressotel run -- tofu apply`: a
// signal for the command reaches the tool as if sent to it (tofu stops
// gracefully on SIGINT and SIGTERM alike and exits 1), and the operation
// ends when the tool ended, after the signal; the tool's text goes to
// WithDisplay, the JSON to nobody.
func TestRunCommandLineSignals(t *testing.T) {
	bin := tofu(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			started := filepath.Join(dir, "started")
			tf := `resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "touch ` + started + `; sleep 60"
  }
}
`
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
				t.Fatal(err)
			}
			c := newCapture(t)
			sigs := make(chan os.Signal, 1)
			display := &testutil.SyncBuffer{}
			type result struct {
				res  Result
				exit adapter.Exit
				err  error
			}
			done := make(chan result, 1)
			go func() {
				res, exit, err := RunCommandLine(context.Background(), adapter.Command{
					Argv: []string{bin, "-chdir=" + dir, "apply", "-auto-approve"}, Env: append(os.Environ(), offline(t)...), Signals: sigs,
				}, c.opts(WithDisplay(display))...)
				done <- result{res, exit, err}
			}()
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(started); err == nil {
					break
				}
				if time.Now().After(deadline) { // a hang detector, not a timing assertion
					t.Fatal("the provisioner never started")
				}
			}
			signalled := time.Now()
			sigs <- sig
			r := <-done
			checkRun(t, c, r.res)
			if r.exit != (adapter.Exit{Code: 1}) || r.err == nil {
				t.Fatalf("exit %+v err %v, want tofu's status 1 and an error", r.exit, r.err)
			}
			of := c.sink.OfType(progress.TypeOperationFailed)
			if len(of) != 1 || of[0].Timestamp.Before(signalled) {
				t.Fatalf("OperationFailed %v: want one, after the signal at %v", of, signalled)
			}
			if text := display.String(); !strings.Contains(text, "Interrupt received") || strings.Contains(text, `"@message"`) {
				t.Errorf("display %q: want the tool's text, not its JSON", text)
			}
		})
	}
}

// adapter.Command.Exited runs once the tool has exited and its output is read,
// before the run's final event: a marker recorded there comes after every
// event of the tool's stream and right before OperationCompleted.
func TestRunCommandLineExited(t *testing.T) {
	bin := tofu(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "terraform_data" "a" { input = "x" }`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	rec := c.sink.Recorder()
	exited := 0
	res, exit, err := RunCommandLine(context.Background(), adapter.Command{
		Argv: []string{bin, "-chdir=" + dir, "apply", "-auto-approve"}, Env: append(os.Environ(), offline(t)...),
		Exited: func() {
			exited++
			if err := rec.Record(context.Background(), progress.Event{Type: "test/ToolExited"}); err != nil {
				t.Error(err)
			}
		},
	}, c.opts()...)
	if err != nil || exit.Code != 0 {
		t.Fatalf("exit %v, err %v", exit, err)
	}
	checkRun(t, c, res)
	got := c.sink.Types()
	if exited != 1 || len(got) < 3 || got[len(got)-2] != "test/ToolExited" || got[len(got)-1] != "common/OperationCompleted" ||
		!slices.Contains(got, "terraform/ApplyCompleted") {
		t.Fatalf("Exited called %d times; records %v: want the marker after the tool's events, right before OperationCompleted", exited, got)
	}
}
