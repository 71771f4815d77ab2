// Package adapter is the one home of what the tool adapters (packages
// ansible and terraform) share: their configuration behind the public With*
// options (each a one-line wrapper over a setter here, so a default or a
// rule has one home), the reading of a tool's output line by line with a
// byte limit, the recording of events with the run's envelope, framed by
// common/OperationStarted and common/OperationCompleted or Failed, and the
// spans of the run and its tasks with OpenTelemetry's CI/CD conventions and
// run metrics (cicd.go; docs/conventions.md). What a tool's output means
// stays in its adapter.
package adapter
