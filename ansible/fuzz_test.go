package ansible

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// FuzzStream feeds arbitrary bytes to the decoder, seeded with the
// recorded real streams. Whatever the input: no panic, every span that was
// started is ended, every line is either an event or counted as skipped,
// and every run, even one without a single event, is framed by exactly one
// OperationStarted and one OperationCompleted or OperationFailed.
func FuzzStream(f *testing.F) {
	// Seeds stay small (the fuzzer slows to a crawl on inputs of 100 KB):
	// windows of a few events of each recorded stream, in order, from the
	// middle (host events without their task start) and reversed.
	for _, gc := range goldenCases {
		if gc.cut != nil {
			continue
		}
		lines := bytes.SplitAfter(readStream(f, gc.stream), []byte("\n"))
		for _, w := range [][2]int{{0, 4}, {len(lines) / 2, len(lines)/2 + 4}, {len(lines) - 4, len(lines)}} {
			window := lines[max(0, w[0]):min(len(lines), w[1])]
			f.Add(bytes.Join(window, nil))
			reversed := slices.Clone(window)
			slices.Reverse(reversed)
			f.Add(bytes.Join(reversed, nil))
		}
	}
	f.Add([]byte(`{"event": "runner_on_ok", "event_data": {"res": {"msg": [1, {"a": null}], "rc": "7", "changed": "yes", "results": [3, "x", {"failed": 1}]}}}`))
	f.Add([]byte(`{"event": "playbook_on_stats", "event_data": {"ok": {"h": 1}, "dark": {"h": "x"}}}` + "\n{\"event\": 5}"))
	f.Add([]byte("{\"event\": \"runner_on_start\", \"created\": \"not a time\", \"event_data\": {\"task_args\": \"password=a, b=c\"}}\n\x1b[0m\r\n"))

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// One Sink for every input (execs run one at a time in a worker): an
	// SDK LoggerProvider per input slows the fuzz worker to a standstill
	// after a few thousand inputs.
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	f.Fuzz(func(t *testing.T, in []byte) {
		sink.Reset()
		c := &capture{sink: sink, spans: tracetest.NewSpanRecorder()}
		c.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c.spans))
		res, _ := Stream(context.Background(), bytes.NewReader(in), adapter.WithRecorder(rec), adapter.WithTracerProvider(c.tp), adapter.WithLogger(quiet))
		if started, ended := len(c.spans.Started()), len(c.spans.Ended()); started != ended {
			t.Fatalf("%d spans started, %d ended", started, ended)
		}
		lines := 0
		for _, l := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if res.Events+res.SkippedLines > lines {
			t.Fatalf("%d events + %d skipped > %d lines", res.Events, res.SkippedLines, lines)
		}
		counts := map[string]int{}
		for _, typ := range c.sink.Types() {
			counts[typ]++
		}
		if counts[progress.TypeOperationStarted] != 1 || counts[progress.TypeOperationCompleted]+counts[progress.TypeOperationFailed] != 1 {
			t.Fatalf("operation events: %v", counts)
		}
	})
}
