// Package adapter is the vocabulary the tool adapters (packages ansible
// and terraform, and kube in its own module) share with the code that
// calls them: the command line a wrapper runs as its user typed it
// (Command), how the tool ended (Exit), and the options every adapter
// takes (Option: WithRecorder, WithEnvelope, WithOperation, ...). An
// adapter's own options, such as ansible.WithKeepArtifacts, are Options
// too, so one list configures a run.
//
// The Ignition failure codes of common/OperationFailed are in package
// progress, beside OperationFailed (progress.FailureInternal, ...): a
// hand-written driver uses them as the adapters do.
package adapter
