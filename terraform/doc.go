// Package terraform reports a Terraform or OpenTofu plan, apply or destroy
// live, as progress events, spans and an N-of-M progress bar.
//
// With -json both tools write their machine-readable UI, one JSON object per
// line while they work; the adapter records each message as a progress
// event, inside a span per resource operation, the moment its line is
// read. Two entry points:
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
// type in UpperCamelCase (EventType gives it for any type), at the
// message's @timestamp. The resource fields of the hook events are address
// ("module.net.aws_vpc.main[0]"), resourceType, and when present module and
// resourceKey (the count index or for_each key).
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
// Actions are the tool's (create, read, update, delete, replace, noop,
// move, import, remove). Diagnostics are at ERROR or WARN, the errored
// hooks at ERROR, log messages at the tool's level, the rest INFO. A
// diagnostic loses its snippet and expression values, and one the tool
// repeats word for word is recorded once (repeated counts the rest).
// Multi-line texts are made one line.
//
// Around them, the common catalogue:
//
//	common/OperationStarted    operation: adapter.WithOperation, else Run's subcommand ("apply"), else "terraform"
//	common/Progress            completed, total, unit "resources": after the plan's change_summary
//	                           (0 of M), after each apply_complete (N of M), and M of M at the end
//	                           of a plan
//	common/OperationCompleted  operation, durationMs
//	common/OperationFailed     operation, failureCode, description, diagnostics (the error
//	                           diagnostics), erroredResources, cancelledResources
//
// M is add + change + remove of the plan's change_summary (a replacement
// counts twice); N counts the operations that completed, but not reads, so
// a failed or stopped apply stops short of M. Without a plan summary (a
// saved plan applied) there is no total (progress.UnknownTotal), never 0;
// M is raised if more operations complete than announced. A plan with no
// change reports no Progress. The failureCode is progress.FailureInfrastructure when
// a resource operation errored, else progress.FailureInternal.
//
// An operation that errors while the run stops (Run's context was
// cancelled, or the tool wrote its interrupt notice, as on Ctrl-C) is
// cancelled, not errored (Result.Cancelled, CancelledResources, its events
// and span); so is what errored within a second before the notice, though
// its event, already recorded, is at ERROR.
//
// # Spans
//
// One span for the command ("tofu apply" for Run, "terraform" or
// "terraform <operation>" for Stream), a child of the span in ctx; under
// it, one span per resource operation, from apply_start to apply_complete or
// apply_errored, named "<action> <address>" ("create aws_instance.web[0]"),
// and one per refresh ("refresh <address>"); under a resource operation, one
// per provisioner run ("provision local-exec"); with Command.Init, one for
// the init. Every event is recorded in the span it belongs to, and these
// spans run on the tool's @timestamp. An errored operation's span has
// status Error with its diagnostic's summary and a terraform.diagnostic
// event with the detail, and ends (at its apply_errored time) when the run
// does, as the tool writes its diagnostics last.
//
// Every span has the attribute progress.outcome: changed (a resource
// operation completed, or the command completed one), ok, failed (errored,
// or status "the tool reported no end", ended when the stream did),
// cancelled (no error status), or timeout (the context's deadline passed);
// a parent's is the most telling of its own and its children's
// (docs/adapters.md).
//
// With OTEL_SEMCONV_STABILITY_OPT_IN=cicd or cicd/dup the spans follow
// OpenTelemetry's CI/CD conventions (docs/conventions.md): the command
// span is the run's, "RUN apply" (kind SERVER, cicd.pipeline.*), and each
// resource operation and refresh a task, named without instance keys
// ("create null_resource.a"), whose cicd.pipeline.task.run.result follows
// its outcome (TestStoppedRunConforms, TestTofuApplyConforms). When the
// driver exports traces over OTLP, OpenTofu's own spans join the trace
// under the command span: see WithToolTraces.
//
// # Sensitive values
//
// A sensitive value appears in no event, span, Result or error:
//   - The adapter drops the value of an output marked sensitive.
//   - The tool suppresses a provisioner's output when its configuration
//     holds a sensitive value, but quotes it in its error diagnostic: the
//     detail of every diagnostic about such a resource is withheld.
//   - The values the driver knows are secret (Command.SensitiveVars,
//     WithSensitiveValues) are replaced wherever they occur.
//   - Free text (provisioner output, diagnostics, log messages, stderr) goes
//     through the Redactor: "key=value" and "key: value" pairs with a
//     secret key (API_TOKEN=…, Authorization: Bearer …), passwords in URLs,
//     and PEM private keys, even printed one line at a time.
//
// # Robustness
//
// A stream is whole only when it holds the tool's own last word after the
// last thing it started: a change summary, the outputs (a refresh's last
// message), an init's success or an error diagnostic; else Stream fails
// with ErrIncomplete (ErrNoMessages without a message). An apply cut after
// its plan's summary, or after its init, reads as a whole plan or init.
// Run follows the tool's exit status instead. Lines that are not messages
// (plain text, malformed JSON, lines over adapter.WithMaxLineBytes) are skipped,
// counted in Result.SkippedLines and logged (adapter.WithLogger).
package terraform
