//go:build scale

package e2e

// The two-tier deployment (docs/collector.md, "Scaling out") with real
// processes: agents (agent.yaml) load-balancing by trace id to gateways
// (progress.yaml with gateway.yaml), a kfake broker with several
// partitions per tenant topic, concurrent driver runs on this library,
// Debian's prometheus scraping every collector with the shipped rules, and
// e2e/ordercheck reading what TNCO would read. `make test-scale` runs it
// (build tag scale); each test prints one FIGURES line that
// docs/collector.md quotes.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/collector-config/e2e/ordercheck"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

var scaleTenants = []string{"tenant-a", "tenant-b", "tenant-c"}

const scalePartitions = 4

// tiers is one deployment: broker, gateways, agents, prometheus.
type tiers struct {
	t        *testing.T
	b        *broker
	cons     *consumer
	gateways []*collector
	agents   []*collector
	prom     *promServer
}

func startTiers(t *testing.T, nGateways, nAgents int, agentEnv ...string) *tiers {
	t.Helper()
	tr := &tiers{t: t, b: startBroker(t, kfake.DefaultNumPartitions(scalePartitions))}
	tr.cons = startConsumer(t, tr.b.addr())
	var gws []string
	for range nGateways {
		g := newCollector(t, tr.b.addr(), scaleTenants, map[string]string{"PROGRESS_TIER": "gateway"})
		g.start()
		tr.gateways = append(tr.gateways, g)
		gws = append(gws, g.grpc)
	}
	for range nAgents {
		env := map[string]string{"PROGRESS_TIER": "agent", "PROGRESS_GATEWAYS": "[" + strings.Join(gws, ", ") + "]"}
		for i := 0; i+1 < len(agentEnv); i += 2 {
			env[agentEnv[i]] = agentEnv[i+1]
		}
		a := newCollector(t, tr.b.addr(), nil, env)
		a.start()
		tr.agents = append(tr.agents, a)
	}
	tr.prom = startPrometheus(t, shippedRules(t), tr.gateways, tr.agents)
	return tr
}

// runStat is one driver run: its trace and how many events it recorded.
type runStat struct {
	tenant, trace string
	recorded      int
}

// drive starts n concurrent runs, each a driver of its own (SDK logger
// provider, OTLP gRPC exporter to one agent, progress.Recorder) and its
// own trace, recording perRun events pace apart; wait returns once every
// run has recorded and its provider has shut down (everything exported,
// or given up after the exporter's retries).
func (tr *tiers) drive(n, perRun int, pace time.Duration) (wait func() []runStat) {
	t := tr.t
	tp := sdktrace.NewTracerProvider()
	stats := make([]runStat, n)
	var wg sync.WaitGroup
	var shutdownErrs atomic.Int64
	for r := range n {
		agent := tr.agents[r%len(tr.agents)]
		// The exporter retries for up to a minute; what it gives up on,
		// the library's batch processor counts and reports in the stream
		// (common/EventsDropped, per trace), as otelbridge.Setup does.
		exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(agent.grpc), otlploggrpc.WithInsecure(),
			otlploggrpc.WithTimeout(time.Minute),
			otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond,
				MaxInterval: time.Second, MaxElapsedTime: time.Minute}))
		if err != nil {
			t.Fatal(err)
		}
		lp := sdklog.NewLoggerProvider(
			sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(nil)),
			sdklog.WithProcessor(sdkparts.NewBatchProcessor(exp,
				sdkparts.WithExportInterval(50*time.Millisecond), sdkparts.WithMaxQueueSize(perRun+64),
				sdkparts.WithExportTimeout(time.Minute))))
		rec := progress.NewRecorder(progress.WithoutRedaction(), progress.WithLoggerProvider(lp))
		tenant := scaleTenants[r%len(scaleTenants)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, span := tp.Tracer("driver").Start(context.Background(), fmt.Sprintf("run-%d", r))
			stats[r] = runStat{tenant: tenant, trace: span.SpanContext().TraceID().String()}
			for i := range perRun {
				if err := rec.Record(ctx, progress.Event{
					Type: "ansible/TaskStarted", Details: map[string]any{"run": r, "i": i},
					Envelope: progress.Envelope{Scope: map[string]string{"tenant": tenant}},
				}); err != nil {
					t.Errorf("run %d: %v", r, err)
					continue
				}
				stats[r].recorded++
				time.Sleep(pace)
			}
			span.End()
			sctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			if err := lp.Shutdown(sctx); err != nil {
				shutdownErrs.Add(1)
				t.Logf("run %d: driver shutdown: %v", r, err)
			}
		}()
	}
	return func() []runStat {
		wg.Wait()
		_ = tp.Shutdown(context.Background())
		return stats
	}
}

// figures is what one test measured, end to end.
type figures struct {
	name                                string
	sent, delivered, duplicates, missed int   // missed: recorded, never delivered
	gaps, reportedLost                  int64 // gaps: missing below a run's highest sequence
	runs, inOrder, reordered            int
	maxDisplacement                     int64
	splitRuns                           int
	elapsed                             time.Duration
}

func (f figures) String() string {
	return fmt.Sprintf("FIGURES %s: sent %d, delivered %d (%.0f events/s end to end over %s), duplicated %d, lost %d (%d in gaps), reported lost %d; runs in order %d/%d, reordered %d (by up to %d), runs on several partitions %d",
		f.name, f.sent, f.delivered, float64(f.delivered)/f.elapsed.Seconds(), f.elapsed.Round(100*time.Millisecond),
		f.duplicates, f.missed, f.gaps, f.reportedLost, f.inOrder, f.runs, f.reordered, f.maxDisplacement, f.splitRuns)
}

// settle waits until every recorded event has reached a tenant topic, or
// nothing has arrived for quiet, and checks what arrived with ordercheck.
// It cross-checks the check: the distinct (run, i) pairs in the details
// must be the distinct sequences it counted.
func (tr *tiers) settle(name string, stats []runStat, start time.Time, quiet time.Duration) (figures, ordercheck.Report) {
	t := tr.t
	t.Helper()
	sent := 0
	for _, s := range stats {
		sent += s.recorded
	}
	topics := map[string]bool{}
	for _, tn := range scaleTenants {
		topics["progress_events_"+tn] = true
	}
	distinct := func(msgs []message) (map[string]int, int) {
		seen := map[string]int{}
		n := 0
		for _, m := range msgs {
			if !topics[m.Topic] {
				continue
			}
			var b struct {
				Details struct{ Run, I int } `json:"details"`
			}
			_ = json.Unmarshal(m.Value, &b)
			seen[fmt.Sprint(b.Details.Run, "/", b.Details.I)]++
			n++
		}
		return seen, n
	}
	last, lastChange := -1, time.Now()
	var done time.Time
	deadline := time.Now().Add(5 * time.Minute)
	for {
		seen, _ := distinct(tr.cons.all())
		if len(seen) != last {
			last, lastChange, done = len(seen), time.Now(), time.Now()
		}
		if len(seen) >= sent || time.Since(lastChange) > quiet || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second) // late duplicates
	msgs := tr.cons.all()
	seen, _ := distinct(msgs)
	var c ordercheck.Checker
	for _, m := range msgs {
		if topics[m.Topic] {
			c.Add(ordercheck.Record{Topic: m.Topic, Partition: m.Partition, Value: m.Value})
		}
	}
	rep := c.Report()
	tot := rep.Totals()
	f := figures{name: name, sent: sent, delivered: len(seen), duplicates: tot.Duplicates, missed: sent - len(seen),
		gaps: tot.Missing, reportedLost: tot.ReportedLost, runs: tot.Runs, inOrder: tot.InOrder, reordered: tot.Reordered,
		maxDisplacement: tot.MaxDisplacement, splitRuns: tot.SplitRuns, elapsed: done.Sub(start)}
	if got := tot.Messages - tot.Duplicates; got != len(seen) {
		t.Errorf("ordercheck counted %d distinct sequences, the details say %d distinct events", got, len(seen))
	}
	byTrace := map[string]ordercheck.Run{}
	for _, r := range rep.Runs {
		byTrace[r.TraceID] = r
	}
	for _, s := range stats {
		r := byTrace[s.trace]
		if r.Topic != "progress_events_"+s.tenant {
			t.Errorf("run %s of %s: on topic %q", s.trace, s.tenant, r.Topic)
		}
		// What a gap cannot show, the tail: the check's highest sequence
		// against what the run recorded.
		if int(r.Highest) < s.recorded && f.missed == 0 {
			t.Errorf("run %s: highest sequence %d of %d recorded, but nothing is missing", s.trace, r.Highest, s.recorded)
		}
	}
	t.Log(f)
	// Nothing lost silently: every event that did not arrive was reported.
	if int64(f.missed) > f.reportedLost {
		t.Errorf("%s: %d events lost, %d of them reported", name, f.missed, f.reportedLost)
	}
	if !strings.HasSuffix(rep.String(), "0 invalid") || rep.Invalid != 0 {
		t.Errorf("invalid messages: %s", rep)
	}
	if tot.InOrder < tot.Runs {
		t.Logf("ordercheck:\n%s", rep)
	}
	return f, rep
}

// signal sends sig to a collector (run.sh has exec'ed it).
func signal(t *testing.T, c *collector, sig syscall.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// bound is what docs/collector.md's fault table promises for one fault: its
// "Asserted bound" cell, e.g. "lost 0, duplicated ≤ 0, not in order ≤ 2,
// reordered by ≤ 300"; a figure the cell does not name is not bounded.
type bound struct{ lost, duplicated, notInOrder, displacement int64 }

// documentedBound reads the row of the fault table that names test, so
// that the table and the behaviour cannot part: a change in either fails
// the test.
func documentedBound(t *testing.T, test string) bound {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "collector.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") || !strings.Contains(line, "`"+test+"`") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		cell := strings.TrimSpace(cells[len(cells)-1])
		b := bound{-1, -1, -1, -1}
		for _, f := range []struct {
			re  string
			dst *int64
		}{{`lost (\d+)`, &b.lost}, {`duplicated ≤ (\d+)`, &b.duplicated}, {`not in order ≤ (\d+)`, &b.notInOrder}, {`reordered by ≤ (\d+)`, &b.displacement}} {
			if m := regexp.MustCompile(f.re).FindStringSubmatch(cell); m != nil {
				*f.dst, _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
		if b.lost < 0 {
			t.Fatalf("docs/collector.md: the bound of %s (%q) names no loss", test, cell)
		}
		return b
	}
	t.Fatalf("docs/collector.md's fault table has no row for %s", test)
	return bound{}
}

// check fails the test where the figures exceed the documented bound.
func (b bound) check(t *testing.T, f figures, rep ordercheck.Report) {
	t.Helper()
	for _, c := range []struct {
		what      string
		got, want int64
	}{{"lost", int64(f.missed), b.lost}, {"duplicated", int64(f.duplicates), b.duplicated},
		{"runs not in order", int64(f.runs - f.inOrder), b.notInOrder}, {"reordered by", f.maxDisplacement, b.displacement}} {
		if c.want >= 0 && c.got > c.want {
			t.Errorf("%s %d, above the documented bound %d (docs/collector.md, \"What each fault costs\"): %s\n%s", c.what, c.got, c.want, f, rep)
		}
	}
}

// The healthy deployment: 2 agents, 3 gateways, 20 runs in 3 tenants.
// Every event arrives once, every run in order on one partition, the load
// is spread over every gateway and several partitions, and no alert fires.
func TestScaleHealthy(t *testing.T) {
	tr := startTiers(t, 3, 2)
	start := time.Now()
	stats := tr.drive(20, 150, 5*time.Millisecond)()
	f, rep := tr.settle("healthy", stats, start, 30*time.Second)
	documentedBound(t, "TestScaleHealthy").check(t, f, rep)
	if f.runs != 20 {
		t.Errorf("healthy run: %s\n%s", f, rep)
	}
	parts := map[int32]bool{}
	for _, r := range rep.Runs {
		for _, p := range r.Partitions {
			parts[p] = true
		}
	}
	if len(parts) < 2 {
		t.Errorf("all runs on partitions %v", parts)
	}
	for i, g := range tr.gateways {
		if n := g.metric("otelcol_receiver_accepted_log_records", nil); n == 0 {
			t.Errorf("gateway %d received nothing: the agents do not spread the runs", i)
		}
	}
	// The shipped tool says the same, reading the broker itself.
	cmd := exec.Command("go", "run", "-mod=mod", "./cmd/ordercheck", "-brokers", tr.b.addr(), "-idle", "3s")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "20 runs, 20 in order; 3000 messages, 0 duplicates") {
		t.Errorf("cmd/ordercheck: %v\n%s", err, out)
	}
	tr.prom.checkNames(t, tr)
	tr.prom.waitEvals(t, 5)
	if seen := tr.prom.everActive(); len(seen) > 0 {
		t.Errorf("alerts active in the healthy run: %v", seen)
	}

	// Then what only a misbehaving client causes, so that those metric
	// names are checked against this build too: an event of no known
	// tenant (the collector routes it to progress_unrouted), and one over
	// the message limit from a sender without the library's limits (the
	// tnco processor cuts it).
	// Twice, some scrapes apart, in one trace (so to one gateway): a
	// counter series is born at its first increment, and rate() sees an
	// increase only from its second sample.
	d := newDriver(t, tr.agents[0].grpc, driverOpt{})
	ctx, span := d.tp.Tracer("misbehaving").Start(context.Background(), "run")
	defer span.End()
	for range 2 {
		if err := d.rec.Record(ctx, progress.Event{Type: "ansible/PlayStarted",
			Envelope: progress.Envelope{Scope: map[string]string{"tenant": "nobody"}}}); err != nil {
			t.Fatal(err)
		}
		d.rawEvent(ctx, "ansible/PlayStarted", 1, attribute.MapValue(attribute.String("log", strings.Repeat("x", 1_000_000))))
		d.flush(t)
		time.Sleep(3 * time.Second)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !(hasAlert(tr.prom.everActive(), "ProgressUnroutedEvents") && hasAlert(tr.prom.everActive(), "ProgressTncoRejects")) && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
	}
	wantAlert(t, tr.prom.everActive(), "ProgressUnroutedEvents")
	wantAlert(t, tr.prom.everActive(), "ProgressTncoRejects")
}

// faultRun drives 20 runs long enough for fault to happen in the middle,
// waits for everything to settle, and returns the figures and the alerts
// that were pending or firing meanwhile.
func faultRun(t *testing.T, tr *tiers, name string, perRun int, fault func()) (figures, ordercheck.Report, map[string]bool) {
	t.Helper()
	start := time.Now()
	wait := tr.drive(20, perRun, 20*time.Millisecond)
	time.Sleep(2 * time.Second)
	fault()
	stats := wait()
	f, rep := tr.settle(name, stats, start, 45*time.Second)
	return f, rep, tr.prom.everActive()
}

func hasAlert(seen map[string]bool, alert string) bool {
	for k := range seen {
		if strings.HasPrefix(k, alert+" ") {
			return true
		}
	}
	return false
}

func wantAlert(t *testing.T, seen map[string]bool, alert string) {
	t.Helper()
	if hasAlert(seen, alert) {
		return
	}
	t.Errorf("alert %s never went pending or firing; seen %v", alert, seen)
}

// A gateway killed mid-stream and restarted 5 s later (same storage): it
// loses nothing it acknowledged (gateway.yaml: no batch in memory), and
// what its agents could not send meanwhile waits in their persistent
// queues.
func TestScaleGatewayKilled(t *testing.T) {
	tr := startTiers(t, 3, 2)
	f, rep, alerts := faultRun(t, tr, "gateway SIGKILL, restarted after 5 s", 300, func() {
		kill(t, tr.gateways[1])
		time.Sleep(5 * time.Second)
		tr.gateways[1].start()
	})
	documentedBound(t, "TestScaleGatewayKilled").check(t, f, rep)
	wantAlert(t, alerts, "ProgressCollectorDown")
	wantAlert(t, alerts, "ProgressSendFailures")
}

// A gateway stopped with SIGTERM (a rolling restart) and started again.
func TestScaleGatewayTerminated(t *testing.T) {
	tr := startTiers(t, 3, 2)
	f, rep, alerts := faultRun(t, tr, "gateway SIGTERM, restarted after 5 s", 300, func() {
		tr.gateways[2].stop()
		time.Sleep(5 * time.Second)
		tr.gateways[2].start()
	})
	documentedBound(t, "TestScaleGatewayTerminated").check(t, f, rep)
	wantAlert(t, alerts, "ProgressCollectorDown")
}

// An agent killed while its persistent queue is full (the gateways are
// stopped, the queue holds agentQueue requests and refuses more, which the
// drivers retry), then restarted on the same storage: the queue is sent
// once the gateways are back, and the drivers' retried requests after it.
func TestScaleAgentKilledWithFullQueue(t *testing.T) {
	const agentQueue = 300
	tr := startTiers(t, 3, 2, "PROGRESS_QUEUE_SIZE", strconv.Itoa(agentQueue))
	var queued, refused float64
	f, rep, alerts := faultRun(t, tr, "agent SIGKILL with a full queue, restarted", 300, func() {
		for _, g := range tr.gateways {
			g.stop()
		}
		down := time.Now()
		deadline := down.Add(60 * time.Second)
		for (queued < agentQueue || time.Since(down) < 5*time.Second) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			queued = tr.agents[0].metric("otelcol_exporter_queue_size", map[string]string{"exporter": "load_balancing"})
		}
		refused = tr.agents[0].metric("otelcol_exporter_enqueue_failed_log_records", nil)
		kill(t, tr.agents[0])
		time.Sleep(3 * time.Second)
		tr.agents[0].start()
		for _, g := range tr.gateways {
			g.start()
		}
	})
	t.Logf("agent queue at the kill: %v of %d requests; %v records refused by the full queue (retried by the drivers)", queued, agentQueue, refused)
	if queued < agentQueue {
		t.Errorf("the agent's queue held %v of %d requests at the kill: not full, the test shows less than it says", queued, agentQueue)
	}
	documentedBound(t, "TestScaleAgentKilledWithFullQueue").check(t, f, rep)
	wantAlert(t, alerts, "ProgressCollectorDown")
	wantAlert(t, alerts, "ProgressEnqueueFailures")
	wantAlert(t, alerts, "ProgressQueueNearCapacity")
}

// Kafka down for 30 s: the gateways' persistent queues keep everything.
func TestScaleKafkaDown(t *testing.T) {
	tr := startTiers(t, 3, 2)
	f, rep, alerts := faultRun(t, tr, "Kafka down 30 s", 300, func() {
		tr.b.stop()
		time.Sleep(30 * time.Second)
		for i, g := range tr.gateways {
			t.Logf("gateway %d at the end of the outage: %v failed Kafka records, %v queued requests", i,
				g.metric("otelcol_kafka_exporter_records", map[string]string{"outcome": "failure"}),
				g.metric("otelcol_exporter_queue_size", nil))
		}
		tr.b.start(t)
	})
	documentedBound(t, "TestScaleKafkaDown").check(t, f, rep)
	wantAlert(t, alerts, "ProgressSendFailures")
}

// One gateway frozen (SIGSTOP) for 20 s, a tc-free slow gateway: the
// agents' sends to it time out after 5 s and are retried, to the same
// gateway (the run's), until it runs again. The frozen process's kernel
// still takes each attempt's bytes, and the gateway, thawed, handles every
// one of them: the request at the head of each agent's queue may be
// delivered once per attempt (at-least-once). Nothing else is duplicated
// or reordered.
func TestScaleGatewayStopped(t *testing.T) {
	tr := startTiers(t, 3, 2)
	f, rep, alerts := faultRun(t, tr, "gateway SIGSTOP 20 s", 300, func() {
		signal(t, tr.gateways[0], syscall.SIGSTOP)
		time.Sleep(20 * time.Second)
		signal(t, tr.gateways[0], syscall.SIGCONT)
	})
	documentedBound(t, "TestScaleGatewayStopped").check(t, f, rep)
	wantAlert(t, alerts, "ProgressCollectorDown")
}

// A whole-tier stop during a Kafka outage, the rolling restart that meets
// an outage: Kafka down, every gateway stopped (SIGTERM: each ends after
// the 8 s bound, its request in flight to Kafka marked for a resend),
// every agent stopped, all started again, Kafka back. Nothing is lost or
// duplicated; what reorders is each request that was in flight at a stop
// (one per Kafka exporter of a gateway, one per agent): the persistent
// queue puts it back behind the requests queued after it, so its run's
// records arrive after later ones of the same run.
func TestScaleWholeTierStopDuringKafkaOutage(t *testing.T) {
	tr := startTiers(t, 3, 2)
	f, rep, alerts := faultRun(t, tr, "Kafka down, both tiers stopped and restarted", 300, func() {
		tr.b.stop()
		time.Sleep(3 * time.Second) // requests queue up at the gateways
		var wg sync.WaitGroup
		for _, g := range tr.gateways {
			wg.Go(g.stop)
		}
		wg.Wait()
		for _, a := range tr.agents {
			wg.Go(a.stop)
		}
		wg.Wait()
		for _, g := range tr.gateways {
			g.start()
		}
		for _, a := range tr.agents {
			a.start()
		}
		time.Sleep(3 * time.Second)
		tr.b.start(t)
	})
	documentedBound(t, "TestScaleWholeTierStopDuringKafkaOutage").check(t, f, rep)
	// The mechanism, not only the figure: at most one run per request in
	// flight at a stop.
	if inFlight := len(tr.gateways)*len(scaleTenants) + len(tr.agents); f.runs-f.inOrder > inFlight {
		t.Errorf("%d runs out of order, more than the %d requests that can be in flight at the stops", f.runs-f.inOrder, inFlight)
	}
	wantAlert(t, alerts, "ProgressSendFailures")
}

// checkNames asks Prometheus for the metric names it scraped from our
// build and checks that the rules' names are among them: the series
// every healthy collector has, in the form (with or without _total) this
// build exposes. Names that appear only on a fault are checked in the
// fault tests by the alerts they raise.
func (p *promServer) checkNames(t *testing.T, tr *tiers) {
	t.Helper()
	var r struct {
		Data []string `json:"data"`
	}
	deadline := time.Now().Add(20 * time.Second)
	want := []string{"up", "otelcol_exporter_queue_size", "otelcol_exporter_queue_capacity",
		"otelcol_exporter_sent_log_records", "otelcol_kafka_exporter_records",
		"otelcol_loadbalancer_backend_outcome", "otelcol_kafka_broker_connects", "otelcol_processor_tnco_records", "otelcol_receiver_accepted_log_records"}
	for {
		if err := p.get("/api/v1/label/__name__/values", &r); err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, n := range r.Data {
			have[strings.TrimSuffix(n, "_total")] = true
		}
		var missing []string
		for _, n := range want {
			if !have[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the rules use metrics our build does not expose: %v (scraped: %v)", missing, r.Data)
			return
		}
		time.Sleep(time.Second)
	}
}

// The order settings side by side (docs/collector.md, "Order and its
// cost"): one gateway, 8 runs recording as fast as they can, the Kafka
// exporters with 1 or 10 queue consumers and required_acks -1 (idempotent)
// or 1. Events/s end to end, each variant measured in two rounds
// (interleaved, so that a burst of the machine's other load hits every
// variant alike) and the rates averaged; the machine is shared, so only
// the ratios between the variants mean anything.
func TestScaleOrderSettingsThroughput(t *testing.T) {
	const runs, perRun, rounds = 8, 2500, 2
	type variant struct {
		name      string
		consumers int
		acks      int
	}
	variants := []variant{{"shipped: 1 consumer, acks -1 (idempotent)", 1, -1}, {"10 consumers, acks -1", 10, -1},
		{"1 consumer, acks 1", 1, 1}, {"10 consumers, acks 1 (the exporter's defaults)", 10, 1}}
	rates := make([][]float64, len(variants))
	for round := range rounds {
		for i, v := range variants {
			t.Run(fmt.Sprintf("%dx%d/%d", v.consumers, v.acks, round), func(t *testing.T) {
				tr := &tiers{t: t, b: startBroker(t, kfake.DefaultNumPartitions(scalePartitions))}
				tr.cons = startConsumer(t, tr.b.addr())
				var overlay strings.Builder
				overlay.WriteString("exporters:\n")
				for _, tn := range scaleTenants {
					fmt.Fprintf(&overlay, "  kafka/tenant_%s:\n    sending_queue: {num_consumers: %d}\n    producer: {required_acks: %d}\n", tn, v.consumers, v.acks)
				}
				path := filepath.Join(t.TempDir(), "variant.yaml")
				if err := os.WriteFile(path, []byte(overlay.String()), 0o600); err != nil {
					t.Fatal(err)
				}
				g := newCollector(t, tr.b.addr(), scaleTenants, nil)
				g.args = []string{"--config", path}
				g.start()
				tr.agents = []*collector{g} // the drivers send to it directly
				start := time.Now()
				stats := tr.drive(runs, perRun, 0)()
				f, _ := tr.settle(v.name, stats, start, 30*time.Second)
				rates[i] = append(rates[i], float64(f.delivered)/f.elapsed.Seconds())
				if f.missed != 0 {
					t.Errorf("%s lost events: %s", v.name, f)
				}
				if v.consumers == 1 && v.acks == -1 && f.inOrder != f.runs {
					t.Errorf("the shipped settings reordered a run: %s", f)
				}
			})
		}
	}
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	base := mean(rates[0])
	for i, v := range variants {
		t.Logf("FIGURES order settings, %s: %.0f events/s (rounds %.0f), %.2fx the shipped settings",
			v.name, mean(rates[i]), rates[i], mean(rates[i])/base)
	}
}
