package tncoprocessor

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// corpusDir holds the golden files of the library's wire corpus
// (internal/testkit/wiretest): otlp.golden, each record as a driver on the
// library sends it over OTLP (otelbridge's TestGoldenOTLP), and
// message.golden, the TNCO message the driver builds for it
// (wire.AppendMessage, progress/wire's TestGoldenMessage).
const corpusDir = "../../internal/testkit/wiretest/testdata/"

// golden reads a golden file of the corpus: its cases by name, in order.
func golden(t *testing.T, section string) (names []string, out map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(corpusDir + section + ".golden")
	if err != nil {
		t.Fatal(err)
	}
	out = map[string]string{}
	for _, c := range strings.Split(strings.TrimPrefix(string(raw), "== "), "\n== ") {
		name, body, _ := strings.Cut(c, "\n")
		names = append(names, name)
		out[name] = strings.TrimRight(body, "\n")
	}
	return names, out
}

// TestGoldenCorpus runs the library's wire corpus through the processor,
// as the driver sends it, on the fast path and with the fast path off: the
// collector forwards the message the driver built, byte for byte, and the
// stock statements write the same message, but for the precision their
// ParseJSON loses (numbers are doubles there: progress.yaml says so). A name this module copies
// from the library (an attribute, the scope, the message's keys) that
// drifts changes the message and fails here.
func TestGoldenCorpus(t *testing.T) {
	names, in := golden(t, "otlp")
	_, want := golden(t, "message")
	paths := []struct {
		name      string
		stockOnly bool
	}{{"fast", false}, {"stock", true}}
	for _, path := range paths {
		p := newProcessor(t, unredacted(t), path.stockOnly)
		checked := 0
		for _, name := range names {
			if want[name] == "none" {
				continue // not a progress record: no message to compare
			}
			req, err := base64.StdEncoding.DecodeString(in[name])
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			before := p.fastRecords.Load()
			out := run(t, p, ld)
			got := message(t, out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
			if !bytes.Equal(got, []byte(want[name])) && !(path.stockOnly && sameAsDoubles(t, got, []byte(want[name]))) {
				t.Errorf("%s path, case %s:\n got %s\nwant %s", path.name, name, got, want[name])
			}
			if fast := p.fastRecords.Load() > before; fast == path.stockOnly {
				t.Errorf("%s path, case %s: took the fast path: %v", path.name, name, fast)
			}
			checked++
		}
		if checked < 10 {
			t.Fatalf("%s path: %d cases checked; the corpus has more", path.name, checked)
		}
	}
}

// sameAsDoubles reports whether a and b are the same JSON once every number
// is read as a double.
func sameAsDoubles(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
