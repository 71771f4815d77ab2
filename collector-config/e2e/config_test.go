package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// Every shipped configuration, alone and with each overlay, passes
// `otelcol-progress validate` and then starts, with no deprecation warning
// in its log, and delivers an event: some mistakes (a bad Kafka encoding, a
// missing certificate) only fail at start.
func TestShippedConfigs(t *testing.T) {
	certFile, keyFile, clientTLS := serverCertificate(t)
	cases := []struct {
		name    string
		tenants []string
		env     map[string]string
		tls     bool
		token   string
		local   bool
	}{
		{name: "progress.yaml"},
		{name: "tenants overlay", tenants: []string{"tenant-a", "tenant-b"}},
		{name: "tenants.example.yaml", env: map[string]string{"PROGRESS_TENANTS_FILE": mustAbs(t, filepath.Join(configDir, "tenants.example.yaml"))}},
		{name: "auth.yaml", tenants: []string{"tenant-a"}, token: "tok-abc"},
		{name: "tls.yaml", tenants: []string{"tenant-a"}, tls: true},
		{name: "local.yaml", tenants: []string{"tenant-a"}, local: true},
		{name: "traces.yaml", env: map[string]string{"PROGRESS_TRACES_ENDPOINT": "http://127.0.0.1:1"}},
		{name: "traces-grpc.yaml", env: map[string]string{"PROGRESS_TRACES_ENDPOINT": "127.0.0.1:1", "PROGRESS_TRACES_PROTOCOL": "grpc"}},
		{name: "metrics.yaml", env: map[string]string{"PROGRESS_METRICS_BACKEND_ENDPOINT": "http://127.0.0.1:1"}},
		{name: "all overlays", tenants: []string{"tenant-a"}, tls: true, token: "tok-abc", local: true,
			env: map[string]string{"PROGRESS_TRACES_ENDPOINT": "http://127.0.0.1:1", "PROGRESS_METRICS_BACKEND_ENDPOINT": "http://127.0.0.1:1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t)
			cons := startConsumer(t, b.addr())
			env := map[string]string{}
			for k, v := range tc.env {
				env[k] = v
			}
			if tc.tls {
				env["PROGRESS_OTLP_TLS_CERT_FILE"] = certFile
				env["PROGRESS_OTLP_TLS_KEY_FILE"] = keyFile
			}
			if tc.token != "" {
				env["PROGRESS_OTLP_BEARER_TOKEN"] = tc.token
			}
			localFile := filepath.Join(t.TempDir(), "local.jsonl")
			if tc.local {
				env["PROGRESS_LOCAL_FILE"] = localFile
			}
			col := newCollector(t, b.addr(), tc.tenants, env)

			cmd := exec.Command(filepath.Join(configDir, "run.sh"), "validate")
			cmd.Env = col.env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("validate: %v\n%s", err, out)
			}
			col.start()
			if w := deprecationWarnings(col.out.String()); len(w) > 0 {
				t.Errorf("the collector warned at start:\n%s", strings.Join(w, "\n"))
			}
			if len(tc.tenants) > 0 {
				if _, err := os.Stat(filepath.Join(col.storage, "tenants.generated.yaml")); err != nil {
					t.Errorf("run.sh did not write the tenants overlay to the storage dir: %v", err)
				}
			}

			o := driverOpt{}
			if tc.tls {
				o.tls = clientTLS
			}
			if tc.token != "" {
				o.headers = map[string]string{"authorization": "Bearer " + tc.token}
			}
			d := newDriver(t, col.grpc, o)
			if err := d.rec.Record(context.Background(), progress.Event{
				Type: "ansible/PlayStarted", Details: map[string]any{"playName": "config-smoke"},
				Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
			}); err != nil {
				t.Fatal(err)
			}
			d.flush(t)
			wantTopic := "progress_unrouted"
			if len(tc.tenants) > 0 || tc.env["PROGRESS_TENANTS_FILE"] != "" {
				wantTopic = "progress_events_tenant-a"
			}
			cons.waitFor(t, 60*time.Second, "the event on "+wantTopic, func(m []message) bool {
				return countMarker(onTopic(m, wantTopic), "config-smoke") == 1
			})
			if tc.local {
				deadline := time.Now().Add(30 * time.Second)
				for {
					b, _ := os.ReadFile(localFile)
					if strings.Contains(string(b), "config-smoke") {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("local file route: %s has no event: %s", localFile, b)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
}

// run.sh refuses a tracing protocol it has no overlay for, instead of
// silently dropping the spans.
func TestRunShRefusesUnknownTracesProtocol(t *testing.T) {
	c := newCollector(t, "127.0.0.1:1", nil, map[string]string{
		"PROGRESS_TRACES_ENDPOINT": "http://127.0.0.1:1", "PROGRESS_TRACES_PROTOCOL": "http/json",
	})
	cmd := exec.Command(filepath.Join(configDir, "run.sh"), "validate")
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "PROGRESS_TRACES_PROTOCOL") {
		t.Errorf("run.sh with PROGRESS_TRACES_PROTOCOL=http/json: err=%v, output %q", err, out)
	}
}

// validate is not enough on its own: it catches bad OTTL, but a bad Kafka
// encoding only fails at start. Both are caught by this suite.
func TestValidateAndStartCatchMistakes(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(configDir, "progress.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new string
		failsValidate  bool
	}{
		{"bad OTTL", `log.attributes["progress.tenant"] == nil`, `log.attributes["progress.tenant"] ==`, true},
		{"bad Kafka encoding", "      encoding: raw\n", "      encoding: rawjson\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(orig), tc.old) {
				t.Fatalf("progress.yaml no longer contains %q", tc.old)
			}
			bad := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(bad, []byte(strings.Replace(string(orig), tc.old, tc.new, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			c := newCollector(t, "127.0.0.1:1", nil, nil)
			cmd := exec.Command(collectorBin, "validate", "--config", bad)
			cmd.Env = c.env
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.failsValidate {
				t.Fatalf("validate error = %v, want failure %v\n%s", err, tc.failsValidate, out)
			}
			if tc.failsValidate {
				return
			}
			cmd = exec.Command(collectorBin, "--config", bad)
			cmd.Env = c.env
			done := make(chan error, 1)
			var buf testutil.SyncBuffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(buf.String(), "rawjson") {
					t.Fatalf("start: err=%v, output does not name the encoding:\n%s", err, buf.String())
				}
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("a bad encoding did not stop the collector:\n%s", buf.String())
			}
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// run.sh picks the tier: the gateway and agent configurations validate as
// run.sh assembles them, and it refuses a tier it does not know and the
// gateway's overlays on an agent.
func TestRunShTiers(t *testing.T) {
	ca := testpki.NewCA(t, "gateway CA")
	gatewayAuth := map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAY_BEARER_TOKEN": "t0ken",
		"PROGRESS_GATEWAY_TLS_INSECURE": "false", "PROGRESS_GATEWAY_TLS_CA_FILE": ca.File}
	bothTokens := map[string]string{"PROGRESS_OTLP_BEARER_TOKEN": "drivers-t0ken"}
	for k, v := range gatewayAuth {
		bothTokens[k] = v
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		fail string // part of the error, or "" for a valid config
	}{
		{"gateway", map[string]string{"PROGRESS_TIER": "gateway", "PROGRESS_TENANTS": "tenant-a"}, ""},
		{"agent", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS": "[127.0.0.1:1, 127.0.0.1:2]"}, ""},
		{"agent with DNS", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS_DNS": "gateways.example"}, ""},
		{"agent with tenants", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_TENANTS": "tenant-a"}, "gateway's"},
		{"unknown tier", map[string]string{"PROGRESS_TIER": "edge"}, "want single, gateway or agent"},
		{"agent with a metrics backend", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_METRICS_BACKEND_ENDPOINT": "http://127.0.0.1:1"}, "PROGRESS_METRICS_BACKEND_ENDPOINT"},
		{"agent with its gateways' token", gatewayAuth, ""},
		{"agent with its drivers' and its gateways' tokens", bothTokens, ""},
		{"gateway with an agent's token", map[string]string{"PROGRESS_TIER": "gateway", "PROGRESS_GATEWAY_BEARER_TOKEN": "t0ken"}, "PROGRESS_OTLP_BEARER_TOKEN"},
		{"agent with its gateways' token in plain text", map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAY_BEARER_TOKEN": "t0ken"}, "PROGRESS_GATEWAY_TLS_INSECURE=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t, "127.0.0.1:1", nil, tc.env)
			cmd := exec.Command(filepath.Join(configDir, "run.sh"), "validate")
			cmd.Env = c.env
			out, err := cmd.CombinedOutput()
			if tc.fail == "" && err != nil {
				t.Fatalf("validate: %v\n%s", err, out)
			}
			if tc.fail != "" && (err == nil || !strings.Contains(string(out), tc.fail)) {
				t.Errorf("run.sh: err=%v, output %q, want a refusal naming %q", err, out, tc.fail)
			}
		})
	}
}
