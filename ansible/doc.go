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
//	}, adapter.WithOperation("Install"), adapter.WithEnvelope(env))
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
//     no value; nothing else of a module's result is ever recorded.
//   - A loop gives one event per item, with its itemLabel, then the task's
//     result for the host with results[].
//   - A handler's TaskStarted is named "Handler/<name>"; a role task is
//     "<role> : <task>".
//   - no_log: argsHidden is true, args left out, msg Ansible's censored
//     message.
//   - args are the untemplated task arguments as ansible-runner reports
//     them (Run sets ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True), each value a
//     string; a stream without them gives args {}.
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
// Ansible's own times; each event is recorded in the span it belongs to.
// Every span says how it ended in progress.outcome, a parent the most
// telling of its own and its children's (outcome.Of), and only a failure
// that counts in Ansible's recap, an unreachable host or a time limit sets
// an error status (a cancelled span has none):
// docs/adapters.md has a table of what each outcome means, with the tests
// that prove it, and how rescued failures, strategy: free and meta tasks
// are told apart. Attributes: ansible.playbook,
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
// # Robustness and security
//
// Lines up to adapter.WithMaxLineBytes (64 MiB by default) are read; a value of an
// unexpected type leaves its field unset and keeps the event; lines that
// are not job events are counted in Result.SkippedLines. A playbook that is
// missing or that Ansible cannot load gives a *PlaybookError whose Reason,
// also OperationFailed's description, is Ansible's error with its place
// (TestRunLoadErrors); so does one that Ansible's own error stops during a
// play (TestRunAnsibleErrorDuringPlay). Raw event data is never recorded, only the reduced
// values above, which the Recorder redacts; after a secret key such as
// password, the rest of a task's arguments are taken as its value.
//
// A cancelled run's PlaybookResult and OperationFailed are stamped when it
// ended, not at Ansible's last event (TestRunCancel). On Linux, a driver
// killed with SIGKILL still stops the run: the kernel sends ansible-runner
// SIGTERM as its parent-death signal (TestKilledDriverStopsThePlaybook);
// elsewhere the driver's supervisor (systemd, Kubernetes) must end it.
package ansible
