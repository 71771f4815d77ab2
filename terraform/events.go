package terraform

import "strings"

// The progressEventTypes of the adapter, one per message type (the package
// documentation has the table).
const (
	TypeVersion            = "terraform/Version"            // version
	TypeLog                = "terraform/Log"                // log, and hclog lines without a type
	TypeDiagnostic         = "terraform/Diagnostic"         // diagnostic
	TypeResourceDrift      = "terraform/ResourceDrift"      // resource_drift
	TypePlannedChange      = "terraform/PlannedChange"      // planned_change
	TypeChangeSummary      = "terraform/ChangeSummary"      // change_summary
	TypeOutputs            = "terraform/Outputs"            // outputs
	TypeApplyStarted       = "terraform/ApplyStarted"       // apply_start
	TypeApplyProgress      = "terraform/ApplyProgress"      // apply_progress (the tool's 10 s heartbeat), and the adapter's own (WithHeartbeat)
	TypeApplyCompleted     = "terraform/ApplyCompleted"     // apply_complete
	TypeApplyErrored       = "terraform/ApplyErrored"       // apply_errored
	TypeProvisionStarted   = "terraform/ProvisionStarted"   // provision_start
	TypeProvisionOutput    = "terraform/ProvisionOutput"    // provision_progress (one line of output)
	TypeProvisionCompleted = "terraform/ProvisionCompleted" // provision_complete
	TypeProvisionErrored   = "terraform/ProvisionErrored"   // provision_errored
	TypeRefreshStarted     = "terraform/RefreshStarted"     // refresh_start
	TypeRefreshCompleted   = "terraform/RefreshCompleted"   // refresh_complete
	// TypeMessage is used for a message whose type cannot be written as an
	// event name (see EventType). Details: type, level, message.
	TypeMessage = "terraform/Message"
)

// The unit of the common/Progress events: N of M resource operations.
const ProgressUnit = "resources"

// Details of the events, encoded by their json tags (see package wire):
// what the tool leaves out is left out (omitempty).
type (
	// resourceFields leave out the resource's name: the address holds it.
	resourceFields struct {
		Address      string `json:"address"`
		ResourceType string `json:"resourceType"`
		Module       string `json:"module,omitempty"`
		// ResourceKey is the count index (int64) or for_each key (string).
		ResourceKey any `json:"resourceKey,omitempty"`
	}
	versionDetails struct {
		Tool    string `json:"tool"`
		Version string `json:"version"`
		UI      string `json:"ui,omitempty"`
	}
	// genericDetails are also TypeLog's, without type, address and action.
	genericDetails struct {
		// Type is set for TypeMessage only: the other names say it.
		Type    string `json:"type,omitempty"`
		Level   string `json:"level"`
		Message string `json:"message"`
		Address string `json:"address,omitempty"`
		Action  string `json:"action,omitempty"`
	}
	changeDetails struct {
		resourceFields
		Action          string `json:"action"`
		Reason          string `json:"reason,omitempty"`
		PreviousAddress string `json:"previousAddress,omitempty"`
		ImportingID     string `json:"importingId,omitempty"`
	}
	outputsDetails struct {
		// Outputs are sorted by name.
		Outputs []outputDetails `json:"outputs"`
	}
	outputDetails struct {
		Name      string `json:"name"`
		Sensitive bool   `json:"sensitive"`
		Action    string `json:"action,omitempty"`
		// Value is never set for a sensitive output.
		Value any `json:"value,omitempty"`
	}
	applyStartedDetails struct {
		resourceFields
		Action  string `json:"action"`
		IDKey   string `json:"idKey,omitempty"`
		IDValue string `json:"idValue,omitempty"`
	}
	// elapsedDetails are those of ApplyProgress and ApplyErrored.
	elapsedDetails struct {
		resourceFields
		Action         string  `json:"action"`
		ElapsedSeconds float64 `json:"elapsedSeconds"`
		// Source is "adapter" for the adapter's own heartbeat (see
		// WithHeartbeat), empty for the tool's (ApplyProgress only).
		Source string `json:"source,omitempty"`
		// Cancelled marks an operation that a stop cut short (ApplyErrored
		// only).
		Cancelled bool `json:"cancelled,omitempty"`
	}
	applyCompletedDetails struct {
		resourceFields
		Action         string  `json:"action"`
		IDKey          string  `json:"idKey,omitempty"`
		IDValue        string  `json:"idValue,omitempty"`
		ElapsedSeconds float64 `json:"elapsedSeconds"`
	}
	provisionDetails struct {
		resourceFields
		Provisioner string `json:"provisioner"`
		// Cancelled marks a provisioner run that a stop cut short
		// (ProvisionErrored only).
		Cancelled bool `json:"cancelled,omitempty"`
	}
	provisionOutputDetails struct {
		resourceFields
		Provisioner string `json:"provisioner"`
		Output      string `json:"output"`
	}
	refreshDetails struct {
		resourceFields
		IDKey   string `json:"idKey,omitempty"`
		IDValue string `json:"idValue,omitempty"`
	}
)

// knownTypes maps the message types the adapter reads to their event types.
var knownTypes = map[string]string{
	"version":            TypeVersion,
	"log":                TypeLog,
	"diagnostic":         TypeDiagnostic,
	"resource_drift":     TypeResourceDrift,
	"planned_change":     TypePlannedChange,
	"change_summary":     TypeChangeSummary,
	"outputs":            TypeOutputs,
	"apply_start":        TypeApplyStarted,
	"apply_progress":     TypeApplyProgress,
	"apply_complete":     TypeApplyCompleted,
	"apply_errored":      TypeApplyErrored,
	"provision_start":    TypeProvisionStarted,
	"provision_progress": TypeProvisionOutput,
	"provision_complete": TypeProvisionCompleted,
	"provision_errored":  TypeProvisionErrored,
	"refresh_start":      TypeRefreshStarted,
	"refresh_complete":   TypeRefreshCompleted,
}

// EventType returns the progressEventType of a message type: the table's
// for the types the adapter reads ("apply_start" is ApplyStarted), TypeLog
// for none, and for any other its words in UpperCamelCase ("test_run" is
// "terraform/TestRun"); TypeMessage for a type that is not lower-case
// ASCII words joined by '_', starting with a letter, of at most 64 bytes.
func EventType(messageType string) string {
	if messageType == "" {
		return TypeLog
	}
	if t, ok := knownTypes[messageType]; ok {
		return t
	}
	if len(messageType) > 64 || messageType[0] < 'a' || messageType[0] > 'z' {
		return TypeMessage
	}
	b := append(make([]byte, 0, len("terraform/")+len(messageType)), "terraform/"...)
	for w := range strings.SplitSeq(messageType, "_") {
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
			return TypeMessage
		}
		if w[0] >= 'a' {
			b, w = append(b, w[0]-'a'+'A'), w[1:]
		}
		b = append(b, w...)
	}
	return string(b)
}
