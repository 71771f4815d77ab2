package adapter

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// own stands for an adapter's config: the common part and its own.
type own struct {
	Config
	extra string
}

type ownOption = func(*own)

// wrap is its options as a list, for Configure.
func wrap(o ...ownOption) []ownOption { return o }

var defaults = Defaults{Name: "tool", Scope: "example.com/tool", GracePeriod: 7 * time.Second, MaxLineBytes: 100}

// TestConfigureDefaults: what no option sets gets its default; nil options
// and the values the setters refuse change nothing.
func TestConfigureDefaults(t *testing.T) {
	c := &own{}
	Configure(c, &c.Config, defaults, Shared{}, wrap(
		nil,
		func(c *own) { c.SetGracePeriod(-1) },
		func(c *own) { c.SetMaxLineBytes(0) },
		func(c *own) { c.SetTracerProvider(nil) },
		func(c *own) { c.SetRecorder(nil) },
		func(c *own) { c.extra = "kept" },
	)...)
	if c.GracePeriod != 7*time.Second || c.MaxLineBytes != 100 || c.extra != "kept" {
		t.Errorf("grace %v, max %d, extra %q", c.GracePeriod, c.MaxLineBytes, c.extra)
	}
	if c.Recorder != progress.Default() || c.Redactor == nil || c.Logger != slog.Default() || c.Tracer == nil {
		t.Errorf("defaults not filled: %+v", c.Config)
	}

	Configure(c, &c.Config, defaults, Shared{}, wrap(
		func(c *own) { c.SetGracePeriod(time.Minute) },
		func(c *own) { c.SetMaxLineBytes(5) },
	)...)
	if c.GracePeriod != time.Minute || c.MaxLineBytes != 5 {
		t.Errorf("grace %v, max %d: the options lost", c.GracePeriod, c.MaxLineBytes)
	}

	// The shared options: what they set wins over an own option's; zero
	// fields and refused values leave the rest.
	tmpl := ""
	Configure(c, &c.Config, defaults, Shared{GracePeriod: -1, MaxLineBytes: 9, Operation: "Install", TaskURLTemplate: &tmpl},
		func(c *own) { c.SetOperation("Other") })
	if c.GracePeriod != 7*time.Second || c.MaxLineBytes != 9 || c.Operation != "Install" || !c.taskURLSet {
		t.Errorf("shared: grace %v, max %d, operation %q, task URL set %v", c.GracePeriod, c.MaxLineBytes, c.Operation, c.taskURLSet)
	}
}

// TestOperation: the common events frame the operation in its span, with
// the envelope, the duration and, for a failure, the extra details and the
// span's error status; a span never ends before it starts.
func TestOperation(t *testing.T) {
	for _, fail := range []bool{false, true} {
		sink := progresstest.NewSink()
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		c := &own{}
		env := progress.Envelope{Component: progress.Component{Name: "driver"}}
		Configure(c, &c.Config, defaults, Shared{}, wrap(
			func(c *own) { c.SetRecorder(sink.Recorder()) },
			func(c *own) { c.SetTracerProvider(tp) },
			func(c *own) { c.SetEnvelope(env) },
		)...)
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		op := c.StartOperation(context.Background(), "Install", "tool install", start)
		if fail {
			op.Fail(start, start.Add(-time.Second), "INTERNAL_ERROR", "it broke", map[string]any{"more": "x"})
		} else {
			op.Complete(start, start.Add(1500*time.Millisecond))
		}

		evs := sink.Events()
		if len(evs) != 2 || evs[0].EventName != progress.TypeOperationStarted || evs[0].Component.Name != "driver" {
			t.Fatalf("events %v", sink.Types())
		}
		end := evs[1]
		spans := sr.Ended()
		if len(spans) != 1 || spans[0].Name() != "tool install" || !end.CorrelatedWith(op.Span) || spans[0].EndTime().Before(spans[0].StartTime()) {
			t.Fatalf("spans %v", spans)
		}
		switch {
		case fail && (end.EventName != progress.TypeOperationFailed || end.Details["more"] != "x" ||
			end.Details["description"] != "it broke" || spans[0].Status().Code != codes.Error):
			t.Errorf("failed: %v %v, status %v", end.EventName, end.Details, spans[0].Status())
		case !fail && (end.EventName != progress.TypeOperationCompleted || end.Details["durationMs"] != int64(1500)):
			t.Errorf("completed: %v %v", end.EventName, end.Details)
		}
	}
}

// TestRecordErrorLoggedOnce: an event that cannot be recorded never stops
// the adapter; the first is logged.
func TestRecordErrorLoggedOnce(t *testing.T) {
	var log bytes.Buffer
	c := &own{}
	Configure(c, &c.Config, defaults, Shared{}, wrap(
		func(c *own) { c.SetRecorder(progresstest.NewSink().Recorder()) },
		func(c *own) { c.SetLogger(slog.New(slog.NewTextHandler(&log, nil))) },
	)...)
	for range 3 {
		c.Record(context.Background(), progress.Event{Type: "not a type"})
	}
	if n := strings.Count(log.String(), "tool: an event was not recorded"); n != 1 || c.recordErrs != 3 {
		t.Errorf("%d warnings, %d counted: want 1, 3\n%s", n, c.recordErrs, log.String())
	}
}
