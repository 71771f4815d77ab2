// Package outcome names the span attribute by which an adapter says how a
// span's work ended, in words a reader that knows no adapter understands:
// the live view draws its rows from it, and a trace backend can filter on
// it. The span's status stays the OpenTelemetry one (Error for a failure
// that counts); the outcome adds what a status cannot say, such as a
// failure that was ignored or rescued.
package outcome

// Key is the span attribute that holds a span's outcome, one of the values
// below. A span without it ended as its status says: Error is Failed,
// anything else OK.
const Key = "progress.outcome"

// The outcomes.
const (
	OK          = "ok"          // done, nothing changed or no such notion
	Changed     = "changed"     // done, and it changed something
	Skipped     = "skipped"     // not run: a condition said so
	Failed      = "failed"      // failed, and the failure counts (status Error)
	Ignored     = "ignored"     // failed, and the tool was told to go on (ignore_errors)
	Rescued     = "rescued"     // failed, and a handler of the tool recovered (Ansible's rescue)
	Cancelled   = "cancelled"   // stopped before it ended: a signal, a cancelled context
	TimedOut    = "timeout"     // stopped by a time limit
	Unreachable = "unreachable" // its target could not be reached
)
