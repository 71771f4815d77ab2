package otelbridge

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// OTLP protocols, the values of OTEL_EXPORTER_OTLP_PROTOCOL.
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
)

// DefaultOTLPProtocol is the OTLP protocol when no variable names one:
// http/protobuf, the specification's default, so that
// OTEL_EXPORTER_OTLP_ENDPOINT=http://host:4318 works on its own. A
// collector's gRPC port (4317) needs OTEL_EXPORTER_OTLP_PROTOCOL=grpc; a
// mismatch is reported as a *ProtocolMismatchError.
const DefaultOTLPProtocol = ProtocolHTTPProtobuf

// newOTLP builds signal's OTLP exporter ("LOGS", "TRACES", "METRICS") in
// the protocol the environment names (the signal's variable, then
// OTEL_EXPORTER_OTLP_PROTOCOL, else DefaultOTLPProtocol), and the check of
// its export errors.
func newOTLP[E any](c *config, signal, what string, grpcNew, httpNew func() (E, error)) (E, *protocolCheck, error) {
	p, from := DefaultOTLPProtocol, "" // from: the variable that chose p
	for _, v := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if e := strings.TrimSpace(c.getenv(v)); e != "" {
			p, from = e, v
			break
		}
	}
	var exp E
	var err error
	switch p {
	case ProtocolGRPC:
		exp, err = grpcNew()
	case ProtocolHTTPProtobuf:
		exp, err = httpNew()
	default:
		return exp, nil, fmt.Errorf("otelbridge: unsupported OTLP protocol %q in %s (want %s or %s)", p, from, ProtocolGRPC, ProtocolHTTPProtobuf)
	}
	if err != nil {
		return exp, nil, fmt.Errorf("otelbridge: otlp %s exporter: %w", what, err)
	}
	// The endpoint as the exporter reads it, "" for its default.
	endpoint := cmp.Or(c.getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT"), c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	return exp, &protocolCheck{signal: strings.ToLower(signal), endpoint: endpoint, protocol: p, from: from}, nil
}

func (c *config) otlpLogExporter(ctx context.Context) (sdklog.Exporter, error) {
	exp, check, err := newOTLP(c, "LOGS", "log",
		func() (sdklog.Exporter, error) { return otlploggrpc.New(ctx, otlploggrpc.WithDialOption(reconnect)) },
		func() (sdklog.Exporter, error) { return otlploghttp.New(ctx) })
	if err != nil {
		return nil, err
	}
	return splitLogExporter{&checkedLogExporter{Exporter: exp, check: check}}, nil
}

// maxRequestBytes bounds the estimated size of one OTLP log request: a
// collector's OTLP/gRPC receiver takes at most 4 MiB (its default), and a
// batch of 512 records at the library's limits (details carried twice, as
// attributes and in the body) would be far over it and refused whole.
const maxRequestBytes = 3 << 20

// splitLogExporter sends a batch as several requests when its estimated
// size is over maxRequestBytes. A failed request fails the export (the
// batch is counted as lost) and later requests are not sent.
type splitLogExporter struct{ sdklog.Exporter }

func (e splitLogExporter) Export(ctx context.Context, recs []sdklog.Record) error {
	start, size := 0, 0
	for i := range recs {
		n := requestSize(&recs[i])
		if i > start && size+n > maxRequestBytes {
			if err := e.Exporter.Export(ctx, recs[start:i]); err != nil {
				return err
			}
			start, size = i, 0
		}
		size += n
	}
	return e.Exporter.Export(ctx, recs[start:])
}

// requestSize estimates a record's share of an OTLP request: its body,
// event name and severity text, and each attribute with the bytes of its
// protobuf framing, at least as much as the encoding takes.
func requestSize(r *sdklog.Record) int {
	const record, attr = 96, 16 // fixed fields; a KeyValue's tags and lengths
	n := record + len(r.EventName()) + len(r.SeverityText()) + wireformat.ValueSize(r.Body())
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		n += attr + len(kv.Key) + wireformat.ValueSize(kv.Value)
		return true
	})
	return n
}

func (c *config) otlpSpanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	exp, check, err := newOTLP(c, "TRACES", "trace",
		func() (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, otlptracegrpc.WithDialOption(reconnect))
		},
		func() (sdktrace.SpanExporter, error) { return otlptracehttp.New(ctx) })
	if err != nil {
		return nil, err
	}
	return &checkedSpanExporter{SpanExporter: exp, check: check}, nil
}

// reconnect caps gRPC's reconnect backoff at 5 seconds (gRPC's default
// grows to 120 s), so that logs and spans flow again soon after a collector
// comes back.
var reconnect = grpc.WithConnectParams(grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
	MinConnectTimeout: 10 * time.Second,
})

// ProtocolMismatchError reports that an OTLP endpoint answered in the other
// OTLP protocol: a gRPC exporter reached an HTTP server (a collector's
// OTLP/HTTP port, 4318), or an http/protobuf exporter a gRPC server
// (4317). Every export to it fails, so Setup reports it once per signal
// through otel.Handle, besides the exporter's own errors and the drop
// accounting.
type ProtocolMismatchError struct {
	Signal   string // "logs" or "traces"
	Endpoint string // as configured; "" for the exporter's default
	Protocol string // what the exporter speaks
	From     string // the variable that chose Protocol; "" for the default
	Answered string // what the endpoint looked like
	Cause    error  // the export error that showed it
}

func (e *ProtocolMismatchError) Error() string {
	endpoint := e.Endpoint
	if endpoint == "" {
		endpoint = "the default endpoint"
	}
	from, fix := "the default", "OTEL_EXPORTER_OTLP_PROTOCOL"
	if e.From != "" {
		from, fix = e.From, e.From
	}
	want, port := ProtocolGRPC, "gRPC port (4317)"
	if e.Protocol == ProtocolGRPC {
		want, port = ProtocolHTTPProtobuf, "OTLP/HTTP port (4318)"
	}
	return fmt.Sprintf("otelbridge: OTLP %s to %s: the endpoint answered as %s, but the exporter speaks %s (%s); "+
		"nothing is delivered until %s=%s is set or the endpoint names the collector's %s: %v",
		e.Signal, endpoint, e.Answered, e.Protocol, from, fix, want, port, e.Cause)
}

// Unwrap returns the export error.
func (e *ProtocolMismatchError) Unwrap() error { return e.Cause }

// protocolCheck looks at export errors for the signature of the other
// protocol, and reports the first one it finds.
type protocolCheck struct {
	signal, endpoint, protocol, from string
	once                             sync.Once
}

// mismatchSignatures are what the exporters return when the endpoint
// speaks the other protocol; each was observed against a real server.
var mismatchSignatures = map[string][]struct{ text, answered string }{
	ProtocolGRPC: {
		// The server answered gRPC's HTTP/2 preface with an HTTP/1.1 status line.
		{"looked like an HTTP/1.1 header", "an HTTP/1.1 server"},
		// Over TLS, an HTTP server that negotiates HTTP/2 answers, but not
		// with gRPC.
		{"received unexpected content-type", "an HTTP server that does not serve gRPC"},
	},
	ProtocolHTTPProtobuf: {
		// The answer began with an HTTP/2 frame (a gRPC server's SETTINGS).
		{`malformed HTTP response "\x00\x00`, "a gRPC (HTTP/2-only) server"},
		// Over TLS, HTTP/2 is negotiated and the gRPC server refuses the
		// OTLP/HTTP content type.
		{"415 Unsupported Media Type", "a server that refuses OTLP/HTTP's content type, such as a gRPC server"},
	},
}

// observe checks err and returns it.
func (p *protocolCheck) observe(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range mismatchSignatures[p.protocol] {
		if strings.Contains(msg, s.text) {
			p.once.Do(func() {
				otel.Handle(&ProtocolMismatchError{
					Signal: p.signal, Endpoint: p.endpoint, Protocol: p.protocol, From: p.from,
					Answered: s.answered, Cause: err,
				})
			})
			break
		}
	}
	return err
}

type checkedLogExporter struct {
	sdklog.Exporter
	check *protocolCheck
}

func (e *checkedLogExporter) Export(ctx context.Context, recs []sdklog.Record) error {
	return e.check.observe(e.Exporter.Export(ctx, recs))
}

type checkedSpanExporter struct {
	sdktrace.SpanExporter
	check *protocolCheck
}

func (e *checkedSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return e.check.observe(e.SpanExporter.ExportSpans(ctx, spans))
}
