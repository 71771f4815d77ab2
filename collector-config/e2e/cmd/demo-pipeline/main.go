// Command demo-pipeline runs the whole progress pipeline on this machine and
// shows what TNCO would receive:
//
//	ansible demo driver --OTLP/gRPC--> otelcol-progress (shipped config)
//	    --> Kafka-protocol broker (kfake, in process) --> printed here
//
// It starts the broker and a consumer, the collector through
// collector-config/run.sh with per-tenant routing for tenant-a and
// tenant-b, then runs `go run ./examples/ansible-driver` with
// OTEL_LOGS_EXPORTER=otlp. When the driver is done and the messages have
// stopped arriving, it stops everything and prints a summary. Every
// listener is on 127.0.0.1; Ctrl-C stops it cleanly at any time.
//
// Run it with `make demo-pipeline` (which builds bin/otelcol-progress).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/progressotel/progressotel/tncomessage"
)

func main() {
	root := flag.String("root", ".", "repository root (holds bin/, collector-config/ and examples/)")
	tenants := flag.String("tenants", "tenant-a tenant-b", "tenants with their own TNCO topic")
	driverArgs := flag.String("driver-args", "", "extra arguments for the ansible demo driver")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *root, *tenants, strings.Fields(*driverArgs)); err != nil {
		fmt.Fprintln(os.Stderr, "demo-pipeline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root, tenants string, driverArgs []string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	bin := filepath.Join(root, "bin", "otelcol-progress")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: run `make collector` first", bin)
	}
	work, err := os.MkdirTemp("", "demo-pipeline-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// 1. The Kafka-protocol broker, standing in for TNCO's Kafka.
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		return fmt.Errorf("kafka broker: %w", err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()[0]
	say("kafka broker (kfake) on %s", brokers)

	// 2. The consumer that prints what TNCO would receive.
	p := &printer{out: os.Stdout, counts: map[string]int{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeRegex(), kgo.ConsumeTopics("^progress.*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.MetadataMaxAge(300*time.Millisecond))
	if err != nil {
		return err
	}
	cctx, cancelConsumer := context.WithCancel(context.Background())
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for cctx.Err() == nil {
			cl.PollFetches(cctx).EachRecord(p.print)
		}
	}()
	defer func() { cancelConsumer(); <-consumerDone; cl.Close() }()

	// 3. The collector with the shipped configuration.
	grpcPort, err1 := freePort()
	httpPort, err2 := freePort()
	metricsPort, err3 := freePort()
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	logPath := filepath.Join(os.TempDir(), "demo-pipeline-collector.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	col := exec.Command(filepath.Join(root, "collector-config", "run.sh"))
	col.Env = append(os.Environ(),
		"PROGRESS_OTELCOL_BIN="+bin,
		"PROGRESS_OTLP_GRPC_ENDPOINT=127.0.0.1:"+strconv.Itoa(grpcPort),
		"PROGRESS_OTLP_HTTP_ENDPOINT=127.0.0.1:"+strconv.Itoa(httpPort),
		"PROGRESS_METRICS_PORT="+strconv.Itoa(metricsPort),
		"PROGRESS_STORAGE_DIR="+filepath.Join(work, "queue"),
		"PROGRESS_TENANTS="+tenants,
		"TNCO_KAFKA_BROKERS="+brokers,
	)
	col.Stdout, col.Stderr = logFile, logFile
	if err := col.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = col.Wait(); close(exited) }()
	stopCollector := sync.OnceValue(func() error {
		select {
		case <-exited:
			return nil
		default:
		}
		_ = col.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return waitErr
		case <-time.After(30 * time.Second):
			_ = col.Process.Kill()
			<-exited
			return errors.New("collector did not stop within 30s of SIGTERM; killed")
		}
	})
	defer func() { _ = stopCollector() }()
	for deadline := time.Now().Add(60 * time.Second); ; {
		if b, _ := os.ReadFile(logPath); bytes.Contains(b, []byte("Everything is ready")) {
			break
		}
		select {
		case <-exited:
			return fmt.Errorf("collector exited (%v); its log: %s", waitErr, logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("collector not ready after 60s; its log: %s", logPath)
		}
	}
	say("collector otelcol-progress: OTLP/HTTP 127.0.0.1:%d, OTLP gRPC 127.0.0.1:%d, tenants %q, log %s", httpPort, grpcPort, tenants, logPath)

	// 4. The ansible demo driver, exporting OTLP to the collector.
	say("running the ansible demo driver (go run ./examples/ansible-driver)")
	drv := exec.CommandContext(ctx, "go", append([]string{"run", "./examples/ansible-driver"}, driverArgs...)...)
	drv.Dir = root
	drv.Env = append(os.Environ(),
		"OTEL_LOGS_EXPORTER=otlp",
		// The OTLP/HTTP port with the default protocol (http/protobuf).
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:"+strconv.Itoa(httpPort),
		"OTEL_EXPORTER_OTLP_PROTOCOL=",
		// Spans go to the collector too: it counts and drops them, or
		// forwards them when PROGRESS_TRACES_ENDPOINT names a tracing
		// backend (docs/collector.md, "Spans").
		"OTEL_TRACES_EXPORTER=",
	)
	drv.Stdout, drv.Stderr = prefixed("driver | "), prefixed("driver | ")
	driverErr := drv.Run()
	if driverErr != nil {
		say("driver: %v", driverErr)
	}

	// 5. Let the last batch through, then stop everything.
	p.waitQuiet(ctx, 2*time.Second, 30*time.Second)
	colErr := stopCollector()
	say("stopped the collector, the consumer and the broker")
	p.summary()
	return errors.Join(driverErr, colErr)
}

func say(format string, args ...any) {
	fmt.Printf("demo-pipeline: "+format+"\n", args...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// printer prints each Kafka message as TNCO would read it: topic and
// headers, then the JSON value, indented.
type printer struct {
	mu     sync.Mutex
	out    io.Writer
	counts map[string]int
	last   time.Time
}

func (p *printer) print(r *kgo.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[r.Topic]++
	p.last = time.Now()
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, h.Key+"="+string(h.Value))
	}
	var head string
	var v map[string]any
	if json.Unmarshal(r.Value, &v) == nil {
		head = fmt.Sprintf("%v  %v", v[tncomessage.MemberEventType], v[tncomessage.MemberProgressEventType])
	}
	fmt.Fprintf(p.out, "\n── TNCO ◀ topic %s  headers [%s]  %s\n", r.Topic, strings.Join(hs, " "), head)
	var buf bytes.Buffer
	if json.Indent(&buf, r.Value, "   ", "  ") != nil {
		buf.Reset()
		fmt.Fprintf(&buf, "%q", r.Value)
	}
	fmt.Fprintf(p.out, "   %s\n", buf.String())
}

// waitQuiet returns once no message arrived for quiet, or after max.
func (p *printer) waitQuiet(ctx context.Context, quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		p.mu.Lock()
		last := p.last
		p.mu.Unlock()
		if !last.IsZero() && time.Since(last) > quiet {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *printer) summary() {
	p.mu.Lock()
	defer p.mu.Unlock()
	topics := slices.Sorted(maps.Keys(p.counts))
	fmt.Fprintln(p.out, "\ndemo-pipeline: what TNCO received:")
	if len(topics) == 0 {
		fmt.Fprintln(p.out, "  nothing")
	}
	for _, t := range topics {
		fmt.Fprintf(p.out, "  %-32s %d messages\n", t, p.counts[t])
	}
}

type prefixWriter struct {
	mu     sync.Mutex
	prefix string
	buf    []byte
}

func prefixed(p string) io.Writer { return &prefixWriter{prefix: p} }

func (w *prefixWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		fmt.Printf("%s%s\n", w.prefix, w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}
