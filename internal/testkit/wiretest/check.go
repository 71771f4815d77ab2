package wiretest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/tncomessage"
)

var update = flag.Bool("update", false, "rewrite the golden files of the wire corpus")

// Record is one case's record, as an exporter receives it.
type Record struct {
	Case   string
	Record sdklog.Record
}

// Records emits every case through a real SDK LoggerProvider and returns
// the records, in corpus order.
func Records(t testing.TB) []Record {
	t.Helper()
	var out []Record
	for _, c := range Cases() {
		sink := progresstest.NewSink()
		l := sink.LoggerProvider().Logger(tncomessage.ScopeName)
		if err := c.Emit(context.Background(), sink.Recorder(), l); err != nil {
			t.Fatalf("case %s: %v", c.Name, err)
		}
		recs := sink.Records()
		if len(recs) != 1 {
			t.Fatalf("case %s: %d records", c.Name, len(recs))
		}
		out = append(out, Record{c.Name, recs[0]})
	}
	return out
}

// Check runs read over every record of the corpus and compares its output
// with testdata/<section>.golden; with -update it rewrites the file.
func Check(t *testing.T, section string, read func(t *testing.T, r *sdklog.Record) string) {
	t.Helper()
	var b strings.Builder
	got := map[string]string{}
	for _, r := range Records(t) {
		out := strings.TrimRight(read(t, &r.Record), "\n")
		got[r.Case] = out
		b.WriteString("== " + r.Case + "\n" + out + "\n")
	}
	path := filepath.Join(dir(), "testdata", section+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	want := parse(string(data))
	for _, c := range Cases() {
		w, ok := want[c.Name]
		switch {
		case !ok:
			t.Errorf("%s: case %s missing from %s (run with -update)", section, c.Name, path)
		case got[c.Name] != w:
			t.Errorf("%s, case %s:\n--- got\n%s\n--- want (%s)\n%s", section, c.Name, got[c.Name], path, w)
		}
	}
	if len(want) != len(got) {
		t.Errorf("%s: %d cases in %s, %d in the corpus", section, len(want), path, len(got))
	}
}

// parse splits a golden file into its cases: "== name" lines, each
// followed by the case's output.
func parse(s string) map[string]string {
	out := map[string]string{}
	for _, c := range strings.Split("\n"+strings.TrimRight(s, "\n"), "\n== ")[1:] {
		name, body, _ := strings.Cut(c, "\n")
		out[name] = body
	}
	return out
}

func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}
