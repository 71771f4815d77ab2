package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

// capture keeps clones of the records the SDK hands to its processors.
type capture struct {
	mu      sync.Mutex
	records []sdklog.Record
}

func (c *capture) OnEmit(_ context.Context, r *sdklog.Record) error {
	clone := r.Clone()
	c.mu.Lock()
	c.records = append(c.records, clone)
	c.mu.Unlock()
	return nil
}
func (c *capture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *capture) Shutdown(context.Context) error                         { return nil }
func (c *capture) ForceFlush(context.Context) error                       { return nil }

// TestDemo runs the demo and checks what make demo-k8s promises: the
// transitions in order, each once, with the previous state, and nothing
// for the loops that changed nothing or failed to persist.
func TestDemo(t *testing.T) {
	c := &capture{}
	var narration strings.Builder
	err := run(context.Background(), &narration,
		otelbridge.WithExporters("none"), otelbridge.WithProcessor(c), otelbridge.WithoutTracerProvider())
	if err != nil {
		t.Fatal(err)
	}

	var got []string
	for i := range c.records {
		d, err := progress.Decode(&c.records[i])
		if err != nil || d.Transition == nil {
			t.Fatalf("record %d (%q) is not a transition: %v", i, c.records[i].EventName(), err)
		}
		tr := d.Transition
		prev := "-"
		if tr.Previous != nil {
			prev = tr.Previous.Reason
		}
		got = append(got, fmt.Sprintf("%s %s->%s", c.records[i].EventName(), prev, tr.Reason))
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
