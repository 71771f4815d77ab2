package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/terraform"
)

// otlpMetricLine is the part of an OTLP JSON metrics line the tests read.
type otlpMetricLine struct {
	ResourceMetrics []struct {
		Resource struct {
			Attributes []otlpKV `json:"attributes"`
		} `json:"resource"`
		ScopeMetrics []struct {
			Metrics []struct {
				Name      string `json:"name"`
				Histogram *struct {
					DataPoints []struct {
						Attributes []otlpKV `json:"attributes"`
						Count      string   `json:"count"`
					} `json:"dataPoints"`
				} `json:"histogram"`
			} `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

type otlpKV struct {
	Key   string `json:"key"`
	Value struct {
		StringValue string `json:"stringValue"`
	} `json:"value"`
}

func kvMap(kvs []otlpKV) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.StringValue
	}
	return m
}

// durationPoints reads the cicd.pipeline.run.duration points of an OTLP
// JSON file: each point's attributes, with the resource's service.name.
func durationPoints(t testing.TB, path string) []map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []map[string]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var l otlpMetricLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		for _, rm := range l.ResourceMetrics {
			service := kvMap(rm.Resource.Attributes)["service.name"]
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name != "cicd.pipeline.run.duration" || m.Histogram == nil {
						continue
					}
					for _, dp := range m.Histogram.DataPoints {
						a := kvMap(dp.Attributes)
						a["service.name"], a["count"] = service, dp.Count
						out = append(out, a)
					}
				}
			}
		}
	}
	return out
}

// With PROGRESS_METRICS_BACKEND_ENDPOINT, a real tofu apply's run metrics
// go from the driver (otelbridge.Setup's meter provider, OTLP) through the
// shipped collector to a metrics backend: the duration by pipeline name,
// result and error type, under the driver's resource.
func TestRunMetricsReachBackend(t *testing.T) {
	bin := testutil.Tofu(t)
	backend := startTraceBackend(t)
	b := startBroker(t)
	col := newCollector(t, b.addr(), nil, map[string]string{"PROGRESS_METRICS_BACKEND_ENDPOINT": "http://" + backend.http})
	col.start()
	prevMP := otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetMeterProvider(prevMP) })
	tel := setupDriver(t, col, "grpc")
	if tel.MeterProvider() == nil {
		t.Fatal("Setup installed no meter provider with an OTLP endpoint")
	}

	dir := t.TempDir()
	config := `resource "terraform_data" "broken" {
  provisioner "local-exec" {
    command = "exit 3"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := terraform.Run(ctx, terraform.Command{Binary: bin, Dir: dir, Args: []string{"apply"}, Init: true,
		Env: []string{"TF_CLI_CONFIG_FILE=" + rc, "CHECKPOINT_DISABLE=1", "HTTPS_PROXY=http://127.0.0.1:9"}})
	var opErr *terraform.OperationError
	if !errors.As(err, &opErr) {
		t.Fatalf("Run: %v, want the apply to fail", err)
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("driver shutdown (exports the metrics): %v", err)
	}

	var points []map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for len(points) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		points = durationPoints(t, backend.file)
	}
	if len(points) != 1 {
		t.Fatalf("duration points at the backend: %v, want 1", points)
	}
	p := points[0]
	for k, want := range map[string]string{
		"cicd.pipeline.name": "apply", "cicd.pipeline.result": "failure", "error.type": progress.FailureInfrastructure,
		"cicd.pipeline.run.state": "executing", "service.name": "e2e-ansible-driver", "count": "1",
	} {
		if p[k] != want {
			t.Errorf("duration point %s = %q, want %q (point %v)", k, p[k], want, p)
		}
	}
}

// Without a metrics backend the collector still accepts the drivers'
// metrics (their export never fails) and counts them in debug/metrics.
func TestRunMetricsAcceptedByDefault(t *testing.T) {
	b := startBroker(t)
	col := newCollector(t, b.addr(), nil, nil)
	col.start()
	prevMP := otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetMeterProvider(prevMP) })
	tel := setupDriver(t, col, "http/protobuf")
	counter, err := tel.MeterProvider().Meter("e2e").Int64Counter("e2e.runs")
	if err != nil {
		t.Fatal(err)
	}
	counter.Add(context.Background(), 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("driver shutdown: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var accepted, refused, counted float64
	for time.Now().Before(deadline) {
		accepted = col.metric("otelcol_receiver_accepted_metric_points", nil)
		refused = col.metric("otelcol_receiver_refused_metric_points", nil)
		counted = col.metric("otelcol_exporter_sent_metric_points", map[string]string{"exporter": "debug/metrics"})
		if counted >= 1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if accepted < 1 || refused != 0 || counted < 1 {
		t.Errorf("metric points accepted %v, refused %v, counted by debug/metrics %v\n%s",
			accepted, refused, counted, grepLines(col.metricsText(t), "metric_points"))
	}
}
