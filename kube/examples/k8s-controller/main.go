// Command k8s-controller is a controller-runtime reconciler that reports
// its condition transitions with progressotel, against a real kube-apiserver
// and etcd (built into bin/ by make kube-bins, started here by envtest), or
// against controller-runtime's fake client when they are not built, which
// it says in its first line.
//
// It drives a Widget through provisioning (Provisioning → Provisioned) and
// its lifecycle (Pending → Running → Stopped) over several reconcile loops.
// Loops that change nothing emit nothing, and a loop whose status update
// fails emits nothing either: transitions are emitted only after the status
// write has been persisted.
//
// Then, with an API server, it applies a Deployment, a Service and a
// ComputeCluster with kube.Applier and waits until each is ready, playing
// their controllers itself (an API server alone runs none): the live view
// shows each object's span going to ready. Last, it deletes the
// ComputeCluster, whose finalizer holds it Terminating for a moment.
//
//	go run ./examples/k8s-controller                          # the live view
//	OTEL_LOGS_EXPORTER=json go run ./examples/k8s-controller  # JSON lines on stdout
//
// The narration ("reconcile 2: no change") goes through tel.Output(): above
// the live view's area, in order with its lines, or to stderr without it, so
// that stdout carries only the records of the chosen exporter. Writing to
// os.Stderr directly while the live view runs would land under its area,
// where the next frame overwrites it.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/progressotel/progressotel/kube"
	"github.com/progressotel/progressotel/kube/internal/kubetest"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

func main() {
	// The live view by default; OTEL_LOGS_EXPORTER (pretty, json, otlp, ...) wins.
	var opts []otelbridge.Option
	if os.Getenv("OTEL_LOGS_EXPORTER") == "" {
		opts = append(opts, otelbridge.WithExporters("live"))
	}
	var cluster *rest.Config
	srv, stop, err := kubetest.StartServer()
	if err != nil {
		fmt.Fprintf(os.Stderr, "k8s-controller: no API server (%v).\n"+
			"  The reconciler runs against controller-runtime's fake client and the apply-and-wait part is left out;\n"+
			"  make demo-k8s builds kube-apiserver and etcd first (make kube-bins).\n", err)
	} else {
		fmt.Fprintln(os.Stderr, "k8s-controller: a real kube-apiserver and etcd (from bin/), started for this demo")
		cluster = srv.Admin
	}
	err = run(context.Background(), nil, cluster, opts...)
	if stop != nil {
		err = errors.Join(err, stop())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8s-controller:", err)
		os.Exit(1)
	}
}

// cloud is the simulated infrastructure behind the Widget: provisioning
// finishes when the demo says so.
type cloud struct{ provisioned atomic.Bool }

// WidgetReconciler sets the Available and Active conditions of a Widget
// from the cloud's state and reports their transitions.
type WidgetReconciler struct {
	client.Client
	Scheme  *runtime.Scheme
	Cloud   *cloud
	Emitter *kube.Emitter
	// Say narrates what a reconcile did.
	Say func(format string, args ...any)
}

// Reconcile is one pass of the control loop.
func (r *WidgetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	w := &Widget{}
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}

	condition := func(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: w.Generation}
	}
	available := condition(conditionAvailable, metav1.ConditionFalse, "Provisioning", "the widget is being provisioned")
	active := condition(conditionActive, metav1.ConditionFalse, "Pending", "waiting for provisioning")
	if r.Cloud.provisioned.Load() {
		available = condition(conditionAvailable, metav1.ConditionTrue, "Provisioned", "the widget is ready")
		active = condition(conditionActive, metav1.ConditionFalse, "Stopped", "the widget is stopped")
		if w.Spec.Running {
			active = condition(conditionActive, metav1.ConditionTrue, "Running", "the widget is running")
		}
	}

	// Copies of the prior conditions, taken before SetStatusCondition
	// overwrites the slice they live in.
	priorAvailable := kube.FindCondition(w.Status.Conditions, conditionAvailable)
	priorActive := kube.FindCondition(w.Status.Conditions, conditionActive)
	meta.SetStatusCondition(&w.Status.Conditions, available)
	meta.SetStatusCondition(&w.Status.Conditions, active)

	if err := r.Status().Update(ctx, w); err != nil {
		// The transition did not happen: nothing is emitted. The retry
		// reads the same prior conditions and emits then.
		return reconcile.Result{}, err
	}

	// Persisted: now the transitions are facts. Errors are counted by the
	// Recorder; a reconcile never fails because of telemetry.
	p, _ := r.Emitter.EmitIfChanged(ctx, r.Scheme, w, progress.StreamProvisioning, priorAvailable, available)
	l, _ := r.Emitter.EmitIfChanged(ctx, r.Scheme, w, progress.StreamLifecycle, priorActive, active)
	var said []string
	for _, c := range []struct {
		emitted     bool
		stream      string
		prior, next metav1.Condition
	}{{p, "provisioning", priorAvailable, available}, {l, "lifecycle", priorActive, active}} {
		if c.emitted {
			said = append(said, fmt.Sprintf("%s %s → %s", c.stream, cmp.Or(c.prior.Reason, "(none)"), c.next.Reason))
		}
	}
	r.Say("%s", cmp.Or(strings.Join(said, ", "), "no change, nothing emitted"))
	return reconcile.Result{}, nil
}

// run sets up OpenTelemetry with opts and runs the demo, narrating to
// narration (nil: tel.Output()): the reconciler against the API server of
// cluster, or against controller-runtime's fake client when cluster is nil;
// then, with an API server, the apply-and-wait flow (applyDemo).
func run(ctx context.Context, narration io.Writer, cluster *rest.Config, opts ...otelbridge.Option) (err error) {
	tel, err := otelbridge.Setup(ctx, opts...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, tel.Shutdown(context.Background())) }()
	if narration == nil {
		narration = tel.Output()
	}
	if err := reconcileDemo(ctx, narration, cluster); err != nil {
		return err
	}
	if cluster == nil {
		return nil
	}
	return applyDemo(ctx, narration, cluster)
}

// reconcileDemo drives the Widget through its reconcile loops.
func reconcileDemo(ctx context.Context, narration io.Writer, cluster *rest.Config) error {
	scheme := runtime.NewScheme()
	if err := addToScheme(scheme); err != nil {
		return err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: "org-acme", Name: "widget-1"}
	widget := &Widget{
		ObjectMeta: metav1.ObjectMeta{
			Name: key.Name, Namespace: key.Namespace,
			Labels: map[string]string{kube.LabelOrganization: "acme", kube.LabelProject: "web"},
		},
		Spec: WidgetSpec{Running: true},
	}

	// A status update that conflicts once on demand: just before it, the
	// object is changed behind the reconciler's back, so the API server (or
	// the fake client) refuses the stale resourceVersion, as it does when
	// another writer got there first.
	var failNextStatusUpdate atomic.Bool
	funcs := interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, inner client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if failNextStatusUpdate.Swap(false) {
				// Another writer changes the labels first.
				if err := update(ctx, inner, key, func(w *Widget) { w.Labels["demo.progressotel.io/touched"] = "true" }); err != nil {
					return err
				}
			}
			return inner.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
	var c client.Client
	if cluster == nil {
		// The fake client neither sets a uid nor counts generations.
		widget.UID, widget.Generation = "7d1e5c2a-0000-4000-8000-000000000001", 1
		c = fake.NewClientBuilder().WithScheme(scheme).WithObjects(widget).
			WithStatusSubresource(&Widget{}).WithInterceptorFuncs(funcs).Build()
	} else {
		real, err := client.NewWithWatch(cluster, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}
		if err := real.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err := real.Create(ctx, widget); err != nil {
			return err
		}
		c = interceptor.NewClient(real, funcs)
	}

	var loop int
	r := &WidgetReconciler{
		Client: c, Scheme: scheme, Cloud: &cloud{},
		Emitter: kube.NewEmitter(kube.WithComponentVersion("v0.1.0")),
		Say: func(format string, args ...any) {
			fmt.Fprintf(narration, "reconcile %d: %s\n", loop, fmt.Sprintf(format, args...))
		},
	}
	reconcileOnce := func() {
		loop++
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			r.Say("status update failed (%v): nothing emitted, will retry", err)
		}
		flush(ctx)
	}
	note := func(s string) { fmt.Fprintf(narration, "-- %s\n", s) }

	reconcileOnce() // Provisioning, Pending
	reconcileOnce() // still provisioning: no change

	note("the cloud finishes provisioning; the next status update will conflict")
	r.Cloud.provisioned.Store(true)
	failNextStatusUpdate.Store(true)
	reconcileOnce() // the write fails: nothing emitted
	reconcileOnce() // retry: Provisioned, Running
	reconcileOnce() // no change

	note("a user powers the widget off (spec.running=false)")
	err := update(ctx, c, key, func(w *Widget) {
		w.Spec.Running = false
		if cluster == nil {
			w.Generation++ // the API server does this; the fake client does not
		}
	})
	if err != nil {
		return err
	}
	reconcileOnce() // Stopped
	reconcileOnce() // no change
	return nil
}

// update reads the Widget, changes it and writes it back.
func update(ctx context.Context, c client.Client, key types.NamespacedName, change func(*Widget)) error {
	w := &Widget{}
	if err := c.Get(ctx, key, w); err != nil {
		return err
	}
	change(w)
	return c.Update(ctx, w)
}

// flush pushes out what the batch processors hold, so that the records of
// each loop print next to its narration.
func flush(ctx context.Context) {
	if f, ok := otel.GetLoggerProvider().(interface{ ForceFlush(context.Context) error }); ok {
		_ = f.ForceFlush(ctx)
	}
}
