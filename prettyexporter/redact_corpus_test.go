package prettyexporter_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// TestRedactionCorpus: every text of the shared redaction corpus, as a
// detail and as a line of a slice, through the real pipeline: neither
// the pretty nor the JSON format prints any of its secrets, as they are
// or as the format escapes them.
func TestRedactionCorpus(t *testing.T) {
	for name, mk := range exporters() {
		t.Run(name, func(t *testing.T) {
			var buf testutil.SyncBuffer
			h := newHarness(t, mk(&buf))
			ctx, _ := h.span(t)
			for _, c := range redactcorpus.Cases {
				if err := h.rec.Record(ctx, progress.Event{Type: "ansible/TaskCompletedOnHost",
					Details: map[string]any{"msg": c.Text, "stdout_lines": strings.Split(c.Text, "\n")}}); err != nil {
					t.Fatal(err)
				}
			}
			out := buf.String()
			if n := strings.Count(out, "\n"); n < len(redactcorpus.Cases) {
				t.Fatalf("%d lines printed for %d events", n, len(redactcorpus.Cases))
			}
			// The control: the texts are printed, so a secret would be seen.
			if !strings.Contains(out, "npm_package_name=web-frontend") {
				t.Fatalf("the corpus's texts are not in the output:\n%s", out)
			}
			for _, c := range redactcorpus.Cases {
				for _, s := range c.Secrets {
					js, _ := json.Marshal(s)
					for _, form := range []string{s, string(js[1 : len(js)-1]), strconv.Quote(s)[1 : len(strconv.Quote(s))-1]} {
						if strings.Contains(out, form) {
							t.Errorf("%s: %q printed", c.Name, form)
							break
						}
					}
				}
			}
		})
	}
}
