//go:build unix

package progress_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// otlpSink is an OTLP/HTTP endpoint on 127.0.0.1 that counts the request
// bytes it receives (protobuf, uncompressed) and answers 200.
type otlpSink struct {
	srv   *httptest.Server
	bytes atomic.Int64
}

func newOTLPSink(tb testing.TB) *otlpSink {
	s := &otlpSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	tb.Cleanup(s.srv.Close)
	return s
}

// exportProvider is a provider whose records go through a batch
// processor and the real OTLP/HTTP exporter to sink. progressParts adds
// what otelbridge.Setup puts in front of the exporter (the tracectx
// processor, sdkparts' batch processor with its drop accounting).
func exportProvider(tb testing.TB, sink *otlpSink, progressParts bool, opts ...sdklog.LoggerProviderOption) *sdklog.LoggerProvider {
	tb.Helper()
	exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpointURL(sink.srv.URL+"/v1/logs"))
	if err != nil {
		tb.Fatal(err)
	}
	if progressParts {
		opts = append(opts,
			sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
			sdklog.WithProcessor(sdkparts.NewBatchProcessor(exp, sdkparts.WithExporterName("otlp"))))
	} else {
		opts = append(opts, sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	}
	lp := sdklog.NewLoggerProvider(opts...)
	tb.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return lp
}

// BenchmarkExportPath is a driver's whole export path per medium event:
// emit, batch, OTLP http/protobuf, send, on the driver's CPU (cpu-ns/op
// counts the batch and export goroutines too), and the bytes each event
// takes on the wire (otlp-B/event: one request of 512 events, per event).
// stock is the SDK with a hand-built record of the same attributes and the
// stock batch processor, the baseline; progress is Record on the provider
// otelbridge.Setup gives the default Recorder: its parts, without the SDK's
// duplicate-key check (otelbridge's TestProgressRecordsHaveNoDuplicateKeys);
// progress-checked keeps the check, as Setup does when a driver adds
// processors of its own.
func BenchmarkExportPath(b *testing.B) {
	ctx := benchCtx()
	c := mediumCase()
	run := func(b *testing.B, lp *sdklog.LoggerProvider, op func()) {
		loop(b, op)
		if err := lp.ForceFlush(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	// The bytes on the wire of one request of 512 events, per event, as
	// each variant's provider hands them to the exporter.
	wireBytes := func(b *testing.B, opts []sdklog.LoggerProviderOption, emit func(lp *sdklog.LoggerProvider)) {
		c := &benchCapture{}
		lp := sdklog.NewLoggerProvider(append(opts, sdklog.WithProcessor(c))...)
		emit(lp)
		sink := newOTLPSink(b)
		exp, err := otlploghttp.New(context.Background(), otlploghttp.WithEndpointURL(sink.srv.URL+"/v1/logs"))
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = exp.Shutdown(context.Background()) }()
		if err := exp.Export(context.Background(), c.records); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sink.bytes.Load())/float64(len(c.records)), "otlp-B/event")
	}
	b.Run("stock", func(b *testing.B) {
		sink := newOTLPSink(b)
		lp := exportProvider(b, sink, false)
		l := lp.Logger(wire.ScopeName)
		var seq atomic.Int64
		run(b, lp, func() { c.baseline(ctx, l, seq.Add(1)) })
		wireBytes(b, nil, func(lp *sdklog.LoggerProvider) {
			for i := range 512 {
				c.baseline(ctx, lp.Logger(wire.ScopeName), int64(i+1))
			}
		})
	})
	for _, v := range []struct {
		name string
		opts []sdklog.LoggerProviderOption
	}{{"progress", []sdklog.LoggerProviderOption{sdklog.WithAllowKeyDuplication()}}, {"progress-checked", nil}} {
		b.Run(v.name, func(b *testing.B) {
			sink := newOTLPSink(b)
			lp := exportProvider(b, sink, true, v.opts...)
			r := progress.NewRecorder(progress.WithLoggerProvider(lp))
			evt := progress.Event{Type: c.typ, Details: c.asMap, Envelope: benchEnvelope}
			run(b, lp, func() { mustRecord(b, r, ctx, evt) })
			wireBytes(b, v.opts, func(lp *sdklog.LoggerProvider) {
				r := progress.NewRecorder(progress.WithLoggerProvider(lp))
				for range 512 {
					mustRecord(b, r, ctx, evt)
				}
			})
		})
	}
}
