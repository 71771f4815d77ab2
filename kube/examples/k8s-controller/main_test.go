package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/progressotel/progressotel/kube"
	"github.com/progressotel/progressotel/kube/internal/kubetest"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// TestDemo runs the demo and checks what make demo-k8s promises: the
// transitions in order, each once, with the previous state, and nothing
// for the loops that changed nothing or failed to persist.
func TestDemo(t *testing.T) {
	sink, narration := runDemo(t, nil)
	if n, m := len(sink.Records()), len(sink.Events()); n != m {
		t.Fatalf("%d records, only %d of them progress records", n, m)
	}
	checkReconciler(t, sink, narration)
}

// TestDemoAgainstAPIServer runs the same reconciler against a real
// kube-apiserver and etcd: the conflict is the API server's own (a stale
// resourceVersion), and each transition is still emitted once, after its
// status write was persisted. Then the apply-and-wait part: every object
// ready, the ComputeCluster Terminating until its finalizer goes.
func TestDemoAgainstAPIServer(t *testing.T) {
	env := kubetest.Start(t)
	sink, narration := runDemo(t, env.Admin)
	checkReconciler(t, sink, narration)
	if !strings.Contains(narration, "the object has been modified") {
		t.Errorf("the API server's conflict is not narrated:\n%s", narration)
	}

	var got []string
	for _, d := range sink.Events() {
		switch d.EventName {
		case kube.TypeObjectReady, kube.TypeObjectTerminating, kube.TypeObjectDeleted, kube.TypeObjectFailed:
			got = append(got, d.EventName+" "+d.Resource.Type+"/"+d.Resource.ID)
		case progress.TypeOperationCompleted, progress.TypeOperationFailed:
			got = append(got, d.EventName+" "+fmt.Sprint(d.Details["operation"]))
		}
	}
	// The Service is ready when applied; the Deployment and the
	// ComputeCluster when their controllers (the demo) say so.
	want := []string{
		kube.TypeObjectReady + " Service/shop",
		kube.TypeObjectReady + " Deployment/shop",
		kube.TypeObjectReady + " ComputeCluster/cluster-a",
		progress.TypeOperationCompleted + " Apply",
		kube.TypeObjectTerminating + " ComputeCluster/cluster-a",
		kube.TypeObjectDeleted + " ComputeCluster/cluster-a",
		progress.TypeOperationCompleted + " Delete",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("apply-and-wait records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMain(m *testing.M) { kubetest.Main(m) }

func runDemo(t *testing.T, cluster *rest.Config) (*progresstest.Sink, string) {
	t.Helper()
	sink := progresstest.NewSink()
	var narration strings.Builder
	err := run(context.Background(), &narration, cluster,
		otelbridge.WithExporters("none"), otelbridge.WithProcessor(sink.Processor()), otelbridge.WithoutTracerProvider())
	if err != nil {
		t.Fatalf("%v\n%s", err, narration.String())
	}
	return sink, narration.String()
}

// checkReconciler checks what make demo-k8s promises of the reconciler:
// the Widget's transitions in order, each once, with the previous state,
// and nothing for the loops that changed nothing or failed to persist.
func checkReconciler(t *testing.T, sink *progresstest.Sink, out string) {
	t.Helper()
	var got []string
	for i, d := range sink.Events() {
		if d.Resource.Type != "Widget" {
			continue
		}
		if d.Transition == nil {
			t.Fatalf("record %d (%q) is not a transition", i, d.EventName)
		}
		tr := d.Transition
		prev := "-"
		if tr.Previous != nil {
			prev = tr.Previous.Reason
		}
		got = append(got, fmt.Sprintf("%s %s->%s", d.EventName, prev, tr.Reason))
		if d.Component.Name != "demo.progressotel.io" || d.Scope["project"] != "web" {
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
	if n := strings.Count(out, "no change, nothing emitted"); n != 3 {
		t.Errorf("%d loops without change, want 3:\n%s", n, out)
	}
	if !strings.Contains(out, "reconcile 3: status update failed") {
		t.Errorf("the failed status update is not narrated:\n%s", out)
	}
}
