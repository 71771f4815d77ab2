package progress_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// recordText records text through Record in the places free text sits in
// events: a detail string, a nested map, a slice of lines and a
// transition's message; and returns every string the record carries.
func recordText(t *testing.T, text string) string {
	t.Helper()
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	ctx := context.Background()
	details := map[string]any{
		"msg":        text,
		"args":       map[string]any{"_raw_params": text},
		"stdout":     []string{"before", text, "after"},
		"taskResult": map[string]any{"results": []any{map[string]any{"msg": text}}},
	}
	if err := rec.Record(ctx, progress.Event{Type: "test/Text", Details: details}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range sink.Records() {
		b.WriteString(r.Body().String())
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			b.WriteString(kv.Value.String())
			b.WriteByte('\n')
			return true
		})
	}
	return b.String()
}

// TestRedactionCorpus: every secret of the shared corpus is gone from what
// Record writes, by default, under innocent keys, and the text around it
// stays.
func TestRedactionCorpus(t *testing.T) {
	for _, c := range redactcorpus.Cases {
		t.Run(c.Name, func(t *testing.T) {
			out := recordText(t, c.Text)
			if leaks := redactcorpus.Leaks(out); len(leaks) > 0 {
				t.Errorf("leaked %v in\n%s", leaks, out)
			}
			for _, k := range c.Keep {
				if !strings.Contains(out, k) {
					t.Errorf("lost %q of the text:\n%s", k, out)
				}
			}
			if !strings.Contains(out, progress.DefaultRedactor().Value(c.Text)) {
				t.Errorf("Redactor.Value and Record disagree on %q", c.Text)
			}
		})
	}
}

// TestRedactionCorpusClean: text without a secret is left as it is.
func TestRedactionCorpusClean(t *testing.T) {
	r := progress.DefaultRedactor()
	for _, text := range redactcorpus.Clean {
		if got := r.Value(text); got != text {
			t.Errorf("Value(%q) = %q, want it unchanged", text, got)
		}
	}
}

// TestRedactionLinesAcrossEvents: a private key printed one line at a
// time is redacted from its header to its end line by Redactor.Line.
func TestRedactionLinesAcrossEvents(t *testing.T) {
	r := progress.DefaultRedactor()
	var in bool
	var got []string
	for _, l := range strings.Split("before\n"+redactcorpus.PrivateKey+"\nafter", "\n") {
		got = append(got, r.Line(&in, l))
	}
	if leaks := redactcorpus.Leaks(strings.Join(got, "\n")); len(leaks) > 0 {
		t.Errorf("leaked %v: %q", leaks, got)
	}
	if got[0] != "before" || got[len(got)-1] != "after" {
		t.Errorf("the lines around the key changed: %q", got)
	}
}
