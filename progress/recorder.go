package progress

import (
	"cmp"
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/progressotel/progressotel/internal/base/wireformat"
	"github.com/progressotel/progressotel/progress/internal/encode"
	"github.com/progressotel/progressotel/tncomessage"
)

// Recorder turns events and transitions into log records. Its methods are
// safe for concurrent use. The zero Recorder is not usable: use NewRecorder.
type Recorder struct {
	logger   log.Logger
	red      *Redactor
	lim      encode.Limits
	keys     *encode.KeyCache
	seq      sequencer
	noSeq    bool
	global   bool // emits through the global LoggerProvider
	invalid  atomic.Int64
	trunc    atomic.Int64
	recorded atomic.Int64
	metrics  struct {
		invalid metric.Int64Counter
		trunc   metric.Int64Counter
	}
}

// NewRecorder returns a Recorder. By default it emits through the global
// LoggerProvider (records flow once one is set, e.g. by otelbridge.Setup;
// until then they are dropped, and ErrNoLoggerProvider is reported once),
// redacts with DefaultRedactor and applies DefaultLimits.
func NewRecorder(opts ...Option) *Recorder {
	c := config{red: DefaultRedactor()}
	for _, o := range opts {
		o(&c)
	}
	global := c.provider == nil
	c.provider, c.meter = cmp.Or(c.provider, otel.GetLoggerProvider()), cmp.Or(c.meter, otel.GetMeterProvider())
	r := &Recorder{
		global: global,
		logger: c.provider.Logger(tncomessage.ScopeName, log.WithInstrumentationVersion(tncomessage.ScopeVersion)),
		red:    c.red,
		lim:    c.lim.resolve(),
		noSeq:  c.noSeq,
	}
	r.keys = encode.NewKeyCache(&r.red.rules)
	r.seq.init()
	m := c.meter.Meter(tncomessage.ScopeName, metric.WithInstrumentationVersion(tncomessage.ScopeVersion))
	r.metrics.invalid, _ = m.Int64Counter("progress.events.invalid",
		metric.WithDescription("Events and transitions rejected by validation and not emitted."),
		metric.WithUnit("{event}"))
	r.metrics.trunc, _ = m.Int64Counter("progress.events.truncated",
		metric.WithDescription("Events whose details were cut by limits or fell back for unsupported values."),
		metric.WithUnit("{event}"))
	return r
}

// Stats are a Recorder's counters since it was created.
type Stats struct {
	Recorded  int64 // records handed to the logger
	Invalid   int64 // events and transitions rejected with an error
	Truncated int64 // recorded events whose details were cut
}

// Stats returns the Recorder's counters.
func (r *Recorder) Stats() Stats {
	return Stats{Recorded: r.recorded.Load(), Invalid: r.invalid.Load(), Truncated: r.trunc.Load()}
}

// Record emits evt as a log record correlated with the span in ctx.
//
// It returns a *ValidationError (wrapping ErrInvalidEvent), emits nothing
// and counts the event as invalid when evt.Type breaks the naming rule.
// Oversized or unsupported details are cut as documented on Limits,
// marked progress.truncated and counted. Record never blocks on I/O and
// never panics, whatever the details hold; a nil ctx is
// context.Background(). The envelope of ctx (ContextWithEnvelope) fills
// the fields evt.Envelope leaves unset.
func (r *Recorder) Record(ctx context.Context, evt Event) error {
	if !validType(evt.Type) {
		if err := parseType(evt.Type); err != nil {
			r.reject(ctx, "type")
			return err
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	sev := evt.Severity
	if sev == log.SeverityUndefined {
		sev = log.SeverityInfo
	}
	if !r.logger.Enabled(ctx, log.EnabledParameters{Severity: sev, EventName: evt.Type}) {
		r.warnNoProvider()
		return nil
	}
	withScope(ctx, &evt.Envelope)
	e := encode.Get(r.keys, &r.red.rules, r.lim)
	e.Attrs = append(e.Attrs, attribute.String(tncomessage.AttrEventType, tncomessage.EventType))
	r.envelope(ctx, e, &evt.Envelope)
	e.Details(evt.Details)
	if evt.ErrorType != "" {
		e.Attrs = append(e.Attrs, attribute.KeyValue{Key: semconv.ErrorTypeKey, Value: e.String(evt.ErrorType)})
	}
	r.emit(ctx, e, &evt.Envelope, evt.Type, sev, evt.Time, attribute.Value{})
	return nil
}

// RecordTransition emits a condition transition on t.Stream. The record's
// EventName and Body are the stream name; the payload sits under
// progress.<stream>.{status,reason,message} and, when t.Previous is set,
// progress.<stream>.previous.{status,reason,message}. It returns a
// *ValidationError for an invalid stream or an empty status. The envelope
// of ctx (ContextWithEnvelope) fills the fields t.Envelope leaves unset.
//
// RecordTransition does no edge-triggering: use a Tracker or
// RecordIfChanged.
func (r *Recorder) RecordTransition(ctx context.Context, t Transition) error {
	if err := validateStream(t.Stream); err != nil {
		r.reject(ctx, "stream")
		return err
	}
	if t.Status == "" {
		r.reject(ctx, "status")
		return invalid("status", t.Status, "empty (stream "+strconv.Quote(t.Stream)+")")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if !r.logger.Enabled(ctx, log.EnabledParameters{Severity: log.SeverityInfo, EventName: t.Stream}) {
		r.warnNoProvider()
		return nil
	}
	withScope(ctx, &t.Envelope)
	e := encode.Get(r.keys, &r.red.rules, r.lim)
	e.Attrs = append(e.Attrs, attribute.String(tncomessage.AttrEventType, tncomessage.TransitionEventType))
	r.envelope(ctx, e, &t.Envelope)
	k := wireformat.TransitionKeysFor(t.Stream)
	e.Attrs = append(e.Attrs,
		attribute.KeyValue{Key: k.Status, Value: e.String(t.Status)},
		attribute.KeyValue{Key: k.Reason, Value: e.String(t.Reason)})
	if t.Message != "" {
		e.Attrs = append(e.Attrs, attribute.KeyValue{Key: k.Message, Value: e.String(t.Message)})
	}
	if p := t.Previous; p != nil {
		e.Attrs = append(e.Attrs,
			attribute.KeyValue{Key: k.PrevStatus, Value: e.String(p.Status)},
			attribute.KeyValue{Key: k.PrevReason, Value: e.String(p.Reason)})
		if p.Message != "" {
			e.Attrs = append(e.Attrs, attribute.KeyValue{Key: k.PrevMessage, Value: e.String(p.Message)})
		}
	}
	r.emit(ctx, e, &t.Envelope, t.Stream, log.SeverityInfo, t.Time, attribute.StringValue(t.Stream))
	return nil
}

func (r *Recorder) emit(ctx context.Context, e *encode.Encoder, env *Envelope, name string, sev log.Severity, ts time.Time, body attribute.Value) {
	if !r.noSeq {
		e.Attrs = append(e.Attrs, attribute.Int64(tncomessage.AttrSequence, r.seq.next(ctx, env)))
	}
	truncated := e.Truncated()
	if truncated {
		e.Attrs = append(e.Attrs, attribute.Bool(tncomessage.AttrTruncated, true))
	}
	if ts.IsZero() {
		ts = time.Now()
	}
	var rec log.Record
	rec.SetEventName(name)
	rec.SetTimestamp(ts)
	rec.SetSeverity(sev)
	text, _, _ := wireformat.Level(sev)
	rec.SetSeverityText(text)
	if body.Type() != attribute.EMPTY {
		rec.SetBody(body)
	}
	rec.AddAttributes(e.Attrs...)
	encode.Put(e)
	r.logger.Emit(ctx, rec)
	r.recorded.Add(1)
	if truncated {
		r.trunc.Add(1)
		r.metrics.trunc.Add(ctx, 1)
	}
}

func (r *Recorder) reject(ctx context.Context, reason string) {
	r.invalid.Add(1)
	r.metrics.invalid.Add(cmp.Or(ctx, context.Background()), 1, metric.WithAttributes(attribute.String("reason", reason)))
}
