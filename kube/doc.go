// Package kube emits the condition transitions of Kubernetes objects
// (provisioning, lifecycle, or any other stream) as progress transitions,
// from a controller-runtime reconciler.
//
// It is a separate Go module, so that the core progressotel module never
// depends on Kubernetes.
//
// # The seed's call
//
// Emit has the signature of unikorn-cloud's provisioninglog.Emit, so a
// controller switches by changing its import:
//
//	kube.Emit(ctx, r.Scheme, cluster, progress.StreamProvisioning, "True", "Provisioned", "the cluster is ready")
//
// The envelope comes from the object:
//   - component name: the object's API group, resolved through the scheme
//     ("" for the core group); the version only through an Emitter
//     (WithComponentVersion);
//   - resource type: the object's Kind, resolved through the scheme;
//   - resource id: metadata.name; namespace and uid as their own attributes;
//   - scope: from labels, present-only; by default
//     unikorn-cloud.org/organization → organization and
//     unikorn-cloud.org/project → project (WithScopeLabels changes them);
//   - observedGeneration: metadata.generation.
//
// When the scheme does not know the object's Go type (or the scheme is
// nil), nothing fails: the group and Kind come from the object's TypeMeta
// when it is set (as on unstructured objects), else the Kind is the Go type
// name and the group is empty.
//
// # Edge-triggering
//
// Emit, like the seed's, emits every time it is called. Reconcilers run on
// every poll, so use EmitIfChanged with the condition read from the object
// before this reconcile changed it, after the status update succeeded:
//
//	prior := kube.FindCondition(obj.Status.Conditions, "Available") // a copy
//	meta.SetStatusCondition(&obj.Status.Conditions, next)
//	if err := r.Status().Update(ctx, obj); err != nil {
//		return ctrl.Result{}, err // nothing happened: nothing is emitted
//	}
//	kube.EmitIfChanged(ctx, r.Scheme, obj, progress.StreamProvisioning, prior, next)
//
// or an Emitter with a progress.Tracker (Emitter.Observe), which remembers
// the last state per object and stream itself.
package kube
