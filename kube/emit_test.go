package kube_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/progressotel/progressotel/kube"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// ComputeCluster is a minimal custom resource, registered in testScheme.
type ComputeCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (c *ComputeCluster) DeepCopyObject() runtime.Object {
	out := &ComputeCluster{TypeMeta: c.TypeMeta}
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// Gadget is a valid client.Object that no scheme knows.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (g *Gadget) DeepCopyObject() runtime.Object {
	out := &Gadget{TypeMeta: g.TypeMeta}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

var computeGV = schema.GroupVersion{Group: "compute.unikorn-cloud.org", Version: "v1alpha1"}

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypes(computeGV, &ComputeCluster{})
	metav1.AddToGroupVersion(s, computeGV)
	return s
}

// sink captures records on the real SDK (progresstest).
type sink struct{ *progresstest.Sink }

// decoded returns the captured transitions, in order.
func (s sink) decoded(t testing.TB) []progresstest.Event {
	t.Helper()
	evs := s.Events()
	if n := len(s.Records()); n != len(evs) {
		t.Fatalf("%d records, %d of them progress records", n, len(evs))
	}
	for i, e := range evs {
		if e.Transition == nil {
			t.Fatalf("record %d (%s) is not a transition", i, e.EventName)
		}
	}
	return evs
}

func newRecorder(t testing.TB) (*progress.Recorder, sink) {
	t.Helper()
	s := progresstest.NewSink()
	t.Cleanup(func() { _ = s.LoggerProvider().Shutdown(context.Background()) })
	return s.Recorder(), sink{s}
}

// installDefault makes the package-level functions record into a sink.
func installDefault(t testing.TB) (*progress.Recorder, sink) {
	t.Helper()
	rec, s := newRecorder(t)
	prev := progress.Default()
	progress.SetDefault(rec)
	t.Cleanup(func() { progress.SetDefault(prev) })
	return rec, s
}

func cluster(labels map[string]string) *ComputeCluster {
	return &ComputeCluster{ObjectMeta: metav1.ObjectMeta{
		Name: "cluster-a", Namespace: "org-acme-proj-web", UID: types.UID("0b6f4c1e-uid"), Generation: 3, Labels: labels,
	}}
}

func TestEmitSeedSignature(t *testing.T) {
	_, s := installDefault(t)
	obj := cluster(map[string]string{
		kube.LabelOrganization: "acme", kube.LabelProject: "web", "app.kubernetes.io/name": "ignored",
	})
	kube.NewEmitter().Emit(context.Background(), testScheme(t), obj, progress.StreamProvisioning, "False", "Provisioning", "the cluster is being provisioned")
	kube.NewEmitter().Emit(context.Background(), testScheme(t), obj, progress.StreamLifecycle, "True", "Running", "")

	got := s.decoded(t)
	if len(got) != 2 {
		t.Fatalf("%d records, want 2", len(got))
	}
	d := got[0]
	if d.EventName != progress.StreamProvisioning {
		t.Errorf("EventName %q", d.EventName)
	}
	wantRes := progress.Resource{Type: "ComputeCluster", ID: "cluster-a", Namespace: "org-acme-proj-web", UID: "0b6f4c1e-uid"}
	if d.Component.Name != "compute.unikorn-cloud.org" || d.Resource != wantRes || d.ObservedGeneration != 3 {
		t.Errorf("envelope %+v, want component compute.unikorn-cloud.org, resource %+v, generation 3", d.Envelope, wantRes)
	}
	if want := map[string]string{"organization": "acme", "project": "web"}; !maps.Equal(d.Scope, want) {
		t.Errorf("scope %v, want %v", d.Scope, want)
	}
	if d.Tenant != "acme" {
		t.Errorf("tenant %q", d.Tenant)
	}
	want := progress.Condition{Status: "False", Reason: "Provisioning", Message: "the cluster is being provisioned"}
	if d.Transition.Condition != want || d.Transition.Previous != nil {
		t.Errorf("transition %+v previous %v", d.Transition.Condition, d.Transition.Previous)
	}
	// Parity: the lifecycle record has the same envelope.
	l := got[1]
	if l.EventName != progress.StreamLifecycle || l.Resource != d.Resource || l.Component != d.Component ||
		!maps.Equal(l.Scope, d.Scope) || l.ObservedGeneration != d.ObservedGeneration {
		t.Errorf("lifecycle envelope %+v differs from provisioning %+v", l.Envelope, d.Envelope)
	}
	if l.Transition.Reason != "Running" {
		t.Errorf("lifecycle reason %q", l.Transition.Reason)
	}
}

func TestEmitScope(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   map[string]string
	}{
		{"organization only", map[string]string{kube.LabelOrganization: "acme"}, map[string]string{"organization": "acme"}},
		{"organization and project", map[string]string{kube.LabelOrganization: "acme", kube.LabelProject: "web"},
			map[string]string{"organization": "acme", "project": "web"}},
		{"empty project label", map[string]string{kube.LabelOrganization: "acme", kube.LabelProject: ""}, map[string]string{"organization": "acme"}},
		{"no labels", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := installDefault(t)
			kube.NewEmitter().Emit(context.Background(), testScheme(t), cluster(tc.labels), progress.StreamProvisioning, "True", "Provisioned", "")
			got := s.decoded(t)
			if len(got) != 1 {
				t.Fatalf("%d records", len(got))
			}
			if !maps.Equal(got[0].Scope, tc.want) {
				t.Errorf("scope %v, want %v", got[0].Scope, tc.want)
			}
			if _, ok := got[0].Scope["project"]; ok && tc.want["project"] == "" {
				t.Error("project key present for an organization-scoped resource")
			}
		})
	}
}

func TestEmitterScopeLabelsAndVersion(t *testing.T) {
	rec, s := newRecorder(t)
	e := kube.NewEmitter(
		kube.WithRecorder(rec),
		kube.WithComponentVersion("v1.2.3"),
		kube.WithScopeLabels(map[string]string{"example.com/tenant": "tenant", "example.com/team": "team"}),
	)
	obj := cluster(map[string]string{"example.com/tenant": "t-1", kube.LabelOrganization: "acme"})
	if err := e.Emit(context.Background(), testScheme(t), obj, "health", "True", "Healthy", ""); err != nil {
		t.Fatal(err)
	}
	got := s.decoded(t)
	if want := map[string]string{"tenant": "t-1"}; !maps.Equal(got[0].Scope, want) {
		t.Errorf("scope %v, want %v (the default labels are replaced)", got[0].Scope, want)
	}
	if got[0].Component.Version != "v1.2.3" || got[0].Tenant != "t-1" || got[0].EventName != "health" {
		t.Errorf("version %q tenant %q event %q", got[0].Component.Version, got[0].Tenant, got[0].EventName)
	}
}

func TestEmitUnknownObjects(t *testing.T) {
	scheme := testScheme(t)
	thing := &unstructured.Unstructured{}
	thing.SetAPIVersion("example.com/v1")
	thing.SetKind("Thing")
	thing.SetName("thing-1")
	typed := &Gadget{TypeMeta: metav1.TypeMeta{APIVersion: "gadgets.example.com/v2", Kind: "FancyGadget"}, ObjectMeta: metav1.ObjectMeta{Name: "g2"}}

	for _, tc := range []struct {
		name              string
		scheme            *runtime.Scheme
		obj               client.Object
		wantGroup, wantTy string
	}{
		{"unregistered Go type", scheme, &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g1", Generation: 2}}, "", "Gadget"},
		{"unregistered with TypeMeta", scheme, typed, "gadgets.example.com", "FancyGadget"},
		{"unstructured", scheme, thing, "example.com", "Thing"},
		{"nil scheme", nil, cluster(nil), "", "ComputeCluster"},
		{"core group", scheme, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, "", "ConfigMap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := installDefault(t)
			kube.NewEmitter().Emit(context.Background(), tc.scheme, tc.obj, progress.StreamLifecycle, "True", "Running", "")
			got := s.decoded(t)
			if len(got) != 1 {
				t.Fatalf("%d records, want 1: an unknown object must not stop the transition", len(got))
			}
			if got[0].Component.Name != tc.wantGroup || got[0].Resource.Type != tc.wantTy || got[0].Resource.ID != tc.obj.GetName() {
				t.Errorf("component %q resource %+v, want group %q type %q id %q",
					got[0].Component.Name, got[0].Resource, tc.wantGroup, tc.wantTy, tc.obj.GetName())
			}
		})
	}
}

func TestEmitNilObject(t *testing.T) {
	_, s := installDefault(t)
	var typedNil *ComputeCluster
	kube.NewEmitter().Emit(context.Background(), testScheme(t), typedNil, progress.StreamLifecycle, "True", "Running", "")
	kube.NewEmitter().Emit(context.Background(), testScheme(t), nil, progress.StreamLifecycle, "True", "Running", "")
	got := s.decoded(t)
	if len(got) != 2 || got[0].Resource != (progress.Resource{}) {
		t.Fatalf("got %+v", got)
	}
}

func TestEmitInvalidIsCountedAndLogged(t *testing.T) {
	rec, s := installDefault(t)
	var logged []string
	ctx := logr.NewContext(context.Background(), funcr.New(func(prefix, args string) {
		logged = append(logged, args)
	}, funcr.Options{}))
	kube.NewEmitter().Emit(ctx, testScheme(t), cluster(nil), "Not-A-Stream", "True", "Running", "")
	kube.NewEmitter().Emit(ctx, testScheme(t), cluster(nil), progress.StreamLifecycle, "", "Running", "")
	if n := len(s.decoded(t)); n != 0 {
		t.Errorf("%d invalid transitions emitted", n)
	}
	if rec.Stats().Invalid != 2 {
		t.Errorf("Invalid = %d, want 2", rec.Stats().Invalid)
	}
	if len(logged) != 2 || !strings.Contains(logged[0], "Not-A-Stream") || !strings.Contains(logged[0], "cluster-a") {
		t.Errorf("logged %q", logged)
	}
	// Without a logger in ctx it neither logs nor panics.
	kube.NewEmitter().Emit(context.Background(), testScheme(t), cluster(nil), "Bad", "True", "x", "")
}

func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
}

// emitIfChanged is EmitIfChanged through a new Emitter, which records
// through progress.Default() as the one installed last.
func emitIfChanged(ctx context.Context, scheme *runtime.Scheme, obj client.Object, stream string, prior, next metav1.Condition) bool {
	ok, _ := kube.NewEmitter().EmitIfChanged(ctx, scheme, obj, stream, prior, next)
	return ok
}

func TestEmitIfChanged(t *testing.T) {
	_, s := installDefault(t)
	ctx := context.Background()
	scheme := testScheme(t)
	obj := cluster(nil)
	P := progress.StreamProvisioning

	provisioning := cond("Available", metav1.ConditionFalse, "Provisioning", "the cluster is being provisioned")
	if !emitIfChanged(ctx, scheme, obj, P, metav1.Condition{}, provisioning) {
		t.Fatal("first condition not emitted")
	}
	// Only the time and generation differ: not a transition.
	later := provisioning
	later.LastTransitionTime = metav1.NewTime(time.Now().Add(time.Minute))
	later.ObservedGeneration = 4
	if emitIfChanged(ctx, scheme, obj, P, provisioning, later) {
		t.Error("a time-only change was emitted")
	}
	msg := provisioning
	msg.Message = "waiting for the servers"
	if !emitIfChanged(ctx, scheme, obj, P, provisioning, msg) {
		t.Error("a message-only change was not emitted")
	}
	provisioned := cond("Available", metav1.ConditionTrue, "Provisioned", "the cluster is ready")
	if !emitIfChanged(ctx, scheme, obj, P, msg, provisioned) {
		t.Error("Provisioning → Provisioned not emitted")
	}

	got := s.decoded(t)
	if len(got) != 3 {
		t.Fatalf("%d records, want 3", len(got))
	}
	if got[0].Transition.Previous != nil {
		t.Errorf("first has previous %+v", *got[0].Transition.Previous)
	}
	if p := got[2].Transition.Previous; p == nil || *p != kube.ConditionOf(msg) || got[2].Transition.Condition != kube.ConditionOf(provisioned) {
		t.Errorf("last transition %+v from %v", got[2].Transition.Condition, p)
	}
}

func TestFindConditionIsACopy(t *testing.T) {
	conds := []metav1.Condition{cond("Available", metav1.ConditionFalse, "Provisioning", "")}
	prior := kube.FindCondition(conds, "Available")
	conds[0].Reason = "Provisioned" // what meta.SetStatusCondition does in place
	if prior.Reason != "Provisioning" {
		t.Errorf("prior changed with the slice: %q", prior.Reason)
	}
	if c := kube.FindCondition(conds, "Active"); c != (metav1.Condition{}) {
		t.Errorf("missing condition = %+v, want zero", c)
	}
}

func TestEmitterObserve(t *testing.T) {
	rec, s := newRecorder(t)
	e := kube.NewEmitter(kube.WithRecorder(rec))
	ctx := context.Background()
	scheme := testScheme(t)
	obj := cluster(nil)
	running := cond("Active", metav1.ConditionTrue, "Running", "")
	steps := []struct {
		c    metav1.Condition
		want bool
	}{
		{cond("Active", metav1.ConditionFalse, "Pending", ""), true},
		{cond("Active", metav1.ConditionFalse, "Pending", ""), false},
		{running, true},
		{running, false},
		{cond("Active", metav1.ConditionFalse, "Stopped", ""), true},
	}
	for i, st := range steps {
		ok, err := e.Observe(ctx, scheme, obj, progress.StreamLifecycle, st.c)
		if err != nil || ok != st.want {
			t.Fatalf("step %d: %v, %v; want %v", i, ok, err, st.want)
		}
	}
	// Deleted, then re-created under the same name: a first transition.
	e.Forget(scheme, obj)
	if ok, _ := e.Observe(ctx, scheme, obj, progress.StreamLifecycle, running); !ok {
		t.Error("not emitted after Forget")
	}
	again := cluster(nil)
	again.UID = "another-uid"
	if ok, _ := e.Observe(ctx, scheme, again, progress.StreamLifecycle, running); !ok {
		t.Error("not emitted for a re-created object (new uid)")
	}

	var reasons, previous []string
	for _, d := range s.decoded(t) {
		reasons = append(reasons, d.Transition.Reason)
		p := "-"
		if d.Transition.Previous != nil {
			p = d.Transition.Previous.Reason
		}
		previous = append(previous, p)
	}
	if want := "Pending Running Stopped Running Running"; strings.Join(reasons, " ") != want {
		t.Errorf("reasons %v, want %s", reasons, want)
	}
	if want := "- Pending Running - -"; strings.Join(previous, " ") != want {
		t.Errorf("previous %v, want %s", previous, want)
	}
}
