package terraform

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotInstalled is returned by Run when neither tofu nor terraform can be
// found on PATH and Command.Binary is empty. Give the path in
// Command.Binary, or install one of them (this repository builds OpenTofu
// with scripts/build-tofu.sh).
var ErrNotInstalled = errors.New("terraform: neither tofu nor terraform is on PATH (set Command.Binary)")

// ErrNoMessages is the cause of Stream's error when the stream held no
// machine-readable UI message: the tool was not run with -json, or it
// failed before it could write one. Result.SkippedLines counts what was
// read instead.
var ErrNoMessages = errors.New("terraform: no machine-readable UI message in the output (was the tool run with -json?)")

// ErrIncomplete is the cause of Stream's error when the stream ended
// before the tool reported its end: after the last thing it started, no
// change summary, outputs, init success or error diagnostic came. The
// stream was cut, or the tool died.
var ErrIncomplete = errors.New("terraform: the stream ended before the tool's final message (a change summary, the outputs, an init's success or an error)")

// ErrInterrupted is the cause of the error when the tool reported that it
// was interrupted (SIGINT from a terminal's Ctrl-C, or another process)
// and the run's context was not cancelled.
var ErrInterrupted = errors.New("terraform: the tool was interrupted")

// OperationError reports an operation that failed: the tool exited with an
// error, reported error diagnostics or errored resources, or was
// cancelled. Its message names the error diagnostics.
type OperationError struct {
	// Operation is Result.Operation.
	Operation string
	// ExitCode is the tool's exit status; -1 for Stream or when the tool
	// did not exit by itself.
	ExitCode int
	// Diagnostics are the error diagnostics, redacted.
	Diagnostics []Diagnostic
	// ErroredResources lists the addresses whose operation errored;
	// CancelledResources those whose operation a stop cut short.
	ErroredResources, CancelledResources []string
	// Stderr is the tail of what the tool wrote to stderr, redacted and
	// without terminal escapes: for the driver's own log.
	Stderr string
	// Err is the cause when there is one beyond the tool's report: the
	// context's error for a cancelled run, a read error.
	Err error
}

func (e *OperationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "terraform: %s failed", e.Operation)
	if e.ExitCode > 0 {
		fmt.Fprintf(&b, " (exit status %d)", e.ExitCode)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %s", strings.TrimPrefix(e.Err.Error(), "terraform: "))
	}
	switch {
	case len(e.Diagnostics) == 0 && len(e.ErroredResources) > 0:
		fmt.Fprintf(&b, ": errored: %s", strings.Join(e.ErroredResources, ", "))
	case len(e.Diagnostics) == 0 && len(e.CancelledResources) > 0:
		fmt.Fprintf(&b, ": cancelled: %s", strings.Join(e.CancelledResources, ", "))
	default:
		b.WriteString(e.reported())
	}
	return b.String()
}

// reported is ": " and what the tool said of the failure, the error
// diagnostics, else (without a cause) the line of its stderr that says
// why; "" when it said nothing.
func (e *OperationError) reported() string {
	if len(e.Diagnostics) > 0 {
		return ": " + describeDiagnostics(e.Diagnostics)
	}
	if reason := stderrReason(e.Stderr); reason != "" && e.Err == nil {
		return ": " + reason
	}
	return ""
}

// Unwrap returns the cause: errors.Is(err, context.Canceled) reports a
// cancelled run.
func (e *OperationError) Unwrap() error { return e.Err }

// maxDescribed bounds the diagnostics named in a one-line description.
const maxDescribed = 5

// describeDiagnostics names diagnostics, whose summaries the decoder made
// one line (oneLine), on one line: "summary (address)",
// joined with "; ", repeats counted ("execution halted (3 times)"), at most
// maxDescribed distinct ones and a count of the rest.
func describeDiagnostics(ds []Diagnostic) string {
	var (
		names []string
		count = map[string]int{}
	)
	for _, d := range ds {
		name := d.Summary
		if d.Address != "" {
			name += " (" + d.Address + ")"
		} else if d.Range != nil && d.Range.Filename != "" {
			name += fmt.Sprintf(" (%s:%d)", d.Range.Filename, d.Range.Start.Line)
		}
		if count[name] == 0 {
			names = append(names, name)
		}
		count[name] += 1 + d.Repeated
	}
	var b strings.Builder
	for i, name := range names {
		if i == maxDescribed {
			fmt.Fprintf(&b, "; and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(name)
		if n := count[name]; n > 1 {
			fmt.Fprintf(&b, " (%d times)", n)
		}
	}
	return b.String()
}

// stderrReason picks the line of the tool's stderr that says why it
// failed: the first that mentions an error, else the last.
func stderrReason(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, l := range lines {
		if strings.Contains(l, "Error") || strings.Contains(l, "error") {
			return strings.TrimSpace(strings.Trim(l, "│╷╵ "))
		}
	}
	return strings.TrimSpace(strings.Trim(lines[len(lines)-1], "│╷╵ "))
}
