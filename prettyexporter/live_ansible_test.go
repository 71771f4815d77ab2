package prettyexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// liveAnsiblePlaybook has what a live view must render right from the
// adapter's spans alone: a failure rescued by a block, ignored failures
// of a no_log loop, two hosts, and a real failure at the end.
const liveAnsiblePlaybook = `- name: Configure the web tier
  hosts: web
  gather_facts: false
  tasks:
    - name: Install with a fallback
      block:
        - name: Install from a repository that fails
          command: sh -c 'echo "no such repository" >&2; exit 2'
      rescue:
        - name: Install from the mirror
          command: echo installed
    - name: Probe secret files
      command: "false"
      loop: [a, b]
      no_log: true
      ignore_errors: true
    - name: Migrate the database
      command: sh -c 'echo "migration 42 failed" >&2; exit 3'
      when: inventory_hostname == "web-2"
`

// TestLiveRealAnsible: a real playbook through ansible-runner and the
// ansible adapter, into the live view with the real SDK (the view's
// LogProcessor and SpanProcessor, as otelbridge.Setup installs them), on
// a 120-column terminal emulator: the tree is the adapter's spans, the
// final screen fits the terminal, no row is left running, and the
// failure summary names the host and the message. (How rescued and
// ignored failures read depends on the outcomes the adapter sets:
// TestLiveSpansRescued and TestLiveSpansIgnored check the view's side.)
func TestLiveRealAnsible(t *testing.T) {
	testutil.RequireTool(t, "ansible-runner", "scripts/install-tools.sh installs it")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "site.yml"), []byte(liveAnsiblePlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "hosts")
	local := "ansible_connection=local ansible_python_interpreter=/usr/bin/python3"
	if err := os.WriteFile(inv, []byte("[web]\nweb-1 "+local+"\nweb-2 "+local+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	const width, height = 120, 30
	out := &vtWriter{t: t, vt: newVT(width, height), w: width, h: height}
	e, err := NewLive(WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(out.size), WithColor(ColorNever))
	if err != nil {
		t.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(e.LogProcessor()))
	spans := &journal{} // what the adapter's spans said, to compare
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.SpanProcessor()), sdktrace.WithSpanProcessor(journalSpans{spans}))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, runErr := ansible.Run(ctx, ansible.Playbook{ProjectDir: dir, Playbook: "site.yml", Inventory: inv},
		adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lp))), adapter.WithTracerProvider(tp),
		adapter.WithOperation("Install"), adapter.WithLogger(quiet))
	if runErr == nil {
		t.Fatal("the playbook's failing task did not fail the run")
	}
	_ = tp.Shutdown(context.Background())
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
	hist := out.history()
	joined := strings.Join(hist, "\n")
	for _, want := range []string{
		"play Configure the web tier", "task Install from the mirror", "task Probe secret files",
		"play Configure the web tier › task Migrate the database › host web-2  failed\n      non-zero return code",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q on the terminal:\n%s", want, joined)
		}
	}
	final := -1
	for i, l := range hist {
		if strings.HasPrefix(l, "✗ Install  trace ") {
			final = i
		}
	}
	if final < 0 {
		t.Fatalf("no final header on the terminal:\n%s", joined)
	}
	for _, l := range hist[final:] {
		if strings.Contains(l, "▸") || strings.Contains(l, "running") {
			t.Errorf("a row left running after the run: %q\n%s", l, joined)
		}
	}
	for _, l := range hist {
		if strings.HasPrefix(l, "▸") {
			t.Errorf("a stale running header above the final tree: %q", l)
		}
	}
	// The terminal wrapped nothing: every line fit in its row.
	if wrapped := out.vt.WrappedOnScreen(); len(wrapped) > 0 {
		t.Errorf("rows %v wrapped on a %d-column terminal:\n%s", wrapped, width, joined)
	}
	// Each outcome the adapter gave a host span reads as its word, and
	// only failures that count are in the summary.
	summary := joined[strings.LastIndex(joined, "✗ Install failed"):]
	for _, st := range spans.Steps() {
		if !st.end || !strings.HasPrefix(st.name, "host ") {
			continue
		}
		switch st.out {
		case outcome.Rescued, outcome.Ignored:
			word := "failed, " + st.out
			if !strings.Contains(joined, st.name+"  "+word) && !strings.Contains(joined, "1 "+st.out) && !strings.Contains(joined, "2 "+st.out) {
				t.Errorf("%s ended %s: the view does not say %q:\n%s", st.name, st.out, word, joined)
			}
			if strings.Contains(summary, "task Install from a repository that fails") {
				t.Errorf("a rescued failure in the failure summary:\n%s", summary)
			}
		}
	}
}
