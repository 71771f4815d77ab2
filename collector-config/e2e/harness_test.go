package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// Paths of the shipped files, relative to this directory.
var (
	configDir    = ".."
	repoRoot     = filepath.Join("..", "..")
	collectorBin string
)

// TestMain finds bin/otelcol-progress (or $PROGRESS_OTELCOL_BIN) and builds
// it when it is missing: the suite always runs the real distribution.
func TestMain(m *testing.M) {
	bin := os.Getenv("PROGRESS_OTELCOL_BIN")
	if bin == "" {
		bin = filepath.Join(repoRoot, "bin", "otelcol-progress")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	collectorBin = abs
	if _, err := os.Stat(collectorBin); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %s missing, building it (a few minutes on a cold cache)\n", collectorBin)
		cmd := exec.Command("go", "build", "-o", collectorBin, ".")
		cmd.Dir = filepath.Join(configDir, "otelcol")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: building the collector failed:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// freePort returns a port on 127.0.0.1 that was free a moment ago, for a
// collector or broker the test starts. It is taken below the kernel's
// ephemeral range (32768-60999 here), so that no outgoing connection of
// this or another process (a driver's OTLP client, a consumer) can take it
// between this check and the listener's start, as a port from :0 could;
// and it is never handed out twice in one test binary.
func freePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := portsLow + rand.IntN(portsHigh-portsLow)
		if portsGiven[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = l.Close()
		portsGiven[p] = true
		return p
	}
	t.Fatal("freePort: no free port below the ephemeral range")
	return 0
}

// The ports freePort hands out: above the well-known and common service
// ports, below the ephemeral range.
const portsLow, portsHigh = 20000, 32700

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// broker is an in-process Kafka-protocol broker (kfake) on a fixed port, so
// that it can be stopped and started again at the same address. Its data
// directory survives a restart.
type broker struct {
	port int
	dir  string
	opts []kfake.Opt // extra options (TLS, SASL, partitions), kept for a restart
	c    *kfake.Cluster
}

// startBroker starts a one-broker cluster that creates topics on demand
// with one partition; opts add to or override that (kfake.TLS,
// kfake.EnableSASL, kfake.DefaultNumPartitions, kfake.BrokerConfigs).
func startBroker(t testing.TB, opts ...kfake.Opt) *broker {
	t.Helper()
	b := &broker{port: freePort(t), dir: t.TempDir(), opts: opts}
	b.start(t)
	t.Cleanup(b.stop)
	return b
}

func (b *broker) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

func (b *broker) start(t testing.TB) {
	t.Helper()
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly after a stop
		opts := append([]kfake.Opt{kfake.NumBrokers(1), kfake.Ports(b.port), kfake.ClusterID("progress-e2e"),
			kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1), kfake.DataDir(b.dir)}, b.opts...)
		b.c, err = kfake.NewCluster(opts...)
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("kfake on %s: %v", b.addr(), err)
}

func (b *broker) stop() {
	if b.c != nil {
		b.c.Close()
		b.c = nil
	}
}

// message is one Kafka record as TNCO would read it.
type message struct {
	Topic     string
	Partition int32
	Key       []byte
	Headers   map[string]string
	Value     []byte
}

func (m message) body(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(m.Value, &v); err != nil {
		t.Fatalf("message on %s is not a JSON object: %v: %s", m.Topic, err, m.Value)
	}
	return v
}

// consumer reads every topic of the broker from the start, also topics
// created after it started, and keeps every message in the order it was
// fetched (which is the order of each partition).
type consumer struct {
	cl     *kgo.Client
	mu     sync.Mutex
	msgs   []message
	cancel context.CancelFunc
	done   chan struct{}
}

// startConsumer reads the broker at addr; opts add TLS or SASL.
func startConsumer(t testing.TB, addr string, opts ...kgo.Opt) *consumer {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeRegex(), kgo.ConsumeTopics("^progress.*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.MetadataMaxAge(300 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &consumer{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				m := message{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Headers: map[string]string{}, Value: r.Value}
				for _, h := range r.Headers {
					m.Headers[h.Key] = string(h.Value)
				}
				c.mu.Lock()
				c.msgs = append(c.msgs, m)
				c.mu.Unlock()
			})
		}
	}()
	t.Cleanup(c.stop)
	return c
}

func (c *consumer) stop() {
	c.cancel()
	<-c.done
	c.cl.Close()
}

func (c *consumer) all() []message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]message(nil), c.msgs...)
}

// waitFor polls until cond holds for the messages seen, or fails after
// timeout, which is generous: it only detects a hang.
func (c *consumer) waitFor(t testing.TB, timeout time.Duration, what string, cond func([]message) bool) []message {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msgs := c.all()
		if cond(msgs) {
			return msgs
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; have %d messages: %s", what, len(msgs), summary(msgs))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func summary(msgs []message) string {
	var b strings.Builder
	for i, m := range msgs {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... %d more", len(msgs)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s %v %s", m.Topic, m.Headers, m.Value)
	}
	return b.String()
}

// countMarker counts the messages whose details carry marker.
func countMarker(msgs []message, marker string) int {
	n := 0
	for _, m := range msgs {
		if bytes.Contains(m.Value, []byte(marker)) {
			n++
		}
	}
	return n
}

// collector runs the built distribution through run.sh with the shipped
// configuration, configured by environment variables only.
type collector struct {
	t       testing.TB
	env     []string
	tmpDir  string // $TMPDIR of run.sh and the collector: must stay empty
	grpc    string
	http    string
	metrics string
	storage string
	args    []string // extra run.sh arguments, e.g. --config overlay.yaml
	cmd     *exec.Cmd
	out     *testutil.SyncBuffer
	exited  chan struct{}
	exitErr error
}

// newCollector prepares a collector whose Kafka is brokerAddr and whose
// tenants overlay (when tenants is not empty) is made by gen-tenants.sh.
func newCollector(t testing.TB, brokerAddr string, tenants []string, env map[string]string) *collector {
	t.Helper()
	c := &collector{
		t:       t,
		grpc:    "127.0.0.1:" + strconv.Itoa(freePort(t)),
		http:    "127.0.0.1:" + strconv.Itoa(freePort(t)),
		metrics: strconv.Itoa(freePort(t)),
		storage: t.TempDir(),
		tmpDir:  t.TempDir(),
	}
	vars := map[string]string{
		"TMPDIR":                      c.tmpDir,
		"PROGRESS_OTELCOL_BIN":        collectorBin,
		"PROGRESS_OTLP_GRPC_ENDPOINT": c.grpc,
		"PROGRESS_OTLP_HTTP_ENDPOINT": c.http,
		"PROGRESS_METRICS_PORT":       c.metrics,
		"PROGRESS_HEALTH_ENDPOINT":    "127.0.0.1:" + strconv.Itoa(freePort(t)),
		"PROGRESS_STORAGE_DIR":        c.storage,
		"TNCO_KAFKA_BROKERS":          brokerAddr,
		"PROGRESS_RETRY_MAX_INTERVAL": "1s",
	}
	if os.Getenv("E2E_DEBUG") != "" { // print every record the TNCO pipeline sees
		vars["PROGRESS_DEBUG_VERBOSITY"] = "detailed"
	}
	if len(tenants) > 0 {
		vars["PROGRESS_TENANTS"] = strings.Join(tenants, " ")
	}
	for k, v := range env {
		vars[k] = v
	}
	c.storage = vars["PROGRESS_STORAGE_DIR"] // a test may pass another collector's
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PROGRESS_") && !strings.HasPrefix(kv, "TNCO_") && !strings.HasPrefix(kv, "TMPDIR=") {
			c.env = append(c.env, kv)
		}
	}
	for k, v := range vars {
		c.env = append(c.env, k+"="+v)
	}
	return c
}

// start runs the collector and waits until it is ready.
func (c *collector) start() {
	t := c.t
	t.Helper()
	c.out = &testutil.SyncBuffer{}
	c.cmd = exec.Command(filepath.Join(configDir, "run.sh"), c.args...)
	c.cmd.Env = c.env
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.exited = make(chan struct{})
	go func() { c.exitErr = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		c.stop()
		// run.sh replaces itself with the collector, so a temporary file
		// it made would stay behind on every start.
		if left, _ := os.ReadDir(c.tmpDir); len(left) > 0 {
			t.Errorf("run.sh or the collector left %d files in $TMPDIR, e.g. %s", len(left), left[0].Name())
		}
		if t.Failed() {
			t.Logf("collector output:\n%s", c.out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(c.out.String(), "Everything is ready") {
		select {
		case <-c.exited:
			t.Fatalf("collector exited (%v):\n%s", c.exitErr, c.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not ready:\n%s", c.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM, the graceful shutdown of a restart, and waits.
func (c *collector) stop() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
		c.t.Errorf("collector did not stop within 30s of SIGTERM")
	}
}

// metric returns the sum of the collector's own Prometheus samples whose
// name is name and whose labels contain every pair of labels.
func (c *collector) metric(name string, labels map[string]string) float64 {
	resp, err := http.Get("http://127.0.0.1:" + c.metrics + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var sum float64
	line := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([^ ]+)`)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil || m[1] != name {
			continue
		}
		ok := true
		for k, v := range labels {
			if !strings.Contains(m[2], k+`="`+v+`"`) {
				ok = false
			}
		}
		if ok {
			f, _ := strconv.ParseFloat(m[3], 64)
			sum += f
		}
	}
	return sum
}

func (c *collector) metricsText(t testing.TB) string {
	resp, err := http.Get("http://127.0.0.1:" + c.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// driver is a driver built on this library: an SDK LoggerProvider with the
// OTLP gRPC exporter, the tracectx processor of otelbridge, a tracer
// provider for real spans, and a progress.Recorder.
type driver struct {
	lp  *sdklog.LoggerProvider
	tp  *sdktrace.TracerProvider
	rec *progress.Recorder
}

type driverOpt struct {
	headers     map[string]string
	tls         *tls.Config
	libRedacted bool
	noRetry     bool // a refused export fails at once instead of after 30 s of retries
	// noAttrLimit: no limit on a record's attribute count (the SDK's
	// default is 128), as a sender that is not built on the SDK has none:
	// rawEvent's details of thousands of keys reach the collector whole.
	noAttrLimit bool
	// flushOnly: records are exported by flush alone (no export timer),
	// so the records emitted before a flush travel in one OTLP request.
	flushOnly bool
	// capture, when set, receives every record as the exporter does
	// (after the tracectx processor), so a test can compare what the
	// driver sent with what reached Kafka.
	capture sdklog.Exporter
}

func newDriver(t testing.TB, endpoint string, o driverOpt) *driver {
	t.Helper()
	ctx := context.Background()
	opts := []otlploggrpc.Option{otlploggrpc.WithEndpoint(endpoint),
		otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: !o.noRetry, InitialInterval: 100 * time.Millisecond,
			MaxInterval: time.Second, MaxElapsedTime: 30 * time.Second})}
	if o.tls != nil {
		opts = append(opts, otlploggrpc.WithTLSCredentials(credentials.NewTLS(o.tls)))
	} else {
		opts = append(opts, otlploggrpc.WithInsecure())
	}
	if o.headers != nil {
		opts = append(opts, otlploggrpc.WithHeaders(o.headers))
	}
	exp, err := otlploggrpc.New(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// The library's redaction is off in most tests, so that what reaches
	// Kafka proves the collector's own redaction.
	var red *progress.Redactor
	recOpts := []progress.Option{progress.WithoutRedaction()}
	if o.libRedacted {
		red = progress.DefaultRedactor()
		recOpts = nil
	}
	// A standard OTLP exporter, as otelbridge.Setup's: no body.
	var out sdklog.Exporter = exp
	interval := 50 * time.Millisecond
	if o.flushOnly {
		interval = time.Hour
	}
	procs := []sdklog.LoggerProviderOption{
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(red)),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(out, sdklog.WithExportInterval(interval))),
	}
	if o.capture != nil {
		procs = append(procs, sdklog.WithProcessor(sdklog.NewSimpleProcessor(o.capture)))
	}
	if o.noAttrLimit {
		procs = append(procs, sdklog.WithAttributeCountLimit(-1))
	}
	lp := sdklog.NewLoggerProvider(procs...)
	d := &driver{lp: lp, tp: sdktrace.NewTracerProvider()}
	recOpts = append(recOpts, progress.WithLoggerProvider(lp))
	d.rec = progress.NewRecorder(recOpts...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.lp.Shutdown(ctx)
		_ = d.tp.Shutdown(ctx)
	})
	return d
}

func (d *driver) flush(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.lp.ForceFlush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// ordinary emits a log record that is not a progress event, through the
// same provider, as a driver's own logging does.
func (d *driver) ordinary(ctx context.Context, msg string) {
	var r log.Record
	r.SetSeverity(log.SeverityInfo)
	r.SetBody(attribute.StringValue(msg))
	r.AddAttributes(attribute.String("progress.event_type", "ResourceTransitionProgressEvent")) // a lookalike
	d.lp.Logger("example.com/driver/logging").Emit(ctx, r)
}
