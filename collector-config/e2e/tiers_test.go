package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/progressotel/progressotel/internal/testkit/testpki"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// The seams between the two tiers (docs/collector.md, "Scaling out"): what
// an agent accepts, a gateway takes, and nothing an agent acknowledged is
// dropped between them.

// startGateway starts a gateway (PROGRESS_TIER=gateway) for tenant-a.
func startGateway(t *testing.T, b *broker, env map[string]string) *collector {
	t.Helper()
	vars := map[string]string{"PROGRESS_TIER": "gateway"}
	for k, v := range env {
		vars[k] = v
	}
	g := newCollector(t, b.addr(), []string{"tenant-a"}, vars)
	g.start()
	return g
}

// newAgent prepares an agent (PROGRESS_TIER=agent) in front of gateways.
func newAgent(t *testing.T, b *broker, env map[string]string, gateways ...*collector) *collector {
	t.Helper()
	var gws []string
	for _, g := range gateways {
		gws = append(gws, g.grpc)
	}
	vars := map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS": "[" + strings.Join(gws, ", ") + "]"}
	for k, v := range env {
		vars[k] = v
	}
	return newCollector(t, b.addr(), nil, vars)
}

// sequences returns how often each sequence of trace reached topic.
func sequences(t testing.TB, msgs []message, topic, trace string) map[int]int {
	t.Helper()
	seen := map[int]int{}
	for _, m := range onTopic(msgs, topic) {
		b := m.body(t)
		if b["traceId"] != trace {
			continue
		}
		s, _ := b["sequence"].(float64)
		seen[int(s)]++
	}
	return seen
}

// exactRequest is an OTLP/HTTP protobuf body of exactly size bytes: progress
// events of one run (trace) of tenant-a, as a driver that is not built on
// this library sends them (no message of its own: the gateway builds it),
// each with a detail string that makes up the size. It returns the body
// and the number of events.
func exactRequest(t *testing.T, size int, trace []byte) ([]byte, int) {
	t.Helper()
	const perRecord = 8 << 10
	n := size / (perRecord + 300)
	recs := make([]*logspb.LogRecord, n)
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	now := uint64(time.Now().UnixNano())
	for i := range recs {
		recs[i] = &logspb.LogRecord{
			TimeUnixNano: now, ObservedTimeUnixNano: now, SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO,
			SeverityText: "INFO", EventName: "ansible/TaskStarted", TraceId: trace,
			Attributes: []*commonpb.KeyValue{
				{Key: "progress.event_type", Value: str("ResourceTransitionProgressEvent")},
				{Key: "progress.tenant", Value: str("tenant-a")},
				{Key: "progress.sequence", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(i + 1)}}},
				{Key: "progress.details.filler", Value: str(strings.Repeat("x", perRecord))},
			},
		}
	}
	req := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
		ScopeLogs: []*logspb.ScopeLogs{{Scope: &commonpb.InstrumentationScope{Name: wire.ScopeName}, LogRecords: recs}},
	}}}
	// Pad the last record's detail until the body is exactly size bytes
	// (a length prefix may grow by a byte on the way).
	last := recs[n-1].Attributes[3].Value.Value.(*commonpb.AnyValue_StringValue)
	for range 10 {
		got := proto.Size(req)
		if got == size {
			b, err := proto.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			return b, n
		}
		if d := size - got; d > 0 || len(last.StringValue)+d > 0 {
			last.StringValue = strings.Repeat("x", len(last.StringValue)+d)
		}
	}
	t.Fatalf("could not make a body of exactly %d bytes (have %d)", size, proto.Size(req))
	return nil, 0
}

// 1. An agent accepts an OTLP/HTTP body up to its limit
// (PROGRESS_MAX_REQUEST_BYTES, 20 MiB) and forwards it whole over gRPC:
// the gateway must take it. At gRPC's default 4 MiB the gateway refused it
// with ResourceExhausted, which is permanent, and the agent dropped all of
// it after answering 200.
func TestTiersLargestAgentRequest(t *testing.T) {
	const limit = 20 << 20 // agent.yaml's default body limit
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	g := startGateway(t, b, nil)
	a := newAgent(t, b, nil, g)
	a.start()

	trace, _ := hex.DecodeString("5b8efff798038103d269b633813fc60c")
	body, n := exactRequest(t, limit, trace)
	resp, err := http.Post("http://"+a.http+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("agent answered %d to a body of exactly its limit (%d bytes)", resp.StatusCode, len(body))
	}
	// One byte more is refused by the agent itself, at once: the limit
	// tested is the agent's.
	over := append(append([]byte(nil), body...), 0x0a, 0x00) // an empty ResourceLogs
	resp, err = http.Post("http://"+a.http+"/v1/logs", "application/x-protobuf", bytes.NewReader(over))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("agent accepted %d bytes, over its limit of %d", len(over), limit)
	}

	topic := "progress_events_tenant-a"
	msgs := cons.waitFor(t, 3*time.Minute, fmt.Sprintf("%d events of a %d-byte request", n, limit), func(m []message) bool {
		return len(onTopic(m, topic)) >= n
	})
	seen := sequences(t, msgs, topic, hex.EncodeToString(trace))
	for s := 1; s <= n; s++ {
		if seen[s] != 1 {
			t.Errorf("sequence %d arrived %d times", s, seen[s])
		}
	}
	if dropped := a.metric("otelcol_exporter_send_failed_log_records", nil); dropped != 0 {
		t.Errorf("agent dropped %v records", dropped)
	}
}

// 2. A gateway that requires the bearer token (PROGRESS_OTLP_BEARER_TOKEN,
// with TLS) behind an agent that presents it (PROGRESS_GATEWAY_BEARER_TOKEN,
// agent-auth.yaml): events arrive. With a wrong token the gateway refuses
// (Unauthenticated), and the agent keeps what it accepted in its queue,
// retrying and counting failed sends (ProgressSendFailures), instead of
// dropping it; an agent restarted on the same storage with the right token
// delivers all of it, once.
func TestTiersGatewayBearerToken(t *testing.T) {
	ca := testpki.NewCA(t, "gateway CA")
	certFile, keyFile, _ := ca.Issue(t, "gateway", false)
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	g := startGateway(t, b, map[string]string{
		"PROGRESS_OTLP_BEARER_TOKEN": "gw-s3cret", "PROGRESS_OTLP_TLS_CERT_FILE": certFile, "PROGRESS_OTLP_TLS_KEY_FILE": keyFile,
	})
	agentEnv := func(token, storage string) map[string]string {
		env := map[string]string{"PROGRESS_GATEWAY_BEARER_TOKEN": token, "PROGRESS_GATEWAY_TLS_INSECURE": "false",
			"PROGRESS_GATEWAY_TLS_CA_FILE": ca.File}
		if storage != "" {
			env["PROGRESS_STORAGE_DIR"] = storage
		}
		return env
	}
	wrong := newAgent(t, b, agentEnv("not-the-token", ""), g)
	wrong.start()

	d := newDriver(t, wrong.grpc, driverOpt{noRetry: true})
	ctx, span := d.tp.Tracer("driver").Start(context.Background(), "run")
	const events = 10
	for i := range events {
		if err := d.rec.Record(ctx, progress.Event{Type: "ansible/TaskStarted", Details: map[string]any{"marker": "tier-auth", "i": i},
			Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}}}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 2 {
			d.flush(t) // several requests: some wait in the queue behind the one retried
		}
	}
	span.End()
	d.flush(t) // the agent acknowledged every export

	deadline := time.Now().Add(60 * time.Second)
	for wrong.metric("otelcol_loadbalancer_backend_outcome", map[string]string{"success": "false"}) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not count failed sends to the gateway:\n%s", grepLines(wrong.metricsText(t), "loadbalancer", "send_failed"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := wrong.metric("otelcol_exporter_send_failed_log_records", nil); n != 0 {
		t.Errorf("the agent gave up %v records refused by the gateway", n)
	}
	if !strings.Contains(wrong.out.String(), "refused this collector's credentials") {
		t.Errorf("the agent's log does not say the gateway refused its credentials:\n%s", wrong.out.String())
	}
	if n := countMarker(cons.all(), "tier-auth"); n != 0 {
		t.Fatalf("%d events passed a gateway with a wrong token", n)
	}
	wrong.stop()

	// The right token, and this time a token asked of the drivers too
	// (auth.yaml on the agent; run.sh lists both extensions).
	rightEnv := agentEnv("gw-s3cret", wrong.storage) // the same queue
	rightEnv["PROGRESS_OTLP_BEARER_TOKEN"] = "drv-s3cret"
	right := newAgent(t, b, rightEnv, g)
	right.start()
	cons.waitFor(t, 90*time.Second, "every queued event", func(m []message) bool {
		return countMarker(m, "tier-auth") >= events
	})
	time.Sleep(2 * time.Second) // late duplicates
	msgs := cons.all()
	seen := sequences(t, msgs, "progress_events_tenant-a", span.SpanContext().TraceID().String())
	for s := 1; s <= events; s++ {
		if seen[s] != 1 {
			t.Errorf("sequence %d arrived %d times", s, seen[s])
		}
	}
	d2 := newDriver(t, right.grpc, driverOpt{noRetry: true, headers: map[string]string{"authorization": "Bearer drv-s3cret"}})
	if err := d2.rec.Record(context.Background(), progress.Event{Type: "ansible/PlayStarted", Details: map[string]any{"marker": "tier-auth-both"},
		Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}}}); err != nil {
		t.Fatal(err)
	}
	d2.flush(t)
	cons.waitFor(t, 60*time.Second, "an event through an agent with both tokens", func(m []message) bool {
		return countMarker(m, "tier-auth-both") == 1
	})
}

// 3. A driver pointed at an agent sends every signal the library sends,
// logs, spans and metrics, over either protocol; each is accepted (the
// metrics counted and dropped, docs/collector.md), so the driver's
// shutdown reports no error, and its events reach Kafka through the
// gateway.
func TestTiersDriverAtAgentSendsEverySignal(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	g := startGateway(t, b, nil)
	a := newAgent(t, b, nil, g)
	a.start()
	prevMP := otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetMeterProvider(prevMP) })
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		tel := setupDriver(t, a, protocol)
		counter, err := tel.MeterProvider().Meter("e2e").Int64Counter("e2e.runs")
		if err != nil {
			t.Fatal(err)
		}
		ctx, span := otel.Tracer("e2e").Start(context.Background(), "run")
		for i := range 40 {
			if err := progress.Record(ctx, progress.Event{Type: "ansible/TaskStarted", Details: map[string]any{"marker": "signals-" + protocol, "i": i},
				Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}}}); err != nil {
				t.Fatal(err)
			}
		}
		counter.Add(ctx, 1)
		span.End()
		sctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err = tel.Shutdown(sctx)
		cancel()
		if err != nil {
			t.Errorf("%s: driver shutdown: %v", protocol, err)
		}
		cons.waitFor(t, 60*time.Second, "40 events via the agent over "+protocol, func(m []message) bool {
			return countMarker(m, "signals-"+protocol) >= 40
		})
	}
	if n := a.metric("otelcol_exporter_sent_metric_points", map[string]string{"exporter": "debug/metrics"}); n < 2 {
		t.Errorf("the agent counted %v metric points, want at least 2\n%s", n, grepLines(a.metricsText(t), "metric_points"))
	}
	if n := a.metric("otelcol_receiver_accepted_spans", nil); n < 2 {
		t.Errorf("the agent accepted %v spans, want at least 2", n)
	}
}
