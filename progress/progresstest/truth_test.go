package progresstest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// run builds a run span with one child per outcome given, ended within
// it, and its records (OperationStarted, the end), as an adapter would;
// change, when set, alters the child before it ends.
func run(t *testing.T, runOutcome string, failed bool, kids []string, change func(i int, s trace.Span) (end time.Duration)) ([]sdktrace.ReadOnlySpan, []progresstest.Event) {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	t0 := time.Unix(1000, 0)
	ctx, root := tp.Tracer("t").Start(context.Background(), "run", trace.WithTimestamp(t0))
	rec.Record(ctx, progress.OperationStarted("op"))
	for i, how := range kids {
		_, s := tp.Tracer("t").Start(ctx, "child", trace.WithTimestamp(t0.Add(time.Second)),
			trace.WithAttributes(attribute.String("progress.outcome", how), attribute.String("host", "h")))
		if how == "failed" || how == "unreachable" {
			s.SetStatus(codes.Error, how)
		}
		end := 2 * time.Second
		if change != nil {
			end = change(i, s)
		}
		s.End(trace.WithTimestamp(t0.Add(end)))
	}
	root.SetAttributes(attribute.String("progress.outcome", runOutcome))
	end := progress.OperationCompleted("op", time.Second)
	if failed {
		root.SetStatus(codes.Error, "failed")
		end = progress.OperationFailed("op", "X", "failed")
	}
	rec.Record(ctx, end)
	root.End(trace.WithTimestamp(t0.Add(3 * time.Second)))
	return sr.Ended(), sink.Events()
}

func TestRunViolations(t *testing.T) {
	truth := progresstest.Truth{Key: "host", Counts: map[string]map[string]int{"h": {"ignored": 1}}}
	spans, events := run(t, "changed", false, []string{"changed", "ignored"}, nil)
	if v := progresstest.RunViolations(spans, events, truth); len(v) != 0 {
		t.Fatalf("a run that holds together: %v", v)
	}
	for _, tc := range []struct {
		name string
		v    func() []string
		want string
	}{
		{"a parent saying less", func() []string {
			s, e := run(t, "ok", false, []string{"changed"}, nil)
			return progresstest.RunViolations(s, e, progresstest.Truth{})
		}, "says less than its child"},
		{"a child outside its parent", func() []string {
			s, e := run(t, "ok", false, []string{"ok"}, func(int, trace.Span) time.Duration { return 5 * time.Second })
			return progresstest.RunViolations(s, e, progresstest.Truth{})
		}, "does not lie inside its parent"},
		{"a cancelled span with Error", func() []string {
			s, e := run(t, "cancelled", true, []string{"cancelled"}, func(_ int, s trace.Span) time.Duration {
				s.SetStatus(codes.Error, "cancelled")
				return time.Second
			})
			return progresstest.RunViolations(s, e, progresstest.Truth{})
		}, "outcome cancelled with status Error"},
		{"a count the recap does not give", func() []string {
			s, e := run(t, "ok", false, []string{"ok"}, nil)
			return progresstest.RunViolations(s, e, truth)
		}, "the tool's final word counts 1"},
		{"the run's outcome against the final word", func() []string {
			s, e := run(t, "ok", false, []string{"ok"}, nil)
			return progresstest.RunViolations(s, e, progresstest.Truth{Outcome: "changed"})
		}, "the tool's final word says changed"},
		{"a failed run that completed", func() []string {
			s, e := run(t, "failed", false, nil, nil)
			return progresstest.RunViolations(s, e, progresstest.Truth{})
		}, "without status Error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.v()
			if !strings.Contains(strings.Join(v, "\n"), tc.want) {
				t.Errorf("violations %q, want one saying %q", v, tc.want)
			}
		})
	}
}
