package terraform

import (
	"bytes"
	"context"
	"flag"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// -record rewrites the streams under testdata/streams from the runs of the
// real tool; -update rewrites the golden files from those streams.
var (
	record = flag.Bool("record", false, "record the real tool's streams into testdata/streams")
	update = flag.Bool("update", false, "rewrite the golden files")
)

// capture is what a run left behind: the progress records (decoded), the
// spans, and the same records as the pretty and JSON exporters print them.
type capture struct {
	sink   *progresstest.Sink
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	pretty *testutil.SyncBuffer
	json   *testutil.SyncBuffer
}

func newCapture(t testing.TB) *capture {
	t.Helper()
	c := &capture{spans: tracetest.NewSpanRecorder(), pretty: &testutil.SyncBuffer{}, json: &testutil.SyncBuffer{}}
	pretty, err := prettyexporter.New(prettyexporter.WithWriter(c.pretty), prettyexporter.WithColor(prettyexporter.ColorNever))
	if err != nil {
		t.Fatal(err)
	}
	js, err := prettyexporter.NewJSON(prettyexporter.WithWriter(c.json))
	if err != nil {
		t.Fatal(err)
	}
	c.sink = progresstest.NewSink(sdklog.NewSimpleProcessor(pretty), sdklog.NewSimpleProcessor(js))
	c.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c.spans))
	return c
}

// opts are the options that send a run's events and spans to c.
func (c *capture) opts(more ...Option) []Option {
	return append([]Option{adapter.WithRecorder(c.sink.Recorder()), adapter.WithTracerProvider(c.tp), adapter.WithLogger(slog.New(slog.DiscardHandler))}, more...)
}

// parent starts a span standing for the driver's own operation.
func (c *capture) parent(ctx context.Context) (context.Context, trace.Span) {
	return c.tp.Tracer("driver").Start(ctx, "driver operation")
}

// spanNamed returns the ended spans named name.
func (c *capture) spansNamed(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range c.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// spanByID finds an ended span.
func (c *capture) spanByID(id trace.SpanID) sdktrace.ReadOnlySpan {
	for _, s := range c.spans.Ended() {
		if s.SpanContext().SpanID() == id {
			return s
		}
	}
	return nil
}

// everything is all the text a run produced: every record's attributes as
// the JSON and pretty exporters printed them, and every span's name,
// attributes, events and status.
func (c *capture) everything() string {
	var b strings.Builder
	b.WriteString(c.pretty.String())
	b.WriteString(c.json.String())
	for _, s := range c.spans.Ended() {
		b.WriteString(s.Name())
		b.WriteString(s.Status().Description)
		for _, a := range s.Attributes() {
			b.WriteString(a.Value.String())
		}
		for _, e := range s.Events() {
			b.WriteString(e.Name)
			for _, a := range e.Attributes {
				b.WriteString(a.Value.String())
			}
		}
	}
	return b.String()
}

// tofu returns the OpenTofu binary (see testutil.Tofu).
func tofu(t testing.TB) string {
	t.Helper()
	return testutil.Tofu(t)
}

// workdir copies a configuration of testdata/configs to a fresh directory,
// so that the tool's state and .terraform stay out of the repository.
func workdir(t testing.TB, config string) string {
	t.Helper()
	src := filepath.Join("testdata", "configs", config)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// offline is the environment that keeps the tool off the network: an empty
// CLI configuration (no registry, no credentials), no version check, and a
// proxy that refuses every connection, so an attempt fails loudly instead
// of reaching out.
func offline(t testing.TB) []string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{
		"TF_CLI_CONFIG_FILE=" + cfg,
		"CHECKPOINT_DISABLE=1",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=",
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "no_proxy=",
		"TF_PLUGIN_CACHE_DIR=",
	}
}

// recordTo returns an option that tees the raw stream into
// testdata/streams/name when -record is given.
func recordTo(t testing.TB, name string) Option {
	if !*record {
		return nil
	}
	var buf bytes.Buffer
	t.Cleanup(func() {
		if err := os.WriteFile(filepath.Join("testdata", "streams", name), buf.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	})
	return rawTee(&buf)
}

// summaryTruth is what the tool's change summary says of a run, for
// progresstest.CheckRun: a whole apply or destroy changed as many
// resources as its summary counts (and is changed if any), a whole plan
// changed none and is ok. A failed or stopped run's has no outcome.
func summaryTruth(res Result) progresstest.Truth {
	var truth progresstest.Truth
	switch {
	case res.Applied != nil:
		n := res.Applied.Add + res.Applied.Change + res.Applied.Remove
		truth.Counts = map[string]map[string]int{"": {outcomes.Changed: n}}
		if !res.failed {
			truth.Outcome = outcomes.OK
			if n > 0 {
				truth.Outcome = outcomes.Changed
			}
		}
	case res.Plan != nil && !res.failed:
		truth.Outcome, truth.Counts = outcomes.OK, map[string]map[string]int{"": {outcomes.Changed: 0}}
	}
	return truth
}

// checkRun checks the property every real run holds (progresstest.CheckRun)
// against the tool's summary, over the spans of the run (the driver's own
// span above it left out).
func checkRun(t testing.TB, c *capture, res Result) {
	t.Helper()
	if started, ended := len(c.spans.Started()), len(c.spans.Ended()); started != ended {
		t.Errorf("%d spans started, %d ended", started, ended)
	}
	var spans []sdktrace.ReadOnlySpan
	for _, s := range c.spans.Ended() {
		if s.Name() != "driver operation" {
			spans = append(spans, s)
		}
	}
	progresstest.CheckRun(t, spans, c.sink.Events(), summaryTruth(res))
}
