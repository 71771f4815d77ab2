package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/kube/internal/kubetest"
)

// TestDemoInTmux runs make demo-k8s's program in a real terminal, a tmux pane, against a real
// kube-apiserver and etcd, and reads the whole scrollback once it has ended: every line of its
// narration is there (it goes through tel.Output(), above the live area, never under it), no row
// or header is left running (▸), and the Widget, whose conditions only change, is one tree: its
// current conditions, printed once at the end, not an operation that ends and reopens.
func TestDemoInTmux(t *testing.T) {
	lines, status := runDemoInTmux(t, "")
	if status != 0 {
		t.Fatalf("the demo exited with %d:\n%s", status, strings.Join(lines, "\n"))
	}
	checkScrollback(t, lines)
}

// TestDemoDeadEndpointInTmux: the same with OTEL_LOGS_EXPORTER=live,otlp and an OTLP endpoint
// where nothing listens. The SDK's export errors go through the live view too (the log package,
// which the OpenTelemetry error handler writes through, routed by otelbridge while the view
// runs): they are in the scrollback, and no stale header is.
func TestDemoDeadEndpointInTmux(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	_ = l.Close()
	lines, status := runDemoInTmux(t, "OTEL_LOGS_EXPORTER=live,otlp OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint+
		" OTEL_EXPORTER_OTLP_TIMEOUT=300 OTEL_BLRP_EXPORT_TIMEOUT=300 OTEL_BSP_EXPORT_TIMEOUT=300")
	checkScrollback(t, lines)
	// Shutdown reports the records it could not deliver: the demo's exit status says so.
	if status == 0 {
		t.Errorf("the demo exited with 0 although its telemetry was lost")
	}
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, strings.TrimPrefix(endpoint, "http://")) || !strings.Contains(all, "connection refused") {
		t.Errorf("the export errors to %s are not in the scrollback:\n%s", endpoint, all)
	}
}

// runDemoInTmux builds the demo, runs it with env in a 100×40 pane and returns the scrollback and
// its exit status.
func runDemoInTmux(t *testing.T, env string) ([]string, int) {
	t.Helper()
	assets, err := kubetest.AssetsDir()
	if err == nil {
		for _, bin := range []string{"kube-apiserver", "etcd"} {
			if _, err = os.Stat(filepath.Join(assets, bin)); err != nil {
				break
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no API server (CI=true, so this fails): %v", err)
		}
		t.Skipf("no API server: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "k8s-controller")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return kubetest.RunInTmux(t, wd, 100, 40, "env -u OTEL_LOGS_EXPORTER "+env+" "+bin, 3*time.Minute)
}

// checkScrollback checks the whole scrollback of a demo run.
func checkScrollback(t *testing.T, lines []string) {
	t.Helper()
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "a real kube-apiserver and etcd") {
		t.Fatalf("the demo did not run against the API server:\n%s", all)
	}
	want := []string{
		"-- the cloud finishes provisioning; the next status update will conflict",
		"-- a user powers the widget off (spec.running=false)",
		"-- kube.Applier: a Deployment, a Service and a ComputeCluster, applied and watched until ready",
		"-- 3 of 3 objects ready",
		"-- kube.Applier: the ComputeCluster deleted; its finalizer holds it until the operator cleans up",
		"-- the operator: cleanup done, finalizer removed",
	}
	for i := 1; i <= 7; i++ {
		want = append(want, fmt.Sprintf("reconcile %d: ", i))
	}
	for _, s := range controllers {
		want = append(want, "-- "+s.say)
	}
	for _, w := range want {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, w) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d lines start with %q, want 1", n, w)
		}
	}
	widget := 0
	for i, l := range lines {
		if strings.Contains(l, "▸") || strings.Contains(l, " running ") {
			t.Errorf("line %d is a stale row of the live area: %q", i+1, l)
		}
		if strings.Contains(l, "Widget/widget-1") {
			widget++
			if !strings.HasPrefix(l, "✓ Widget/widget-1") || !strings.HasSuffix(l, "5 transitions") {
				t.Errorf("line %d: %q, want the Widget's final header counting its 5 transitions", i+1, l)
			}
		}
	}
	if widget != 1 {
		t.Errorf("the Widget is named on %d lines, want its one tree's header", widget)
	}
	if t.Failed() {
		t.Logf("the scrollback:\n%s", all)
	}
}
