package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/internal/testkit/wiretest"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// The Python sender (python/progressotel), run by Debian's python3 against
// the real collector and broker: its records give the TNCO message the Go
// library's records give.

// debianPython is the interpreter Ignition drivers run on here.
const debianPython = "/usr/bin/python3"

var pythonDir = filepath.Join(repoRoot, "python")

// pythonEnv is the test's environment without a caller's telemetry
// settings, plus extra; Python writes no bytecode into the tree.
func pythonEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OTEL_") || strings.HasPrefix(name, "X_TRACECTX_") || strings.HasPrefix(name, "PROGRESSOTEL_") ||
			name == "TRACEPARENT" || name == "TRACESTATE" || name == "BAGGAGE" {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "PYTHONDONTWRITEBYTECODE=1"), extra...)
}

// pyService and pyEvent are the input of python/tests/send_events.py.
type pyService struct {
	Component          map[string]string `json:"component,omitempty"`
	Resource           map[string]string `json:"resource,omitempty"`
	Scope              map[string]string `json:"scope,omitempty"`
	ObservedGeneration int64             `json:"observedGeneration,omitempty"`
	Events             []pyEvent         `json:"events"`
}

type pyEvent struct {
	Type        string            `json:"type"`
	Details     json.RawMessage   `json:"details,omitempty"`
	Time        string            `json:"time,omitempty"`
	Severity    string            `json:"severity,omitempty"`
	Traceparent string            `json:"traceparent,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
}

// sendPython runs send_events.py with services against the collector's
// OTLP/HTTP endpoint.
func sendPython(t *testing.T, py string, col *collector, services []pyService) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"services": services})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join(pythonDir, "tests", "send_events.py"), path)
	cmd.Env = pythonEnv("OTEL_EXPORTER_OTLP_ENDPOINT=http://"+col.http, "OTEL_SERVICE_NAME=python-e2e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("send_events.py: %v\n%s", err, out)
	}
}

// goldenMessages reads the corpus's TNCO messages (wire.AppendMessage of
// the Go library's records), by case.
func goldenMessages(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "internal", "testkit", "wiretest", "testdata", "message.golden"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, part := range strings.Split(string(b), "== ")[1:] {
		name, msg, _ := strings.Cut(part, "\n")
		out[name] = strings.TrimRight(msg, "\n")
	}
	return out
}

// Every case of the golden corpus that a Python driver can express (JSON
// details, no Go types, no secrets or limits) reaches Kafka byte for byte
// as the same message from every sender, through the one real collector:
// (a) the Go library, its records emitted through the SDK's OTLP exporter
// (standard records, no body), and (b) the Python sender. Both equal
// wire.AppendMessage of the Go records the driver sent (the builder the
// collector runs, in-process) and the corpus's message.golden: details
// flattened with escaped keys, slices, nulls, empty maps, numbers, control
// characters, a scalar, no details, and a failure with its scope, trace
// and generation on the tenant's topic.
func TestGoldenMessagesFromEverySender(t *testing.T) {
	py := testutil.RequireTool(t, debianPython, "apt-get install python3")
	golden := goldenMessages(t)
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"acme"}, nil)
	col.start()

	const when = "2026-11-29T14:03:07.412Z" // wiretest.When
	play := pyService{Component: map[string]string{"name": "ansible-driver", "version": "3.2.1"},
		Resource: map[string]string{"type": "Play", "id": "site.yml"}}
	cases := []struct {
		name, typ string
		details   string // the Python input; "" takes the golden message's details
	}{
		{"small-map", "ansible/TaskStartedOnHost", ""},
		{"struct-details", "ansible/TaskCompletedOnHost", ""},
		{"escaped-keys", "test/Escapes", ""},
		{"slices-and-maps", "ansible/PlaybookResult", ""},
		{"numbers-and-times", "test/Numbers", ""},
		{"scalar-details", "test/Scalar", `"just text"`},
		{"no-details", "common/OperationStarted", `null`},
		{"control-characters", "test/Control", ""},
	}
	var services []pyService
	want := map[string]string{}   // the golden message, by progressEventType
	caseOf := map[string]string{} // the case, by progressEventType
	for _, c := range cases {
		g, ok := golden[c.name]
		if !ok {
			t.Fatalf("case %s is not in the corpus", c.name)
		}
		details := json.RawMessage(c.details)
		if c.details == "" {
			var m struct{ Details json.RawMessage }
			if err := json.Unmarshal([]byte(g), &m); err != nil {
				t.Fatal(err)
			}
			details = m.Details
		}
		s := play // one service each: each record is the first of its resource, sequence 1
		s.Events = []pyEvent{{Type: c.typ, Details: details, Time: when}}
		services = append(services, s)
		want[c.typ] = g
		caseOf[c.typ] = c.name
	}
	var failure struct{ Details json.RawMessage }
	if err := json.Unmarshal([]byte(golden["failure-with-scope"]), &failure); err != nil {
		t.Fatal(err)
	}
	services = append(services, pyService{
		Component:          map[string]string{"name": "kube-controller"},
		Resource:           map[string]string{"type": "Cluster", "id": "web", "namespace": "ns-1", "uid": "uid-7"},
		Scope:              map[string]string{"organization": "acme", "project": "shop", "region.eu": "x"},
		ObservedGeneration: 4,
		Events: []pyEvent{{Type: "common/OperationFailed", Details: failure.Details, Time: when, Severity: "ERROR",
			Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
	})
	want["common/OperationFailed"] = golden["failure-with-scope"]
	caseOf["common/OperationFailed"] = "failure-with-scope"
	n := len(want)
	pyCase := map[string]bool{} // the cases Python expresses, by name
	for _, name := range caseOf {
		pyCase[name] = true
	}

	// (b) The Python sender first, all of it, so that the first n
	// messages are its own.
	sendPython(t, py, col, services)
	cons.waitFor(t, 60*time.Second, "a message per case from Python", func(m []message) bool { return len(m) >= n })

	// (a) Then the same cases of the corpus from the Go library, each
	// through a Recorder of its own (sequence 1, as in the corpus) on one
	// SDK provider with the OTLP exporter, the library's redaction on as
	// the corpus has it.
	sent := &progresstest.Exporter{}
	d := newDriver(t, col.grpc, driverOpt{libRedacted: true, capture: sent})
	var sentCase []string
	for _, c := range wiretest.Cases() {
		if !pyCase[c.Name] {
			continue
		}
		rec := progress.NewRecorder(progress.WithLoggerProvider(d.lp))
		if err := c.Emit(context.Background(), rec, d.lp.Logger(wire.ScopeName)); err != nil {
			t.Fatalf("case %s: %v", c.Name, err)
		}
		sentCase = append(sentCase, c.Name)
	}
	d.flush(t)
	cons.waitFor(t, 60*time.Second, "a message per case from Go", func(m []message) bool { return len(m) >= 2*n })
	time.Sleep(time.Second) // anything more would have arrived by now
	msgs := cons.all()
	if len(msgs) != 2*n || len(sentCase) != n {
		t.Fatalf("%d messages, want %d (%d cases sent by Go, want %d): %s", len(msgs), 2*n, len(sentCase), n, summary(msgs))
	}
	// What the Go driver sent, through the in-process builder.
	built := map[string]string{} // by case
	recs := sent.Records()
	if len(recs) != n {
		t.Fatalf("the Go driver sent %d records, want %d", len(recs), n)
	}
	for i := range recs {
		m, ok := wire.AppendMessage(nil, &recs[i])
		if !ok {
			t.Fatalf("case %s: not a progress record", sentCase[i])
		}
		built[sentCase[i]] = string(m)
		if b := recs[i].Body(); b.Type() != attribute.EMPTY {
			t.Errorf("case %s: the Go driver sent a body (%v): its records are standard records", sentCase[i], b)
		}
	}

	for i, m := range msgs {
		sender := "Python"
		if i >= n {
			sender = "Go"
		}
		var head struct{ ProgressEventType string }
		if err := json.Unmarshal(m.Value, &head); err != nil {
			t.Fatalf("%s message on %s: %v: %s", sender, m.Topic, err, m.Value)
		}
		w, ok := want[head.ProgressEventType]
		if !ok {
			t.Errorf("unexpected %s message on %s: %s", sender, m.Topic, m.Value)
			continue
		}
		name := caseOf[head.ProgressEventType]
		if string(m.Value) != w {
			t.Errorf("%s, %s:\n got %s\nwant %s (the golden corpus)", name, sender, m.Value, w)
		}
		if string(m.Value) != built[name] {
			t.Errorf("%s, %s:\n got %s\nwant %s (wire.AppendMessage of the Go record)", name, sender, m.Value, built[name])
		}
		if head.ProgressEventType == "common/OperationFailed" {
			if m.Topic != "progress_events_acme" || m.Headers["tenantId"] != "acme" || string(m.Key) != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("the tenant's event from %s: topic %s, tenantId %q, key %q; want progress_events_acme, acme, the trace id",
					sender, m.Topic, m.Headers["tenantId"], m.Key)
			}
		} else if m.Topic != "progress_unrouted" {
			t.Errorf("%s, %s: on %s, want progress_unrouted (no tenant)", name, sender, m.Topic)
		}
	}
	// Each case once from each sender.
	seen := map[string]int{}
	for _, m := range msgs {
		var head struct{ ProgressEventType string }
		_ = json.Unmarshal(m.Value, &head)
		seen[head.ProgressEventType]++
	}
	for typ := range want {
		if seen[typ] != 2 {
			t.Errorf("%d messages for %s, want 2 (one from each sender)", seen[typ], typ)
		}
	}
	// The collector built every message: none was refused or lost.
	if got := col.metric("otelcol_processor_tnco_records", nil); got != float64(2*n) {
		t.Errorf("tnco built %v messages, want %d", got, 2*n)
	}
}

// numbersAsGo decodes JSON as a Go driver would hold it: integers as
// int64, other numbers as float64.
func numbersAsGo(t *testing.T, raw string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var conv func(any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, _ := x.Float64()
			return f
		case map[string]any:
			for k, e := range x {
				x[k] = conv(e)
			}
		case []any:
			for i, e := range x {
				x[i] = conv(e)
			}
		}
		return v
	}
	return conv(v).(map[string]any)
}

// The same events of one request, in one trace with its tracectx headers,
// sent by the Python sender and by a Go driver on this library (standard
// records, its redaction off): both land on the tenant's topic with the
// same messages, byte for byte, sequence included, and the collector
// redacts the secrets of both.
func TestPythonSenderMatchesTheGoDriver(t *testing.T) {
	py := testutil.RequireTool(t, debianPython, "apt-get install python3")
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()

	const (
		traceID = "0af7651916cd43dd8448eb211c80319c"
		spanID  = "b7ad6b7169203331"
		topic   = "progress_events_tenant-a"
	)
	when := time.Date(2026, 12, 6, 8, 0, 1, 234_567_000, time.UTC)
	events := []struct{ typ, details, severity string }{
		{"ansible/PlaybookStarted", `{"playbook":"site.yml","hosts":["web-1","web-2"],"check":false}`, "INFO"},
		{"ansible/TaskCompletedOnHost", `{"taskName":"install <nginx> & co","taskResult":{"rc":0,"stdout":"a\nb","ratio":0.25,"changed":true},"a.b":[1,"x",null,{"k.k":2}],"100%":{"n%":null,"e":{}}}`, "INFO"},
		{"common/Progress", `{"done":3,"total":10,"unit":"tasks"}`, "INFO"},
		{"ansible/TaskFailed", `{"taskName":"restart","msg":"ünïcödé ✓"}`, "WARN"},
		{"ansible/TaskStarted", `{"args":{"password":"hunter2","dest":"/etc"},"cmd":"login --token ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`, "INFO"},
	}
	env := progress.Envelope{
		Component: progress.Component{Name: "python-driver", Version: "1.0.0"},
		Resource:  progress.Resource{Type: "Assembly", ID: "asm-1"},
		Scope:     map[string]string{"tenant": "tenant-a", "project": "p.1"},
	}
	headers := map[string]string{"x-tracectx-TransactionId": "tx-9", "X-TraceCtx-ProcessId": "proc-1", "x-tracectx-driver.req-id": "d-1"}

	svc := pyService{Component: map[string]string{"name": env.Component.Name, "version": env.Component.Version},
		Resource: map[string]string{"type": env.Resource.Type, "id": env.Resource.ID}, Scope: env.Scope}
	for i, e := range events {
		svc.Events = append(svc.Events, pyEvent{Type: e.typ, Details: json.RawMessage(e.details), Severity: e.severity,
			Time:        when.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano),
			Traceparent: "00-" + traceID + "-" + spanID + "-01", Headers: headers})
	}
	sendPython(t, py, col, []pyService{svc})
	n := len(events)
	cons.waitFor(t, 60*time.Second, "the Python sender's messages", func(m []message) bool { return len(onTopic(m, topic)) >= n })

	d := newDriver(t, col.grpc, driverOpt{})
	tid, _ := trace.TraceIDFromHex(traceID)
	sid, _ := trace.SpanIDFromHex(spanID)
	ctx := trace.ContextWithRemoteSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true}))
	ctx = withTraceCtx(t, ctx, map[string]string{"transactionid": "tx-9", "processid": "proc-1", "driver.req-id": "d-1"})
	sev := map[string]log.Severity{"INFO": log.SeverityInfo, "WARN": log.SeverityWarn}
	for i, e := range events {
		if err := d.rec.Record(ctx, progress.Event{Type: e.typ, Details: numbersAsGo(t, e.details), Envelope: env,
			Time: when.Add(time.Duration(i) * time.Millisecond), Severity: sev[e.severity]}); err != nil {
			t.Fatal(err)
		}
	}
	d.flush(t)
	msgs := onTopic(cons.waitFor(t, 60*time.Second, "the Go driver's messages", func(m []message) bool { return len(onTopic(m, topic)) >= 2*n }), topic)
	if len(msgs) != 2*n {
		t.Fatalf("%d messages on %s, want %d: %s", len(msgs), topic, 2*n, summary(msgs))
	}
	if got := col.metric("otelcol_processor_tnco_records", nil); got != float64(2*n) {
		t.Errorf("tnco built %v messages, want %d (the Python sender's and the Go driver's)", got, 2*n)
	}
	for i := 0; i < n; i++ {
		pyMsg, goMsg := msgs[i], msgs[n+i]
		for _, m := range []message{pyMsg, goMsg} {
			if bytes.Contains(m.Value, []byte("hunter2")) || bytes.Contains(m.Value, []byte("ghp_abc")) {
				t.Errorf("event %d: a secret reached Kafka: %s", i, m.Value)
			}
		}
		if !bytes.Equal(pyMsg.Value, goMsg.Value) {
			t.Errorf("event %d:\nPython %s\n    Go %s", i, pyMsg.Value, goMsg.Value)
		}
		if pyMsg.Headers["tenantId"] != "tenant-a" || string(pyMsg.Key) != traceID {
			t.Errorf("event %d: tenantId %q, key %q; want tenant-a and the trace id", i, pyMsg.Headers["tenantId"], pyMsg.Key)
		}
		var m struct {
			Sequence int
			TraceCtx string `json:"tracectx.transactionid"`
		}
		if err := json.Unmarshal(pyMsg.Value, &m); err != nil || m.Sequence != i+1 || m.TraceCtx != "tx-9" {
			t.Errorf("event %d: sequence %d, tracectx.transactionid %q (%v); want %d, tx-9", i, m.Sequence, m.TraceCtx, err, i+1)
		}
	}
}

// The Python unit tests (python/tests/test_*.py): the event, the
// flattening, the context, the configuration, and the queue (drops with a
// dead endpoint and a queue of 4), with Debian's python3.
func TestPythonUnitTests(t *testing.T) {
	py := testutil.RequireTool(t, debianPython, "apt-get install python3")
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
	cmd.Dir = pythonDir
	cmd.Env = pythonEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unittest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\nOK") {
		t.Fatalf("python unittest did not report OK:\n%s", out)
	}
	t.Logf("%s", out)
}
