// Package adapter is the one home of what the tool adapters (packages
// ansible and terraform) share: their configuration behind the public
// With* options, the reading of a tool's output line by line with a byte
// limit, and the recording of events with the run's envelope, framed by
// common/OperationStarted and common/OperationCompleted or
// common/OperationFailed in the operation's span, and the spans of the run
// and its tasks with OpenTelemetry's CI/CD conventions and run metrics
// (cicd.go, metrics.go; docs/conventions.md).
//
// Each adapter keeps its public Option type and With* functions (their
// godoc is where users look); each With* is a one-line wrapper over a
// setter here, so a default or a rule (a nil TracerProvider is ignored, a
// grace period must be positive) has one home. What a tool's output means
// stays in its adapter.
package adapter
