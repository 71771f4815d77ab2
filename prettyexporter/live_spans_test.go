package prettyexporter

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// spanKit makes real SDK spans (sdktrace, through the pipeline's journal)
// at fixed times, in the shapes the adapters' contract describes: the
// adapter sets progress.outcome where the status cannot say it, and
// Error only for a failure that counts.
type spanKit struct {
	t  *testing.T
	p  *pipeline
	tr trace.Tracer
}

func newSpanKit(t *testing.T) *spanKit {
	p := newPipeline(t)
	return &spanKit{t: t, p: p, tr: p.tp.Tracer("contract")}
}

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func (k *spanKit) start(ctx context.Context, name string, sec float64) (context.Context, trace.Span) {
	return k.tr.Start(ctx, name, trace.WithTimestamp(at(sec)))
}

// end ends s at sec with the outcome out ("" for none) and, for a failure
// that counts, status Error with desc.
func end(s trace.Span, sec float64, out string, errDesc string) {
	if out != "" {
		s.SetAttributes(attribute.String(outcome.Key, out))
	}
	if errDesc != "" {
		s.SetStatus(codes.Error, errDesc)
	}
	s.End(trace.WithTimestamp(at(sec)))
}

func (k *spanKit) record(ctx context.Context, e progress.Event, sec float64) {
	k.t.Helper()
	e.Time = at(sec)
	if err := k.p.rec.Record(ctx, e); err != nil {
		k.t.Fatal(err)
	}
}

// final replays the steps into a terminal model of width columns and
// returns every line printed above it, the final block and the failure
// summary included (colourless).
func (k *spanKit) final(width int) string {
	m := testModel(false)
	m.r.width = width
	steps := k.p.kept.Steps()
	var f liveFrame
	for i := range steps {
		applyStep(m.liveModel, &steps[i], steps[i].when())
		m.frame(&f, steps[i].when(), width, 40, false)
		checkFrame(k.t, &f, width, 40)
	}
	m.endAll(at(1000))
	q := m.take()
	for _, l := range splitLines(q) {
		if w := displayWidth([]byte(l)); w >= width && !strings.Contains(l, "=") {
			k.t.Errorf("line %q is %d columns on a terminal of %d", l, w, width)
		}
	}
	return string(q)
}

func mustContain(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in:\n%s", w, out)
		}
	}
}

func mustNotContain(t *testing.T, out string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(out, b) {
			t.Errorf("%q in:\n%s", b, out)
		}
	}
}

// TestLiveSpansGoDriver: a Go driver's own nested spans are the tree, with
// no code of the view's for them: steps under the operation, sub-steps
// under steps, a failed sub-step with its error in the summary.
func TestLiveSpansGoDriver(t *testing.T) {
	k := newSpanKit(t)
	ctx, run := k.start(k.p.ctx, "deploy", 0)
	k.record(ctx, progress.OperationStarted("Deploy"), 0)
	s1, step1 := k.start(ctx, "download image", 0.1)
	_, a := k.start(s1, "fetch layer 1", 0.2)
	end(a, 0.5, "", "")
	_, b := k.start(s1, "fetch layer 2", 0.5)
	end(b, 0.9, outcome.Changed, "")
	end(step1, 1, "", "")
	s2, step2 := k.start(ctx, "boot the VM", 1)
	_, c := k.start(s2, "attach the volume", 1.1)
	k.record(trace.ContextWithSpan(s2, c), progress.Event{Type: "mydriver/VolumeError", Severity: log.SeverityError,
		Details: map[string]any{"error": "volume vol-7 is attached elsewhere"}}, 1.4)
	end(c, 1.5, "", "attach failed")
	end(step2, 1.6, "", "a sub-step failed")
	k.record(ctx, progress.OperationFailed("Deploy", "INTERNAL_ERROR", "boot failed"), 1.7)
	end(run, 1.7, "", "boot failed")

	out := k.final(100)
	mustContain(t, out,
		"✓ download image  1 changed · 1 ok", // the step, its sub-steps counted
		"  ✗ boot the VM  1 failed",
		"    ✗ attach the volume  failed  volume vol-7 is attached elsewhere",
		"✗ Deploy failed: 1 failure",
		"  ✗ boot the VM › attach the volume  failed\n      volume vol-7 is attached elsewhere")
	mustNotContain(t, out, "▸", "running")
}

// TestLiveSpansRescued: a task that fails inside a block and is rescued
// (its span outcome rescued, the play's not an error): the play and the
// operation are not failures, the task row says "rescued" with its own glyph (↺, not ✗), and no
// failure summary is printed.
func TestLiveSpansRescued(t *testing.T) {
	k := newSpanKit(t)
	ctx, pb := k.start(k.p.ctx, "playbook site.yml", 0)
	k.record(ctx, progress.OperationStarted("Install"), 0)
	pctx, play := k.start(ctx, "play Install", 0.1)
	tctx, task := k.start(pctx, "task Install the package", 0.2)
	hctx, host := k.start(tctx, "host web-1", 0.2)
	k.record(hctx, progress.Event{Type: "ansible/TaskFailedOnHost", Severity: log.SeverityWarn,
		Details: map[string]any{"taskResult": map[string]any{"msg": "No package matching 'nginx-x'"}, "rescued": true}}, 0.6)
	end(host, 0.6, outcome.Rescued, "")
	end(task, 0.6, outcome.Rescued, "")
	tctx2, task2 := k.start(pctx, "task Install from the mirror", 0.7)
	_, host2 := k.start(tctx2, "host web-1", 0.7)
	end(host2, 1.2, outcome.Changed, "")
	end(task2, 1.2, outcome.Changed, "")
	end(play, 1.3, "", "")
	k.record(ctx, progress.OperationCompleted("Install", 1300*time.Millisecond), 1.3)
	end(pb, 1.3, "", "")

	out := k.final(100)
	mustContain(t, out, "✓ Install", "done 1.3s",
		"  ✓ play Install  1 rescued · 1 changed",
		"    ↺ task Install the package  1 rescued",
		"      ↺ host web-1  rescued  No package matching 'nginx-x'")
	mustNotContain(t, out, "failed:", "1 failed", "✗ play", "✗ Install", "▸")
}

// TestLiveSpansIgnored: failures ignored by ignore_errors, with no_log
// too (no message at all): "ignored" with its own glyph (↯), never "failed", and the
// play goes on.
func TestLiveSpansIgnored(t *testing.T) {
	k := newSpanKit(t)
	ctx, pb := k.start(k.p.ctx, "playbook site.yml", 0)
	k.record(ctx, progress.OperationStarted("Install"), 0)
	pctx, play := k.start(ctx, "play Install", 0.1)
	tctx, task := k.start(pctx, "task Probe the secrets", 0.2)
	for i, h := range []string{"host web-1", "host web-2"} {
		_, host := k.start(tctx, h, 0.2)
		end(host, 0.5+float64(i)/10, outcome.Ignored, "") // no_log: no message, no error status
	}
	end(task, 0.7, outcome.Ignored, "")
	end(play, 0.8, "", "")
	k.record(ctx, progress.OperationCompleted("Install", 800*time.Millisecond), 0.8)
	end(pb, 0.8, "", "")

	out := k.final(100)
	mustContain(t, out, "✓ Install", "  ✓ play Install  1 ignored", "    ↯ task Probe the secrets  2 ignored")
	mustNotContain(t, out, "failed:", " failed ", "2 failed", "▸")
}

// TestLiveSpansFreeStrategy: under strategy: free each host starts a task
// when it is ready: one task span, its hosts under it, the next task's
// hosts starting while the first task's last host still runs. Each host
// row is under its task, and nothing runs after the run.
func TestLiveSpansFreeStrategy(t *testing.T) {
	k := newSpanKit(t)
	ctx, pb := k.start(k.p.ctx, "playbook free.yml", 0)
	k.record(ctx, progress.OperationStarted("Install"), 0)
	pctx, play := k.start(ctx, "play Free", 0)
	actx, ta := k.start(pctx, "task A", 0.1)
	_, a1 := k.start(actx, "host fast", 0.1)
	_, a2 := k.start(actx, "host slow", 0.1)
	end(a1, 0.2, outcome.Changed, "")
	bctx, tb := k.start(pctx, "task B", 0.2) // fast is on B while slow is still on A
	_, b1 := k.start(bctx, "host fast", 0.2)

	m := testModel(false)
	replay(m, k.p.kept.Steps())
	var f liveFrame
	m.frame(&f, at(0.3), 100, 40, false)
	var rows []string
	for i := 0; i < f.Len(); i++ {
		rows = append(rows, strings.TrimRight(string(f.Row(i)), " "))
	}
	frame := strings.Join(rows, "\n")
	mustContain(t, frame, "    ▸ task A  1 changed", "      ▸ host slow", "    ▸ task B", "      ▸ host fast")
	if strings.Index(frame, "host slow") > strings.Index(frame, "task B") {
		t.Errorf("the slow host's row is not under task A:\n%s", frame)
	}

	end(a2, 0.9, outcome.OK, "")
	end(ta, 0.9, outcome.Changed, "")
	end(b1, 1.0, outcome.OK, "")
	_, b2 := k.start(bctx, "host slow", 0.9)
	end(b2, 1.1, outcome.Changed, "")
	end(tb, 1.1, outcome.Changed, "")
	end(play, 1.2, "", "")
	k.record(ctx, progress.OperationCompleted("Install", 1200*time.Millisecond), 1.2)
	end(pb, 1.2, "", "")
	out := k.final(100)
	mustContain(t, out, "✓ task A  1 changed · 1 ok", "✓ task B  1 changed · 1 ok", "✓ Install")
	mustNotContain(t, out, "▸ task", "running")
	if strings.Count(out, "task A") != 1 {
		t.Errorf("task A has more than one row:\n%s", out)
	}
}

// TestLiveSpansCancelled: a cancelled run, whether the adapter ends its
// spans as cancelled or leaves some open: every row ends with the run,
// none is left "running" under the failed header.
func TestLiveSpansCancelled(t *testing.T) {
	k := newSpanKit(t)
	ctx, pb := k.start(k.p.ctx, "playbook sleep.yml", 0)
	k.record(ctx, progress.OperationStarted("Install"), 0)
	pctx, play := k.start(ctx, "play Sleep", 0)
	tctx, task := k.start(pctx, "task Sleep long", 0.1)
	_, h1 := k.start(tctx, "host web-1", 0.1)
	k.start(tctx, "host web-2", 0.1) // never ended
	end(h1, 4, outcome.Cancelled, "")
	end(task, 4, outcome.Cancelled, "")
	end(play, 4, outcome.Cancelled, "")
	k.record(ctx, progress.OperationFailed("Install", "CANCELLED", "the run was cancelled"), 4)
	end(pb, 4, outcome.Cancelled, "the run was cancelled")

	out := k.final(100)
	mustContain(t, out, "✗ Install", "failed 4.0s", "CANCELLED: the run was cancelled",
		"      ⊖ host web-1  cancelled", "      ⊖ host web-2  cancelled", "✗ Install failed: 2 failures")
	mustNotContain(t, out, "▸", "running")
}

// TestLiveSpansWideDestroy: a destroy of 50 resources at 120 columns, as
// the adapter reports it (refreshes ok, deletes changed): a few collapsed
// lines for each, the refreshes not using up the deletes' lines, then
// only counts, no row left for the final block, and no line wider than
// the terminal.
func TestLiveSpansWideDestroy(t *testing.T) {
	k := newSpanKit(t)
	ctx, run := k.start(k.p.ctx, "tofu destroy", 0)
	k.record(ctx, progress.OperationStarted("Destroy"), 0)
	name := func(i int) string {
		return "module.cluster.aws_instance.worker_node_with_a_long_name[" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "]"
	}
	for i := range 50 {
		_, s := k.start(ctx, "refresh "+name(i), float64(i)/100)
		end(s, float64(i)/100+0.005, outcome.OK, "")
	}
	for i := range 50 {
		_, s := k.start(ctx, "delete "+name(i), 1+float64(i)/10)
		end(s, 1+float64(i)/10+0.05, outcome.Changed, "")
		k.record(ctx, progress.Progress(int64(i+1), 50, "resources"), 1+float64(i)/10+0.05)
	}
	k.record(ctx, progress.OperationCompleted("Destroy", 6*time.Second), 6)
	end(run, 6, "", "")
	out := k.final(120)
	for _, what := range []string{"✓ refresh ", "✓ delete "} {
		if n := strings.Count(out, what); n != maxCollapsedLeaves {
			t.Errorf("%d collapsed lines %q, want %d:\n%s", n, what, maxCollapsedLeaves, out)
		}
	}
	mustContain(t, out, "in all:  50 changed · 50 ok", "50/50 resources")
	if n := len(splitLines([]byte(out))); n > 2*maxCollapsedLeaves+3 {
		t.Errorf("%d lines:\n%s", n, out)
	}
}

// TestLiveSpansWrappedOperation: a tool's operation span under a driver's
// (or the CLI's) span, the operation recorded in it: its parts print
// their collapsed lines as the head's would, their own parts (a
// resource's provisioner) none; the operation's row collapses with its
// counts.
func TestLiveSpansWrappedOperation(t *testing.T) {
	k := newSpanKit(t)
	ctx, drv := k.start(k.p.ctx, "Install", 0)
	octx, op := k.start(ctx, "tofu apply", 0)
	k.record(octx, progress.OperationStarted("Install"), 0)
	rctx, r := k.start(octx, "create terraform_data.network", 0.1)
	_, prov := k.start(rctx, "provision local-exec", 0.1)
	end(prov, 0.2, outcome.OK, "")
	end(r, 0.3, outcome.Changed, "")
	_, db := k.start(octx, "create terraform_data.database", 0.3)
	end(db, 0.4, outcome.Changed, "")
	k.record(octx, progress.OperationCompleted("Install", 500*time.Millisecond), 0.5)
	end(op, 0.5, outcome.Changed, "")
	end(drv, 0.5, "", "")
	out := k.final(100)
	mustContain(t, out, "  ✓ create terraform_data.network  changed  1 ok", "  ✓ create terraform_data.database  changed",
		"✓ tofu apply  2 changed", "✓ Install")
	mustNotContain(t, out, "provision local-exec", "▸")
	if n := strings.Count(out, "create terraform_data.network"); n != 1 {
		t.Errorf("the resource printed %d times:\n%s", n, out)
	}
}

// TestLiveSpansHeadEndsTree: with records fed by LogProcessor, an
// operation's tree ends with its head span (a driver's span around a
// tool's operation span, which records the operation's end): its final
// state is in the scrollback before the next operation's lines, at the
// width it had, whatever the terminal does next.
func TestLiveSpansHeadEndsTree(t *testing.T) {
	const width, height = 100, 20
	out := &vtWriter{t: t, vt: newVT(width, height), w: width, h: height}
	e, _ := NewLive(WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(out.size), WithColor(ColorNever))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(e.LogProcessor()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.SpanProcessor()))
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
	tr := tp.Tracer("driver")
	for _, op := range []string{"Install", "Uninstall"} {
		ctx, drv := tr.Start(context.Background(), op)
		octx, span := tr.Start(ctx, "tofu "+op)
		if err := rec.Record(octx, progress.OperationStarted(op)); err != nil {
			t.Fatal(err)
		}
		_, r := tr.Start(octx, op+" terraform_data.network")
		r.SetAttributes(attribute.String(outcome.Key, outcome.Changed))
		r.End()
		if err := rec.Record(octx, progress.OperationCompleted(op, time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		span.SetAttributes(attribute.String(outcome.Key, outcome.Changed))
		span.End()
		drv.End()
	}
	_ = tp.Shutdown(context.Background())
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	hist := strings.Join(out.history(), "\n")
	final, next := strings.Index(hist, "✓ Install  trace"), strings.Index(hist, "Uninstall terraform_data.network")
	if final < 0 || next < 0 || final > next {
		t.Errorf("the first operation's final state is not before the second's lines:\n%s", hist)
	}
}
