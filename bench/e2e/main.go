// Command e2e measures the end-to-end figures of BENCHMARKS.md: what a
// progress event costs the collector and the driver, and how many events
// per second the whole path sustains with zero loss.
//
//	driver (this process: otelbridge.Setup, OTLP gRPC, progress.Record)
//	  --> bin/otelcol-progress: progress.yaml (the shipped configuration) or
//	      pass-through (otlp -> batch -> kafka, the physical limit)
//	  --> Kafka protocol broker (kfake) + consumer counting messages
//	      (a child process per pipeline: this binary with -role=sink)
//
// Three phases, each optional (-phases):
//
//   - cost: a warm-up step per pipeline (warmUp, not counted), then
//     -rounds rounds at one offered rate (-rate), each one -cost-step
//     step per target in a rotating order: the driver alone (its exporter
//     discarding every batch), pass-through and progress.yaml. It reports
//     collector and driver CPU per event, and their ratios taken within each
//     round (medians over the rounds).
//   - ramp: the offered rate goes up (-rates), -step per rate, for each
//     pipeline. A step is sustained when every event reached Kafka, the
//     driver dropped none, the pipeline drained within -lag of the step's
//     end, and the driver kept 95% of the offered rate. Each rate gets
//     -tries tries; a pipeline stops at its first rate where all fail.
//   - soak: progress.yaml for -soak at the highest rate it sustained (or
//     -soak-rate), sampling the RSS of the collector and the driver.
//
// Driver CPU is getrusage(RUSAGE_SELF) from the first event to the end of
// the flush; collector and sink CPU come from /proc/<pid>/stat until the
// step drained; "other load" is what the rest of the machine used meanwhile
// (/proc/stat), in cores. Linux only.
//
// Run it with `make bench-e2e`, or `cd bench/e2e && go run . -root ../..`.
// With -profile DIR the first cost round writes CPU profiles of the driver
// and of each collector (its pprof extension) to DIR.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	var cfg config
	role := flag.String("role", "driver", "driver, or sink (internal: the broker and consumer process)")
	flag.StringVar(&cfg.root, "root", "../..", "repository root (for collector-config/ and bin/otelcol-progress)")
	pipelines := flag.String("pipelines", "passthrough,progress", "pipelines to compare: passthrough, progress")
	phases := flag.String("phases", "cost,ramp,soak", "phases to run: cost, ramp, soak")
	flag.IntVar(&cfg.rate, "rate", 10000, "cost: the fixed offered rate, events/s")
	flag.IntVar(&cfg.rounds, "rounds", 3, "cost: rounds")
	flag.DurationVar(&cfg.costStep, "cost-step", 20*time.Second, "cost: duration of each step")
	rates := flag.String("rates", "5000,10000,15000,20000,25000,30000,40000", "ramp: offered rates, events/s, in increasing order")
	flag.DurationVar(&cfg.step, "step", 30*time.Second, "ramp: duration of each rate step")
	flag.IntVar(&cfg.tries, "tries", 2, "ramp: tries per rate; a rate is sustained when one try loses nothing")
	flag.DurationVar(&cfg.soak, "soak", 2*time.Minute, "soak: duration")
	flag.IntVar(&cfg.soakRate, "soak-rate", 0, "soak: offered rate (default: the highest rate progress.yaml sustained in the ramp, else -rate)")
	flag.DurationVar(&cfg.lag, "lag", 3*time.Second, "a step is sustained only if it drains within this time after it ends")
	flag.DurationVar(&cfg.drain, "drain", 60*time.Second, "give up waiting for a step's events after this long")
	flag.IntVar(&cfg.workers, "workers", 1, "driver goroutines sharing the offered rate")
	flag.BoolVar(&cfg.keepGoing, "keep-going", false, "ramp: try every rate even after one is not sustained")
	flag.StringVar(&cfg.sender, "sender", "go", "who sends the events: go (this process, otelbridge.Setup, OTLP gRPC) or python (python/progressotel, OTLP/JSON over HTTP, bench/e2e/python/pysend.py with Debian's python3)")
	flag.StringVar(&cfg.profile, "profile", "", "cost: write CPU profiles of the first round (driver and collectors) to this directory")
	flag.Func("collector-env", "NAME=VALUE for the collectors' environment (repeatable), e.g. PROGRESS_KEEP_ATTRIBUTES='[\"*\"]'", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want NAME=VALUE, got %q", v)
		}
		cfg.collectorEnv = append(cfg.collectorEnv, v)
		return nil
	})
	// Internal, for -role=sink.
	kafkaPort := flag.Int("kafka-port", 0, "sink: Kafka port")
	httpPort := flag.Int("http-port", 0, "sink: port of the count endpoint")
	flag.Parse()
	cfg.rounds, cfg.tries, cfg.workers = max(cfg.rounds, 1), max(cfg.tries, 1), max(cfg.workers, 1)

	var err error
	switch *role {
	case "sink":
		err = runSink(*kafkaPort, *httpPort)
	case "driver":
		if cfg.sender != "go" && cfg.sender != "python" {
			err = fmt.Errorf("unknown sender %q (want go or python)", cfg.sender)
		} else if cfg.rates, err = parseRates(*rates); err == nil {
			if cfg.pipelines, err = parseList(*pipelines, "passthrough", "progress"); err == nil {
				if cfg.phases, err = parseList(*phases, "cost", "ramp", "soak"); err == nil {
					err = run(cfg)
				}
			}
		}
	default:
		err = fmt.Errorf("unknown role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
}

// warmUp is the length of the cost phase's warm-up step.
const warmUp = 5 * time.Second

type config struct {
	root           string
	pipelines      []string // Progress and PassThrough
	phases         []string
	rate, rounds   int
	costStep, step time.Duration
	rates          []int
	tries          int
	soak           time.Duration
	soakRate       int
	lag, drain     time.Duration
	workers        int
	keepGoing      bool
	profile        string
	collectorEnv   []string
	sender         string // "go" or "python"
}

func parseRates(s string) ([]int, error) {
	var rs []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad rate %q", f)
		}
		rs = append(rs, n)
	}
	return rs, nil
}

// pipelineNames are the -pipelines names of the pipelines.
var pipelineNames = map[string]string{"passthrough": PassThrough, "progress": Progress}

// parseList parses a comma-separated list of allowed names; a list of
// -pipelines names comes back as the pipelines' names.
func parseList(s string, allowed ...string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(allowed, f) {
			return nil, fmt.Errorf("unknown %q (want %s)", f, strings.Join(allowed, ", "))
		}
		out = append(out, cmp.Or(pipelineNames[f], f))
	}
	return out, nil
}

func run(cfg config) error {
	ps := map[string]*pipeline{}
	var started sync.Mutex // the pipelines started, for a stop on a signal
	stopAll := func() {
		started.Lock()
		defer started.Unlock()
		for _, p := range ps {
			p.stop()
		}
	}
	defer stopAll()
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	go func() { <-interrupted; stopAll(); os.Exit(130) }()
	for _, name := range cfg.pipelines {
		p, err := startPipeline(cfg.root, name, cfg.collectorEnv)
		if err != nil {
			return err
		}
		started.Lock()
		ps[name] = p
		started.Unlock()
	}
	if cfg.profile != "" {
		if err := os.MkdirAll(cfg.profile, 0o755); err != nil {
			return err
		}
	}

	via := "driver --OTLP gRPC-->"
	if cfg.sender == "python" {
		via = "Python sender --OTLP/JSON over HTTP-->"
	}
	fmt.Printf("e2e: %s otelcol-progress: %s --> Kafka (kfake) --> consumer", via, strings.Join(cfg.pipelines, ", "))
	fmt.Printf("\nmachine: %d CPUs, load average %s, %s\n", runtime.NumCPU(), loadavg(), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	if len(cfg.collectorEnv) > 0 {
		fmt.Printf("collector environment: %s\n", strings.Join(cfg.collectorEnv, " "))
	}
	fmt.Printf("driver: OTEL_BLRP_MAX_QUEUE_SIZE=%s\n", cmp.Or(os.Getenv("OTEL_BLRP_MAX_QUEUE_SIZE"), "(unset: 2048)"))
	fmt.Println()
	printHeader()

	step := func(rate int, d time.Duration) stepConfig {
		return stepConfig{rate: rate, d: d, drain: cfg.drain, workers: cfg.workers, sender: cfg.sender, root: cfg.root}
	}
	var sum summary
	if slices.Contains(cfg.phases, "cost") {
		targets := cfg.pipelines
		if cfg.sender == "go" {
			targets = append([]string{RecordAlone}, targets...)
		}
		// A warm-up step per pipeline first, shown and left out of the
		// figures: a collector's first load creates its topics, its Kafka
		// connections and its queue files, which no later step pays.
		for _, name := range cfg.pipelines {
			res, err := runStep(ps[name], step(cfg.rate, warmUp))
			if err != nil {
				return err
			}
			printRow("warm-up", 1, res)
		}
		for round := range cfg.rounds {
			r := map[string]stepResult{}
			for i := range targets {
				// Rotate the order, so that a trend in the machine's load
				// does not always favour the same target.
				name := targets[(i+round)%len(targets)]
				sc := step(cfg.rate, cfg.costStep)
				if cfg.profile != "" && round == 0 {
					base := strings.NewReplacer(" ", "-", ".", "-").Replace(name)
					sc.driverProfile = filepath.Join(cfg.profile, "driver-"+base+".pprof")
					if name != RecordAlone {
						sc.collectorProfile = filepath.Join(cfg.profile, "collector-"+base+".pprof")
					}
				}
				res, err := runStep(ps[name], sc)
				if err != nil {
					return err
				}
				printRow("cost", round+1, res)
				r[name] = res
			}
			sum.rounds = append(sum.rounds, r)
		}
	}
	sum.sustained = map[string]stepResult{}
	if slices.Contains(cfg.phases, "ramp") {
		going := slices.Clone(cfg.pipelines)
		for _, rate := range cfg.rates {
			for _, name := range slices.Clone(going) {
				ok := false
				for try := 1; try <= cfg.tries && !ok; try++ {
					res, err := runStep(ps[name], step(rate, cfg.step))
					if err != nil {
						return err
					}
					printRow("ramp", try, res)
					if res.sustained(cfg.lag) {
						ok = true
						sum.sustained[name] = res
					}
				}
				if !ok && !cfg.keepGoing {
					going = slices.DeleteFunc(going, func(n string) bool { return n == name })
				}
			}
		}
	}
	if slices.Contains(cfg.phases, "soak") && cfg.soak > 0 {
		name := cfg.pipelines[len(cfg.pipelines)-1] // progress.yaml when both run
		rate := cfg.soakRate
		if rate == 0 {
			rate = cfg.rate
			if s, ok := sum.sustained[name]; ok {
				rate = s.offered
			}
		}
		sc := step(rate, cfg.soak)
		sc.rssEvery = 10 * time.Second
		res, err := runStep(ps[name], sc)
		if err != nil {
			return err
		}
		printRow("soak", 1, res)
		sum.soak = &res
		sum.soakSustained = res.sustained(cfg.lag)
	}
	fmt.Println()
	sum.print(cfg)
	return nil
}
