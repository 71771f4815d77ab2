package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge"
)

// TestDemo runs the demo against the real OpenTofu: the JSON lines hold
// every resource's start and end, the provisioners' output, an N-of-M
// progress ending at M of M for both operations, all in the driver's trace.
func TestDemo(t *testing.T) {
	tofu := testutil.Tofu(t)
	var out testutil.SyncBuffer
	const password = "demo-Pa55word-0419"
	if err := run(context.Background(), tofu, password, otelbridge.WithExporters("json"), otelbridge.WithWriter(&out)); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	traces := map[string]bool{}
	var progress []string
	for text, line := range testutil.JSONLines(t, bytes.NewReader(out.Bytes())) {
		typ, _ := line["progressEventType"].(string)
		types[typ]++
		traces[line["traceId"].(string)] = true
		if line["tracectx.transactionid"] != "5e0c-tf-tx" {
			t.Errorf("%s without the tracectx", typ)
		}
		if typ == "common/Progress" {
			d := line["details"].(map[string]any)
			b, _ := json.Marshal([]any{d["completed"], d["total"]})
			progress = append(progress, string(b))
		}
		if strings.Contains(text, password) {
			t.Errorf("the database password leaked: %s", text)
		}
	}
	for typ, n := range map[string]int{
		"terraform/ApplyStarted": 12, "terraform/ApplyCompleted": 12, "terraform/ProvisionStarted": 6,
		"common/OperationStarted": 2, "common/OperationCompleted": 2,
	} {
		if types[typ] != n {
			t.Errorf("%d %s, want %d (all: %v)", types[typ], typ, n, types)
		}
	}
	if types["terraform/ProvisionOutput"] < 12 {
		t.Errorf("%d provisioner lines", types["terraform/ProvisionOutput"])
	}
	if len(traces) != 2 {
		t.Errorf("%d traces, want one per operation", len(traces))
	}
	if got := strings.Join(progress, " "); !strings.HasSuffix(got, "[6,6]") || !strings.Contains(got, "[6,6] [0,6]") {
		t.Errorf("progress %s", got)
	}
}
