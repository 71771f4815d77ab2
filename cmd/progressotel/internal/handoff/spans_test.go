package handoff

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/prettyexporter"
)

// sinkSpans keeps what a span processor was given.
type sinkSpans struct {
	mu     sync.Mutex
	events []string
}

func (s *sinkSpans) add(e string) { s.mu.Lock(); s.events = append(s.events, e); s.mu.Unlock() }

func (s *sinkSpans) OnStart(_ context.Context, sp sdktrace.ReadWriteSpan) {
	s.add("start " + sp.Name() + " parent=" + sp.Parent().SpanID().String() + " id=" + sp.SpanContext().SpanID().String())
}

func (s *sinkSpans) OnEnd(sp sdktrace.ReadOnlySpan) {
	e := "end id=" + sp.SpanContext().SpanID().String() + " " + sp.Status().Code.String() + " " + sp.Status().Description
	for _, kv := range sp.Attributes() {
		e += " " + string(kv.Key) + "=" + kv.Value.String()
	}
	s.add(e)
}
func (*sinkSpans) Shutdown(context.Context) error   { return nil }
func (*sinkSpans) ForceFlush(context.Context) error { return nil }

// TestSpansHandedOver: a nested run's real SDK spans reach the enclosing
// run's span processor over the socket, in order, with their parents,
// status and progress.outcome; other requests still reach the handler.
func TestSpansHandedOver(t *testing.T) {
	sink := &sinkSpans{}
	var other []string
	s := startServer(t, WithSpans(func(_ context.Context, req []byte) error { other = append(other, string(req)); return nil }, sink))

	fwd := NewSpanForwarder(s.Path())
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(fwd))
	tracer := tp.Tracer("nested")
	ctx, run := tracer.Start(context.Background(), "Install")
	_, task := tracer.Start(ctx, "task Migrate")
	task.SetAttributes(attribute.String(outcome.Key, outcome.Ignored))
	task.End()
	run.SetStatus(codes.Error, "exit 2")
	run.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := Send(s.Path(), []byte(`{"v":1,"kind":"event"}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	rid, tid := run.SpanContext().SpanID().String(), task.SpanContext().SpanID().String()
	want := []string{
		"start Install parent=0000000000000000 id=" + rid,
		"start task Migrate parent=" + rid + " id=" + tid,
		"end id=" + tid + " Unset  progress.outcome=ignored",
		"end id=" + rid + " Error exit 2",
	}
	if strings.Join(sink.events, "\n") != strings.Join(want, "\n") {
		t.Errorf("the run's processor got\n%s\nwant\n%s", strings.Join(sink.events, "\n"), strings.Join(want, "\n"))
	}
	if len(other) != 1 || fwd.Dropped() != 0 {
		t.Errorf("other requests %q, dropped %d", other, fwd.Dropped())
	}
}

// TestSpansIntoTheLiveView: the enclosing run's live view draws a nested
// run's spans as rows of its own tree: the nested run under the run's
// span, the nested run's task under it, its failure in the summary.
func TestSpansIntoTheLiveView(t *testing.T) {
	var out testutil.SyncBuffer
	live, _ := prettyexporter.NewLive(prettyexporter.WithWriter(&out), prettyexporter.WithLiveMode(prettyexporter.LivePlain))
	s := startServer(t, WithSpans(func(context.Context, []byte) error { return nil }, live.SpanProcessor()))

	outer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(live.SpanProcessor()))
	_, run := outer.Tracer("outer").Start(context.Background(), "deploy")

	// The child process: its spans in the run's trace (TRACEPARENT),
	// handed over.
	fwd := NewSpanForwarder(s.Path())
	child := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(fwd))
	cctx := trace.ContextWithRemoteSpanContext(context.Background(), run.SpanContext())
	nctx, nested := child.Tracer("nested").Start(cctx, "migrate")
	_, step := child.Tracer("nested").Start(nctx, "task Migrate the schema")
	step.SetStatus(codes.Error, "migration 42 failed")
	step.End()
	nested.SetStatus(codes.Error, "migrate exit 3")
	nested.End()
	if err := child.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	run.SetStatus(codes.Error, "a step failed")
	run.End()
	if err := live.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "✗ migrate › task Migrate the schema  failed\n      migration 42 failed"; !strings.Contains(out.String(), want) {
		t.Errorf("missing %q in\n%s", want, out.String())
	}
}

// TestCollapsedSpanIsNotHandedOver: a span Collapse names (a nested run's
// own CLIENT span) is not handed over, and its children are handed over as
// children of its parent.
func TestCollapsedSpanIsNotHandedOver(t *testing.T) {
	sink := &sinkSpans{}
	s := startServer(t, WithSpans(func(context.Context, []byte) error { return nil }, sink))
	fwd := NewSpanForwarder(s.Path())
	fwd.Collapse = func(sp sdktrace.ReadOnlySpan) bool { return sp.SpanKind() == trace.SpanKindClient }
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(fwd))
	tracer := tp.Tracer("nested")
	outer, outerSpan := tracer.Start(context.Background(), "Deploy")
	ctx, client := tracer.Start(outer, "sh", trace.WithSpanKind(trace.SpanKindClient))
	_, op := tracer.Start(ctx, "build")
	op.End()
	client.End()
	outerSpan.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	oid, bid := outerSpan.SpanContext().SpanID().String(), op.SpanContext().SpanID().String()
	want := []string{
		"start Deploy parent=0000000000000000 id=" + oid,
		"start build parent=" + oid + " id=" + bid,
		"end id=" + bid + " Unset ",
		"end id=" + oid + " Unset ",
	}
	if strings.Join(sink.events, "\n") != strings.Join(want, "\n") {
		t.Errorf("the run's processor got\n%s\nwant\n%s", strings.Join(sink.events, "\n"), strings.Join(want, "\n"))
	}
}
