// Package ansible turns real Ansible runs into live progress events and
// spans: the events of the Ignition Ansible Lifecycle Driver, with its exact
// types and detail keys, each recorded through package progress when Ansible
// emits it, inside a playbook → play → task → host span tree.
//
//	res, err := ansible.Run(ctx, ansible.Playbook{
//		ProjectDir: "/srv/driver/scripts",
//		Playbook:   "Install.yaml",
//		Inventory:  "/srv/driver/inventory",
//		ExtraVars:  map[string]any{"release": "1.2.3"},
//	}, ansible.WithOperation("Install"), ansible.WithEnvelope(env))
//
// [Run] runs ansible-runner (`ansible-runner run --json`) and decodes its job
// events as they come; [Stream] decodes such a stream from any io.Reader
// (an AWX job's events, a driver's own runner, a recording). Both return a
// [Result] (rc, recap per host, failed and unreachable hosts) and a clear
// error. Install Ansible with
//
//	apt-get install --no-install-recommends ansible-core python3-ansible-runner
//
// # Why ansible-runner's job events
//
// They are the AWX-standard format, printed live (about 1 ms after Ansible
// creates an event), and they carry what a progress view needs: per-host
// starts, retries, loop items, Ansible's own timestamps and the no_log
// censoring. The driver reads them as a separate process's output, so no
// code of the project runs inside GPL Ansible. See DESIGN.md for the
// alternatives (a callback plugin, ansible.posix.jsonl).
//
// # Events
//
// Every run is framed by common/OperationStarted and common/OperationCompleted
// or common/OperationFailed (with Ignition's failureCode), even one that
// never started or whose stream held no job event: a run that ends without
// Ansible's recap (playbook_on_stats) is OperationFailed, INTERNAL_ERROR,
// with a description that says so ("the run ended before Ansible's recap",
// "no Ansible job event was read"), followed by Ansible's own error when
// its text gave one (TestStreamCut, TestStreamNotEvents). In between:
//
//	Ansible job event                         progressEventType                  details
//	playbook_on_play_start                    ansible/PlayStarted                playName
//	playbook_on_no_hosts_matched              ansible/PlayMatchedNoNoHostsEvent  playName
//	playbook_on_task_start                    ansible/TaskStarted                taskName, args, argsHidden
//	runner_on_start                           ansible/TaskStartedOnHost          taskName, hostName, args, argsHidden
//	runner_on_ok, runner_item_on_ok           ansible/TaskCompletedOnHost        taskName, itemLabel, hostName, delegatedHostName, taskResult
//	runner_retry                              ansible/TaskRetryOnHost            taskName, hostName, delegatedHostName, taskResult
//	runner_on_failed, runner_item_on_failed   ansible/TaskFailedOnHost           taskName, itemLabel, hostName, delegatedHostName, taskResult (+ ignored, rescued)
//	runner_on_skipped, runner_item_on_skipped ansible/TaskSkippedOnHost          taskName, itemLabel, hostName, delegatedHostName, taskResult
//	runner_on_unreachable                     ansible/HostUnreachable            taskName, hostName, delegatedHostName, taskResult
//	playbook_on_vars_prompt                   ansible/VarPrompt                  varName
//	playbook_on_stats                         ansible/PlaybookResult             plays [{play: {name, id}}], hostStats {host: {ok, changed, failures, skipped, unreachable, rescued, ignored}}
//
// The type names are the driver's, typo included (PlayMatchedNoNoHostsEvent);
// the Type* constants hold them. As the driver did:
//
//   - taskResult is reduced to msg, changed, failed, skipped, rc and results
//     (one reduced result per loop item), all keys always present, null when
//     Ansible gave no value. failed and skipped come from the event type
//     (Ansible does not put them in results). Nothing else of a module's
//     result (stdout, invocation arguments, facts, diffs) is ever recorded.
//   - A loop gives one event per item, with its itemLabel, then the task's
//     result for the host with results[].
//   - A handler's TaskStarted is named "Handler/<name>"; a role task is
//     "<role> : <task>".
//   - no_log: argsHidden is true and args is left out; Ansible has already
//     replaced the result by its censored message, which becomes msg.
//   - args are Ansible's untemplated task arguments as ansible-runner
//     reports them (Run sets ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True), each value
//     a string. A stream without them gives args {}, and no_log tasks are
//     then known only by their censored results.
//   - hostStats has Ansible 2.14's seven counts (the driver's five plus
//     rescued and ignored).
//
// Additions to the driver's events, which consumers may ignore:
// TaskFailedOnHost has ignored: true when ignore_errors lets the failure pass
// (its loop items too, no_log or not: TestRunIgnoredNoLog), and rescued:
// true when a block's rescue section took it (TestRunRescued); either is
// then a WARN, not an ERROR. A PlaybookResult rebuilt because the final
// stats event never arrived has rebuilt: true and rebuiltReason.
//
// Ansible's event for a failure that a rescue section takes is the same as
// for one that counts; Ansible tells them apart only later. So a failure
// (not ignored) is recorded when its fate shows: when the host does not run
// the next task the other hosts run (it counts), when it runs a task that
// a host which passed the failed task does not run (a rescue section, which
// only failed hosts run: it was rescued), when it starts a task of a later
// play (rescued: Ansible runs no later play on a failed host), or at the
// recap, whose rescued count per host settles the rest; a run that ends
// without a recap keeps it as a failure. The event
// keeps Ansible's time for the failure; until it is recorded, the host's
// span and its task's stay open (TestRunAlwaysFailureCounts).
//
// Severities: INFO, except WARN for retries, ignored and rescued failures,
// failed loop items and plays that match no hosts, and ERROR for failures
// that count, unreachable hosts, vars prompts and OperationFailed. Each
// event's time is Ansible's time for it (the job event's "created"), not
// the time it was read.
//
// With the default progress.Limits, a record holds 64 detail attributes:
// hostStats of more than eight hosts is cut and the record marked
// truncated; raise MaxAttributes with progress.WithLimits for big inventories
// (Result.Stats always holds every host).
//
// # Spans
//
// A span "playbook <file>" under the span in ctx, a span "play <name>" per
// play, "task <name>" per task, and "host <name>" per task and host, with
// Ansible's own start and end times: a host span runs from the host's start
// to the end time of its result, a task from its start to its last host's
// end, a play until the next play or the recap. Each event is recorded in the
// span it belongs to: TaskStarted in the task span, a host's events
// (including retries and loop items) in its host span, PlayStarted in the
// play span, PlaybookResult and the operation events in the playbook span.
// Under strategy: free each host starts a task on its own and Ansible
// repeats the task's start: it stays one task span (and one TaskStarted)
// with every host under it, ended with its play (TestRunFreeStrategy). A
// meta task (flush_handlers, end_play) gets a span only when Ansible
// reports a host for it; its TaskStarted is in the play span
// (TestRunFlushHandlers), once even when Ansible repeats its start, as for
// end_host (TestRunMetaEndHost).
//
// Every span says how it ended in progress.outcome (see
// internal/base/outcome): a host span ok, changed, skipped, failed,
// ignored, rescued or unreachable as Ansible reported it; a task span the
// worst of its hosts', failures that count first; a play span failed,
// cancelled, timeout, changed or ok; the playbook span ok, changed,
// failed, cancelled or timeout (its deadline passed, or a vars_prompt
// that nothing answers: TestAnsiblePromptIsTimeout). Only a
// failure that counts (not ignored, not rescued) or an unreachable host
// sets an error status: on its host span, its task, its play and the
// playbook. When the run is cancelled, every span still open ends with it,
// cancelled with an error status "cancelled" (TestRunCancel), or timeout
// with "timeout" when its deadline passed (TestAnsibleStoppedRunConforms);
// when a stream ends without Ansible's end for a host, its span is failed
// with "Ansible reported no end". Attributes: ansible.playbook,
// ansible.play.{name,id,pattern}, ansible.task.{name,id,action,role,handler},
// ansible.host.{name,status}, ansible.task.attempts and ansible.task.items,
// ansible.delegated_host, ansible.rc.
//
// With OTEL_SEMCONV_STABILITY_OPT_IN=cicd or cicd/dup the playbook span
// is the run's of OpenTelemetry's CI/CD conventions, "RUN site.yml" (kind
// SERVER, cicd.pipeline.*), and each task span a task whose
// cicd.pipeline.task.run.result follows its outcome (docs/conventions.md,
// TestAnsibleRunConforms).
//
// # Robustness
//
// Lines of any size up to WithMaxLineBytes (64 MiB by default) are read;
// gathered facts and megabyte results go through. Each line is decoded
// once, with encoding/json; a value of an unexpected type leaves its field
// unset and keeps the event. Lines that are not job events are counted in
// Result.SkippedLines, never fatal: Ansible's own text (a playbook it
// cannot load or find, start-up errors) is kept for the run's error and
// logged at debug level only, since the error says it; JSON that is no job
// event is logged as a warning. A playbook that is missing or that Ansible
// cannot load gives a *PlaybookError naming it, whose Reason, also in
// OperationFailed's description, is Ansible's error with its place: for
// invalid YAML, the parser's own words ("did not find expected '-'
// indicator (line 3, column 1)", TestRunLoadErrors). A vars_prompt stops
// the run at once with a *VarsPromptError. If the final stats event never
// arrives, the PlaybookResult is rebuilt from the results seen and says so.
//
// # Security
//
// Raw event data is never recorded: only the reduced values above, and the
// progress Recorder redacts secret-looking keys on top (see
// progress.Redactor). A no_log task's arguments and result never leave
// Ansible. Task arguments are split conservatively: after a secret key such
// as password, the rest of the arguments are taken as its value and
// redacted with it, since where a secret ends cannot be known from runner's
// text. Run keeps the extra variables and ansible-runner's artifacts (which
// hold the whole environment and the gathered facts) in a private temporary
// directory, removed when it returns unless WithKeepArtifacts is given.
//
// # Cancelling
//
// Cancelling ctx sends SIGTERM to ansible-runner, which stops
// ansible-playbook cleanly; after the grace period (WithGracePeriod, 10 s by
// default) every process of the run is killed, including ansible-playbook,
// which runs in a session of its own. Run returns when they are gone; the
// PlaybookResult and OperationFailed are stamped when the run ended, not at
// Ansible's last event (TestRunCancel). On Linux, a driver that is itself
// killed (SIGKILL) still stops the run: the kernel sends ansible-runner
// SIGTERM as its parent-death signal, and runner stops the playbook
// (TestKilledDriverStopsThePlaybook). Elsewhere there is no such signal,
// and the driver's supervisor (systemd, Kubernetes) must end the run.
package ansible
