package otelbridge

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/internal/base/term"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// localExportInterval is how often local (pretty, json, console) exporters
// flush: short, so a developer watches events live, but batched, so a
// driver never waits on a terminal.
const localExportInterval = 100 * time.Millisecond

// Setup builds the SDK LoggerProvider, installs it as the global provider
// with the default progress Recorder bound to it, and (unless turned off)
// an SDK TracerProvider, the default propagator, and an SDK MeterProvider
// when it has a metric reader (OTEL_METRICS_EXPORTER, see
// WithoutMeterProvider). The driver defers the returned Telemetry's
// Shutdown.
//
// Exporters come from WithExporters, else OTEL_LOGS_EXPORTER (a
// comma-separated list), else the default: otlp alone when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT is set,
// otherwise the live view when stderr is a terminal, its CI format (ci)
// under GITHUB_ACTIONS=true or GITLAB_CI=true, and json lines on stderr
// elsewhere. pretty gives flat lines, one per record. Every
// local exporter (live, ci, pretty, json, console) writes to stderr unless
// WithWriter says otherwise: telemetry never lands in the program's
// stdout, which is its result. OTLP speaks http/protobuf unless
// OTEL_EXPORTER_OTLP_PROTOCOL (or OTEL_EXPORTER_OTLP_LOGS_PROTOCOL,
// _TRACES_PROTOCOL) says grpc, the OpenTelemetry specification's default.
//
// Each exporter sits behind its own sdkparts.BatchProcessor, after the
// tracectx processor. OTLP records are standard log records, an event
// name and attributes with no body: the collector builds the TNCO message
// from them (collector-config, the tncomessage module). The formats a
// person reads (live and pretty) are not batched: each record goes into
// the view's memory as it is emitted (the view's goroutine writes, and
// drops and counts lines when the terminal does not keep up), so records,
// spans and Output's lines come out in the order they happened. The live
// view also gets the spans, for its tree.
//
// Setup refuses, with an error naming the variable and the fix, a value
// it cannot use: an unknown exporter or protocol, and an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, or the _LOGS_, _TRACES_ or _METRICS_ one)
// that is not an http:// or https:// URL. OTEL_SDK_DISABLED=true turns
// every signal off: Setup builds no exporter and no MeterProvider, its
// LoggerProvider and TracerProvider have no processor, and records are
// accepted and dropped quietly.
//
// The MeterProvider Setup installs also counts the batch processors'
// drops (progress.records.dropped), even when another one was installed
// before.
//
// After Shutdown, Record calls are accepted and discarded without error.
func Setup(ctx context.Context, opts ...Option) (*Telemetry, error) {
	c := config{getenv: os.Getenv}
	for _, o := range opts {
		o(&c)
	}
	if c.red == nil {
		c.red = progress.DefaultRedactor()
	}
	if c.sdkDisabled() {
		return c.setupDisabled(), nil
	}
	if err := c.checkEndpoints(); err != nil {
		return nil, err
	}

	res, err := c.resource(ctx)
	if err != nil {
		return nil, err
	}
	names, err := c.exporterNames()
	if err != nil {
		return nil, err
	}

	// The provider's processors, in order: the tracectx processor first,
	// as it decorates the records the others take.
	procs := append([]sdklog.Processor{sdkparts.NewTraceCtxProcessor(c.red)}, c.processors...)
	// The MeterProvider first: the batch processors count their drops
	// through it, not through one installed before Setup.
	t := &Telemetry{}
	if err := c.meterProvider(ctx, t, res); err != nil {
		return nil, err
	}
	var dropMeter []sdkparts.BatchOption
	if t.mp != nil {
		dropMeter = append(dropMeter, sdkparts.WithDropMeterProvider(t.mp))
	}
	var exporters []sdklog.Exporter
	var batches []*sdkparts.BatchProcessor
	var output io.Writer                   // the live view's, when there is one (else Output's stderr)
	var jsonOut *jsonOutput                // the json exporter's, else
	var direct []sdklog.Processor          // local human outputs, fed as records are emitted
	var counted []*countedProcessor        // the same, for Stats
	var liveSpans []sdktrace.SpanProcessor // the live view's tree
	closeAll := func() {
		for _, b := range batches {
			_ = b.Shutdown(context.Background())
		}
		for _, e := range exporters {
			_ = e.Shutdown(context.Background())
		}
		if t.mp != nil {
			_ = t.mp.Shutdown(context.Background())
		}
	}
	for _, name := range names {
		exp, err := c.newExporter(ctx, name)
		if err != nil {
			closeAll()
			return nil, err
		}
		if exp == nil {
			continue
		}
		exporters = append(exporters, exp)
		if j, ok := exp.(*prettyexporter.JSONExporter); ok && jsonOut == nil {
			jsonOut = &jsonOutput{exp: j}
		}
		if live, ok := exp.(*prettyexporter.LiveExporter); ok {
			p := &countedProcessor{Processor: live.LogProcessor()}
			direct, counted = append(direct, p), append(counted, p)
			if name == ExporterLive || name == ExporterCI {
				liveSpans = append(liveSpans, live.SpanProcessor())
			}
			if output == nil {
				output = live.Output()
			}
			continue
		}
		// The batch processor counts and reports every record it loses,
		// where the SDK's would only warn.
		o := append([]sdkparts.BatchOption{sdkparts.WithExporterName(name)}, dropMeter...)
		if name != ExporterOTLP && c.getenv("OTEL_BLRP_SCHEDULE_DELAY") == "" {
			o = append(o, sdkparts.WithExportInterval(localExportInterval)) // a local stream
		}
		batches = append(batches, sdkparts.NewBatchProcessor(exp, o...))
	}
	for _, exp := range c.extraExporters {
		batches = append(batches, sdkparts.NewBatchProcessor(exp, append([]sdkparts.BatchOption{sdkparts.WithExporterName("extra")}, dropMeter...)...))
	}
	for _, b := range batches {
		procs = append(procs, b)
	}
	procs = append(procs, direct...)
	popts := []sdklog.LoggerProviderOption{sdklog.WithResource(res)}
	for _, p := range procs {
		popts = append(popts, sdklog.WithProcessor(p))
	}
	t.lp, t.batches, t.output, t.local, t.direct, t.counted = sdklog.NewLoggerProvider(popts...), batches, output, liveSpans, direct, counted
	t.progressLP = progressProvider(t.lp, res, procs, len(c.processors) > 0)
	if output == nil && jsonOut != nil {
		t.output, t.jsonOut = jsonOut, jsonOut
	}

	if !c.noTracer {
		err = c.tracerProvider(ctx, t, res, liveSpans)
	}
	if err != nil {
		_ = t.Shutdown(context.Background()) // t.tp is nil: it comes last
		return nil, err
	}
	if t.tp != nil {
		otel.SetTracerProvider(t.tp)
	}
	if t.mp != nil {
		otel.SetMeterProvider(t.mp)
	}
	otel.SetLoggerProvider(t.lp)
	progress.SetDefault(progress.NewRecorder(append([]progress.Option{
		progress.WithLoggerProvider(t.progressLP), progress.WithRedactor(c.red),
	}, c.recorderOpts...)...))
	if !c.noPropagator {
		otel.SetTextMapPropagator(propagation.Default())
	}
	if output != nil {
		t.restoreTerminal = routeTerminal(output) // terminal.go
	}
	return t, nil
}

// exporterNames resolves the exporter list; see Setup.
func (c *config) exporterNames() ([]string, error) {
	names, from := c.exporters, "WithExporters"
	if names == nil {
		from = "OTEL_LOGS_EXPORTER"
		for n := range strings.SplitSeq(c.getenv(from), ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	if names == nil {
		switch {
		case c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "":
			names = []string{ExporterOTLP}
		case c.writer == nil && c.stderrTerminal():
			names = []string{ExporterLive}
		case c.writer == nil && (c.getenv("GITHUB_ACTIONS") == "true" || c.getenv("GITLAB_CI") == "true"):
			names = []string{ExporterCI}
		default:
			names = []string{ExporterJSON}
		}
	}
	seen := map[string]bool{}
	out := names[:0:0]
	for _, n := range names {
		// Names are case-insensitive wherever they come from: a nested
		// run passes on what it found in the variable.
		switch n = strings.ToLower(n); n {
		case ExporterLive, ExporterCI, ExporterPretty, ExporterJSON, ExporterOTLP, ExporterConsole, ExporterNone:
		default:
			return nil, fmt.Errorf("otelbridge: unknown log exporter %q in %s (want a comma-separated list of live, ci, pretty, json, otlp, console, none)", n, from)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func (c *config) stderrTerminal() bool {
	if c.stderrIsTerm != nil {
		return c.stderrIsTerm()
	}
	return term.IsTerminal(os.Stderr)
}

// newExporter builds one exporter by name. A nil exporter means "none".
func (c *config) newExporter(ctx context.Context, name string) (exp sdklog.Exporter, err error) {
	w := c.writer
	if w == nil {
		w = os.Stderr
	}
	switch name {
	case ExporterLive:
		exp, err = prettyexporter.NewLive(prettyexporter.WithWriter(w))
	case ExporterCI:
		exp, err = prettyexporter.NewLive(prettyexporter.WithWriter(w), prettyexporter.WithLiveMode(prettyexporter.LiveCI))
	case ExporterPretty:
		// The flat lines, through the live view's goroutine, so that they
		// are taken in order as they are emitted (see Setup).
		exp, err = prettyexporter.NewLive(prettyexporter.WithWriter(w), prettyexporter.WithLiveMode(prettyexporter.LiveFlat))
	case ExporterJSON:
		exp, err = prettyexporter.NewJSON(prettyexporter.WithWriter(w))
	case ExporterConsole:
		exp, err = stdoutlog.New(stdoutlog.WithWriter(w))
	case ExporterOTLP:
		exp, err = c.otlpLogExporter(ctx)
	}
	return exp, err
}

func (c *config) tracerProvider(ctx context.Context, t *Telemetry, res *resource.Resource, local []sdktrace.SpanProcessor) error {
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, p := range local {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	endpoint := c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	if endpoint && c.getenv("OTEL_TRACES_EXPORTER") != "none" {
		exp, err := c.otlpSpanExporter(ctx)
		if err != nil {
			return err
		}
		t.spans = newBoundedSpanExporter(exp)
		opts = append(opts, sdktrace.WithBatcher(t.spans))
	}
	t.tp = sdktrace.NewTracerProvider(opts...)
	return nil
}

// LocalSpanProcessor returns a span processor that shows spans made
// elsewhere (progressotel run feeds it a nested run's spans) in the local
// views, as the live view's own. With no local view that takes spans, or
// on a nil *Telemetry, it does nothing. It never exports.
func (t *Telemetry) LocalSpanProcessor() sdktrace.SpanProcessor {
	if t == nil {
		return localSpans(nil)
	}
	return localSpans(t.local)
}

// localSpans fans spans out to the local views' processors.
type localSpans []sdktrace.SpanProcessor

func (l localSpans) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	for _, p := range l {
		p.OnStart(ctx, s)
	}
}

func (l localSpans) OnEnd(s sdktrace.ReadOnlySpan) {
	for _, p := range l {
		p.OnEnd(s)
	}
}

func (localSpans) Shutdown(context.Context) error   { return nil }
func (localSpans) ForceFlush(context.Context) error { return nil }

// progressProvider is the provider of the progress records Setup's default
// Recorder writes: lp's processors, in lp's order, without the SDK's check
// for duplicate attribute keys (sdklog.WithAllowKeyDuplication), which
// costs about a third of the driver's export path (BENCHMARKS.md). A
// progress record has no duplicate key to drop: the Recorder writes each
// envelope key once, detail and scope paths are distinct by construction
// (each segment escaped, a map's keys unique), a transition's payload keys
// cannot meet the envelope's (reserved stream names), and the tracectx
// processor adds tracectx.* keys, one per value, which nothing else writes
// (TestProgressRecordsHaveNoDuplicateKeys). lp owns the processors: it
// flushes and shuts them down. With processors of the driver's own
// (WithProcessor), which may add any key, progress records keep the check
// and lp is returned.
func progressProvider(lp *sdklog.LoggerProvider, res *resource.Resource, procs []sdklog.Processor, ownProcessors bool) *sdklog.LoggerProvider {
	if ownProcessors {
		return lp
	}
	opts := []sdklog.LoggerProviderOption{sdklog.WithResource(res), sdklog.WithAllowKeyDuplication()}
	for _, p := range procs {
		opts = append(opts, sdklog.WithProcessor(sharedProcessor{p}))
	}
	return sdklog.NewLoggerProvider(opts...)
}

// sharedProcessor feeds a processor that another provider owns: flushing
// and shutting it down are the owner's.
type sharedProcessor struct{ sdklog.Processor }

func (sharedProcessor) ForceFlush(context.Context) error { return nil }
func (sharedProcessor) Shutdown(context.Context) error   { return nil }
