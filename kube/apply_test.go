package kube_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/kube"
	"github.com/progressotel/progressotel/kube/internal/kubetest"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

func TestMain(m *testing.M) { kubetest.Main(m) }

// harness is one test against the real API server: its own namespace, a
// sink for the records and a recorder for the spans.
type harness struct {
	t       *testing.T
	env     *kubetest.Env
	admin   client.Client
	ns      string
	sink    *progresstest.Sink
	spans   *tracetest.SpanRecorder
	tp      *sdktrace.TracerProvider
	emitter *kube.Emitter
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

func newHarness(t *testing.T) *harness {
	t.Helper()
	env := kubetest.Start(t)
	admin, err := client.New(env.Admin, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := nonName.ReplaceAllString(strings.ToLower(t.Name()), "-")
	if len(ns) > 50 {
		ns = ns[:50]
	}
	ns = strings.Trim(ns, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
	if err := admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	sink := progresstest.NewSink()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &harness{
		t: t, env: env, admin: admin, ns: ns, sink: sink, spans: spans, tp: tp,
		emitter: kube.NewEmitter(kube.WithRecorder(sink.Recorder())),
	}
}

func (h *harness) applier(cfg *rest.Config, opts ...kube.ApplyOption) *kube.Applier {
	h.t.Helper()
	a, err := kube.NewApplier(cfg, h.emitter, append([]kube.ApplyOption{
		adapter.WithTracerProvider(h.tp), kube.WithTimeout(90 * time.Second),
	}, opts...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// objects reads YAML, with {{ns}} replaced by the test's namespace.
func (h *harness) objects(yaml string) []*unstructured.Unstructured {
	h.t.Helper()
	objs, err := kube.ReadObjectsBytes([]byte(strings.ReplaceAll(yaml, "{{ns}}", h.ns)))
	if err != nil {
		h.t.Fatal(err)
	}
	return objs
}

// async runs Apply or Delete on a goroutine; wait returns its outcome.
type async struct {
	done chan struct{}
	res  kube.Result
	err  error
}

func (h *harness) async(f func(context.Context, []*unstructured.Unstructured) (kube.Result, error), objs []*unstructured.Unstructured) *async {
	a := &async{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.res, a.err = f(context.Background(), objs)
	}()
	return a
}

func (a *async) wait(t *testing.T) (kube.Result, error) {
	t.Helper()
	select {
	case <-a.done:
		return a.res, a.err
	case <-time.After(2 * time.Minute):
		t.Fatal("the Applier did not return")
		return kube.Result{}, nil
	}
}

// eventually polls cond (bounded: a test never hangs on it).
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) exists(apiVersion, kind, name string) func() bool {
	return func() bool {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return h.admin.Get(context.Background(), types.NamespacedName{Namespace: h.ns, Name: name}, u) == nil
	}
}

// setStatus plays the object's controller: a merge patch of the status
// subresource, as the admin.
func (h *harness) setStatus(apiVersion, kind, name string, status map[string]any) {
	h.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(h.ns)
	u.SetName(name)
	b, _ := json.Marshal(map[string]any{"status": status})
	if err := h.admin.Status().Patch(context.Background(), u, client.RawPatch(types.MergePatchType, b)); err != nil {
		h.t.Fatalf("status of %s %s: %v", kind, name, err)
	}
}

// story is what the sink holds about the object kind/name, one line a
// record: "kubernetes/ObjectReady Provisioned" or
// "provisioning Provisioning->Provisioned".
func (h *harness) story(kindName string) []string {
	var out []string
	for _, e := range h.sink.Events() {
		if e.Resource.Type+"/"+e.Resource.ID != kindName {
			continue
		}
		if tr := e.Transition; tr != nil {
			prev := "-"
			if tr.Previous != nil {
				prev = tr.Previous.Reason
			}
			out = append(out, fmt.Sprintf("%s %s->%s", e.EventName, prev, tr.Reason))
			continue
		}
		line := e.EventName
		if r, _ := e.Details["reason"].(string); r != "" {
			line += " " + r
		}
		out = append(out, line)
	}
	return out
}

func (h *harness) wantStory(kindName string, want ...string) {
	h.t.Helper()
	if got := h.story(kindName); strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Errorf("records of %s:\n  %s\nwant\n  %s", kindName, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// operation returns the common/* records, as "type details".
func (h *harness) operation() []string {
	var out []string
	for _, e := range h.sink.Events() {
		switch e.EventName {
		case progress.TypeProgress:
			out = append(out, fmt.Sprintf("%s %v/%v", e.EventName, e.Details["completed"], e.Details["total"]))
		case progress.TypeOperationStarted, progress.TypeOperationCompleted:
			out = append(out, e.EventName)
		case progress.TypeOperationFailed:
			out = append(out, fmt.Sprintf("%s %v", e.EventName, e.Details["failureCode"]))
		}
	}
	return out
}

func (h *harness) wantOperation(want ...string) {
	h.t.Helper()
	if got := h.operation(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Errorf("operation records:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// span returns the ended span named name.
func (h *harness) span(name string) sdktrace.ReadOnlySpan {
	h.t.Helper()
	for _, s := range h.spans.Ended() {
		if s.Name() == name {
			return s
		}
	}
	var names []string
	for _, s := range h.spans.Ended() {
		names = append(names, s.Name())
	}
	h.t.Fatalf("no span %q in %q", name, names)
	return nil
}

// outcomeKey is the span attribute of the outcome (docs/conventions.md).
const outcomeKey = "progress.outcome"

func spanAttr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// failed returns the details of the kubernetes/ObjectFailed record of name.
func (h *harness) failed(name string) map[string]any {
	h.t.Helper()
	for _, e := range h.sink.OfType(kube.TypeObjectFailed) {
		if e.Resource.ID == name {
			return e.Details
		}
	}
	h.t.Fatalf("no %s for %s", kube.TypeObjectFailed, name)
	return nil
}

const deploymentAndService = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {{ns}}
  labels:
    unikorn-cloud.org/organization: acme
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.invalid/web:1
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: {{ns}}
spec:
  selector: {app: web}
  ports:
    - port: 80
`

// A Deployment and a Service: the Service is Current at once (kstatus:
// a ClusterIP Service), the Deployment when its controller (the test)
// reports the replica available. The Available condition becomes
// provisioning transitions, each once, with the previous state.
func TestApplyDeploymentAndService(t *testing.T) {
	h := newHarness(t)
	a := h.applier(h.env.Admin)
	objs := h.objects(deploymentAndService)
	run := h.async(a.Apply, objs)

	h.eventually("the Deployment", h.exists("apps/v1", "Deployment", "web"))
	h.setStatus("apps/v1", "Deployment", "web", map[string]any{
		"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
		"conditions": []any{
			map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."},
			map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated", "message": "progressing"},
		},
	})
	h.eventually("the first transition", func() bool { return len(h.sink.OfType(progress.StreamProvisioning)) == 1 })
	h.setStatus("apps/v1", "Deployment", "web", map[string]any{
		"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1,
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "available"},
		},
	})
	res, err := run.wait(t)
	if err != nil {
		t.Fatalf("Apply: %v (%+v)", err, res)
	}
	if res.Ready != 2 || res.Failed != 0 || res.Objects[0].Action != kube.ActionCreated || res.Objects[0].Status != "Current" {
		t.Errorf("result %+v", res)
	}
	h.wantStory("Service/web", kube.TypeObjectCreated, kube.TypeObjectReady)
	h.wantStory("Deployment/web",
		kube.TypeObjectCreated,
		"provisioning -->MinimumReplicasUnavailable",
		"provisioning MinimumReplicasUnavailable->MinimumReplicasAvailable",
		kube.TypeObjectReady+" MinimumReplicasAvailable",
	)
	h.wantOperation(progress.TypeOperationStarted, progress.TypeProgress+" 1/2", progress.TypeProgress+" 2/2", progress.TypeOperationCompleted)

	op := h.span("kubernetes apply")
	for _, name := range []string{"apply Deployment " + h.ns + "/web", "apply Service " + h.ns + "/web"} {
		s := h.span(name)
		if s.Parent().SpanID() != op.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the operation's span", name)
		}
		if got := spanAttr(s, outcomeKey); got != string(progress.OutcomeChanged) {
			t.Errorf("%s: %s = %q, want %q", name, outcomeKey, got, string(progress.OutcomeChanged))
		}
	}
	// The records of an object are in its span; its envelope is the
	// object's, with the scope from its labels.
	for _, e := range h.sink.OfType(kube.TypeObjectReady) {
		if e.Resource.Type == "Deployment" {
			if e.SpanID != h.span("apply Deployment "+h.ns+"/web").SpanContext().SpanID() {
				t.Error("the Deployment's ObjectReady is not in its span")
			}
			if e.Component.Name != "apps" || e.Scope["organization"] != "acme" || e.ObservedGeneration != 1 ||
				e.Resource.Namespace != h.ns || e.Details["apiVersion"] != "apps/v1" {
				t.Errorf("envelope %+v details %v", e.Envelope, e.Details)
			}
		}
	}

	// Applied again, unchanged: ready at once, outcome ok, no transition.
	h.sink.Reset()
	res, err = h.applier(h.env.Admin).Apply(context.Background(), h.objects(deploymentAndService))
	if err != nil || res.Objects[0].Action != kube.ActionUnchanged || res.Objects[1].Action != kube.ActionUnchanged {
		t.Fatalf("second Apply: %v %+v", err, res)
	}
	h.wantStory("Deployment/web", kube.TypeObjectUnchanged, kube.TypeObjectReady+" MinimumReplicasAvailable")
	h.wantStory("Service/web", kube.TypeObjectUnchanged, kube.TypeObjectReady)
}

const computeCluster = `
apiVersion: compute.unikorn-cloud.org/v1alpha1
kind: ComputeCluster
metadata:
  name: %s
  namespace: {{ns}}
  labels:
    unikorn-cloud.org/organization: acme
    unikorn-cloud.org/project: web
spec:
  flavor: small
`

const ccAPI, ccKind = "compute.unikorn-cloud.org/v1alpha1", "ComputeCluster"

func condition(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

// provisioning is the status an operator following kstatus's conventions
// writes while it works: Reconciling is what makes it InProgress.
func provisioning(msg string) map[string]any {
	return map[string]any{"observedGeneration": 1, "conditions": []any{
		condition("Available", "False", "Provisioning", msg),
		condition("Reconciling", "True", "Provisioning", msg),
	}}
}

// A custom resource going Provisioning → Provisioned: InProgress until its
// operator observed it (the CRD defaults status.observedGeneration to 0)
// and while Reconciling, then Current.
func TestApplyCustomResourceProvisioned(t *testing.T) {
	h := newHarness(t)
	run := h.async(h.applier(h.env.Admin).Apply, h.objects(fmt.Sprintf(computeCluster, "cluster-a")))
	h.eventually("the ComputeCluster", h.exists(ccAPI, ccKind, "cluster-a"))
	h.setStatus(ccAPI, ccKind, "cluster-a", provisioning("the cluster is being provisioned"))
	h.eventually("Provisioning", func() bool { return len(h.sink.OfType(progress.StreamProvisioning)) == 1 })
	h.setStatus(ccAPI, ccKind, "cluster-a", map[string]any{"observedGeneration": 1, "conditions": []any{
		condition("Available", "True", "Provisioned", "the cluster is ready"),
	}})
	res, err := run.wait(t)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if res.Objects[0].Reason != "Provisioned" {
		t.Errorf("result %+v", res.Objects[0])
	}
	h.wantStory("ComputeCluster/cluster-a",
		kube.TypeObjectCreated,
		"provisioning -->Provisioning",
		"provisioning Provisioning->Provisioned",
		kube.TypeObjectReady+" Provisioned",
	)
	tr := h.sink.OfType(progress.StreamProvisioning)[1]
	if tr.Transition.Message != "the cluster is ready" || tr.Scope["project"] != "web" || tr.Resource.Type != ccKind ||
		tr.Component.Name != "compute.unikorn-cloud.org" {
		t.Errorf("transition %+v envelope %+v", tr.Transition, tr.Envelope)
	}
}

// A custom resource whose operator gives up: Stalled (kstatus Failed) with
// the reason Errored and its user-safe message, which is what the events
// carry: no error string of the adapter's own.
func TestApplyCustomResourceErrored(t *testing.T) {
	h := newHarness(t)
	run := h.async(h.applier(h.env.Admin).Apply, h.objects(fmt.Sprintf(computeCluster, "cluster-b")))
	h.eventually("the ComputeCluster", h.exists(ccAPI, ccKind, "cluster-b"))
	h.setStatus(ccAPI, ccKind, "cluster-b", provisioning("the cluster is being provisioned"))
	h.eventually("Provisioning", func() bool { return len(h.sink.OfType(progress.StreamProvisioning)) == 1 })
	const safe = "the cluster could not be provisioned: the flavor is not available"
	h.setStatus(ccAPI, ccKind, "cluster-b", map[string]any{"observedGeneration": 1, "conditions": []any{
		condition("Available", "False", "Errored", safe),
		condition("Stalled", "True", "Errored", safe),
	}})
	res, err := run.wait(t)
	if !errors.Is(err, kube.ErrFailed) {
		t.Fatalf("Apply: %v, want ErrFailed", err)
	}
	if res.Failed != 1 || res.Objects[0].Status != "Failed" || res.Objects[0].Reason != "Errored" {
		t.Errorf("result %+v", res.Objects[0])
	}
	h.wantStory("ComputeCluster/cluster-b",
		kube.TypeObjectCreated,
		"provisioning -->Provisioning",
		"provisioning Provisioning->Errored",
		kube.TypeObjectFailed+" Errored",
	)
	if d := h.failed("cluster-b"); d["message"] != safe || d["status"] != "Failed" {
		t.Errorf("ObjectFailed details %v", d)
	}
	of := h.sink.OfType(progress.TypeOperationFailed)
	if len(of) != 1 || of[0].Details["failureCode"] != progress.FailureInfrastructure ||
		of[0].Details["description"] != "0 of 1 objects ready; ComputeCluster "+h.ns+"/cluster-b failed (Errored)" {
		t.Errorf("OperationFailed %v", of)
	}
	s := h.span("apply ComputeCluster " + h.ns + "/cluster-b")
	if s.Status().Code != codes.Error || spanAttr(s, outcomeKey) != string(progress.OutcomeFailed) || s.Status().Description != "Errored: "+safe {
		t.Errorf("span status %+v outcome %q", s.Status(), spanAttr(s, outcomeKey))
	}
}

const configMap = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: {{ns}}
data:
  colour: %s
`

// Another field manager owns the field: the apply fails with the API
// server's Conflict and its message; forced, it takes the field over.
func TestApplyConflict(t *testing.T) {
	h := newHarness(t)
	other := h.objects(fmt.Sprintf(configMap, "settings", "blue"))[0]
	if err := h.admin.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	res, err := h.applier(h.env.Admin).Apply(context.Background(), h.objects(fmt.Sprintf(configMap, "settings", "green")))
	if !errors.Is(err, kube.ErrFailed) {
		t.Fatalf("Apply: %v, want ErrFailed", err)
	}
	d := h.failed("settings")
	if d["reason"] != "Conflict" || !strings.Contains(fmt.Sprint(d["message"]), `conflict with "someone-else"`) {
		t.Errorf("ObjectFailed %v", d)
	}
	if res.Objects[0].Action != "" || res.Objects[0].Reason != "Conflict" {
		t.Errorf("result %+v", res.Objects[0])
	}
	h.wantOperation(progress.TypeOperationStarted, progress.TypeProgress+" 0/1", progress.TypeOperationFailed+" "+progress.FailureRejected)

	h.sink.Reset()
	res, err = h.applier(h.env.Admin, kube.WithForceConflicts()).Apply(context.Background(), h.objects(fmt.Sprintf(configMap, "settings", "green")))
	if err != nil || res.Objects[0].Action != kube.ActionUpdated {
		t.Fatalf("forced Apply: %v %+v", err, res)
	}
	h.wantStory("ConfigMap/settings", kube.TypeObjectUpdated, kube.TypeObjectReady)
}

// An object the API server's validation refuses: a failure event with the
// server's reason (Invalid) and its message naming the field.
func TestApplyRefusedByValidation(t *testing.T) {
	h := newHarness(t)
	bad := strings.Replace(deploymentAndService, "replicas: 1", "replicas: -1", 1)
	res, err := h.applier(h.env.Admin).Apply(context.Background(), h.objects(bad))
	if !errors.Is(err, kube.ErrFailed) {
		t.Fatalf("Apply: %v, want ErrFailed", err)
	}
	// Only the Deployment is refused; the Service is applied and ready.
	if res.Ready != 1 || res.Failed != 1 {
		t.Errorf("result %+v", res)
	}
	var d map[string]any
	for _, e := range h.sink.OfType(kube.TypeObjectFailed) {
		if e.Resource.Type == "Deployment" {
			d = e.Details
		}
	}
	if d["reason"] != "Invalid" || !strings.Contains(fmt.Sprint(d["message"]), "spec.replicas") {
		t.Errorf("ObjectFailed %v", d)
	}
	if of := h.sink.OfType(progress.TypeOperationFailed); len(of) != 1 ||
		of[0].Details["description"] != "1 of 2 objects ready; Deployment "+h.ns+"/web failed (Invalid)" {
		t.Errorf("OperationFailed %v", of)
	}
}

// A user whom RBAC lets read ConfigMaps but not change them: the apply is
// Forbidden, with the API server's message naming the user.
func TestApplyForbidden(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: h.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads", Namespace: h.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: kubetest.UserAlice}}}
	for _, o := range []client.Object{role, binding} {
		if err := h.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.applier(h.env.Alice).Apply(ctx, h.objects(fmt.Sprintf(configMap, "settings", "red")))
	if !errors.Is(err, kube.ErrFailed) {
		t.Fatalf("Apply: %v, want ErrFailed", err)
	}
	d := h.failed("settings")
	if d["reason"] != "Forbidden" || !strings.Contains(fmt.Sprint(d["message"]), `User "alice" cannot patch resource "configmaps"`) {
		t.Errorf("ObjectFailed %v", d)
	}
	if res.Objects[0].Reason != "Forbidden" {
		t.Errorf("result %+v", res.Objects[0])
	}

	// Allowed to apply a ComputeCluster but not to watch it: the wait
	// fails at once, Forbidden, instead of retrying until the time limit.
	h.sink.Reset()
	applyOnly := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "apply-clusters", Namespace: h.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"compute.unikorn-cloud.org"}, Resources: []string{"computeclusters"}, Verbs: []string{"get", "patch", "create"}}}}
	applyBinding := binding.DeepCopy()
	applyBinding.ObjectMeta = metav1.ObjectMeta{Name: "alice-applies", Namespace: h.ns}
	applyBinding.RoleRef.Name = applyOnly.Name
	for _, o := range []client.Object{applyOnly, applyBinding} {
		if err := h.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	res, err = h.applier(h.env.Alice).Apply(ctx, h.objects(fmt.Sprintf(computeCluster, "cluster-f")))
	if !errors.Is(err, kube.ErrFailed) || errors.Is(err, kube.ErrTimeout) {
		t.Fatalf("Apply: %v, want ErrFailed", err)
	}
	h.wantStory("ComputeCluster/cluster-f", kube.TypeObjectCreated, kube.TypeObjectFailed+" Forbidden")
	if d := h.failed("cluster-f"); !strings.Contains(fmt.Sprint(d["message"]), `cannot watch resource "computeclusters"`) {
		t.Errorf("ObjectFailed %v", d)
	}
}

// The API server ends each watch after a second; each time, before the
// Applier watches again, the operator moves the object on. Resumed from
// the last resourceVersion, every transition is seen, once.
func TestWatchResumesAfterTheServerClosesIt(t *testing.T) {
	h := newHarness(t)
	steps := []map[string]any{
		provisioning("creating the network"),
		provisioning("creating the servers"),
		provisioning("installing Kubernetes"),
		{"observedGeneration": 1, "conditions": []any{condition("Available", "True", "Provisioned", "the cluster is ready")}},
	}
	var ended atomic.Int32
	hook := func() {
		// Between two watches: no watch is open while the status changes,
		// twice, so that only a watch resumed from the resourceVersion
		// sees the first change (the object's state now has only the
		// second).
		if n := int(ended.Add(1)); 2*n <= len(steps) {
			h.setStatus(ccAPI, ccKind, "cluster-w", steps[2*n-2])
			h.setStatus(ccAPI, ccKind, "cluster-w", steps[2*n-1])
		}
	}
	res, err := h.applier(h.env.Admin, kube.WithWatchTimeout(1, hook)).Apply(context.Background(), h.objects(fmt.Sprintf(computeCluster, "cluster-w")))
	if err != nil {
		t.Fatalf("Apply: %v (%+v)", err, res)
	}
	if n := ended.Load(); n < int32(len(steps)/2) {
		t.Fatalf("%d watches ended, want at least %d", n, len(steps)/2)
	}
	var msgs []string
	for _, e := range h.sink.OfType(progress.StreamProvisioning) {
		msgs = append(msgs, e.Transition.Message)
	}
	want := []string{"creating the network", "creating the servers", "installing Kubernetes", "the cluster is ready"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("transitions %q, want %q", msgs, want)
	}
}

// An object that never becomes ready: at the time limit it fails with
// Timeout, its span's outcome says timeout and Apply returns ErrTimeout.
func TestApplyTimeout(t *testing.T) {
	h := newHarness(t)
	res, err := h.applier(h.env.Admin, kube.WithTimeout(3*time.Second)).Apply(context.Background(), h.objects(fmt.Sprintf(computeCluster, "cluster-t")))
	if !errors.Is(err, kube.ErrTimeout) {
		t.Fatalf("Apply: %v, want ErrTimeout", err)
	}
	if o := res.Objects[0]; o.Reason != kube.ReasonTimeout || o.Status != "InProgress" {
		t.Errorf("result %+v", o)
	}
	h.wantStory("ComputeCluster/cluster-t", kube.TypeObjectCreated, kube.TypeObjectFailed+" "+kube.ReasonTimeout)
	h.wantOperation(progress.TypeOperationStarted, progress.TypeProgress+" 0/1", progress.TypeOperationFailed+" "+progress.FailureTimeout)
	s := h.span("apply ComputeCluster " + h.ns + "/cluster-t")
	if spanAttr(s, outcomeKey) != string(progress.OutcomeTimedOut) || s.Status().Code != codes.Error {
		t.Errorf("span outcome %q status %+v", spanAttr(s, outcomeKey), s.Status())
	}
}

// A delete waits for the object's finalizers: Terminating, reported once,
// until the finalizer's owner (the test) removes it; then Deleted.
func TestDeleteWaitsForFinalizers(t *testing.T) {
	h := newHarness(t)
	held := h.objects(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: held
  namespace: {{ns}}
  finalizers: [example.com/hold]
data: {a: b}
`)
	if _, err := h.applier(h.env.Admin).Apply(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	h.sink.Reset()
	run := h.async(h.applier(h.env.Admin).Delete, held)
	h.eventually("Terminating", func() bool { return len(h.sink.OfType(kube.TypeObjectTerminating)) == 1 })
	// A change while terminating is no new Terminating record.
	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: h.ns, Name: "held"}
	if err := h.admin.Get(context.Background(), key, cm); err != nil {
		t.Fatal(err)
	}
	cm.Labels = map[string]string{"touched": "yes"}
	if err := h.admin.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = nil
	if err := h.admin.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	res, err := run.wait(t)
	if err != nil || res.Objects[0].Status != "NotFound" || res.Objects[0].Action != kube.ActionDeleted {
		t.Fatalf("Delete: %v %+v", err, res)
	}
	h.wantStory("ConfigMap/held", kube.TypeObjectTerminating, kube.TypeObjectDeleted)
	term := h.sink.OfType(kube.TypeObjectTerminating)[0]
	if fmt.Sprint(term.Details["finalizers"]) != "[example.com/hold]" || term.Details["status"] != "Terminating" {
		t.Errorf("ObjectTerminating details %v", term.Details)
	}
	h.wantOperation(progress.TypeOperationStarted, progress.TypeProgress+" 0/1", progress.TypeProgress+" 1/1", progress.TypeOperationCompleted)
	if s := h.span("kubernetes delete"); s.Status().Code == codes.Error {
		t.Errorf("delete span %+v", s.Status())
	}
	// Deleting what is gone is done at once.
	if res, err := h.applier(h.env.Admin).Delete(context.Background(), held); err != nil || !res.Objects[0].Ready {
		t.Errorf("second Delete: %v %+v", err, res)
	}
}

// An object deleted while it is waited for fails (reason Deleted); a
// cancelled context ends the others as cancelled, and Apply returns the
// context's error.
func TestApplyVanishedAndCancelled(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objs := h.objects(fmt.Sprintf(computeCluster, "cluster-v") + "---" + fmt.Sprintf(computeCluster, "cluster-c"))
	run := h.async(func(_ context.Context, objs []*unstructured.Unstructured) (kube.Result, error) {
		return h.applier(h.env.Admin).Apply(ctx, objs)
	}, objs)
	h.eventually("both ComputeClusters", func() bool {
		return len(h.sink.OfType(kube.TypeObjectCreated)) == 2 && len(h.sink.OfType(progress.TypeProgress)) == 1
	})
	if err := h.admin.Delete(context.Background(), objs[0]); err != nil {
		t.Fatal(err)
	}
	h.eventually("the failure", func() bool { return len(h.sink.OfType(kube.TypeObjectFailed)) == 1 })
	cancel()
	res, err := run.wait(t)
	if !errors.Is(err, kube.ErrFailed) || !errors.Is(err, context.Canceled) || errors.Is(err, kube.ErrTimeout) {
		t.Fatalf("Apply: %v, want ErrFailed and context.Canceled", err)
	}
	if o := res.Objects[0]; o.Reason != kube.ReasonGone || o.Status != "NotFound" {
		t.Errorf("vanished: %+v", o)
	}
	if o := res.Objects[1]; o.Reason != kube.ReasonCancelled {
		t.Errorf("cancelled: %+v", o)
	}
	if got := spanAttr(h.span("apply ComputeCluster "+h.ns+"/cluster-c"), outcomeKey); got != string(progress.OutcomeCancelled) {
		t.Errorf("cancelled object's outcome %q", got)
	}
	if of := h.sink.OfType(progress.TypeOperationFailed); len(of) != 1 || of[0].Details["failureCode"] != progress.FailureInfrastructure {
		t.Errorf("OperationFailed %v", of)
	}
}

// A CRD and a custom resource of it in one set: the CRD is applied first
// and waited for until established (kstatus), then its resource. (The
// group is the test's own, so that a rerun creates it afresh.)
func TestApplyCRDAndItsResource(t *testing.T) {
	h := newHarness(t)
	res, err := h.applier(h.env.Admin).Apply(context.Background(), h.objects(`
apiVersion: '{{ns}}.example.com/v1'
kind: Gadget
metadata: {name: g1, namespace: '{{ns}}'}
spec: {size: 3}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: 'gadgets.{{ns}}.example.com'}
spec:
  group: '{{ns}}.example.com'
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`))
	if err != nil {
		t.Fatalf("Apply: %v %+v", err, res)
	}
	if res.Objects[0].Kind != "Gadget" || res.Objects[0].Namespace != h.ns || !res.Objects[0].Ready || !res.Objects[1].Ready {
		t.Errorf("result %+v", res)
	}
	h.wantStory("CustomResourceDefinition/gadgets."+h.ns+".example.com", kube.TypeObjectCreated, kube.TypeObjectReady)
	h.wantStory("Gadget/g1", kube.TypeObjectCreated, kube.TypeObjectReady)
	var order []string
	for _, e := range h.sink.Events() {
		if e.EventName == kube.TypeObjectReady || e.EventName == kube.TypeObjectCreated {
			order = append(order, e.Resource.Type)
		}
	}
	if want := "CustomResourceDefinition CustomResourceDefinition Gadget Gadget"; strings.Join(order, " ") != want {
		t.Errorf("order %v, want %s", order, want)
	}
}
