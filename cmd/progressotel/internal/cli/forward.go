package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	otelprop "go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

// forwardQueue is how many records a nested run holds for the enclosing
// run before it drops (and counts) them: the Recorder never waits.
const forwardQueue = 4096

// forwarder is the log.LoggerProvider of a run inside a run: every record
// its Recorder emits goes to the enclosing run over the socket emits use,
// as the message an emit would send (read back with wire.Decode), so that
// the enclosing run records it with its envelope for what this one leaves
// unset and numbers it in its one sequence per trace. Records are sent in
// order by one goroutine; when the enclosing run is gone, the rest are
// exported by this run's own logger (fallback), as an emit would.
type forwarder struct {
	embedded.LoggerProvider
	path     string
	fallback log.LoggerProvider
	stderr   io.Writer

	queue   chan forwarded
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
	gone    atomic.Bool // the enclosing run did not take a record: use fallback
}

type forwarded struct {
	ctx  context.Context
	rec  log.Record
	req  []byte
	sent chan struct{} // a mark, no record: closed once the records queued before it are handed over
}

func newForwarder(path string, fallback log.LoggerProvider, stderr io.Writer) *forwarder {
	f := &forwarder{path: path, fallback: fallback, stderr: stderr,
		queue: make(chan forwarded, forwardQueue), done: make(chan struct{})}
	go f.loop()
	return f
}

func (f *forwarder) Logger(name string, opts ...log.LoggerOption) log.Logger {
	return &forwardLogger{f: f, fallback: f.fallback.Logger(name, opts...)}
}

type forwardLogger struct {
	embedded.Logger
	f        *forwarder
	fallback log.Logger
}

func (l *forwardLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

func (l *forwardLogger) Emit(ctx context.Context, r log.Record) {
	req, err := forwardMessage(ctx, &r)
	if err != nil || l.f.gone.Load() {
		l.fallback.Emit(ctx, r)
		return
	}
	select {
	case l.f.queue <- forwarded{ctx: ctx, rec: r, req: req}:
	default:
		l.f.dropped.Add(1)
	}
}

// forwardMessage is the hand-off message of a record this run's Recorder
// emitted, in the trace context of ctx.
func forwardMessage(ctx context.Context, r *log.Record) ([]byte, error) {
	d, err := wire.Decode(r)
	if err != nil {
		return nil, err
	}
	m := message{V: protocolVersion, Time: r.Timestamp(), Envelope: envelope{Component: d.Component, Resource: d.Resource,
		Scope: d.Scope, ObservedGeneration: d.ObservedGeneration}}
	if d.Transition != nil {
		m.Kind, m.Stream = kindTransition, d.Transition.Stream
		m.Status, m.Reason, m.Message = d.Transition.Status, d.Transition.Reason, d.Transition.Message
		if p := d.Transition.Previous; p != nil {
			m.Previous = &condition{Status: p.Status, Reason: p.Reason, Message: p.Message}
		}
	} else {
		m.Kind, m.Type, m.Severity = kindEvent, d.ProgressEventType, r.Severity()
		if m.Details, err = json.Marshal(d.Details); err != nil {
			return nil, err
		}
	}
	carrier := otelprop.MapCarrier{}
	propagation.Default().Inject(ctx, carrier)
	m.Carrier = carrier
	return json.Marshal(m)
}

func (f *forwarder) loop() {
	defer close(f.done)
	for fw := range f.queue {
		if fw.sent != nil {
			close(fw.sent)
			continue
		}
		if f.gone.Load() {
			f.fallback.Logger(ScopeName).Emit(fw.ctx, fw.rec)
			continue
		}
		err := handoff.Send(f.path, fw.req, sendTimeout)
		switch {
		case err == nil:
		case errors.Is(err, handoff.ErrInvalid), errors.Is(err, handoff.ErrNoAnswer):
			// Refused as invalid (it was checked by the same rules), or
			// maybe recorded: exporting it could duplicate it.
			warnf(f.stderr, "the enclosing run did not take an event: %v", err)
		default:
			f.gone.Store(true)
			warnf(f.stderr, "the enclosing run is gone (%v): exporting directly", err)
			f.fallback.Logger(ScopeName).Emit(fw.ctx, fw.rec)
		}
	}
}

// sync waits, at most timeout, until the records queued so far are handed
// to the enclosing run. Not after close.
func (f *forwarder) sync(timeout time.Duration) {
	m := forwarded{sent: make(chan struct{})}
	select {
	case f.queue <- m:
	default: // full: the records are being dropped anyway
		return
	}
	select {
	case <-m.sent:
	case <-time.After(timeout):
	}
}

// recordsFirst is the span processor that hands a nested run's spans to
// the enclosing run (handoff.SpanForwarder), each span's end only once
// the records emitted before it are handed over: the enclosing run's view
// ends a part when its span ends, and records that arrived after would
// land outside the part's fold (the CI format's) and leave its failure
// without the record that says why.
type recordsFirst struct {
	sdktrace.SpanProcessor
	records **forwarder // set once the run has its record forwarder
}

func (p recordsFirst) OnEnd(s sdktrace.ReadOnlySpan) {
	if f := *p.records; f != nil {
		f.sync(sendTimeout)
	}
	p.SpanProcessor.OnEnd(s)
}

// close sends what is queued, until ctx is done.
func (f *forwarder) close(ctx context.Context) {
	f.once.Do(func() { close(f.queue) })
	select {
	case <-f.done:
	case <-ctx.Done():
		warnf(f.stderr, "%d events not handed to the enclosing run in time", len(f.queue))
	}
	if n := f.dropped.Load(); n > 0 {
		warnf(f.stderr, "%d events dropped: the enclosing run took them too slowly", n)
	}
}

// nestedRecorder is the Recorder of a run inside a run: without sequence
// numbers of its own (the enclosing run numbers what it forwards).
func nestedRecorder(f *forwarder) *progress.Recorder {
	return progress.NewRecorder(progress.WithLoggerProvider(f), progress.WithoutSequence())
}
