package ansible

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	lognoop "go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
)

// BenchmarkStream measures the decoder on the recorded site.yml run (82
// real job events, 107 KB), reported in events/s of wall time and, since
// a shared machine makes wall time noisy, in events per second of this
// process's CPU time (events/cpu-s: what one core sustains, GC and the
// SDK's export goroutines included):
//
//   - decode: JSON decoding and the mapping, with no-op providers
//     (progress.Record returns at once, spans are no-ops);
//
//   - sdk: plus the real SDK on both sides: every event flattened into a
//     record, every span recorded, both dropped by no-op processors;
//
//   - sdk-json: plus the batch processors and the JSON lines exporter
//     writing to io.Discard, as a driver with OTEL_LOGS_EXPORTER=json.
//
//     go test ./ansible -run '^$' -bench BenchmarkStream -benchmem
func BenchmarkStream(b *testing.B) {
	stream := readStream(b, "site")
	events := bytes.Count(stream, []byte("\n"))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	run := func(b *testing.B, opts ...Option) {
		opts = append(opts, adapter.WithLogger(quiet))
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			if _, err := Stream(context.Background(), bytes.NewReader(stream), opts...); err != nil {
				b.Fatal(err)
			}
		}
		reportRates(b, events*b.N, processCPU()-cpu0)
	}

	b.Run("decode", func(b *testing.B) {
		run(b, adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lognoop.NewLoggerProvider()))),
			adapter.WithTracerProvider(tracenoop.NewTracerProvider()))
	})
	b.Run("sdk", func(b *testing.B) {
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(dropProcessor{}))
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropSpans{}))
		defer lp.Shutdown(context.Background())
		defer tp.Shutdown(context.Background())
		run(b, adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lp))), adapter.WithTracerProvider(tp))
	})
	b.Run("sdk-json", func(b *testing.B) {
		opts, _ := jsonPipeline(b)
		run(b, opts...)
	})
}

// jsonPipeline is a driver's export path with OTEL_LOGS_EXPORTER=json,
// writing to io.Discard: the SDK with its batch processors, the JSON lines
// exporter, spans batched to an exporter that drops them. Shut down at the
// end of the benchmark; flush forces the records out.
func jsonPipeline(b *testing.B) (opts []Option, flush func() error) {
	exp, err := prettyexporter.NewJSON(prettyexporter.WithWriter(io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}))
	b.Cleanup(func() {
		_ = lp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	})
	return []Option{adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lp))), adapter.WithTracerProvider(tp)},
		func() error { return lp.ForceFlush(context.Background()) }
}

type dropProcessor struct{}

func (dropProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (dropProcessor) OnEmit(context.Context, *sdklog.Record) error           { return nil }
func (dropProcessor) Shutdown(context.Context) error                         { return nil }
func (dropProcessor) ForceFlush(context.Context) error                       { return nil }

type dropSpans struct{}

func (dropSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (dropSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (dropSpans) Shutdown(context.Context) error                  { return nil }
func (dropSpans) ForceFlush(context.Context) error                { return nil }

type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkDecodeEvent measures the decoding of job-event lines alone
// (encoding/json, one pass per line) on the recorded site.yml run.
func BenchmarkDecodeEvent(b *testing.B) {
	lines := bytes.Split(bytes.TrimSpace(readStream(b, "site")), []byte("\n"))
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var ev jobEvent
	cpu0 := processCPU()
	for b.Loop() {
		for _, l := range lines {
			if err := decodeEvent(l, &ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportRates(b, len(lines)*b.N, processCPU()-cpu0)
}

// reportRates reports events/s of wall time and, when the CPU time is
// known, events per CPU second.
func reportRates(b *testing.B, events int, cpu time.Duration) {
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	}
}
