package progresstest

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/progress"
)

// Truth is a tool's own final word on a run (Ansible's recap, OpenTofu's
// change summary), which the spans of the run must agree with.
type Truth struct {
	// Outcome is the run's outcome that the final word gives; "" when it
	// gave none (the run was stopped before it).
	Outcome string
	// Key names the span attribute that names a target of the run
	// (ansible.host.name); "" counts every span under the target "".
	Key attribute.Key
	// Counts is, per target, the number of spans the final word gives
	// each outcome listed (the recap's failures, rescued, ...). Outcomes
	// not listed are not checked.
	Counts map[string]map[string]int
}

// CheckRun fails t with one error per way in which a finished run's
// spans and records (a SpanRecorder's Ended and a Sink's Events) disagree
// with themselves or with the tool's final word (see RunViolations).
func CheckRun(t testing.TB, spans []sdktrace.ReadOnlySpan, events []Event, truth Truth) {
	t.Helper()
	for _, v := range RunViolations(spans, events, truth) {
		t.Error(v)
	}
}

// SpanOutcome is a span's progress.outcome, or what its status says when it
// has none (the contract of the attribute): failed for Error, else ok.
func SpanOutcome(s sdktrace.ReadOnlySpan) string {
	for _, kv := range s.Attributes() {
		if kv.Key == outcome.Key {
			return kv.Value.AsString()
		}
	}
	if s.Status().Code == codes.Error {
		return outcome.Failed
	}
	return outcome.OK
}

// RunViolations returns the rules that a finished run breaks, one sentence
// each, naming the span; none for a run that holds together:
//   - the spans form one tree (the run's span is the only one whose
//     parent is not among them), and every child lies inside its parent
//     in time;
//   - no span says less than one of its children (outcome.Of: a play with
//     an ignored failure is not ok, a run with a cancelled task is not
//     changed);
//   - a span has status Error exactly when its outcome is failed,
//     unreachable or timeout: never for ok, changed, skipped, ignored,
//     rescued or cancelled;
//   - the run's outcome and the counts per target are the final word's
//     (truth);
//   - the records end with exactly one common/OperationCompleted or
//     common/OperationFailed, in the run's span, Completed exactly when the
//     run's outcome is not a failure or a stop, and every record with a
//     span is in one of the run's.
func RunViolations(spans []sdktrace.ReadOnlySpan, events []Event, truth Truth) []string {
	var out []string
	bad := func(s sdktrace.ReadOnlySpan, format string, args ...any) {
		out = append(out, fmt.Sprintf("span %q: ", s.Name())+fmt.Sprintf(format, args...))
	}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	var roots []sdktrace.ReadOnlySpan
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		p, ok := byID[s.Parent().SpanID()]
		if !ok {
			roots = append(roots, s)
			continue
		}
		children[p.SpanContext().SpanID()] = append(children[p.SpanContext().SpanID()], s)
		if s.StartTime().Before(p.StartTime()) || s.EndTime().After(p.EndTime()) {
			bad(s, "[%v, %v] does not lie inside its parent %q [%v, %v]", s.StartTime(), s.EndTime(),
				p.Name(), p.StartTime(), p.EndTime())
		}
	}
	if len(roots) != 1 {
		names := make([]string, len(roots))
		for i, r := range roots {
			names[i] = r.Name()
		}
		return append(out, fmt.Sprintf("%d spans without a parent among the run's (%v), want the run's alone", len(roots), names))
	}
	root := roots[0]

	counts := map[string]map[string]int{}
	for _, s := range spans {
		how := SpanOutcome(s)
		if s.EndTime().IsZero() {
			bad(s, "not ended")
		}
		isErr := s.Status().Code == codes.Error
		switch how {
		case outcome.Failed, outcome.Unreachable, outcome.TimedOut:
			if !isErr {
				bad(s, "outcome %s without status Error", how)
			}
		default:
			if isErr {
				bad(s, "outcome %s with status Error %q", how, s.Status().Description)
			}
		}
		for _, c := range children[s.SpanContext().SpanID()] {
			if ch := SpanOutcome(c); outcome.Rank(ch) < outcome.Rank(how) {
				bad(s, "outcome %s says less than its child %q's %s", how, c.Name(), ch)
			}
		}
		target, ok := "", truth.Key == ""
		for _, kv := range s.Attributes() {
			if kv.Key == truth.Key {
				target, ok = kv.Value.String(), true
			}
		}
		if ok && s != root {
			if counts[target] == nil {
				counts[target] = map[string]int{}
			}
			counts[target][how]++
		}
	}
	runHow := SpanOutcome(root)
	if truth.Outcome != "" && runHow != truth.Outcome {
		bad(root, "the run's outcome is %s, the tool's final word says %s", runHow, truth.Outcome)
	}
	for _, target := range slices.Sorted(maps.Keys(truth.Counts)) {
		for _, how := range slices.Sorted(maps.Keys(truth.Counts[target])) {
			if got, want := counts[target][how], truth.Counts[target][how]; got != want {
				out = append(out, fmt.Sprintf("%s %q: %d spans %s, the tool's final word counts %d", truth.Key, target, got, how, want))
			}
		}
	}

	var ends []Event
	for _, e := range events {
		if e.SpanID.IsValid() {
			if _, ok := byID[e.SpanID]; !ok {
				out = append(out, fmt.Sprintf("record %s is in a span that is not the run's", e.EventName))
			}
		}
		if e.EventName == progress.TypeOperationCompleted || e.EventName == progress.TypeOperationFailed {
			ends = append(ends, e)
		}
	}
	switch {
	case len(ends) != 1:
		out = append(out, fmt.Sprintf("%d records end the run, want 1", len(ends)))
	case events[len(events)-1].EventName != ends[0].EventName:
		out = append(out, fmt.Sprintf("%s is not the last record (%s is)", ends[0].EventName, events[len(events)-1].EventName))
	case ends[0].SpanID != root.SpanContext().SpanID():
		out = append(out, ends[0].EventName+" is not in the run's span")
	default:
		failed := outcome.Rank(runHow) <= outcome.Rank(outcome.Cancelled)
		if (ends[0].EventName == progress.TypeOperationFailed) != failed {
			out = append(out, fmt.Sprintf("the run's outcome is %s and its last record %s", runHow, ends[0].EventName))
		}
	}
	return out
}
