package otelbridge_test

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
	"go.opentelemetry.io/otel/log"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// pipeline is a real SDK LoggerProvider: tracectx stamping, then the
// drop-accounting BatchProcessor in front of the real OTLP/gRPC exporter.
type pipeline struct {
	bp     *otelbridge.BatchProcessor
	lp     *sdklog.LoggerProvider
	rec    *progress.Recorder
	reader *sdkmetric.ManualReader
}

func newPipeline(t *testing.T, srv *otlpServer, opts ...otelbridge.BatchOption) *pipeline {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	bp := otelbridge.NewBatchProcessor(srv.exporter(t), append([]otelbridge.BatchOption{
		otelbridge.WithExporterName("otlp"), otelbridge.WithDropMeterProvider(mp),
	}, opts...)...)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "drops-test"))),
		sdklog.WithProcessor(otelbridge.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(bp))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp), progress.WithMeterProvider(metricnoop.NewMeterProvider()))
	return &pipeline{bp: bp, lp: lp, rec: rec, reader: reader}
}

// dropMetric sums progress.records.dropped by reason.
func dropMetric(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != otelbridge.MetricRecordsDropped {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Fatalf("%s is %T, want a monotonic Int64 sum", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				reason, _ := dp.Attributes.Value("reason")
				out[reason.AsString()] += dp.Value
			}
		}
	}
	return out
}

// operation returns a context for one driver operation: a trace, a tenant
// in tracectx and a transaction id.
func operation(t *testing.T, n byte, tenant string) (context.Context, trace.TraceID) {
	t.Helper()
	tid := trace.TraceID{0xa, n}
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: trace.SpanID{0xb, n}, TraceFlags: trace.FlagsSampled,
	}))
	ctx, err := propagation.WithValue(ctx, "transactionid", "tx-"+tenant)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, tid
}

func waitArrived(t *testing.T, srv *otlpServer) {
	t.Helper()
	select {
	case <-srv.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("no export reached the server")
	}
}

func record(t *testing.T, rec *progress.Recorder, ctx context.Context, tenant string, i int) {
	t.Helper()
	evt := progress.Progress(int64(i), 100, "steps")
	evt.Scope = map[string]string{"tenant": tenant}
	if err := rec.Record(ctx, evt); err != nil {
		t.Fatal(err)
	}
}

type dropReport struct {
	count        int64
	reason       string
	tenant       string
	trace        trace.TraceID
	since, until time.Time
	tracectx     map[string]string
}

func dropReports(t *testing.T, recs []received) []dropReport {
	t.Helper()
	var out []dropReport
	for _, r := range ofType(recs, progress.TypeEventsDropped) {
		d, err := progress.Decode(protoRecord{r.rec})
		if err != nil {
			t.Fatal(err)
		}
		if r.scope != progress.ScopeName {
			t.Errorf("EventsDropped scope = %q, want %q", r.scope, progress.ScopeName)
		}
		if r.res["service.name"] != "drops-test" {
			t.Errorf("EventsDropped resource = %v, want the pipeline's resource", r.res)
		}
		if got := log.Severity(r.rec.GetSeverityNumber()); got != log.SeverityWarn {
			t.Errorf("EventsDropped severity = %v, want WARN", got)
		}
		if d.Sequence != 0 {
			t.Errorf("EventsDropped carries progress.sequence %d; it must not take a number in any operation's sequence", d.Sequence)
		}
		since, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(d.Details["since"]))
		until, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(d.Details["until"]))
		if err1 != nil || err2 != nil || until.Before(since) {
			t.Errorf("EventsDropped window since=%v until=%v (%v, %v)", d.Details["since"], d.Details["until"], err1, err2)
		}
		count, _ := d.Details["count"].(int64)
		var tid trace.TraceID
		copy(tid[:], r.rec.GetTraceId())
		out = append(out, dropReport{
			count: count, reason: fmt.Sprint(d.Details["reason"]), tenant: d.Tenant, trace: tid,
			since: since, until: until, tracectx: d.TraceCtx,
		})
	}
	return out
}

// seqs returns the progress.sequence numbers received per trace, sorted,
// leaving out the EventsDropped reports.
func seqs(t *testing.T, recs []received) map[trace.TraceID][]int64 {
	t.Helper()
	out := map[trace.TraceID][]int64{}
	for _, r := range recs {
		if r.rec.GetEventName() == progress.TypeEventsDropped {
			continue
		}
		d, err := progress.Decode(protoRecord{r.rec})
		if err != nil {
			continue
		}
		var tid trace.TraceID
		copy(tid[:], r.rec.GetTraceId())
		out[tid] = append(out[tid], d.Sequence)
	}
	for _, s := range out {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	}
	return out
}

// missing is what a consumer computes: the sequence numbers absent from
// 1..max(seen, last).
func missing(seen []int64, last int64) []int64 {
	have := map[int64]bool{}
	for _, s := range seen {
		have[s] = true
	}
	var out []int64
	for i := int64(1); i <= last; i++ {
		if !have[i] {
			out = append(out, i)
		}
	}
	return out
}

func TestQueueFullDropsAreCountedAndReportedPerTenantAndTrace(t *testing.T) {
	srv := startOTLPServer(t)
	p := newPipeline(t, srv, otelbridge.WithMaxQueueSize(4), otelbridge.WithExportMaxBatchSize(2),
		otelbridge.WithExportInterval(time.Hour))
	ctxA, traceA := operation(t, 1, "tenant-a")
	ctxB, traceB := operation(t, 2, "tenant-b")

	// The collector stalls: the first batch (A1, A2) is stuck in Export.
	srv.hold()
	record(t, p.rec, ctxA, "tenant-a", 1)
	record(t, p.rec, ctxA, "tenant-a", 2)
	waitArrived(t, srv)
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

	srv.release()
	recs := srv.waitFor(t, "6 records and 2 drop reports", func(r []received) bool { return len(r) >= 8 })

	reports := dropReports(t, recs)
	sort.Slice(reports, func(i, j int) bool { return reports[i].tenant < reports[j].tenant })
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
		if r.tenant != w.tenant || r.trace != w.trace || r.count != w.count || r.reason != otelbridge.DropQueueFull {
			t.Errorf("report %d = %+v, want tenant %s, trace %s, count %d, reason %s", i, r, w.tenant, w.trace, w.count, otelbridge.DropQueueFull)
		}
		if r.tracectx["transactionid"] != "tx-"+w.tenant {
			t.Errorf("report %d tracectx = %v, want the dropped records' transactionid", i, r.tracectx)
		}
	}

	// What a consumer sees: trace B starts at 3, so 1 and 2 are missing,
	// exactly the count of B's report. Trace A's loss is at its tail,
	// where only the report can tell it.
	got := seqs(t, recs)
	if fmt.Sprint(got[traceA]) != "[1 2]" || fmt.Sprint(got[traceB]) != "[3 4 5 6]" {
		t.Fatalf("received sequences A=%v B=%v, want A=[1 2] B=[3 4 5 6]", got[traceA], got[traceB])
	}
	if gap := missing(got[traceB], 6); int64(len(gap)) != reports[1].count {
		t.Errorf("trace B gap %v does not match its report count %d", gap, reports[1].count)
	}

	if m := dropMetric(t, p.reader); m[otelbridge.DropQueueFull] != 8 || len(m) != 1 {
		t.Errorf("metric %s = %v, want queue_full=8", otelbridge.MetricRecordsDropped, m)
	}
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown after recovery: %v", err)
	}
	if s := p.bp.Stats(); s.Exported != 6 || s.Reported != 8 || s.Queued != 0 || s.Dropped != 8 {
		t.Errorf("final stats %+v, want Exported 6, Reported 8, Dropped 8", s)
	}
}

func TestFailedExportsAreCountedAndReportedAfterRecovery(t *testing.T) {
	srv := startOTLPServer(t)
	srv.rejectNext(2)
	p := newPipeline(t, srv, otelbridge.WithExportMaxBatchSize(2), otelbridge.WithExportInterval(time.Hour))
	ctx, tid := operation(t, 3, "tenant-c")
	for i := 1; i <= 6; i++ {
		record(t, p.rec, ctx, "tenant-c", i)
	}
	recs := srv.waitFor(t, "the drop report", func(r []received) bool {
		return len(ofType(r, progress.TypeEventsDropped)) > 0
	})
	reports := dropReports(t, recs)
	if len(reports) != 1 || reports[0].count != 4 || reports[0].reason != otelbridge.DropExportFailed ||
		reports[0].trace != tid || reports[0].tenant != "tenant-c" {
		t.Fatalf("reports = %+v, want one: 4 records, export_failed, tenant-c", reports)
	}
	if got := seqs(t, recs)[tid]; fmt.Sprint(got) != "[5 6]" {
		t.Errorf("received sequences %v, want [5 6]: a consumer sees 1..4 missing", got)
	}
	if m := dropMetric(t, p.reader); m[otelbridge.DropExportFailed] != 4 {
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
	srv := startOTLPServer(t)
	srv.hold() // the collector accepts the connection and never answers
	p := newPipeline(t, srv, otelbridge.WithExportInterval(time.Hour))
	ctx, _ := operation(t, 4, "tenant-d")
	for i := 1; i <= 5; i++ {
		record(t, p.rec, ctx, "tenant-d", i)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := p.lp.Shutdown(sctx)
	var lost *otelbridge.LostRecordsError
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
	srv := startOTLPServer(t)
	p := newPipeline(t, srv, otelbridge.WithExportInterval(time.Hour))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			ctx, _ := operation(t, byte(10+g), fmt.Sprint("t", g))
			for i := range 125 {
				record(t, p.rec, ctx, fmt.Sprint("t", g), i)
			}
		})
	}
	wg.Wait()
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := len(srv.records()); n != 1000 {
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
	srv := startOTLPServer(t)
	p := newPipeline(t, srv, otelbridge.WithMaxQueueSize(64), otelbridge.WithExportMaxBatchSize(16),
		otelbridge.WithExportInterval(2*time.Millisecond))
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
				srv.rejectNext(2)
			case 1:
				srv.hold()
				time.Sleep(2 * time.Millisecond)
				srv.release()
			}
		}
	})
	traces := make([]trace.TraceID, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			ctx, tid := operation(t, byte(32+g), fmt.Sprint("tenant-", g%4))
			traces[g] = tid
			for i := range each {
				record(t, p.rec, ctx, fmt.Sprint("tenant-", g%4), i)
			}
		})
	}
	wg.Wait()
	close(stop)
	chaos.Wait()
	srv.release()
	srv.rejectNext(0)
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown with a healthy collector: %v", err)
	}

	s := p.bp.Stats()
	if s.Exported+s.Dropped != workers*each {
		t.Fatalf("exported %d + dropped %d != emitted %d", s.Exported, s.Dropped, workers*each)
	}
	t.Logf("stats: %+v", s)
	recs := srv.records()
	got := seqs(t, recs)
	reported := map[trace.TraceID]int64{}
	var total int64
	for _, r := range dropReports(t, recs) {
		reported[r.trace] += r.count
		total += r.count
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
	r.AddAttributes(attribute.String(progress.AttrEventType, progress.EventType),
		attribute.String("progress.details.taskName", "install"), attribute.Int64(progress.AttrSequence, 1))
	for _, queue := range []struct {
		name string
		size int
	}{{"steady", 1 << 16}, {"full", otelbridge.DefaultMaxQueueSize}} {
		for _, c := range []struct {
			name string
			new  func() sdklog.Processor
		}{
			{"otelbridge", func() sdklog.Processor {
				return otelbridge.NewBatchProcessor(nil, otelbridge.WithMaxQueueSize(queue.size))
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
