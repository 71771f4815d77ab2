package ansible

import "testing"

// TestDecodeEventLenient: a value of an unexpected type (a module's odd
// result, a count that is not a number) leaves its field unset and keeps
// the event; only a line that is no JSON object is refused.
func TestDecodeEventLenient(t *testing.T) {
	var ev jobEvent
	line := `{"event": "runner_on_ok", "counter": "x", "event_data": {"host": "web-1", "ignore_errors": "yes",
		"res": {"changed": "yes", "rc": "7", "msg": [1, {"a": null}], "results": [3, "x", {"failed": 1, "msg": "item"}],
		"_ansible_delegated_vars": {"ansible_host": "lb-1"}}, "ok": {"web-1": "many"}}}`
	if err := decodeEvent([]byte(line), &ev); err != nil {
		t.Fatalf("decodeEvent: %v", err)
	}
	r := ev.Data.Res.reduce(false, false, 0)
	if ev.Event != "runner_on_ok" || ev.Data.Host != "web-1" || !bool(ev.Data.IgnoreErrors) || !r.changed() || r.RC == nil || *r.RC != 7 ||
		len(r.Results) != 3 || !r.Results[2].Failed || r.Results[2].Msg != "item" || ev.Data.Res.delegatedHost() != "lb-1" {
		t.Errorf("decoded %+v, reduced %+v", ev, r)
	}
	if _, ok := r.Msg.([]any); !ok {
		t.Errorf("a structured msg is kept structured: %#v", r.Msg)
	}
	if err := decodeEvent([]byte(`{"event": "runner_on_ok", "event_data": {"res": "a string"}}`), &ev); err != nil || ev.Event != "runner_on_ok" {
		t.Errorf("a result that is not an object: %v %+v", err, ev)
	}
	for _, bad := range []string{`[1, 2]`, `"event"`, `{"event": "runner_on_ok"`, `{"event": }`} {
		if err := decodeEvent([]byte(bad), &ev); err == nil {
			t.Errorf("decodeEvent(%s) = nil, want an error", bad)
		}
	}
}
