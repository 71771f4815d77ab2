package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

// traceBackend is a real OTLP trace receiver: a second collector process
// (the same distribution) with an otlp receiver on gRPC and HTTP that
// writes every span it receives to a file as OTLP JSON.
type traceBackend struct {
	grpc, http string
	file       string
}

func startTraceBackend(t *testing.T) *traceBackend {
	t.Helper()
	dir := t.TempDir()
	tb := &traceBackend{
		grpc: "127.0.0.1:" + strconv.Itoa(freePort(t)),
		http: "127.0.0.1:" + strconv.Itoa(freePort(t)),
		file: filepath.Join(dir, "spans.jsonl"),
	}
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc: {endpoint: "%s"}
      http: {endpoint: "%s"}
exporters:
  file:
    path: %s
    format: json
    flush_interval: 100ms
service:
  telemetry:
    metrics: {level: none}
  pipelines:
    traces: {receivers: [otlp], exporters: [file]}
    metrics: {receivers: [otlp], exporters: [file]}
`, tb.grpc, tb.http, tb.file)
	cfgFile := filepath.Join(dir, "backend.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out testutil.SyncBuffer
	cmd := exec.Command(collectorBin, "--config", cfgFile)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("trace backend output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "Everything is ready") {
		select {
		case <-exited:
			t.Fatalf("trace backend exited:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace backend not ready:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return tb
}

// setupDriver runs otelbridge.Setup as a driver does, exporting logs and
// spans over OTLP to the collector with the given protocol, and restores
// the globals when the test ends.
func setupDriver(t *testing.T, col *collector, protocol string) *otelbridge.Telemetry {
	t.Helper()
	endpoint := "http://" + col.grpc
	if protocol == "http/protobuf" {
		endpoint = "http://" + col.http
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
	t.Setenv("OTEL_SERVICE_NAME", "e2e-ansible-driver")
	prevTP, prevLP, prevRec := otel.GetTracerProvider(), otel.GetLoggerProvider(), progress.Default()
	tel, err := otelbridge.Setup(context.Background(), otelbridge.WithExporters(otelbridge.ExporterOTLP),
		otelbridge.WithoutGlobalPropagator())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tel.Shutdown(context.Background())
		otel.SetTracerProvider(prevTP)
		otel.SetLoggerProvider(prevLP)
		progress.SetDefault(prevRec)
	})
	return tel
}

// runTree makes the span tree of a small playbook run, with a progress
// event inside the task, and returns the spans' contexts (root first).
func runTree(t *testing.T) (root, play, task trace.SpanContext) {
	t.Helper()
	tr := otel.Tracer("e2e-ansible-driver")
	ctx, rootSpan := tr.Start(context.Background(), "playbook site.yml")
	ctx, playSpan := tr.Start(ctx, "play webservers")
	ctx, taskSpan := tr.Start(ctx, "task install nginx", trace.WithAttributes(attribute.String("db.password", "hunter2")))
	evt := progress.Event{Type: "ansible/TaskStarted", Details: map[string]any{"taskName": "install nginx"}}
	evt.Scope = map[string]string{"tenant": "tenant-a"}
	if err := progress.Record(ctx, evt); err != nil {
		t.Fatal(err)
	}
	taskSpan.End()
	playSpan.End()
	rootSpan.End()
	return rootSpan.SpanContext(), playSpan.SpanContext(), taskSpan.SpanContext()
}

// With PROGRESS_TRACES_ENDPOINT, a driver's spans go through the shipped
// collector to a tracing backend, over OTLP/HTTP (traces.yaml) or gRPC
// (traces-grpc.yaml): the whole tree, parents intact, the driver's
// resource, secrets in span attributes masked; and the progress event on
// Kafka names the span it happened in, so a viewer can go from one to the
// other.
func TestSpansReachTracingBackend(t *testing.T) {
	for _, tc := range []struct{ backendProtocol, driverProtocol string }{
		{"http/protobuf", "grpc"},
		{"grpc", "http/protobuf"},
	} {
		t.Run(tc.backendProtocol, func(t *testing.T) {
			backend := startTraceBackend(t)
			endpoint := "http://" + backend.http
			if tc.backendProtocol == "grpc" {
				endpoint = backend.grpc
			}
			b := startBroker(t)
			cons := startConsumer(t, b.addr())
			col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{
				"PROGRESS_TRACES_ENDPOINT": endpoint, "PROGRESS_TRACES_PROTOCOL": tc.backendProtocol,
			})
			col.start()
			tel := setupDriver(t, col, tc.driverProtocol)
			root, play, task := runTree(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatalf("driver shutdown (flushes spans and events): %v", err)
			}

			var spans []otlpSpan
			var resources []map[string]any
			deadline := time.Now().Add(30 * time.Second)
			for len(spans) < 3 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				_, spans, resources = readOTLPFile(t, backend.file)
			}
			byName := map[string]otlpSpan{}
			for i, s := range spans {
				byName[s.Name] = s
				if resources[i]["service.name"] != "e2e-ansible-driver" {
					t.Errorf("span %q: resource %v, want the driver's service.name", s.Name, resources[i])
				}
			}
			want := []struct {
				name   string
				sc     trace.SpanContext
				parent string
			}{
				{"playbook site.yml", root, ""},
				{"play webservers", play, root.SpanID().String()},
				{"task install nginx", task, play.SpanID().String()},
			}
			for _, w := range want {
				s, ok := byName[w.name]
				if !ok {
					t.Errorf("span %q did not reach the backend (got %d spans)", w.name, len(spans))
					continue
				}
				if s.TraceID != w.sc.TraceID().String() || s.SpanID != w.sc.SpanID().String() || s.ParentSpanID != w.parent {
					t.Errorf("span %q: trace %s span %s parent %q; want %s %s %q", w.name, s.TraceID, s.SpanID, s.ParentSpanID,
						w.sc.TraceID(), w.sc.SpanID(), w.parent)
				}
			}
			if raw := readFile(t, backend.file); strings.Contains(raw, "hunter2") {
				t.Errorf("a secret span attribute reached the tracing backend")
			}

			msgs := cons.waitFor(t, 60*time.Second, "the event", func(m []message) bool { return countMarker(m, "install nginx") == 1 })
			body := msgs[0].body(t)
			if body["traceId"] != task.TraceID().String() || body["spanId"] != task.SpanID().String() {
				t.Errorf("the event names trace %v span %v, want the task span %s %s", body["traceId"], body["spanId"], task.TraceID(), task.SpanID())
			}
		})
	}
}

// Without a tracing backend the collector still accepts spans (a driver's
// trace export never fails), counts them in debug/traces and drops them.
func TestSpansAcceptedAndCountedByDefault(t *testing.T) {
	b := startBroker(t)
	col := newCollector(t, b.addr(), nil, nil)
	col.start()
	tel := setupDriver(t, col, "grpc")
	runTree(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("driver shutdown: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var accepted, counted, refused float64
	for time.Now().Before(deadline) {
		accepted = col.metric("otelcol_receiver_accepted_spans", nil)
		refused = col.metric("otelcol_receiver_refused_spans", nil)
		counted = col.metric("otelcol_exporter_sent_spans", map[string]string{"exporter": "debug/traces"})
		if counted >= 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if accepted != 3 || refused != 0 || counted != 3 {
		t.Errorf("spans accepted %v, refused %v, counted by debug/traces %v; want 3, 0, 3\n%s",
			accepted, refused, counted, grepLines(col.metricsText(t), "spans"))
	}
}
