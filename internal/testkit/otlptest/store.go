package otlptest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// store keeps the requests of one signal that a server received.
type store[T any] struct {
	mu   sync.Mutex
	reqs []T
}

func (st *store[T]) keep(req T) {
	st.mu.Lock()
	st.reqs = append(st.reqs, req)
	st.mu.Unlock()
}

func (st *store[T]) all() []T {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.reqs)
}

// signals keeps the log, trace and metric requests a server received: a
// collector's OTLP port serves all three, and a driver wired by
// otelbridge.Setup exports its spans and run metrics there too.
type signals struct {
	logs    store[*collogspb.ExportLogsServiceRequest]
	traces  store[*coltracepb.ExportTraceServiceRequest]
	metrics store[*colmetricspb.ExportMetricsServiceRequest]
	held    gate
}

// Hold makes the log requests (all requests, over HTTP) wait, as a
// collector that accepts the connection and never answers, until Release
// or the client gives up.
func (s *signals) Hold() { s.held.hold() }

// Release lets held and later requests through.
func (s *signals) Release() { s.held.release() }

// ReceivedSpan is one span a server received, with the service.name of
// its resource.
type ReceivedSpan struct {
	Service string
	Span    *tracepb.Span
}

// ReceivedSpans returns every span received, in order.
func (s *signals) ReceivedSpans() []ReceivedSpan {
	var out []ReceivedSpan
	for _, req := range s.traces.all() {
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

// MetricNames returns the name of every metric received, in order, once
// per data point set.
func (s *signals) MetricNames() []string {
	var out []string
	for _, req := range s.metrics.all() {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					out = append(out, m.GetName())
				}
			}
		}
	}
	return out
}

// Attr returns the span's attribute key as a string ("" when absent),
// integers in decimal, arrays' strings joined by spaces.
func (r ReceivedSpan) Attr(key string) (string, bool) {
	for _, kv := range r.Span.GetAttributes() {
		if kv.GetKey() != key {
			continue
		}
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			return v.GetStringValue(), true
		case v.GetArrayValue() != nil:
			var parts []string
			for _, e := range v.GetArrayValue().GetValues() {
				parts = append(parts, e.GetStringValue())
			}
			return strings.Join(parts, " "), true
		default:
			return strconv.FormatInt(v.GetIntValue(), 10), true
		}
	}
	return "", false
}

// traceService and metricsService are the gRPC server's OTLP trace and
// metrics services: they keep every request, never held or rejected.
type (
	traceService struct {
		coltracepb.UnimplementedTraceServiceServer
		s *Server
	}
	metricsService struct {
		colmetricspb.UnimplementedMetricsServiceServer
		s *Server
	}
)

func (t traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	t.s.traces.keep(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (m metricsService) Export(_ context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	m.s.metrics.keep(req)
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}
