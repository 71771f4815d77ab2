package sdkparts_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/otelbridge/internal/shutdown"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// blockingExporter blocks every Export until its context ends (an
// exporter that honours its context) or, with ignoreCtx, until released.
type blockingExporter struct {
	ignoreCtx bool
	started   chan struct{}
	release   chan struct{}
	exported  atomic.Int64
}

func newBlockingExporter(ignoreCtx bool) *blockingExporter {
	return &blockingExporter{ignoreCtx: ignoreCtx, started: make(chan struct{}, 64), release: make(chan struct{})}
}

func (e *blockingExporter) Export(ctx context.Context, recs []sdklog.Record) error {
	e.started <- struct{}{}
	if e.ignoreCtx {
		<-e.release
		e.exported.Add(int64(len(recs)))
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-e.release:
		e.exported.Add(int64(len(recs)))
		return nil
	}
}
func (e *blockingExporter) Shutdown(context.Context) error   { return nil }
func (e *blockingExporter) ForceFlush(context.Context) error { return nil }

// exporting returns the stacks of the goroutines that are inside an
// export: in an exporter's Export, or in the OTLP client's upload.
func exporting() []string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "(*blockingExporter).Export") || strings.Contains(g, "otlploggrpc.(*client).UploadLogs") ||
			strings.Contains(g, "otlploggrpc.(*Exporter).Export") || strings.Contains(g, "sdkparts.(*BatchProcessor).export") {
			out = append(out, g)
		}
	}
	return out
}

func emit(t *testing.T, lp *sdklog.LoggerProvider, n int) {
	t.Helper()
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp), progress.WithMeterProvider(metricnoop.NewMeterProvider()))
	for i := range n {
		if err := rec.Record(context.Background(), progress.Progress(int64(i+1), int64(n), "steps")); err != nil {
			t.Fatal(err)
		}
	}
}

// checkFinal asserts what a caller of Shutdown relies on the moment it
// returns: the error counts every record that was not exported, Stats
// accounts for every record and no longer changes, and no export of the
// processor is running.
func checkFinal(t *testing.T, bp *sdkparts.BatchProcessor, err error, emitted, wantUnflushed int64) sdkparts.DropStats {
	t.Helper()
	s := bp.Stats()
	busy := exporting()
	var lost *sdkparts.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed != wantUnflushed {
		t.Fatalf("Shutdown = %v, want a *LostRecordsError with %d unflushed records", err, wantUnflushed)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown error %v does not name the deadline", err)
	}
	if s.Queued != 0 || s.Exported+s.Dropped != emitted || s.Dropped < wantUnflushed {
		t.Errorf("Stats when Shutdown returned = %+v: want nothing queued and exported + dropped = %d, dropped >= %d", s, emitted, wantUnflushed)
	}
	if len(busy) > 0 {
		t.Errorf("%d goroutines still exporting when Shutdown returned:\n%s", len(busy), strings.Join(busy, "\n\n"))
	}
	return s
}

// TestShutdownDeadlineCutsTheExportAndSettlesStats: the exporter blocks
// until its context ends, with an export in progress when Shutdown starts
// and more records queued behind it.
func TestShutdownDeadlineCutsTheExportAndSettlesStats(t *testing.T) {
	exp := newBlockingExporter(false)
	bp := sdkparts.NewBatchProcessor(exp, sdkparts.WithExportMaxBatchSize(4), sdkparts.WithExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(bp))
	emit(t, lp, 10) // the first batch of 4 starts exporting and blocks
	<-exp.started

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := lp.Shutdown(ctx)
	s := checkFinal(t, bp, err, 10, 10)
	if s.Shutdown != 10 {
		t.Errorf("Stats %+v: want the 10 records lost at shutdown", s)
	}
	close(exp.release) // too late: nothing may export or count any more
	time.Sleep(100 * time.Millisecond)
	if after := bp.Stats(); after != s || exp.exported.Load() != 0 {
		t.Errorf("Stats changed after Shutdown returned: %+v, then %+v (exported %d)", s, after, exp.exported.Load())
	}
}

// TestShutdownDeadlineWithAHangingCollector: the real OTLP/gRPC exporter,
// with retries and a timeout longer than the test, against a real server
// that accepts the request and never answers.
func TestShutdownDeadlineWithAHangingCollector(t *testing.T) {
	srv := otlptest.Start(t)
	srv.Hold()
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(srv.Addr), otlploggrpc.WithInsecure(),
		otlploggrpc.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	bp := sdkparts.NewBatchProcessor(exp, sdkparts.WithExportMaxBatchSize(8), sdkparts.WithExportInterval(time.Hour),
		sdkparts.WithExporterName("otlp"))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(bp))
	emit(t, lp, 20)
	srv.WaitArrived(t) // a batch of 8 is in the server's hands

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err = lp.Shutdown(ctx)
	s := checkFinal(t, bp, err, 20, 20)
	srv.Release()
	time.Sleep(100 * time.Millisecond)
	if after := bp.Stats(); after != s {
		t.Errorf("Stats changed after Shutdown returned: %+v, then %+v", s, after)
	}
}

// TestShutdownDeadlineWithAnExporterThatIgnoresCancellation: Shutdown
// still returns, a short grace after its deadline, with final Stats; the
// export that finishes later changes nothing.
func TestShutdownDeadlineWithAnExporterThatIgnoresCancellation(t *testing.T) {
	exp := newBlockingExporter(true)
	bp := sdkparts.NewBatchProcessor(exp, sdkparts.WithExportMaxBatchSize(4), sdkparts.WithExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(bp))
	emit(t, lp, 6)
	<-exp.started

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- lp.Shutdown(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second): // a hang detector, not a timing assertion
		t.Fatal("Shutdown did not return although its deadline passed")
	}
	var lost *sdkparts.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed != 6 || !strings.Contains(err.Error(), "did not return") {
		t.Fatalf("Shutdown = %v, want a *LostRecordsError with 6 unflushed records that names the stuck export", err)
	}
	s := bp.Stats()
	if s.Queued != 0 || s.Shutdown != 6 || s.Exported != 0 {
		t.Errorf("Stats when Shutdown returned = %+v, want the 6 records lost at shutdown", s)
	}
	close(exp.release)
	deadline := time.Now().Add(30 * time.Second)
	for exp.exported.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if after := bp.Stats(); after != s {
		t.Errorf("the late export changed Stats: %+v, then %+v", s, after)
	}
}

// TestShutdownDeadlineWithManyStuckExporters: however many exporters
// ignore cancellation, one LoggerProvider's Shutdown returns at its
// deadline, not a grace per exporter past it (it took 2.5 s for three
// stuck exporters and a 1 s deadline). The measure is the overrun past
// the deadline, against one shutdown.CancelGrace: the overrun of the old code for
// a single exporter.
func TestShutdownDeadlineWithManyStuckExporters(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		var procs []sdklog.LoggerProviderOption
		var exps []*blockingExporter
		for range n {
			exp := newBlockingExporter(true)
			exps = append(exps, exp)
			bp := sdkparts.NewBatchProcessor(exp, sdkparts.WithExportMaxBatchSize(2), sdkparts.WithExportInterval(time.Hour))
			procs = append(procs, sdklog.WithProcessor(bp))
		}
		lp := sdklog.NewLoggerProvider(procs...)
		emit(t, lp, 4)
		for _, e := range exps {
			<-e.started
		}
		ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
		deadline, _ := ctx.Deadline()
		err := lp.Shutdown(ctx)
		returned := time.Now()
		cancel()
		for _, e := range exps {
			close(e.release)
		}
		if err == nil || !strings.Contains(err.Error(), "did not return") {
			t.Errorf("%d stuck exporters: Shutdown = %v, want the stuck exports named", n, err)
		}
		if over := returned.Sub(deadline); over >= shutdown.CancelGrace {
			t.Errorf("%d stuck exporters: Shutdown returned %v after its deadline, want well under %v", n, over, shutdown.CancelGrace)
		}
	}
}
