package prettyexporter

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// TestMain keeps the terminal's progress bar and the CI format out of every other test's bytes,
// whatever terminal or CI the tests run in; the tests of each set the environment they need.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(TerminalProgressEnv); !ok {
		_ = os.Setenv(TerminalProgressEnv, "off")
	}
	for _, k := range []string{"GITHUB_ACTIONS", "GITLAB_CI", "GITHUB_STEP_SUMMARY"} {
		_ = os.Unsetenv(k)
	}
	os.Exit(m.Run())
}

// terminalEnv are the variables terminalProgressOn reads.
var terminalEnv = []string{
	TerminalProgressEnv, "TERM", "TMUX", "STY", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "WT_SESSION", "ConEmuANSI",
	"KITTY_WINDOW_ID", "VTE_VERSION", "KONSOLE_VERSION",
}

func TestTerminalProgressDetection(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"TERM": "xterm-256color"}, false},
		{map[string]string{"TERM": "xterm-256color", "TERM_PROGRAM": "Apple_Terminal"}, false},
		{map[string]string{"TERM_PROGRAM": "WezTerm"}, true},
		{map[string]string{"TERM_PROGRAM": "ghostty", "TERM": "xterm-ghostty"}, true},
		{map[string]string{"WT_SESSION": "a0b1"}, true},
		{map[string]string{"ConEmuANSI": "ON"}, true},
		{map[string]string{"TERM_PROGRAM": "iTerm.app", "TERM_PROGRAM_VERSION": "3.6.6"}, true},
		{map[string]string{"TERM_PROGRAM": "iTerm.app", "TERM_PROGRAM_VERSION": "3.10.0beta1"}, true},
		{map[string]string{"TERM_PROGRAM": "iTerm.app", "TERM_PROGRAM_VERSION": "3.5.14"}, false},
		{map[string]string{"VTE_VERSION": "8002"}, true},
		{map[string]string{"VTE_VERSION": "7600"}, false},
		{map[string]string{"KONSOLE_VERSION": "240802"}, true},
		{map[string]string{"KONSOLE_VERSION": "220401"}, false},
		{map[string]string{"TERM": "xterm-kitty", "TERM_PROGRAM": "kitty", "TERM_PROGRAM_VERSION": "0.42.1"}, true},
		{map[string]string{"TERM": "xterm-kitty", "TERM_PROGRAM": "kitty", "TERM_PROGRAM_VERSION": "0.39.0"}, false},
		{map[string]string{"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}, false}, // no version: not known
		// A multiplexer in between: never, unless asked.
		{map[string]string{"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/tmux-1000/default,1,0"}, false},
		{map[string]string{"WT_SESSION": "a0b1", "STY": "1.pts-0"}, false},
		{map[string]string{"VTE_VERSION": "8002", "TERM": "screen-256color"}, false},
		{map[string]string{"VTE_VERSION": "8002", "TERM": "tmux-256color"}, false},
		{map[string]string{"TMUX": "/tmp/tmux-1000/default,1,0", TerminalProgressEnv: "on"}, true},
		{map[string]string{TerminalProgressEnv: "on"}, true},
		{map[string]string{TerminalProgressEnv: "off", "TERM_PROGRAM": "WezTerm"}, false},
		{map[string]string{TerminalProgressEnv: "auto", "TERM_PROGRAM": "WezTerm"}, true},
	} {
		if got := terminalProgressOn(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}

// progressVT is a terminal emulator that records OSC 9;4 (live_vt_test.go).
type progressVT struct {
	mu sync.Mutex
	vt *vt
}

func (w *progressVT) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.vt.Write(b)
}

func (w *progressVT) received() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.vt.progress)
}

// waitProgress waits until the terminal received seq, and returns what it received.
func (w *progressVT) waitProgress(t *testing.T, seq string) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := w.received()
		if slices.Contains(got, seq) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never received OSC 9;4;%s; it received %q", seq, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// progressRun starts a live exporter on a terminal emulator, in an environment whose terminal is
// env, fed as otelbridge.Setup feeds it.
func progressRun(t *testing.T, env map[string]string, clock *fakeClock) (*LiveExporter, *progressVT, *progress.Recorder, *sdktrace.TracerProvider) {
	t.Helper()
	for _, k := range terminalEnv {
		t.Setenv(k, env[k])
	}
	out := &progressVT{vt: newVT(100, 30)}
	opts := []Option{WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(func() (int, int) { return 100, 30 }),
		WithColor(ColorNever), WithoutTime()}
	if clock != nil {
		opts = append(opts, withClock(clock))
	}
	e, err := NewLive(opts...)
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(e.LogProcessor()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.SpanProcessor()))
	t.Cleanup(func() {
		_ = lp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	return e, out, progress.NewRecorder(progress.WithLoggerProvider(lp)), tp
}

// TestLiveTerminalProgressStates: on a terminal known to draw it, the bar is indeterminate (3)
// before the operation has a total, N of M (1) once it has, an error (2) from the first failure
// on, resent unchanged every 10 s, and cleared (0) at the end; each state is a whole, valid
// OSC 9;4 sequence in the emulator, and nothing else reaches it but the view's own sequences.
func TestLiveTerminalProgressStates(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)}
	e, out, rec, tp := progressRun(t, map[string]string{"TERM_PROGRAM": "WezTerm", "TERM": "xterm-256color"}, clock)
	env := progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
	record := func(ctx context.Context, ev progress.Event) {
		t.Helper()
		ev.Envelope = env
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	ctx, op := tp.Tracer("test").Start(context.Background(), "site.yml")
	record(ctx, progress.OperationStarted("Install"))
	out.waitProgress(t, "3;0")

	record(ctx, progress.Progress(1, 4, "tasks"))
	out.waitProgress(t, "1;25")

	// Unchanged, it is sent again once 10 s have passed.
	n := len(out.received())
	clock.set(clock.now().Add(11 * time.Second))
	deadline := time.Now().Add(30 * time.Second)
	for got := out.received(); len(got) == n || got[len(got)-1] != "1;25"; got = out.received() {
		if time.Now().After(deadline) {
			t.Fatalf("the bar was not sent again after 10 s: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}

	_, task := tp.Tracer("test").Start(ctx, "Install nginx")
	task.SetStatus(codes.Error, "no package nginx")
	task.End()
	record(ctx, progress.Progress(2, 4, "tasks"))
	out.waitProgress(t, "2;50")

	record(ctx, progress.Progress(3, 4, "tasks"))
	out.waitProgress(t, "2;75") // an error stays an error

	record(ctx, progress.OperationFailed("Install", "INTERNAL_ERROR", "1 task failed"))
	op.End()
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.received()
	if got[len(got)-1] != "0;0" {
		t.Errorf("the last OSC 9;4 is %q, want 0;0 (cleared): %q", got[len(got)-1], got)
	}
	if i := slices.Index(got, "2;50"); slices.Contains(got[i:], "1;75") {
		t.Errorf("a normal bar after the failure: %q", got)
	}
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
}

// TestLiveTerminalProgressInterrupt: a run stopped while an operation is running (Shutdown, as on
// an interrupt) clears the bar.
func TestLiveTerminalProgressInterrupt(t *testing.T) {
	e, out, rec, _ := progressRun(t, map[string]string{"VTE_VERSION": "8002", "TERM": "xterm-256color"}, nil)
	ev := progress.OperationStarted("Install")
	ev.Envelope = progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
	if err := rec.Record(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	out.waitProgress(t, "3;0")
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := out.received(); got[len(got)-1] != "0;0" {
		t.Errorf("after Shutdown: %q, want 0;0 last", got)
	}
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
}

// TestLiveTerminalProgressUnknownTerminal: a terminal not known to draw the bar, or one under tmux,
// receives no OSC 9;4 at all, while the live view still draws.
func TestLiveTerminalProgressUnknownTerminal(t *testing.T) {
	for _, env := range []map[string]string{
		{"TERM": "xterm-256color"},
		{"TERM": "tmux-256color", "TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/tmux-1000/default,1,0"},
		{"TERM_PROGRAM": "WezTerm", TerminalProgressEnv: "off"},
	} {
		e, out, rec, _ := progressRun(t, env, nil)
		ev := progress.OperationStarted("Install")
		ev.Envelope = progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
		if err := rec.Record(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		ev = progress.Progress(1, 2, "tasks")
		ev.Envelope = progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
		if err := rec.Record(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if err := e.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := e.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := out.received(); len(got) > 0 {
			t.Errorf("%v: the terminal received OSC 9;4 %q", env, got)
		}
		if !strings.Contains(strings.Join(out.vt.History(), "\n"), "Install") {
			t.Errorf("%v: nothing drawn", env)
		}
		if out.vt.err != nil {
			t.Fatal(out.vt.err)
		}
	}
}
