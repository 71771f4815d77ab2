package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"
)

// The two collector pipelines the harness compares, both run by
// bin/otelcol-progress.
const (
	// Progress is the shipped configuration: collector-config/run.sh with
	// progress.yaml and a tenants overlay for the tenants of the load.
	Progress = "progress.yaml"
	// PassThrough is otlp -> batch -> kafka (encoding: raw), with their
	// settings copied from progress.yaml, so that the two differ only by
	// what progress.yaml adds.
	PassThrough = "pass-through"
)

// benchTenants are the tenants of the load (the events' organizations);
// the progress pipeline gets a tenants overlay for them, so every event is
// routed to its tenant's topic.
var benchTenants = []string{"acme", "globex"}

// pipeline is one collector and its sink (broker and consumer).
type pipeline struct {
	name                    string
	endpoint                string // OTLP gRPC
	httpEndpoint            string // OTLP/HTTP
	countURL                string
	pprofURL                string // the collector's pprof extension; "" without it
	collector, sink         *exec.Cmd
	collectorExit, sinkExit chan struct{} // closed when the process has exited
	log                     *lockedBuffer
	dir                     string // storage and generated configs, removed by stop
	stopOnce                sync.Once
}

func (p *pipeline) received() (int64, error) {
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
		terminate(p.collector, p.collectorExit)
		terminate(p.sink, p.sinkExit)
		if p.dir != "" {
			_ = os.RemoveAll(p.dir)
		}
	})
}

// start starts c and returns a channel closed when it has exited.
func start(c *exec.Cmd) (chan struct{}, error) {
	if err := c.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = c.Wait(); close(exited) }()
	return exited, nil
}

// terminate sends c SIGTERM and waits until it has exited, killing it
// after 30 s.
func terminate(c *exec.Cmd, exited chan struct{}) {
	if exited == nil {
		return
	}
	_ = c.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = c.Process.Kill()
		<-exited
	}
}

// profile fetches a CPU profile of the collector over d from its pprof
// extension and writes it to file.
func (p *pipeline) profile(d time.Duration, file string) error {
	if p.pprofURL == "" {
		return fmt.Errorf("no pprof endpoint")
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	client := &http.Client{Timeout: d + 30*time.Second}
	resp, err := client.Get(p.pprofURL + "/debug/pprof/profile?seconds=" + strconv.Itoa(secs))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
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

// startPipeline starts the sink and the collector of the named pipeline.
func startPipeline(root, name string, extraEnv []string) (*pipeline, error) {
	var err error
	for range 3 {
		var p *pipeline
		if p, err = tryStartPipeline(root, name, extraEnv); err == nil {
			return p, nil
		}
	}
	return nil, err
}

func tryStartPipeline(root, name string, extraEnv []string) (_ *pipeline, err error) {
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "bin", "otelcol-progress")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("collector binary: %w (build it with `make collector`)", err)
	}
	ports, err := freePorts(7)
	if err != nil {
		return nil, err
	}
	kafka, count, grpcPort, httpPort, metrics, pprofPort, health := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6]
	dir, err := os.MkdirTemp("", "e2e-collector-")
	if err != nil {
		return nil, err
	}
	p := &pipeline{
		name:         name,
		endpoint:     "127.0.0.1:" + strconv.Itoa(grpcPort),
		httpEndpoint: "127.0.0.1:" + strconv.Itoa(httpPort),
		countURL:     "http://127.0.0.1:" + strconv.Itoa(count) + "/count",
		pprofURL:     "http://127.0.0.1:" + strconv.Itoa(pprofPort),
		log:          &lockedBuffer{},
		dir:          dir,
	}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()

	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p.sink = exec.Command(self, "-role=sink", "-kafka-port="+strconv.Itoa(kafka), "-http-port="+strconv.Itoa(count))
	p.sink.Stdout, p.sink.Stderr = p.log, p.log
	if p.sinkExit, err = start(p.sink); err != nil {
		return nil, err
	}
	if err := waitFor(30*time.Second, func() bool { _, err := p.received(); return err == nil }); err != nil {
		return nil, fmt.Errorf("sink not ready: %v\n%s", err, p.log)
	}

	env := []string{
		"PROGRESS_OTELCOL_BIN=" + bin,
		"PROGRESS_OTLP_GRPC_ENDPOINT=" + p.endpoint,
		"PROGRESS_OTLP_HTTP_ENDPOINT=" + p.httpEndpoint,
		"PROGRESS_METRICS_PORT=" + strconv.Itoa(metrics),
		"PROGRESS_HEALTH_ENDPOINT=127.0.0.1:" + strconv.Itoa(health),
		"PROGRESS_STORAGE_DIR=" + filepath.Join(dir, "storage"),
		"TNCO_KAFKA_BROKERS=127.0.0.1:" + strconv.Itoa(kafka),
		"PROGRESS_RETRY_MAX_INTERVAL=1s",
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PROGRESS_") && !strings.HasPrefix(kv, "TNCO_") {
			env = append(env, kv)
		}
	}
	env = append(env, extraEnv...)
	// The pprof extension, as an overlay on either configuration, when the
	// binary has it (builds before it was added do not). The overlay's
	// list of extensions replaces the configuration's: it is that list
	// and pprof.
	progressYAML := filepath.Join(root, "collector-config", "progress.yaml")
	var overlay []string
	exts, err := serviceExtensions(progressYAML)
	if err != nil {
		return nil, err
	}
	if out, err := exec.Command(bin, "components").Output(); err == nil && strings.Contains(string(out), "name: pprof") {
		pprofYAML := filepath.Join(dir, "pprof.yaml")
		if err := os.WriteFile(pprofYAML, []byte("extensions:\n  pprof:\n    endpoint: 127.0.0.1:"+strconv.Itoa(pprofPort)+
			"\nservice:\n  extensions: ["+strings.Join(append(exts, "pprof"), ", ")+"]\n"), 0o600); err != nil {
			return nil, err
		}
		overlay = []string{"--config", pprofYAML}
	} else {
		p.pprofURL = ""
	}
	switch name {
	case Progress:
		p.collector = exec.Command(filepath.Join(root, "collector-config", "run.sh"), overlay...)
		env = append(env, "PROGRESS_TENANTS="+strings.Join(benchTenants, " "))
	case PassThrough:
		cfg, err := passThroughConfig(progressYAML, exts)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(dir, "passthrough.yaml")
		if err := os.WriteFile(file, cfg, 0o600); err != nil {
			return nil, err
		}
		// Started through run.sh as well, so that both collectors run
		// with its environment (the Go runtime's memory policy): its
		// stand-in binary starts the real one with the pass-through
		// configuration instead of progress.yaml.
		standIn := filepath.Join(dir, "passthrough.sh")
		script := "#!/bin/sh\nexec " + shellQuote(bin) + " --config " + shellQuote(file)
		for _, a := range overlay {
			script += " " + shellQuote(a)
		}
		if err := os.WriteFile(standIn, []byte(script+"\n"), 0o700); err != nil {
			return nil, err
		}
		p.collector = exec.Command(filepath.Join(root, "collector-config", "run.sh"))
		env = append(env, "PROGRESS_OTELCOL_BIN="+standIn)
	default:
		return nil, fmt.Errorf("unknown pipeline %q", name)
	}
	p.collector.Env = env
	p.collector.Stdout, p.collector.Stderr = p.log, p.log
	if p.collectorExit, err = start(p.collector); err != nil {
		return nil, err
	}
	exited := func() bool {
		select {
		case <-p.collectorExit:
			return true
		default:
			return false
		}
	}
	err = waitFor(60*time.Second, func() bool { return exited() || strings.Contains(p.log.String(), "Everything is ready") })
	if exited() {
		err = fmt.Errorf("collector exited")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: collector not ready: %v\n%s", name, err, tail(p.log.String(), 4000))
	}
	return p, nil
}

// passThroughConfig builds the pass-through configuration from the
// shipped one: the extensions it runs (the persistent queue's storage, and
// those its receiver refers to, such as its admission middleware), its otlp
// receiver, batch processor, telemetry and the settings of its
// kafka/unrouted exporter, in one pipeline otlp -> batch -> kafka. names
// are the extensions it runs (serviceExtensions).
func passThroughConfig(progressYAML string, names []string) ([]byte, error) {
	b, err := os.ReadFile(progressYAML)
	if err != nil {
		return nil, err
	}
	var src map[string]map[string]any
	if err := yaml.Unmarshal(b, &src); err != nil {
		return nil, fmt.Errorf("%s: %w", progressYAML, err)
	}
	type copied struct{ section, key, as string }
	var copies []copied
	for _, n := range names {
		copies = append(copies, copied{"extensions", n, n})
	}
	copies = append(copies, copied{"receivers", "otlp", "otlp"}, copied{"processors", "batch", "batch"},
		copied{"exporters", "kafka/unrouted", "kafka"}, copied{"service", "telemetry", "telemetry"})
	cfg := map[string]map[string]any{"extensions": {}, "receivers": {}, "processors": {}, "exporters": {}}
	cfg["service"] = map[string]any{
		"extensions": names,
		"pipelines": map[string]any{
			"logs": map[string]any{"receivers": []string{"otlp"}, "processors": []string{"batch"}, "exporters": []string{"kafka"}},
		},
	}
	for _, c := range copies {
		v, ok := src[c.section][c.key]
		if !ok {
			return nil, fmt.Errorf("%s: no %s.%s to copy into the pass-through pipeline", progressYAML, c.section, c.key)
		}
		cfg[c.section][c.as] = v
	}
	// The records go on as they came: a sender's record has no body (the
	// collector's tnco processor builds the message), so the raw encoding
	// has nothing to write; otlp_proto writes each record whole, its
	// attributes included. The sink counts the records in each message.
	kafka, ok := cfg["exporters"]["kafka"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: exporters.kafka/unrouted is not a map", progressYAML)
	}
	logs, _ := kafka["logs"].(map[string]any)
	if logs == nil {
		logs = map[string]any{}
		kafka["logs"] = logs
	}
	logs["encoding"] = "otlp_proto"
	return yaml.Marshal(cfg)
}

// serviceExtensions returns the extensions a configuration file runs
// (service.extensions).
func serviceExtensions(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Service struct {
			Extensions []string `yaml:"extensions"`
		} `yaml:"service"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return cfg.Service.Extensions, nil
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

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
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

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
