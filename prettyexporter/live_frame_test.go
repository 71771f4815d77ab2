package prettyexporter

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

var updateLive = flag.Bool("live.update", false, "rewrite testdata/live/*.golden")

// frameSize is a terminal size of a golden file.
type frameSize struct{ w, h int }

// goldenFrames replays records into a fresh model per size and writes,
// every `every` records and after the last, what was printed above the
// live area since the previous checkpoint and the live area itself, as
// the pure frame function renders it 1.5 s after the record. It checks
// the bounds of every frame on the way, and compares the whole with
// testdata/live/<name>.golden.
func goldenFrames(t *testing.T, name string, recs []step, every int, sizes ...frameSize) {
	t.Helper()
	var out bytes.Buffer
	for _, sz := range sizes {
		fmt.Fprintf(&out, "### %dx%d\n", sz.w, sz.h)
		m := testModel(false)
		var f liveFrame
		m.r.width = sz.w
		for i := range recs {
			applyStep(m.liveModel, &recs[i], recs[i].when())
			if (i+1)%every != 0 && i != len(recs)-1 {
				continue
			}
			now := recs[i].when().Add(1500 * time.Millisecond)
			m.closeDue(now)
			m.frame(&f, now, sz.w, sz.h, false)
			checkFrame(t, &f, sz.w, sz.h)
			fmt.Fprintf(&out, "## after step %d (%s)\n", i+1, recs[i].what())
			if q := m.take(); len(q) > 0 {
				fmt.Fprintf(&out, "-- printed above\n%s", q)
			}
			fmt.Fprintf(&out, "-- live area\n")
			for j := 0; j < f.Len(); j++ {
				fmt.Fprintf(&out, "%s\n", f.Row(j))
			}
		}
		m.endAll(recs[len(recs)-1].when())
		if q := m.take(); len(q) > 0 {
			fmt.Fprintf(&out, "## at shutdown\n-- printed above\n%s", q)
		}
	}
	compareGolden(t, filepath.Join("testdata", "live", name+".golden"), out.Bytes())
}

// checkFrame checks what a terminal depends on: at most height-1 rows,
// each narrower than the width in display columns, no byte that drives
// the terminal other than the SGR colour codes.
func checkFrame(t testing.TB, f *liveFrame, width, height int) {
	t.Helper()
	if f.Len() > max(0, height-1) {
		t.Fatalf("%d rows for a height of %d", f.Len(), height)
	}
	for i := 0; i < f.Len(); i++ {
		row := f.Row(i)
		if w := displayWidth(row); w >= width {
			t.Fatalf("row %q is %d columns wide on a terminal of %d", row, w, width)
		}
		if bad := controlOutsideSGR(row); bad >= 0 {
			t.Fatalf("row %q: control byte %#x", row, bad)
		}
	}
}

// controlOutsideSGR returns the first control byte of b that is not part
// of an SGR sequence of color.go, or -1.
func controlOutsideSGR(b []byte) int {
	for _, code := range []string{sgrReset, sgrBold, sgrDim, sgrRed, sgrYellow, sgrGreen, sgrCyan} {
		b = bytes.ReplaceAll(b, []byte(code), nil)
	}
	s := string(b)
	for _, r := range s {
		if r < ' ' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return int(r)
		}
	}
	return -1
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateLive {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -live.update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (go test -run %s -live.update rewrites it):\n%s", path, t.Name(), testutil.DiffLines(string(want), string(got)))
	}
}

// TestLiveGoldenAnsible: a real Ansible run (ansible/testdata/streams,
// recorded with ansible-runner) through the ansible adapter: plays, tasks
// and hosts; ok and skipped tasks collapse above; changed, ignored and
// unreachable parts stay with their messages; the final block with the
// recap. At a tall terminal and at a short one, where "… N more" keeps
// the running task in view.
func TestLiveGoldenAnsible(t *testing.T) {
	recs := ansibleRecords(t, "../ansible/testdata/streams/site.jsonl")
	goldenFrames(t, "ansible-site", recs, 12, frameSize{100, 30}, frameSize{72, 10})
}

// TestLiveGoldenTerraform: real OpenTofu applies (terraform/testdata)
// through the terraform adapter: planned resources pending, the N-of-M
// bar from the plan, provisioner output, collapsed resources, errored
// ones with their diagnostics.
func TestLiveGoldenTerraform(t *testing.T) {
	for _, name := range []string{"tofu-apply-create", "tofu-apply-failing", "tofu-destroy"} {
		t.Run(name, func(t *testing.T) {
			recs := terraformRecords(t, "../terraform/testdata/streams/"+name+".jsonl", "Install")
			goldenFrames(t, name, recs, 10, frameSize{100, 20}, frameSize{50, 6})
		})
	}
}

var t0 = time.Date(2026, 11, 29, 14, 3, 0, 0, time.UTC)

// TestLiveGoldenTransitions: condition streams of two resources without
// a span (a controller's reconcile), each a tree of its own keyed by the
// resource, with the last transition; names in CJK and an emoji, which
// take two columns, at widths that cut them.
func TestLiveGoldenTransitions(t *testing.T) {
	p := newPipeline(t)
	ctx := p.ctx
	w1 := progress.Envelope{Resource: progress.Resource{Type: "Widget", ID: "widget-1", Namespace: "org-acme"}}
	w2 := progress.Envelope{Resource: progress.Resource{Type: "Widget", ID: "组件-二号"}}
	tr := func(env progress.Envelope, stream, status, reason, msg string, prev *progress.Condition, sec int) {
		t.Helper()
		if err := p.rec.RecordTransition(ctx, progress.Transition{
			Stream: stream, Envelope: env, Time: t0.Add(time.Duration(sec) * time.Second),
			Condition: progress.Condition{Status: status, Reason: reason, Message: msg}, Previous: prev,
		}); err != nil {
			t.Fatal(err)
		}
	}
	tr(w1, "provisioning", "False", "Provisioning", "", nil, 0)
	tr(w1, "lifecycle", "False", "Pending", "", nil, 0)
	tr(w2, "provisioning", "False", "Provisioning", "正在创建虚拟机 🚀", nil, 1)
	tr(w1, "provisioning", "True", "Provisioned", "the widget is ready", &progress.Condition{Status: "False", Reason: "Provisioning"}, 4)
	tr(w1, "lifecycle", "True", "Running", "", &progress.Condition{Status: "False", Reason: "Pending"}, 4)
	tr(w2, "provisioning", "False", "Errored", "an unexpected error occurred", &progress.Condition{Status: "False", Reason: "Provisioning"}, 6)
	goldenFrames(t, "transitions", p.kept.Steps(), 2, frameSize{90, 12}, frameSize{40, 8}, frameSize{24, 5})
}

// TestLiveGoldenGeneric: a driver the view has no mapping for: its
// operation, its N-of-M bar, its last event as a row, its warnings and
// the program's ordinary logs printed above; several operations at once,
// more than the rows, with hostile names.
func TestLiveGoldenGeneric(t *testing.T) {
	p := newPipeline(t)
	tracer := p.tp.Tracer("test")
	logger := p.lp.Logger("app")
	rec := func(ctx context.Context, e progress.Event, sec int) {
		t.Helper()
		e.Time = t0.Add(time.Duration(sec) * time.Second)
		if err := p.rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var ctxs []context.Context
	names := []string{"Install", "Upgrade \x1b[31mred\x1b[0m", "Scale\u202eevil", strings.Repeat("Very long operation name ", 8), "部署 🚀", "Heal"}
	for i, name := range names {
		ctx, span := tracer.Start(p.ctx, name, trace.WithTimestamp(t0.Add(time.Duration(i)*time.Second)))
		defer span.End()
		ctxs = append(ctxs, ctx)
		e := progress.OperationStarted(name)
		e.Envelope = progress.Envelope{Resource: progress.Resource{Type: "resource::vnf::2.0", ID: fmt.Sprintf("vnf-%d", i)}}
		rec(ctx, e, i)
		rec(ctx, progress.Event{Type: "mydriver/StepStarted", Details: map[string]any{"step": "download image", "attempt": i}}, i)
		rec(ctx, progress.Progress(int64(i), 6, "steps"), i)
	}
	rec(ctxs[1], progress.Event{Type: "mydriver/QuotaLow", Severity: log.SeverityWarn, Details: map[string]any{"left": 2}}, 7)
	var lr log.Record
	lr.SetTimestamp(t0.Add(8 * time.Second))
	lr.SetSeverity(log.SeverityInfo)
	lr.SetBody(attribute.StringValue("connected to the VIM\x07 at 10.0.0.1"))
	logger.Emit(ctxs[0], lr)
	done := progress.OperationCompleted("Install", 9*time.Second)
	rec(ctxs[0], done, 9)
	failed := progress.OperationFailed("Heal", "INTERNAL_ERROR", "the VIM refused the request")
	rec(ctxs[5], failed, 10)
	goldenFrames(t, "generic", p.kept.Steps(), 6, frameSize{100, 30}, frameSize{60, 8}, frameSize{30, 4})
}
