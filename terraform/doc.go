// Package terraform reports a Terraform or OpenTofu plan, apply or destroy
// live, as progress events, spans and an N-of-M progress bar.
//
// Both tools describe what they do, while they do it, in their
// machine-readable UI: with -json they write one JSON object per line (a
// version message first, then planned changes, the plan's change summary,
// and one message when each resource operation or provisioner starts,
// prints a line, completes or errors). The adapter turns each message into
// a progress event recorded with progress.Record, inside a span per
// resource operation, the moment the line is read.
//
// Two entry points:
//
//   - Run runs the tool itself: Run(ctx, Command{Dir: dir, Args:
//     []string{"apply"}}) adds -json, -input=false and -auto-approve, passes
//     variables through a private file, stops the tool gracefully when ctx
//     is cancelled and returns a Result.
//   - Stream reads the -json output of a tool the driver runs its own way:
//     Stream(ctx, stdout).
//
// Both record common/OperationStarted first and common/OperationCompleted
// or common/OperationFailed last (OperationFailed exactly when the error
// returned is not nil), and return the same Result.
//
// # Events
//
// Each message type becomes one progressEventType, "terraform/" and the
// type in UpperCamelCase (EventType gives it for any type). The details keep
// what a user needs; the resource fields of the hook events are address
// ("module.net.aws_vpc.main[0]"), resourceType, module (present-only) and
// resourceKey (the count index or for_each key,
// present-only). The event's time is the message's @timestamp.
//
//	message type        progressEventType               details
//	version             terraform/Version               tool ("tofu", "terraform"), version, ui
//	log (or no type)    terraform/Log                   level, message
//	diagnostic          terraform/Diagnostic            severity, summary, detail, address, range{filename, start, end{line, column, byte}}
//	resource_drift      terraform/ResourceDrift         resource fields, action, reason, previousAddress, importingId
//	planned_change      terraform/PlannedChange         resource fields, action, reason, previousAddress, importingId
//	change_summary      terraform/ChangeSummary         operation (plan, apply, destroy), add, change, import, remove, forget
//	outputs             terraform/Outputs               outputs[{name, sensitive, action, value}], by name: never a sensitive value
//	                                                    (a name that looks secret, "password_out": the value redacted)
//	apply_start         terraform/ApplyStarted          resource fields, action, idKey, idValue
//	apply_progress      terraform/ApplyProgress         resource fields, action, elapsedSeconds (the tool's 10 s heartbeat;
//	                                                    the adapter's own has source "adapter", see WithHeartbeat)
//	apply_complete      terraform/ApplyCompleted        resource fields, action, idKey, idValue, elapsedSeconds
//	apply_errored       terraform/ApplyErrored          resource fields, action, elapsedSeconds, cancelled (severity ERROR;
//	                                                    WARN with cancelled true when a stop cut it short)
//	provision_start     terraform/ProvisionStarted      resource fields, provisioner
//	provision_progress  terraform/ProvisionOutput       resource fields, provisioner, output (one line, redacted)
//	provision_complete  terraform/ProvisionCompleted    resource fields, provisioner
//	provision_errored   terraform/ProvisionErrored      resource fields, provisioner, cancelled (as apply_errored)
//	refresh_start       terraform/RefreshStarted        resource fields, idKey, idValue
//	refresh_complete    terraform/RefreshCompleted      resource fields, idKey, idValue
//	any other type      terraform/<Type>                level, message, address, action ("test_run" is terraform/TestRun,
//	                                                    "init_output" terraform/InitOutput)
//	unnamable type      terraform/Message               type, level, message
//
// Actions are the tool's: create, read, update, delete, replace (planned
// only: the apply deletes and creates in two operations), noop, move,
// import, remove (forget). Diagnostics are at severity ERROR or WARN, the
// errored hooks at ERROR, log messages at the tool's level, the rest INFO.
// Snippets and expression values of diagnostics are left out; a
// diagnostic the tool repeats word for word is recorded once, its repeats
// counted in repeated. The tool's multi-line texts (log messages,
// diagnostics) are made one line: its line breaks become spaces.
//
// Around them, the common catalogue:
//
//	common/OperationStarted    operation: WithOperation, else Run's subcommand ("apply"), else "terraform"
//	common/Progress            completed, total, unit "resources": after the plan's change_summary
//	                           (0 of M), after each apply_complete (N of M), and M of M at the end
//	                           of a plan
//	common/OperationCompleted  operation, durationMs
//	common/OperationFailed     operation, failureCode, description, diagnostics (the error
//	                           diagnostics), erroredResources, cancelledResources
//
// M is add + change + remove of the plan's change_summary: the resource
// operations the apply will do, a replacement counting twice because the
// tool deletes and creates in two operations. N counts the operations that
// completed: an errored or cancelled one is not done, so the bar of a
// failed or stopped apply stops short of M. Reads of data sources are not
// counted, as the summary leaves them out. Without a plan summary (a saved
// plan applied) M is unknown and the events have no total (see
// progress.UnknownTotal), never a total of 0; M is raised if more
// operations complete than announced, so N never exceeds M. A plan with no
// change reports no Progress. The failureCode is FailureInfrastructure
// when a resource operation errored, else FailureInternal.
//
// An operation that errors while the run stops (Run's context was
// cancelled, or the tool wrote its interrupt notice, as on Ctrl-C) is
// cancelled, not errored: it is counted in Result.Cancelled and
// CancelledResources, its events say cancelled, and its span's outcome is
// cancelled. With Ctrl-C the tool's provisioner commands get SIGINT at the
// same time as the tool, and one may die a moment before the notice: what
// errored within a second before it is counted as cancelled too, though
// its event, already recorded, is at ERROR.
//
// # Spans
//
// One span for the command ("tofu apply" for Run, "terraform" or
// "terraform <operation>" for Stream), a child of the span in ctx; under
// it, one span per resource operation, from apply_start to apply_complete or
// apply_errored, named "<action> <address>" ("create aws_instance.web[0]"),
// and one per refresh ("refresh <address>"); under a resource operation, one
// span per provisioner run ("provision local-exec"). With Command.Init, the
// init has a child span of its own. Every event is recorded in the span it
// belongs to, so its log record carries that span's ids. Resource and
// provisioner spans start and end at the tool's @timestamp. An errored
// operation's span has status Error with the summary of its diagnostic, and
// a terraform.diagnostic span event with the detail; because the tool writes
// its diagnostics at the end of the run, such a span is ended (at its
// apply_errored time) when the run ends. The command span has status Error
// when the operation failed.
//
// Every span has the attribute progress.outcome: a resource operation is
// changed (completed), failed (errored, or no end was reported: status
// "the tool reported no end") or cancelled; a refresh or provisioner run
// ok, failed or cancelled; the command span changed (an operation
// completed), ok, failed, cancelled, or timeout (the context's deadline).
//
// With OTEL_SEMCONV_STABILITY_OPT_IN=cicd or cicd/dup the spans follow
// OpenTelemetry's CI/CD conventions (docs/conventions.md): the command
// span is the run's, "RUN apply" (kind SERVER, cicd.pipeline.*), and each
// resource operation and refresh a task, named without instance keys
// ("create null_resource.a"), whose cicd.pipeline.task.run.result follows
// its outcome (TestStoppedRunConforms, TestTofuApplyConforms).
//
// When the driver exports traces over OTLP, Run passes the command span's
// context and the OTLP settings to the tool, so that OpenTofu's own spans
// join the trace under the command span: see WithToolTraces.
//
// # Sensitive values
//
// A sensitive value appears in no event, span, Result or error:
//   - The tool never writes the value of a sensitive output or variable in
//     its messages, and the adapter drops the value of an output marked
//     sensitive even if a stream carried one.
//   - When a provisioner's configuration holds a sensitive value, the tool
//     suppresses its output; but its error diagnostic quotes the command and
//     its output in clear. The adapter withholds the detail of every
//     diagnostic about such a resource.
//   - The values the driver knows are secret (Command.SensitiveVars,
//     WithSensitiveValues) are replaced wherever they occur.
//   - Free text (provisioner output lines, diagnostics, log messages, the
//     tool's stderr) goes through the library's redaction before it is
//     recorded: "key=value" and "key: value" pairs whose key the Redactor
//     calls secret (API_TOKEN=…, "password": "…", Authorization: Bearer …),
//     passwords in URLs, and PEM private keys, which a provisioner prints one
//     line at a time, from the BEGIN line to the END line. The Recorder then
//     redacts the details by key and shape as it does for every event.
//
// # Robustness
//
// A stream is whole only when it holds the tool's own last word: after the
// last thing the tool started (a planned change, a refresh, a resource
// operation, a provisioner), a change summary, the outputs (a refresh's last
// message), an init's success or an error diagnostic. Stream reports one that ends elsewhere,
// cut or from a tool that died, as common/OperationFailed with
// ErrIncomplete, and one without any message with ErrNoMessages. An apply
// cut after its plan's summary and before its first operation reads as a
// whole plan, and one cut after its init as a whole init: nothing in the
// stream tells them apart. Run follows the
// tool's exit status instead.
//
// Lines that are not messages never break the stream: plain text (the tool
// writes some before its first message), malformed JSON, and lines longer
// than the limit (WithMaxLineBytes, 8 MiB by default) are skipped, counted
// in Result.SkippedLines and logged (WithLogger). Lines of any size up to
// the limit are read. A failed operation is reported as
// common/OperationFailed with the error diagnostics, and the error is an
// *OperationError that names them. Run stops a cancelled tool with SIGINT
// (its graceful stop), waits for the grace period (WithGracePeriod), then
// kills its process group; once the tool has exited it kills whatever is
// left of the group, and only then returns.
package terraform
