package kube

// The progressEventTypes of the apply-and-wait adapter (Applier). The
// envelope names the object (see Emitter.Envelope): component = API group,
// resource = Kind, name, namespace, uid, observedGeneration = its
// metadata.generation; the details hold apiVersion and, where there is
// one, kstatus's status, the reason and the message.
const (
	// TypeObjectCreated: the server-side apply created the object.
	TypeObjectCreated = "kubernetes/ObjectCreated"
	// TypeObjectUpdated: the apply changed the object (its
	// resourceVersion moved).
	TypeObjectUpdated = "kubernetes/ObjectUpdated"
	// TypeObjectUnchanged: the apply left the object as it was.
	TypeObjectUnchanged = "kubernetes/ObjectUnchanged"
	// TypeObjectReady: kstatus says Current.
	TypeObjectReady = "kubernetes/ObjectReady"
	// TypeObjectFailed: the API server refused the object (reason: its
	// StatusReason, such as Invalid, Conflict or Forbidden), kstatus says
	// Failed, the object vanished while waited for, or the wait ended
	// (reason Timeout or Cancelled). At severity ERROR.
	TypeObjectFailed = "kubernetes/ObjectFailed"
	// TypeObjectTerminating: a delete was accepted and the object waits for
	// its finalizers (details: finalizers). Once per object and delete.
	TypeObjectTerminating = "kubernetes/ObjectTerminating"
	// TypeObjectDeleted: the object is gone.
	TypeObjectDeleted = "kubernetes/ObjectDeleted"
)

// ProgressUnit is the unit of the common/Progress events: N of M objects
// ready (or gone, for Delete).
const ProgressUnit = "objects"

// The reasons of TypeObjectFailed that are not the API server's or
// kstatus's own.
const (
	ReasonTimeout   = "Timeout"
	ReasonCancelled = "Cancelled"
	ReasonGone      = "Deleted"
)

// objectDetails are the details of every kubernetes/* event; the
// record's envelope names the object.
type objectDetails struct {
	APIVersion string `json:"apiVersion"`
	Status     string `json:"status,omitempty"` // kstatus's
	// Reason is the API server's StatusReason for a refusal, the failing
	// condition's reason for kstatus Failed, or a Reason* constant.
	Reason     string   `json:"reason,omitempty"`
	Message    string   `json:"message,omitempty"`
	Finalizers []string `json:"finalizers,omitempty"` // those a Terminating object waits for
}
