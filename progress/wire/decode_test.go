package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/wiretest"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// roundTrip records details and decodes them back.
func roundTrip(t testing.TB, details any) wire.Decoded {
	t.Helper()
	sink := progresstest.NewSink()
	if err := sink.Recorder(progress.WithoutRedaction()).Record(context.Background(), progress.Event{Type: "test/RoundTrip", Details: details}); err != nil {
		t.Fatal(err)
	}
	evs := sink.Events()
	if len(evs) != 1 {
		t.Fatalf("got %d events", len(evs))
	}
	return evs[0].Decoded
}

func TestDecodeRoundTrip(t *testing.T) {
	cases := map[string]map[string]any{
		"empty":  {},
		"flat":   {"a": "x", "n": int64(3), "f": 1.5, "b": false, "nil": nil},
		"nested": {"taskResult": map[string]any{"rc": int64(2), "sub": map[string]any{"deep": "y"}, "empty": map[string]any{}}},
		"slices": {"plays": []any{map[string]any{"play": map[string]any{"name": "p", "id": "1"}}}, "tags": []any{"a", "b"}, "none": []any{}},
		"separator and escape in keys": {
			"a.b": "1", "a": map[string]any{"b": "2"}, "%2E": "3", "x%y": map[string]any{".": "4"}, "": "empty key",
		},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got := roundTrip(t, in)
			if got.EventType != wire.EventType || got.ProgressEventType != "test/RoundTrip" {
				t.Errorf("types = %q %q", got.EventType, got.ProgressEventType)
			}
			if !reflect.DeepEqual(got.Details, in) {
				t.Errorf("round trip:\n got %#v\nwant %#v", got.Details, in)
			}
			seed := got.Message()
			if seed["eventType"] != wire.EventType || seed["progressEventType"] != "test/RoundTrip" {
				t.Errorf("seed = %v", seed)
			}
		})
	}
}

// ansibleTaskResult mirrors the reduced taskResult of the Ansible driver.
type ansibleTaskResult struct {
	Msg     string   `json:"msg,omitempty"`
	Changed bool     `json:"changed"`
	Failed  bool     `json:"failed"`
	Skipped bool     `json:"skipped,omitempty"`
	RC      *int     `json:"rc,omitempty"`
	Results []string `json:"results,omitempty"`
}

type base struct {
	TaskName string `json:"taskName"`
}

type taskCompleted struct {
	base
	HostName   string            `json:"hostName"`
	Delegated  string            `json:"delegatedHostName,omitempty"`
	Ignored    string            `json:"-"`
	unexported string            //nolint:unused // must be skipped like encoding/json does
	TaskResult ansibleTaskResult `json:"taskResult"`
	When       time.Time         `json:"when"`
	Labels     map[string]string `json:"labels,omitempty"`
	Count      uint16
}

// TestStructDetailsMatchEncodingJSON: struct details decode to what
// encoding/json would have produced.
func TestStructDetailsMatchEncodingJSON(t *testing.T) {
	rc := 0
	in := taskCompleted{
		base: base{TaskName: "install"}, HostName: "web-1", Ignored: "no", unexported: "no",
		TaskResult: ansibleTaskResult{Msg: "done", Changed: true, RC: &rc, Results: []string{"a"}},
		When:       time.Date(2026, 11, 29, 10, 0, 0, 5, time.UTC),
		Labels:     map[string]string{"tier": "web"},
		Count:      7,
	}
	got := roundTrip(t, in)
	if want := wiretest.JSONLike(t, in); !reflect.DeepEqual(got.Details, want) {
		t.Errorf("struct details:\n got %#v\nwant %#v", got.Details, want)
	}
	// And through a pointer.
	if got := roundTrip(t, &in); !reflect.DeepEqual(got.Details, wiretest.JSONLike(t, in)) {
		t.Errorf("pointer details differ")
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1},"a.b":"x","%":[1,"y",{"k":true}],"":null}`))
	f.Add([]byte(`{"plays":[{"play":{"name":"p","id":"1"}}],"hostStats":{"web-1":{"ok":3,"failures":0}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var in map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&in); err != nil || in == nil {
			return
		}
		in = wiretest.JSONLike(t, in)
		if depth(in) >= progress.DefaultLimits().MaxDepth || count(in) > 64 || hasBigStrings(in) {
			return // limits apply; covered by the limits tests
		}
		got := roundTrip(t, in)
		if !reflect.DeepEqual(got.Details, in) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got.Details, in)
		}
	})
}

func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

func count(v any) int {
	n := 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			n += count(e)
		}
	case []any:
		for _, e := range x {
			n += count(e)
		}
	}
	return n
}

func hasBigStrings(v any) bool {
	switch x := v.(type) {
	case string:
		return len(x) > 1024
	case map[string]any:
		for k, e := range x {
			if len(k) > 1024 || hasBigStrings(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasBigStrings(e) {
				return true
			}
		}
	}
	return false
}
