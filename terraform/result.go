package terraform

import "time"

// Result is the outcome of a run or a stream, as the tool reported it,
// redacted as the events are.
type Result struct {
	// Operation is the name of the operation in the common events: the
	// adapter.WithOperation name, else Run's subcommand ("apply"), else "terraform".
	Operation string
	// Tool and Version come from the version message: "tofu" or
	// "terraform", and its version ("1.10.10").
	Tool, Version string
	// ExitCode is the tool's exit status (128+n when killed by signal n);
	// -1 for Stream, and when the tool could not be started.
	ExitCode int
	// Plan is the plan's change_summary, and Applied the final one of an
	// apply or a destroy; nil when there was none (a saved plan applied, a
	// failure before planning; a plan, a failed apply).
	Plan, Applied *ChangeSummary
	// Total is the M of the common/Progress events (see the package
	// documentation), progress.UnknownTotal without a plan summary;
	// Completed counts the operations that completed, Errored those that
	// errored, and Cancelled those that errored while the run was stopping.
	Total, Completed, Errored, Cancelled int
	// ErroredResources lists the addresses whose operation errored, in
	// order; CancelledResources those whose operation a stop cut short.
	ErroredResources, CancelledResources []string
	// Diagnostics holds the tool's errors and warnings, in order.
	Diagnostics []Diagnostic
	// Outputs holds the root module's outputs of the last outputs message.
	Outputs map[string]Output
	// Start and End bound the operation: the tool's first and last
	// timestamps for Stream, the wall clock for Run.
	Start, End time.Time
	// Messages counts the messages decoded, SkippedLines the lines that
	// were not messages: plain text, malformed JSON, or over the limit.
	Messages, SkippedLines int

	failed bool
}

// OK reports an operation that did not fail: it is false exactly when Run
// or Stream returned an *OperationError.
func (r Result) OK() bool { return !r.failed }

// ChangeSummary is a change_summary message: the counts of a plan, or of an
// apply or destroy once done.
type ChangeSummary struct {
	// Operation is "plan", "apply" or "destroy".
	Operation string `json:"operation"`
	Add       int    `json:"add"`
	Change    int    `json:"change"`
	Import    int    `json:"import"`
	Remove    int    `json:"remove"`
	Forget    int    `json:"forget"`
}

// Diagnostic severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Diagnostic is an error or warning of the tool: what a user reads under
// "Error:" in the terminal. Snippets and expression values are left out.
type Diagnostic struct {
	// Severity is SeverityError or SeverityWarning.
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	// Address is the resource the diagnostic is about, when there is one.
	Address string `json:"address,omitempty"`
	// Range is where in the configuration, when the tool knows.
	Range *Range `json:"range,omitempty"`
	// Repeated counts the further identical diagnostics the tool wrote (a
	// halted apply writes "execution halted" once per stopped operation).
	Repeated int `json:"repeated,omitempty"`
}

// Range is a range of a configuration file.
type Range struct {
	Filename string `json:"filename"`
	Start    Pos    `json:"start"`
	End      Pos    `json:"end"`
}

// Pos is a position in a configuration file: 1-based line and column, and
// 0-based byte offset.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// Output is one root module output.
type Output struct {
	Sensitive bool
	// Action is the planned change of the output ("create", "update",
	// "delete", "noop") in a plan's outputs message; empty after an apply.
	Action string
	// Value is the output's value, decoded from JSON; nil for a sensitive
	// output and in a plan.
	Value any
}
