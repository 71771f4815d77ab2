package ansible

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotInstalled is returned by Run when ansible-runner cannot be found.
// Install it with Ansible (Debian: apt-get install --no-install-recommends
// ansible-core python3-ansible-runner), or give its path with
// WithRunnerPath.
var ErrNotInstalled = errors.New("ansible: ansible-runner is not installed (apt-get install --no-install-recommends ansible-core python3-ansible-runner)")

// ErrNoEvents is returned when a stream ended without a single job event:
// it was empty or not an ansible-runner job-event stream.
var ErrNoEvents = errors.New("ansible: no job events in the stream")

// ErrStatsMissing is returned by Stream when the stream ended without the
// final stats event: the PlaybookResult was rebuilt from the events seen
// (Result.StatsRebuilt), and the run may have been cut short.
var ErrStatsMissing = errors.New("ansible: the stream ended without the final stats event; the playbook result was rebuilt from the events seen")

// PlaybookError reports a playbook that Ansible could not run: it does not
// exist, Ansible could not load it (YAML syntax, unknown module, ...), or
// Ansible's own error stopped it before its recap (a notified handler that
// does not exist, ...). From Stream, the last wraps ErrStatsMissing.
type PlaybookError struct {
	// Playbook is the playbook as given in Playbook.Playbook.
	Playbook string
	// Reason is the first line of Ansible's error, or what the adapter
	// found ("not found").
	Reason string
	// Output is Ansible's whole error text, without terminal escapes. It
	// may quote lines of the playbook: it is for the driver's own log,
	// never for progress events.
	Output string
	// Err is the underlying error, if any (fs.ErrNotExist for a missing
	// file).
	Err error
}

func (e *PlaybookError) Error() string {
	return fmt.Sprintf("ansible: playbook %q: %s", e.Playbook, e.Reason)
}

func (e *PlaybookError) Unwrap() error { return e.Err }

// VarsPromptError reports a playbook that prompts for a variable
// (vars_prompt) that nothing provides. A run is not interactive, so Run
// stops it at once instead of letting it wait for an answer; pass the
// variable in Playbook.ExtraVars to skip the prompt.
type VarsPromptError struct {
	Var string
}

func (e *VarsPromptError) Error() string {
	return fmt.Sprintf("ansible: the playbook prompts for %q (vars_prompt) and a run cannot answer: pass it in ExtraVars", e.Var)
}

// ExitError reports a run that ended with a non-zero status.
type ExitError struct {
	// ExitCode is the exit status, 128+n when killed by signal n.
	ExitCode int
	// FailedHosts and UnreachableHosts are those of the Result.
	FailedHosts      []string
	UnreachableHosts []string
	// Output is the tail of what ansible-runner wrote that was not a job
	// event (start-up errors), without terminal escapes. For the driver's
	// own log, never for progress events.
	Output string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ansible: run failed (rc %d)", e.ExitCode)
	if len(e.FailedHosts) > 0 {
		fmt.Fprintf(&b, ": failed hosts %s", strings.Join(e.FailedHosts, ", "))
	}
	if len(e.UnreachableHosts) > 0 {
		fmt.Fprintf(&b, "; unreachable %s", strings.Join(e.UnreachableHosts, ", "))
	}
	if len(e.FailedHosts) == 0 && len(e.UnreachableHosts) == 0 && e.Output != "" {
		msg := errorLine(e.Output)
		if msg == "" {
			msg = lastLine(strings.TrimSpace(e.Output))
		}
		fmt.Fprintf(&b, ": %s", msg)
	}
	return b.String()
}
