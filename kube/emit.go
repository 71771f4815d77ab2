package kube

import (
	"context"
	"maps"
	"reflect"
	"slices"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/progressotel/progressotel/progress"
)

// The labels of provisioninglog's tenant scope.
const (
	LabelOrganization = "unikorn-cloud.org/organization"
	LabelProject      = "unikorn-cloud.org/project"
)

// DefaultScopeLabels returns the default mapping from label key to scope
// key: LabelOrganization → "organization", LabelProject → "project".
func DefaultScopeLabels() map[string]string {
	return map[string]string{LabelOrganization: "organization", LabelProject: "project"}
}

// Emitter turns an object's condition into a progress transition. It is
// safe for concurrent use. The zero Emitter is not usable: use NewEmitter.
type Emitter struct {
	rec     *progress.Recorder // nil: progress.Default() at each call
	scope   []entry[string]    // label key → scope key
	version string
	tracker *progress.Tracker
}

// Option configures an Emitter.
type Option func(*Emitter)

// WithRecorder emits through r instead of progress.Default().
func WithRecorder(r *progress.Recorder) Option {
	return func(e *Emitter) { e.rec = r }
}

// WithScopeLabels replaces the default scope labels: each label key of the
// object that is present and not empty becomes the scope key it maps to.
// An empty map turns the scope off.
func WithScopeLabels(labelToScope map[string]string) Option {
	return func(e *Emitter) { e.scope = sortedEntries(labelToScope) }
}

// WithComponentVersion sets the component version, e.g. the controller's
// release.
func WithComponentVersion(v string) Option {
	return func(e *Emitter) { e.version = v }
}

// WithTracker makes Observe remember states in t, and emit through t's
// Recorder. By default an Emitter gets its own Tracker, with
// progress.DefaultTrackerCapacity and the Emitter's Recorder.
func WithTracker(t *progress.Tracker) Option {
	return func(e *Emitter) { e.tracker = t }
}

// NewEmitter returns an Emitter with the default scope labels.
func NewEmitter(opts ...Option) *Emitter {
	e := &Emitter{scope: sortedEntries(DefaultScopeLabels())}
	for _, o := range opts {
		o(e)
	}
	if e.tracker == nil {
		e.tracker = progress.NewTracker(e.rec)
	}
	return e
}

// entry is one entry of an option's map. The options' maps are kept as
// entries in key order, so that the records of one observation have a
// fixed order.
type entry[V any] struct {
	key string
	val V
}

// sortedEntries returns the entries of m whose key and value are not
// empty, by key.
func sortedEntries[V ~string | ~[]string](m map[string]V) []entry[V] {
	var out []entry[V]
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "" && len(m[k]) > 0 {
			out = append(out, entry[V]{k, m[k]})
		}
	}
	return out
}

// FindCondition returns a copy of the condition of type conditionType in
// conditions, or the zero Condition when there is none. Unlike
// meta.FindStatusCondition it returns no pointer into the slice, which
// meta.SetStatusCondition would then overwrite.
func FindCondition(conditions []metav1.Condition, conditionType string) metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == conditionType {
			return conditions[i]
		}
	}
	return metav1.Condition{}
}

// ConditionOf returns the progress condition of c: its status, reason and
// message. The type, times and observed generation are not part of it.
func ConditionOf(c metav1.Condition) progress.Condition {
	return progress.Condition{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
}

// Emit writes one condition transition of object on stream, every time
// it is called (see EmitIfChanged and Observe). The error wraps
// progress.ErrInvalidEvent for a bad stream name or an empty status; the
// Recorder counts such a transition (progress.Stats,
// progress.events.invalid), and it is logged through the logr logger of
// ctx, if ctx has one.
func (e *Emitter) Emit(ctx context.Context, scheme *runtime.Scheme, object client.Object, stream, status, reason, message string) error {
	t := e.Transition(scheme, object, stream, progress.Condition{Status: status, Reason: reason, Message: message})
	return e.logged(ctx, t, e.recorder().RecordTransition(ctx, t))
}

// EmitIfChanged emits the transition from prior to next of object on
// stream when they differ in status, reason or message. A zero prior means
// the condition did not exist: next is the first transition, with no
// previous state. It reports whether it emitted, and the Recorder's error.
//
// Call it after the status update that stores next has succeeded. Take
// prior as a copy (FindCondition) before meta.SetStatusCondition changes
// the slice it points into.
func (e *Emitter) EmitIfChanged(ctx context.Context, scheme *runtime.Scheme, object client.Object, stream string, prior, next metav1.Condition) (bool, error) {
	t := e.Transition(scheme, object, stream, ConditionOf(next))
	ok, err := e.recorder().RecordIfChanged(ctx, ConditionOf(prior), t)
	return ok, e.logged(ctx, t, err)
}

// Observe emits the condition c of object on stream when it differs from
// the last one e's Tracker saw for that object (Kind, namespace, name) and
// stream, with that last one as the previous state. The Tracker's rules
// apply (see progress.Tracker): memory is bounded, a re-created object
// (new uid) starts afresh, and after a restart or an eviction the first
// observation is emitted again with no known previous state. Call it after
// the status update succeeded; call Forget when the object is deleted.
func (e *Emitter) Observe(ctx context.Context, scheme *runtime.Scheme, object client.Object, stream string, c metav1.Condition) (bool, error) {
	t := e.Transition(scheme, object, stream, ConditionOf(c))
	ok, err := e.tracker.Observe(ctx, t)
	return ok, e.logged(ctx, t, err)
}

// Forget drops what e's Tracker remembers about object, on every stream.
func (e *Emitter) Forget(scheme *runtime.Scheme, object client.Object) {
	e.tracker.Forget(e.Envelope(scheme, object).Resource)
}

// Transition returns the transition Emit would write.
func (e *Emitter) Transition(scheme *runtime.Scheme, object client.Object, stream string, c progress.Condition) progress.Transition {
	return progress.Transition{Stream: stream, Condition: c, Envelope: e.Envelope(scheme, object)}
}

// Envelope returns the envelope of object: see the package doc. A nil
// object gives an empty envelope.
func (e *Emitter) Envelope(scheme *runtime.Scheme, object client.Object) progress.Envelope {
	if isNil(object) {
		return progress.Envelope{Component: progress.Component{Version: e.version}}
	}
	gvk := kindOf(scheme, object)
	env := progress.Envelope{
		Component: progress.Component{Name: gvk.Group, Version: e.version},
		Resource: progress.Resource{
			Type:      gvk.Kind,
			ID:        object.GetName(),
			Namespace: object.GetNamespace(),
			UID:       string(object.GetUID()),
		},
		ObservedGeneration: object.GetGeneration(),
	}
	labels := object.GetLabels()
	for _, s := range e.scope {
		if v := labels[s.key]; v != "" {
			if env.Scope == nil {
				env.Scope = make(map[string]string, len(e.scope))
			}
			env.Scope[s.val] = v
		}
	}
	return env
}

// kindOf resolves the object's group and Kind through the scheme, falling
// back to its TypeMeta, then to its Go type name.
func kindOf(scheme *runtime.Scheme, object client.Object) schema.GroupVersionKind {
	if scheme != nil {
		if gvk, err := apiutil.GVKForObject(object, scheme); err == nil {
			return gvk
		}
	}
	if gvk := object.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk
	}
	t := reflect.TypeOf(object)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return schema.GroupVersionKind{Kind: t.Name()}
}

// isNil reports whether object is nil or a typed nil pointer, whose
// accessors would panic.
func isNil(object client.Object) bool {
	if object == nil {
		return true
	}
	v := reflect.ValueOf(object)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func (e *Emitter) recorder() *progress.Recorder {
	if e.rec != nil {
		return e.rec
	}
	return progress.Default()
}

// logged reports err through the logr logger of ctx, if ctx has one (a
// reconciler's has), and returns it.
func (e *Emitter) logged(ctx context.Context, t progress.Transition, err error) error {
	if err != nil && ctx != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "condition transition not emitted",
			"stream", t.Stream, "kind", t.Resource.Type, "name", t.Resource.ID, "namespace", t.Resource.Namespace)
	}
	return err
}
