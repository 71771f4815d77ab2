package otlptest

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"go.opentelemetry.io/otel/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

// Operation returns a context for one driver operation: trace n, and a
// tracectx transaction id named after the tenant.
func Operation(t testing.TB, n byte, tenant string) (context.Context, trace.TraceID) {
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

// WaitArrived waits for the next Export call to reach s.
func (s *Server) WaitArrived(t testing.TB) {
	t.Helper()
	select {
	case <-s.Arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("no export reached the server")
	}
}

// DropReport is one common/EventsDropped event as the server received it.
type DropReport struct {
	Count        int64
	Reason       string
	Tenant       string
	Trace        trace.TraceID
	Since, Until time.Time
	TraceCtx     map[string]string
}

// DropReports decodes the EventsDropped reports among recs, checking what
// every report must be: in the progress scope, with the resource named
// service, WARN, outside every operation's sequence, with a valid window.
func DropReports(t testing.TB, recs []Received, service string) []DropReport {
	t.Helper()
	var out []DropReport
	for _, r := range OfType(recs, progress.TypeEventsDropped) {
		d, err := wire.Decode(ProtoRecord{r.Rec})
		if err != nil {
			t.Fatal(err)
		}
		if r.Scope != wire.ScopeName {
			t.Errorf("EventsDropped scope = %q, want %q", r.Scope, wire.ScopeName)
		}
		if service != "" && r.Res["service.name"] != service {
			t.Errorf("EventsDropped resource = %v, want service.name %s", r.Res, service)
		}
		if got := log.Severity(r.Rec.GetSeverityNumber()); got != log.SeverityWarn {
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
		copy(tid[:], r.Rec.GetTraceId())
		out = append(out, DropReport{
			Count: count, Reason: fmt.Sprint(d.Details["reason"]), Tenant: d.Tenant, Trace: tid,
			Since: since, Until: until, TraceCtx: d.TraceCtx,
		})
	}
	return out
}

// ReportedTotal sums the counts of the EventsDropped reports among recs.
func ReportedTotal(t testing.TB, recs []Received) int64 {
	t.Helper()
	var n int64
	for _, r := range DropReports(t, recs, "") {
		n += r.Count
	}
	return n
}

// Sequences returns the progress.sequence numbers received per trace,
// sorted, leaving out the EventsDropped reports.
func Sequences(t testing.TB, recs []Received) map[trace.TraceID][]int64 {
	t.Helper()
	out := map[trace.TraceID][]int64{}
	for _, r := range recs {
		if r.Rec.GetEventName() == progress.TypeEventsDropped {
			continue
		}
		d, err := wire.Decode(ProtoRecord{r.Rec})
		if err != nil {
			continue
		}
		var tid trace.TraceID
		copy(tid[:], r.Rec.GetTraceId())
		out[tid] = append(out[tid], d.Sequence)
	}
	for _, s := range out {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	}
	return out
}

// Missing is what a consumer computes: the sequence numbers absent from
// 1..last.
func Missing(seen []int64, last int64) []int64 {
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

// DropMetric sums the progress.records.dropped metric by reason.
func DropMetric(t testing.TB, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != sdkparts.MetricRecordsDropped {
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
