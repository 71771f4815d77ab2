package main_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

const (
	incomingTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	incomingParent  = "00-" + incomingTraceID + "-00f067aa0ba902b7-01"
)

// A shell loop emits from inside run: every record is in the run's trace,
// carries the request's tracectx and the run's envelope, and the sequence
// numbers are contiguous, in the loop's order, from OperationStarted (1) to
// OperationCompleted.
func TestShellLoopEmitsInsideRunShareTraceAndSequence(t *testing.T) {
	const n = 40
	loop := script(t, fmt.Sprintf(`
i=1
while [ $i -le %d ]; do
	progressotel emit --type demo/Step --detail i:=$i --detail "name=step $i" || exit 90
	i=$((i+1))
done
progressotel transition --stream provisioning --status True --reason Provisioned --message "ready" || exit 91
`, n))
	r := runPO(t, []string{"TRACEPARENT=" + incomingParent, "X_TRACECTX_TRANSACTIONID=tx-1", "X_TRACECTX_TENANTID=tenant-a"},
		"run", "--operation", "Install", "--component", "shell-driver", "--resource-type", "nginx", "--resource-id", "web",
		"--tenant", "tenant-a", "--tracectx", "driverrequestid=drv-1", "--", loop)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := len(r.records); got != n+3 {
		t.Fatalf("%d records, want %d: %v", got, n+3, types(r.records))
	}
	if first, last := r.records[0].str("message"), r.records[n+2].str("message"); first != "common/OperationStarted" || last != "common/OperationCompleted" {
		t.Fatalf("framed by %s and %s", first, last)
	}
	spanID := r.records[0].str("spanId")
	for i, rec := range r.records {
		if got := rec.seq(); got != int64(i+1) {
			t.Fatalf("record %d (%s) has sequence %d", i, rec.str("message"), got)
		}
		// The run's span is a child of the caller's: same trace.
		if rec.str("traceId") != incomingTraceID || rec.str("spanId") != spanID || spanID == "00f067aa0ba902b7" {
			t.Fatalf("record %d: trace %s span %s, want trace %s and the run's span", i, rec.str("traceId"), rec.str("spanId"), incomingTraceID)
		}
		for k, v := range map[string]string{"tracectx.transactionid": "tx-1", "tracectx.tenantid": "tenant-a", "tracectx.driverrequestid": "drv-1", "tenant": "tenant-a"} {
			if rec.str(k) != v {
				t.Fatalf("record %d: %s = %q, want %q", i, k, rec.str(k), v)
			}
		}
		res, _ := rec["resource"].(map[string]any)
		comp, _ := rec["component"].(map[string]any)
		if res["type"] != "nginx" || res["id"] != "web" || comp["name"] != "shell-driver" {
			t.Fatalf("record %d: envelope %v %v", i, res, comp)
		}
		if i >= 1 && i <= n {
			if d := rec.details(); d["i"] != float64(i) || d["name"] != fmt.Sprintf("step %d", i) {
				t.Fatalf("record %d: details %v", i, d)
			}
		}
	}
	tr := r.records[n+1]
	if tr.str("message") != "provisioning" {
		t.Fatalf("transition record: %v", tr)
	}
	if strings.Contains(r.stderr, "exporting directly") {
		t.Fatalf("emits did not go through the run: %s", r.stderr)
	}
}

// The exit status is always the command's, never remapped.
func TestExitStatusIsTheCommands(t *testing.T) {
	for _, code := range []int{0, 1, 2, 3, 4, 42, 125, 255} {
		r := runPO(t, nil, "run", "--", "sh", "-c", fmt.Sprintf("exit %d", code))
		if r.code != code || r.signal != 0 {
			t.Errorf("exit %d: progressotel ended with %d (signal %v)", code, r.code, r.signal)
		}
		want := "common/OperationCompleted"
		if code != 0 {
			want = "common/OperationFailed"
		}
		if got := types(r.records); len(got) != 2 || got[1] != want {
			t.Errorf("exit %d: records %v", code, got)
		}
	}
	r := runPO(t, nil, "run", "--operation", "Install", "--failure-code", "RESOURCE_NOT_FOUND", "--", "sh", "-c", "exit 4")
	if d := r.records[1].details(); d["failureCode"] != "RESOURCE_NOT_FOUND" || d["description"] != "sh exited with status 4" || d["operation"] != "Install" || r.records[1].str("level") != "ERROR" {
		t.Errorf("OperationFailed: %v", r.records[1])
	}
}

// A command that is not found or cannot run: 127 and 126 as in a shell,
// with OperationFailed.
func TestCommandThatCannotRun(t *testing.T) {
	r := runPO(t, nil, "run", "--", "no-such-command-progressotel")
	if r.code != 127 {
		t.Fatalf("not found: exit %d", r.code)
	}
	if got := types(r.records); !slices.Equal(got, []string{"common/OperationStarted", "common/OperationFailed"}) {
		t.Fatalf("records %v", got)
	}
	notExec := script(t, "")
	chmod(t, notExec, 0o644)
	if r := runPO(t, nil, "run", "--", notExec); r.code != 126 {
		t.Fatalf("not executable: exit %d", r.code)
	}
}

// The child's environment: the run's span as TRACEPARENT, the tracectx
// values in their environment spelling, the socket; nothing stale from an
// enclosing run.
func TestChildEnvironment(t *testing.T) {
	r := runPO(t, []string{"TRACEPARENT=" + incomingParent, "BAGGAGE=user=alice", "X_TRACECTX_TRANSACTIONID=tx-1",
		"PROGRESSOTEL_SOCKET=/nonexistent/stale.sock", "X_TRACECTX_BAD=line\x01"},
		"run", "--tracectx", "request-id=r-7", "--", "sh", "-c", "env | grep -E '^(TRACEPARENT|BAGGAGE|X_TRACECTX_|PROGRESSOTEL_SOCKET)' | sort")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	spanID := r.records[0].str("spanId")
	if want := "00-" + incomingTraceID + "-" + spanID + "-01"; env["TRACEPARENT"] != want {
		t.Errorf("TRACEPARENT=%s, want %s", env["TRACEPARENT"], want)
	}
	if env["BAGGAGE"] != "user=alice" || env["X_TRACECTX_TRANSACTIONID"] != "tx-1" || env["X_TRACECTX_REQUEST_2DID"] != "r-7" {
		t.Errorf("env %v", env)
	}
	if _, ok := env["X_TRACECTX_BAD"]; ok {
		t.Errorf("an invalid tracectx value reached the child: %v", env)
	}
	if s := env["PROGRESSOTEL_SOCKET"]; s == "" || s == "/nonexistent/stale.sock" {
		t.Errorf("PROGRESSOTEL_SOCKET=%q", s)
	}
}

// --lines: each output line is passed through and recorded.
func TestLines(t *testing.T) {
	r := runPO(t, nil, "run", "--lines", "--", "sh", "-c", "echo one; echo two >&2; printf 'three'")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != "one\nthree" || !strings.Contains(r.stderr, "two\n") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	got := map[string]string{}
	for _, rec := range r.records {
		if rec.str("message") == "command/OutputLine" {
			got[rec.details()["line"].(string)] = rec.details()["stream"].(string)
		}
	}
	if want := map[string]string{"one": "stdout", "two": "stderr", "three": "stdout"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
}

// Invalid input: exit status 2 and nothing emitted, inside a run and
// outside one.
func TestInvalidInput(t *testing.T) {
	bad := [][]string{
		{"emit", "--type", "NoGroup"},
		{"emit", "--type", "a/B", "--details", "{not json"},
		{"emit", "--type", "a/B", "--details", "[1, 2]"},
		{"emit", "--type", "a/B", "--details", "{} {}"},
		{"emit", "--type", "a/B", "--severity", "loud"},
		{"emit", "--type", "a/B", "--detail", "n:=[1"},
		{"emit", "--type", "a/B", "--time", "yesterday"},
		{"emit", "--type", "a/B", "--tracectx", "bad key=v"},
		{"emit", "--details", "{}"},
		{"emit", "--type", "a/B", "--no-such-flag"},
		{"transition", "--stream", "Provisioning", "--status", "True"},
		{"transition", "--stream", "provisioning"},
		{"transition", "--stream", "details", "--status", "True"},
		{"run"},
		{"run", "--lines", "--lines-type", "bad", "--", "true"},
		{"run", "--adapter", "nonesuch", "--", "true"},
		{"nonesuch"},
	}
	for _, args := range bad {
		r := runPO(t, nil, args...)
		if r.code != 2 || len(r.records) != 0 || r.stdout != "" {
			t.Errorf("%v: exit %d, %d records, stdout %q", args, r.code, len(r.records), r.stdout)
		}
		if !strings.Contains(r.stderr, "progressotel") {
			t.Errorf("%v: no clear error: %q", args, r.stderr)
		}
	}
	// Inside a run: the emit fails with 2, the run records nothing of it.
	r := runPO(t, nil, "run", "--", "sh", "-c", `progressotel emit --type NoGroup; echo "emit=$?"`)
	if r.code != 0 || !strings.Contains(r.stdout, "emit=2") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if got := types(r.records); !slices.Equal(got, []string{"common/OperationStarted", "common/OperationCompleted"}) {
		t.Fatalf("records %v", got)
	}
}

// A process the run left behind emits after the run has ended: the
// socket is gone, so the event is exported directly, in the same trace,
// with a warning.
func TestEmitAfterTheRunEnded(t *testing.T) {
	done := t.TempDir() + "/done"
	r := runPO(t, nil, "run", "--", "sh", "-c",
		`(sleep 1; progressotel emit --type demo/Late; touch `+done+`) &`)
	waitFile(t, done)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	recs := readRecords(t, r.out)
	if got := types(recs); !slices.Equal(got, []string{"common/OperationStarted", "common/OperationCompleted", "demo/Late"}) {
		t.Fatalf("records %v", got)
	}
	if recs[2].str("traceId") != recs[0].str("traceId") || recs[2]["sequence"] != nil {
		t.Fatalf("late record %v", recs[2])
	}
	if !strings.Contains(r.stderr, "the enclosing run is gone") {
		t.Fatalf("no warning: %s", r.stderr)
	}
}

// A run inside a run, under OTEL_LOGS_EXPORTER=live plus another exporter
// written in capitals: the nested run leaves the live view to the
// enclosing one and keeps the other exporter, whatever its case.
func TestNestedRunKeepsItsOtherExporters(t *testing.T) {
	r := runPO(t, []string{"PROGRESSOTEL_OUTPUT=", "OTEL_LOGS_EXPORTER=live,JSON"},
		"run", "--operation", "Deploy", "--", "progressotel", "run", "--operation", "Migrate", "--", "true")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "telemetry:") {
		t.Errorf("a run went without telemetry:\n%s", r.stderr)
	}
	// The nested run's JSON lines, its own exporter, reach the shared stderr.
	if !strings.Contains(r.stderr, `"operation":"Migrate"`) {
		t.Errorf("no JSON record of the nested run:\n%s", r.stderr)
	}
}

// A run inside a run inside a run, as a shell driver structures its
// steps: every record, the nested runs' own and their emits', carries the
// top-level run's envelope (unless a nested run gives its own) and one
// contiguous sequence in one trace, handed over the socket emits use.
func TestNestedRunsShareTheEnvelopeAndTheSequence(t *testing.T) {
	inner := `progressotel emit --type deploy/Inner; progressotel run --operation test -- sh -c "progressotel emit --type deploy/Deepest"`
	r := runPO(t, nil, "run", "--operation", "Deploy", "--tenant", "acme", "--resource-type", "app", "--resource-id", "web", "--",
		"sh", "-c", `progressotel emit --type deploy/Step; progressotel run --operation build -- sh -c '`+inner+`';
progressotel run --operation other --tenant beta --resource-type db --resource-id main -- true`)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Count(r.stderr, "no exporter") > 0 {
		t.Errorf("a warning of its own from a nested run:\n%s", r.stderr)
	}
	want := []string{"common/OperationStarted", "deploy/Step", "common/OperationStarted", "deploy/Inner", "common/OperationStarted",
		"deploy/Deepest", "common/OperationCompleted", "common/OperationCompleted", "common/OperationStarted", "common/OperationCompleted",
		"common/OperationCompleted"}
	if got := types(r.records); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	for i, rec := range r.records {
		tenant, res := "acme", "web"
		if op := rec.details()["operation"]; op == "other" {
			tenant, res = "beta", "main" // its own envelope
		}
		resource, _ := rec["resource"].(map[string]any)
		if rec.seq() != int64(i+1) || rec.str("traceId") != r.records[0].str("traceId") ||
			rec.str("tenant") != tenant || resource["id"] != res {
			t.Errorf("record %d %s: sequence %d, trace %s, tenant %q, resource %v", i, rec.str("message"), rec.seq(), rec.str("traceId"), rec.str("tenant"), resource)
		}
	}
}

// A failed plain command whose stderr goes through progressotel (--lines,
// or the live view) says why in its OperationFailed: its last line on
// stderr, after its status, so that the reason reaches TNCO. Its stderr
// and stdout are still exactly what it wrote.
func TestFailedCommandSaysItsLastStderrLine(t *testing.T) {
	r := runPO(t, nil, "run", "--lines", "--operation", "Migrate", "--", "sh", "-c",
		`echo "creating tables" >&2; echo "ERROR: relation users already exists" >&2; echo "" >&2; printf 'out\n'; exit 3`)
	if r.code != 3 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if r.stderr != "creating tables\nERROR: relation users already exists\n\n" || r.stdout != "out\n" {
		t.Errorf("the command's streams changed: stdout %q stderr %q", r.stdout, r.stderr)
	}
	last := r.records[len(r.records)-1]
	if d := last.details(); last.str("message") != "common/OperationFailed" ||
		d["description"] != "sh exited with status 3: ERROR: relation users already exists" {
		t.Errorf("OperationFailed: %v", d)
	}
}
