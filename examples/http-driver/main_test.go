package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/propagation"
)

const (
	traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
)

func execute(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+ExecutePath, strings.NewReader(`{"lifecycleName":"Install"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("traceparent", traceparent)
	req.Header.Set("X-Tracectx-TransactionId", "tx-1")
	req.Header.Set("X-Tracectx-ProcessId", "p-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var body executeResponse
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.RequestID == "" {
		t.Fatalf("response body: %v, %+v", err, body)
	}
	return body.RequestID
}

// startDriver runs the driver as main does, with OTEL_LOGS_EXPORTER=json
// into out, on a random loopback port. stop is the signal; errc gets run's
// result.
func startDriver(t *testing.T, args ...string) (addr string, out *testutil.SyncBuffer, stop func(), errc chan error) {
	t.Helper()
	t.Setenv("OTEL_LOGS_EXPORTER", "json")
	restoreGlobals(t)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	out = &testutil.SyncBuffer{}
	ready := make(chan string, 1)
	errc = make(chan error, 1)
	go func() {
		errc <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), out, ready)
	}()
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	}
	return addr, out, stop, errc
}

// TestAcceptance is the acceptance check, in-process: run with
// OTEL_LOGS_EXPORTER=json, POST with traceparent and two tracectx headers,
// stop as SIGINT would, and read the JSON lines.
func TestAcceptance(t *testing.T) {
	addr, out, stop, errc := startDriver(t, "-steps", "3", "-step-delay", "10ms", "-ansible", "off")

	requestID := execute(t, "http://"+addr)
	stop() // the signal: run waits for the transition and flushes
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}

	var events []string
	var sawSlog bool
	for text, line := range testutil.JSONLines(t, strings.NewReader(out.String())) {
		if line["tracectx.driverrequestid"] != requestID {
			continue // startup and shutdown lines belong to no request
		}
		for k, want := range map[string]string{
			"tracectx.transactionid": "tx-1",
			"tracectx.processid":     "p-1",
			"traceId":                traceID,
		} {
			if line[k] != want {
				t.Errorf("line %s: %s = %v, want %q", text, k, line[k], want)
			}
		}
		if typ, ok := line["progressEventType"].(string); ok {
			events = append(events, typ)
		} else if line["message"] == "transition finished" {
			sawSlog = true
		}
	}
	want := []string{progress.TypeOperationStarted, progress.TypeProgress, progress.TypeProgress, progress.TypeProgress, progress.TypeOperationCompleted}
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v\noutput:\n%s", events, want, out.String())
	}
	if !sawSlog {
		t.Errorf("the driver's own slog line is missing or not stamped\noutput:\n%s", out.String())
	}
}

// restoreGlobals puts back what Setup replaces.
func restoreGlobals(t *testing.T) {
	lp, tp, prop := otel.GetLoggerProvider(), otel.GetTracerProvider(), otel.GetTextMapPropagator()
	t.Cleanup(func() {
		otel.SetLoggerProvider(lp)
		otel.SetTracerProvider(tp)
		otel.SetTextMapPropagator(prop)
		progress.SetDefault(nil)
	})
}

// TestBackgroundRunAfterHandlerReturned holds the background goroutine
// until the request's context is cancelled (the handler has returned), and
// checks that what it records still carries the request's trace context and
// tracectx.
func TestBackgroundRunAfterHandlerReturned(t *testing.T) {
	restoreGlobals(t)
	col := &progresstest.Exporter{}
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(col)),
	)
	defer lp.Shutdown(context.Background())
	otel.SetTextMapPropagator(propagation.Default())
	progress.SetDefault(progress.NewRecorder(progress.WithLoggerProvider(lp)))

	reqCtx := make(chan context.Context, 1)
	gate := make(chan struct{})
	d := &driver{
		log:       otelslog.NewLogger("test", otelslog.WithLoggerProvider(lp)),
		steps:     2,
		beforeRun: func() { <-gate },
	}
	h := d.handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqCtx <- r.Context()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	requestID := execute(t, srv.URL)
	<-(<-reqCtx).Done() // the server cancels it once the handler has returned
	close(gate)
	if err := d.wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	var background int
	for _, r := range col.Records() {
		attrs := map[string]string{}
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			attrs[string(kv.Key)] = kv.Value.AsString()
			return true
		})
		if r.TraceID().String() != traceID {
			t.Errorf("%q: trace id %s, want %s", r.Body().AsString(), r.TraceID(), traceID)
		}
		if attrs["tracectx.transactionid"] != "tx-1" || attrs["tracectx.processid"] != "p-1" || attrs["tracectx.driverrequestid"] != requestID {
			t.Errorf("%q: tracectx %v", r.Body().AsString(), attrs)
		}
		if r.EventName() != "" || r.Body().AsString() == "transition finished" {
			background++
		}
	}
	// started, 2 progress, completed, and the slog line at the end.
	if background != 5 {
		t.Fatalf("%d background records, want 5", background)
	}
}

// TestAcceptanceAnsible is the acceptance check with the real playbook:
// every event of the transition, from the adapter, carries the request's
// trace and tracectx.
func TestAcceptanceAnsible(t *testing.T) {
	testutil.RequireTool(t, "ansible-runner", "apt-get install python3-ansible-runner")
	addr, out, stop, errc := startDriver(t, "-ansible", "on")
	requestID := execute(t, "http://"+addr)
	// Let the playbook finish, then stop as SIGINT would.
	for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(out.String(), `"progressEventType":"common/OperationCompleted"`); {
		if time.Now().After(deadline) {
			t.Fatalf("the playbook did not complete:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}

	types := map[string]int{}
	for _, line := range testutil.JSONLines(t, strings.NewReader(out.String())) {
		typ, ok := line["progressEventType"].(string)
		if !ok {
			continue
		}
		types[typ]++
		for k, want := range map[string]string{
			"tracectx.transactionid":   "tx-1",
			"tracectx.processid":       "p-1",
			"tracectx.driverrequestid": requestID,
			"traceId":                  traceID,
		} {
			if line[k] != want {
				t.Errorf("%s: %s = %v, want %q", typ, k, line[k], want)
			}
		}
	}
	for _, typ := range []string{"common/OperationStarted", "ansible/PlayStarted", "ansible/TaskStarted",
		"ansible/TaskStartedOnHost", "ansible/TaskCompletedOnHost", "ansible/PlaybookResult", "common/OperationCompleted"} {
		if types[typ] == 0 {
			t.Errorf("no %s event; got %v", typ, types)
		}
	}
}
