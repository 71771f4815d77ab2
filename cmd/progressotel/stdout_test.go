package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
)

// runClean runs progressotel with exactly env added (no --output), and
// returns its stdout and stderr.
func runClean(t *testing.T, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "progressotel"), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Minute // a hang detector, not a timing assertion
	if err := cmd.Run(); err != nil {
		t.Fatalf("progressotel %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// No telemetry lands in the wrapped command's stdout, nor in emit's, under
// any exporter setting: `progressotel run -- echo hi > out` writes "hi"
// alone, and `x=$(progressotel emit ...)` captures nothing. With an OTLP
// endpoint alone (the production setup), local output is off; local
// output that was asked for goes to stderr.
func TestNoTelemetryInTheCommandsStdout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		exporter string // OTEL_LOGS_EXPORTER; "-": unset
		otlp     bool   // an OTLP endpoint is set
		// onStderr: the events are on stderr (the local exporters').
		onStderr bool
	}{
		{"unset", "-", false, false},
		{"otlp endpoint only", "-", true, false},
		{"json", "json", false, true},
		{"pretty", "pretty", false, true},
		{"live", "live", false, true},
		{"console", "console", false, true},
		{"none", "none", true, false},
		{"otlp", "otlp", true, false},
		{"json,otlp", "json,otlp", true, true},
		{"pretty,json,console", "pretty,json,console", false, true},
		{"live,otlp", "live,otlp", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var env []string
			if tc.exporter != "-" {
				env = append(env, "OTEL_LOGS_EXPORTER="+tc.exporter)
			}
			var srv *otlptest.HTTPServer
			if tc.otlp {
				srv = otlptest.StartHTTP(t)
				env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+srv.Addr)
			}
			stdout, stderr := runClean(t, env, "run", "--operation", "Hello", "--", "echo", "hi")
			if stdout != "hi\n" {
				t.Fatalf("run's stdout %q, want the command's alone\nstderr: %s", stdout, stderr)
			}
			stdout, emitStderr := runClean(t, env, "emit", "--type", "demo/Step")
			if stdout != "" {
				t.Fatalf("emit's stdout %q, want nothing", stdout)
			}
			if got := strings.Contains(stderr, "OperationStarted") || strings.Contains(stderr, "Hello"); got != tc.onStderr {
				t.Errorf("the run's events on stderr: %v, want %v\n%s", got, tc.onStderr, stderr)
			}
			if tc.onStderr && !strings.Contains(emitStderr, "demo/Step") && !strings.Contains(emitStderr, "Step") {
				t.Errorf("the emitted event is not on stderr:\n%s", emitStderr)
			}
			if srv != nil && tc.exporter != "none" {
				if got := srv.LogEventNames(); !slices.Contains(got, "common/OperationStarted") || !slices.Contains(got, "demo/Step") {
					t.Errorf("the OTLP endpoint got %v", got)
				}
			}
		})
	}
}
