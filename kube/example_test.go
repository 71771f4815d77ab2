package kube_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/progressotel/progressotel/kube"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// printer is an SDK processor that prints each transition as a consumer
// reads it back with wire.Decode. It borrows Enabled, Shutdown and
// ForceFlush from a progresstest processor.
type printer struct{ sdklog.Processor }

func (printer) OnEmit(_ context.Context, r *sdklog.Record) error {
	d, err := wire.Decode(r)
	if err != nil || d.Transition == nil {
		return err
	}
	t := d.Transition
	from := "(no previous)"
	if t.Previous != nil {
		from = t.Previous.Reason + " →"
	}
	fmt.Printf("%s %s %s/%s/%s gen=%d scope=%v: %s %s (%s)\n", r.EventName(), d.Component.Name, d.Resource.Namespace,
		d.Resource.Type, d.Resource.ID, d.ObservedGeneration, d.Scope, from, t.Reason, t.Status)
	return nil
}

// useDefaultPrinter makes progress.Default() print; in a real controller
// otelbridge.Setup installs the Default Recorder.
func useDefaultPrinter() (restore func()) {
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(printer{progresstest.NewSink().Processor()}))
	prev := progress.Default()
	progress.SetDefault(progress.NewRecorder(progress.WithLoggerProvider(lp)))
	return func() { progress.SetDefault(prev); _ = lp.Shutdown(context.Background()) }
}

func exampleScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypes(computeGV, &ComputeCluster{})
	return s
}

// The seed's call, unchanged: the component is the API group and the
// resource type the Kind, both from the scheme.
func ExampleEmitter_Emit() {
	defer useDefaultPrinter()()
	obj := &ComputeCluster{ObjectMeta: metav1.ObjectMeta{
		Name: "cluster-a", Namespace: "org-acme", Generation: 2,
		Labels: map[string]string{kube.LabelOrganization: "acme"},
	}}
	_ = kube.NewEmitter().Emit(context.Background(), exampleScheme(), obj, progress.StreamProvisioning, "False", "Provisioning", "the cluster is being provisioned")
	// Output:
	// provisioning compute.unikorn-cloud.org org-acme/ComputeCluster/cluster-a gen=2 scope=map[organization:acme]: (no previous) Provisioning (False)
}

// The reconcile pattern: take a copy of the prior condition, set the new
// one, persist, then emit only if it changed.
func ExampleEmitter_EmitIfChanged() {
	defer useDefaultPrinter()()
	ctx := context.Background()
	scheme := exampleScheme()
	obj := &ComputeCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-a", Namespace: "org-acme", Generation: 2}}
	conditions := []metav1.Condition{{Type: "Available", Status: metav1.ConditionFalse, Reason: "Provisioning"}}

	emitter := kube.NewEmitter()
	for _, next := range []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionFalse, Reason: "Provisioning"}, // a poll: nothing new
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "Provisioned", Message: "the cluster is ready"},
	} {
		prior := kube.FindCondition(conditions, "Available")
		conditions[0] = next // meta.SetStatusCondition + a successful Status().Update()
		emitted, _ := emitter.EmitIfChanged(ctx, scheme, obj, progress.StreamProvisioning, prior, next)
		fmt.Println("emitted:", emitted)
	}
	// Output:
	// emitted: false
	// provisioning compute.unikorn-cloud.org org-acme/ComputeCluster/cluster-a gen=2 scope=map[]: Provisioning → Provisioned (True)
	// emitted: true
}

// A driver applies its objects and waits until they are ready; the
// objects' conditions become transitions through the Emitter. It needs an
// API server (rest.Config from a kubeconfig or in-cluster), so it is not
// run here: the tests run the same against a real one.
func ExampleApplier() {
	var cfg *rest.Config // e.g. from clientcmd or ctrl.GetConfig()
	objs, err := kube.ReadObjects(strings.NewReader(`
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {colour: green}
`))
	if err != nil {
		panic(err)
	}
	a, err := kube.NewApplier(cfg, kube.NewEmitter(), kube.WithFieldManager("shop-driver"), kube.WithTimeout(5*time.Minute))
	if err != nil {
		panic(err)
	}
	res, err := a.Apply(context.Background(), objs)
	switch {
	case errors.Is(err, kube.ErrTimeout):
		fmt.Println("timed out:", err)
	case err != nil:
		fmt.Println("failed:", err)
	default:
		fmt.Println(res.Ready, "of", len(res.Objects), "ready")
	}
}
