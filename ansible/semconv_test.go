package ansible

import (
	"bytes"
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// TestGoldenStreamsConform decodes every recorded stream (rescued and
// ignored failures, strategy free, flush_handlers, a cut stream, a
// prompt) under the CI/CD conventions: the spans pass CheckCICDSpans, and
// each task span's cicd.pipeline.task.run.result is the one of its
// progress.outcome, with error.type and status Error only for a failure
// that counts.
func TestGoldenStreamsConform(t *testing.T) {
	t.Setenv(adapter.SemconvEnv, "cicd/dup")
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			in := readStream(t, gc.stream)
			if gc.cut != nil {
				in = gc.cut(in)
			}
			c := newCapture(t)
			_, _ = Stream(context.Background(), bytes.NewReader(in), c.options(t)...)
			spans := c.spans.Ended()
			progresstest.CheckCICDSpans(t, spans)
			runs, tasks := 0, 0
			for _, s := range spans {
				if value(s, "cicd.pipeline.action.name") == "RUN" {
					runs++
				}
				if value(s, "cicd.pipeline.task.name") == "" {
					continue
				}
				tasks++
				how := value(s, outcome.Key)
				want, ok := adapter.TaskResult(how)
				if !ok || value(s, "cicd.pipeline.task.run.result") != want.Value.AsString() {
					t.Errorf("task %s: outcome %q, result %q", s.Name(), how, value(s, "cicd.pipeline.task.run.result"))
				}
				counts := how == outcome.Failed || how == outcome.Unreachable || how == outcome.TimedOut
				if (value(s, "error.type") != "") != counts || (s.Status().Code == codes.Error) != counts {
					t.Errorf("task %s: outcome %q, error.type %q, status %v", s.Name(), how, value(s, "error.type"), s.Status())
				}
			}
			if runs != 1 || tasks == 0 && gc.name != "prompt" {
				t.Errorf("%d run spans, %d task spans", runs, tasks)
			}
		})
	}
}

// value is a span's attribute key as a string; "" when it has none.
func value(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}
