package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	otelprop "go.opentelemetry.io/otel/propagation"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// protocolVersion is the version of message a run understands.
const protocolVersion = 1

const (
	kindEvent      = "event"
	kindTransition = "transition"
)

// message is one event or transition, as emit and transition check it,
// send it to the enclosing run and record it. Its JSON form is the hand-off
// protocol: a child may run another version of progressotel, so unknown
// versions are refused.
type message struct {
	V    int       `json:"v"`
	Kind string    `json:"kind"`
	Time time.Time `json:"time"`

	// An event.
	Type     string          `json:"type,omitempty"`
	Details  json.RawMessage `json:"details,omitempty"` // a JSON object
	Severity log.Severity    `json:"severity,omitempty"`

	// A transition.
	Stream   string     `json:"stream,omitempty"`
	Status   string     `json:"status,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	Message  string     `json:"message,omitempty"`
	Previous *condition `json:"previous,omitempty"`

	Envelope envelope `json:"envelope,omitzero"`

	// Carrier holds the emitter's trace context, baggage and tracectx, as
	// propagation.Default() injects them: the run records in that context.
	Carrier map[string]string `json:"carrier,omitempty"`

	details map[string]any // Details decoded by validate
}

// condition is progress.Condition (the same fields, converted) in JSON.
type condition struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// envelope is progress.Envelope (the same fields, converted) in the
// message's JSON.
type envelope struct {
	Component          progress.Component `json:"component,omitzero"`
	Resource           progress.Resource  `json:"resource,omitzero"`
	Scope              map[string]string  `json:"scope,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
}

// inherit fills what e leaves unset from the run's envelope: the component
// and the resource each as a whole (an emit that names a resource names
// all of it), the scope key by key, the generation.
func (e envelope) inherit(run envelope) envelope {
	if e.Component == (progress.Component{}) {
		e.Component = run.Component
	}
	if e.Resource == (progress.Resource{}) {
		e.Resource = run.Resource
	}
	if len(run.Scope) > 0 {
		scope := maps.Clone(run.Scope)
		maps.Copy(scope, e.Scope)
		e.Scope = scope
	}
	if e.ObservedGeneration == 0 {
		e.ObservedGeneration = run.ObservedGeneration
	}
	return e
}

// errInvalid marks invalid input: exit status 2, nothing emitted.
var errInvalid = errors.New("invalid input")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInvalid, fmt.Sprintf(format, args...))
}

// validate checks m the way the Recorder will, so that invalid input is
// refused before anything is sent or set up.
func (m *message) validate() error {
	if m.V != protocolVersion {
		return invalidf("message version %d, this progressotel speaks %d", m.V, protocolVersion)
	}
	switch m.Kind {
	case kindEvent:
		if err := checkType(m.Type); err != nil {
			return err
		}
		var err error
		if m.details, err = decodeDetails(m.Details); err != nil {
			return err
		}
		if m.Severity < 0 || m.Severity > log.SeverityFatal4 {
			return invalidf("severity %d out of range", m.Severity)
		}
	case kindTransition:
		if m.Status == "" {
			return invalidf("a transition needs a status (--status)")
		}
		t := progress.Transition{Stream: m.Stream, Condition: progress.Condition{Status: m.Status}}
		if err := validator.RecordTransition(context.Background(), t); err != nil {
			return fmt.Errorf("%w: %w", errInvalid, err)
		}
		if m.Previous != nil && m.Previous.Status == "" {
			return invalidf("a previous condition needs a status (--previous-status)")
		}
	default:
		return invalidf("unknown message kind %q", m.Kind)
	}
	return nil
}

// validator checks events and transitions by the Recorder's own rules,
// recording them to nowhere, with the error the run's Recorder would give.
var validator = progress.NewRecorder(
	progress.WithLoggerProvider(lognoop.NewLoggerProvider()),
	progress.WithMeterProvider(metricnoop.NewMeterProvider()))

func checkType(typ string) error {
	if err := validator.Record(context.Background(), progress.Event{Type: typ}); err != nil {
		return fmt.Errorf("%w: %w", errInvalid, err)
	}
	return nil
}

// record records m, which validate has checked, with env.
func (m *message) record(ctx context.Context, rec *progress.Recorder, env envelope) error {
	if m.Kind == kindEvent {
		return rec.Record(ctx, progress.Event{
			Type: m.Type, Details: m.details, Severity: m.Severity, Time: m.Time, Envelope: progress.Envelope(env),
		})
	}
	return rec.RecordTransition(ctx, progress.Transition{
		Stream:    m.Stream,
		Condition: progress.Condition{Status: m.Status, Reason: m.Reason, Message: m.Message},
		Previous:  (*progress.Condition)(m.Previous),
		Time:      m.Time,
		Envelope:  progress.Envelope(env),
	})
}

// decodeDetails decodes a JSON object into the values a Go driver would
// pass: integers as int64 (so 3 stays 3, not 3.0), other numbers as
// float64, nested maps and slices. Empty input is no details.
func decodeDetails(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, invalidf("details are not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, invalidf("details hold more than one JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalidf("details must be a JSON object, not %s", jsonKind(v))
	}
	return numbers(obj).(map[string]any), nil
}

// numbers replaces each json.Number by an int64 when it is an integer that
// fits, else by a float64.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil && !math.IsInf(f, 0) {
			return f
		}
		return string(x) // beyond float64: keep its text
	}
	return v
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// sendTimeout bounds the wait for the enclosing run's answer, given once its
// Recorder (which never waits for I/O) took the event.
const sendTimeout = 10 * time.Second

// deliver records m, which has been checked: through the enclosing run when
// there is one, else with an exporter of its own, else nowhere with a
// warning. Only invalid input fails (exit status 2): a driver must not fail
// because its telemetry did.
func deliver(ctx context.Context, m *message, o *commonOptions, stderr io.Writer) Status {
	ctx = contextFromEnv(ctx, o.tracectx)
	if path := os.Getenv(handoff.EnvSocket); path != "" {
		carrier := otelprop.MapCarrier{}
		propagation.Default().Inject(ctx, carrier)
		m.Carrier = carrier
		req, err := json.Marshal(m)
		if err != nil {
			warnf(stderr, "%v", err)
			return Status{Code: ExitUsage}
		}
		err = handoff.Send(path, req, sendTimeout)
		switch {
		case err == nil:
			return Status{}
		case errors.Is(err, handoff.ErrInvalid):
			warnf(stderr, "%v", err)
			return Status{Code: ExitUsage}
		case errors.Is(err, handoff.ErrUnreachable): // the run has ended (this is a leftover)
			warnf(stderr, "the enclosing run is gone (%s): exporting directly", path)
		case errors.Is(err, handoff.ErrNoAnswer): // maybe recorded: exporting could duplicate it
			warnf(stderr, "the enclosing run did not answer (%v): the event may be lost", err)
			return Status{}
		default: // refused, not for the input (another version runs the run)
			warnf(stderr, "the enclosing run did not take the event (%v): exporting directly", err)
		}
	}

	switch exporters() {
	case exportersUnset:
		warnf(stderr, "%s", noExporterWarning)
		return Status{}
	case exportersDisabled:
		return Status{}
	}
	// Outside a run each emit is a process of its own, whose sequence
	// numbers would restart at 1: there are none.
	opts := []otelbridge.Option{otelbridge.WithRecorderOptions(progress.WithoutSequence())}
	if names, ok := singleEventExporters(); ok {
		opts = append(opts, otelbridge.WithExporters(names...))
	}
	t, err := setupTelemetry(ctx, o, true, false, stderr, opts...)
	if err != nil {
		warnf(stderr, "telemetry: %v: nothing is exported", err)
		return Status{}
	}
	if err := m.record(ctx, progress.Default(), m.Envelope); err != nil { // checked before
		warnf(stderr, "%v", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	t.shutdown(sctx, stderr)
	return Status{}
}
