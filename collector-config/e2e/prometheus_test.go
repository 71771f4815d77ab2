package e2e

import (
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
)

// shippedRules is the absolute path of prometheus/rules.yaml.
func shippedRules(t testing.TB) string {
	t.Helper()
	rules, err := filepath.Abs(filepath.Join(configDir, "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return rules
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

func startPrometheus(t *testing.T, rules string, gateways, agents []*collector) *promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (scripts/install-tools.sh installs it): %v", err)
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
