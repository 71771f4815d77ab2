//go:build unix

package terraform

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	lognoop "go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/progress"
)

// benchStream is every recorded stream, one after the other: about 400
// messages of every kind, from real runs.
func benchStream(b *testing.B) (data []byte, messages int) {
	b.Helper()
	streams, err := filepath.Glob(filepath.Join("testdata", "streams", "*.jsonl"))
	if err != nil || len(streams) == 0 {
		b.Fatalf("no streams: %v", err)
	}
	for _, p := range streams {
		s, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, s...)
	}
	res, _ := Stream(context.Background(), bytes.NewReader(data), adapter.WithRecorder(progress.NewRecorder(
		progress.WithLoggerProvider(lognoop.NewLoggerProvider()))), adapter.WithTracerProvider(tracenoop.NewTracerProvider()))
	return data, res.Messages
}

// BenchmarkStream measures the decoder on real streams, in messages per
// second (one message is one event, plus the common events around it):
//   - noop: no SDK behind the API (the decoder's own work: reading,
//     parsing, mapping, redaction);
//   - sdk: the OpenTelemetry SDK records every event (progress.Record's
//     flattening and the SDK's record) and every span, then drops them;
//
// each with parseFast and with encoding/json alone (sdk-json, noop-json),
// side by side: what parse.go saves.
func BenchmarkStream(b *testing.B) {
	data, messages := benchStream(b)
	run := func(b *testing.B, opts ...Option) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		c0 := cpu(syscall.RUSAGE_SELF)
		for b.Loop() {
			if _, err := Stream(context.Background(), bytes.NewReader(data), opts...); err == nil {
				b.Fatal("the failing streams gave no error")
			}
		}
		// Wall time and CPU time: on a shared machine the CPU figure is
		// the steadier one.
		b.ReportMetric(float64(b.N*messages)/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(b.N*messages)/(cpu(syscall.RUSAGE_SELF)-c0).Seconds(), "events/cpu-s")
	}
	quiet := adapter.WithLogger(slog.New(slog.DiscardHandler))
	for _, fast := range []bool{true, false} {
		suffix := map[bool]string{true: "", false: "-json"}[fast]
		b.Run("sdk"+suffix, func(b *testing.B) {
			fastParse = fast
			defer func() { fastParse = true }()
			lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(discard{}))
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
			run(b, quiet, adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lp))), adapter.WithTracerProvider(tp))
		})
		b.Run("noop"+suffix, func(b *testing.B) {
			fastParse = fast
			defer func() { fastParse = true }()
			run(b, quiet, adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lognoop.NewLoggerProvider()))),
				adapter.WithTracerProvider(tracenoop.NewTracerProvider()))
		})
	}
}

// discard is an SDK log processor that drops every record it is given.
type discard struct{}

func (discard) OnEmit(context.Context, *sdklog.Record) error           { return nil }
func (discard) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (discard) Shutdown(context.Context) error                         { return nil }
func (discard) ForceFlush(context.Context) error                       { return nil }

// BenchmarkAdapterCPU runs the real OpenTofu on a configuration of 40
// resources with provisioners (an apply and a destroy, about 530 messages),
// four ways in each iteration, side by side:
//   - adapter: Run, with the SDK recording every event and span (batch
//     processors, exporters that drop): what a driver pays;
//   - json: the same, with every line parsed by encoding/json instead of
//     parseFast: what parse.go saves;
//   - noop: Run with no SDK behind the API: the adapter's own work;
//   - bare: the same commands run by os/exec with stdout thrown away: what
//     running the tool costs a driver without the adapter.
//
// For each way it measures this process's CPU time (user+system) and the
// tool's (its own and its children's, from RUSAGE_CHILDREN), and reports
// them per iteration and as percentages of the tool's CPU in the same runs:
// <way>-% is the way's CPU, added-%, json-added-% and noop-added-% the
// adapter's CPU beyond bare's. The goal: the adapter's CPU at most 5% of the tool's.
func BenchmarkAdapterCPU(b *testing.B) {
	bin := tofu(b)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`
resource "terraform_data" "node" {
  count = 40
  input = "node-${count.index}"
  provisioner "local-exec" {
    command = "echo node ${count.index} configured; echo node ${count.index} ready"
  }
}
`), 0o644); err != nil {
		b.Fatal(err)
	}
	toolEnv := offline(b)
	env := append(os.Environ(), toolEnv...)
	initCmd := exec.Command(bin, "init", "-input=false")
	initCmd.Dir, initCmd.Env = dir, env
	if out, err := initCmd.CombinedOutput(); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}

	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(dropExporter{})))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer lp.Shutdown(context.Background())
	defer tp.Shutdown(context.Background())
	quiet := adapter.WithLogger(slog.New(slog.DiscardHandler))
	withSDK := []Option{adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lp))), adapter.WithTracerProvider(tp), quiet}
	noop := []Option{adapter.WithRecorder(progress.NewRecorder(progress.WithLoggerProvider(lognoop.NewLoggerProvider()))),
		adapter.WithTracerProvider(tracenoop.NewTracerProvider()), quiet}

	adapter := func(opts []Option) func() {
		return func() {
			for _, sub := range []string{"apply", "destroy"} {
				if _, err := Run(context.Background(), Command{Binary: bin, Dir: dir, Args: []string{sub}, Env: toolEnv}, opts...); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	bare := func() {
		for _, sub := range []string{"apply", "destroy"} {
			cmd := exec.Command(bin, sub, "-json", "-input=false", "-auto-approve")
			cmd.Dir, cmd.Env, cmd.Stdout = dir, append(env, "TF_IN_AUTOMATION=1"), io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	ways := []struct {
		name      string
		run       func()
		self, cpu time.Duration
	}{{name: "adapter", run: adapter(withSDK)}, {name: "noop", run: adapter(noop)}, {name: "bare", run: bare}, {name: "json", run: adapter(withSDK)}}
	round := 0
	for b.Loop() {
		// Each round starts with another way, so that no way always runs
		// on a warm or a cold machine.
		round++
		for j := range ways {
			w := &ways[(j+round)%len(ways)]
			fastParse = w.name != "json"
			s0, c0 := cpu(syscall.RUSAGE_SELF), cpu(syscall.RUSAGE_CHILDREN)
			w.run()
			w.self += cpu(syscall.RUSAGE_SELF) - s0
			w.cpu += cpu(syscall.RUSAGE_CHILDREN) - c0
		}
	}
	var tool time.Duration
	for _, w := range ways {
		tool += w.cpu
		b.ReportMetric(float64(w.self.Microseconds())/float64(b.N), w.name+"-cpu-µs/op")
		b.ReportMetric(100*float64(w.self)/float64(w.cpu), w.name+"-%")
	}
	fastParse = true
	b.ReportMetric(float64(tool.Microseconds())/float64(4*b.N), "tool-cpu-µs/op")
	bareSelf, bareTool := ways[2].self, ways[2].cpu
	for _, i := range []int{0, 1, 3} {
		w := ways[i]
		// The tool's CPU differs a little from run to run: compare each
		// way's CPU with bare's per µs of the tool.
		added := float64(w.self)/float64(w.cpu) - float64(bareSelf)/float64(bareTool)
		name := "added-%"
		if w.name != "adapter" {
			name = w.name + "-added-%"
		}
		b.ReportMetric(100*added, name)
	}
}

// cpu returns the user+system CPU time of who.
func cpu(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(fmt.Sprint("getrusage: ", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dropExporter is an SDK log exporter that drops every record.
type dropExporter struct{}

func (dropExporter) Export(context.Context, []sdklog.Record) error { return nil }
func (dropExporter) Shutdown(context.Context) error                { return nil }
func (dropExporter) ForceFlush(context.Context) error              { return nil }
