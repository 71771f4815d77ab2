package sdkparts_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	otelprop "go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

const (
	tcTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tcTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	tcParentSpan  = "00f067aa0ba902b7"
)

// tcProvider is an SDK LoggerProvider with the tracectx processor in front
// of a synchronous exporter, in the order Setup uses.
func tcProvider(t *testing.T, red *progress.Redactor) (*sdklog.LoggerProvider, *progresstest.Exporter) {
	t.Helper()
	exp := &progresstest.Exporter{}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(red)),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)),
	)
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return lp, exp
}

func tcAttrs(r sdklog.Record) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		m[string(kv.Key)] = kv.Value
		return true
	})
	return m
}

func tcString(t *testing.T, r sdklog.Record, key string) string {
	t.Helper()
	v, ok := tcAttrs(r)[key]
	if !ok {
		t.Fatalf("record %q has no attribute %s; has %v", r.EventName(), key, tcAttrs(r))
	}
	if v.Type() != attribute.STRING {
		t.Fatalf("%s is %s, want STRING", key, v.Type())
	}
	return v.AsString()
}

// tcIncoming is the context a handler sees for a request with a real
// traceparent and tracectx headers, extracted by the default composite.
func tcIncoming() context.Context {
	h := http.Header{}
	h.Set("traceparent", tcTraceparent)
	h.Set("X-Tracectx-TransactionId", "tx-1")
	h.Set("x-tracectx-processid", "p-1")
	h.Set("X-TRACECTX-TENANTID", "tenant-a")
	return propagation.Default().Extract(context.Background(), otelprop.HeaderCarrier(h))
}

func TestTraceCtxOnProgressRecords(t *testing.T) {
	lp, exp := tcProvider(t, progress.DefaultRedactor())
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
	ctx := tcIncoming()

	if err := rec.Record(ctx, progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	if err := rec.RecordTransition(ctx, progress.Transition{Stream: progress.StreamLifecycle, Condition: progress.Condition{Status: "True", Reason: "Running"}}); err != nil {
		t.Fatal(err)
	}
	recs := exp.Records()
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	for _, r := range recs {
		if got := tcString(t, r, "tracectx.transactionid"); got != "tx-1" {
			t.Errorf("%s: tracectx.transactionid = %q", r.EventName(), got)
		}
		if got := tcString(t, r, "tracectx.processid"); got != "p-1" {
			t.Errorf("%s: tracectx.processid = %q", r.EventName(), got)
		}
		if got := tcString(t, r, "tracectx.tenantid"); got != "tenant-a" {
			t.Errorf("%s: tracectx.tenantid = %q", r.EventName(), got)
		}
		// The composite put the incoming traceparent in the context and the
		// SDK copied it onto the record.
		if got := r.TraceID().String(); got != tcTraceID {
			t.Errorf("%s: trace id %s, want %s", r.EventName(), got, tcTraceID)
		}
		if got := r.SpanID().String(); got != tcParentSpan {
			t.Errorf("%s: span id %s, want the remote parent %s", r.EventName(), got, tcParentSpan)
		}
	}
	// progress falls back to the tracectx tenantid for its routing key.
	if got := tcString(t, recs[0], wire.AttrTenant); got != "tenant-a" {
		t.Errorf("progress.tenant = %q", got)
	}
}

func TestTraceCtxOnSlogRecords(t *testing.T) {
	lp, exp := tcProvider(t, progress.DefaultRedactor())
	logger := otelslog.NewLogger("test", otelslog.WithLoggerProvider(lp))

	// A caller-supplied attribute of the same name does not override the
	// request's own value.
	logger.InfoContext(tcIncoming(), "hello", "tracectx.transactionid", "spoofed", "k", "v")
	recs := exp.Records()
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1", len(recs))
	}
	r := recs[0]
	if got := r.Body().AsString(); got != "hello" {
		t.Fatalf("body %q", got)
	}
	if got := tcString(t, r, "tracectx.transactionid"); got != "tx-1" {
		t.Errorf("tracectx.transactionid = %q, want tx-1", got)
	}
	if got := tcString(t, r, "tracectx.processid"); got != "p-1" {
		t.Errorf("tracectx.processid = %q", got)
	}
	if got := tcString(t, r, "k"); got != "v" {
		t.Errorf("k = %q", got)
	}
	if got := r.TraceID().String(); got != tcTraceID {
		t.Errorf("trace id %s, want %s", got, tcTraceID)
	}
	if got := r.InstrumentationScope().Name; got != "test" {
		t.Errorf("scope %q", got)
	}
}

func TestTraceCtxWithoutValuesAddsNothing(t *testing.T) {
	lp, exp := tcProvider(t, progress.DefaultRedactor())
	otelslog.NewLogger("test", otelslog.WithLoggerProvider(lp)).InfoContext(context.Background(), "plain")
	for k := range tcAttrs(exp.Records()[0]) {
		t.Errorf("unexpected attribute %s", k)
	}
}

func TestTraceCtxRedaction(t *testing.T) {
	const pem = "-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEA-----END RSA PRIVATE KEY-----"
	ctx := tcIncoming()
	// Headers as a caller could send them: a token in a tracectx header.
	ctx = propagation.TraceCtx().Extract(ctx, otelprop.MapCarrier{
		"X-Tracectx-AuthToken": "s3cr3t",
		"X-Tracectx-Note":      pem,
	})

	t.Run("default redactor", func(t *testing.T) {
		lp, exp := tcProvider(t, progress.DefaultRedactor())
		otelslog.NewLogger("test", otelslog.WithLoggerProvider(lp)).InfoContext(ctx, "m")
		r := exp.Records()[0]
		if got := tcString(t, r, "tracectx.authtoken"); got != wire.Redacted {
			t.Errorf("tracectx.authtoken = %q, want %q", got, wire.Redacted)
		}
		if got := tcString(t, r, "tracectx.note"); got != wire.Redacted {
			t.Errorf("tracectx.note = %q, want %q", got, wire.Redacted)
		}
		if got := tcString(t, r, "tracectx.transactionid"); got != "tx-1" {
			t.Errorf("tracectx.transactionid = %q", got)
		}
	})
	t.Run("extra secret key", func(t *testing.T) {
		lp, exp := tcProvider(t, progress.DefaultRedactor().With("processid"))
		otelslog.NewLogger("test", otelslog.WithLoggerProvider(lp)).InfoContext(ctx, "m")
		if got := tcString(t, exp.Records()[0], "tracectx.processid"); got != wire.Redacted {
			t.Errorf("tracectx.processid = %q, want %q", got, wire.Redacted)
		}
	})
	t.Run("nil redactor", func(t *testing.T) {
		lp, exp := tcProvider(t, nil)
		otelslog.NewLogger("test", otelslog.WithLoggerProvider(lp)).InfoContext(ctx, "m")
		if got := tcString(t, exp.Records()[0], "tracectx.authtoken"); got != "s3cr3t" {
			t.Errorf("tracectx.authtoken = %q, want the raw value with a nil Redactor", got)
		}
	})
}

// TestHTTPMiddlewareWithOtelhttp serves a real request through otelhttp and
// the propagation middleware and hands the work to a goroutine that runs
// after the handler has returned, the 202-then-background pattern.
func TestHTTPMiddlewareWithOtelhttp(t *testing.T) {
	lp, exp := tcProvider(t, progress.DefaultRedactor())
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
	logger := otelslog.NewLogger("test", otelslog.WithLoggerProvider(lp))

	var (
		wg         sync.WaitGroup
		serverSpan trace.SpanContext
		release    = make(chan struct{})
	)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serverSpan = trace.SpanContextFromContext(r.Context())
		bg := context.WithoutCancel(r.Context())
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release // the handler has returned and its context is done
			_ = rec.Record(bg, progress.Progress(1, 2, "steps"))
			logger.InfoContext(bg, "background step")
		}()
		w.WriteHeader(http.StatusAccepted)
	})
	prop := propagation.Default()
	srv := httptest.NewServer(otelhttp.NewHandler(
		propagation.NewHTTPMiddleware(prop)(h), "execute",
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(prop)))
	t.Cleanup(srv.Close)

	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Header.Set("traceparent", tcTraceparent)
	req.Header.Set("X-Tracectx-TransactionId", "tx-1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	close(release)
	wg.Wait()

	if !serverSpan.IsValid() || serverSpan.SpanID().String() == tcParentSpan {
		t.Fatalf("handler span %v: the middleware replaced otelhttp's server span", serverSpan)
	}
	recs := exp.Records()
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	for _, r := range recs {
		if r.TraceID().String() != tcTraceID || r.SpanID() != serverSpan.SpanID() {
			t.Errorf("record trace %s span %s, want trace %s span %s (otelhttp's)", r.TraceID(), r.SpanID(), tcTraceID, serverSpan.SpanID())
		}
		if got := tcString(t, r, "tracectx.transactionid"); got != "tx-1" {
			t.Errorf("tracectx.transactionid = %q", got)
		}
	}
}

func BenchmarkTraceCtxProcessor(b *testing.B) {
	exp := &discardExporter{}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)),
	)
	defer lp.Shutdown(context.Background())
	logger := otelslog.NewLogger("bench", otelslog.WithLoggerProvider(lp))
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"none", context.Background()}, {"four", tcIncoming()}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				logger.InfoContext(bc.ctx, "m")
			}
		})
	}
}

type discardExporter struct{}

func (discardExporter) Export(context.Context, []sdklog.Record) error { return nil }
func (discardExporter) Shutdown(context.Context) error                { return nil }
func (discardExporter) ForceFlush(context.Context) error              { return nil }

// TestSlogThroughTheGlobalProvider: a driver's slog logger made with the
// contrib bridge's defaults, as docs/propagation.md shows, goes through the
// global provider (the one Setup installs) and gets the tracectx stamp.
func TestSlogThroughTheGlobalProvider(t *testing.T) {
	prev := otel.GetLoggerProvider()
	t.Cleanup(func() { otel.SetLoggerProvider(prev) })
	lp, exp := tcProvider(t, nil)
	otel.SetLoggerProvider(lp)

	otelslog.NewLogger("example.com/mydriver").InfoContext(tcIncoming(), "via global")
	slog.New(otelslog.NewHandler("h")).WarnContext(context.Background(), "via handler")
	recs := exp.Records()
	if len(recs) != 2 {
		t.Fatalf("got %d records through the global provider, want 2", len(recs))
	}
	if recs[0].InstrumentationScope().Name != "example.com/mydriver" || recs[1].InstrumentationScope().Name != "h" {
		t.Errorf("scopes %q, %q", recs[0].InstrumentationScope().Name, recs[1].InstrumentationScope().Name)
	}
	if got := tcString(t, recs[0], "tracectx.transactionid"); got != "tx-1" {
		t.Errorf("tracectx.transactionid = %q", got)
	}
}

func TestTraceCtxProcessorLeavesEnabledToOthers(t *testing.T) {
	alone := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(nil)))
	defer alone.Shutdown(context.Background())
	if alone.Logger("x").Enabled(context.Background(), log.EnabledParameters{}) {
		t.Error("a provider with only the tracectx processor reports records as enabled")
	}
	lp, _ := tcProvider(t, nil)
	if !lp.Logger("x").Enabled(context.Background(), log.EnabledParameters{}) {
		t.Error("the exporting processor after it no longer enables records")
	}
}
