package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// ScopeName is the instrumentation scope of the Applier's spans.
const ScopeName = "github.com/progressotel/progressotel/kube"

// DefaultFieldManager is the field manager of the server-side applies
// when WithFieldManager is not given.
const DefaultFieldManager = "progressotel"

// The errors of Apply and Delete; the returned error wraps one of them or
// the context's error, and says which object and why in user-safe words.
// When an object failed and the time limit (or a cancel) cut the others
// short, it wraps both ErrFailed and ErrTimeout (or the context's error).
var (
	// ErrFailed: an object was refused by the API server, reported
	// Failed by kstatus, or vanished while waited for.
	ErrFailed = errors.New("kube: an object failed")
	// ErrTimeout: the time limit (WithTimeout, or the context's deadline)
	// passed before every object was ready.
	ErrTimeout = errors.New("kube: timed out waiting for the objects")
)

// ApplyOption configures an Applier: the options every adapter has
// (adapter.WithTracerProvider, adapter.WithEnvelope, adapter.WithOperation,
// adapter.WithLogger, adapter.WithRecorder in place of the Emitter's
// Recorder) and this package's own. adapter.WithEnvelope sets the envelope
// of the operation's events (common/OperationStarted, Progress,
// OperationCompleted, OperationFailed); the objects' own events and
// transitions carry the object's envelope (see Emitter.Envelope), with its
// scope when the object's labels give none. The default operation is
// "Apply" or "Delete".
type ApplyOption = adapter.Option

type applyConfig struct {
	// What every adapter has: the run's span and common events, the
	// objects' spans, the run's envelope and recorder, the warnings.
	runner   *adapter.Runner
	tracer   trace.Tracer
	envelope progress.Envelope
	recorder *progress.Recorder
	logger   *slog.Logger

	fieldManager string
	force        bool
	timeout      time.Duration
	// streams maps a stream to the condition types it carries, the first
	// one present.
	streams []entry[[]string]

	// Test hooks (export_test.go): the watches' timeoutSeconds, and a call
	// each time a watch ended and is resumed.
	watchTimeout int64
	watchEnded   func()
}

// DefaultConditionStreams returns which conditions of an object become
// transitions on which stream by default: provisioning carries Available,
// or Ready for an object without Available; lifecycle carries Active (the
// provisioninglog's streams).
func DefaultConditionStreams() map[string][]string {
	return map[string][]string{
		progress.StreamProvisioning: {"Available", "Ready"},
		progress.StreamLifecycle:    {"Active"},
	}
}

// WithFieldManager sets the field manager of the server-side applies
// (default DefaultFieldManager).
func WithFieldManager(name string) ApplyOption {
	return adapter.Own(func(c *applyConfig) {
		if name != "" {
			c.fieldManager = name
		}
	})
}

// WithForceConflicts takes over the fields another field manager owns,
// instead of failing with a Conflict.
func WithForceConflicts() ApplyOption {
	return adapter.Own(func(c *applyConfig) { c.force = true })
}

// WithTimeout bounds Apply and Delete: the objects not ready (or gone)
// by then fail with ReasonTimeout and the call returns ErrTimeout. Zero or
// negative: no limit but the context's.
func WithTimeout(d time.Duration) ApplyOption {
	return adapter.Own(func(c *applyConfig) { c.timeout = max(d, 0) })
}

// WithConditionStreams replaces DefaultConditionStreams: for each stream,
// the condition types in order of preference; the first one the object
// has becomes that stream's transitions. An empty map turns the
// transitions off.
func WithConditionStreams(m map[string][]string) ApplyOption {
	return adapter.Own(func(c *applyConfig) { c.streams = sortedEntries(m) })
}

// Applier applies Kubernetes objects by server-side apply, or deletes
// them, and waits until each is ready (or gone), reporting it live: see
// the package documentation, "Apply and wait". It is safe for concurrent
// use; each call is its own operation.
type Applier struct {
	c   client.WithWatch
	e   *Emitter
	cfg applyConfig

	// reported is the last count of common/Progress of a call, which
	// works on its own copy of the Applier.
	reported int
}

// NewApplier returns an Applier that talks to the API server of rc. Its
// objects' condition transitions go through e (its Recorder, Tracker,
// scope labels and component version); a nil e is NewEmitter().
func NewApplier(rc *rest.Config, e *Emitter, opts ...ApplyOption) (*Applier, error) {
	c, err := client.NewWithWatch(rc, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("kube: a client for the API server: %w", err)
	}
	if e == nil {
		e = NewEmitter()
	}
	a := &Applier{c: c, e: e}
	a.cfg.fieldManager = DefaultFieldManager
	a.cfg.streams = sortedEntries(DefaultConditionStreams())
	set := adapter.Apply(&a.cfg, opts...)
	if set.Recorder == nil {
		set.Recorder = e.recorder()
	}
	if set.TracerProvider == nil {
		set.TracerProvider = otel.GetTracerProvider()
	}
	a.cfg.runner = adapter.NewRunner("kube", ScopeName, set)
	a.cfg.tracer = set.TracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(wire.ScopeVersion))
	a.cfg.envelope, a.cfg.recorder = set.Envelope, set.Recorder
	a.cfg.logger = cmp.Or(set.Logger, slog.Default())
	return a, nil
}

// Result is what Apply or Delete found, object by object, in the order
// given.
type Result struct {
	Objects []ObjectResult
	// Ready counts the objects that ended ready (Apply) or gone (Delete).
	Ready int
	// Failed counts the others.
	Failed int
}

// ObjectResult is how one object ended.
type ObjectResult struct {
	APIVersion, Kind, Namespace, Name string
	Generation                        int64
	// Action is what the request did: Created, Updated, Unchanged or
	// Deleted; empty when the API server refused it.
	Action string
	// Status is kstatus's last word: Current, InProgress, Failed,
	// Terminating, NotFound or Unknown.
	Status string
	// Ready is true for an object that ended Current (Apply) or NotFound
	// (Delete).
	Ready bool
	// Reason and Message say why it failed (see TypeObjectFailed), or how
	// it became ready.
	Reason, Message string
}

// The actions of ObjectResult.
const (
	ActionCreated   = "Created"
	ActionUpdated   = "Updated"
	ActionUnchanged = "Unchanged"
	ActionDeleted   = "Deleted"
)

// verb is what a call does, as its spans' names say it.
type verb string

const (
	verbApply  verb = "apply"
	verbDelete verb = "delete"
)

// object is one object of a call, owned by the call's goroutine.
type object struct {
	want *unstructured.Unstructured // as given (namespace defaulted)
	live *unstructured.Unstructured // as last seen
	ctx  context.Context            // holds the object's span
	span trace.Span
	res  ObjectResult
	done bool
	// failure is the failure code of a failed object.
	failure     string
	terminating bool // ObjectTerminating was recorded
}

func (o *object) key() string {
	if o.res.Namespace == "" {
		return o.res.Kind + " " + o.res.Name
	}
	return o.res.Kind + " " + o.res.Namespace + "/" + o.res.Name
}

// Apply applies objects in order by server-side apply (the set's CRDs
// first, until established), then waits until each is Current (kstatus),
// has Failed, or the time limit passed. A namespaced object without a
// namespace goes to "default". It returns nil when every object is ready,
// else an error wrapping ErrFailed, ErrTimeout or the context's error;
// Result says what happened to each object either way.
func (a *Applier) Apply(ctx context.Context, objects []*unstructured.Unstructured) (Result, error) {
	return a.run(ctx, verbApply, objects)
}

// Delete deletes objects (in the background: dependents are left to the
// garbage collector), then waits until each is gone, reporting
// kubernetes/ObjectTerminating while finalizers hold it. An object already
// gone counts as deleted.
func (a *Applier) Delete(ctx context.Context, objects []*unstructured.Unstructured) (Result, error) {
	return a.run(ctx, verbDelete, objects)
}

// run has a value receiver: each call counts its own progress.
func (a Applier) run(parent context.Context, v verb, objects []*unstructured.Unstructured) (Result, error) {
	a.reported = -1
	if parent == nil {
		parent = context.Background()
	}
	name := "Apply"
	if v == verbDelete {
		name = "Delete"
	}
	op := a.cfg.runner.Start(parent, name, "kubernetes "+string(v), time.Now(),
		attribute.Int("kubernetes.objects", len(objects)))

	ctx, cancel := context.WithCancel(op.Context())
	if a.cfg.timeout > 0 {
		ctx, cancel = context.WithTimeout(op.Context(), a.cfg.timeout)
	}
	defer cancel()

	// objs[i] is nil until its phase begins.
	objs := make([]*object, len(objects))
	for p, phase := range phases(v, objects) {
		for _, i := range phase {
			if ctx.Err() != nil {
				break
			}
			if p > 0 {
				a.served(ctx, objects[i])
			}
			objs[i] = a.begin(ctx, v, objects[i])
			if v == verbApply {
				a.apply(ctx, objs[i])
			} else {
				a.delete(ctx, objs[i])
			}
		}
		a.progress(op.Context(), objs)
		a.wait(ctx, op.Context(), v, objs)
	}
	res := Result{Objects: make([]ObjectResult, len(objs))}
	for i, o := range objs {
		if o == nil { // its phase never began: the time ran out before
			o = a.begin(ctx, v, objects[i])
			objs[i] = o
			reason, msg := endReason(ctx, v)
			a.fail(o, progress.FailureTimeout, reason, msg)
		}
		res.Objects[i] = o.res
		if o.res.Ready {
			res.Ready++
		} else {
			res.Failed++
		}
	}
	end := time.Now()
	if res.Failed == 0 {
		op.Complete(end)
		return res, nil
	}
	code, desc, err := a.failure(ctx, objs, res)
	op.Fail(end, code, desc, map[string]any{"ready": res.Ready, "failed": res.Failed, "total": len(objs)})
	return res, err
}

// phases orders an Apply: the CustomResourceDefinitions of the set first,
// applied and waited for until established, then the rest, whose custom
// resources need their CRD served. Each phase keeps the order given.
// Delete is one phase.
func phases(v verb, objects []*unstructured.Unstructured) [][]int {
	var crds, rest []int
	for i, u := range objects {
		if v == verbApply && u.GroupVersionKind().GroupKind() == crdKind {
			crds = append(crds, i)
		} else {
			rest = append(rest, i)
		}
	}
	if len(crds) == 0 {
		return [][]int{rest}
	}
	return [][]int{crds, rest}
}

var crdKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// discoveryWait bounds how long an object after the set's CRDs waits for
// its kind to be served.
const discoveryWait = 30 * time.Second

// served waits until the API server's discovery serves u's kind: an
// established CRD's kind appears in discovery a moment later. It gives up
// after discoveryWait (the apply then fails with NoKindMatch) and returns
// at once for a kind served already or an error that is not a missing kind.
func (a *Applier) served(ctx context.Context, u *unstructured.Unstructured) {
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, discoveryWait, true, func(context.Context) (bool, error) {
		_, err := a.c.IsObjectNamespaced(u)
		return err == nil || !meta.IsNoMatchError(err), nil
	})
}

// failure sums up a call that did not end with every object ready: its
// failure code, a user-safe description and the error to return.
func (a *Applier) failure(ctx context.Context, objs []*object, res Result) (string, string, error) {
	var first *object    // the first that failed, not by the wait's end
	var waiting []string // every one not ready
	for _, o := range objs {
		if o.res.Ready {
			continue
		}
		if first == nil && o.res.Reason != ReasonTimeout && o.res.Reason != ReasonCancelled {
			first = o
		}
		waiting = append(waiting, fmt.Sprintf("%s (%s)", o.key(), o.res.Status))
	}
	counts := fmt.Sprintf("%d of %d objects ready", res.Ready, len(objs))
	if first != nil {
		desc := fmt.Sprintf("%s; %s failed (%s)", counts, first.key(), first.res.Reason)
		err := fmt.Errorf("%w: %s", ErrFailed, desc)
		// The wait's end too, when it cut the others short.
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("%w (%w)", err, ErrTimeout)
		case ctx.Err() != nil:
			err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
		return first.failure, desc, err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		desc := fmt.Sprintf("timed out: %s; still waiting for %s", counts, strings.Join(waiting, ", "))
		return progress.FailureTimeout, desc, fmt.Errorf("%w: %s", ErrTimeout, desc)
	}
	desc := fmt.Sprintf("cancelled: %s; still waiting for %s", counts, strings.Join(waiting, ", "))
	return progress.FailureInternal, desc, fmt.Errorf("kube: %s: %w", desc, context.Cause(ctx))
}

// begin starts the object's span.
func (a *Applier) begin(ctx context.Context, v verb, u *unstructured.Unstructured) *object {
	o := &object{want: u.DeepCopy()}
	o.res = ObjectResult{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Status: string(kstatus.UnknownStatus)}
	if namespaced, err := a.c.IsObjectNamespaced(o.want); err == nil && namespaced && o.res.Namespace == "" {
		o.res.Namespace = metav1.NamespaceDefault
		o.want.SetNamespace(o.res.Namespace)
	}
	attrs := []attribute.KeyValue{
		attribute.String("kubernetes.api_version", o.res.APIVersion),
		attribute.String("kubernetes.kind", o.res.Kind),
		attribute.String("kubernetes.name", o.res.Name),
	}
	if o.res.Namespace != "" {
		attrs = append(attrs, attribute.String("k8s.namespace.name", o.res.Namespace))
	}
	o.ctx, o.span = a.cfg.tracer.Start(ctx, string(v)+" "+o.key(), trace.WithAttributes(attrs...))
	return o
}

// apply is the server-side apply of one object.
func (a *Applier) apply(ctx context.Context, o *object) {
	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(o.want.GroupVersionKind())
	err := a.c.Get(ctx, client.ObjectKeyFromObject(o.want), before)
	if err != nil && !apierrors.IsNotFound(err) {
		a.refused(o, err)
		return
	}
	existed := err == nil
	live := o.want.DeepCopy()
	opts := []client.ApplyOption{client.FieldOwner(a.cfg.fieldManager)}
	if a.cfg.force {
		opts = append(opts, client.ForceOwnership)
	}
	if err := a.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(live), opts...); err != nil {
		a.refused(o, err)
		return
	}
	typ := TypeObjectCreated
	switch {
	case !existed:
		o.res.Action = ActionCreated
	case before.GetResourceVersion() == live.GetResourceVersion():
		o.res.Action, typ = ActionUnchanged, TypeObjectUnchanged
	default:
		o.res.Action, typ = ActionUpdated, TypeObjectUpdated
	}
	o.live = live // the envelope of the record
	a.record(o, typ, 0, "", "")
	a.observe(verbApply, o, live)
}

// delete deletes one object and looks at what is left of it.
func (a *Applier) delete(ctx context.Context, o *object) {
	err := a.c.Delete(ctx, o.want.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		a.refused(o, err)
		return
	}
	o.res.Action = ActionDeleted
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.want.GroupVersionKind())
	switch err := a.c.Get(ctx, client.ObjectKeyFromObject(o.want), live); {
	case apierrors.IsNotFound(err):
		a.gone(verbDelete, o)
	case err != nil:
		a.refused(o, err)
	default:
		a.observe(verbDelete, o, live)
	}
}

// refused ends an object that the API server did not accept (or could not
// be asked about), with the server's reason and message.
func (a *Applier) refused(o *object, err error) {
	reason, msg, code := string(apierrors.ReasonForError(err)), "", progress.FailureRejected
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		msg = status.Status().Message
		if reason == "" {
			reason = string(metav1.StatusReasonUnknown)
		}
	case meta.IsNoMatchError(err):
		reason, msg = "NoKindMatch", fmt.Sprintf("the API server serves no kind %s in %s", o.res.Kind, o.res.APIVersion)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// The wait's end decides (timeout or cancelled).
		return
	default:
		// Not the server's words (a connection error, a client bug): its
		// text stays in the log, not in the events.
		reason, msg, code = "Unreachable", "the API server could not be asked", progress.FailureInternal
		a.cfg.logger.Warn("kube: a request failed", "object", o.key(), "error", err.Error())
	}
	a.fail(o, code, reason, msg)
}

// observe takes one state of the object: its conditions become
// transitions, and kstatus decides whether the object is done.
func (a *Applier) observe(v verb, o *object, live *unstructured.Unstructured) {
	o.live = live
	o.res.Generation = live.GetGeneration()
	readyReason := a.transitions(o, live)
	r, err := kstatus.Compute(live)
	if err != nil {
		a.cfg.logger.Warn("kube: kstatus cannot read the object", "object", o.key(), "error", err.Error())
		o.res.Status = string(kstatus.UnknownStatus)
		return
	}
	o.res.Status, o.res.Message = string(r.Status), r.Message
	switch {
	case v == verbDelete:
		if r.Status == kstatus.TerminatingStatus && !o.terminating {
			o.terminating = true
			a.record(o, TypeObjectTerminating, 0, "", r.Message)
		}
	case r.Status == kstatus.CurrentStatus:
		o.res.Ready, o.res.Reason = true, readyReason
		a.record(o, TypeObjectReady, 0, o.res.Reason, r.Message)
		oc := progress.OutcomeChanged
		if o.res.Action == ActionUnchanged {
			oc = progress.OutcomeOK
		}
		a.end(o, oc, "")
	case r.Status == kstatus.FailedStatus:
		reason := string(kstatus.FailedStatus)
		for _, c := range r.Conditions {
			if c.Status == "True" && c.Reason != "" {
				reason = c.Reason
				break
			}
		}
		a.fail(o, progress.FailureInfrastructure, reason, r.Message)
	}
}

// gone ends an object that no longer exists: deleted (Delete), or
// vanished while waited for (Apply).
func (a *Applier) gone(v verb, o *object) {
	o.res.Status = string(kstatus.NotFoundStatus)
	if v == verbApply {
		a.fail(o, progress.FailureInfrastructure, ReasonGone, "the object was deleted while waiting for it to be ready")
		return
	}
	o.res.Ready, o.res.Message = true, ""
	a.record(o, TypeObjectDeleted, 0, "", "")
	if o.live != nil {
		a.e.Forget(nil, o.live)
	}
	a.end(o, progress.OutcomeChanged, "")
}

// fail records kubernetes/ObjectFailed and ends the object's span.
func (a *Applier) fail(o *object, code, reason, msg string) {
	o.res.Ready, o.res.Reason, o.res.Message, o.failure = false, reason, msg, code
	a.record(o, TypeObjectFailed, log.SeverityError, reason, msg)
	oc := cmp.Or(endOutcomes[reason], progress.OutcomeFailed)
	desc := reason
	if msg != "" {
		desc += ": " + msg
	}
	a.end(o, oc, desc)
}

// endOutcomes are the outcomes of the objects whose wait ended.
var endOutcomes = map[string]progress.Outcome{ReasonTimeout: progress.OutcomeTimedOut, ReasonCancelled: progress.OutcomeCancelled}

// end ends the object's span with its outcome; a non-empty errDesc makes
// its status Error.
func (a *Applier) end(o *object, oc progress.Outcome, errDesc string) {
	o.done = true
	progress.SetOutcome(o.span, oc)
	o.span.SetAttributes(attribute.String("kubernetes.status", o.res.Status))
	if o.res.Action != "" {
		o.span.SetAttributes(attribute.String("kubernetes.action", o.res.Action))
	}
	if errDesc != "" {
		o.span.SetStatus(codes.Error, errDesc)
	}
	o.span.End()
}

// record records one kubernetes/* event of o in its span, with its
// envelope.
func (a *Applier) record(o *object, typ string, sev log.Severity, reason, msg string) {
	u := cmp.Or(o.live, o.want)
	d := objectDetails{APIVersion: o.res.APIVersion, Status: o.res.Status, Reason: reason, Message: msg}
	if typ == TypeObjectTerminating {
		d.Finalizers = u.GetFinalizers()
	}
	if typ == TypeObjectCreated || typ == TypeObjectUpdated || typ == TypeObjectUnchanged {
		d.Status = "" // not looked at yet
	}
	env := a.e.Envelope(nil, u)
	if len(env.Scope) == 0 {
		env.Scope = a.cfg.envelope.Scope
	}
	if err := a.cfg.recorder.Record(o.ctx, progress.Event{Type: typ, Details: d, Severity: sev, Envelope: env}); err != nil {
		a.cfg.logger.Warn("kube: an event was not recorded", "type", typ, "error", err.Error())
	}
}

// transitions feeds the object's conditions to the Emitter's Tracker, one
// stream at a time: only real changes are recorded. It returns the reason
// of the first stream's condition ("Provisioned",
// "MinimumReplicasAvailable"), the reason of a ready object.
func (a *Applier) transitions(o *object, live *unstructured.Unstructured) (reason string) {
	found := false
	for _, s := range a.cfg.streams {
		c, ok := findCondition(live, s.val)
		if !ok {
			continue
		}
		if !found {
			reason, found = c.Reason, true
		}
		if _, err := a.e.Observe(o.ctx, nil, live, s.key, c); err != nil {
			a.cfg.logger.Warn("kube: a condition transition was not recorded", "object", o.key(), "stream", s.key, "error", err.Error())
		}
	}
	return reason
}

// findCondition returns the first of the condition types in status.conditions.
func findCondition(u *unstructured.Unstructured, types []string) (metav1.Condition, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, t := range types {
		for _, raw := range conds {
			m, ok := raw.(map[string]any)
			if typ, _ := m["type"].(string); ok && typ == t {
				str := func(k string) string {
					v, _ := m[k].(string)
					return v
				}
				return metav1.Condition{Type: t, Status: metav1.ConditionStatus(str("status")), Reason: str("reason"), Message: str("message")}, true
			}
		}
	}
	return metav1.Condition{}, false
}

// progress records common/Progress, the objects ready (or gone) of all,
// when that count changed.
func (a *Applier) progress(ctx context.Context, objs []*object) {
	ready := 0
	for _, o := range objs {
		if o != nil && o.res.Ready {
			ready++
		}
	}
	if ready == a.reported {
		return
	}
	a.reported = ready
	a.cfg.runner.Record(ctx, progress.Progress(int64(ready), int64(len(objs)), ProgressUnit))
}
