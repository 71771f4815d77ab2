package otlptest

import (
	"context"
	"sync"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
)

// metricStore keeps the metric requests a server received: a collector's
// OTLP port serves metrics too, and a driver wired by otelbridge.Setup
// exports its run metrics there.
type metricStore struct {
	mu      sync.Mutex
	metrics []*colmetricspb.ExportMetricsServiceRequest
}

func (st *metricStore) keepMetrics(req *colmetricspb.ExportMetricsServiceRequest) {
	st.mu.Lock()
	st.metrics = append(st.metrics, req)
	st.mu.Unlock()
}

// MetricNames returns the name of every metric received, in order, once
// per data point set.
func (st *metricStore) MetricNames() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []string
	for _, req := range st.metrics {
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

// metricsService is the gRPC server's OTLP metrics service: it keeps
// every request, never held or rejected.
type metricsService struct {
	colmetricspb.UnimplementedMetricsServiceServer
	s *Server
}

func (m metricsService) Export(_ context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	m.s.keepMetrics(req)
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}
