package adapter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

func TestParseSemconv(t *testing.T) {
	for in, want := range map[string]Semconv{
		"": SemconvOld, "http": SemconvOld, "cicd": SemconvNew, " CICD ,http": SemconvNew,
		"cicd/dup": SemconvDup, "cicd,cicd/dup": SemconvDup, "http/dup,cicd/dup": SemconvDup, "cicdx": SemconvOld,
	} {
		if got := ParseSemconv(in); got != want {
			t.Errorf("ParseSemconv(%q) = %v, want %v", in, got, want)
		}
	}
}

// kit is a configured adapter with recorded spans and metrics.
type kit struct {
	c      *own
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newKit(t *testing.T, opts ...ownOption) *kit {
	t.Helper()
	k := &kit{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader(), c: &own{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(k.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(k.reader))
	Configure(k.c, &k.c.Config, defaults, Shared{}, append(wrap(
		func(c *own) { c.SetRecorder(progresstest.NewSink().Recorder()) },
		func(c *own) { c.SetTracerProvider(tp) },
		func(c *own) { c.SetMeterProvider(mp) },
	), opts...)...)
	return k
}

func attrOf(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// run makes a run with two tasks (one failed) and ends it with result.
func (k *kit) run(result cicdconv.PipelineResultAttr) {
	op := k.c.StartRun(context.Background(), Run{Operation: "Deploy", Pipeline: "site.yml", OldSpan: "playbook site.yml",
		Old: []attribute.KeyValue{attribute.String("tool.playbook", "site.yml")}}, t0, attribute.String("tool.own", "x"))
	for i, out := range []string{outcome.Changed, outcome.Failed} {
		_, span := op.StartTask(op.Ctx, t0, Task{Name: fmt.Sprintf("Install web[%d]", i), ID: fmt.Sprintf("uuid/%d", i),
			Span: "task Install web", OldSpan: fmt.Sprintf("task Install web[%d]", i),
			Old: []attribute.KeyValue{attribute.String("tool.task", "Install")}})
		status := ""
		if out == outcome.Failed {
			status = "failed on 1 host"
		}
		op.EndTask(span, t0.Add(time.Second), out, status)
	}
	if result == cicdconv.PipelineResultSuccess {
		op.Complete(t0, t0.Add(2*time.Second))
	} else {
		op.FailAs(result, t0, t0.Add(2*time.Second), "INFRASTRUCTURE_ERROR", "failed hosts: web", nil)
	}
}

// TestSemconvModes: the old names and kinds by default, the conventions
// with cicd/dup (the own attributes kept) and cicd (the replaced ones
// dropped); the spans pass the conformance check under both.
func TestSemconvModes(t *testing.T) {
	for _, mode := range []Semconv{SemconvOld, SemconvDup, SemconvNew} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			k := newKit(t, func(c *own) { c.SetSemconv(mode) })
			k.run(cicdconv.PipelineResultFailure)
			spans := k.spans.Ended()
			run, task := spans[2], spans[0]
			_, hasOld := attrOf(run, "tool.playbook")
			_, hasOwn := attrOf(run, "tool.own")
			_, hasCICD := attrOf(run, "cicd.pipeline.name")
			_, hasOldTask := attrOf(task, "tool.task")
			switch mode {
			case SemconvOld:
				if run.Name() != "playbook site.yml" || run.SpanKind() != trace.SpanKindInternal || task.Name() != "task Install web[0]" ||
					!hasOld || !hasOldTask || hasCICD {
					t.Errorf("old: run %q %v old %v cicd %v, task %q", run.Name(), run.SpanKind(), hasOld, hasCICD, task.Name())
				}
				if v := progresstest.CICDViolations(spans); len(v) != 1 {
					t.Errorf("old spans: %q, want only 'none carries'", v)
				}
				return
			case SemconvDup:
				if !hasOld || !hasOldTask {
					t.Error("dup: the own attributes a convention replaces are gone")
				}
			case SemconvNew:
				if hasOld || hasOldTask {
					t.Error("new: the own attributes a convention replaces are kept")
				}
			}
			if !hasOwn || run.Name() != "RUN site.yml" || task.Name() != "task Install web" {
				t.Errorf("run %q own %v, task %q", run.Name(), hasOwn, task.Name())
			}
			progresstest.CheckCICDSpans(t, spans)
			if v, _ := attrOf(spans[1], "cicd.pipeline.task.run.result"); v.AsString() != "failure" {
				t.Errorf("failed task: result %q", v.AsString())
			}
			if v, _ := attrOf(spans[1], "error.type"); v.AsString() != outcome.Failed || spans[1].Status().Code != codes.Error {
				t.Errorf("failed task: error.type %q, status %v", v.AsString(), spans[1].Status())
			}
			if v, _ := attrOf(task, "progress.outcome"); v.AsString() != outcome.Changed {
				t.Errorf("changed task: outcome %q", v.AsString())
			}
			if v, _ := attrOf(run, "error.type"); v.AsString() != "INFRASTRUCTURE_ERROR" {
				t.Errorf("run error.type %q, want the failure code", v.AsString())
			}
		})
	}
}

// TestRunOutcome: each result sets the run's progress.outcome where the
// status cannot say it, and its status: Error for a run that did not
// succeed, except a cancelled one (stopped, not failed).
func TestRunOutcome(t *testing.T) {
	for result, want := range map[cicdconv.PipelineResultAttr]string{
		cicdconv.PipelineResultSuccess: "", cicdconv.PipelineResultFailure: "", cicdconv.PipelineResultError: "",
		cicdconv.PipelineResultCancellation: outcome.Cancelled, cicdconv.PipelineResultTimeout: outcome.TimedOut,
	} {
		k := newKit(t, func(c *own) { c.SetSemconv(SemconvDup) })
		k.run(result)
		spans := k.spans.Ended()
		run := spans[len(spans)-1]
		got, _ := attrOf(run, "progress.outcome")
		res, _ := attrOf(run, "cicd.pipeline.result")
		if got.AsString() != want || res.AsString() != string(result) ||
			(run.Status().Code == codes.Error) != (result != cicdconv.PipelineResultSuccess && result != cicdconv.PipelineResultCancellation) {
			t.Errorf("%s: outcome %q result %q status %v, want outcome %q", result, got.AsString(), res.AsString(), run.Status(), want)
		}
	}
}

func TestResultOf(t *testing.T) {
	for err, want := range map[error]cicdconv.PipelineResultAttr{
		fmt.Errorf("run: %w", context.DeadlineExceeded): cicdconv.PipelineResultTimeout,
		fmt.Errorf("run: %w", context.Canceled):         cicdconv.PipelineResultCancellation,
		errors.New("exit status 2"):                     cicdconv.PipelineResultFailure,
		nil:                                             cicdconv.PipelineResultFailure,
	} {
		if got := ResultOf(err); got != want {
			t.Errorf("ResultOf(%v) = %s, want %s", err, got, want)
		}
	}
}

// TestURLTemplate: the placeholders are filled, escaped for any part of a
// URL; an option wins over the variable; a template that does not make
// an absolute URL leaves the attribute out.
func TestURLTemplate(t *testing.T) {
	t.Setenv(TaskURLTemplateEnv, "https://env.example/{task.id}")
	t.Setenv(RunURLTemplateEnv, "https://ci.example/trace/{trace.id}?run={run.id}")
	k := newKit(t, func(c *own) { c.SetSemconv(SemconvNew) },
		func(c *own) {
			c.SetTaskURLTemplate("https://awx.example/jobs/7/{pipeline.name}?task={task.name}&id={task.id}&span={task.run.id}&x={unknown}")
		})
	k.run(cicdconv.PipelineResultSuccess)
	spans := k.spans.Ended()
	task, run := spans[0], spans[2]
	want := fmt.Sprintf("https://awx.example/jobs/7/site.yml?task=Install%%20web%%5B0%%5D&id=uuid%%2F0&span=%s&x={unknown}", task.SpanContext().SpanID())
	if got, _ := attrOf(task, "cicd.pipeline.task.run.url.full"); got.AsString() != want {
		t.Errorf("task url\n got %s\nwant %s", got.AsString(), want)
	}
	wantRun := fmt.Sprintf("https://ci.example/trace/%s?run=%s", run.SpanContext().TraceID(), run.SpanContext().SpanID())
	if got, _ := attrOf(run, "cicd.pipeline.run.url.full"); got.AsString() != wantRun {
		t.Errorf("run url %s, want %s (from the variable)", got.AsString(), wantRun)
	}

	k = newKit(t, func(c *own) { c.SetSemconv(SemconvNew) }, func(c *own) { c.SetTaskURLTemplate("{task.id}") })
	k.run(cicdconv.PipelineResultSuccess)
	if got, ok := attrOf(k.spans.Ended()[0], "cicd.pipeline.task.run.url.full"); ok {
		t.Errorf("a template without scheme and host gave %q", got.AsString())
	}
	if got := expandURL(""); got != "" {
		t.Errorf("no template: %q", got)
	}
}

// TestRunMetrics: a run's duration by pipeline, result and error type;
// errors counted for failure and error only; active back to 0.
func TestRunMetrics(t *testing.T) {
	k := newKit(t)
	k.run(cicdconv.PipelineResultFailure)
	k.run(cicdconv.PipelineResultCancellation)
	k.run(cicdconv.PipelineResultSuccess)
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != defaults.Scope {
			t.Errorf("scope %q, want the adapter's", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			got[m.Name] = m.Data
		}
	}
	hist, ok := got["cicd.pipeline.run.duration"].(metricdata.Histogram[float64])
	if !ok || len(hist.DataPoints) != 3 {
		t.Fatalf("duration: %#v", got["cicd.pipeline.run.duration"])
	}
	for _, dp := range hist.DataPoints {
		name, _ := dp.Attributes.Value("cicd.pipeline.name")
		res, _ := dp.Attributes.Value("cicd.pipeline.result")
		et, hasET := dp.Attributes.Value("error.type")
		if name.AsString() != "site.yml" || dp.Count != 1 || dp.Sum != 2 {
			t.Errorf("duration point %v: count %d sum %v", dp.Attributes.ToSlice(), dp.Count, dp.Sum)
		}
		if hasET != (res.AsString() != "success") || (hasET && et.AsString() != "INFRASTRUCTURE_ERROR") {
			t.Errorf("duration point %v: error.type", dp.Attributes.ToSlice())
		}
	}
	errs, ok := got["cicd.pipeline.run.errors"].(metricdata.Sum[int64])
	if !ok || len(errs.DataPoints) != 1 || errs.DataPoints[0].Value != 1 {
		t.Errorf("errors: %#v, want 1 (the failure; a cancellation is no error)", got["cicd.pipeline.run.errors"])
	}
	active, ok := got["cicd.pipeline.run.active"].(metricdata.Sum[int64])
	if !ok || len(active.DataPoints) != 1 || active.DataPoints[0].Value != 0 {
		t.Errorf("active: %#v, want 0 after the runs", got["cicd.pipeline.run.active"])
	}
}

// TestFailureEventsCarryErrorType: a failure that counts carries
// error.type (its failure code, or its type); a warning does not.
func TestFailureEventsCarryErrorType(t *testing.T) {
	sink := progresstest.NewSink()
	c := &own{}
	Configure(c, &c.Config, defaults, Shared{}, wrap(func(c *own) { c.SetRecorder(sink.Recorder()) })...)
	c.Record(context.Background(), progress.Event{Type: "tool/HostUnreachable", Severity: log.SeverityError})
	c.Record(context.Background(), progress.Event{Type: "tool/TaskFailedOnHost", Severity: log.SeverityWarn})
	op := c.StartRun(context.Background(), Run{Operation: "Deploy", Pipeline: "site.yml"}, t0)
	op.Fail(t0, t0, "RESOURCE_NOT_FOUND", "unreachable hosts: web", nil)
	got := map[string]string{}
	for _, r := range sink.Records() {
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			if kv.Key == "error.type" {
				got[r.EventName()] = kv.Value.AsString()
			}
			return true
		})
	}
	want := map[string]string{"tool/HostUnreachable": "tool/HostUnreachable", progress.TypeOperationFailed: "RESOURCE_NOT_FOUND"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("error.type by event: %v, want %v", got, want)
	}
}

// BenchmarkTaskSpan: a task span's start and end without the
// conventions, with them, and with a URL template (compare them in one
// run: go test -bench TaskSpan -benchmem).
func BenchmarkTaskSpan(b *testing.B) {
	for _, tc := range []struct {
		name string
		mode Semconv
		tmpl string
	}{
		{"old", SemconvOld, ""},
		{"dup", SemconvDup, ""},
		{"dup+url", SemconvDup, "https://ui.example/{run.id}/{task.id}"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := &own{}
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
			Configure(c, &c.Config, defaults, Shared{}, wrap(
				func(c *own) { c.SetRecorder(progresstest.NewSink().Recorder()) },
				func(c *own) { c.SetTracerProvider(tp) },
				func(c *own) { c.SetSemconv(tc.mode) },
				func(c *own) { c.SetTaskURLTemplate(tc.tmpl) },
			)...)
			op := c.StartRun(context.Background(), Run{Operation: "Deploy", Pipeline: "site.yml", OldSpan: "playbook site.yml"}, t0)
			b.ReportAllocs()
			for b.Loop() {
				_, span := op.StartTask(op.Ctx, t0, Task{Name: "Install nginx", ID: "uuid-1", OldSpan: "task Install nginx"},
					attribute.String("tool.task.action", "apt"))
				op.EndTask(span, t0, outcome.Changed, "")
			}
		})
	}
}
