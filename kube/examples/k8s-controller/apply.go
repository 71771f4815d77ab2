package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/progressotel/progressotel/kube"
)

// shop is what applyDemo applies: a Deployment, its Service and a
// ComputeCluster (the custom resource of the kube module's tests) with a
// finalizer, as its operator would add.
const shop = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  namespace: org-acme
  labels:
    unikorn-cloud.org/organization: acme
spec:
  replicas: 2
  selector:
    matchLabels: {app: shop}
  template:
    metadata:
      labels: {app: shop}
    spec:
      containers:
        - name: shop
          image: registry.invalid/shop:1
---
apiVersion: v1
kind: Service
metadata:
  name: shop
  namespace: org-acme
  labels:
    unikorn-cloud.org/organization: acme
spec:
  selector: {app: shop}
  ports:
    - port: 80
---
apiVersion: compute.unikorn-cloud.org/v1alpha1
kind: ComputeCluster
metadata:
  name: cluster-a
  namespace: org-acme
  labels:
    unikorn-cloud.org/organization: acme
    unikorn-cloud.org/project: web
  finalizers: [compute.unikorn-cloud.org/cleanup]
spec:
  flavor: small
`

// step is one status write of a simulated controller, to shop's object
// obj (0 the Deployment, 2 the ComputeCluster).
type step struct {
	obj    int
	say    string
	status map[string]any
}

func cond(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

func deployment(ready int, available bool) map[string]any {
	a := cond("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
	if available {
		a = cond("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
	}
	// kstatus wants the rollout finished too: Progressing with the
	// reason the deployment controller gives a complete one.
	p := cond("Progressing", "True", "ReplicaSetUpdated", "ReplicaSet is progressing.")
	if ready == 2 {
		p = cond("Progressing", "True", "NewReplicaSetAvailable", "ReplicaSet has successfully progressed.")
	}
	return map[string]any{"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
		"readyReplicas": ready, "availableReplicas": ready, "conditions": []any{a, p}}
}

func cluster(reason, msg string, done bool) map[string]any {
	if done {
		return map[string]any{"observedGeneration": 1, "conditions": []any{cond("Available", "True", reason, msg)}}
	}
	return map[string]any{"observedGeneration": 1, "conditions": []any{
		cond("Available", "False", reason, msg), cond("Reconciling", "True", reason, msg)}}
}

// controllers is what a cluster's controllers would write, in order.
var controllers = []step{
	{0, "the deployment controller: 0 of 2 replicas available", deployment(0, false)},
	{2, "the operator: creating the network", cluster("Provisioning", "creating the network", false)},
	{0, "the deployment controller: 1 of 2 replicas available", deployment(1, true)},
	{2, "the operator: creating the servers", cluster("Provisioning", "creating the servers", false)},
	{0, "the deployment controller: 2 of 2 replicas available", deployment(2, true)},
	{2, "the operator: the cluster is ready", cluster("Provisioned", "the cluster is ready", true)},
}

// applyDemo applies shop and waits for it with kube.Applier while playing
// the controllers, then deletes the ComputeCluster and plays its
// operator's cleanup.
func applyDemo(ctx context.Context, narration io.Writer, cfg *rest.Config) error {
	note := func(s string) { fmt.Fprintf(narration, "-- %s\n", s) }
	objs, err := kube.ReadObjectsBytes([]byte(shop))
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	e := kube.NewEmitter(kube.WithComponentVersion("v0.1.0"))
	a, err := kube.NewApplier(cfg, e, kube.WithTimeout(time.Minute), kube.WithFieldManager("k8s-controller-demo"))
	if err != nil {
		return err
	}

	note("kube.Applier: a Deployment, a Service and a ComputeCluster, applied and watched until ready")
	played := make(chan error, 1)
	go func() { played <- play(ctx, c, objs, note) }()
	res, err := a.Apply(ctx, objs)
	if perr := <-played; perr != nil {
		return perr
	}
	flush(ctx)
	if err != nil {
		return err
	}
	note(fmt.Sprintf("%d of %d objects ready", res.Ready, len(res.Objects)))

	note("kube.Applier: the ComputeCluster deleted; its finalizer holds it until the operator cleans up")
	go func() {
		time.Sleep(1500 * time.Millisecond)
		note("the operator: cleanup done, finalizer removed")
		played <- patch(ctx, c, "", objs[2], map[string]any{"metadata": map[string]any{"finalizers": nil}})
	}()
	_, err = a.Delete(ctx, objs[2:])
	if perr := <-played; perr != nil {
		return perr
	}
	flush(ctx)
	return err
}

// play writes the controllers' steps once each object exists, a moment
// apart, so that the live view shows them one by one.
func play(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, note func(string)) error {
	for _, s := range controllers {
		time.Sleep(700 * time.Millisecond)
		if err := exists(ctx, c, objs[s.obj]); err != nil {
			return err
		}
		if err := patch(ctx, c, "status", objs[s.obj], map[string]any{"status": s.status}); err != nil {
			return err
		}
		note(s.say)
	}
	return nil
}

// exists waits until the Applier has created obj (bounded).
func exists(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopy())
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// patch merges body into obj (or its subresource sub).
func patch(ctx context.Context, c client.Client, sub string, obj *unstructured.Unstructured, body map[string]any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	p := client.RawPatch(types.MergePatchType, b)
	if sub == "" {
		return c.Patch(ctx, obj.DeepCopy(), p)
	}
	return c.SubResource(sub).Patch(ctx, obj.DeepCopy(), p)
}
