package otelbridge_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

// captureStderrLog captures what the OpenTelemetry error handler prints by
// default: it writes through the standard logger, to stderr.
func captureStderrLog(t *testing.T) *syncLog {
	t.Helper()
	l := &syncLog{}
	prev := log.Writer()
	log.SetOutput(l)
	t.Cleanup(func() { log.SetOutput(prev) })
	return l
}

type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// otlpEnv points the OTLP exporters at endpoint, with protocol ("" for the
// default), short timeouts and fast batches.
func otlpEnv(t *testing.T, endpoint, protocol string) {
	t.Helper()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	for _, v := range []string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_LOGS_EXPORTER"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
}

// TestOTLPDefaultsToHTTPProtobuf: a user who sets only the endpoint, to a
// collector's OTLP/HTTP port, gets logs and spans delivered.
func TestOTLPDefaultsToHTTPProtobuf(t *testing.T) {
	if otelbridge.DefaultOTLPProtocol != "http/protobuf" {
		t.Fatalf("DefaultOTLPProtocol = %q", otelbridge.DefaultOTLPProtocol)
	}
	srv := otlptest.StartHTTP(t)
	otlpEnv(t, "http://"+srv.Addr, "")
	restoreGlobals(t)
	tel, err := otelbridge.Setup(context.Background(), otelbridge.WithWriter(&bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := otel.Tracer("test").Start(context.Background(), "op")
	if err := progress.Record(ctx, progress.Event{Type: "test/OverHTTP"}); err != nil {
		t.Fatal(err)
	}
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.LogEventNames(); len(got) != 1 || got[0] != "test/OverHTTP" {
		t.Errorf("the OTLP/HTTP server received log records %v, want [test/OverHTTP]", got)
	}
	if srv.Spans() != 1 {
		t.Errorf("the OTLP/HTTP server received %d spans, want 1", srv.Spans())
	}
	if s := tel.Stats(); s.Dropped != 0 {
		t.Errorf("Stats %+v", s)
	}
}

// TestProtocolMismatchIsReported: the exporter speaks one OTLP protocol and
// the endpoint the other, against real listeners. Nothing arrives; the
// driver's stderr (the OpenTelemetry error handler's default output) says
// why and what to set, once per signal.
func TestProtocolMismatchIsReported(t *testing.T) {
	grpcSrv := otlptest.Start(t)
	httpSrv := otlptest.StartHTTP(t)
	cert, caFile := otlptest.NewCert(t)
	grpcTLS := otlptest.New(t)
	grpcTLS.TLS = &cert
	grpcTLS.Start(t)
	httpsSrv := otlptest.StartHTTPS(t, cert)
	cases := []struct {
		name, endpoint, protocol, caFile string
		answered, fix                    string
	}{
		{"http/protobuf (the default) to a gRPC port", "http://" + grpcSrv.Addr, "", "", "gRPC", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		{"grpc to an OTLP/HTTP port", "http://" + httpSrv.Addr, "grpc", "", "HTTP/1.1", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"},
		{"http/protobuf to a gRPC port, over TLS", "https://" + grpcTLS.Addr, "", caFile, "gRPC", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		{"grpc to an OTLP/HTTP port, over TLS", "https://" + httpsSrv.Addr, "grpc", caFile, "HTTP server", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stderr := captureStderrLog(t)
			otlpEnv(t, c.endpoint, c.protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", c.caFile)
			restoreGlobals(t)
			tel, err := otelbridge.Setup(context.Background(), otelbridge.WithExporters(otelbridge.ExporterOTLP),
				otelbridge.WithoutGlobalPropagator())
			if err != nil {
				t.Fatal(err)
			}
			// One record and one span per round, flushed, until both signals
			// have been reported: on a loaded machine an export can time out
			// before the server's answer arrives, and such an error carries no
			// signature of the other protocol. The next export's does.
			records := 0
			deadline := time.Now().Add(2 * time.Minute)
			// (Metrics may be reported too: the drop counter is on Setup's
			// MeterProvider, and the failed exports count.)
			for !strings.Contains(stderr.String(), "otelbridge: OTLP logs to ") || !strings.Contains(stderr.String(), "otelbridge: OTLP traces to ") {
				if time.Now().After(deadline) {
					t.Fatalf("no protocol mismatch report for logs and traces on stderr after %d rounds:\n%s", records, stderr)
				}
				ctx, span := otel.Tracer("test").Start(context.Background(), "op")
				if err := progress.Record(ctx, progress.Event{Type: "test/Mismatch"}); err != nil {
					t.Fatal(err)
				}
				records++
				span.End()
				fctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				_ = tel.ForceFlush(fctx) // fails: nothing can be delivered
				cancel()
			}
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = tel.Shutdown(sctx)
			out := stderr.String()
			for _, signal := range []string{"OTLP logs to " + c.endpoint, "OTLP traces to " + c.endpoint} {
				if n := strings.Count(out, "otelbridge: "+signal); n != 1 {
					t.Errorf("%q reported %d times, want once:\n%s", signal, n, out)
				}
			}
			if !strings.Contains(out, c.answered) || !strings.Contains(out, c.fix) {
				t.Errorf("the report does not say what answered (%s) and what to set (%s):\n%s", c.answered, c.fix, out)
			}
			// The records are lost, and counted: not silently dropped.
			if s := tel.Stats(); s.Exported != 0 || s.Dropped != int64(records) {
				t.Errorf("Stats %+v, want the %d records counted as lost", s, records)
			}
			if err == nil {
				t.Error("Shutdown returned nil although nothing could be delivered")
			}
		})
	}
}

// handlerFunc is an OpenTelemetry error handler. Once installed it stays
// the delegate of the global handler for the whole test binary (the API
// delegates once), so after its test it prints as the default handler does.
type handlerFunc struct {
	mu     sync.Mutex
	active func(error)
}

func (h *handlerFunc) Handle(err error) {
	h.mu.Lock()
	f := h.active
	h.mu.Unlock()
	if f != nil {
		f(err)
		return
	}
	log.Print(err)
}

// TestProtocolMismatchErrorIsTyped: a driver with its own error handler
// recognises the report, and reads where it went wrong.
func TestProtocolMismatchErrorIsTyped(t *testing.T) {
	grpcSrv := otlptest.Start(t)
	otlpEnv(t, "http://"+grpcSrv.Addr, "")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/protobuf")
	restoreGlobals(t)
	got := make(chan *otelbridge.ProtocolMismatchError, 16)
	h := &handlerFunc{active: func(err error) {
		var m *otelbridge.ProtocolMismatchError
		if errors.As(err, &m) {
			got <- m
		}
	}}
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(h)
	t.Cleanup(func() {
		h.mu.Lock()
		h.active = nil
		h.mu.Unlock()
		otel.SetErrorHandler(prev)
	})
	tel, err := otelbridge.Setup(context.Background(), otelbridge.WithExporters(otelbridge.ExporterOTLP),
		otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	if err := progress.Record(context.Background(), progress.Event{Type: "test/Mismatch"}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		want := otelbridge.ProtocolMismatchError{Signal: "logs", Endpoint: "http://" + grpcSrv.Addr,
			Protocol: "http/protobuf", From: "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"}
		if m.Signal != want.Signal || m.Endpoint != want.Endpoint || m.Protocol != want.Protocol || m.From != want.From ||
			!strings.Contains(m.Answered, "gRPC") || m.Cause == nil {
			t.Errorf("ProtocolMismatchError %+v, want %+v answered by gRPC, with its cause", m, want)
		}
		if !strings.Contains(m.Error(), "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL") {
			t.Errorf("the message does not name the variable that chose the protocol: %s", m)
		}
	case <-time.After(time.Minute):
		t.Fatal("no *ProtocolMismatchError reached the error handler")
	}
}
