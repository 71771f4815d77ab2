// Package view is progressotel view's OTLP receiver: it takes OTLP logs and traces over
// http/protobuf, http/json and gRPC, hands them to the live view (prettyexporter.Received), and
// sends each request received on, unchanged, to --forward's URL.
package view

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // senders may compress
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Config says where the receiver listens and what it feeds.
type Config struct {
	HTTP, GRPC string // listen addresses; empty: not that protocol
	Forward    string // base URL that every accepted request is sent on to (its path appended), or empty
	MaxBytes   int64  // the largest request body, decompressed

	Logs  sdklog.Exporter
	Spans sdktrace.SpanExporter
	// Notice prints one line for the user, above the live view.
	Notice func(line string)
}

// Server is a running receiver.
type Server struct {
	cfg      Config
	hl, gl   net.Listener
	hs       *http.Server
	gs       *grpc.Server
	client   *http.Client
	mu       sync.Mutex
	counts   map[string]int // rejected or failed requests, by what happened
	lastNote time.Time
	noted    int // the count in the last notice
	total    int
}

// Start listens on cfg's addresses and serves until Close.
func Start(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, counts: map[string]int{}, client: &http.Client{Timeout: 30 * time.Second}}
	if cfg.HTTP != "" {
		l, err := net.Listen("tcp", cfg.HTTP)
		if err != nil {
			return nil, err
		}
		s.hl = l
		mux := http.NewServeMux()
		mux.HandleFunc("/v1/logs", s.handle)
		mux.HandleFunc("/v1/traces", s.handle)
		s.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = s.hs.Serve(l) }()
	}
	if cfg.GRPC != "" {
		l, err := net.Listen("tcp", cfg.GRPC)
		if err != nil {
			s.Close(context.Background())
			return nil, err
		}
		s.gl = l
		s.gs = grpc.NewServer(grpc.MaxRecvMsgSize(int(cfg.MaxBytes)), grpc.StatsHandler(grpcStats{s}))
		collogspb.RegisterLogsServiceServer(s.gs, logsService{s: s})
		coltracepb.RegisterTraceServiceServer(s.gs, traceService{s: s})
		go func() { _ = s.gs.Serve(l) }()
	}
	return s, nil
}

// HTTPAddr and GRPCAddr are the addresses listened on, empty when not.
func (s *Server) HTTPAddr() string { return addr(s.hl) }
func (s *Server) GRPCAddr() string { return addr(s.gl) }

func addr(l net.Listener) string {
	if l == nil {
		return ""
	}
	return l.Addr().String()
}

// Close stops listening, letting the requests being served finish until ctx ends.
func (s *Server) Close(ctx context.Context) {
	if s.hs != nil {
		_ = s.hs.Shutdown(ctx)
	}
	if s.gs != nil {
		done := make(chan struct{})
		go func() { s.gs.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.gs.Stop()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total > s.noted {
		s.notice()
	}
}

// Rejected returns the count of requests rejected or not forwarded, by what happened.
func (s *Server) Rejected() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// count counts a request rejected or not forwarded and tells the user, at most once a second (the
// count in the next line, or at Close, covers the ones not told).
func (s *Server) count(what string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[what]++
	s.total++
	if time.Since(s.lastNote) < time.Second {
		return
	}
	s.notice()
	if err != nil && s.cfg.Notice != nil {
		s.cfg.Notice("  " + truncate(err.Error(), 300))
	}
}

// notice prints the counts; s.mu is held.
func (s *Server) notice() {
	s.lastNote, s.noted = time.Now(), s.total
	if s.cfg.Notice == nil {
		return
	}
	var b strings.Builder
	b.WriteString("progressotel view: ")
	for i, k := range []string{"malformed (400)", "too large (413)", "not forwarded"} {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", s.counts[k], k)
	}
	s.cfg.Notice(b.String())
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

var (
	errTooLarge  = errors.New("request too large")
	errMalformed = errors.New("malformed request")
)

// handle serves an OTLP/HTTP request.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "OTLP takes POST", http.StatusMethodNotAllowed)
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	isJSON := ct == "application/json"
	if !isJSON && ct != "application/x-protobuf" {
		http.Error(w, "content type must be application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
		return
	}
	raw, body, err := s.read(r)
	if err == nil {
		err = s.take(r.URL.Path, body, isJSON)
	}
	if err != nil {
		code, what := http.StatusBadRequest, "malformed (400)"
		if errors.Is(err, errTooLarge) {
			code, what = http.StatusRequestEntityTooLarge, "too large (413)"
		}
		s.count(what, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, err))
		writeStatus(w, code, err, isJSON)
		return
	}
	s.forward(r.URL.Path, raw, r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"))
	if isJSON {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK) // an empty Export*ServiceResponse is no bytes
}

// read returns the body as received and decompressed, each at most MaxBytes.
func (s *Server) read(r *http.Request) (raw, body []byte, err error) {
	raw, err = readMax(r.Body, s.cfg.MaxBytes)
	if err != nil {
		return nil, nil, err
	}
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		return raw, raw, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errMalformed, err)
		}
		body, err = readMax(zr, s.cfg.MaxBytes)
		if err != nil && !errors.Is(err, errTooLarge) {
			err = fmt.Errorf("%w: %v", errMalformed, err)
		}
		return raw, body, err
	default:
		return nil, nil, fmt.Errorf("%w: content encoding %q", errMalformed, enc)
	}
}

func readMax(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, max)
	}
	return b, nil
}

// take decodes a request's body and hands what it holds to the view.
func (s *Server) take(path string, body []byte, isJSON bool) error {
	unmarshal := proto.Unmarshal
	if isJSON {
		var err error
		if body, err = hexIDs(body); err != nil {
			return fmt.Errorf("%w: %v", errMalformed, err)
		}
		unmarshal = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal
	}
	ctx := context.Background()
	switch path {
	case "/v1/logs":
		var req collogspb.ExportLogsServiceRequest
		if err := unmarshal(body, &req); err != nil {
			return fmt.Errorf("%w: %v", errMalformed, err)
		}
		return s.logs(ctx, &req)
	default:
		var req coltracepb.ExportTraceServiceRequest
		if err := unmarshal(body, &req); err != nil {
			return fmt.Errorf("%w: %v", errMalformed, err)
		}
		return s.traces(ctx, &req)
	}
}

func (s *Server) logs(ctx context.Context, req *collogspb.ExportLogsServiceRequest) error {
	if s.cfg.Logs == nil {
		return nil
	}
	_ = s.cfg.Logs.Export(ctx, records(req.GetResourceLogs())) // the view takes all, or has shut down
	return nil
}

func (s *Server) traces(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) error {
	if s.cfg.Spans == nil {
		return nil
	}
	_ = s.cfg.Spans.ExportSpans(ctx, spans(req.GetResourceSpans()))
	return nil
}

// hexIDs rewrites OTLP/JSON's trace and span ids, which are hex, as the base64 that protojson
// reads for bytes fields.
func hexIDs(body []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if err := rewriteIDs(v, 0); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func rewriteIDs(v any, depth int) error {
	if depth > 64 {
		return errors.New("nested too deep")
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id":
				if str, ok := e.(string); ok && str != "" {
					b, err := hex.DecodeString(str)
					if err != nil {
						return fmt.Errorf("%s: not hex: %q", k, truncate(str, 40))
					}
					x[k] = base64.StdEncoding.EncodeToString(b)
				}
				continue
			}
			if err := rewriteIDs(e, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := rewriteIDs(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeStatus writes OTLP/HTTP's error response: a google.rpc.Status in the request's encoding.
func writeStatus(w http.ResponseWriter, code int, err error, isJSON bool) {
	c := codes.InvalidArgument
	if code == http.StatusRequestEntityTooLarge {
		c = codes.ResourceExhausted
	}
	st := status.New(c, err.Error()).Proto()
	var b []byte
	if isJSON {
		b, _ = protojson.Marshal(st)
		w.Header().Set("Content-Type", "application/json")
	} else {
		b, _ = proto.Marshal(st)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// forward sends a request's body on, unchanged, to the forward URL with the same path. It waits
// for the answer, so that requests keep their order and a sender that flushes before it exits has
// had everything sent on; a failure is counted and told, and does not fail the sender's request.
func (s *Server) forward(path string, body []byte, contentType, encoding string) {
	if s.cfg.Forward == "" {
		return
	}
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(s.cfg.Forward, "/")+path, bytes.NewReader(body))
	if err != nil {
		s.count("not forwarded", err)
		return
	}
	req.Header.Set("Content-Type", contentType)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.count("not forwarded", err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		s.count("not forwarded", fmt.Errorf("forward %s: %s", path, resp.Status))
	}
}

type logsService struct {
	collogspb.UnimplementedLogsServiceServer
	s *Server
}

func (g logsService) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	if err := g.s.logs(ctx, req); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	g.s.forwardProto("/v1/logs", req)
	return &collogspb.ExportLogsServiceResponse{}, nil
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	s *Server
}

func (g traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if err := g.s.traces(ctx, req); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	g.s.forwardProto("/v1/traces", req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// grpcStats counts the gRPC requests that gRPC itself refused: too large, or not decodable.
type grpcStats struct{ s *Server }

func (g grpcStats) HandleRPC(_ context.Context, st stats.RPCStats) {
	end, ok := st.(*stats.End)
	if !ok || end.Error == nil {
		return
	}
	switch status.Code(end.Error) {
	case codes.ResourceExhausted:
		g.s.count("too large (413)", end.Error)
	case codes.Internal, codes.InvalidArgument:
		g.s.count("malformed (400)", end.Error)
	}
}

func (grpcStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (grpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (grpcStats) HandleConn(context.Context, stats.ConnStats)                       {}

// forwardProto sends a request received over gRPC on as http/protobuf.
func (s *Server) forwardProto(path string, m proto.Message) {
	if s.cfg.Forward == "" {
		return
	}
	b, err := proto.Marshal(m)
	if err != nil {
		s.count("not forwarded", err)
		return
	}
	s.forward(path, b, "application/x-protobuf", "")
}
