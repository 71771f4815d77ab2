// Package kube reports Kubernetes work live: the condition transitions of
// objects (provisioning, lifecycle, or any other stream) from a
// controller-runtime reconciler (the Emitter's Emit, EmitIfChanged and
// Observe), and the
// apply-and-wait of a set of objects by a driver (Applier).
//
// It is a separate Go module, so that the core progressotel module never
// depends on Kubernetes. Its command progressotel-kube (cmd/progressotel-kube)
// is the Applier for drivers in other languages.
//
// # provisioninglog's call
//
// Emitter.Emit takes the arguments of unikorn-cloud's provisioninglog.Emit,
// so a controller switches by making one Emitter (NewEmitter) and calling
// it where it called provisioninglog:
//
//	emitter.Emit(ctx, r.Scheme, cluster, progress.StreamProvisioning, "True", "Provisioned", "the cluster is ready")
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
// When the scheme (or a nil one) does not know the object's Go type, the
// group and Kind come from the object's TypeMeta when it is set (as on
// unstructured objects), else the Kind is the Go type name and the group
// is empty.
//
// # Edge-triggering
//
// Emit, like provisioninglog's, emits every time it is called. Reconcilers
// run on every poll, so use EmitIfChanged with the condition read from the
// object before this reconcile changed it, after the status update
// succeeded:
//
//	prior := kube.FindCondition(obj.Status.Conditions, "Available") // a copy
//	meta.SetStatusCondition(&obj.Status.Conditions, next)
//	if err := r.Status().Update(ctx, obj); err != nil {
//		return ctrl.Result{}, err // nothing happened: nothing is emitted
//	}
//	emitter.EmitIfChanged(ctx, r.Scheme, obj, progress.StreamProvisioning, prior, next)
//
// or Observe through an Emitter with a progress.Tracker (WithTracker), which remembers
// the last state per object and stream itself.
//
// # Apply and wait
//
// An Applier applies objects by server-side apply (WithFieldManager), in
// the order given but for the set's CustomResourceDefinitions, which go
// first and are waited for until established, then watches each until
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus) says it is Current or
// Failed, or the time limit (WithTimeout) passes; Delete waits until each
// object is gone, while finalizers hold it Terminating. It records:
//   - common/OperationStarted, then common/OperationCompleted or
//     common/OperationFailed (the Failure* codes) in the operation's span;
//   - per object, in its own child span from the apply until ready, the
//     kubernetes/Object* events (TypeObjectCreated, ...); the span's
//     progress.outcome is changed, ok (nothing changed), failed, timeout or
//     cancelled;
//   - common/Progress, N of M objects ready (or gone), each time one is;
//   - the object's own conditions as transitions, through the Emitter's
//     Tracker (WithConditionStreams), one record per real change.
//
// Readiness is kstatus's alone: a custom resource is InProgress while its
// Reconciling condition is True, its Ready condition is not True, or its
// status.observedGeneration lags metadata.generation; Failed when Stalled
// is True; else Current. A refusal by the API server (validation, a
// field-manager conflict, RBAC) is TypeObjectFailed with the server's
// StatusReason and message. A watch the API server ends is resumed from
// the last resourceVersion seen, so that no change is missed or seen twice.
package kube
