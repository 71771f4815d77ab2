package view

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// sink keeps what the server hands to the view.
type sink struct {
	mu      sync.Mutex
	records []sdklog.Record
	spans   []sdktrace.ReadOnlySpan
}

func (s *sink) Export(_ context.Context, r []sdklog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, r...)
	return nil
}
func (s *sink) ExportSpans(_ context.Context, sp []sdktrace.ReadOnlySpan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = append(s.spans, sp...)
	return nil
}
func (*sink) Shutdown(context.Context) error   { return nil }
func (*sink) ForceFlush(context.Context) error { return nil }

func start(t *testing.T, cfg Config) (*Server, *sink, *[]string) {
	t.Helper()
	k := &sink{}
	var mu sync.Mutex
	var notes []string
	cfg.HTTP, cfg.GRPC, cfg.Logs, cfg.Spans = "127.0.0.1:0", "127.0.0.1:0", k, k
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 4096
	}
	cfg.Notice = func(l string) { mu.Lock(); notes = append(notes, l); mu.Unlock() }
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, k, &notes
}

func post(t *testing.T, url, ctype, enc string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

func logsRequest(event string) []byte {
	b, _ := proto.Marshal(&collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{
		LogRecords: []*logspb.LogRecord{{EventName: event, TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8)}}}}}}})
	return b
}

// TestServerBadInput: malformed and oversized requests (a gzip bomb too) get 400 and 413 with a
// google.rpc.Status, are counted and told, and hand nothing to the view; good ones, gzipped or
// not, are taken.
func TestServerBadInput(t *testing.T) {
	s, k, notes := start(t, Config{})
	base := "http://" + s.HTTPAddr()
	for _, tc := range []struct {
		name, path, ctype, enc string
		body                   []byte
		want                   int
	}{
		{"protobuf", "/v1/logs", "application/x-protobuf", "", logsRequest("a/B"), 200},
		{"gzip", "/v1/logs", "application/x-protobuf", "gzip", gz(logsRequest("a/C")), 200},
		{"garbage", "/v1/logs", "application/x-protobuf", "", []byte{0xff, 0xff, 0xff, 0x01}, 400},
		{"bad gzip", "/v1/traces", "application/x-protobuf", "gzip", []byte("not gzip"), 400},
		{"bad json", "/v1/traces", "application/json", "", []byte(`{"resourceSpans": 3}`), 400},
		{"too large", "/v1/traces", "application/x-protobuf", "", make([]byte, 5000), 413},
		{"gzip bomb", "/v1/logs", "application/x-protobuf", "gzip", gz(make([]byte, 1<<20)), 413},
		{"content type", "/v1/logs", "text/plain", "", []byte("x"), 415},
	} {
		code, body := post(t, base+tc.path, tc.ctype, tc.enc, tc.body)
		if code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, code, tc.want, body)
		}
		if code == 400 || code == 413 {
			st := status.New(codes.OK, "").Proto() // a google.rpc.Status
			unmarshal := proto.Unmarshal
			if tc.ctype == "application/json" {
				unmarshal = protojson.Unmarshal
			}
			if err := unmarshal(body, st); err != nil || st.GetMessage() == "" {
				t.Errorf("%s: the body is no google.rpc.Status: %v %q", tc.name, err, body)
			}
		}
	}
	if len(k.records) != 2 || k.records[1].EventName() != "a/C" || len(k.spans) != 0 {
		t.Errorf("the view got %d records, %d spans", len(k.records), len(k.spans))
	}
	if got := s.Rejected(); got["malformed (400)"] != 3 || got["too large (413)"] != 2 {
		t.Errorf("counted %v", got)
	}
	s.Close(context.Background())
	if last := (*notes)[len(*notes)-1]; last != "progressotel view: 3 malformed (400), 2 too large (413), 0 not forwarded" {
		t.Errorf("last notice %q", last)
	}
}

// TestServerGRPCAndForward: a gRPC request is taken and sent on as http/protobuf; an HTTP one
// byte for byte, with its content type and encoding.
func TestServerGRPCAndForward(t *testing.T) {
	type got struct {
		path, ctype, enc string
		body             []byte
	}
	var mu sync.Mutex
	var fwd []got
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		fwd = append(fwd, got{r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"), b})
		mu.Unlock()
	})
	dst := &http.Server{Handler: mux}
	l := listen(t)
	go func() { _ = dst.Serve(l) }()
	t.Cleanup(func() { _ = dst.Close() })

	s, k, _ := start(t, Config{Forward: "http://" + l.Addr().String() + "/"})
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{
		Spans: []*tracepb.Span{{Name: "over grpc", TraceId: bytes.Repeat([]byte{1}, 16), SpanId: bytes.Repeat([]byte{2}, 8)}}}}}}}
	if _, err := coltracepb.NewTraceServiceClient(conn).Export(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err = coltracepb.NewTraceServiceClient(conn).Export(context.Background(), &coltracepb.ExportTraceServiceRequest{
		ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: strings.Repeat("x", 5000)}}}}}}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("an oversized gRPC request: %v", err)
	}
	// Counted as the server ends the call, which may be after the client has its answer.
	for deadline := time.Now().Add(10 * time.Second); s.Rejected()["too large (413)"] != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("counted %v", s.Rejected())
		}
	}
	body := gz(logsRequest("a/B"))
	if code, _ := post(t, "http://"+s.HTTPAddr()+"/v1/logs", "application/x-protobuf; charset=binary", "gzip", body); code != 200 {
		t.Fatalf("status %d", code)
	}
	if len(k.spans) != 1 || k.spans[0].Name() != "over grpc" {
		t.Errorf("the view got %d spans", len(k.spans))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fwd) != 2 {
		t.Fatalf("%d requests forwarded", len(fwd))
	}
	var back coltracepb.ExportTraceServiceRequest
	if fwd[0].path != "/v1/traces" || fwd[0].ctype != "application/x-protobuf" || proto.Unmarshal(fwd[0].body, &back) != nil || !proto.Equal(&back, req) {
		t.Errorf("the gRPC request forwarded as %+v", fwd[0])
	}
	if f := fwd[1]; f.path != "/v1/logs" || f.ctype != "application/x-protobuf; charset=binary" || f.enc != "gzip" || !bytes.Equal(f.body, body) {
		t.Errorf("the HTTP request forwarded as %+v", f)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}
