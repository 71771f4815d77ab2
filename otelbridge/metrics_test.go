package otelbridge_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	colmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/otelbridge"
)

// metricsServer is an OTLP/HTTP receiver of metrics; other signals are
// taken and dropped.
type metricsServer struct {
	mu      sync.Mutex
	metrics []*metricpb.Metric
	attrs   map[string]map[string]string // by metric: the last point's attributes
	url     string
}

func startMetricsServer(t *testing.T) *metricsServer {
	s := &metricsServer{attrs: map[string]map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/v1/metrics" {
			var req colmetric.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			s.add(&req)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *metricsServer) add(req *colmetric.ExportMetricsServiceRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				s.metrics = append(s.metrics, m)
				var kvs []*commonKV
				switch d := m.Data.(type) {
				case *metricpb.Metric_Histogram:
					for _, dp := range d.Histogram.DataPoints {
						kvs = toKV(dp.Attributes)
					}
				case *metricpb.Metric_Sum:
					for _, dp := range d.Sum.DataPoints {
						kvs = toKV(dp.Attributes)
					}
				}
				a := map[string]string{}
				for _, kv := range kvs {
					a[kv.k] = kv.v
				}
				s.attrs[m.Name] = a
			}
		}
	}
}

// TestSetupExportsRunMetrics: with an OTLP endpoint, Setup's meter
// provider carries an adapter's run metrics over OTLP/HTTP, exported by
// Shutdown at the latest.
func TestSetupExportsRunMetrics(t *testing.T) {
	restoreGlobals(t)
	srv := startMetricsServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.url)
	t.Setenv("OTEL_LOGS_EXPORTER", "none")
	tel, err := otelbridge.Setup(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tel.MeterProvider() == nil {
		t.Fatal("no MeterProvider with an OTLP endpoint")
	}
	var c adapter.Config
	adapter.Configure(&c, &c, adapter.Defaults{Name: "tool", Scope: "example.com/tool"}, adapter.Shared{})
	start := time.Now()
	op := c.StartRun(context.Background(), adapter.Run{Operation: "Deploy", Pipeline: "site.yml", OldSpan: "playbook site.yml"}, start)
	op.Fail(start, start.Add(3*time.Second), "INFRASTRUCTURE_ERROR", "failed hosts: web-1", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	d := srv.attrs["cicd.pipeline.run.duration"]
	if d["cicd.pipeline.name"] != "site.yml" || d["cicd.pipeline.result"] != "failure" || d["error.type"] != "INFRASTRUCTURE_ERROR" {
		t.Errorf("duration attributes %v (metrics %d)", d, len(srv.metrics))
	}
	if e := srv.attrs["cicd.pipeline.run.errors"]; e["error.type"] != "INFRASTRUCTURE_ERROR" {
		t.Errorf("errors attributes %v", e)
	}
	if _, ok := srv.attrs["cicd.pipeline.run.active"]; !ok {
		t.Error("no cicd.pipeline.run.active")
	}
}

func TestSetupMetricsExporterChoice(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		want    bool
		wantErr string
	}{
		{env: map[string]string{}, want: false},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:9/v1/metrics"}, want: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_METRICS_EXPORTER": "none"}, want: false},
		{env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp"}, want: true},
		{env: map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, wantErr: `unknown metric exporter "prometheus"`},
		{env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "thrift"}, wantErr: `unsupported OTLP protocol "thrift"`},
	} {
		restoreGlobals(t)
		for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
			t.Setenv(k, tc.env[k])
		}
		t.Setenv("OTEL_LOGS_EXPORTER", "none")
		t.Setenv("OTEL_TRACES_EXPORTER", "none")
		tel, err := otelbridge.Setup(context.Background())
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("env %v: err %v, want %q", tc.env, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("env %v: %v", tc.env, err)
		}
		if got := tel.MeterProvider() != nil; got != tc.want {
			t.Errorf("env %v: meter provider %v, want %v", tc.env, got, tc.want)
		}
		// No run, no metrics: nothing is sent, so an endpoint that is down
		// (or has no metrics service) fails no Shutdown.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := tel.Shutdown(ctx); err != nil {
			t.Errorf("env %v: Shutdown without metrics: %v", tc.env, err)
		}
		cancel()
	}
}

type commonKV struct{ k, v string }

func toKV(kvs []*commonpb.KeyValue) []*commonKV {
	out := make([]*commonKV, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonKV{kv.Key, kv.Value.GetStringValue()})
	}
	return out
}
