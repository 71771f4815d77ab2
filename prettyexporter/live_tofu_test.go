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
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/terraform"
)

// TestLiveRealTofuDestroy: a real OpenTofu destroy of 50 resources (bin/tofu,
// make tofu) through the terraform adapter into the live view with the
// real SDK, on a 120-column terminal emulator: the last screen is short
// (a few collapsed lines, the rest counted), nothing wraps, nothing is
// left running.
func TestLiveRealTofuDestroy(t *testing.T) {
	tofu := testutil.Tofu(t)
	dir := t.TempDir()
	cfg := `resource "terraform_data" "worker_node_with_a_rather_long_name" {
  count = 50
  input = "node-${count.index}"
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := terraform.Run(ctx, terraform.Command{Binary: tofu, Dir: dir, Args: []string{"apply"}, Init: true},
		adapter.WithLogger(quiet)); err != nil {
		t.Fatal(err)
	}

	const width, height = 120, 30
	out := &vtWriter{t: t, vt: newVT(width, height), w: width, h: height}
	e, _ := NewLive(WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(out.size), WithColor(ColorNever))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(e.LogProcessor()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.SpanProcessor()))
	if _, err := terraform.Run(ctx, terraform.Command{Binary: tofu, Dir: dir, Args: []string{"destroy"}},
		adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lp))), adapter.WithTracerProvider(tp),
		adapter.WithOperation("Destroy"), adapter.WithLogger(quiet)); err != nil {
		t.Fatal(err)
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
	if len(hist) > 3*maxCollapsedLeaves {
		t.Errorf("%d lines for a destroy of 50 resources:\n%s", len(hist), joined)
	}
	if !strings.Contains(joined, "✓ Destroy") || !strings.Contains(joined, "in all:") {
		t.Errorf("no final header with the counts:\n%s", joined)
	}
	if wrapped := out.vt.WrappedOnScreen(); len(wrapped) > 0 {
		t.Errorf("rows %v wrapped on a %d-column terminal:\n%s", wrapped, width, joined)
	}
	for _, l := range hist {
		if strings.Contains(l, "▸") || strings.Contains(l, "running") {
			t.Errorf("a row left running: %q\n%s", l, joined)
		}
	}
	// Collapsed lines end with their duration at the terminal's last
	// column but one, also those printed before the first frame.
	for _, l := range hist {
		if strings.HasPrefix(l, "  ✓ ") && displayWidth([]byte(l)) != width-1 {
			t.Errorf("a collapsed line %d columns wide on a terminal of %d: %q", displayWidth([]byte(l)), width, l)
		}
	}
}
