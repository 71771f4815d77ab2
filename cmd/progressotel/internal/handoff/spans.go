package handoff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// Spans of a nested run: a `progressotel run` inside another one hands the
// start and the end of each of its spans to the enclosing run over the same
// socket (SpanForwarder), which shows them in its live view as rows of its
// own tree (WithSpans). The nested run still exports its spans itself.

// Kinds of span message.
const (
	KindSpanStart = "span-start"
	KindSpanEnd   = "span-end"
)

const spanVersion = 1 // the version of span message a run understands

// SpanMessage is the start or the end of a span, on one line of JSON.
type SpanMessage struct {
	V    int       `json:"v"`
	Kind string    `json:"kind"` // KindSpanStart or KindSpanEnd
	Time time.Time `json:"time"` // the start or the end

	TraceID string `json:"traceId"`                // hex, as in traceparent
	SpanID  string `json:"spanId"`                 // hex
	Parent  string `json:"parentSpanId,omitempty"` // a start's parent, hex
	Name    string `json:"name,omitempty"`         // a start's name

	Error       bool   `json:"error,omitempty"` // an end with status Error
	Description string `json:"description,omitempty"`
	Outcome     string `json:"outcome,omitempty"` // the end's progress.outcome
}

// WithSpans returns a Handler that gives the span messages to sink (the
// run's local views: otelbridge.Telemetry.LocalSpanProcessor) and every
// other request to h. A nil sink takes span messages and drops them, so
// that a run without a live view still answers its nested runs.
func WithSpans(h Handler, sink sdktrace.SpanProcessor) Handler {
	return func(ctx context.Context, req []byte) error {
		// Not a span message, or not one a span message can be read from:
		// h's (bytes.Contains spares the events a second decoding).
		var m SpanMessage
		if !bytes.Contains(req, []byte(`"span-`)) || json.Unmarshal(req, &m) != nil ||
			m.Kind != KindSpanStart && m.Kind != KindSpanEnd {
			return h(ctx, req)
		}
		if m.V != spanVersion {
			return errors.New("handoff: span message of another version")
		}
		tid, err1 := trace.TraceIDFromHex(m.TraceID)
		sid, err2 := trace.SpanIDFromHex(m.SpanID)
		if err1 != nil || err2 != nil {
			return errors.Join(ErrInvalid, errors.New("a span message without a valid trace and span id"))
		}
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
		if sink == nil {
			return nil
		}
		stub := tracetest.SpanStub{Name: m.Name, SpanContext: sc}
		switch m.Kind {
		case KindSpanStart:
			stub.StartTime = m.Time
			if pid, err := trace.SpanIDFromHex(m.Parent); err == nil {
				stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: pid, TraceFlags: trace.FlagsSampled, Remote: true})
			}
			sink.OnStart(ctx, startedSpan{ReadOnlySpan: stub.Snapshot(), Span: trace.SpanFromContext(context.Background())})
		default:
			stub.EndTime = m.Time
			if m.Error {
				stub.Status = sdktrace.Status{Code: codes.Error, Description: m.Description}
			}
			if m.Outcome != "" {
				stub.Attributes = []attribute.KeyValue{attribute.String(outcome.Key, m.Outcome)}
			}
			sink.OnEnd(stub.Snapshot())
		}
		return nil
	}
}

// startedSpan is a handed-over span as OnStart takes it: writes go nowhere
// (the span is the other process's).
type startedSpan struct {
	sdktrace.ReadOnlySpan
	trace.Span // a no-op span
}

func (s startedSpan) SpanContext() trace.SpanContext { return s.ReadOnlySpan.SpanContext() }

// maxQueued bounds the span messages a forwarder holds while the run
// answers: past it, messages are dropped and counted, never waited for.
const maxQueued = 4096

// SpanForwarder is the span processor of a nested run: it hands the start
// and the end of each span to the run listening on path, in order, from a
// goroutine of its own. A span never waits: when the queue is full the
// message is dropped and counted (Dropped). Once the run does not answer,
// it stops sending.
type SpanForwarder struct {
	// Collapse, when set, names spans that are not handed over: their
	// children are handed over as children of their parent (a nested
	// run's own CLIENT span, so that the enclosing view shows the nested
	// operation by its name, not the executable's). Set before the first
	// span starts.
	Collapse func(sdktrace.ReadOnlySpan) bool

	collapsedMu sync.Mutex
	collapsed   map[trace.SpanID]trace.SpanID // a collapsed span → its parent

	path    string
	queue   chan []byte
	done    chan struct{}
	dropped atomic.Int64

	mu     sync.RWMutex // closing the queue waits for the enqueues in progress
	closed bool
}

// NewSpanForwarder starts a forwarder to the run listening on path.
func NewSpanForwarder(path string) *SpanForwarder {
	f := &SpanForwarder{path: path, queue: make(chan []byte, maxQueued), done: make(chan struct{})}
	go f.run()
	return f
}

// Dropped is the number of span messages not handed over.
func (f *SpanForwarder) Dropped() int64 { return f.dropped.Load() }

func (f *SpanForwarder) run() {
	defer close(f.done)
	failed := false
	for req := range f.queue {
		// Once the run is gone, or of another version, the rest would fail too.
		if failed || Send(f.path, req, sendTimeout) != nil {
			failed = true
			f.dropped.Add(1)
		}
	}
}

// sendTimeout bounds one message's wait for the run's answer.
const sendTimeout = 5 * time.Second

func (f *SpanForwarder) enqueue(m SpanMessage) {
	m.V = spanVersion
	req, err := json.Marshal(m)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err != nil || f.closed {
		f.dropped.Add(1)
		return
	}
	select {
	case f.queue <- req:
	default:
		f.dropped.Add(1)
	}
}

// OnStart hands the span's start over.
func (f *SpanForwarder) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	sc := s.SpanContext()
	var parent trace.SpanID
	if p := s.Parent(); p.IsValid() && p.TraceID() == sc.TraceID() {
		parent = p.SpanID()
	}
	f.collapsedMu.Lock()
	if up, ok := f.collapsed[parent]; ok {
		parent = up
	}
	if f.Collapse != nil && f.Collapse(s) {
		if f.collapsed == nil {
			f.collapsed = map[trace.SpanID]trace.SpanID{}
		}
		f.collapsed[sc.SpanID()] = parent
		f.collapsedMu.Unlock()
		return
	}
	f.collapsedMu.Unlock()
	m := SpanMessage{Kind: KindSpanStart, Time: s.StartTime(), TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(), Name: s.Name()}
	if parent.IsValid() {
		m.Parent = parent.String()
	}
	f.enqueue(m)
}

// OnEnd hands the span's end over: its status and progress.outcome.
func (f *SpanForwarder) OnEnd(s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	f.collapsedMu.Lock()
	_, collapsed := f.collapsed[sc.SpanID()]
	f.collapsedMu.Unlock()
	if collapsed {
		return
	}
	m := SpanMessage{Kind: KindSpanEnd, Time: s.EndTime(), TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()}
	if st := s.Status(); st.Code == codes.Error {
		m.Error, m.Description = true, st.Description
	}
	for _, kv := range s.Attributes() {
		if string(kv.Key) == outcome.Key {
			m.Outcome = kv.Value.AsString()
		}
	}
	f.enqueue(m)
}

// Shutdown sends what is queued, until ctx ends.
func (f *SpanForwarder) Shutdown(ctx context.Context) error {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.queue)
	}
	f.mu.Unlock()
	select {
	case <-f.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ForceFlush does nothing: messages go out as soon as they are queued.
func (f *SpanForwarder) ForceFlush(context.Context) error { return nil }
