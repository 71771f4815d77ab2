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
// Job events are the AWX-standard format, printed live, with per-host
// starts, retries, loop items, Ansible's own timestamps and the no_log
// censoring; reading them as another process's output keeps the project's
// code out of GPL Ansible. DESIGN.md has the alternatives turned down.
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
// The type names are the driver's, typo included (the Type* constants). As
// the driver did:
//
//   - taskResult is reduced to msg, changed, failed, skipped, rc and results
//     (one per loop item), all keys always present, null when Ansible gave
//     no value; failed and skipped come from the event type. Nothing else of
//     a module's result (stdout, invocation arguments, facts, diffs) is
//     ever recorded.
//   - A loop gives one event per item, with its itemLabel, then the task's
//     result for the host with results[].
//   - A handler's TaskStarted is named "Handler/<name>"; a role task is
//     "<role> : <task>".
//   - no_log: argsHidden is true and args is left out; msg is Ansible's
//     censored message.
//   - args are Ansible's untemplated task arguments as ansible-runner
//     reports them (Run sets ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True), each value
//     a string. A stream without them gives args {}, and no_log tasks are
//     then known only by their censored results.
//   - hostStats has Ansible 2.14's seven counts (the driver's five plus
//     rescued and ignored).
//
// Additions, which consumers may ignore: TaskFailedOnHost has ignored: true
// when ignore_errors lets the failure pass (its loop items too, no_log or
// not: TestRunIgnoredNoLog), and rescued: true when a block's rescue section
// took it (TestRunRescued); either is then a WARN, not an ERROR. A
// PlaybookResult rebuilt because the final stats event never arrived has
// rebuilt: true and rebuiltReason.
//
// Ansible's event for a rescued failure is the same as for one that counts,
// so a failure (not ignored) is recorded, with Ansible's time for it, once
// its fate shows: from the tasks the host runs next, a later play, or the
// recap; a run that ends without a recap keeps it as a failure. Until then
// the host's span and its task's stay open (TestRunAlwaysFailureCounts).
//
// Severities: INFO, except WARN for retries, ignored and rescued failures,
// failed loop items and plays that match no hosts, and ERROR for failures
// that count, unreachable hosts, vars prompts and OperationFailed. Each
// event's time is Ansible's time for it (the job event's "created").
//
// With the default progress.Limits, a record holds 64 detail attributes:
// hostStats of more than eight hosts is cut and the record marked
// truncated; raise MaxAttributes with progress.WithLimits for big inventories
// (Result.Stats always holds every host).
//
// # Spans
//
// A span "playbook <file>" under the span in ctx, "play <name>" per play,
// "task <name>" per task, and "host <name>" per task and host, with
// Ansible's own times: a host span from the host's start to its result's
// end, a task to its last host's end, a play until the next play or the
// recap. Each event is recorded in its span: TaskStarted in the task's, a
// host's events (retries and loop items too) in its host's, PlayStarted in
// the play's, PlaybookResult and the operation events in the playbook's.
// Under strategy: free Ansible repeats a task's start for each host: it
// stays one task span (and one TaskStarted), ended with its play
// (TestRunFreeStrategy). A meta task (flush_handlers, end_play) gets a span
// only when Ansible reports a host for it; its TaskStarted is in the play
// span (TestRunFlushHandlers), once even when Ansible repeats its start, as
// for end_host (TestRunMetaEndHost).
//
// Every span says how it ended in progress.outcome (see
// internal/base/outcome): a host span as Ansible reported it; a task span
// the worst of its hosts', failures that count first; a play span failed,
// cancelled, timeout, changed or ok; the playbook span ok, changed,
// failed, cancelled or timeout (its deadline passed, or a vars_prompt
// that nothing answers: TestAnsiblePromptIsTimeout). Only a failure that
// counts or an unreachable host sets an error status: on its host span,
// its task, its play and the playbook. When the run is cancelled, every
// span still open ends cancelled (TestRunCancel), or timeout when its
// deadline passed (TestAnsibleStoppedRunConforms); a host span that a
// stream ended without Ansible's end for it is failed with "Ansible
// reported no end". Attributes: ansible.playbook,
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
// Lines up to WithMaxLineBytes (64 MiB by default) are read, each decoded
// once with encoding/json; a value of an unexpected type leaves its field
// unset and keeps the event. Lines that are not job events are counted in
// Result.SkippedLines, never fatal: Ansible's own text is kept for the run's
// error (logged at debug level only), JSON that is no job event is logged
// as a warning. A playbook that is missing or that Ansible cannot load gives
// a *PlaybookError whose Reason, also OperationFailed's description, is
// Ansible's error with its place; for invalid YAML, the parser's own words
// ("did not find expected '-' indicator (line 3, column 1)",
// TestRunLoadErrors). A vars_prompt stops the run at once with a
// *VarsPromptError.
//
// # Security
//
// Raw event data is never recorded, only the reduced values above, and the
// Recorder redacts secret-looking keys on top (progress.Redactor). A no_log
// task's arguments and result never leave Ansible. After a secret key such
// as password, the rest of a task's arguments are taken as its value and
// redacted with it, since where a secret ends cannot be known from runner's
// text. Run's private directory is removed when it returns unless
// WithKeepArtifacts is given.
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
// SIGTERM as its parent-death signal (TestKilledDriverStopsThePlaybook).
// Elsewhere the driver's supervisor (systemd, Kubernetes) must end the run.
package ansible
