package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// secretsInStreams are the sensitive values behind the recorded streams:
// the tool wrote some of them (a diagnostic quoting a provisioner's
// command, a provisioner printing a token and a key); none may reach the
// golden output.
var secretsInStreams = []string{dbPassword, "s3cr3t-from-config-default", "tok-abc123xyz",
	"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7"}

// TestGolden decodes every real stream of testdata/streams (recorded from
// OpenTofu and Terraform, see testdata/README.md) and compares what was
// recorded, event by event, and the span tree and the Result with
// testdata/golden. Run with -update to rewrite the golden files after a
// deliberate change, and review the diff.
func TestGolden(t *testing.T) {
	streams, err := filepath.Glob(filepath.Join("testdata", "streams", "*.jsonl"))
	if err != nil || len(streams) == 0 {
		t.Fatalf("no streams: %v", err)
	}
	for _, path := range streams {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			got := decodeGolden(t, path)
			golden := filepath.Join("testdata", "golden", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (go test -update rewrites it; review the diff):\n%s",
					path, golden, testutil.DiffLines(string(want), got))
			}
			for _, s := range secretsInStreams {
				if strings.Contains(got, s) {
					t.Errorf("the secret %q reaches the output", s)
				}
			}
		})
	}
}

// decodeGolden streams path and renders what was recorded: one line per
// event (time, span path, type, severity, details as JSON), the spans
// (sorted), and the Result and error.
func decodeGolden(t *testing.T, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := newCapture(t)
	res, runErr := Stream(context.Background(), f, c.opts(WithSensitiveValues(dbPassword))...)
	checkRun(t, c, res)

	var b strings.Builder
	for _, e := range c.sink.Events() {
		det, err := json.Marshal(e.Details)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s  %s  %s %s  %s\n", e.Timestamp.UTC().Format("15:04:05.000000"),
			spanPath(c, c.spanByID(e.SpanID)), e.EventName, e.Severity, det)
	}
	b.WriteString("-- spans\n")
	var spans []string
	for _, s := range c.spans.Ended() {
		line := spanPath(c, s) + "  " + attr(s, outcomes.Key)
		if s.Status().Code != 0 {
			line += fmt.Sprintf("  [%s: %s]", s.Status().Code, s.Status().Description)
		}
		line += fmt.Sprintf("  %s", s.EndTime().Sub(s.StartTime()))
		spans = append(spans, line)
	}
	slices.Sort(spans)
	b.WriteString(strings.Join(spans, "\n"))
	b.WriteString("\n-- result\n")
	r := res
	r.Start, r.End = r.Start.UTC(), r.End.UTC()
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b.Write(js)
	fmt.Fprintf(&b, "\n-- error\n%v\n", runErr)
	return b.String()
}

// spanPath names a span by its ancestors' names: "terraform > create x".
func spanPath(c *capture, s sdktrace.ReadOnlySpan) string {
	var names []string
	for s != nil {
		names = append(names, s.Name())
		s = c.spanByID(s.Parent().SpanID())
	}
	slices.Reverse(names)
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, " > ")
}
