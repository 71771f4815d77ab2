package ansible

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// fakePassword is the no_log task's password in testdata/project/site.yml.
const fakePassword = "hunter2-fake-password"

// pipeline is a real export path: pretty and JSON lines into buffers, OTLP
// logs and traces to an HTTP server that keeps the request bytes, and a
// Sink and a span recorder to assert on.
type pipeline struct {
	sink  *progresstest.Sink
	spans *tracetest.SpanRecorder
	local testutil.SyncBuffer
	wire  *wireServer
	lp    *sdklog.LoggerProvider
	tp    *sdktrace.TracerProvider
	rec   *progress.Recorder
}

type wireServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	got [][]byte
}

func (w *wireServer) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Join(w.got, nil)
}

func newPipeline(t *testing.T, procs ...sdklog.Processor) *pipeline {
	t.Helper()
	p := &pipeline{sink: progresstest.NewSink(), spans: tracetest.NewSpanRecorder(), wire: &wireServer{}}
	p.wire.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.wire.mu.Lock()
		p.wire.got = append(p.wire.got, b)
		p.wire.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(p.wire.srv.Close)
	ctx := context.Background()
	pretty, err := prettyexporter.New(prettyexporter.WithWriter(&p.local), prettyexporter.WithColor(prettyexporter.ColorNever))
	if err != nil {
		t.Fatal(err)
	}
	jsonl, err := prettyexporter.NewJSON(prettyexporter.WithWriter(&p.local))
	if err != nil {
		t.Fatal(err)
	}
	otlpLogs, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(p.wire.srv.URL+"/v1/logs"))
	if err != nil {
		t.Fatal(err)
	}
	otlpTraces, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(p.wire.srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	opts := []sdklog.LoggerProviderOption{
		sdklog.WithProcessor(p.sink.Processor()),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(pretty)),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(jsonl)),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(otlpLogs)),
	}
	for _, pr := range procs {
		opts = append(opts, sdklog.WithProcessor(pr))
	}
	p.lp = sdklog.NewLoggerProvider(opts...)
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p.spans), sdktrace.WithBatcher(otlpTraces))
	p.rec = progress.NewRecorder(progress.WithLoggerProvider(p.lp))
	return p
}

func (p *pipeline) options(t *testing.T) []Option {
	return []Option{adapter.WithRecorder(p.rec), adapter.WithTracerProvider(p.tp), adapter.WithLogger(testLogger(t))}
}

// flush exports everything: after it, the buffers and the server hold all.
func (p *pipeline) flush(t *testing.T) {
	t.Helper()
	if err := p.lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// onEmit calls f for every record, synchronously, while the run goes on.
type onEmit func(r *sdklog.Record)

func (f onEmit) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (f onEmit) OnEmit(_ context.Context, r *sdklog.Record) error       { f(r); return nil }
func (f onEmit) Shutdown(context.Context) error                         { return nil }
func (f onEmit) ForceFlush(context.Context) error                       { return nil }

func detail(r *sdklog.Record, key string) string {
	var v string
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if string(kv.Key) == "progress.details."+key {
			v = kv.Value.AsString()
			return false
		}
		return true
	})
	return v
}

// TestRunSite runs the realistic playbook with the real Ansible and checks
// what a driver and TNCO rely on: the events (types, counts, detail keys,
// severities), that they are recorded live, the span tree and its times,
// the outcome, and that the no_log password appears in no output.
func TestRunSite(t *testing.T) {
	requireAnsible(t, "ssh") // the edge proxy is unreachable over ssh
	work := t.TempDir()
	loopDir := filepath.Join(work, "web-1", "conf")

	// Live: when the loop task's start is recorded, Ansible has not created
	// its directories yet; when the recap is recorded, it has.
	var liveAtStart, doneAtEnd atomic.Bool
	probe := onEmit(func(r *sdklog.Record) {
		_, err := os.Stat(loopDir)
		switch {
		case r.EventName() == TypeTaskStarted && detail(r, "taskName") == "Create the site directories":
			liveAtStart.Store(errors.Is(err, os.ErrNotExist))
		case r.EventName() == TypePlaybookResult:
			doneAtEnd.Store(err == nil)
		}
	})
	p := newPipeline(t, probe)

	parentTP := sdktrace.NewTracerProvider()
	ctx, parent := parentTP.Tracer("test").Start(context.Background(), "driver request")
	res, err := Run(ctx, Playbook{ProjectDir: projectDir, Playbook: "site.yml", Inventory: inventory(t),
		ExtraVars: map[string]any{"work_dir": work}}, append(p.options(t), adapter.WithOperation("Install"))...)
	parent.End()
	p.flush(t)

	// The outcome: the unreachable edge proxy fails the run (rc 4).
	var exit *ExitError
	if !errors.As(err, &exit) || exit.ExitCode != 4 || !slices.Equal(exit.UnreachableHosts, []string{"edge-proxy"}) {
		t.Fatalf("err = %v, want *ExitError rc 4 with edge-proxy unreachable", err)
	}
	if res.ExitCode != 4 || len(res.FailedHosts) != 0 || !slices.Equal(res.UnreachableHosts, []string{"edge-proxy"}) || res.OK() {
		t.Errorf("result rc %d failed %v unreachable %v", res.ExitCode, res.FailedHosts, res.UnreachableHosts)
	}
	web := HostStats{OK: 11, Changed: 7, Skipped: 1, Ignored: 1}
	wantStats := map[string]HostStats{"web-1": web, "web-2": web, "edge-proxy": {Unreachable: 1}}
	if !maps.Equal(res.Stats, wantStats) || res.StatsRebuilt {
		t.Errorf("stats %+v (rebuilt %v), want %+v", res.Stats, res.StatsRebuilt, wantStats)
	}
	if res.SkippedLines != 0 {
		t.Errorf("%d lines skipped", res.SkippedLines)
	}
	if !liveAtStart.Load() || !doneAtEnd.Load() {
		t.Errorf("events not recorded live: loop dirs absent at the task's start %v, present at the recap %v",
			liveAtStart.Load(), doneAtEnd.Load())
	}

	events := p.sink.Events()
	progresstest.CheckRun(t, p.spans.Ended(), events, recapTruth(res))
	assertSiteEvents(t, events)
	assertSpanTree(t, p.spans.Ended(), events, parent.SpanContext())
	assertNoSecret(t, p, "Write the database credentials")
}

// assertSiteEvents checks the events of site.yml: counts per type, detail
// keys, and the meaning of the special tasks.
func assertSiteEvents(t *testing.T, events []progresstest.Event) {
	t.Helper()
	counts := map[string]int{}
	for _, e := range events {
		counts[e.EventName]++
		assertKeys(t, e)
	}
	want := map[string]int{
		progress.TypeOperationStarted: 1, TypePlayStarted: 4, TypePlayMatchedNoHosts: 1,
		TypeTaskStarted: 13, TypeTaskStartedOnHost: 25, TypeTaskCompletedOnHost: 26, TypeTaskRetryOnHost: 4,
		TypeTaskFailedOnHost: 2, TypeTaskSkippedOnHost: 2, TypeHostUnreachable: 1, TypePlaybookResult: 1,
		progress.TypeOperationFailed: 1,
	}
	if !maps.Equal(counts, want) {
		t.Errorf("event counts\n got %v\nwant %v", counts, want)
	}
	if events[0].EventName != progress.TypeOperationStarted || events[len(events)-1].EventName != progress.TypeOperationFailed {
		t.Errorf("the run is not framed by OperationStarted … OperationFailed: %s … %s", events[0].EventName, events[len(events)-1].EventName)
	}
	of := func(typ, task string) []progresstest.Event {
		var out []progresstest.Event
		for _, e := range events {
			if e.EventName == typ && e.Details["taskName"] == task {
				out = append(out, e)
			}
		}
		return out
	}
	// no_log: no arguments, a censored result.
	for _, e := range append(of(TypeTaskStarted, "Write the database credentials"), of(TypeTaskStartedOnHost, "Write the database credentials")...) {
		if e.Details["argsHidden"] != true || e.Details["args"] != nil {
			t.Errorf("no_log %s: %v", e.EventName, e.Details)
		}
	}
	for _, e := range of(TypeTaskCompletedOnHost, "Write the database credentials") {
		if msg, _ := e.Details["taskResult"].(map[string]any)["msg"].(string); !strings.Contains(msg, "no_log") {
			t.Errorf("no_log result not censored: %v", e.Details)
		}
	}
	// Arguments of an ordinary task, untemplated, as Ansible shows them.
	if e := of(TypeTaskStarted, "Show the deployment user"); len(e) != 1 || e[0].Details["args"].(map[string]any)["var"] != "app_user" {
		t.Errorf("TaskStarted args: %v", e)
	}
	// retries/until: two retries per host, then success.
	if n := len(of(TypeTaskRetryOnHost, "Wait for the service to come up")); n != 4 {
		t.Errorf("%d retries, want 2 per host", n)
	}
	// A loop: one event per item with its label, then the task's result
	// with one reduced result per item.
	var labels []string
	for _, e := range of(TypeTaskCompletedOnHost, "Create the site directories") {
		if l, ok := e.Details["itemLabel"].(string); ok {
			labels = append(labels, e.Details["hostName"].(string)+":"+l)
		} else if n := len(e.Details["taskResult"].(map[string]any)["results"].([]any)); n != 3 {
			t.Errorf("loop result has %d item results, want 3", n)
		}
	}
	slices.Sort(labels)
	if want := []string{"web-1:cache", "web-1:conf", "web-1:logs", "web-2:cache", "web-2:conf", "web-2:logs"}; !slices.Equal(labels, want) {
		t.Errorf("item labels %v, want %v", labels, want)
	}
	// ignore_errors: failed, marked ignored, a warning rather than an error.
	for _, e := range of(TypeTaskFailedOnHost, "Probe an optional feature") {
		r := e.Details["taskResult"].(map[string]any)
		if e.Severity != log.SeverityWarn || e.Details["ignored"] != true || r["failed"] != true || r["rc"] != int64(1) {
			t.Errorf("ignored failure: %v %v", e.Severity, e.Details)
		}
	}
	if n := len(of(TypeTaskSkippedOnHost, "Install the debug toolbox")); n != 2 {
		t.Errorf("%d skipped events, want 2", n)
	}
	if n := len(of(TypeTaskStarted, "Handler/Reload the web server")); n != 1 {
		t.Errorf("handler start: %d, want 1 named Handler/Reload the web server", n)
	}
	if n := len(of(TypeTaskCompletedOnHost, "webserver : Report the role")); n != 2 {
		t.Errorf("role task: %d results, want 2 named \"webserver : Report the role\"", n)
	}
	for _, e := range events {
		switch e.EventName {
		case TypePlayMatchedNoHosts:
			if e.Details["playName"] != "Configure the database tier" || e.Severity != log.SeverityWarn {
				t.Errorf("no hosts matched: %v %v", e.Severity, e.Details)
			}
		case TypeHostUnreachable:
			if e.Details["hostName"] != "edge-proxy" || e.Severity != log.SeverityError {
				t.Errorf("unreachable: %v %v", e.Severity, e.Details)
			}
		case TypePlaybookResult:
			hs := e.Details["hostStats"].(map[string]any)
			if hs["web-1"].(map[string]any)["changed"] != int64(7) || hs["edge-proxy"].(map[string]any)["unreachable"] != int64(1) {
				t.Errorf("PlaybookResult hostStats %v", hs)
			}
			if plays := e.Details["plays"].([]any); len(plays) != 4 {
				t.Errorf("PlaybookResult plays %v", plays)
			}
		case progress.TypeOperationFailed:
			if e.Details["operation"] != "Install" || e.Details["failureCode"] != progress.FailureResourceNotFound {
				t.Errorf("OperationFailed %v", e.Details)
			}
		}
	}
}

// The detail keys of each event type: the Ignition driver's, exactly.
var detailKeys = map[string][]string{
	TypePlayStarted:         {"playName"},
	TypePlayMatchedNoHosts:  {"playName"},
	TypeTaskStarted:         {"args", "argsHidden", "taskName"},
	TypeTaskStartedOnHost:   {"args", "argsHidden", "hostName", "taskName"},
	TypeTaskCompletedOnHost: {"delegatedHostName", "hostName", "itemLabel", "taskName", "taskResult"},
	TypeTaskFailedOnHost:    {"delegatedHostName", "hostName", "itemLabel", "taskName", "taskResult"},
	TypeTaskSkippedOnHost:   {"delegatedHostName", "hostName", "itemLabel", "taskName", "taskResult"},
	TypeTaskRetryOnHost:     {"delegatedHostName", "hostName", "taskName", "taskResult"},
	TypeHostUnreachable:     {"delegatedHostName", "hostName", "taskName", "taskResult"},
	TypeVarPrompt:           {"varName"},
	TypePlaybookResult:      {"hostStats", "plays"},
}

func assertKeys(t *testing.T, e progresstest.Event) {
	t.Helper()
	want, ok := detailKeys[e.EventName]
	if !ok {
		return
	}
	got := slices.Sorted(maps.Keys(e.Details))
	switch {
	case e.Details["argsHidden"] == true: // no_log: no args at all
		want = slices.DeleteFunc(slices.Clone(want), func(k string) bool { return k == "args" })
	case e.Details["ignored"] == true:
		want = append(slices.Clone(want), "ignored")
		slices.Sort(want)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s keys %v, want %v", e.EventName, got, want)
	}
	if r, ok := e.Details["taskResult"].(map[string]any); ok {
		if keys := slices.Sorted(maps.Keys(r)); !slices.Equal(keys, []string{"changed", "failed", "msg", "rc", "results", "skipped"}) {
			t.Errorf("%s taskResult keys %v", e.EventName, keys)
		}
	}
	if hs, ok := e.Details["hostStats"].(map[string]any); ok {
		for h, s := range hs {
			if keys := slices.Sorted(maps.Keys(s.(map[string]any))); !slices.Equal(keys,
				[]string{"changed", "failures", "ignored", "ok", "rescued", "skipped", "unreachable"}) {
				t.Errorf("hostStats[%s] keys %v", h, keys)
			}
		}
	}
}

// assertSpanTree checks playbook → play → task → host under the caller's
// span, which span each event is recorded in, and that the times come
// from Ansible and nest.
func assertSpanTree(t *testing.T, spans []sdktrace.ReadOnlySpan, events []progresstest.Event, parent trace.SpanContext) {
	t.Helper()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	kind := func(s sdktrace.ReadOnlySpan) string { k, _, _ := strings.Cut(s.Name(), " "); return k }
	parentKind := map[string]string{"play": "playbook", "task": "play", "host": "task"}
	counts := map[string]int{}
	for _, s := range spans {
		counts[kind(s)]++
		if s.SpanContext().TraceID() != parent.TraceID() {
			t.Errorf("span %s is not in the caller's trace", s.Name())
		}
		if s.EndTime().Before(s.StartTime()) {
			t.Errorf("span %s ends before it starts", s.Name())
		}
		if kind(s) == "playbook" {
			if s.Parent().SpanID() != parent.SpanID() {
				t.Errorf("the playbook span is not a child of the caller's span")
			}
			continue
		}
		up, ok := byID[s.Parent().SpanID()]
		if !ok || kind(up) != parentKind[kind(s)] {
			t.Errorf("span %q: parent %v, want a %s span", s.Name(), up, parentKind[kind(s)])
			continue
		}
		if s.StartTime().Before(up.StartTime()) || s.EndTime().After(up.EndTime()) {
			t.Errorf("span %q [%v, %v] outside its parent %q [%v, %v]", s.Name(), s.StartTime(), s.EndTime(),
				up.Name(), up.StartTime(), up.EndTime())
		}
	}
	if want := map[string]int{"playbook": 1, "play": 4, "task": 13, "host": 25}; !maps.Equal(counts, want) {
		t.Errorf("spans %v, want %v", counts, want)
	}

	for _, e := range events {
		s, ok := byID[e.SpanID]
		if !ok {
			t.Errorf("%s recorded outside the run's spans", e.EventName)
			continue
		}
		switch e.EventName {
		case TypeTaskStarted:
			if kind(s) != "task" || !s.StartTime().Equal(e.Timestamp) {
				t.Errorf("%s %v in %q starting %v: want the task span, started at the event's time", e.EventName, e.Timestamp, s.Name(), s.StartTime())
			}
		case TypeTaskStartedOnHost:
			if s.Name() != "host "+e.Details["hostName"].(string) || !s.StartTime().Equal(e.Timestamp) {
				t.Errorf("%s in %q: want its host span, started at the event's time", e.EventName, s.Name())
			}
		case TypeTaskCompletedOnHost, TypeTaskFailedOnHost, TypeTaskSkippedOnHost, TypeTaskRetryOnHost, TypeHostUnreachable:
			up := byID[s.Parent().SpanID()]
			if s.Name() != "host "+e.Details["hostName"].(string) || !strings.HasSuffix(up.Name(), e.Details["taskName"].(string)) {
				t.Errorf("%s of %v in %q under %q", e.EventName, e.Details["taskName"], s.Name(), up.Name())
			}
			if e.Timestamp.Before(s.StartTime()) {
				t.Errorf("%s before its host span starts", e.EventName)
			}
			if e.EventName == TypeHostUnreachable && s.Status().Code.String() != "Error" {
				t.Errorf("unreachable host span status %v", s.Status())
			}
		case TypePlayStarted, TypePlayMatchedNoHosts:
			if kind(s) != "play" || s.Name() != "play "+e.Details["playName"].(string) {
				t.Errorf("%s in %q", e.EventName, s.Name())
			}
		case TypePlaybookResult, progress.TypeOperationStarted, progress.TypeOperationFailed:
			if kind(s) != "playbook" {
				t.Errorf("%s in %q, want the playbook span", e.EventName, s.Name())
			}
			if e.EventName == progress.TypeOperationStarted && !s.StartTime().Equal(e.Timestamp) {
				t.Errorf("playbook span starts %v, not at Ansible's first event %v", s.StartTime(), e.Timestamp)
			}
		}
	}
}

// assertNoSecret checks that the no_log password appears in no output,
// while the task itself does appear (so the check would see a leak).
func assertNoSecret(t *testing.T, p *pipeline, task string) {
	t.Helper()
	local, wire := p.local.String(), p.wire.bytes()
	if !strings.Contains(local, task) || !bytes.Contains(wire, []byte(task)) {
		t.Fatalf("the outputs lack the no_log task %q: the check would not see a leak", task)
	}
	if strings.Count(local, "ansible/TaskStarted ") < 1 || !strings.Contains(local, `"progressEventType":"ansible/TaskStarted"`) {
		t.Fatalf("the local output lacks the pretty or the JSON lines")
	}
	if strings.Contains(local, fakePassword) {
		t.Errorf("the no_log password is in the pretty or JSON lines output")
	}
	if bytes.Contains(wire, []byte(fakePassword)) {
		t.Errorf("the no_log password is in the OTLP request bytes (logs or traces)")
	}
	for _, s := range p.spans.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), fakePassword) {
				t.Errorf("the no_log password is in span %q attribute %s", s.Name(), kv.Key)
			}
		}
	}
}

// TestRunFailingPlaybook: a task fails on every host and stops them.
func TestRunFailingPlaybook(t *testing.T) {
	requireAnsible(t)
	c := newCapture(t)
	res, err := Run(context.Background(), Playbook{ProjectDir: projectDir, Playbook: "fail.yml", Inventory: inventory(t)}, c.options(t)...)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.ExitCode != 2 || !slices.Equal(exit.FailedHosts, []string{"web-1", "web-2"}) {
		t.Fatalf("err = %v, want *ExitError rc 2, failed web-1 and web-2", err)
	}
	if s := res.Stats["web-1"]; s != (HostStats{OK: 1, Changed: 1, Failures: 1}) {
		t.Errorf("web-1 stats %+v", s)
	}
	checkRun(t, c, res)
	failed := c.sink.OfType(TypeTaskFailedOnHost)
	if len(failed) != 2 {
		t.Fatalf("%d TaskFailedOnHost, want 2", len(failed))
	}
	for _, e := range failed {
		r := e.Details["taskResult"].(map[string]any)
		if e.Severity != log.SeverityError || e.Details["ignored"] != nil || r["failed"] != true || r["rc"] != int64(3) {
			t.Errorf("failure event: %v %v", e.Severity, e.Details)
		}
	}
	for _, e := range c.sink.OfType(TypeTaskStarted) {
		if e.Details["taskName"] == "Start the application" {
			t.Errorf("a task after the failure started")
		}
	}
	of := c.sink.OfType(progress.TypeOperationFailed)
	if len(of) != 1 || of[0].Details["failureCode"] != progress.FailureInfrastructure || of[0].Details["description"] != "failed hosts: web-1, web-2" {
		t.Errorf("OperationFailed: %v", of)
	}
	var errorSpans []string
	for _, s := range c.spans.Ended() {
		if s.Status().Code.String() == "Error" {
			errorSpans = append(errorSpans, s.Name())
		}
	}
	slices.Sort(errorSpans)
	if want := []string{"host web-1", "host web-2", "play Upgrade the application", "playbook fail.yml", "task Migrate the database"}; !slices.Equal(errorSpans, want) {
		t.Errorf("spans with error status %v, want %v", errorSpans, want)
	}
}

// TestRunVarsPrompt: a vars_prompt fails the run at once with a clear
// error, instead of waiting for an answer that never comes; the same
// variable in ExtraVars skips the prompt.
func TestRunVarsPrompt(t *testing.T) {
	requireAnsible(t)
	inv := inventory(t)
	// A watchdog far above a normal run: ansible-runner itself would wait
	// for its idle timeout (10 minutes by default).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newCapture(t)
	res, err := Run(ctx, Playbook{ProjectDir: projectDir, Playbook: "prompt.yml", Inventory: inv}, c.options(t)...)
	checkRun(t, c, res)
	// One name for the stop: failed, on the span as in the events.
	if run := c.spans.Ended(); len(run) != 1 || progresstest.SpanOutcome(run[0]) != outcome.Failed {
		t.Errorf("spans %v, want the run's alone, failed", run)
	}
	var pe *VarsPromptError
	if !errors.As(err, &pe) || pe.Var != "release_version" {
		t.Fatalf("err = %v, want *VarsPromptError for release_version", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run hung until the watchdog")
	}
	if vp := c.sink.OfType(TypeVarPrompt); len(vp) != 1 || vp[0].Details["varName"] != "release_version" {
		t.Errorf("VarPrompt events %v", vp)
	}
	if of := c.sink.OfType(progress.TypeOperationFailed); len(of) != 1 || !strings.Contains(of[0].Details["description"].(string), "release_version") {
		t.Errorf("OperationFailed %v", of)
	}
	assertNoProcess(t, inv, "")

	c = newCapture(t)
	res, err = Run(ctx, Playbook{ProjectDir: projectDir, Playbook: "prompt.yml", Inventory: inv,
		ExtraVars: map[string]any{"release_version": "1.2.3"}}, c.options(t)...)
	checkRun(t, c, res)
	if err != nil || len(c.sink.OfType(TypeVarPrompt)) != 0 {
		t.Fatalf("with the variable given: err %v, %d VarPrompt events", err, len(c.sink.OfType(TypeVarPrompt)))
	}
	if done := c.sink.OfType(TypeTaskCompletedOnHost); len(done) != 2 || done[0].Details["taskResult"].(map[string]any)["msg"] != "deploying 1.2.3" {
		t.Errorf("deploy results %v", done)
	}
}

// TestRunCancel cancels a run in the middle of a long task and looks for
// any process left behind.
func TestRunCancel(t *testing.T) {
	requireAnsible(t)
	inv := inventory(t)
	// A duration no other process uses: the sleep's command line finds
	// it.
	marker := fmt.Sprintf("600.%d%06d", os.Getpid(), time.Now().Nanosecond()/1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	var once sync.Once
	sink := progresstest.NewSink(onEmit(func(r *sdklog.Record) {
		if r.EventName() == TypeTaskStartedOnHost {
			once.Do(func() { close(started) })
		}
	}))
	c := &capture{sink: sink, spans: tracetest.NewSpanRecorder()}
	c.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c.spans))
	type result struct {
		res Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := Run(ctx, Playbook{ProjectDir: projectDir, Playbook: "sleep.yml", Inventory: inv,
			ExtraVars: map[string]any{"sleep_seconds": marker}}, append(c.options(t), adapter.WithGracePeriod(20*time.Second))...)
		done <- result{res, err}
	}()
	select {
	case <-started:
	case r := <-done:
		t.Fatalf("the run ended before its task started: %v", r.err)
	}
	// Wait until the sleep itself runs, so that there is something to stop.
	for deadline := time.Now().Add(time.Minute); len(testutil.ProcessesWith(marker)) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the task's sleep %s never started", marker)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancelledAt := time.Now()
	cancel()
	r := <-done
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", r.err)
	}
	checkRun(t, c, r.res)
	assertNoProcess(t, inv, marker)
	of := sink.OfType(progress.TypeOperationFailed)
	if len(of) != 1 || of[0].Details["description"] != "cancelled" {
		t.Fatalf("OperationFailed %v", of)
	}
	// The run ended when it was stopped, not at Ansible's last event.
	for _, e := range append(sink.OfType(TypePlaybookResult), of...) {
		if e.Timestamp.Before(cancelledAt) || !e.Timestamp.After(r.res.End) {
			t.Errorf("%s at %v: before the cancel (%v) or not after Ansible's last event (%v)", e.EventName, e.Timestamp, cancelledAt, r.res.End)
		}
	}
	// Every span ends with the run: those the stop cut short are
	// cancelled, without an error status (stopped, not failed).
	assertEnded(t, c)
	st := newSpanTree(c.spans.Ended())
	for _, name := range []string{"host web-1", "host web-2", "task Sleep for a long time", "play Long running", "playbook sleep.yml"} {
		s := st.only(t, name)
		assertSpan(t, s, codes.Unset, outcome.Cancelled)
		if s.EndTime().Before(cancelledAt) {
			t.Errorf("span %s ends at %v, before the cancel", name, s.EndTime())
		}
	}
}

// TestRunPlaybookErrors: a missing playbook and one Ansible cannot load
// give a *PlaybookError naming it, and an OperationFailed event.
func TestRunPlaybookErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		// No Ansible needed: the adapter checks before starting it.
		c := newCapture(t)
		_, err := Run(context.Background(), Playbook{ProjectDir: projectDir, Playbook: "no-such.yml"}, c.options(t)...)
		var pe *PlaybookError
		if !errors.As(err, &pe) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "no-such.yml") {
			t.Fatalf("err = %v, want a *PlaybookError naming no-such.yml", err)
		}
		assertOnlyStartFail(t, c, "playbook no-such.yml not found")
	})
	t.Run("unparseable", func(t *testing.T) {
		c, err := runWritten(t, "broken.yml", "- name: Broken\n  hosts: web\n  tasks:\n    - debug: msg=x\n   bad: [\n")
		var pe *PlaybookError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "broken.yml") || !strings.Contains(pe.Reason, "line 4") {
			t.Fatalf("err = %v, want a *PlaybookError naming broken.yml and the line", err)
		}
		assertOnlyStartFail(t, c, "playbook broken.yml could not be loaded by Ansible: "+pe.Reason)
	})
	t.Run("undefined hosts", func(t *testing.T) {
		c, err := runWritten(t, "unresolved.yml", "- name: Unresolved\n  hosts: \"{{ target_group }}\"\n  gather_facts: false\n  tasks:\n    - ping:\n")
		var pe *PlaybookError
		if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "'target_group' is undefined") {
			t.Fatalf("err = %v, want a *PlaybookError saying target_group is undefined", err)
		}
		if of := c.sink.OfType(progress.TypeOperationFailed); len(of) != 1 || of[0].Details["description"] != "playbook unresolved.yml could not be loaded by Ansible: "+pe.Reason {
			t.Errorf("OperationFailed %v", of)
		}
	})
	t.Run("not installed", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		c := newCapture(t)
		_, err := Run(context.Background(), Playbook{ProjectDir: projectDir, Playbook: "site.yml"}, c.options(t)...)
		if !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("err = %v, want ErrNotInstalled", err)
		}
		assertOnlyStartFail(t, c, "Ansible is not installed")
	})
}

// runWritten runs a playbook, text written to name in a fresh directory,
// with the real Ansible on the test inventory.
func runWritten(t *testing.T, name, text string) (*capture, error) {
	t.Helper()
	requireAnsible(t)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	_, err := Run(context.Background(), Playbook{Playbook: path, Inventory: inventory(t)}, c.options(t)...)
	return c, err
}

func assertOnlyStartFail(t *testing.T, c *capture, description string) {
	t.Helper()
	types := c.sink.Types()
	if !slices.Equal(types, []string{progress.TypeOperationStarted, progress.TypeOperationFailed}) {
		t.Fatalf("events %v, want OperationStarted, OperationFailed", types)
	}
	if d := c.sink.OfType(progress.TypeOperationFailed)[0].Details; d["description"] != description || d["failureCode"] != progress.FailureInternal {
		t.Errorf("OperationFailed %v, want description %q", d, description)
	}
	if ended := c.spans.Ended(); len(ended) != 1 || ended[0].Status().Code.String() != "Error" {
		t.Errorf("want one playbook span with an error status: %v", ended)
	}
}

// TestRunArtifacts: the private directory, which holds the environment
// and the facts, is gone after the run unless asked for; a delegated task
// names its delegate.
func TestRunArtifacts(t *testing.T) {
	requireAnsible(t)
	inv := inventory(t)
	tmp := t.TempDir()
	c := newCapture(t)
	res, err := Run(context.Background(), Playbook{ProjectDir: projectDir, Playbook: "delegate.yml", Inventory: inv, Limit: "web-1"},
		append(c.options(t), WithTempDir(tmp))...)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, c, res)
	if hosts := slices.Sorted(maps.Keys(res.Stats)); !slices.Equal(hosts, []string{"web-1"}) {
		t.Errorf("Limit web-1: hosts %v", hosts)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 || res.ArtifactDir != "" {
		t.Errorf("private directory left behind: %v (ArtifactDir %q)", left, res.ArtifactDir)
	}
	for _, e := range c.sink.OfType(TypeTaskCompletedOnHost) {
		if e.Details["delegatedHostName"] != "lb-1" {
			t.Errorf("delegated task: %v", e.Details)
		}
	}

	// Args reach ansible-playbook: in check mode the command is skipped.
	c = newCapture(t)
	res, err = Run(context.Background(), Playbook{ProjectDir: projectDir, Playbook: "delegate.yml", Inventory: inv,
		ExtraVars: map[string]any{"api_password": "kept-secret"}, Args: []string{"--check", "--diff"}},
		append(c.options(t), WithTempDir(tmp), WithKeepArtifacts())...)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, c, res)
	if n := len(c.sink.OfType(TypeTaskSkippedOnHost)); n != 2 || res.Stats["web-2"].Skipped != 1 {
		t.Errorf("--check: %d skipped events, stats %+v", n, res.Stats)
	}
	fi, err := os.Stat(res.ArtifactDir)
	if err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(res.ArtifactDir) != tmp {
		t.Fatalf("kept artifacts at %q: %v %v", res.ArtifactDir, fi, err)
	}
	if _, err := os.Stat(filepath.Join(res.ArtifactDir, "artifacts", runIdent, "job_events")); err != nil {
		t.Errorf("no job events in the kept artifacts: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(res.ArtifactDir, "env", "extravars")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("extravars file: %v %v", fi, err)
	}
}

// TestRunBigEvents: gathered facts and a result line above a megabyte go
// through; the long message is cut by the progress limits, not dropped.
func TestRunBigEvents(t *testing.T) {
	requireAnsible(t)
	c := newCapture(t)
	var longest int
	res, err := Run(context.Background(), Playbook{ProjectDir: projectDir, Playbook: "big.yml", Inventory: inventory(t)},
		append(c.options(t), adapter.Own(func(c *config) { c.RawTee = lineLengths(&longest) }))...)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, c, res)
	if longest < 1<<20 {
		t.Fatalf("the longest event line is %d bytes: the playbook no longer tests lines above 1 MB", longest)
	}
	if res.SkippedLines != 0 || res.Stats["web-1"].OK != 2 {
		t.Errorf("skipped %d lines, stats %+v", res.SkippedLines, res.Stats)
	}
	var big int
	for _, e := range c.sink.OfType(TypeTaskCompletedOnHost) {
		if e.Details["taskName"] == "Show a large value" {
			big++
			msg, _ := e.Details["taskResult"].(map[string]any)["msg"].(string)
			if !e.Truncated || !strings.HasSuffix(msg, wire.TruncatedSuffix) || !strings.HasPrefix(msg, "xxxx") {
				t.Errorf("big result: truncated %v, msg %d bytes", e.Truncated, len(msg))
			}
		}
	}
	if big != 2 {
		t.Errorf("%d big results, want 2", big)
	}
}

// lineLengths is a writer that notes the longest line written to it.
type lineLengthWriter struct {
	longest *int
	cur     int
}

func lineLengths(longest *int) io.Writer { return &lineLengthWriter{longest: longest} }

func (w *lineLengthWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		if c == '\n' {
			*w.longest = max(*w.longest, w.cur)
			w.cur = 0
		} else {
			w.cur++
		}
	}
	return len(p), nil
}

// TestRunCancelKillsAfterGrace: a runner that ignores SIGTERM, with a
// child in a session of its own (as ansible-playbook is), is killed after
// the grace period, the child too. A stand-in for ansible-runner makes
// the escalation certain; no Ansible needed.
func TestRunCancelKillsAfterGrace(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	marker := fmt.Sprintf("700.%d%06d", os.Getpid(), time.Now().Nanosecond()/1000)
	runner := filepath.Join(t.TempDir(), "ansible-runner")
	script := `#!/bin/sh
trap '' TERM
setsid sleep ` + marker + ` &
echo '{"uuid": "u1", "counter": 1, "event": "playbook_on_start", "pid": '$!', "created": "2026-01-01T00:00:00.000000", "event_data": {"playbook": "site.yml"}}'
sleep ` + marker + `
`
	if err := os.WriteFile(runner, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	sink := progresstest.NewSink(onEmit(func(r *sdklog.Record) {
		if r.EventName() == progress.TypeOperationStarted {
			once.Do(func() { close(started) })
		}
	}))
	c := &capture{sink: sink, spans: tracetest.NewSpanRecorder()}
	c.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c.spans))
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Playbook{ProjectDir: projectDir, Playbook: "site.yml"},
			append(c.options(t), WithRunnerPath(runner), adapter.WithGracePeriod(500*time.Millisecond))...)
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the stand-in ended early: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(testutil.ProcessesWith(marker)) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in's sleeps never started: %v", testutil.ProcessesWith(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertNoProcess(t, runner, marker)
}
