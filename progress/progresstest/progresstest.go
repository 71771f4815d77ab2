// Package progresstest captures the progress events and condition
// transitions a driver records, so that the driver's own tests can assert
// on them (type, details, envelope, trace correlation) without a collector.
//
// It is built on the real OpenTelemetry SDK: records go through an SDK
// LoggerProvider, which fills in trace and span ids exactly as production
// does, and are read back with wire.Decode.
package progresstest

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// Sink captures every record emitted through its LoggerProvider. It is safe
// for concurrent use.
type Sink struct {
	lp *sdklog.LoggerProvider
	c  *capture
}

// NewSink returns a Sink whose LoggerProvider captures synchronously.
// Extra processors (for example sdkparts.NewTraceCtxProcessor) run
// before the capture, as they would before an exporter.
func NewSink(processors ...sdklog.Processor) *Sink {
	c := &capture{}
	opts := make([]sdklog.LoggerProviderOption, 0, len(processors)+1)
	for _, p := range processors {
		opts = append(opts, sdklog.WithProcessor(p))
	}
	opts = append(opts, sdklog.WithProcessor(c))
	return &Sink{lp: sdklog.NewLoggerProvider(opts...), c: c}
}

// Install returns a Sink that is the global LoggerProvider and whose
// Recorder is progress.Default() for the duration of the test, so code that
// calls progress.Record is captured. The previous globals are restored at
// cleanup. Tests that use Install must not run in parallel.
func Install(tb testing.TB, processors ...sdklog.Processor) *Sink {
	tb.Helper()
	s := NewSink(processors...)
	prevLP := otel.GetLoggerProvider()
	prevRec := progress.Default()
	otel.SetLoggerProvider(s.lp)
	progress.SetDefault(s.Recorder())
	tb.Cleanup(func() {
		progress.SetDefault(prevRec)
		otel.SetLoggerProvider(prevLP)
		_ = s.lp.Shutdown(context.Background())
	})
	return s
}

// LoggerProvider is the SDK provider that feeds the Sink.
func (s *Sink) LoggerProvider() *sdklog.LoggerProvider { return s.lp }

// Processor returns the capturing processor behind the Sink, to add to
// another provider, such as the one otelbridge.Setup builds
// (otelbridge.WithProcessor): what that provider emits is captured too.
func (s *Sink) Processor() sdklog.Processor { return s.c }

// Recorder returns a progress.Recorder that emits into the Sink.
func (s *Sink) Recorder(opts ...progress.Option) *progress.Recorder {
	return progress.NewRecorder(append([]progress.Option{progress.WithLoggerProvider(s.lp)}, opts...)...)
}

// Records returns clones of every captured record, in emit order.
func (s *Sink) Records() []sdklog.Record {
	out := s.c.Records()
	for i := range out {
		out[i] = out[i].Clone()
	}
	return out
}

// Reset forgets the captured records.
func (s *Sink) Reset() {
	s.c.mu.Lock()
	s.c.records = nil
	s.c.mu.Unlock()
}

// Event is a captured progress event or transition, decoded.
type Event struct {
	wire.Decoded
	EventName string
	Severity  log.Severity
	Timestamp time.Time
	TraceID   trace.TraceID
	SpanID    trace.SpanID
	// InstrumentationScope is the record's instrumentation scope name
	// (wire.ScopeName for records of a progress.Recorder).
	InstrumentationScope string
}

// Events decodes the captured progress records, in emit order. Records
// that are not progress records (ordinary logs) are skipped.
func (s *Sink) Events() []Event {
	recs := s.Records()
	out := make([]Event, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		d, err := wire.Decode(r)
		if err != nil {
			continue
		}
		out = append(out, Event{
			Decoded: d, EventName: r.EventName(), Severity: r.Severity(), Timestamp: r.Timestamp(),
			TraceID: r.TraceID(), SpanID: r.SpanID(), InstrumentationScope: r.InstrumentationScope().Name,
		})
	}
	return out
}

// OfType returns the captured events whose EventName is name (a
// progressEventType or a stream).
func (s *Sink) OfType(name string) []Event {
	var out []Event
	for _, e := range s.Events() {
		if e.EventName == name {
			out = append(out, e)
		}
	}
	return out
}

// Types returns the EventName of every captured progress record, in order.
func (s *Sink) Types() []string {
	evs := s.Events()
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventName
	}
	return out
}

// CorrelatedWith reports whether e was recorded inside span.
func (e Event) CorrelatedWith(span trace.Span) bool {
	sc := span.SpanContext()
	return sc.IsValid() && e.TraceID == sc.TraceID() && e.SpanID == sc.SpanID()
}

// capture is an sdk/log Processor that keeps clones of what it sees, as
// an Exporter does.
type capture struct{ Exporter }

func (c *capture) OnEmit(ctx context.Context, r *sdklog.Record) error {
	return c.Export(ctx, []sdklog.Record{*r})
}

func (c *capture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
