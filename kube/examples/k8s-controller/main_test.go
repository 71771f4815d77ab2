package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// TestDemo runs the demo and checks what make demo-k8s promises: the
// transitions in order, each once, with the previous state, and nothing
// for the loops that changed nothing or failed to persist.
func TestDemo(t *testing.T) {
	sink := progresstest.NewSink()
	var narration strings.Builder
	err := run(context.Background(), &narration,
		otelbridge.WithExporters("none"), otelbridge.WithProcessor(sink.Processor()), otelbridge.WithoutTracerProvider())
	if err != nil {
		t.Fatal(err)
	}

	var got []string
	if n, m := len(sink.Records()), len(sink.Events()); n != m {
		t.Fatalf("%d records, only %d of them progress records", n, m)
	}
	for i, d := range sink.Events() {
		if d.Transition == nil {
			t.Fatalf("record %d (%q) is not a transition", i, d.EventName)
		}
		tr := d.Transition
		prev := "-"
		if tr.Previous != nil {
			prev = tr.Previous.Reason
		}
		got = append(got, fmt.Sprintf("%s %s->%s", d.EventName, prev, tr.Reason))
		if d.Resource.Type != "Widget" || d.Component.Name != "demo.progressotel.io" || d.Scope["project"] != "web" {
			t.Errorf("record %d envelope %+v", i, d.Envelope)
		}
	}
	want := []string{
		"provisioning -->Provisioning",
		"lifecycle -->Pending",
		"provisioning Provisioning->Provisioned",
		"lifecycle Pending->Running",
		"lifecycle Running->Stopped",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("transitions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out := narration.String()
	if n := strings.Count(out, "no change, nothing emitted"); n != 3 {
		t.Errorf("%d loops without change, want 3:\n%s", n, out)
	}
	if !strings.Contains(out, "reconcile 3: status update failed") {
		t.Errorf("the failed status update is not narrated:\n%s", out)
	}
}
