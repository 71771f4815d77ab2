package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testutil"
	"github.com/progressotel/progressotel/otelbridge"
)

// TestDemoJSONLines checks the acceptance criteria of the demo: every line
// is a seed-shaped event with nested details and real trace ids, and task
// events are recorded in their own child spans.
func TestDemoJSONLines(t *testing.T) {
	var out testutil.SyncBuffer
	if err := run(0, "tenant-a", otelbridge.WithExporters("json"), otelbridge.WithWriter(&out)); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	var playSpan string
	taskSpans := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("invalid JSON line %q: %v", sc.Text(), err)
		}
		if line["eventType"] != "ResourceTransitionProgressEvent" {
			t.Errorf("eventType = %v", line["eventType"])
		}
		typ, _ := line["progressEventType"].(string)
		types[typ]++
		if _, ok := line["details"].(map[string]any); !ok {
			t.Errorf("%s: details not a nested object: %v", typ, line["details"])
		}
		traceID, _ := line["traceId"].(string)
		spanID, _ := line["spanId"].(string)
		if len(traceID) != 32 || strings.Trim(traceID, "0") == "" || len(spanID) != 16 || strings.Trim(spanID, "0") == "" {
			t.Errorf("%s: trace/span ids %q %q", typ, traceID, spanID)
		}
		if line["tracectx.transactionid"] != "7d9b1c52-tx" || line["tracectx.tenantid"] != "tenant-a" {
			t.Errorf("%s: tracectx missing: %v", typ, line)
		}
		switch {
		case typ == "ansible/PlayStarted":
			playSpan = spanID
		case strings.HasPrefix(typ, "ansible/Task"):
			taskSpans[spanID] = true
		}
		if strings.Contains(sc.Text(), "s3cr3t") || strings.Contains(sc.Text(), "tok-123") {
			t.Errorf("secret leaked: %s", sc.Text())
		}
		if typ == "ansible/TaskStarted" {
			d := line["details"].(map[string]any)
			if d["argsHidden"] == true && d["args"] != nil {
				t.Errorf("no_log task must leave args out: %v", d)
			}
		}
	}
	for _, typ := range []string{
		"common/OperationStarted", "ansible/PlayStarted", "ansible/TaskStarted", "ansible/TaskStartedOnHost",
		"ansible/TaskCompletedOnHost", "ansible/TaskRetryOnHost", "ansible/TaskFailedOnHost",
		"common/Progress", "ansible/PlaybookResult", "common/OperationCompleted",
	} {
		if types[typ] == 0 {
			t.Errorf("no %s event", typ)
		}
	}
	if types["common/Progress"] != len(playbook) {
		t.Errorf("%d progress events, want one per task (%d)", types["common/Progress"], len(playbook))
	}
	if playSpan == "" || taskSpans[playSpan] || len(taskSpans) != len(playbook) {
		t.Errorf("task events must have their own span per task: play %s, tasks %v", playSpan, taskSpans)
	}
}
