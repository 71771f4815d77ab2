// Package otlptest is a real OTLP endpoint for tests (gRPC, or HTTP:
// logs, traces and metrics), with the helpers that read back what drivers
// sent: progress records, sequences, drop reports and spans.
package otlptest

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// Server is a real OTLP/gRPC logs (and traces, metrics) endpoint on
// 127.0.0.1 that a test stops and restarts on the same port, to play a
// collector that goes away and comes back. It keeps every request it
// accepted, and their wire bytes.
type Server struct {
	collogspb.UnimplementedLogsServiceServer
	// Addr is the address the server listens on, on 127.0.0.1.
	Addr string
	// Compact keeps, of each record, only what sequence and drop
	// accounting read (for soaks); set it before Start.
	Compact bool
	// Arrived gets one signal per Export call, before it is held or
	// rejected.
	Arrived chan struct{}
	// TLS, when set before Start, makes the server speak gRPC over TLS
	// with this certificate (see NewCert).
	TLS *tls.Certificate

	mu   sync.Mutex
	srv  *grpc.Server
	raw  [][]byte
	fail int           // reject the next fail requests
	got  chan struct{} // one signal per accepted request
	signals
}

// New reserves a free port; the server is not started.
func New(t testing.TB) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: l.Addr().String(), Arrived: make(chan struct{}, 1<<16), got: make(chan struct{}, 1<<16)}
	_ = l.Close()
	t.Cleanup(s.Stop)
	return s
}

// Start returns a running server.
func Start(t testing.TB) *Server {
	t.Helper()
	s := New(t)
	s.Start(t)
	return s
}

// Start listens on the reserved port again (after New or Stop).
func (s *Server) Start(t testing.TB) {
	t.Helper()
	var l net.Listener
	var err error
	// The port was ours a moment ago; rebinding it can race with the
	// kernel releasing it, so retry briefly.
	for range 100 {
		if l, err = net.Listen("tcp", s.Addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen %s: %v", s.Addr, err)
	}
	var opts []grpc.ServerOption
	if s.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*s.TLS}})))
	}
	srv := grpc.NewServer(opts...)
	collogspb.RegisterLogsServiceServer(srv, s)
	coltracepb.RegisterTraceServiceServer(srv, traceService{s: s})
	colmetricspb.RegisterMetricsServiceServer(srv, metricsService{s: s})
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// Stop kills the server and every open connection, as a collector crash
// would.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	s.held.release()
	if srv != nil {
		srv.Stop()
	}
}

// Running reports whether the server is listening.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv != nil
}

// RejectNext makes the next n requests fail with InvalidArgument, an error
// the exporter does not retry.
func (s *Server) RejectNext(n int) {
	s.mu.Lock()
	s.fail = n
	s.mu.Unlock()
}

// Export is the OTLP logs service method.
func (s *Server) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	s.Arrived <- struct{}{}
	if err := s.held.wait(ctx); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	s.mu.Lock()
	if s.fail > 0 {
		s.fail--
		s.mu.Unlock()
		return nil, status.Error(codes.InvalidArgument, "rejected by test")
	}
	if s.Compact {
		s.logs.keep(compacted(req))
	} else {
		b, err := proto.Marshal(req)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.logs.keep(proto.Clone(req).(*collogspb.ExportLogsServiceRequest))
		s.raw = append(s.raw, b)
	}
	s.mu.Unlock()
	s.got <- struct{}{}
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// Received is one log record as the server got it.
type Received struct {
	Res   map[string]string
	Scope string
	Rec   *logspb.LogRecord
}

// Records returns every accepted log record, in order.
func (s *signals) Records() []Received {
	var out []Received
	for _, req := range s.logs.all() {
		for _, rl := range req.GetResourceLogs() {
			res := map[string]string{}
			for _, kv := range rl.GetResource().GetAttributes() {
				res[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			for _, sl := range rl.GetScopeLogs() {
				for _, lr := range sl.GetLogRecords() {
					out = append(out, Received{Res: res, Scope: sl.GetScope().GetName(), Rec: lr})
				}
			}
		}
	}
	return out
}

// RawBytes returns every accepted request's protobuf encoding.
func (s *Server) RawBytes() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

// WaitFor waits until cond holds for the accepted records, failing after a
// generous deadline: it detects a hang, it does not measure speed.
func (s *Server) WaitFor(t testing.TB, what string, cond func([]Received) bool) []Received {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		recs := s.Records()
		if cond(recs) {
			return recs
		}
		select {
		case <-s.got:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s; have %d records", what, len(recs))
		}
	}
}

// Exporter returns the real OTLP/gRPC log exporter aimed at s, without
// retries so that a failure is immediate and the tests deterministic.
func (s *Server) Exporter(t testing.TB) *otlploggrpc.Exporter {
	t.Helper()
	exp, err := otlploggrpc.New(context.Background(),
		otlploggrpc.WithEndpoint(s.Addr), otlploggrpc.WithInsecure(),
		otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}),
		otlploggrpc.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

// ProtoRecord lets wire.Decode read an OTLP log record.
type ProtoRecord struct{ R *logspb.LogRecord }

func (p ProtoRecord) EventName() string { return p.R.GetEventName() }

func (p ProtoRecord) WalkAttributes(f func(attribute.KeyValue) bool) {
	for _, kv := range p.R.GetAttributes() {
		if !f(attribute.KeyValue{Key: attribute.Key(kv.GetKey()), Value: fromAny(kv.GetValue())}) {
			return
		}
	}
}

func fromAny(v *commonpb.AnyValue) attribute.Value {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return attribute.StringValue(x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		return attribute.BoolValue(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return attribute.Int64Value(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return attribute.Float64Value(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		vals := make([]attribute.Value, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			vals = append(vals, fromAny(e))
		}
		return attribute.SliceValue(vals...)
	case *commonpb.AnyValue_KvlistValue:
		kvs := make([]attribute.KeyValue, 0, len(x.KvlistValue.GetValues()))
		for _, e := range x.KvlistValue.GetValues() {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(e.GetKey()), Value: fromAny(e.GetValue())})
		}
		return attribute.MapValue(kvs...)
	}
	return attribute.Value{}
}

// Decoded decodes the progress records among recs, skipping the others.
func Decoded(t testing.TB, recs []Received) []wire.Decoded {
	t.Helper()
	var out []wire.Decoded
	for _, r := range recs {
		d, err := wire.Decode(ProtoRecord{r.Rec})
		if err != nil {
			continue
		}
		out = append(out, d)
	}
	return out
}

// OfType keeps the records whose EventName is typ.
func OfType(recs []Received, typ string) []Received {
	var out []Received
	for _, r := range recs {
		if r.Rec.GetEventName() == typ {
			out = append(out, r)
		}
	}
	return out
}

// compacted keeps, of each record, only the attributes that sequence and
// drop accounting read, so that a long soak measures the driver's memory
// and not the test server's.
func compacted(req *collogspb.ExportLogsServiceRequest) *collogspb.ExportLogsServiceRequest {
	out := &collogspb.ExportLogsServiceRequest{}
	for _, rl := range req.GetResourceLogs() {
		nrl := &logspb.ResourceLogs{Resource: rl.GetResource()}
		for _, sl := range rl.GetScopeLogs() {
			nsl := &logspb.ScopeLogs{Scope: sl.GetScope()}
			for _, lr := range sl.GetLogRecords() {
				n := &logspb.LogRecord{EventName: lr.GetEventName(), TraceId: lr.GetTraceId(), SeverityNumber: lr.GetSeverityNumber()}
				for _, kv := range lr.GetAttributes() {
					k := kv.GetKey()
					if k == wire.AttrSequence || k == wire.AttrEventType || k == wire.AttrTenant ||
						lr.GetEventName() == progress.TypeEventsDropped {
						n.Attributes = append(n.Attributes, kv)
					}
				}
				nsl.LogRecords = append(nsl.LogRecords, n)
			}
			nrl.ScopeLogs = append(nrl.ScopeLogs, nsl)
		}
		out.ResourceLogs = append(out.ResourceLogs, nrl)
	}
	return out
}

// gate holds requests, as a collector that accepts the connection and
// never answers, between hold and release.
type gate struct {
	mu sync.Mutex
	ch chan struct{} // when set, requests wait until it is closed
}

func (g *gate) hold() {
	g.mu.Lock()
	g.ch = make(chan struct{})
	g.mu.Unlock()
}

// release lets held and later requests through.
func (g *gate) release() {
	g.mu.Lock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
	g.mu.Unlock()
}

// wait returns nil at once when the gate is open, else when it opens, or
// ctx's error when the client gives up first.
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
