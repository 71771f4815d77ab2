package ansible

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// oracleEvent decodes a line with encoding/json, exactly (keys matched
// case-sensitively, as decodeEvent does), into the fields decodeEvent
// fills: the reference the scanner must agree with.
func oracleEvent(line []byte) (jobEvent, bool) {
	var ev jobEvent
	var top map[string]json.RawMessage
	if json.Unmarshal(line, &top) != nil {
		return ev, false
	}
	strField := func(m map[string]json.RawMessage, k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	ev.UUID, ev.ParentUUID = strField(top, "uuid"), strField(top, "parent_uuid")
	ev.Event, ev.Created = strField(top, "event"), strField(top, "created")
	ev.Stdout = strField(top, "stdout")
	_ = json.Unmarshal(top["counter"], &ev.Counter)
	_ = json.Unmarshal(top["pid"], &ev.PID)
	var data map[string]json.RawMessage
	if json.Unmarshal(top["event_data"], &data) != nil {
		return ev, true
	}
	d := &ev.Data
	for k, p := range map[string]*string{
		"playbook": &d.Playbook, "play": &d.Play, "play_uuid": &d.PlayUUID, "play_pattern": &d.PlayPattern,
		"name": &d.Name, "task": &d.Task, "task_uuid": &d.TaskUUID, "task_action": &d.TaskAction,
		"task_args": &d.TaskArgs, "role": &d.Role, "host": &d.Host, "start": &d.Start, "end": &d.End,
		"varname": &d.VarName,
	} {
		*p = strField(data, k)
	}
	_ = json.Unmarshal(data["is_conditional"], &d.IsConditional)
	if v, ok := data["ignore_errors"]; ok {
		_ = d.IgnoreErrors.UnmarshalJSON(v)
	}
	d.Res = data["res"]
	for k, p := range map[string]*map[string]int{
		"ok": &d.OK, "changed": &d.Changed, "failures": &d.Failures, "dark": &d.Dark,
		"skipped": &d.Skipped, "rescued": &d.Rescued, "ignored": &d.Ignored, "processed": &d.Processed,
	} {
		if v, ok := data[k]; ok && len(v) > 0 && v[0] == '{' {
			_ = json.Unmarshal(v, p)
		}
	}
	return ev, true
}

// TestDecodeEventMatchesEncodingJSON: on every line of the recorded real
// streams, the scanner decodes exactly what encoding/json decodes, and
// the module results reduce to the same.
func TestDecodeEventMatchesEncodingJSON(t *testing.T) {
	for _, gc := range goldenCases[:4] {
		for n, line := range bytes.Split(readStream(t, gc.stream), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			want, ok := oracleEvent(line)
			if !ok {
				t.Fatalf("%s:%d: not JSON", gc.stream, n+1)
			}
			var got jobEvent
			if err := decodeEvent(line, &got); err != nil {
				t.Fatalf("%s:%d: %v", gc.stream, n+1, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:%d:\n got %+v\nwant %+v", gc.stream, n+1, got, want)
			}
			if gr, wr := decodeResult(got.Data.Res), oracleResult(want.Data.Res); !reflect.DeepEqual(gr.reduce(false, false, 0), wr.reduce(false, false, 0)) ||
				gr.itemLabel() != nil && !reflect.DeepEqual(gr.itemLabel(), wr.itemLabel()) || gr.delegatedHost() != wr.delegatedHost() {
				t.Errorf("%s:%d: result %+v, want %+v", gc.stream, n+1, gr, wr)
			}
		}
	}
}

func oracleResult(res []byte) rawResult {
	var r rawResult
	var m map[string]json.RawMessage
	if json.Unmarshal(res, &m) != nil {
		return r
	}
	r.Msg, r.ItemLabel, r.Item = m["msg"], m["_ansible_item_label"], m["item"]
	_ = json.Unmarshal(m["censored"], &r.Censored)
	for k, p := range map[string]*flexBool{"changed": &r.Changed, "failed": &r.Failed, "skipped": &r.Skipped, "unreachable": &r.Unreachable} {
		if v, ok := m[k]; ok {
			_ = p.UnmarshalJSON(v)
		}
	}
	if v, ok := m["rc"]; ok {
		_ = r.RC.UnmarshalJSON(v)
	}
	_ = json.Unmarshal(m["results"], &r.Results)
	var dv struct {
		AnsibleHost string `json:"ansible_host"`
	}
	if json.Unmarshal(m["_ansible_delegated_vars"], &dv) == nil {
		r.DelegatedHost = dv.AnsibleHost
	}
	return r
}

// FuzzDecodeEvent: on any input encoding/json reads as an object, the
// scanner reads the same fields; on anything else it may refuse, but
// never panics.
func FuzzDecodeEvent(f *testing.F) {
	for _, gc := range goldenCases[:4] {
		for _, line := range bytes.Split(readStream(f, gc.stream), []byte("\n"))[:3] {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"event": "x\"y\\", "event_data": {"task": "a\u00e9\n", "ok": {"h\"1": 2}, "res": [1, {"a": "}"}]}}`))
	f.Add([]byte(`{"event":"a","event":"b","counter":1e3,"pid":-1}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var got jobEvent
		err := decodeEvent(line, &got)
		res := decodeResult(got.Data.Res)
		_ = res.reduce(false, false, 0)
		want, ok := oracleEvent(line)
		if !ok || !json.Valid(line) {
			return
		}
		var top map[string]any
		if json.Unmarshal(line, &top) != nil || top == nil { // null decodes into a nil map
			return
		}
		if err != nil {
			t.Fatalf("encoding/json reads %q, the scanner does not: %v", line, err)
		}
		// Duplicate keys: both take the last; numbers the scanner does not
		// read as integers (1e3) are zero in both.
		if got.Event != want.Event || got.UUID != want.UUID || got.Created != want.Created ||
			got.Data.Task != want.Data.Task || got.Data.Host != want.Data.Host || !bytes.Equal(got.Data.Res, want.Data.Res) ||
			!reflect.DeepEqual(got.Data.OK, want.Data.OK) {
			t.Fatalf("scanner %+v\noracle %+v", got, want)
		}
	})
}
