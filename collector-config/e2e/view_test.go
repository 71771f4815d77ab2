package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// TestViewForwardsToTheCollector puts progressotel view between a driver and the real collector
// (--forward): the driver's OTLP/gRPC requests reach the view, which draws them and sends each on
// as http/protobuf; every event reaches its tenant's Kafka topic once, and the view shows them.
func TestViewForwardsToTheCollector(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()
	viewGRPC := "127.0.0.1:" + strconv.Itoa(freePort(t))
	out := startView(t, "--grpc", viewGRPC, "--http", "127.0.0.1:"+strconv.Itoa(freePort(t)), "--forward", "http://"+col.http)

	const n = 300
	d := newDriver(t, viewGRPC, driverOpt{noRetry: true})
	ctx, span := d.tp.Tracer("driver").Start(context.Background(), "forwarded run")
	for i := range n {
		if err := d.rec.Record(ctx, progress.Event{
			Type: "common/Progress", Details: map[string]any{"completed": i + 1, "total": n, "marker": fmt.Sprintf("via-view-%03d", i)},
			Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
		}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			d.flush(t) // several requests, not one
		}
	}
	span.End()
	d.flush(t)
	msgs := cons.waitFor(t, 120*time.Second, "every event on progress_events_tenant-a", func(m []message) bool {
		return countMarker(onTopic(m, "progress_events_tenant-a"), "via-view-") >= n
	})
	for i := range n {
		if c := countMarker(onTopic(msgs, "progress_events_tenant-a"), fmt.Sprintf("via-view-%03d", i)); c != 1 {
			t.Errorf("event %d reached Kafka %d times", i, c)
		}
	}
	waitText(t, out, "via-view-299")
	if s := out.String(); strings.Contains(s, "not forwarded") || strings.Contains(s, "malformed") {
		t.Errorf("the view counted failures:\n%s", s)
	}
}

func waitText(t *testing.T, out *testutil.SyncBuffer, text string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the view's output:\n%s", text, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startView builds progressotel and runs its view with args until the test ends; it returns its
// output (not a terminal: plain lines) once it listens.
func startView(t *testing.T, args ...string) *testutil.SyncBuffer {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "progressotel")
	build := exec.Command("go", "build", "-o", bin, "./cmd/progressotel")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := &testutil.SyncBuffer{}
	view := exec.Command(bin, append([]string{"view"}, args...)...)
	view.Stdout, view.Stderr = out, out
	if err := view.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- view.Wait() }()
	t.Cleanup(func() {
		_ = view.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("view output:\n%s", out.String())
		}
	})
	waitText(t, out, "listening on")
	return out
}

// TestCollectorSendsSpansToView: the real collector with the traces overlay sends a driver's
// spans on to progressotel view as to any tracing backend; the view shows each, under its parent.
func TestCollectorSendsSpansToView(t *testing.T) {
	viewHTTP := "127.0.0.1:" + strconv.Itoa(freePort(t))
	out := startView(t, "--grpc", "", "--http", viewHTTP)
	b := startBroker(t)
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{"PROGRESS_TRACES_ENDPOINT": "http://" + viewHTTP})
	col.start()
	tel := setupDriver(t, col, "grpc")
	root, play, task := runTree(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("driver shutdown: %v", err)
	}
	short := func(sc trace.SpanContext) string { return sc.SpanID().String()[:8] }
	tid := root.TraceID().String()[:8]
	waitText(t, out, `span "task install nginx" ok`)
	waitText(t, out, `span "playbook site.yml" ok`)
	for _, want := range []string{
		"trace=" + tid + " span=" + short(task) + " parent=" + short(play),
		"trace=" + tid + " span=" + short(play) + " parent=" + short(root),
		"trace=" + tid + " span=" + short(root) + "\n",
	} {
		waitText(t, out, want)
	}
}
