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
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
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
	tr.prom = startPrometheus(t, tr.gateways, tr.agents)
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
			sdklog.WithProcessor(sdkparts.NewBatchProcessor(sdkparts.NewMessageBodyExporter(exp),
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

func kill(t *testing.T, c *collector) {
	t.Helper()
	signal(t, c, syscall.SIGKILL)
	<-c.exited
}

// The healthy deployment: 2 agents, 3 gateways, 20 runs in 3 tenants.
// Every event arrives once, every run in order on one partition, the load
// is spread over every gateway and several partitions, and no alert fires.
func TestScaleHealthy(t *testing.T) {
	tr := startTiers(t, 3, 2)
	start := time.Now()
	stats := tr.drive(20, 150, 5*time.Millisecond)()
	f, rep := tr.settle("healthy", stats, start, 30*time.Second)
	if f.missed != 0 || f.duplicates != 0 || f.inOrder != f.runs || f.runs != 20 {
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
	// tenant, from a driver that sends no message of its own (the tnco
	// fast path rejects it, the stock processors build it).
	// Twice, some scrapes apart, in one trace (so to one gateway): a
	// counter series is born at its first increment, and rate() sees an
	// increase only from its second sample.
	d := newDriver(t, tr.agents[0].grpc, driverOpt{noMessageBody: true})
	ctx, span := d.tp.Tracer("misbehaving").Start(context.Background(), "run")
	defer span.End()
	for range 2 {
		if err := d.rec.Record(ctx, progress.Event{Type: "ansible/PlayStarted",
			Envelope: progress.Envelope{Scope: map[string]string{"tenant": "nobody"}}}); err != nil {
			t.Fatal(err)
		}
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
	if f.missed != 0 {
		t.Errorf("%s\n%s", f, rep)
	}
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
	if f.missed != 0 {
		t.Errorf("%s\n%s", f, rep)
	}
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
			queued = tr.agents[0].metric("otelcol_exporter_queue_size", map[string]string{"exporter": "loadbalancing"})
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
	if f.missed != 0 {
		t.Errorf("%s\n%s", f, rep)
	}
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
	if f.missed != 0 || f.inOrder != f.runs {
		t.Errorf("%s\n%s", f, rep)
	}
	wantAlert(t, alerts, "ProgressSendFailures")
}

// One gateway frozen (SIGSTOP) for 10 s, a tc-free slow gateway: the
// agents' sends to it time out and are retried once it runs again.
func TestScaleGatewayStopped(t *testing.T) {
	tr := startTiers(t, 3, 2)
	f, rep, alerts := faultRun(t, tr, "gateway SIGSTOP 10 s", 300, func() {
		signal(t, tr.gateways[0], syscall.SIGSTOP)
		time.Sleep(10 * time.Second)
		signal(t, tr.gateways[0], syscall.SIGCONT)
	})
	if f.missed != 0 {
		t.Errorf("%s\n%s", f, rep)
	}
	wantAlert(t, alerts, "ProgressCollectorDown")
}

// promServer is Debian's prometheus, scraping every collector each second
// and evaluating the shipped rules each second.
type promServer struct {
	addr   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	active map[string]bool // "alertname instance state", ever seen
	evals  atomic.Int64
	stop   chan struct{}
	done   chan struct{}
}

func startPrometheus(t *testing.T, gateways, agents []*collector) *promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (scripts/install-tools.sh installs it): %v", err)
	}
	rules, err := filepath.Abs(filepath.Join(configDir, "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	targets := func(cs []*collector) string {
		var s []string
		for _, c := range cs {
			s = append(s, strconv.Quote("127.0.0.1:"+c.metrics))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: progress-gateway
    static_configs: [{targets: %s}]
  - job_name: progress-agent
    static_configs: [{targets: %s}]
`, rules, targets(gateways), targets(agents))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &promServer{addr: "127.0.0.1:" + strconv.Itoa(freePort(t)), active: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	var out strings.Builder
	p.cmd = exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+p.addr, "--storage.tsdb.retention.time=1h")
	p.cmd.Stdout, p.cmd.Stderr = &syncWriter{b: &out}, &syncWriter{b: &out}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		close(p.stop)
		<-p.done
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + p.addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	go p.poll()
	return p
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// poll records every alert that is pending or firing, every 500 ms.
func (p *promServer) poll() {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			return
		case <-time.After(500 * time.Millisecond):
		}
		var r struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string `json:"labels"`
					State  string            `json:"state"`
				} `json:"alerts"`
			} `json:"data"`
		}
		if err := p.get("/api/v1/alerts", &r); err != nil {
			continue
		}
		p.evals.Add(1)
		p.mu.Lock()
		for _, a := range r.Data.Alerts {
			p.active[a.Labels["alertname"]+" "+a.Labels["job"]+"/"+a.Labels["instance"]+" "+a.State] = true
		}
		p.mu.Unlock()
	}
}

func (p *promServer) get(path string, v any) error {
	resp, err := http.Get("http://" + p.addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func (p *promServer) everActive() map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]bool{}
	for k := range p.active {
		out[k] = true
	}
	return out
}

// waitEvals waits for n more polls of the alerts, so that the last
// scrapes have been evaluated.
func (p *promServer) waitEvals(t *testing.T, n int64) {
	t.Helper()
	want := p.evals.Load() + n
	deadline := time.Now().Add(30 * time.Second)
	for p.evals.Load() < want && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
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
