package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/progressotel/progressotel/progress"
)

// postSignals posts one OTLP/HTTP request of logs and one of spans, as a
// driver's exporters do, and returns the two status codes (0: no answer).
func postSignals(addr string) (logs, spans int) {
	lr, _ := proto.Marshal(&collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
		ScopeLogs: []*logspb.ScopeLogs{{Scope: &commonpb.InstrumentationScope{Name: "example.com/driver"},
			LogRecords: []*logspb.LogRecord{{Body: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "a log line"}}}}}},
	}}})
	tr, _ := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			TraceId: bytes.Repeat([]byte{7}, 16), SpanId: bytes.Repeat([]byte{8}, 8), Name: "task",
			StartTimeUnixNano: uint64(time.Now().UnixNano()), EndTimeUnixNano: uint64(time.Now().UnixNano()),
		}}}},
	}}})
	post := func(path string, body []byte) int {
		c := http.Client{Timeout: 10 * time.Second}
		resp, err := c.Post("http://"+addr+path, "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	return post("/v1/logs", lr), post("/v1/traces", tr)
}

// waitTargetsUp waits until Prometheus has scraped n targets, each up.
func (p *promServer) waitTargetsUp(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var r struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		up := 0
		if err := p.get("/api/v1/query?query=up", &r); err == nil {
			for _, s := range r.Data.Result {
				if len(s.Value) == 2 && s.Value[1] == "1" {
					up++
				}
			}
		}
		if up >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus scraped %d of %d targets up", up, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ruleHealth returns every rule the real Prometheus failed to evaluate,
// with its error.
func (p *promServer) ruleHealth(t *testing.T) []string {
	t.Helper()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/rules", &r); err != nil {
		t.Fatal(err)
	}
	var bad []string
	n := 0
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			n++
			if rule.Health == "err" {
				bad = append(bad, rule.Name+": "+rule.LastError)
			}
		}
	}
	if n == 0 {
		t.Fatal("prometheus has loaded no rules")
	}
	return bad
}

// Each alert of prometheus/rules.yaml fires in Debian's real Prometheus,
// scraping real collectors that carry log, span and metric series at once,
// from the fault it is about, and every rule evaluates throughout (with
// both signals, the old rules failed every evaluation: "vector cannot
// contain metrics with the same labelset", and three alerts could never
// fire). The rules are the shipped ones but for their "for:" durations,
// cut to 1s so that the test stays within a minute or two.
//
//   - ProgressUnroutedEvents: a driver's events for a tenant nobody knows,
//     to the gateway; ProgressTncoRejects: events from a sender without the
//     library's limits, over the message limit (cut by the tnco processor).
//   - ProgressMemoryLimiterRefusals: logs and spans to an agent over its
//     memory limit.
//   - ProgressCollectorDown: the gateway killed.
//   - ProgressSendFailures, ProgressQueueNearCapacity,
//     ProgressEnqueueFailures: logs and spans to the agent in front of the
//     killed gateway, until its queue (10 requests) is full.
func TestAlertsFireFromRealFaults(t *testing.T) {
	shipped, err := os.ReadFile(shippedRules(t))
	if err != nil {
		t.Fatal(err)
	}
	fors := regexp.MustCompile(`(?m)^(\s+for:) \S+$`)
	if len(fors.FindAll(shipped, -1)) < 4 {
		t.Fatal("rules.yaml has fewer for: durations than this test knows")
	}
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, fors.ReplaceAll(shipped, []byte("$1 1s")), 0o600); err != nil {
		t.Fatal(err)
	}

	b := startBroker(t)
	g := startGateway(t, b, nil)
	queued := newAgent(t, b, map[string]string{"PROGRESS_QUEUE_SIZE": "10"}, g)
	queued.start()
	starved := newAgent(t, b, map[string]string{"PROGRESS_MEMORY_LIMIT_MIB": "8", "PROGRESS_MEMORY_SPIKE_MIB": "2"}, g)
	starved.start()
	prom := startPrometheus(t, rules, []*collector{g}, []*collector{queued, starved})
	// A counter's first increment is only its birth: Prometheus must have
	// scraped each collector before the faults begin (its scrape manager
	// picks the targets up a few seconds after it is ready).
	prom.waitTargetsUp(t, 3)

	// Healthy traffic of every signal through both tiers first.
	if l, s := postSignals(queued.http); l != http.StatusOK || s != http.StatusOK {
		t.Fatalf("healthy agent answered %d (logs) and %d (spans)", l, s)
	}
	d := newDriver(t, g.grpc, driverOpt{})
	ctx, span := d.tp.Tracer("misbehaving").Start(context.Background(), "run")
	defer span.End()
	for i := range 2 { // a counter's rate needs two samples: some scrapes apart
		if err := d.rec.Record(ctx, progress.Event{Type: "ansible/PlayStarted",
			Envelope: progress.Envelope{Scope: map[string]string{"tenant": "nobody"}}}); err != nil {
			t.Fatal(err)
		}
		d.rawEvent(ctx, "ansible/PlayStarted", i+1, attribute.MapValue(attribute.String("log", strings.Repeat("x", 1_000_000))))
		d.flush(t)
		for range 2 {
			if l, s := postSignals(starved.http); l == http.StatusOK || s == http.StatusOK {
				t.Logf("the starved agent accepted a request (%d, %d) at %d", l, s, i)
			}
		}
		time.Sleep(3 * time.Second)
	}

	firing := func(want ...string) []string {
		seen := prom.everActive()
		var missing []string
		for _, a := range want {
			found := false
			for k := range seen {
				if strings.HasPrefix(k, a+" ") && strings.HasSuffix(k, " firing") {
					found = true
				}
			}
			if !found {
				missing = append(missing, a)
			}
		}
		return missing
	}
	var bad []string
	// waitFiring goes on with the faults until the alerts fire.
	waitFiring := func(fault func(), want ...string) {
		deadline := time.Now().Add(3 * time.Minute)
		for len(firing(want...)) > 0 && time.Now().Before(deadline) {
			fault()
			bad = append(bad, prom.ruleHealth(t)...)
			time.Sleep(300 * time.Millisecond)
		}
		if missing := firing(want...); len(missing) > 0 {
			t.Errorf("alerts that never fired: %v; seen %v", missing, prom.everActive())
		}
	}
	waitFiring(func() { postSignals(starved.http) }, "ProgressUnroutedEvents", "ProgressTncoRejects", "ProgressMemoryLimiterRefusals")

	kill(t, g)
	waitFiring(func() { postSignals(queued.http) }, // fills the queue, then is refused by it
		"ProgressCollectorDown", "ProgressSendFailures", "ProgressQueueNearCapacity", "ProgressEnqueueFailures")
	prom.waitEvals(t, 3)
	if bad = append(bad, prom.ruleHealth(t)...); len(bad) > 0 {
		t.Errorf("rules that failed to evaluate: %v", uniq(bad))
	}
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// kill ends a collector at once (SIGKILL), as an OOM kill or a lost node.
func kill(t *testing.T, c *collector) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.exited
}
