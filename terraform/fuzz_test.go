package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/progress"
)

// fuzzSecret is searched for in every output of FuzzStream.
const fuzzSecret = "FUZZ-s3cret-9137"

// recordedStreams returns the real streams of testdata/streams, the seeds
// of the fuzz tests.
func recordedStreams(f *testing.F) [][]byte {
	f.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.jsonl"))
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzStream feeds arbitrary bytes to the decoder: it never panics, every
// stream is framed by OperationStarted and OperationCompleted or
// OperationFailed (OperationFailed exactly when Stream returns an error),
// N never exceeds M, the counts agree, every event type it makes is valid, and a sensitive
// value never comes out, however the input spells it.
func FuzzStream(f *testing.F) {
	for _, b := range recordedStreams(f) {
		f.Add(b)
		// Single lines too, so that the fuzzer mutates one message at a
		// time.
		for _, line := range bytes.Split(b, []byte{'\n'})[:min(6, bytes.Count(b, []byte{'\n'}))] {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"type":"provision_progress","hook":{"resource":{"addr":"a.` + fuzzSecret + `"},"provisioner":"p","output":"x ` + fuzzSecret + `"}}`))
	f.Add([]byte(`{"type":"outputs","outputs":{"o":{"sensitive":false,"value":{"k":["FUZZ-s3\u0063ret-9137"]}}}}`))
	f.Add([]byte(`{"type":"diagnostic","diagnostic":{"severity":"error","summary":"` + fuzzSecret + `","address":"x"}}`))
	f.Add([]byte("{\"type\":\"apply_start\",\"hook\":{\"resource\":{\"addr\":\"x\",\"resource_key\":\"" + fuzzSecret + "\"},\"action\":\"create\"}}\n{\"type\":\"apply_errored\",\"hook\":{\"resource\":{\"addr\":\"x\"}}}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		c := newCapture(t)
		rec := c.sink.Recorder()
		res, err := Stream(context.Background(), bytes.NewReader(in),
			adapter.WithRecorder(rec), adapter.WithTracerProvider(c.tp), WithSensitiveValues(fuzzSecret), adapter.WithMaxLineBytes(1<<16))
		if st := rec.Stats(); st.Invalid != 0 {
			t.Fatalf("%d invalid events", st.Invalid)
		}
		types := c.sink.Types()
		if len(types) < 2 || types[0] != progress.TypeOperationStarted ||
			(types[len(types)-1] != progress.TypeOperationCompleted && types[len(types)-1] != progress.TypeOperationFailed) {
			t.Fatalf("not framed: %v", types)
		}
		if (err == nil) != (types[len(types)-1] == progress.TypeOperationCompleted) || (err == nil) != res.OK() {
			t.Fatalf("error %v, OK %v, last event %s: they disagree", err, res.OK(), types[len(types)-1])
		}
		if res.Completed > res.Total && res.Plan != nil {
			t.Fatalf("N %d > M %d", res.Completed, res.Total)
		}
		if res.Errored < 0 || res.Cancelled < 0 || res.Errored+res.Cancelled > len(res.ErroredResources)+len(res.CancelledResources) {
			t.Fatalf("errored %d, cancelled %d of %v, %v", res.Errored, res.Cancelled, res.ErroredResources, res.CancelledResources)
		}
		if strings.Contains(c.everything(), fuzzSecret) {
			t.Fatalf("the sensitive value came out")
		}
	})
}

// FuzzParse checks the decoder's fast path against encoding/json: wherever
// parseFast answers, encoding/json accepts the line and reads the same
// message.
func FuzzParse(f *testing.F) {
	for _, b := range recordedStreams(f) {
		for _, line := range bytes.Split(b, []byte{'\n'}) {
			f.Add(line)
		}
	}
	for _, s := range []string{
		`{"type":"log","TYPE":"x"}`, `{"type":"a","type":"b"}`, `{"hook":{"action":"a"},"hook":{"output":"o"}}`,
		`{"hook":null}`, `{"outputs":null}`, `{"changes":{"add":1.0}}`, `{"changes":{"add":-0}}`,
		`{"hook":{"elapsed_seconds":1e400}}`, `{"@message":"a\u00e9\ud83d\ude00\"b"}`, `{"@message":"\xff"}`,
		`{"x":[1,{"y":[true,false,null,"\u0041"]}]} `, `{"type":"x"} trailing`, `{"diagnostic":{"range":{"start":{"line":01}}}}`,
		`{"ty\u0070e":"x"}`, `{"@level":"info","hook":{"resource":{"resource_key":null}}}`,
		`{"hook":{"resource":{"addr":"a"},"action":"x"},"hook":{"resource":{"module":"m"}},"type":"apply_start"}`,
		`{"diagnostic":{"range":{"filename":"f"}},"diagnostic":{"range":{"start":{"line":1}}},"type":"diagnostic"}`,
		`{"x":"\q"}`, `{"x":"\u12G4","type":"a"}`, `{"x":["a\"b\u00e9"],"type":"a"}`, `{"\u0074ype":"a"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast message
		if !parseFast(line, &fast) {
			return
		}
		var slow message
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("the fast path read a line encoding/json rejects (%v): %q", err, line)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("the paths differ on %q\nfast: %+v\nslow: %+v", line, fast, slow)
		}
	})
}
