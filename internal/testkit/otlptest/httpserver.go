package otlptest

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// HTTPServer is a real OTLP/HTTP endpoint (http/protobuf) on 127.0.0.1,
// serving /v1/logs, /v1/traces and /v1/metrics over HTTP/1.1 like a collector's
// OTLP/HTTP port.
type HTTPServer struct {
	// Addr is the address the server listens on, on 127.0.0.1.
	Addr string

	mu    sync.Mutex
	logs  []*collogspb.ExportLogsServiceRequest
	spans int
	held  gate
	spanStore
	metricStore
}

// Hold makes requests wait, as a collector that accepts the connection and
// never answers, until Release or the client gives up.
func (s *HTTPServer) Hold() { s.held.hold() }

// Release lets held and later requests through.
func (s *HTTPServer) Release() { s.held.release() }

// wait holds r while the server is held; it returns false when the client
// gave up.
func (s *HTTPServer) wait(r *http.Request) bool { return s.held.wait(r.Context()) == nil }

// StartHTTP returns a running OTLP/HTTP server, stopped at the end of the
// test.
func StartHTTP(t testing.TB) *HTTPServer { return startHTTP(t, nil) }

// StartHTTPS returns a running OTLP/HTTP server over TLS with cert (see
// NewCert), which negotiates HTTP/2 or HTTP/1.1 as a collector's does.
func StartHTTPS(t testing.TB, cert tls.Certificate) *HTTPServer { return startHTTP(t, &cert) }

func startHTTP(t testing.TB, cert *tls.Certificate) *HTTPServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &HTTPServer{Addr: l.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, r *http.Request) {
		req := &collogspb.ExportLogsServiceRequest{}
		if !s.wait(r) || !decode(w, r, req) {
			return
		}
		s.mu.Lock()
		s.logs = append(s.logs, req)
		s.mu.Unlock()
		reply(w, &collogspb.ExportLogsServiceResponse{})
	})
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		req := &coltracepb.ExportTraceServiceRequest{}
		if !s.wait(r) || !decode(w, r, req) {
			return
		}
		n := 0
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				n += len(ss.GetSpans())
			}
		}
		s.mu.Lock()
		s.spans += n
		s.mu.Unlock()
		s.keep(req)
		reply(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, r *http.Request) {
		req := &colmetricspb.ExportMetricsServiceRequest{}
		if !s.wait(r) || !decode(w, r, req) {
			return
		}
		s.keepMetrics(req)
		reply(w, &colmetricspb.ExportMetricsServiceResponse{})
	})
	srv := &http.Server{Handler: mux}
	if cert != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{"h2", "http/1.1"}}
		go func() { _ = srv.ServeTLS(l, "", "") }()
	} else {
		go func() { _ = srv.Serve(l) }()
	}
	t.Cleanup(func() { s.Release(); _ = srv.Close() })
	return s
}

func decode(w http.ResponseWriter, r *http.Request, m proto.Message) bool {
	if r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf", http.StatusUnsupportedMediaType)
		return false
	}
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// LogEventNames returns the EventName of every log record received, in
// order.
func (s *HTTPServer) LogEventNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range received(s.logs) {
		out = append(out, r.Rec.GetEventName())
	}
	return out
}

// Spans returns how many spans the server received.
func (s *HTTPServer) Spans() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spans
}

// ReceivedSpan is one span a server received, with the service.name of
// its resource.
type ReceivedSpan struct {
	Service string
	Span    *tracepb.Span
}

// spanStore keeps the trace requests a server received.
type spanStore struct {
	mu     sync.Mutex
	traces []*coltracepb.ExportTraceServiceRequest
}

func (st *spanStore) keep(req *coltracepb.ExportTraceServiceRequest) {
	st.mu.Lock()
	st.traces = append(st.traces, req)
	st.mu.Unlock()
}

// ReceivedSpans returns every span received, in order.
func (st *spanStore) ReceivedSpans() []ReceivedSpan {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []ReceivedSpan
	for _, req := range st.traces {
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					out = append(out, ReceivedSpan{Service: service, Span: sp})
				}
			}
		}
	}
	return out
}
