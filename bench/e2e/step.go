package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

// RecordAlone names the steps without a pipeline: the driver as Setup
// builds it with an exporter that discards every batch, so that its CPU
// per event is the cost of progress.Record and nothing of the export.
const RecordAlone = "progress.Record alone"

type stepConfig struct {
	rate                            int
	d, drain                        time.Duration
	workers                         int
	driverProfile, collectorProfile string        // CPU profiles of the step; "" for none
	rssEvery                        time.Duration // when set, RSS samples into stepResult.samples
	sender, root                    string        // "python": python/progressotel sends (pysend.py), from root
}

type rssSample struct {
	at                time.Duration
	driver, collector int64
}

type stepResult struct {
	target         string
	offered, sent  int
	elapsed        time.Duration
	received, lost int64
	dropped        int64
	drained        time.Duration // after the step's end; -1: not drained
	driverCPU      time.Duration // from the first event to the end of the flush
	collectorCPU   time.Duration // from the first event until drained
	sinkCPU        time.Duration // the broker and consumer, same span
	otherCPU       time.Duration // everything else on the machine, same span
	span           time.Duration // the span of the CPU figures above
	driverRSS      int64         // the highest sample
	collectorRSS   int64
	samples        []rssSample
}

func (s stepResult) achieved() float64 { return float64(s.sent) / s.elapsed.Seconds() }

// sustained applies the harness's rules: every event reached Kafka, the
// driver's batch processor dropped none, the pipeline drained within lag
// of the step's end, and the driver kept the offered rate.
func (s stepResult) sustained(lag time.Duration) bool {
	return s.lost == 0 && s.dropped == 0 && s.drained >= 0 && s.drained <= lag &&
		s.achieved() >= 0.95*float64(s.offered)
}

func perEvent(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d) / float64(n) / 1e3
}

func us(v float64) string {
	if v == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fµs", v)
}

// discard is the exporter of the RecordAlone steps.
type discard struct{}

func (discard) Export(context.Context, []sdklog.Record) error { return nil }
func (discard) Shutdown(context.Context) error                { return nil }
func (discard) ForceFlush(context.Context) error              { return nil }

// setupDriver builds the driver's telemetry the production way: Setup with
// the OTLP gRPC exporter to p, or with a discarding exporter when p is nil.
func setupDriver(ctx context.Context, p *pipeline) (*otelbridge.Telemetry, error) {
	opts := []otelbridge.Option{otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator()}
	if p == nil {
		return otelbridge.Setup(ctx, append(opts, otelbridge.WithExporters(otelbridge.ExporterNone),
			otelbridge.WithExporter(discard{}))...)
	}
	os.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://"+p.endpoint)
	// gRPC, the protocol BENCHMARKS.md measures (the default is http/protobuf).
	os.Setenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc")
	os.Setenv("OTEL_SERVICE_NAME", "e2e-driver")
	return otelbridge.Setup(ctx, append(opts, otelbridge.WithExporters(otelbridge.ExporterOTLP))...)
}

// runStep offers cfg.rate events/s for cfg.d to p (or to the driver alone
// when p is nil), then flushes and waits until the consumer has seen every
// event of the step, or until no more arrive.
func runStep(p *pipeline, cfg stepConfig) (stepResult, error) {
	ctx := context.Background()
	res := stepResult{target: RecordAlone, offered: cfg.rate, drained: -1}
	if p != nil {
		res.target = p.name
	}
	py := cfg.sender == "python"
	if py && p == nil {
		return res, fmt.Errorf("the Python sender needs a pipeline")
	}
	var tel *otelbridge.Telemetry
	var err error
	if !py {
		if tel, err = setupDriver(ctx, p); err != nil {
			return res, err
		}
		defer func() { _ = tel.Shutdown(context.Background()) }()
	}

	var c0 int64
	var colPID, sinkPID int
	if p != nil {
		if c0, err = p.received(); err != nil {
			return res, fmt.Errorf("%s: sink: %w", p.name, err)
		}
		colPID, sinkPID = p.collector.Process.Pid, p.sink.Process.Pid
	}

	var profErr chan error
	if cfg.collectorProfile != "" && p != nil {
		profErr = make(chan error, 1)
		go func() { profErr <- p.profile(cfg.d, cfg.collectorProfile) }()
	}
	var profFile *os.File
	if cfg.driverProfile != "" {
		if profFile, err = os.Create(cfg.driverProfile); err != nil {
			return res, err
		}
		if err := pprof.StartCPUProfile(profFile); err != nil {
			_ = profFile.Close()
			return res, err
		}
	}

	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	start := time.Now()
	sample := func() {
		s := rssSample{at: time.Since(start), driver: rss(0), collector: rss(colPID)}
		res.driverRSS, res.collectorRSS = max(res.driverRSS, s.driver), max(res.collectorRSS, s.collector)
		if cfg.rssEvery > 0 {
			res.samples = append(res.samples, s)
		}
	}
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		t := time.NewTicker(cmp.Or(max(cfg.rssEvery, 0), time.Second))
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				sample()
			}
		}
	}()

	cpu0, col0, sink0, mach0 := selfCPU(), procCPU(colPID), procCPU(sinkPID), machineCPU()
	var pyCPU time.Duration
	var pyDropped int64
	if py {
		// The sender's own pacing ends the step; its shutdown flushes.
		if res.sent, pyDropped, pyCPU, err = sendPython(p, cfg); err != nil {
			return res, err
		}
		res.elapsed = cfg.d
	} else {
		res.sent = drive(cfg.rate, cfg.d, cfg.workers)
		res.elapsed = time.Since(start)
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_ = tel.ForceFlush(fctx)
		cancel()
	}
	end := start.Add(res.elapsed)
	res.driverCPU = selfCPU() - cpu0 + pyCPU
	if profFile != nil {
		pprof.StopCPUProfile()
		_ = profFile.Close()
	}

	if p != nil {
		want := c0 + int64(res.sent)
		deadline := time.Now().Add(cfg.drain)
		var last int64 = -1
		lastChange := time.Now()
		for {
			n, err := p.received()
			if err == nil && n >= want {
				res.drained = time.Since(end)
				res.received = n - c0
				break
			}
			if n != last {
				last, lastChange = n, time.Now()
			}
			// Lost events never arrive: stop once nothing has moved for
			// a while and the driver has nothing queued.
			stalled := time.Since(lastChange) > 5*time.Second && (py || tel.Stats().Queued == 0)
			if time.Now().After(deadline) || stalled {
				res.received = n - c0
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		res.lost = max(0, int64(res.sent)-res.received)
	}
	close(stopSampling)
	sampling.Wait()
	sample()
	res.span = time.Since(start)
	res.collectorCPU = procCPU(colPID) - col0
	res.sinkCPU = procCPU(sinkPID) - sink0
	// What else ran on the machine meanwhile.
	res.otherCPU = max(0, machineCPU()-mach0-res.collectorCPU-res.sinkCPU-(selfCPU()-cpu0)-pyCPU)
	if py {
		res.dropped = pyDropped
	} else {
		res.dropped = tel.Stats().Dropped
	}
	if profErr != nil {
		if err := <-profErr; err != nil {
			fmt.Fprintf(os.Stderr, "e2e: collector profile of %s: %v\n", p.name, err)
		}
	}
	return res, nil
}

// sendPython runs bench/e2e/python/pysend.py with Debian's python3: the
// Python sender at cfg.rate events/s for cfg.d, OTLP/JSON to p's HTTP
// endpoint, the driver's queue size (OTEL_BLRP_MAX_QUEUE_SIZE) as it is in
// this process's environment. It returns the events sent and dropped, and
// the sender's CPU.
func sendPython(p *pipeline, cfg stepConfig) (sent int, dropped int64, cpu time.Duration, err error) {
	root, err := filepath.Abs(cfg.root)
	if err != nil {
		return 0, 0, 0, err
	}
	cmd := exec.Command("python3", "-B", filepath.Join(root, "bench", "e2e", "python", "pysend.py"),
		strconv.Itoa(cfg.rate), strconv.FormatFloat(cfg.d.Seconds(), 'f', -1, 64), strings.Join(benchTenants, ","))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "python"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+p.httpEndpoint, "OTEL_SERVICE_NAME=e2e-python-sender")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("python sender: %v\n%s", err, stderr.String())
	}
	var r struct{ Sent, Dropped, Failed int64 }
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return 0, 0, 0, fmt.Errorf("python sender: %v: %q", err, out.String())
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return int(r.Sent), r.Dropped + r.Failed, cpu, nil
}

// drive records at rate events/s for d, spread over workers goroutines,
// and returns how many events were recorded. Each worker's events belong
// to runs (traces) of 1000 events, as a driver's operations would.
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
				// Catch up with the schedule, then sleep: a paced load.
				due := int(share * el.Seconds())
				for n < due {
					if n%1000 == 0 {
						ctx = newRun()
					}
					if err := progress.Record(ctx, event(w, n)); err != nil {
						panic(err) // the event is fixed and valid
					}
					n++
					sent.Add(1)
				}
				// Few enough wake-ups that pacing costs little CPU.
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return int(sent.Load())
}

// newRun returns a context with the span of a new run: the trace id is the
// Kafka message key, and the sequence is counted per trace.
func newRun() context.Context {
	var tid trace.TraceID
	var sid trace.SpanID
	rand.Read(tid[:])
	rand.Read(sid[:])
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled,
	}))
}

// event is a task-completed event with a nested result: the medium event
// of BenchmarkRecord, the everyday shape of a driver's progress. Events
// alternate between the two tenants of benchTenants.
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
			Scope:     map[string]string{"organization": benchTenants[i%len(benchTenants)]},
		},
	}
}
