package ansible

// The progressEventTypes of the Ignition Ansible Lifecycle Driver, exactly
// as it named them (TypePlayMatchedNoHosts keeps the driver's typo, which
// consumers match on).
const (
	TypePlayStarted         = "ansible/PlayStarted"
	TypePlayMatchedNoHosts  = "ansible/PlayMatchedNoNoHostsEvent"
	TypeTaskStarted         = "ansible/TaskStarted"
	TypeTaskStartedOnHost   = "ansible/TaskStartedOnHost"
	TypeTaskCompletedOnHost = "ansible/TaskCompletedOnHost"
	TypeTaskRetryOnHost     = "ansible/TaskRetryOnHost"
	TypeTaskFailedOnHost    = "ansible/TaskFailedOnHost"
	TypeTaskSkippedOnHost   = "ansible/TaskSkippedOnHost"
	TypeHostUnreachable     = "ansible/HostUnreachable"
	TypeVarPrompt           = "ansible/VarPrompt"
	TypePlaybookResult      = "ansible/PlaybookResult"
)

// Details of the events, by their json tags: keys the driver always wrote
// are always present (null when Ansible gave no value).
type (
	playDetails struct {
		PlayName string `json:"playName"`
	}
	taskStartedDetails struct {
		TaskName   string `json:"taskName"`
		Args       any    `json:"args,omitempty"` // a map, {} when not shown; nil for no_log
		ArgsHidden bool   `json:"argsHidden"`
	}
	taskStartedOnHostDetails struct {
		TaskName   string `json:"taskName"`
		HostName   string `json:"hostName"`
		Args       any    `json:"args,omitempty"`
		ArgsHidden bool   `json:"argsHidden"`
	}
	hostResultDetails struct {
		TaskName          string     `json:"taskName"`
		ItemLabel         any        `json:"itemLabel"`
		HostName          string     `json:"hostName"`
		DelegatedHostName any        `json:"delegatedHostName"`
		TaskResult        taskResult `json:"taskResult"`
		// Additions to the driver's keys: a failure ignore_errors lets
		// pass, or that a rescue section took.
		Ignored bool `json:"ignored,omitempty"`
		Rescued bool `json:"rescued,omitempty"`
		// ansible-runner left the result out (too large): taskResult
		// says nothing of it, changed included; the recap settles the span.
		ResultUnknown bool `json:"resultUnknown,omitempty"`
	}
	// hostEventDetails: TaskRetryOnHost and HostUnreachable have no item.
	hostEventDetails struct {
		TaskName          string     `json:"taskName"`
		HostName          string     `json:"hostName"`
		DelegatedHostName any        `json:"delegatedHostName"`
		TaskResult        taskResult `json:"taskResult"`
		// An unreachable host that ignore_unreachable lets go on.
		Ignored bool `json:"ignored,omitempty"`
	}
	varPromptDetails struct {
		VarName string `json:"varName"`
	}
	playbookResultDetails struct {
		Plays     []playEntry          `json:"plays"`
		HostStats map[string]HostStats `json:"hostStats"`
		// The final stats event never arrived: counted from the events.
		Rebuilt       bool   `json:"rebuilt,omitempty"`
		RebuiltReason string `json:"rebuiltReason,omitempty"`
	}
	playEntry struct {
		Play Play `json:"play"`
	}
)

// event is d for TaskRetryOnHost and HostUnreachable, which have no item.
func (d hostResultDetails) event() hostEventDetails {
	return hostEventDetails{TaskName: d.TaskName, HostName: d.HostName, DelegatedHostName: d.DelegatedHostName,
		TaskResult: d.TaskResult}
}

// rebuiltReason is the note on a rebuilt PlaybookResult.
const rebuiltReason = "the final stats event never arrived: counted from the events seen (rescued is not counted)"
