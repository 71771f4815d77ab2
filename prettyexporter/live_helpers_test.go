package prettyexporter

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
	"github.com/progressotel/progressotel/terraform"
)

// seqIDs gives trace and span ids from a counter, so that golden frames
// show the same trace id on every run.
type seqIDs struct {
	mu sync.Mutex
	n  uint64
}

func (g *seqIDs) next() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	return g.n
}

func (g *seqIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	n := g.next()
	binary.BigEndian.PutUint32(tid[:4], 0x7a856149+uint32(n-1)<<12)
	binary.BigEndian.PutUint64(tid[8:], n)
	return tid, g.NewSpanID(context.Background(), tid)
}

func (g *seqIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], g.next())
	return sid
}

// pipeline is the real path of a record: a progress.Recorder through an
// SDK LoggerProvider with the tracectx processor, inside real spans with
// fixed ids, kept as an exporter receives them.
type pipeline struct {
	lp   *sdklog.LoggerProvider
	tp   *sdktrace.TracerProvider
	rec  *progress.Recorder
	kept *journal        // records and span starts and ends, in order
	ctx  context.Context // carries tracectx transactionid tx-7d9b
}

func newPipeline(t testing.TB) *pipeline {
	t.Helper()
	k := &journal{}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(journalLogs{k}),
	)
	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(&seqIDs{}), sdktrace.WithSpanProcessor(journalSpans{k}))
	t.Cleanup(func() {
		_ = lp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	ctx, err := propagation.WithValue(context.Background(), "transactionid", "tx-7d9b")
	if err != nil {
		t.Fatal(err)
	}
	return &pipeline{lp: lp, tp: tp, rec: progress.NewRecorder(progress.WithLoggerProvider(lp)), kept: k, ctx: ctx}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// streamRecords gives a recorded real run to stream, an adapter's
// Stream on a fresh pipeline, and returns the records.
func streamRecords(t testing.TB, file string, stream func(p *pipeline, r io.Reader)) []step {
	t.Helper()
	p := newPipeline(t)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stream(p, f)
	return p.kept.Steps()
}

// ansibleRecords streams a recorded real Ansible run through the ansible
// adapter and returns its records.
func ansibleRecords(t testing.TB, file string) []step {
	t.Helper()
	return streamRecords(t, file, func(p *pipeline, r io.Reader) {
		_, _ = ansible.Stream(p.ctx, r, adapter.WithRecorder(p.rec), adapter.WithTracerProvider(p.tp),
			adapter.WithOperation("Install"), adapter.WithLogger(quiet),
			adapter.WithEnvelope(progress.Envelope{Resource: progress.Resource{Type: "resource::nginx::1.0", ID: "nginx-web-tier"}}))
	})
}

// terraformRecords streams a recorded real OpenTofu run through the
// terraform adapter and returns its records.
func terraformRecords(t testing.TB, file, operation string) []step {
	t.Helper()
	return streamRecords(t, file, func(p *pipeline, r io.Reader) {
		_, _ = terraform.Stream(p.ctx, r, adapter.WithRecorder(p.rec), adapter.WithTracerProvider(p.tp),
			adapter.WithOperation(operation), adapter.WithLogger(quiet),
			adapter.WithEnvelope(progress.Envelope{Resource: progress.Resource{Type: "resource::webapp::1.0", ID: "webapp-demo"}}))
	})
}

// testView is a model and its renderer, the renderer's printer colourless
// and without times, as the golden frames want it.
type testView struct {
	*liveModel
	r *liveRenderer
}

func testModel(plain bool) *testView {
	p := printer{
		pretty: &Exporter{noTime: true, layout: defaultTimeLayout},
		bare:   &Exporter{noTime: true, layout: defaultTimeLayout, noContext: true},
	}
	return &testView{newLiveModel(DefaultLiveMaxNodes, DefaultLiveMaxOperations, plain), newLiveRenderer(p, plain)}
}

// frame renders the live area from a snapshot of the model.
func (v *testView) frame(f *liveFrame, now time.Time, width, height int, color bool) {
	v.snapshot(&v.r.snap)
	v.r.frame(f, &v.r.snap, now, width, height, color)
}

// take renders the notes the model queued and returns the lines.
func (v *testView) take() []byte {
	notes, dropped := v.takeNotes(nil)
	v.r.print(notes, dropped)
	return v.r.p.take(nil)
}

// replay gives the model every step at its own time.
func replay(m *testView, steps []step) {
	for i := range steps {
		applyStep(m.liveModel, &steps[i], steps[i].when())
	}
}
