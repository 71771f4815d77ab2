// Package wiretest is the golden corpus of the record format: records of
// every shape the format has, and for each one the output every reader of
// the format must give (the attributes progress writes, the Decoded event,
// the TNCO message, the OTLP request, the JSON line, the pretty line). Each reader's
// tests call Check for its own section, the way testing/slogtest checks a
// slog handler; a change to the format then changes one place and the
// golden files in testdata/, which
//
//	go test ./progress ./progress/wire ./prettyexporter -run Golden -update
//
// rewrites.
package wiretest

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/hostile"
	"github.com/progressotel/progressotel/progress"
)

// Case is one record of the corpus. Emit records it through r (a real
// progress.Recorder) or, for records that package progress never builds,
// by hand through l, an SDK logger under the same scope.
type Case struct {
	Name string
	Emit func(ctx context.Context, r *progress.Recorder, l log.Logger) error
}

// When is the timestamp of every record of the corpus.
var When = time.Date(2026, 11, 29, 14, 3, 7, 412_000_000, time.UTC)

// spanCtx carries a fixed sampled span, so that trace ids are golden too.
func spanCtx() context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

var play = progress.Envelope{
	Component: progress.Component{Name: "ansible-driver", Version: "3.2.1"},
	Resource:  progress.Resource{Type: "Play", ID: "site.yml"},
}

func event(typ string, details any) func(context.Context, *progress.Recorder, log.Logger) error {
	return func(ctx context.Context, r *progress.Recorder, _ log.Logger) error {
		return r.Record(ctx, progress.Event{Type: typ, Details: details, Time: When, Envelope: play})
	}
}

// hand emits a record that progress did not build: name, body and attrs
// as given.
func hand(name string, body attribute.Value, attrs ...attribute.KeyValue) func(context.Context, *progress.Recorder, log.Logger) error {
	return func(ctx context.Context, _ *progress.Recorder, l log.Logger) error {
		var rec log.Record
		rec.SetEventName(name)
		rec.SetTimestamp(When)
		rec.SetSeverity(log.SeverityInfo)
		rec.SetBody(body)
		rec.AddAttributes(attrs...)
		l.Emit(ctx, rec)
		return nil
	}
}

type taskResult struct {
	Msg     string   `json:"msg"`
	Changed bool     `json:"changed"`
	RC      int      `json:"rc,string"`
	Skipped bool     `json:"skipped,omitempty"`
	Results []string `json:"results"`
	Timing  struct {
		StartMs    int64 `json:"startMs"`
		DurationMs int64 `json:"durationMs"`
	} `json:"timing"`
}

type hostEvent struct {
	TaskName   string     `json:"taskName"`
	HostName   string     `json:"hostName"`
	Internal   string     `json:"-"`
	TaskResult taskResult `json:"taskResult"`
	Delegated  *string    `json:"delegatedHostName"`
	Item       any        `json:"itemLabel,omitempty"`
}

type textID int

func (t textID) MarshalText() ([]byte, error) { return []byte("id-" + string(rune('0'+int(t)))), nil }

// Cases returns the corpus.
func Cases() []Case {
	return []Case{
		{"small-map", event("ansible/TaskStartedOnHost", map[string]any{
			"taskName": "Install nginx", "hostName": "web-1", "argsHidden": false})},
		{"struct-details", event("ansible/TaskCompletedOnHost", hostEvent{
			TaskName: "Install nginx", HostName: "web-1", Internal: "never written",
			TaskResult: taskResult{Msg: "ok", Changed: true, RC: 0, Results: []string{"a", "b"}},
		})},
		{"escaped-keys", event("test/Escapes", map[string]any{
			"a.b": 1, "100%": "pct", "x.y": map[string]any{"z.w": true}, "plain": map[string]any{"a.b": "nested"}})},
		{"slices-and-maps", event("ansible/PlaybookResult", map[string]any{
			"plays":     []any{map[string]any{"play": map[string]any{"name": "site", "id": "p1"}}},
			"hostStats": map[string]any{"web-1": map[string]int{"ok": 3, "changed": 1, "failures": 0}},
			"matrix":    []any{[]any{1, 2}, []any{}, []string{"x"}},
			"raw":       []byte("bytes"),
			"empty":     map[string]any{}, "emptyList": []any{},
			"nilMap": map[string]any(nil), "nilList": []any(nil),
			"nilsInside": []any{map[string]any(nil), []string(nil), nil},
		})},
		{"numbers-and-times", event("test/Numbers", map[string]any{
			"int": -42, "maxInt": int64(math.MaxInt64), "big": uint64(math.MaxUint64), "f64": 2.5, "f32": float32(0.1), "tiny": 1e-9,
			"num": json.Number("12"), "dur": 1500 * time.Millisecond, "at": When, "ids": map[textID]int{1: 10, 2: 20},
		})},
		{"fallbacks", event("test/Fallbacks", map[string]any{
			"nan": math.NaN(), "inf": math.Inf(-1), "ch": make(chan int), "nilErr": hostile.NilErr(),
			"boom": hostile.PanicJSON{}, "err": &hostile.MyErr{Msg: "disk full"},
		})},
		{"secrets", event("ansible/TaskStartedOnHost", map[string]any{
			"args":   map[string]any{"api_token": "t0k3n", "dest": "/etc/nginx.conf", "password": map[string]any{"deep": "x"}},
			"pem":    hostile.Cert + hostile.RSAKey,
			"lines":  []string{"ok", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3Blbn" + hostile.KeyMarker, "-----END OPENSSH PRIVATE KEY-----", "after"},
			"keyRaw": []byte(hostile.ECParam + hostile.ECKey),
			"items":  []any{map[string]any{"secret": "s", "name": "n"}},
		})},
		{"limits", func(ctx context.Context, r *progress.Recorder, _ log.Logger) error {
			var deep any = "leaf"
			for range 10 {
				deep = map[string]any{"d": deep}
			}
			return r.Record(ctx, progress.Event{Type: "test/Limits", Time: When, Details: map[string]any{
				"deep": deep, "long": strings.Repeat("x", 5000), "list": make([]int, 300)[:260],
			}})
		}},
		{"scalar-details", event("test/Scalar", "just text")},
		{"no-details", event("common/OperationStarted", nil)},
		{"control-characters", event("test/Control", map[string]any{
			"esc\x1b[31m": "red\x1b[0m", "line": "a\nb\tc", "bidi": "\u202eevil", "quote": `say "hi" = \o/`})},
		{"failure-with-scope", func(ctx context.Context, r *progress.Recorder, _ log.Logger) error {
			evt := progress.OperationFailed("Install", "INTERNAL_ERROR", "an unexpected error occurred")
			evt.Time = When
			evt.Envelope = progress.Envelope{
				Component:          progress.Component{Name: "kube-controller"},
				Resource:           progress.Resource{Type: "Cluster", ID: "web", Namespace: "ns-1", UID: "uid-7"},
				Scope:              map[string]string{"organization": "acme", "project": "shop", "region.eu": "x"},
				ObservedGeneration: 4,
			}
			return r.Record(spanCtx(), evt)
		}},
		{"transition", func(ctx context.Context, r *progress.Recorder, _ log.Logger) error {
			return r.RecordTransition(spanCtx(), progress.Transition{
				Stream: progress.StreamProvisioning, Time: When,
				Condition: progress.Condition{Status: "True", Reason: "Provisioned", Message: "Cluster is ready"},
				Previous:  &progress.Condition{Status: "False", Reason: "Provisioning"},
				Envelope:  progress.Envelope{Resource: progress.Resource{Type: "Cluster", ID: "web"}, Scope: map[string]string{"tenant": "t-1"}},
			})
		}},
		{"transition-first", func(ctx context.Context, r *progress.Recorder, _ log.Logger) error {
			return r.RecordTransition(ctx, progress.Transition{
				Stream: "health", Time: When, Condition: progress.Condition{Status: "Unknown", Reason: "Probing"},
			})
		}},
		{"hand-ordinary-log", hand("", attribute.StringValue("plain \x1b log"),
			attribute.String("progress.details.x", "kept as an attribute"),
			attribute.Int("http.status", 200),
			attribute.String("tracectx.transactionid", "tx-1"))},
		{"hand-conflicting-paths", hand("test/Conflicts", attribute.Value{},
			attribute.String(handEventTypeKey, handEventType),
			attribute.Int("progress.details.a", 1),
			attribute.Int("progress.details.a.b", 2),
			attribute.Int("progress.details.c", 3),
			attribute.Int("progress.details.c", 4),
			attribute.String("progress.details.e%2ef", "lower-case escape"),
			attribute.String("progress.sequence", "not an int"))},
		{"hand-tracectx", hand("test/TraceCtx", attribute.Value{},
			attribute.String(handEventTypeKey, handEventType),
			attribute.String("progress.details.step", "one"),
			attribute.String("tracectx.transactionid", "tx-42"),
			attribute.String("tracectx.tenantid", "t-1"),
			attribute.String("progress.tenant", "t-1"),
			attribute.Int("progress.sequence", 7))},
	}
}

// The names hand-built records use: written out, not taken from
// wireformat, so that the corpus pins them.
const (
	handEventTypeKey = "progress.event_type"
	handEventType    = "ResourceTransitionProgressEvent"
)
