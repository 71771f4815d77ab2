package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
)

// TestRedactionCorpus: the shared corpus through the CLI as a process:
// progressotel run --lines (a command that prints every line of the
// corpus, on stdout and stderr) and progressotel emit (each text as a
// detail and inside --details JSON). No secret reaches the records; the
// command's own output, which the CLI passes through to the user, is not
// telemetry and is left as it is.
func TestRedactionCorpus(t *testing.T) {
	lines := redactcorpus.Lines()
	file := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runPO(t, nil, "run", "--lines", "--", "sh", "-c", `cat "$1"; cat "$1" >&2`, "sh", file)
	if r.code != 0 {
		t.Fatalf("run --lines: exit %d: %s", r.code, r.stderr)
	}
	checkRecords(t, "run --lines", r, 2*len(lines))

	// emit, a batch of texts an event (one process per text would take
	// minutes): each text as a detail and inside --details JSON.
	const batch = 10 // twenty attributes: under Limits.MaxAttributes
	for from := 0; from < len(redactcorpus.Cases); from += batch {
		cases := redactcorpus.Cases[from:min(from+batch, len(redactcorpus.Cases))]
		args := []string{"emit", "--type", "demo/Text"}
		nested := map[string]string{}
		for i, c := range cases {
			args = append(args, "--detail", fmt.Sprintf("msg%d=%s", i, c.Text))
			nested[fmt.Sprint("text", i)] = c.Text
		}
		raw, err := json.Marshal(map[string]any{"nested": nested})
		if err != nil {
			t.Fatal(err)
		}
		r := runPO(t, nil, append(args, "--details", string(raw))...)
		if r.code != 0 {
			t.Fatalf("emit %s..: exit %d: %s", cases[0].Name, r.code, r.stderr)
		}
		checkRecords(t, "emit "+cases[0].Name+"..", r, 1)
		if raw, _ := os.ReadFile(r.out); strings.Contains(string(raw), "truncated") {
			t.Fatalf("emit %s..: the event was cut, so the test would not see every text:\n%s", cases[0].Name, raw)
		}
	}
}

// checkRecords fails the test when a secret of the corpus is in the
// records of r, or when fewer than want records carry the texts.
func checkRecords(t *testing.T, what string, r result, want int) {
	t.Helper()
	raw, err := os.ReadFile(r.out)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rec := range r.records {
		if m := rec.str("message"); m == "command/OutputLine" || m == "demo/Text" {
			n++
		}
	}
	if n < want {
		t.Fatalf("%s: %d records with the texts, want %d:\n%s", what, n, want, raw)
	}
	if leaks := redactcorpus.Leaks(string(raw)); len(leaks) > 0 {
		t.Errorf("%s: the records leaked %v", what, leaks)
	}
}
