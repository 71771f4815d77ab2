package prettyexporter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/propagation"
)

// harness is the real pipeline: a progress.Recorder emitting through an
// SDK LoggerProvider whose processors are the tracectx processor Setup
// installs, the exporter under test and a keeper, inside real sdk/trace
// spans.
type harness struct {
	lp     *sdklog.LoggerProvider
	rec    *progress.Recorder
	tracer trace.Tracer
	kept   *progresstest.Exporter
}

func newHarness(t testing.TB, exp sdklog.Exporter) *harness {
	t.Helper()
	k := &progresstest.Exporter{}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(k)),
	)
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() {
		_ = lp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	return &harness{
		lp:     lp,
		rec:    progress.NewRecorder(progress.WithLoggerProvider(lp)),
		tracer: tp.Tracer("test"),
		kept:   k,
	}
}

// span starts a span carrying tracectx transactionid tx-1 and processid p-9.
func (h *harness) span(t testing.TB) (context.Context, trace.Span) {
	t.Helper()
	ctx, err := propagation.WithValue(context.Background(), "transactionid", "tx-1")
	if err != nil {
		t.Fatal(err)
	}
	if ctx, err = propagation.WithValue(ctx, "processid", "p-9"); err != nil {
		t.Fatal(err)
	}
	ctx, span := h.tracer.Start(ctx, "Install")
	t.Cleanup(func() { span.End() })
	return ctx, span
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// parseLines decodes each JSON line, failing the test on an invalid one.
func parseLines(t testing.TB, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("invalid JSON line %q: %v", l, err)
		}
		objs = append(objs, m)
	}
	return objs
}

// jsonNormal returns v as encoding/json would read it back: the common
// ground on which nested details are compared.
func jsonNormal(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
