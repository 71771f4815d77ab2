package otlptest

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
)

// HTTPServer is a real OTLP/HTTP endpoint (http/protobuf) on 127.0.0.1,
// serving /v1/logs, /v1/traces and /v1/metrics over HTTP/1.1 like a collector's
// OTLP/HTTP port.
type HTTPServer struct {
	// Addr is the address the server listens on, on 127.0.0.1.
	Addr string

	signals
}

// StartHTTP returns a running OTLP/HTTP server, stopped at the end of the
// test.
func StartHTTP(t testing.TB) *HTTPServer { return startHTTP(t, nil) }

// StartHTTPS returns a running OTLP/HTTP server over TLS with cert (see
// NewCert), which negotiates HTTP/2 or HTTP/1.1 as a collector's does.
func StartHTTPS(t testing.TB, cert tls.Certificate) *HTTPServer { return startHTTP(t, &cert) }

// NewCert returns a server certificate for 127.0.0.1 and the path of a
// PEM file holding its CA's certificate, for OTEL_EXPORTER_OTLP_CERTIFICATE.
func NewCert(t testing.TB) (tls.Certificate, string) {
	t.Helper()
	ca := testpki.NewCA(t, "otlptest CA")
	_, _, pair := ca.Issue(t, "otlptest", false)
	return pair, ca.File
}

func startHTTP(t testing.TB, cert *tls.Certificate) *HTTPServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &HTTPServer{Addr: l.Addr().String()}
	mux := http.NewServeMux()
	route(mux, s, "/v1/logs", &s.logs, &collogspb.ExportLogsServiceResponse{})
	route(mux, s, "/v1/traces", &s.traces, &coltracepb.ExportTraceServiceResponse{})
	route(mux, s, "/v1/metrics", &s.metrics, &colmetricspb.ExportMetricsServiceResponse{})
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

// route serves POST path: it holds the request while the server is held
// (until the client gives up), then keeps the protobuf request in st and
// answers resp.
func route[T proto.Message](mux *http.ServeMux, s *HTTPServer, path string, st *store[T], resp proto.Message) {
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		var zero T
		req := zero.ProtoReflect().New().Interface().(T)
		if s.held.wait(r.Context()) != nil || !decode(w, r, req) {
			return
		}
		st.keep(req)
		b, _ := proto.Marshal(resp)
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	})
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

// LogEventNames returns the EventName of every log record received, in
// order.
func (s *HTTPServer) LogEventNames() []string {
	var out []string
	for _, r := range s.Records() {
		out = append(out, r.Rec.GetEventName())
	}
	return out
}

// Spans returns how many spans the server received.
func (s *HTTPServer) Spans() int { return len(s.ReceivedSpans()) }
