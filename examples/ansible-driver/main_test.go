package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge"
)

// TestDemoReplay runs the demo as `make demo` does on a machine without
// Ansible: the recorded real run, through the adapter, to JSON lines.
func TestDemoReplay(t *testing.T) {
	checkDemo(t, options{tenant: "tenant-a", replay: true}, "replaying a recorded real run")
}

// TestDemoLive runs the real playbook with the real Ansible, as `make
// demo` does where it is installed (in CI it is: a missing Ansible fails).
func TestDemoLive(t *testing.T) {
	testutil.RequireTool(t, "ansible-runner", "apt-get install python3-ansible-runner")
	checkDemo(t, options{tenant: "tenant-a"}, "running the real playbook")
}

// checkDemo checks what the demo shows: every line a seed-shaped event
// with nested details, the request's trace and tracectx; the Ansible
// driver's events in their own spans; the no_log password and the token
// never shown, the token's key redacted.
func checkDemo(t *testing.T, o options, notice string) {
	t.Helper()
	var out, note testutil.SyncBuffer
	o.notice = &note
	if err := run(context.Background(), o, otelbridge.WithExporters("json"), otelbridge.WithWriter(&out)); err != nil {
		t.Fatalf("%v\n%s", err, note.String())
	}
	lines := strings.Split(strings.TrimSpace(note.String()), "\n")
	if !strings.Contains(lines[0], notice) || len(lines) < 3 || !strings.HasPrefix(lines[1], "ansible-driver: done: ") {
		t.Errorf("notice %q, want one line saying %q, the done line, then the recap", note.String(), notice)
	}
	for _, l := range lines[2:] {
		// The recap: a line per host, short enough for any terminal.
		if !strings.HasPrefix(l, "  ") || !strings.Contains(l, " ok=") || len(l) > 100 {
			t.Errorf("recap line %q, want a host's counts within 100 columns", l)
		}
	}
	types := map[string]int{}
	spans := map[string]map[string]bool{} // type → span ids
	var traceID string
	for text, line := range testutil.JSONLines(t, bytes.NewReader(out.Bytes())) {
		typ, _ := line["progressEventType"].(string)
		if line["eventType"] != "ResourceTransitionProgressEvent" || typ == "" {
			t.Errorf("not a progress event: %s", text)
			continue
		}
		types[typ]++
		if _, ok := line["details"].(map[string]any); !ok {
			t.Errorf("%s: details not a nested object: %v", typ, line["details"])
		}
		id, _ := line["traceId"].(string)
		if traceID == "" {
			traceID = id
		}
		if len(id) != 32 || id != traceID {
			t.Errorf("%s: trace id %q, want one trace %q", typ, id, traceID)
		}
		if line["tracectx.transactionid"] != "7d9b1c52-tx" || line["tracectx.tenantid"] != "tenant-a" {
			t.Errorf("%s: tracectx missing: %v", typ, line)
		}
		if spans[typ] == nil {
			spans[typ] = map[string]bool{}
		}
		spans[typ][line["spanId"].(string)] = true
		for _, secret := range []string{"s3cr3t-demo-password", "tok-demo-123"} {
			if strings.Contains(text, secret) {
				t.Errorf("secret %q shown: %s", secret, text)
			}
		}
		if d := line["details"].(map[string]any); typ == "ansible/TaskStarted" && d["taskName"] == "Set the API token" {
			if d["args"].(map[string]any)["api_token"] != "[REDACTED]" {
				t.Errorf("api_token argument not redacted: %v", d)
			}
		}
	}
	for typ, n := range map[string]int{
		"common/OperationStarted": 1, "ansible/PlayStarted": 1, "ansible/TaskStarted": 7, "ansible/TaskStartedOnHost": 14,
		"ansible/TaskCompletedOnHost": 13, "ansible/TaskRetryOnHost": 1, "ansible/TaskFailedOnHost": 1,
		"ansible/PlaybookResult": 1, "common/OperationCompleted": 1,
	} {
		if types[typ] != n {
			t.Errorf("%d %s events, want %d", types[typ], typ, n)
		}
	}
	// Task starts each in their task's span, host events in host spans,
	// none in the playbook span of the operation events.
	if len(spans["ansible/TaskStarted"]) != 7 || len(spans["ansible/TaskStartedOnHost"]) != 14 {
		t.Errorf("task spans %d, host spans %d", len(spans["ansible/TaskStarted"]), len(spans["ansible/TaskStartedOnHost"]))
	}
	for op := range spans["common/OperationStarted"] {
		if spans["ansible/TaskStarted"][op] || spans["ansible/TaskStartedOnHost"][op] {
			t.Errorf("task events in the playbook span")
		}
	}
}
