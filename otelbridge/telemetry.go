package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/otelbridge/internal/shutdown"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
)

// Telemetry is what Setup installed: the LoggerProvider, the
// TracerProvider (unless WithoutTracerProvider) and a batch processor per
// exporter. Its methods are safe for concurrent use, and on a nil
// *Telemetry they do nothing.
type Telemetry struct {
	lp *sdklog.LoggerProvider
	// progressLP feeds lp's processors the default Recorder's records,
	// without the duplicate-key check (progressProvider); lp when Setup
	// keeps the check.
	progressLP *sdklog.LoggerProvider
	tp         *sdktrace.TracerProvider // nil with WithoutTracerProvider
	mp         *sdkmetric.MeterProvider // nil without a metric reader
	spans      *boundedSpanExporter     // nil when spans are not exported
	batches    []*sdkparts.BatchProcessor
	output     io.Writer
	local      []sdktrace.SpanProcessor // the local views' (the live view's tree)
	direct     []sdklog.Processor       // the local views' log processors, not batched
	counted    []*countedProcessor      // the same, counting for Stats
	jsonOut    *jsonOutput              // Output with the json exporter and no live view

	restoreTerminal func() // ends routeTerminal's routing through the live view

	shutOnce sync.Once
}

// Shutdown flushes everything recorded before it, logs and spans, and shuts
// the exporters down, within ctx's deadline. Later calls return nil.
//
// When it returns, Stats is final and no export is still running: when ctx
// ends first, the exports in progress are cancelled (shutdown.CancelGrace
// before the deadline), every record still queued or in flight is counted
// as lost, and the error wraps a *sdkparts.LostRecordsError per exporter
// that lost records. An exporter that ignores cancellation is left behind:
// Shutdown returns by its deadline.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var err error
	t.shutOnce.Do(func() { err = t.shutdown(ctx) })
	return err
}

func (t *Telemetry) shutdown(ctx context.Context) error {
	// Logs and spans shut down side by side: a hung span export must not
	// take the whole deadline from the logs.
	var spanErr error
	var wg sync.WaitGroup
	if t.tp != nil {
		wg.Go(func() { spanErr = t.shutdownSpans(ctx) })
	}
	var metricErr error
	if t.mp != nil {
		wg.Go(func() { metricErr = t.mp.Shutdown(ctx) })
	}
	if t.jsonOut != nil {
		t.jsonOut.close() // its last line, before the exporter shuts down
	}
	if t.progressLP != nil && t.progressLP != t.lp {
		_ = t.progressLP.Shutdown(ctx) // stops its loggers; its processors are lp's
	}
	errs := []error{wrapErr("log shutdown", t.lp.Shutdown(ctx))}
	// The provider skips its processors when ctx ends while a record is
	// being emitted; shut them anyway, so that what they held is counted
	// as lost. A no-op after a normal shutdown.
	for _, b := range t.batches {
		errs = append(errs, wrapErr("log shutdown", b.Shutdown(ctx)))
	}
	for _, p := range t.direct {
		_ = p.Shutdown(ctx) // a no-op after the provider's; the view's final screen otherwise
	}
	wg.Wait()
	if t.restoreTerminal != nil {
		t.restoreTerminal()
	}
	return errors.Join(append(errs, spanErr, wrapErr("metric shutdown", metricErr))...)
}

func (t *Telemetry) shutdownSpans(ctx context.Context) error {
	if t.spans != nil {
		cut, cancel := shutdown.CutContext(ctx)
		defer cancel()
		stop := context.AfterFunc(cut, func() { t.spans.cutSpan(errSpansCut) })
		defer stop()
	}
	err := t.tp.Shutdown(ctx)
	if t.spans != nil && ctx.Err() != nil {
		// The batcher returned at the deadline; its exports were cut a
		// grace before it. One still running ignores cancellation: it is
		// left behind, the deadline is the deadline.
		t.spans.cutSpan(errSpansCut)
		select {
		case <-t.spans.done:
		default:
			err = errors.Join(err, fmt.Errorf("otelbridge: the span export did not return by the shutdown deadline, %v after its cancellation", shutdown.CancelGrace))
		}
	}
	return wrapErr("trace shutdown", err)
}

// ForceFlush exports everything recorded so far, logs and spans, within
// ctx's deadline.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, wrapErr("trace flush", t.tp.ForceFlush(ctx)))
	}
	if t.mp != nil {
		errs = append(errs, wrapErr("metric flush", t.mp.ForceFlush(ctx)))
	}
	return errors.Join(append(errs, wrapErr("log flush", t.lp.ForceFlush(ctx)))...)
}

// wrapErr says what failed; nil stays nil (errors.Join drops it).
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("otelbridge: %s: %w", what, err)
}

// Stats sums the accounting of every exporter: what is queued, exported
// and lost, and how much of the loss was reported in the stream. The
// batched exporters (json, otlp, console and WithExporter's) count through
// their batch processor; the live view and pretty take each record as it
// is emitted, and every record they took counts as exported (they never
// drop a record: the live view may drop lines of text, which it says on
// screen). With N exporters a record counts N times. After Shutdown has
// returned, it is final.
func (t *Telemetry) Stats() sdkparts.DropStats {
	var s sdkparts.DropStats
	if t == nil {
		return s
	}
	for _, b := range t.batches {
		s = s.Add(b.Stats())
	}
	for _, p := range t.counted {
		s.Exported += p.n.Load()
	}
	return s
}

// Output returns where the program's own text belongs (a wrapped tool's
// output, notices, a slog.TextHandler): with the live view, its writer,
// which prints each line above the live area; with the json exporter (and
// no live view), a writer that turns each line into one JSON line, an
// ordinary log whose message is the line, so that the stream stays one
// JSON object per line (after Shutdown, the text goes to os.Stderr as
// is); otherwise os.Stderr. It never returns nil, also on a nil
// *Telemetry.
func (t *Telemetry) Output() io.Writer {
	if t == nil || t.output == nil {
		return os.Stderr
	}
	return t.output
}

// LoggerProvider returns the provider Setup installed globally, for a
// component that takes one explicitly (otelslog.WithLoggerProvider,
// progress.WithLoggerProvider).
func (t *Telemetry) LoggerProvider() *sdklog.LoggerProvider {
	if t == nil {
		return nil
	}
	return t.lp
}

// TracerProvider returns the provider Setup installed globally, or nil
// with WithoutTracerProvider.
func (t *Telemetry) TracerProvider() *sdktrace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.tp
}
