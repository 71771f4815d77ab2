package prettyexporter

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/log/logtest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// received is a live exporter on a terminal emulator fed through Received by a real SDK's
// TracerProvider and LoggerProvider, each exporting at once: spans arrive as they end, as OTLP
// brings them to progressotel view.
type received struct {
	t   *testing.T
	e   *LiveExporter
	rec *Received
	out *vtWriter
	tr  trace.Tracer
	lg  log.Logger
}

func newReceived(t *testing.T, maxRows int, opts ...Option) *received {
	out := &vtWriter{t: t, vt: newVT(100, 30), w: 100, h: 30}
	e, err := NewLive(append([]Option{WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(out.size), WithColor(ColorNever), WithoutTime()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	rec := e.Received(maxRows)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(rec))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(rec)))
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return &received{t: t, e: e, rec: rec, out: out, tr: tp.Tracer("sender"), lg: lp.Logger("sender")}
}

// event emits a record with an event name in ctx's span.
func (r *received) event(ctx context.Context, name string) {
	var rec log.Record
	rec.SetEventName(name)
	rec.SetTimestamp(time.Now())
	rec.SetBody(attribute.StringValue(name))
	r.lg.Emit(ctx, rec)
}

// waitFor waits until the terminal's history holds every one of want, each in a line after the
// previous one's, and returns the history.
func (r *received) waitFor(want ...string) []string {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_ = r.e.ForceFlush(context.Background())
		r.out.mu.Lock()
		h := r.out.vt.History()
		r.out.mu.Unlock()
		if inOrder(h, want) {
			return h
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("want lines with %q in order; the terminal holds:\n%s", want, strings.Join(h, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func inOrder(lines, want []string) bool {
	i := 0
	for _, l := range lines {
		if i < len(want) && strings.Contains(l, want[i]) {
			i++
		}
	}
	return i == len(want)
}

func short(s trace.Span) string { return s.SpanContext().SpanID().String()[:8] }

// TestReceivedRowsOpenBeforeTheirSpans: a record opens its span's row, read "span" and the id's
// first digits; a span's unknown parent gets such a row too; each span, when it arrives, names its
// row and moves it under its parent's; the root span becomes the header and ends the tree.
func TestReceivedRowsOpenBeforeTheirSpans(t *testing.T) {
	r := newReceived(t, 0)
	ctx, root := r.tr.Start(context.Background(), "deploy")
	ctx1, apply := r.tr.Start(ctx, "apply")
	ctx2, vm := r.tr.Start(ctx1, "create vm")
	r.event(ctx2, "tool/Step")
	tid := root.SpanContext().TraceID().String()[:8]
	r.waitFor("trace "+tid, "▸ span "+short(vm))
	if h := r.waitFor("▸ span " + short(vm)); strings.Contains(strings.Join(h, "\n"), "create vm") {
		t.Fatal("a row named before its span arrived")
	}

	// The grandchild ends with an error: its row takes its name, under a row for apply, not yet
	// arrived; its end waits for its ancestors' names (or heldGrace), so that the line printed
	// when it collapses names them.
	vm.SetStatus(codes.Error, "quota exceeded")
	vm.End()
	r.waitFor("span "+short(apply), "▸ create vm")
	apply.End()
	r.waitFor("span "+short(root), "apply", "create vm") // still ▸, unless 2 s passed since its end
	time.Sleep(heldGrace)
	r.rec.EndSilent(time.Hour) // the view's ticker
	h := r.waitFor("span "+short(root), "apply", "✗ create vm  failed  quota exceeded")
	if !strings.HasPrefix(h[len(h)-1], "      ✗ create vm") && !strings.HasPrefix(h[len(h)-2], "      ✗ create vm") {
		t.Errorf("create vm is not under apply:\n%s", strings.Join(h, "\n"))
	}
	root.End()
	h = r.waitFor("deploy", "create vm", "quota exceeded")
	last := h[len(h)-1]
	if strings.Contains(last, "▸") {
		t.Errorf("a running row after the root ended:\n%s", strings.Join(h, "\n"))
	}
	// The failure summary names the path in the tree: apply › create vm.
	if !inOrder(h, []string{"deploy", "apply › create vm"}) {
		t.Errorf("no path apply › create vm in the summary:\n%s", strings.Join(h, "\n"))
	}
}

// TestReceivedSilent: a trace whose root never arrives (its parent is another process's span)
// ends as silent, its open rows cancelled.
func TestReceivedSilent(t *testing.T) {
	r := newReceived(t, 0)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{9, 9, 9, 9}, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	ctx, s := r.tr.Start(ctx, "tofu apply")
	r.event(ctx, "tool/Step")
	r.waitFor("trace 01020300", "span "+short(s))
	if n := r.rec.EndSilent(time.Hour); n != 0 {
		t.Fatalf("EndSilent(1h) ended %d trees", n)
	}
	time.Sleep(10 * time.Millisecond)
	if n := r.rec.EndSilent(time.Millisecond); n != 1 {
		t.Fatalf("EndSilent ended %d trees, want 1", n)
	}
	r.waitFor("trace 01020300", "silent for 1ms")
}

// TestReceivedBounds: rows past the limit per trace are counted on screen; a cycle of parents
// (two spans naming each other) neither hangs nor breaks the tree.
func TestReceivedBounds(t *testing.T) {
	r := newReceived(t, 5)
	ctx, root := r.tr.Start(context.Background(), "many")
	for range 20 {
		c, _ := r.tr.Start(ctx, "step")
		r.event(c, "tool/Step")
	}
	r.waitFor("trace", "more")

	tid := trace.TraceID{7}
	a, b := trace.SpanID{1}, trace.SpanID{2}
	mk := func(id, parent trace.SpanID, name string) sdktrace.ReadOnlySpan {
		cfg := trace.SpanContextConfig{TraceID: tid, SpanID: id}
		pcfg := trace.SpanContextConfig{TraceID: tid, SpanID: parent}
		return stubSpan(name, trace.NewSpanContext(cfg), trace.NewSpanContext(pcfg))
	}
	if err := r.rec.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{mk(a, b, "a"), mk(b, a, "b")}); err != nil {
		t.Fatal(err)
	}
	root.End()
	r.waitFor("many")
}

func stubSpan(name string, sc, parent trace.SpanContext) sdktrace.ReadOnlySpan {
	return tracetest.SpanStub{Name: name, SpanContext: sc, Parent: parent, StartTime: time.Now(), EndTime: time.Now()}.Snapshot()
}

// TestReceivedTooManyTraces: past the limit of trees, the least recently updated ends (its final
// state printed) and the count of those cut is printed.
func TestReceivedTooManyTraces(t *testing.T) {
	r := newReceived(t, 0, WithLiveLimits(0, 2))
	var spans []trace.Span
	for _, name := range []string{"one", "two", "three", "four"} {
		ctx, s := r.tr.Start(context.Background(), name)
		r.event(ctx, "tool/Step")
		spans = append(spans, s)
	}
	r.rec.EndSilent(time.Hour)
	h := r.waitFor("… 2 traces ended early: more than 2 at once")
	for _, s := range spans[:2] {
		tid := s.SpanContext().TraceID().String()[:8]
		if !inOrder(h, []string{"⊖ unknown_service:prettyexporter.test  trace " + tid, "cut: more than 2 traces at once", "⊖ span"}) {
			t.Errorf("no final state of the trace %s cut:\n%s", tid, strings.Join(h, "\n"))
		}
	}
	for _, s := range spans[2:] {
		if tid := s.SpanContext().TraceID().String()[:8]; !inOrder(h, []string{"▸ unknown_service:prettyexporter.test  trace " + tid}) {
			t.Errorf("the trace %s is not running:\n%s", tid, strings.Join(h, "\n"))
		}
	}
}

// TestReceivedAnyOrder: spans and records in any order, with parents among each other in any
// shape (cycles, self-parents, parents never sent), keep the model consistent: the node count
// is the rows held, no count is negative, every span row is findable, and nothing panics.
func TestReceivedAnyOrder(t *testing.T) {
	r := newReceived(t, 50)
	rng := rand.New(rand.NewPCG(1, 2))
	ids := func() trace.SpanID { return trace.SpanID{byte(rng.IntN(40)) + 1} }
	for round := range 300 {
		tid := trace.TraceID{byte(rng.IntN(3)) + 1}
		var batch []sdktrace.ReadOnlySpan
		for range rng.IntN(8) {
			var parent trace.SpanContext
			if rng.IntN(4) > 0 {
				parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: ids()})
			}
			batch = append(batch, stubSpan("s", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: ids()}), parent))
		}
		_ = r.rec.ExportSpans(context.Background(), batch)
		var recs []sdklog.Record
		for range rng.IntN(4) {
			f := logtest.RecordFactory{EventName: "x/Y", TraceID: tid, SpanID: ids(), Timestamp: time.Now()}
			recs = append(recs, f.NewRecord())
		}
		_ = r.rec.Export(context.Background(), recs)
		if round%50 == 0 {
			r.rec.EndSilent(time.Nanosecond)
		}
		r.e.mu.Lock()
		m := r.e.model
		rows := 0
		for _, tr := range m.list {
			n := countRows(&tr.root)
			if n > 50 {
				t.Fatalf("round %d: %d rows in a trace, past --max-rows 50", round, n)
			}
			rows += n
			checkCounts(t, &tr.root)
		}
		if rows != m.nodes {
			t.Fatalf("round %d: %d rows in the trees, the model counts %d", round, rows, m.nodes)
		}
		for k, n := range m.spans {
			if n.span != k.span || m.trees[n.tree.key] != n.tree {
				t.Fatalf("round %d: span %v maps to a row that is not its own or not held", round, k)
			}
		}
		r.e.mu.Unlock()
	}
}

func checkCounts(t *testing.T, n *liveNode) {
	for _, c := range n.counts {
		if c < 0 {
			t.Fatalf("row %q: counts %v", n.label, n.counts)
		}
	}
	for k := n.first; k != nil; k = k.next {
		if k.parent != n {
			t.Fatalf("row %q is listed under a row that is not its parent", k.label)
		}
		checkCounts(t, k)
	}
}
