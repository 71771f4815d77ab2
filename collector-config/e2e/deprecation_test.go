package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// deprecationWarnings returns the lines of a collector's log that warn of
// a deprecated component name or setting.
func deprecationWarnings(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(strings.ToLower(line), "deprecated") {
			out = append(out, line)
		}
	}
	return out
}

// The gateway and agent tiers, as run.sh assembles them, start with the
// current component names (load_balancing, otlp_grpc, otlp_http): no
// deprecation warning in the start log. TestShippedConfigs checks the
// single tier and every overlay the same way.
func TestShippedConfigsStartWithoutDeprecation(t *testing.T) {
	ca := testpki.NewCA(t, "gateway CA")
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"gateway", map[string]string{"PROGRESS_TIER": "gateway", "PROGRESS_TENANTS": "tenant-a"}},
		{"agent", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS": "[127.0.0.1:1, 127.0.0.1:2]"}},
		{"agent with DNS", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS_DNS": "localhost"}},
		{"agent with its gateways' token", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS": "[127.0.0.1:1]",
			"PROGRESS_GATEWAY_BEARER_TOKEN": "t0ken", "PROGRESS_GATEWAY_TLS_INSECURE": "false", "PROGRESS_GATEWAY_TLS_CA_FILE": ca.File}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t)
			col := newCollector(t, b.addr(), nil, tc.env)
			col.start()
			if w := deprecationWarnings(col.out.String()); len(w) > 0 {
				t.Errorf("the collector warned at start:\n%s", strings.Join(w, "\n"))
			}
		})
	}
}

// The check above can fail: the same binary warns at start for the old
// name of the load-balancing exporter.
func TestDeprecationWarningIsSeen(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "old-names.yaml")
	if err := os.WriteFile(cfg, []byte(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:`+strconv.Itoa(freePort(t))+`
exporters:
  loadbalancing:
    routing_key: traceID
    protocol:
      otlp:
        tls:
          insecure: true
    resolver:
      static:
        hostnames: [127.0.0.1:1]
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [loadbalancing]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := &testutil.SyncBuffer{}
	cmd := exec.Command(collectorBin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "Everything is ready") {
		if time.Now().After(deadline) {
			t.Fatalf("collector not ready:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(deprecationWarnings(out.String())) == 0 {
		t.Errorf("no deprecation warning for the exporter named loadbalancing:\n%s", out.String())
	}
}
