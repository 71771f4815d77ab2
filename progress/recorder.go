package progress

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/propagation"
)

// Version is the version of this module, written as the instrumentation
// scope version.
const Version = "0.1.0"

// Recorder turns events and transitions into log records. Its methods are
// safe for concurrent use. The zero Recorder is not usable: use NewRecorder.
type Recorder struct {
	logger   log.Logger
	red      *Redactor
	lim      Limits
	keys     keyCache
	seq      sequencer
	noSeq    bool
	invalid  atomic.Int64
	trunc    atomic.Int64
	recorded atomic.Int64
	metrics  struct {
		invalid metric.Int64Counter
		trunc   metric.Int64Counter
	}
}

// Option configures a Recorder.
type Option func(*config)

type config struct {
	provider log.LoggerProvider
	meter    metric.MeterProvider
	red      *Redactor
	lim      Limits
	noSeq    bool
}

// WithLoggerProvider emits through p instead of the global LoggerProvider.
func WithLoggerProvider(p log.LoggerProvider) Option {
	return func(c *config) { c.provider = p }
}

// WithMeterProvider counts invalid and truncated events through p instead
// of the global MeterProvider.
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(c *config) { c.meter = p }
}

// WithRedactor replaces the default Redactor. Use WithoutRedaction to turn
// redaction off; a nil Redactor here keeps the default.
func WithRedactor(r *Redactor) Option {
	return func(c *config) {
		if r != nil {
			c.red = r
		}
	}
}

// WithSecretKeys extends the redacted key fragments.
func WithSecretKeys(keys ...string) Option {
	return func(c *config) { c.red = c.red.With(keys...) }
}

// WithoutRedaction turns redaction off. Secrets in details then leave the
// process: only for pipelines that redact downstream.
func WithoutRedaction() Option {
	return func(c *config) { c.red = &Redactor{} }
}

// WithLimits sets the limits on details; zero fields keep their defaults.
func WithLimits(l Limits) Option {
	return func(c *config) { c.lim = l }
}

// WithoutSequence omits the progress.sequence attribute.
func WithoutSequence() Option {
	return func(c *config) { c.noSeq = true }
}

// NewRecorder returns a Recorder. By default it emits through the global
// LoggerProvider (records flow once one is set, e.g. by otelbridge.Setup),
// redacts with DefaultRedactor and applies DefaultLimits.
func NewRecorder(opts ...Option) *Recorder {
	c := config{red: DefaultRedactor()}
	for _, o := range opts {
		o(&c)
	}
	if c.provider == nil {
		c.provider = otel.GetLoggerProvider()
	}
	if c.meter == nil {
		c.meter = otel.GetMeterProvider()
	}
	r := &Recorder{
		logger: c.provider.Logger(ScopeName, log.WithInstrumentationVersion(Version)),
		red:    c.red,
		lim:    c.lim.withDefaults(),
		noSeq:  c.noSeq,
	}
	r.keys.red = c.red
	r.seq.init()
	m := c.meter.Meter(ScopeName, metric.WithInstrumentationVersion(Version))
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

var (
	defaultMu       sync.Mutex
	defaultRecorder atomic.Pointer[Recorder]
)

// Default returns the Recorder used by the package-level functions. It
// emits through the global LoggerProvider.
func Default() *Recorder {
	if r := defaultRecorder.Load(); r != nil {
		return r
	}
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if r := defaultRecorder.Load(); r != nil {
		return r
	}
	r := NewRecorder()
	defaultRecorder.Store(r)
	return r
}

// SetDefault replaces the Recorder used by the package-level functions,
// e.g. to change its redaction. A nil r restores a fresh default.
func SetDefault(r *Recorder) {
	if r == nil {
		r = NewRecorder()
	}
	defaultRecorder.Store(r)
}

// Record emits evt through the Default Recorder. See Recorder.Record.
func Record(ctx context.Context, evt Event) error { return Default().Record(ctx, evt) }

// RecordTransition emits t through the Default Recorder.
func RecordTransition(ctx context.Context, t Transition) error {
	return Default().RecordTransition(ctx, t)
}

// Record emits evt as a log record correlated with the span in ctx.
//
// It returns an error wrapping ErrInvalidEvent when evt.Type breaks the
// naming rule; the event is then not emitted and is counted as invalid.
// Oversized or unsupported details are not an error: they are cut as
// documented on Limits and Flatten, and counted. Record never blocks on
// I/O; a nil ctx is treated as context.Background().
func (r *Recorder) Record(ctx context.Context, evt Event) error {
	if !validType(evt.Type) {
		if _, _, err := ParseType(evt.Type); err != nil {
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
		return nil
	}
	e := getEncoder(&r.keys, r.red, r.lim)
	e.attrs = append(e.attrs, attribute.String(AttrEventType, EventType))
	r.envelope(ctx, e, &evt.Envelope)
	e.details(evt.Details)
	r.emit(ctx, e, &evt.Envelope, evt.Type, sev, evt.Time, attribute.Value{})
	return nil
}

// Byte classes of a progressEventType, for validType.
const (
	typeGroupStart = 1 << iota // [a-z]
	typeGroup                  // [a-z0-9_-]
	typeNameStart              // [A-Za-z]
	typeName                   // [A-Za-z0-9_.-]
)

var typeClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = typeGroupStart | typeGroup | typeNameStart | typeName
		t[c-'a'+'A'] = typeNameStart | typeName
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = typeGroup | typeName
	}
	t['_'], t['-'], t['.'] = typeGroup|typeName, typeGroup|typeName, typeName
	return t
}()

// validType is ParseType's rule as one table-driven pass, for the hot
// path; ParseType still explains a rejection.
func validType(s string) bool {
	if len(s) == 0 || len(s) > MaxTypeLen {
		return false
	}
	slash := strings.IndexByte(s, '/')
	if slash <= 0 || slash == len(s)-1 {
		return false
	}
	if typeClass[s[0]]&typeGroupStart == 0 || typeClass[s[slash+1]]&typeNameStart == 0 {
		return false
	}
	for i := 1; i < slash; i++ {
		if typeClass[s[i]]&typeGroup == 0 {
			return false
		}
	}
	for i := slash + 2; i < len(s); i++ {
		if typeClass[s[i]]&typeName == 0 { // a second '/' ends here too
			return false
		}
	}
	return true
}

// RecordTransition emits a condition transition on t.Stream. The record's
// EventName and Body are the stream name; the payload sits under
// progress.<stream>.{status,reason,message} and, when t.Previous is set,
// progress.<stream>.previous.{status,reason,message}. It returns an error
// wrapping ErrInvalidEvent for an invalid stream or an empty status.
//
// RecordTransition does no edge-triggering: use a Tracker or Changed.
func (r *Recorder) RecordTransition(ctx context.Context, t Transition) error {
	if err := ValidateStream(t.Stream); err != nil {
		r.reject(ctx, "stream")
		return err
	}
	if t.Status == "" {
		r.reject(ctx, "status")
		return errorf("transition on stream %q has an empty status", t.Stream)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if !r.logger.Enabled(ctx, log.EnabledParameters{Severity: log.SeverityInfo, EventName: t.Stream}) {
		return nil
	}
	e := getEncoder(&r.keys, r.red, r.lim)
	e.attrs = append(e.attrs, attribute.String(AttrEventType, TransitionEventType))
	r.envelope(ctx, e, &t.Envelope)
	k := transitionKeysFor(t.Stream)
	e.attrs = append(e.attrs,
		attribute.KeyValue{Key: k.status, Value: e.str(t.Status)},
		attribute.KeyValue{Key: k.reason, Value: e.str(t.Reason)})
	if t.Message != "" {
		e.attrs = append(e.attrs, attribute.KeyValue{Key: k.message, Value: e.str(t.Message)})
	}
	if p := t.Previous; p != nil {
		e.attrs = append(e.attrs,
			attribute.KeyValue{Key: k.prevStatus, Value: e.str(p.Status)},
			attribute.KeyValue{Key: k.prevReason, Value: e.str(p.Reason)})
		if p.Message != "" {
			e.attrs = append(e.attrs, attribute.KeyValue{Key: k.prevMessage, Value: e.str(p.Message)})
		}
	}
	r.emit(ctx, e, &t.Envelope, t.Stream, log.SeverityInfo, t.Time, attribute.StringValue(t.Stream))
	return nil
}

func (r *Recorder) emit(ctx context.Context, e *encoder, env *Envelope, name string, sev log.Severity, ts time.Time, body attribute.Value) {
	if !r.noSeq {
		e.attrs = append(e.attrs, attribute.Int64(AttrSequence, r.seq.next(ctx, env)))
	}
	truncated := e.truncated > 0
	if truncated {
		e.attrs = append(e.attrs, attribute.Bool(AttrTruncated, true))
	}
	if ts.IsZero() {
		ts = time.Now()
	}
	var rec log.Record
	rec.SetEventName(name)
	rec.SetTimestamp(ts)
	rec.SetSeverity(sev)
	rec.SetSeverityText(severityText(sev))
	if body.Type() != attribute.EMPTY {
		rec.SetBody(body)
	}
	rec.AddAttributes(e.attrs...)
	putEncoder(e)
	r.logger.Emit(ctx, rec)
	r.recorded.Add(1)
	if truncated {
		r.trunc.Add(1)
		r.metrics.trunc.Add(ctx, 1)
	}
}

func (r *Recorder) reject(ctx context.Context, reason string) {
	r.invalid.Add(1)
	if ctx == nil {
		ctx = context.Background()
	}
	r.metrics.invalid.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// envelope appends the envelope attributes that are set.
func (r *Recorder) envelope(ctx context.Context, e *encoder, env *Envelope) {
	if env.Component.Name != "" {
		e.attrs = append(e.attrs, attribute.String(AttrComponentName, env.Component.Name))
	}
	if env.Component.Version != "" {
		e.attrs = append(e.attrs, attribute.String(AttrComponentVersion, env.Component.Version))
	}
	if env.Resource.Type != "" {
		e.attrs = append(e.attrs, attribute.String(AttrResourceType, env.Resource.Type))
	}
	if env.Resource.ID != "" {
		e.attrs = append(e.attrs, attribute.String(AttrResourceID, env.Resource.ID))
	}
	if env.Resource.Namespace != "" {
		e.attrs = append(e.attrs, attribute.String(AttrResourceNamespace, env.Resource.Namespace))
	}
	if env.Resource.UID != "" {
		e.attrs = append(e.attrs, attribute.String(AttrResourceUID, env.Resource.UID))
	}
	for k, v := range env.Scope {
		if v == "" {
			continue // present-only
		}
		e.attrs = append(e.attrs, attribute.String(scopeKey(k), v))
	}
	if env.ObservedGeneration != 0 {
		e.attrs = append(e.attrs, attribute.Int64(AttrObservedGeneration, env.ObservedGeneration))
	}
	tenant := env.Tenant()
	if tenant == "" {
		tenant, _ = propagation.FromContext(ctx).Get("tenantid")
	}
	if tenant != "" {
		e.attrs = append(e.attrs, attribute.String(AttrTenant, tenant))
	}
}

func scopeKey(k string) string {
	switch k {
	case "organization":
		return ScopePrefix + "organization"
	case "project":
		return ScopePrefix + "project"
	case "tenant":
		return ScopePrefix + "tenant"
	}
	return ScopePrefix + escapeSegment(k)
}

func severityText(s log.Severity) string {
	switch {
	case s >= log.SeverityFatal:
		return "FATAL"
	case s >= log.SeverityError:
		return "ERROR"
	case s >= log.SeverityWarn:
		return "WARN"
	case s >= log.SeverityInfo:
		return "INFO"
	case s >= log.SeverityDebug:
		return "DEBUG"
	case s >= log.SeverityTrace:
		return "TRACE"
	}
	return ""
}

type transitionKeys struct {
	status, reason, message, prevStatus, prevReason, prevMessage attribute.Key
}

// transitionKeyCache interns the payload keys per stream: lock-free reads
// of a copy-on-write map, bounded so that a caller inventing stream names
// cannot grow it without limit (past the bound, keys are built per call).
var transitionKeyCache struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]*transitionKeys]
}

const maxCachedStreams = 256

func transitionKeysFor(stream string) *transitionKeys {
	if m := transitionKeyCache.m.Load(); m != nil {
		if k, ok := (*m)[stream]; ok {
			return k
		}
	}
	p := transitionPrefix + stream + "."
	k := &transitionKeys{
		status: attribute.Key(p + "status"), reason: attribute.Key(p + "reason"), message: attribute.Key(p + "message"),
		prevStatus: attribute.Key(p + "previous.status"), prevReason: attribute.Key(p + "previous.reason"),
		prevMessage: attribute.Key(p + "previous.message"),
	}
	transitionKeyCache.mu.Lock()
	defer transitionKeyCache.mu.Unlock()
	var old map[string]*transitionKeys
	if p := transitionKeyCache.m.Load(); p != nil {
		old = *p
	}
	if len(old) >= maxCachedStreams {
		return k
	}
	next := make(map[string]*transitionKeys, len(old)+1)
	for s, v := range old {
		next[s] = v
	}
	next[strings.Clone(stream)] = k
	transitionKeyCache.m.Store(&next)
	return k
}

func errorf(format string, args ...any) error {
	return &validationError{msg: "progress: " + fmt.Sprintf(format, args...)}
}

type validationError struct{ msg string }

func (e *validationError) Error() string { return e.msg }
func (e *validationError) Unwrap() error { return ErrInvalidEvent }

// sequencer hands out contiguous sequence numbers per trace (operation), or
// per resource when ctx has no span, or per Recorder when neither is known.
// It remembers at most maxSequences keys, forgetting the oldest first; a
// forgotten key starts again at 1.
type sequencer struct {
	mu    sync.Mutex
	m     map[seqKey]*int64 // a pointer: one map lookup per call, not two
	order []seqKey          // ring of keys in insertion order
	next0 int
	// The last key and its counter: the records of one operation tend to
	// come in runs, and a comparison is cheaper than hashing the key.
	last  seqKey
	lastC *int64
}

type seqKey struct {
	trace       trace.TraceID
	typ, ns, id string
}

const maxSequences = 4096

func (s *sequencer) init() { s.m = make(map[seqKey]*int64) }

func (s *sequencer) next(ctx context.Context, env *Envelope) int64 {
	var k seqKey
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		k.trace = sc.TraceID()
	} else {
		k.typ, k.ns, k.id = env.Resource.Type, env.Resource.Namespace, env.Resource.ID
	}
	s.mu.Lock()
	if s.lastC != nil && s.last == k {
		*s.lastC++
		n := *s.lastC
		s.mu.Unlock()
		return n
	}
	c, ok := s.m[k]
	if !ok {
		if len(s.order) < maxSequences {
			s.order = append(s.order, k)
		} else {
			delete(s.m, s.order[s.next0])
			s.order[s.next0] = k
			s.next0 = (s.next0 + 1) % maxSequences
		}
		c = new(int64)
		s.m[k] = c
	}
	s.last, s.lastC = k, c
	*c++
	n := *c
	s.mu.Unlock()
	return n
}
