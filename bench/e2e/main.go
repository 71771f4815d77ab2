// Command e2e measures the end-to-end figure of BENCHMARKS.md: how many
// progress events per second a driver can push through OTLP gRPC into the
// real collector (bin/otelcol-progress with collector-config/progress.yaml)
// and out to Kafka with zero loss, and what each event costs the driver in
// CPU.
//
//	driver (this process: otelbridge.Setup, OTLP gRPC, progress.Record)
//	  --> otelcol-progress (collector-config/run.sh)
//	  --> Kafka protocol broker (kfake) + consumer counting messages
//	      (a child process: this binary with -role=sink)
//
// The offered rate goes up in steps. After each step the driver flushes and
// waits until the consumer has seen every event sent so far. A step is
// sustained when nothing was lost (every event reached Kafka, the driver's
// batch processor dropped none) and the pipeline drained within -lag of the
// step's end: a pipeline that only catches up long afterwards did not keep
// up. The machine may be shared, so each rate gets -tries tries and counts
// as sustained when one of them is; the table shows every try. The answer
// is the highest sustained rate below the first rate that is not.
//
// Driver CPU per event is getrusage(RUSAGE_SELF) over the step (the
// broker and consumer run in another process); collector CPU per event is
// read from /proc/<pid>/stat. Linux only.
//
// Run from the repository root with `make bench-e2e`, or:
//
//	cd bench/e2e && go run . -root ../..
//
// With -endpoint the harness sends to an OTLP gRPC endpoint that is already
// running instead of starting the collector and the broker; loss cannot be
// checked then, and the report says so.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

func main() {
	role := flag.String("role", "driver", "driver, or sink (internal: the broker and consumer process)")
	root := flag.String("root", "../..", "repository root (for collector-config/run.sh and bin/otelcol-progress)")
	endpoint := flag.String("endpoint", "", "send to this OTLP gRPC endpoint (host:port) instead of starting the collector; loss is then not checked")
	rates := flag.String("rates", "1000,2000,2500,3000,3500,4000,5000,6000,8000", "offered rates to try, events/s, in increasing order")
	step := flag.Duration("step", 30*time.Second, "duration of each rate step")
	tries := flag.Int("tries", 2, "tries per rate; a rate is sustained when one try loses nothing")
	lag := flag.Duration("lag", 3*time.Second, "a step is sustained only if it drains within this time after it ends")
	drain := flag.Duration("drain", 60*time.Second, "give up waiting for a step's events after this long")
	workers := flag.Int("workers", 1, "driver goroutines sharing the offered rate")
	keepGoing := flag.Bool("keep-going", false, "try every rate even after one is not sustained")
	cpuprofile := flag.String("cpuprofile", "", "write the driver's CPU profile to this file")
	// Internal, for -role=sink.
	kafkaPort := flag.Int("kafka-port", 0, "sink: Kafka port")
	httpPort := flag.Int("http-port", 0, "sink: port of the count endpoint")
	flag.Parse()

	var err error
	switch *role {
	case "sink":
		err = runSink(*kafkaPort, *httpPort)
	case "driver":
		var rs []int
		for _, f := range strings.Split(*rates, ",") {
			n, perr := strconv.Atoi(strings.TrimSpace(f))
			if perr != nil || n <= 0 {
				fmt.Fprintf(os.Stderr, "e2e: bad rate %q\n", f)
				os.Exit(2)
			}
			rs = append(rs, n)
		}
		if *cpuprofile != "" {
			f, ferr := os.Create(*cpuprofile)
			if ferr != nil {
				fmt.Fprintln(os.Stderr, "e2e:", ferr)
				os.Exit(1)
			}
			if ferr := pprof.StartCPUProfile(f); ferr != nil {
				fmt.Fprintln(os.Stderr, "e2e:", ferr)
				os.Exit(1)
			}
			defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
		}
		err = runDriver(driverConfig{root: *root, endpoint: *endpoint, rates: rs, step: *step, lag: *lag,
			drain: *drain, workers: *workers, tries: max(*tries, 1), keepGoing: *keepGoing})
	default:
		err = fmt.Errorf("unknown role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		pprof.StopCPUProfile() // os.Exit skips the deferred stop
		os.Exit(1)
	}
}

type driverConfig struct {
	root, endpoint string
	rates          []int
	step, lag      time.Duration
	drain          time.Duration
	workers        int
	tries          int
	keepGoing      bool
}

// pipeline is what the driver sends to: the sink and collector processes it
// started, or nothing when an endpoint was given.
type pipeline struct {
	endpoint  string
	countURL  string // "" when loss cannot be checked
	collector *exec.Cmd
	exited    chan struct{} // closed when the collector has exited
	sink      *exec.Cmd
	log       *lockedBuffer
	stopOnce  sync.Once
}

func (p *pipeline) received() (int64, error) {
	if p.countURL == "" {
		return 0, nil
	}
	resp, err := http.Get(p.countURL)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

func (p *pipeline) stop() {
	p.stopOnce.Do(func() {
		if c := p.collector; c != nil && c.Process != nil {
			_ = c.Process.Signal(syscall.SIGTERM)
			if p.exited != nil {
				select {
				case <-p.exited:
				case <-time.After(30 * time.Second):
					_ = c.Process.Kill()
					<-p.exited
				}
			}
		}
		if c := p.sink; c != nil && c.Process != nil {
			_ = c.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = c.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = c.Process.Kill()
				<-done
			}
		}
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// collectorCPU is the collector's user+system CPU time so far.
func (p *pipeline) collectorCPU() time.Duration {
	if p.collector == nil || p.collector.Process == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.collector.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz
}

// freePorts returns n distinct free ports: all are held until all are
// chosen. Another process may still take one before the collector binds
// it, so startPipeline retries.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func startPipeline(cfg driverConfig) (*pipeline, error) {
	if cfg.endpoint != "" {
		return &pipeline{endpoint: cfg.endpoint}, nil
	}
	var err error
	for range 3 {
		var p *pipeline
		if p, err = tryStartPipeline(cfg); err == nil {
			return p, nil
		}
	}
	return nil, err
}

func tryStartPipeline(cfg driverConfig) (*pipeline, error) {
	root, err := filepath.Abs(cfg.root)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "bin", "otelcol-progress")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("collector binary: %w (build it with `make collector`)", err)
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	kafka, count, grpcPort, httpPort, metrics := ports[0], ports[1], ports[2], ports[3], ports[4]
	p := &pipeline{
		endpoint: "127.0.0.1:" + strconv.Itoa(grpcPort),
		countURL: "http://127.0.0.1:" + strconv.Itoa(count) + "/count",
		log:      &lockedBuffer{},
	}

	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p.sink = exec.Command(self, "-role=sink", "-kafka-port="+strconv.Itoa(kafka), "-http-port="+strconv.Itoa(count))
	p.sink.Stdout, p.sink.Stderr = p.log, p.log
	if err := p.sink.Start(); err != nil {
		return nil, err
	}
	if err := waitFor(30*time.Second, func() bool { _, err := p.received(); return err == nil }); err != nil {
		p.stop()
		return nil, fmt.Errorf("sink not ready: %v\n%s", err, p.log)
	}

	storage, err := os.MkdirTemp("", "e2e-storage-")
	if err != nil {
		p.stop()
		return nil, err
	}
	p.collector = exec.Command(filepath.Join(root, "collector-config", "run.sh"))
	env := []string{
		"PROGRESS_OTELCOL_BIN=" + bin,
		"PROGRESS_OTLP_GRPC_ENDPOINT=" + p.endpoint,
		"PROGRESS_OTLP_HTTP_ENDPOINT=127.0.0.1:" + strconv.Itoa(httpPort),
		"PROGRESS_METRICS_PORT=" + strconv.Itoa(metrics),
		"PROGRESS_STORAGE_DIR=" + storage,
		"TNCO_KAFKA_BROKERS=127.0.0.1:" + strconv.Itoa(kafka),
		"PROGRESS_RETRY_MAX_INTERVAL=1s",
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PROGRESS_") && !strings.HasPrefix(kv, "TNCO_") {
			env = append(env, kv)
		}
	}
	p.collector.Env = env
	p.collector.Stdout, p.collector.Stderr = p.log, p.log
	if err := p.collector.Start(); err != nil {
		p.stop()
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = p.collector.Wait(); close(exited) }()
	err = waitFor(60*time.Second, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		return strings.Contains(p.log.String(), "Everything is ready")
	})
	select {
	case <-exited:
		err = fmt.Errorf("collector exited")
	default:
	}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("collector not ready: %v\n%s", err, tail(p.log.String(), 4000))
	}
	p.exited = exited
	return p, nil
}

func waitFor(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// event is a task-completed event with a nested result: the medium event
// of BenchmarkRecord, the everyday shape of a driver's progress.
func event(worker, i int) progress.Event {
	return progress.Event{
		Type: "ansible/TaskCompletedOnHost",
		Details: map[string]any{
			"taskName": "Install packages", "itemLabel": "nginx", "hostName": "web-" + strconv.Itoa(worker),
			"delegatedHostName": "bastion-01",
			"taskResult": map[string]any{
				"msg": "All items completed", "changed": true, "failed": false, "rc": 0,
				"timing": map[string]any{"startMs": int64(1764432000123), "durationMs": int64(i % 5000)},
			},
		},
		Envelope: progress.Envelope{
			Component: progress.Component{Name: "ansible-driver", Version: "3.2.1"},
			Resource:  progress.Resource{Type: "AssemblyInstance", ID: "asm-e2e-" + strconv.Itoa(worker)},
			Scope:     map[string]string{"organization": "acme"},
		},
	}
}

type stepResult struct {
	offered, sent  int
	elapsed        time.Duration
	received, lost int64
	dropped        int64
	drained        time.Duration // after the step's end; -1: not drained
	driverCPU      time.Duration
	collectorCPU   time.Duration
}

func (s stepResult) achieved() float64 { return float64(s.sent) / s.elapsed.Seconds() }

func (s stepResult) sustained(lag time.Duration, checked bool) bool {
	if !checked {
		return s.dropped == 0 && s.achieved() >= 0.95*float64(s.offered)
	}
	return s.lost == 0 && s.dropped == 0 && s.drained >= 0 && s.drained <= lag &&
		s.achieved() >= 0.95*float64(s.offered)
}

func runDriver(cfg driverConfig) error {
	p, err := startPipeline(cfg)
	if err != nil {
		return err
	}
	defer p.stop()
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	go func() { <-interrupted; p.stop(); os.Exit(130) }()

	os.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://"+p.endpoint)
	// gRPC, the protocol BENCHMARKS.md measures, named explicitly: the
	// default is http/protobuf.
	os.Setenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc")
	os.Setenv("OTEL_SERVICE_NAME", "e2e-driver")
	ctx := context.Background()
	tel, err := otelbridge.Setup(ctx, otelbridge.WithExporters(otelbridge.ExporterOTLP),
		otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator())
	if err != nil {
		return err
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	flush := func() {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_ = tel.ForceFlush(fctx)
		cancel()
	}

	checked := p.countURL != ""
	fmt.Printf("e2e: driver --OTLP gRPC--> otelcol-progress (%s) --> Kafka", p.endpoint)
	if checked {
		fmt.Print(" (kfake) --> consumer")
	} else {
		fmt.Print(" (not checked: external endpoint)")
	}
	fmt.Printf("\nmachine: %d CPUs, load average %s\n", numCPU(), loadavg())
	fmt.Println()
	fmt.Println("| offered/s | try | sent | achieved/s | received (total) | lost | driver drops | drained after | driver CPU/event | collector CPU/event |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

	var totalSent int64
	best := -1
	var bestRes stepResult
	for _, rate := range cfg.rates {
		ok := false
		// A burst of load from elsewhere on the machine can cost one try;
		// a rate is sustained when one of its tries loses nothing.
		for try := 1; try <= cfg.tries && !ok; try++ {
			res := runStep(p, cfg, rate, &totalSent, flush, tel.Stats)
			drained := "not drained"
			if res.drained >= 0 {
				drained = res.drained.Round(10 * time.Millisecond).String()
			}
			if !checked {
				drained = "n/a"
			}
			fmt.Printf("| %d | %d | %d | %.0f | %s | %s | %d | %s | %s | %s |\n", rate, try, res.sent, res.achieved(),
				ifChecked(checked, strconv.FormatInt(res.received, 10)), ifChecked(checked, strconv.FormatInt(res.lost, 10)),
				res.dropped, drained, perEvent(res.driverCPU, res.sent), ifChecked(checked, perEvent(res.collectorCPU, res.sent)))
			if res.sustained(cfg.lag, checked) {
				ok = true
				best, bestRes = rate, res
			}
		}
		if !ok && !cfg.keepGoing {
			break
		}
	}
	fmt.Println()
	if best < 0 {
		fmt.Println("no rate was sustained with zero loss")
		return nil
	}
	what := "with zero loss"
	if !checked {
		what = "offered without driver-side drops (delivery not checked)"
	}
	fmt.Printf("sustained %s: %d events/s (achieved %.0f/s); driver CPU %s/event; collector CPU %s/event\n",
		what, best, bestRes.achieved(), perEvent(bestRes.driverCPU, bestRes.sent), perEvent(bestRes.collectorCPU, bestRes.sent))
	return nil
}

// runStep offers rate events/s for cfg.step, then flushes and waits until
// the consumer has seen every event sent so far (*totalSent), or until no
// more arrive.
func runStep(p *pipeline, cfg driverConfig, rate int, totalSent *int64, flush func(), stats func() sdkparts.DropStats) stepResult {
	before := stats()
	cpu0, ccpu0 := selfCPU(), p.collectorCPU()
	start := time.Now()
	sent := drive(rate, cfg.step, cfg.workers)
	elapsed := time.Since(start)
	cpu1 := selfCPU()
	*totalSent += int64(sent)
	flush()
	res := stepResult{offered: rate, sent: sent, elapsed: elapsed, driverCPU: cpu1 - cpu0, drained: -1}
	end := start.Add(elapsed)
	if p.countURL != "" {
		deadline := time.Now().Add(cfg.drain)
		var last int64 = -1
		lastChange := time.Now()
		for {
			n, err := p.received()
			if err == nil && n >= *totalSent {
				res.drained = time.Since(end)
				res.received = n
				break
			}
			if n != last {
				last, lastChange = n, time.Now()
			}
			// Lost events never arrive: stop once nothing has moved for
			// a while and the driver has nothing queued.
			stalled := time.Since(lastChange) > 5*time.Second && stats().Queued == 0
			if time.Now().After(deadline) || stalled {
				res.received = n
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		res.lost = *totalSent - res.received
		if res.lost != 0 {
			*totalSent = res.received // later steps count from what arrived
		}
	}
	res.collectorCPU = p.collectorCPU() - ccpu0
	res.dropped = stats().Dropped - before.Dropped
	return res
}

func ifChecked(checked bool, s string) string {
	if !checked {
		return "n/a"
	}
	return s
}

func perEvent(d time.Duration, n int) string {
	if n == 0 || d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fµs", float64(d)/float64(n)/1e3)
}

// drive records at rate events/s for d, spread over workers goroutines,
// and returns how many events were recorded.
func drive(rate int, d time.Duration, workers int) int {
	var sent atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			share := float64(rate) / float64(workers)
			ctx := context.Background()
			n := 0
			for {
				el := time.Since(start)
				if el >= d {
					return
				}
				// Catch up to where the schedule says we should be, then
				// sleep a little: a paced, not a burst, load.
				due := int(share * el.Seconds())
				for n < due {
					if err := progress.Record(ctx, event(w, n)); err != nil {
						panic(err) // the event is fixed and valid
					}
					n++
					sent.Add(1)
				}
				// 5ms: few enough wake-ups that pacing costs little
				// of the CPU measured per event.
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return int(sent.Load())
}

func numCPU() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "processor") {
			n++
		}
	}
	return n
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// lockedBuffer collects the child processes' output for error messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // keep the start: the errors that matter come first
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
