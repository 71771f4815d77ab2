package tncoprocessor

import (
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
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
// each record as a driver sends it over OTLP, with no body: the processor
// builds, from the attributes alone, the message the library's builder
// writes for the record in the driver (message.golden), byte for byte.
func TestGoldenCorpus(t *testing.T) {
	names, in := golden(t, "otlp")
	_, want := golden(t, "message")
	p := newProcessor(t, unredacted(t))
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
		lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
		if lr.Body().Type() == pcommon.ValueTypeBytes {
			t.Errorf("%s: the driver sent a body (%s)", name, lr.Body().Type())
		}
		out := run(t, p, ld)
		got := message(t, out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
		if !bytes.Equal(got, []byte(want[name])) {
			t.Errorf("case %s:\n got %s\nwant %s", name, got, want[name])
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("%d cases checked; the corpus has more", checked)
	}
}
