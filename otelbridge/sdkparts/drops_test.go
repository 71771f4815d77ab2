package sdkparts_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// pipeline is a real SDK LoggerProvider: tracectx stamping, then the
// drop-accounting BatchProcessor in front of the real OTLP/gRPC exporter.
type pipeline struct {
	bp     *sdkparts.BatchProcessor
	lp     *sdklog.LoggerProvider
	rec    *progress.Recorder
	reader *sdkmetric.ManualReader
}

func newPipeline(t *testing.T, srv *otlptest.Server, opts ...sdkparts.BatchOption) *pipeline {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	bp := sdkparts.NewBatchProcessor(srv.Exporter(t), append([]sdkparts.BatchOption{
		sdkparts.WithExporterName("otlp"), sdkparts.WithDropMeterProvider(mp),
	}, opts...)...)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "drops-test"))),
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(bp))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp), progress.WithMeterProvider(metricnoop.NewMeterProvider()))
	return &pipeline{bp: bp, lp: lp, rec: rec, reader: reader}
}

func record(t *testing.T, rec *progress.Recorder, ctx context.Context, tenant string, i int) {
	t.Helper()
	evt := progress.Progress(int64(i), 100, "steps")
	evt.Scope = map[string]string{"tenant": tenant}
	if err := rec.Record(ctx, evt); err != nil {
		t.Fatal(err)
	}
}

func TestQueueFullDropsAreCountedAndReportedPerTenantAndTrace(t *testing.T) {
	srv := otlptest.Start(t)
	p := newPipeline(t, srv, sdkparts.WithMaxQueueSize(4), sdkparts.WithExportMaxBatchSize(2),
		sdkparts.WithExportInterval(time.Hour))
	ctxA, traceA := otlptest.Operation(t, 1, "tenant-a")
	ctxB, traceB := otlptest.Operation(t, 2, "tenant-b")

	// The collector stalls: the first batch (A1, A2) is stuck in Export.
	srv.Hold()
	record(t, p.rec, ctxA, "tenant-a", 1)
	record(t, p.rec, ctxA, "tenant-a", 2)
	srv.WaitArrived(t)
	// A3..A8 fill the queue of 4 and push out A3, A4; B1..B6 push out
	// A5..A8, B1, B2. Left queued: B3..B6.
	for i := 3; i <= 8; i++ {
		record(t, p.rec, ctxA, "tenant-a", i)
	}
	for i := 1; i <= 6; i++ {
		record(t, p.rec, ctxB, "tenant-b", i)
	}
	if s := p.bp.Stats(); s.QueueFull != 8 || s.Queued != 4 || s.Dropped != 8 {
		t.Fatalf("while stalled: %+v, want QueueFull 8, Queued 4", s)
	}

	srv.Release()
	recs := srv.WaitFor(t, "6 records and 2 drop reports", func(r []otlptest.Received) bool { return len(r) >= 8 })

	reports := otlptest.DropReports(t, recs, "drops-test")
	sort.Slice(reports, func(i, j int) bool { return reports[i].Tenant < reports[j].Tenant })
	if len(reports) != 2 {
		t.Fatalf("got %d EventsDropped reports, want one per tenant and trace: %+v", len(reports), reports)
	}
	want := []struct {
		tenant string
		trace  trace.TraceID
		count  int64
	}{{"tenant-a", traceA, 6}, {"tenant-b", traceB, 2}}
	for i, w := range want {
		r := reports[i]
		if r.Tenant != w.tenant || r.Trace != w.trace || r.Count != w.count || r.Reason != sdkparts.DropQueueFull {
			t.Errorf("report %d = %+v, want tenant %s, trace %s, count %d, reason %s", i, r, w.tenant, w.trace, w.count, sdkparts.DropQueueFull)
		}
		if r.TraceCtx["transactionid"] != "tx-"+w.tenant {
			t.Errorf("report %d tracectx = %v, want the dropped records' transactionid", i, r.TraceCtx)
		}
	}

	// What a consumer sees: trace B starts at 3, so 1 and 2 are missing,
	// exactly the count of B's report. Trace A's loss is at its tail,
	// where only the report can tell it.
	got := otlptest.Sequences(t, recs)
	if fmt.Sprint(got[traceA]) != "[1 2]" || fmt.Sprint(got[traceB]) != "[3 4 5 6]" {
		t.Fatalf("received sequences A=%v B=%v, want A=[1 2] B=[3 4 5 6]", got[traceA], got[traceB])
	}
	if gap := otlptest.Missing(got[traceB], 6); int64(len(gap)) != reports[1].Count {
		t.Errorf("trace B gap %v does not match its report count %d", gap, reports[1].Count)
	}

	if m := otlptest.DropMetric(t, p.reader); m[sdkparts.DropQueueFull] != 8 || len(m) != 1 {
		t.Errorf("metric %s = %v, want queue_full=8", sdkparts.MetricRecordsDropped, m)
	}
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown after recovery: %v", err)
	}
	if s := p.bp.Stats(); s.Exported != 6 || s.Reported != 8 || s.Queued != 0 || s.Dropped != 8 {
		t.Errorf("final stats %+v, want Exported 6, Reported 8, Dropped 8", s)
	}
}

func TestFailedExportsAreCountedAndReportedAfterRecovery(t *testing.T) {
	srv := otlptest.Start(t)
	srv.RejectNext(2)
	p := newPipeline(t, srv, sdkparts.WithExportMaxBatchSize(2), sdkparts.WithExportInterval(time.Hour))
	ctx, tid := otlptest.Operation(t, 3, "tenant-c")
	for i := 1; i <= 6; i++ {
		record(t, p.rec, ctx, "tenant-c", i)
	}
	recs := srv.WaitFor(t, "the drop report", func(r []otlptest.Received) bool {
		return len(otlptest.OfType(r, progress.TypeEventsDropped)) > 0
	})
	reports := otlptest.DropReports(t, recs, "drops-test")
	if len(reports) != 1 || reports[0].Count != 4 || reports[0].Reason != sdkparts.DropExportFailed ||
		reports[0].Trace != tid || reports[0].Tenant != "tenant-c" {
		t.Fatalf("reports = %+v, want one: 4 records, export_failed, tenant-c", reports)
	}
	if got := otlptest.Sequences(t, recs)[tid]; fmt.Sprint(got) != "[5 6]" {
		t.Errorf("received sequences %v, want [5 6]: a consumer sees 1..4 missing", got)
	}
	if m := otlptest.DropMetric(t, p.reader); m[sdkparts.DropExportFailed] != 4 {
		t.Errorf("metric = %v, want export_failed=4", m)
	}
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.bp.Stats(); s.ExportFailed != 4 || s.Reported != 4 || s.Exported != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestShutdownDeadlineReturnsWhatCouldNotBeFlushed(t *testing.T) {
	srv := otlptest.Start(t)
	srv.Hold() // the collector accepts the connection and never answers
	p := newPipeline(t, srv, sdkparts.WithExportInterval(time.Hour))
	ctx, _ := otlptest.Operation(t, 4, "tenant-d")
	for i := 1; i <= 5; i++ {
		record(t, p.rec, ctx, "tenant-d", i)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := p.lp.Shutdown(sctx)
	var lost *sdkparts.LostRecordsError
	if !errors.As(err, &lost) {
		t.Fatalf("Shutdown past its deadline returned %v, want a *LostRecordsError", err)
	}
	// The cause is the deadline, or the exporter's own DeadlineExceeded
	// when the server gave up a moment earlier.
	if lost.Unflushed != 5 || lost.Cause == nil {
		t.Errorf("LostRecordsError = %+v, want Unflushed 5 and a cause", lost)
	}
	if !strings.Contains(err.Error(), "5 log records could not be flushed") {
		t.Errorf("error text %q does not say how many", err)
	}
	// After shutdown the driver carries on: Record is accepted and
	// discarded.
	if err := p.rec.Record(ctx, progress.Progress(6, 6, "")); err != nil {
		t.Errorf("Record after Shutdown: %v", err)
	}
}

func TestShutdownFlushesEverythingQueued(t *testing.T) {
	srv := otlptest.Start(t)
	p := newPipeline(t, srv, sdkparts.WithExportInterval(time.Hour))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			ctx, _ := otlptest.Operation(t, byte(10+g), fmt.Sprint("t", g))
			for i := range 125 {
				record(t, p.rec, ctx, fmt.Sprint("t", g), i)
			}
		})
	}
	wg.Wait()
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := len(srv.Records()); n != 1000 {
		t.Errorf("server got %d records, want 1000", n)
	}
	if s := p.bp.Stats(); s.Dropped != 0 || s.Exported != 1000 {
		t.Errorf("stats %+v", s)
	}
}

// TestNoRecordIsLostSilently is the accounting invariant under concurrency,
// a small queue, and a collector that rejects and stalls at random: every
// record emitted is either received or counted in a drop report of its own
// trace.
func TestNoRecordIsLostSilently(t *testing.T) {
	srv := otlptest.Start(t)
	p := newPipeline(t, srv, sdkparts.WithMaxQueueSize(64), sdkparts.WithExportMaxBatchSize(16),
		sdkparts.WithExportInterval(2*time.Millisecond))
	const workers, each = 16, 400
	stop := make(chan struct{})
	var chaos sync.WaitGroup
	chaos.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			switch i % 3 {
			case 0:
				srv.RejectNext(2)
			case 1:
				srv.Hold()
				time.Sleep(2 * time.Millisecond)
				srv.Release()
			}
		}
	})
	traces := make([]trace.TraceID, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			ctx, tid := otlptest.Operation(t, byte(32+g), fmt.Sprint("tenant-", g%4))
			traces[g] = tid
			for i := range each {
				record(t, p.rec, ctx, fmt.Sprint("tenant-", g%4), i)
			}
		})
	}
	wg.Wait()
	close(stop)
	chaos.Wait()
	srv.Release()
	srv.RejectNext(0)
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown with a healthy collector: %v", err)
	}

	s := p.bp.Stats()
	if s.Exported+s.Dropped != workers*each {
		t.Fatalf("exported %d + dropped %d != emitted %d", s.Exported, s.Dropped, workers*each)
	}
	t.Logf("stats: %+v", s)
	recs := srv.Records()
	got := otlptest.Sequences(t, recs)
	reported := map[trace.TraceID]int64{}
	var total int64
	for _, r := range otlptest.DropReports(t, recs, "drops-test") {
		reported[r.Trace] += r.Count
		total += r.Count
	}
	if total != s.Dropped || s.Reported != s.Dropped {
		t.Errorf("reports cover %d records (Reported %d), dropped %d", total, s.Reported, s.Dropped)
	}
	for _, tid := range traces {
		if n := int64(len(got[tid])) + reported[tid]; n != each {
			t.Errorf("trace %s: received %d + reported %d != emitted %d", tid, len(got[tid]), reported[tid], each)
		}
	}
}

// BenchmarkOnEmit compares the cost a driver pays per record with this
// processor and with the SDK's BatchProcessor, in front of an exporter that
// discards: "steady" with a queue that never fills, "full" with the default
// queue, which a tight loop overflows (drops are silent in the SDK, counted
// here).
func BenchmarkOnEmit(b *testing.B) {
	var r sdklog.Record
	r.SetEventName("ansible/TaskStarted")
	r.AddAttributes(attribute.String(wire.AttrEventType, wire.EventType),
		attribute.String("progress.details.taskName", "install"), attribute.Int64(wire.AttrSequence, 1))
	for _, queue := range []struct {
		name string
		size int
	}{{"steady", 1 << 16}, {"full", sdkparts.DefaultMaxQueueSize}} {
		for _, c := range []struct {
			name string
			new  func() sdklog.Processor
		}{
			{"otelbridge", func() sdklog.Processor {
				return sdkparts.NewBatchProcessor(nil, sdkparts.WithMaxQueueSize(queue.size))
			}},
			{"sdk", func() sdklog.Processor { return sdklog.NewBatchProcessor(nil, sdklog.WithMaxQueueSize(queue.size)) }},
		} {
			b.Run(queue.name+"/"+c.name, func(b *testing.B) {
				p := c.new()
				defer func() { _ = p.Shutdown(context.Background()) }()
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						_ = p.OnEmit(ctx, &r)
					}
				})
			})
		}
	}
}
