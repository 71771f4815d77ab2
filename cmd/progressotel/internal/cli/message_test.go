package cli

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/progress"
)

// Details from JSON get the Go types a Go driver would pass: integers stay
// integers.
func TestDecodeDetailsKeepsIntegers(t *testing.T) {
	got, err := decodeDetails(json.RawMessage(`{"n": 3, "f": 1.5, "big": 12345678901234567890, "neg": -7,
		"nested": {"rc": 0, "list": [1, "a", {"x": 2}]}, "nil": null, "ok": true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"n": int64(3), "f": 1.5, "big": 1.2345678901234567e19, "neg": int64(-7),
		"nested": map[string]any{"rc": int64(0), "list": []any{int64(1), "a", map[string]any{"x": int64(2)}}},
		"nil":    nil, "ok": true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if d, err := decodeDetails(nil); err != nil || len(d) != 0 {
		t.Fatalf("no details: %v %v", d, err)
	}
	for _, bad := range []string{`[1]`, `"s"`, `3`, `null`, `{`, `{} {}`, `{"a":1}x`} {
		if _, err := decodeDetails(json.RawMessage(bad)); !errors.Is(err, errInvalid) {
			t.Errorf("%s: %v, want invalid", bad, err)
		}
	}
}

func TestBuildDetailsMergesDetailFlags(t *testing.T) {
	raw, err := buildDetails(`{"a": 1, "b": "x"}`, pairs{{"b", "y"}, {"c:", `{"d": [1]}`}, {"e", "5"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := decodeDetails(raw)
	want := map[string]any{"a": int64(1), "b": "y", "c": map[string]any{"d": []any{int64(1)}}, "e": "5"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	raw, err = buildDetails("-", nil, strings.NewReader(`{"from": "stdin"}`))
	if err != nil || !strings.Contains(string(raw), "stdin") {
		t.Fatalf("stdin: %s %v", raw, err)
	}
	if _, err := buildDetails("@/nonexistent/details.json", nil, nil); !errors.Is(err, errInvalid) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := buildDetails("", pairs{{"n:", "[1"}}, nil); !errors.Is(err, errInvalid) {
		t.Fatalf("bad :=: %v", err)
	}
}

// An emit inside a run takes the run's envelope where it sets none: the
// component and the resource each whole, the scope key by key.
func TestEnvelopeInherit(t *testing.T) {
	run := envelope{
		Component:          progress.Component{Name: "driver", Version: "1"},
		Resource:           progress.Resource{Type: "nginx", ID: "web"},
		Scope:              map[string]string{"tenant": "t1", "project": "p1"},
		ObservedGeneration: 4,
	}
	got := envelope{Resource: progress.Resource{ID: "db"}, Scope: map[string]string{"project": "p2"}}.inherit(run)
	want := envelope{
		Component:          progress.Component{Name: "driver", Version: "1"},
		Resource:           progress.Resource{ID: "db"},
		Scope:              map[string]string{"tenant": "t1", "project": "p2"},
		ObservedGeneration: 4,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got := (envelope{}).inherit(envelope{}); !reflect.DeepEqual(got, envelope{}) {
		t.Fatalf("empty: %+v", got)
	}
}

func TestSeverity(t *testing.T) {
	for in, want := range map[string]int{"": 9, "INFO": 9, "warn": 13, "Warning": 13, "error": 17, "debug": 5, "trace": 1, "fatal": 21, "24": 24} {
		if got, err := parseSeverity(in); err != nil || int(got) != want {
			t.Errorf("%q: %v %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"loud", "0", "25", "-1"} {
		if _, err := parseSeverity(bad); !errors.Is(err, errInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A message from another version of progressotel is refused, not
// misread.
func TestMessageVersion(t *testing.T) {
	m := message{V: protocolVersion + 1, Kind: kindEvent, Type: "a/B"}
	if err := m.validate(); !errors.Is(err, errInvalid) {
		t.Fatalf("%v", err)
	}
}

// A run refuses an emit of another protocol version as a failure, not as
// invalid input: the emit then exports the event itself.
func TestRunRefusesAnotherVersionAsAFailure(t *testing.T) {
	h := &emitHandler{ctx: context.Background(), rec: progress.NewRecorder()}
	req, _ := json.Marshal(message{V: protocolVersion + 1, Kind: kindEvent, Type: "a/B"})
	err := h.handle(context.Background(), req)
	if err == nil || errors.Is(err, handoff.ErrInvalid) {
		t.Fatalf("another version: %v", err)
	}
	req, _ = json.Marshal(message{V: protocolVersion, Kind: kindEvent, Type: "NoGroup"})
	if err := h.handle(context.Background(), req); !errors.Is(err, handoff.ErrInvalid) {
		t.Fatalf("invalid type: %v", err)
	}
	if err := h.handle(context.Background(), []byte("{not json")); !errors.Is(err, handoff.ErrInvalid) {
		t.Fatalf("not JSON: %v", err)
	}
}
