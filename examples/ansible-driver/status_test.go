package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge"
)

// TestTelemetryErrorKeepsTheRunsStatus: a run that succeeded succeeds,
// even when its OTLP endpoint takes logs and spans but has no metrics
// pipeline and refuses the run's metrics at shutdown; the telemetry error
// is reported beside it.
func TestTelemetryErrorKeepsTheRunsStatus(t *testing.T) {
	var logs, metrics atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/v1/metrics":
			metrics.Add(1)
			http.Error(w, "unknown service opentelemetry.proto.collector.metrics.v1.MetricsService", http.StatusNotFound)
			return
		case "/v1/logs":
			logs.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "")
	t.Setenv("OTEL_LOGS_EXPORTER", "")
	var note testutil.SyncBuffer
	err := run(context.Background(), options{tenant: "tenant-a", replay: true, notice: &note}, otelbridge.WithExporters("otlp"))
	if err != nil {
		t.Fatalf("the run failed because of its telemetry: %v\n%s", err, note.String())
	}
	if metrics.Load() == 0 || logs.Load() == 0 {
		t.Fatalf("%d log and %d metric requests: the endpoint was not exercised", logs.Load(), metrics.Load())
	}
	if !strings.Contains(note.String(), "ansible-driver: telemetry:") || !strings.Contains(note.String(), "metric") {
		t.Errorf("the telemetry error is not reported:\n%s", note.String())
	}
}
