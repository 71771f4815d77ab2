package prettyexporter_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// stuckWriter is a terminal that stopped reading (Ctrl-S, a full pipe):
// every Write blocks until release.
type stuckWriter struct {
	release chan struct{}
	entered atomic.Int64
	bytes   atomic.Int64
}

func (w *stuckWriter) Write(b []byte) (int, error) {
	w.entered.Add(1)
	<-w.release
	w.bytes.Add(int64(len(b)))
	return len(b), nil
}

// liveRecords are the records of many operations of a driver, as an
// exporter receives them.
func liveRecords(t testing.TB, ops, tasks int) []sdklog.Record {
	t.Helper()
	h := newHarness(t, &progresstest.Exporter{})
	for o := range ops {
		ctx, _ := h.span(t)
		rec := func(e progress.Event) {
			if err := h.rec.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		rec(progress.OperationStarted(fmt.Sprintf("Install-%d", o)))
		rec(progress.Event{Type: "ansible/PlayStarted", Details: map[string]any{"playName": "site"}})
		for i := range tasks {
			task := fmt.Sprintf("task %d", i)
			rec(progress.Event{Type: "ansible/TaskStarted", Details: map[string]any{"taskName": task}})
			for _, host := range []string{"web-1", "web-2"} {
				rec(progress.Event{Type: "ansible/TaskStartedOnHost", Details: map[string]any{"taskName": task, "hostName": host}})
				rec(progress.Event{Type: "ansible/TaskCompletedOnHost", Details: map[string]any{
					"taskName": task, "hostName": host, "taskResult": map[string]any{"changed": i%3 == 0, "msg": "ok"}}})
			}
			rec(progress.Progress(int64(i+1), int64(tasks), "tasks"))
		}
	}
	return h.kept.Records()
}

// TestLiveStuckWriterNeverBlocksExport: a writer that never drains stalls
// nothing. Export, from several goroutines at once, keeps returning while
// the exporter's goroutine is stuck in its Write; Output, and a driver
// recording through LogProcessor and SpanProcessor, too; ForceFlush and
// Shutdown give up at their context's deadline. Run under -race.
func TestLiveStuckWriterNeverBlocksExport(t *testing.T) {
	for _, mode := range []prettyexporter.LiveMode{prettyexporter.LiveTerminal, prettyexporter.LivePlain} {
		t.Run(mode.String(), func(t *testing.T) {
			w := &stuckWriter{release: make(chan struct{})}
			e, _ := prettyexporter.NewLive(prettyexporter.WithWriter(w), prettyexporter.WithLiveMode(mode),
				prettyexporter.WithTerminalSize(func() (int, int) { return 100, 30 }))
			recs := liveRecords(t, 20, 25)

			// The first frame or line gets the writer stuck.
			if err := e.Export(context.Background(), recs[:10]); err != nil {
				t.Fatal(err)
			}
			for w.entered.Load() == 0 {
				time.Sleep(5 * time.Millisecond)
			}

			done := make(chan struct{})
			go func() {
				defer close(done)
				var wg sync.WaitGroup
				for g := range 4 {
					wg.Go(func() {
						for round := range 20 {
							for i := g * 50; i < len(recs); i += 200 {
								if err := e.Export(context.Background(), recs[i:min(i+50, len(recs))]); err != nil {
									t.Error(err)
									return
								}
							}
							fmt.Fprintf(e.Output(), "tool output line %d of goroutine %d\n", round, g)
						}
					})
				}
				// A driver recording through the view's own processors,
				// as otelbridge.Setup installs them: spans and records.
				wg.Go(func() {
					tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.SpanProcessor()))
					lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(e.LogProcessor()))
					rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
					for i := range 200 {
						ctx, s := tp.Tracer("driver").Start(context.Background(), fmt.Sprintf("step %d", i))
						_, sub := tp.Tracer("driver").Start(ctx, "sub-step")
						_ = rec.Record(ctx, progress.Progress(int64(i), 200, "steps"))
						sub.End()
						s.End()
					}
				})
				wg.Wait()
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute): // a deadlock, not a slow machine
				t.Fatal("Export or Output blocked behind a writer that does not drain")
			}
			if n := w.entered.Load(); n != 1 {
				t.Errorf("%d writes entered, want the one stuck: frames must be skipped", n)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if err := e.ForceFlush(ctx); err == nil {
				t.Error("ForceFlush returned nil while the writer is stuck")
			}
			ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel2()
			if err := e.Shutdown(ctx2); err == nil {
				t.Error("Shutdown returned nil while the writer is stuck")
			}
			if err := e.Export(context.Background(), recs[:1]); err != sdklog.ErrExporterShutdown {
				t.Errorf("Export after Shutdown: %v", err)
			}

			// The terminal reads again: the goroutine writes what is
			// left, once, and says how much it had to drop.
			close(w.release)
			for w.entered.Load() < 2 {
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// TestLiveDroppedLinesCounted: lines that cannot wait for a stuck writer
// are counted and the count is printed when it reads again.
func TestLiveDroppedLinesCounted(t *testing.T) {
	var mu sync.Mutex
	var got strings.Builder
	release, entered := make(chan struct{}), make(chan struct{})
	first := true
	w := writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		stuck := first
		first = false
		mu.Unlock()
		if stuck {
			close(entered)
			<-release
		}
		mu.Lock()
		got.Write(b)
		mu.Unlock()
		return len(b), nil
	})
	e, _ := prettyexporter.NewLive(prettyexporter.WithWriter(w), prettyexporter.WithLiveMode(prettyexporter.LivePlain))
	fmt.Fprintln(e.Output(), "first line")
	<-entered // the goroutine took the first line and is stuck writing it
	line := strings.Repeat("x", 1000) + "\n"
	for range 2000 { // 2 MB: past the 1 MiB bound
		_, _ = e.Output().Write([]byte(line))
	}
	close(release)
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	out := got.String()
	if !strings.Contains(out, "lines not shown: the terminal did not keep up") {
		t.Errorf("no count of the dropped lines in %d bytes", len(out))
	}
	if n := strings.Count(out, strings.TrimSuffix(line, "\n")); n < 500 || n >= 2000 {
		t.Errorf("%d long lines printed, want the first MiB of them", n)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
