package prettyexporter

import (
	"context"
	"strings"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// liveOnTerminal is a live exporter on a terminal emulator, fed as otelbridge.Setup feeds it (its
// LogProcessor and SpanProcessor), with a Recorder and a tracer of its own. Its clock stands
// still, so that no wait runs out on a loaded machine: trees end by what is recorded.
func liveOnTerminal(t *testing.T, w, h int) (*LiveExporter, *vtWriter, *progress.Recorder, *sdktrace.TracerProvider) {
	t.Helper()
	out := &vtWriter{t: t, vt: newVT(w, h), w: w, h: h}
	e, err := NewLive(WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(out.size), WithColor(ColorNever), WithoutTime(),
		withClock(&fakeClock{t: t0}))
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

// TestLiveConditionsNoStaleRow: a condition transition recorded after common/OperationCompleted
// (the natural order: docs/transitions.md says to emit once the write is persisted) updates its
// row of the finished tree, with or without a span around the operation; no row reads running
// (▸) under a finished header, no record is printed beside the tree, and a change of the message
// alone reads as a change. A resource with transitions only is one row per condition, its history
// folded, and its header counts the transitions rather than timing an operation.
func TestLiveConditionsNoStaleRow(t *testing.T) {
	e, out, rec, tp := liveOnTerminal(t, 110, 30)
	ctx := context.Background()
	widget := func(id string) progress.Envelope {
		return progress.Envelope{Resource: progress.Resource{Type: "Widget", ID: id, Namespace: "org-acme"}}
	}
	cond := func(status, reason, msg string) progress.Condition {
		return progress.Condition{Status: status, Reason: reason, Message: msg}
	}
	tr := func(ctx context.Context, env progress.Envelope, stream string, prev *progress.Condition, next progress.Condition) {
		t.Helper()
		if err := rec.RecordTransition(ctx, progress.Transition{Stream: stream, Envelope: env, Condition: next, Previous: prev}); err != nil {
			t.Fatal(err)
		}
	}
	record := func(ctx context.Context, env progress.Envelope, ev progress.Event) {
		t.Helper()
		ev.Envelope = env
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	provision := func(ctx context.Context, env progress.Envelope) {
		record(ctx, env, progress.OperationStarted("Provision"))
		creating, booting := cond("False", "Provisioning", "creating the VM"), cond("False", "Provisioning", "waiting for the VM to boot")
		pending, queued := cond("False", "Pending", "queued"), cond("False", "Pending", "waiting for a host")
		tr(ctx, env, progress.StreamProvisioning, nil, creating)
		tr(ctx, env, progress.StreamLifecycle, nil, pending)
		tr(ctx, env, progress.StreamProvisioning, &creating, booting) // the message alone
		tr(ctx, env, progress.StreamLifecycle, &pending, queued)      // the message alone
		record(ctx, env, progress.OperationCompleted("Provision", time.Second))
		tr(ctx, env, progress.StreamProvisioning, &booting, cond("True", "Provisioned", "the widget is ready"))
	}

	// An operation in a span of its own, then one without a span (a tree keyed by its resource).
	sctx, span := tp.Tracer("driver").Start(ctx, "provision widget-1")
	provision(sctx, widget("widget-1"))
	span.End()
	provision(ctx, widget("widget-2"))

	// A controller's object: transitions only, over several reconciles.
	w3 := widget("widget-3")
	steps := []progress.Condition{cond("False", "Provisioning", ""), cond("False", "Provisioning", "almost"), cond("True", "Provisioned", ""), cond("True", "Provisioned", "the widget is ready")}
	var prev *progress.Condition
	for i := range steps {
		tr(ctx, w3, progress.StreamProvisioning, prev, steps[i])
		prev = &steps[i]
	}
	tr(ctx, w3, progress.StreamLifecycle, nil, cond("False", "Stopped", "the widget is stopped"))

	// widget-2's tree, which has no span to end it, ended when the program moved on to widget-3,
	// although the clock has not moved: only widget-3's is left in the live area.
	e.mu.Lock()
	var open []string
	for _, tr := range e.model.list {
		open = append(open, tr.name())
	}
	e.mu.Unlock()
	if len(open) != 1 || open[0] != "Widget/widget-3" {
		t.Errorf("trees still open after the program moved on: %q, want only widget-3's", open)
	}
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
	lines := out.history()
	all := strings.Join(lines, "\n")
	for _, l := range lines {
		switch {
		case strings.Contains(l, glyphRunning):
			t.Errorf("a running row is left on the terminal: %q\n%s", l, all)
		case strings.HasPrefix(strings.TrimSpace(l), "INF"):
			t.Errorf("a record printed beside its tree: %q\n%s", l, all)
		}
	}
	for _, id := range []string{"widget-1", "widget-2"} {
		block := finalBlock(t, lines, "✓ Provision  Widget/"+id)
		mustContain(t, block,
			`  ✓ provisioning  False (Provisioning) → True (Provisioned) "the widget is ready"`,
			`  ◌ lifecycle  False (Pending) "queued" → "waiting for a host"`)
	}
	block := finalBlock(t, lines, "✓ Widget/widget-3")
	mustContain(t, block, "5 transitions",
		`  ✓ provisioning  True (Provisioned) → "the widget is ready"  (4 transitions)`,
		`  ◌ lifecycle  False (Stopped) "the widget is stopped"`)
	if n := strings.Count(all, "Widget/widget-3"); n != 1 {
		t.Errorf("widget-3's tree printed %d times, want once (one tree, not an operation that ends and reopens):\n%s", n, all)
	}
}

// finalBlock returns the lines of the final block whose header starts with header: the header and
// the indented lines below it.
func finalBlock(t *testing.T, lines []string, header string) string {
	t.Helper()
	for i, l := range lines {
		if !strings.HasPrefix(l, header) {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], "  ") {
			j++
		}
		return strings.Join(lines[i:j], "\n")
	}
	t.Errorf("no line starts with %q in:\n%s", header, strings.Join(lines, "\n"))
	return ""
}
