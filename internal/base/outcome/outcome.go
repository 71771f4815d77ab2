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

// rank orders the outcomes from the most telling: a failure that counts,
// then a stop (a failure beside a stop is still the run's failure), then
// a change (what the work did), then a failure that did not count (its
// own span says it), then nothing to say. Skipped says the least: a
// parent is skipped only when all of its children are.
var rank = map[string]int{
	Failed: 0, Unreachable: 1, TimedOut: 2, Cancelled: 3,
	Changed: 4, Rescued: 5, Ignored: 6, OK: 7, Skipped: 8,
}

// Of is the one rule deriving a span's outcome from its own result (own,
// "" when it has none, as an Ansible task or play) and its children's: the
// most telling of them (Rank), ok when there is none. So a parent never
// says less than one of its children: a play whose only news is an
// ignored failure is ignored, not ok; one that also changed something is
// changed; a create that ran a provisioner is changed.
func Of(own string, children ...string) string {
	best := own
	for _, c := range children {
		if best == "" || Rank(c) < Rank(best) {
			best = c
		}
	}
	if best == "" {
		return OK
	}
	return best
}

// Rank is an outcome's place in Of's order, 0 the most telling; an
// unknown outcome ranks after skipped.
func Rank(o string) int {
	if r, ok := rank[o]; ok {
		return r
	}
	return len(rank)
}
