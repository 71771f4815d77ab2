package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// binDir holds the progressotel binary that the tests start, built once by
// TestMain, with -race when the tests run with it. pathDir holds the one
// first on PATH, which the scripts the tests run call by name as users do:
// built without -race, since a race-enabled binary takes about a second to
// start and the scripts start it many times.
var binDir, pathDir string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "progressotel-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		pathDir = filepath.Join(dir, "path")
		if err := build(pathDir, false); err != nil {
			fmt.Fprintln(os.Stderr, "building progressotel:", err)
			return 1
		}
		binDir = pathDir
		if raceEnabled {
			binDir = filepath.Join(dir, "race")
			if err := build(binDir, true); err != nil {
				fmt.Fprintln(os.Stderr, "building progressotel -race:", err)
				return 1
			}
		}
		os.Setenv("PATH", pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		// The tests set what they need; none of the caller's settings.
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(name, "OTEL_") || strings.HasPrefix(name, "X_TRACECTX_") || strings.HasPrefix(name, "PROGRESSOTEL_") ||
				name == "TRACEPARENT" || name == "TRACESTATE" || name == "BAGGAGE" {
				os.Unsetenv(name)
			}
		}
		return m.Run()
	}())
}

// build builds progressotel into dir.
func build(dir string, race bool) error {
	args := []string{"build", "-o", filepath.Join(dir, "progressotel")}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// result is how a progressotel process ended and what it wrote.
type result struct {
	code   int            // exit code, -1 when killed by a signal
	signal syscall.Signal // the signal that killed it, or 0
	stdout string
	stderr string
	// records are the JSON lines written to the --output file.
	records []record
	// out is that file.
	out string
}

// record is one JSON line of the json exporter.
type record map[string]any

func (r record) str(key string) string { s, _ := r[key].(string); return s }

func (r record) seq() int64 {
	f, _ := r["sequence"].(float64)
	return int64(f)
}

func (r record) details() map[string]any { d, _ := r["details"].(map[string]any); return d }

// proc is a progressotel process started by a test.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    string
	stdout *bytes.Buffer
	stderr *bytes.Buffer
}

// start starts progressotel with args; env adds to the test's
// environment. Records go as JSON lines to a file that wait reads.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startWith(t, env, nil, args...)
}

// startWith is start with setup applied to the command before it starts.
func startWith(t *testing.T, env []string, setup func(*exec.Cmd), args ...string) *proc {
	t.Helper()
	out := filepath.Join(t.TempDir(), "records.jsonl")
	cmd := exec.Command(filepath.Join(binDir, "progressotel"), args...)
	cmd.Env = append(append(os.Environ(), "OTEL_LOGS_EXPORTER=json", "PROGRESSOTEL_OUTPUT="+out), env...)
	p := &proc{t: t, cmd: cmd, out: out, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// wait waits for the process, failing the test if it takes longer than
// limit: the tests that use a short limit check that nothing hangs, with
// a margin far above the normal time, never a tight bound.
func (p *proc) wait(limit time.Duration) result {
	p.t.Helper()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-done
		p.t.Fatalf("progressotel %v still running after %v\nstderr: %s", p.cmd.Args[1:], limit, p.stderr)
	}
	r := result{code: p.cmd.ProcessState.ExitCode(), stdout: p.stdout.String(), stderr: p.stderr.String()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.signal = ws.Signal()
	}
	r.records = readRecords(p.t, p.out)
	r.out = p.out
	return r
}

// runPO runs progressotel to its end.
func runPO(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return start(t, env, args...).wait(2 * time.Minute)
}

func readRecords(t *testing.T, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []record
	for _, r := range testutil.JSONLines(t, f) {
		recs = append(recs, r)
	}
	return recs
}

// types lists the progressEventType (or message) of each record.
func types(recs []record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.str("message")
	}
	return out
}

// script writes a shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never appeared", path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
