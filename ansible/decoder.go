package ansible

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/base/tooltext"
	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress"
)

// decoder turns job events, one line at a time, into progress events and
// spans, live. One goroutine uses it; only pid is read by another (Run's
// supervisor).
type decoder struct {
	cfg    *config
	parent context.Context
	ev     jobEvent // reused between lines

	pbName string
	pb     *adapter.Operation // the playbook span, once started

	// res is what the Result reports, filled as the events come: Start and
	// End are the first and last event's times, Stats the recap's.
	res       Result
	statsSeen bool
	counted   map[string]*HostStats // rebuilt from results, for a run without a recap
	output    tail                  // lines that were not job events, for errors

	play    *playState // the play in progress
	plays   []string   // the outcomes of the plays ended
	hosts   map[hostKey]*hostState
	pending []*hostState // failed hosts whose failure may be rescued
	unknown []*hostState // hosts whose result runner stripped, held for the recap (unknown.go)

	cutHow    string    // the outcome of spans Ansible reported no end for
	stoppedAt time.Time // when the run was stopped (cancelled or timed out), else zero

	pid       atomic.Int64 // ansible-playbook's pid, from the events
	varPrompt string
	// ansibleErr is Ansible's own error (an error job event): when no
	// recap follows, it is what ended the run (errorStop).
	ansibleErr string
	onPrompt   func() // Run: stop the run

	display *exactDisplay // RunCommandLine: Ansible's display text as it wrote it
}

func newDecoder(ctx context.Context, cfg *config) *decoder {
	return &decoder{
		cfg:     cfg,
		parent:  ctx,
		hosts:   map[hostKey]*hostState{},
		counted: map[string]*HostStats{},
		output:  tail{max: 40},
		cutHow:  outcome.Failed,
	}
}

// handle decodes one line and records what it means.
func (d *decoder) handle(line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] != '{' || decodeEvent(trimmed, &d.ev) != nil || d.ev.Event == "" {
		d.skip(trimmed)
		return
	}
	d.res.Events++
	e := &d.ev
	d.show(e)
	t := parseTime(e.Created)
	if t.IsZero() {
		// Keep the order; the first event without a time gets the clock.
		t = cmp.Or(d.res.End, time.Now().UTC())
	}
	d.res.Start, d.res.End = cmp.Or(d.res.Start, t), adapter.Later(t, d.res.End)
	if e.PID > 0 {
		d.pid.Store(int64(e.PID))
	}

	switch e.Event {
	case "playbook_on_start":
		d.startPlaybook(t, e.Data.Playbook)
	case "playbook_on_play_start":
		d.startPlay(t, e, cmp.Or(e.Data.Name, e.Data.Play), cmp.Or(e.Data.PlayUUID, e.UUID))
	case "playbook_on_no_hosts_matched":
		p := d.currentPlay(t, e)
		p.span.SetAttributes(attribute.Bool("ansible.play.no_hosts_matched", true))
		d.record(p.ctx, t, log.SeverityWarn, TypePlayMatchedNoHosts, playDetails{PlayName: p.name})
	case "playbook_on_task_start":
		d.startTask(t, e)
	case "runner_on_start":
		d.startHost(t, e)
	case "runner_on_ok", "runner_on_failed", "runner_on_skipped", "runner_on_unreachable":
		d.hostResult(t, e)
	case "runner_item_on_ok", "runner_item_on_failed", "runner_item_on_skipped":
		d.itemResult(t, e)
	case "runner_retry":
		h := d.host(t, e)
		h.attempts++
		d.record(h.ctx, t, log.SeverityWarn, TypeTaskRetryOnHost, h.result(&e.Data.Res, false, false).event())
	case "playbook_on_vars_prompt":
		d.prompt(t, e)
	case "playbook_on_stats":
		d.endStats(t, e)
	case "warning", "deprecated", "error":
		d.message(e.Event, e.Stdout)
	}
}

// skip counts a line that is no job event and keeps it for the run's
// error. Plain text is Ansible's or runner's own, logged at debug level
// only since the error says it; JSON is garbage, logged as a warning.
func (d *decoder) skip(line []byte) {
	d.res.SkippedLines++
	text := cleanText(string(line), 1024)
	d.output.add(text)
	if line[0] != '{' {
		d.cfg.Logger.Debug("ansible: text outside the job events", "line", d.cfg.Redactor.Value(text))
		return
	}
	d.cfg.Show(string(line))
	d.cfg.Logger.Warn("ansible: line skipped: not a job event", "line", d.cfg.Redactor.Value(text))
}

// message keeps Ansible's warning, deprecation or error for the Result and
// logs it; an error is also kept for the run's error.
func (d *decoder) message(kind, stdout string) {
	text := cleanText(stdout, 2048)
	if text == "" {
		return
	}
	if kind == "error" {
		d.output.add(text)
		if d.ansibleErr == "" {
			d.ansibleErr = cmp.Or(errorLine(text), lastLine(strings.TrimSpace(text)))
		}
	}
	if len(d.res.Warnings) < 100 {
		d.res.Warnings = append(d.res.Warnings, text)
	}
	d.cfg.Logger.Warn("ansible: "+kind, "message", d.cfg.Redactor.Value(text))
}

func (d *decoder) record(ctx context.Context, t time.Time, sev log.Severity, typ string, details any) {
	d.cfg.Record(ctx, progress.Event{Type: typ, Details: details, Severity: sev, Time: t})
}

// startPlaybook opens the playbook span (a child of the caller's span), once,
// and records common/OperationStarted in it.
func (d *decoder) startPlaybook(t time.Time, name string) {
	if d.pb != nil {
		return
	}
	d.pbName = cmp.Or(name, d.pbName)
	op := cmp.Or(d.cfg.Operation, d.pbName, "playbook")
	pipeline := cmp.Or(d.pbName, op)
	var attrs []attribute.KeyValue
	if d.pbName != "" {
		attrs = append(attrs, attribute.String("ansible.playbook", d.pbName))
	}
	d.pb = d.cfg.StartRun(d.parent, adapter.Run{Operation: op, Pipeline: pipeline,
		OldSpan: "playbook " + pipeline, Old: attrs}, t)
}

// taskName is the name Ansible shows: "role : task" for role tasks.
func taskName(e *jobEvent) string {
	name := cmp.Or(e.Data.Task, e.Data.TaskAction)
	if e.Data.Role != "" && !strings.HasPrefix(name, e.Data.Role+" : ") {
		name = e.Data.Role + " : " + name
	}
	return name
}

// isMeta reports a meta task (flush_handlers, end_play, ...), which gets a
// span only when a host event comes for it.
func isMeta(action string) bool {
	return strings.TrimPrefix(action, "ansible.builtin.") == "meta"
}

func (d *decoder) startTask(t time.Time, e *jobEvent) {
	p := d.currentPlay(t, e)
	id := cmp.Or(e.Data.TaskUUID, e.UUID)

	// Under the free strategy each host starts a task on its own: the start
	// of a task still open repeats, and the play's tasks end with it. A meta
	// task's start also repeats under the linear strategy (end_host, once
	// per host): the same task, saying nothing of the strategy.
	if task := p.tasks[id]; task != nil && !task.ended && !task.superseded {
		p.free = p.free || !task.meta
		return
	}
	if !p.free {
		// Any earlier task of the play is over once its hosts are done;
		// hosts that did not run the last one have stopped.
		d.byTask(p)
		for _, other := range p.open {
			other.superseded = true
			d.endTask(other, false)
		}
		p.compact()
	}

	name := e.Data.Name
	if name == "" { // taskName builds a string for a role's task
		name = taskName(e)
	}
	task := p.newTask(id, name, t, e)
	task.handler, task.meta = e.Data.IsConditional, isMeta(e.Data.TaskAction)
	// Ignition's driver names a handler's start "Handler/<name>"; runner
	// marks handlers only by is_conditional.
	startedName := name
	if task.handler {
		startedName = "Handler/" + name
	}
	if !task.meta {
		d.startTaskSpan(task, startedName)
	}
	p.last = task
	args, hidden := parseTaskArgs(e.Data.TaskArgs, d.cfg.Redactor)
	details := taskStartedDetails{TaskName: startedName, ArgsHidden: hidden}
	if !hidden {
		details.Args = args
	}
	d.record(task.ctx, t, log.SeverityInfo, TypeTaskStarted, details)
}

func (d *decoder) startHost(t time.Time, e *jobEvent) {
	task := d.task(t, e)
	d.continued(task, e.Data.Host)
	key := hostKey{task: task, host: e.Data.Host}
	if old := d.hosts[key]; old != nil {
		d.endHost(old, t, hostCut) // the same task again on the host: a new span
	}
	h := d.openHost(key, t)
	args, hidden := parseTaskArgs(e.Data.TaskArgs, d.cfg.Redactor)
	details := taskStartedOnHostDetails{TaskName: task.name, HostName: h.name, ArgsHidden: hidden}
	if !hidden {
		details.Args = args
	}
	d.record(h.ctx, t, log.SeverityInfo, TypeTaskStartedOnHost, details)
}

func (d *decoder) countFor(host string) *HostStats {
	s := d.counted[host]
	if s == nil {
		s = &HostStats{}
		d.counted[host] = s
	}
	return s
}

// isInclude reports the actions that do not count in Ansible's recap.
func isInclude(action string) bool {
	switch strings.TrimPrefix(action, "ansible.builtin.") {
	case "include", "include_tasks", "include_role", "import_tasks", "import_role", "import_playbook":
		return true
	}
	return false
}

// result is the details of a result of h's task (failed and skipped come
// from the event type).
func (h *hostState) result(res *rawResult, failed, skipped bool) hostResultDetails {
	return hostResultDetails{TaskName: h.task.name, HostName: h.name, DelegatedHostName: res.delegatedHost(),
		TaskResult: res.reduce(failed, skipped, 0)}
}

// hostResult handles the final result of a task on a host: the event, the
// recap count and the end of the host span. A failure that counts waits
// for its fate (failures.go).
func (d *decoder) hostResult(t time.Time, e *jobEvent) {
	h := d.host(t, e)
	res := &e.Data.Res
	count := d.countFor(h.name)
	end := cmp.Or(parseTime(e.Data.End), t)
	if dh, ok := res.delegatedHost().(string); ok {
		h.span.SetAttributes(attribute.String("ansible.delegated_host", dh))
	}
	det := h.result(res, e.Event == "runner_on_failed" || e.Event == "runner_on_unreachable",
		e.Event == "runner_on_skipped")
	typ, sev, how := TypeTaskCompletedOnHost, log.SeverityInfo, outcome.OK
	switch e.Event {
	case "runner_on_ok":
		if res.stripped() {
			// Changed or not, only the recap tells (unknown.go).
			det.ResultUnknown = true
			d.flushItems(h, false, false)
			d.record(h.ctx, t, sev, typ, det)
			count.OK++
			d.holdUnknown(h, end)
			return
		}
		if !isInclude(e.Data.TaskAction) {
			count.OK++
			if det.TaskResult.changed() {
				count.Changed++
				how = outcome.Changed
			}
		}
	case "runner_on_failed":
		typ = TypeTaskFailedOnHost
		if !e.Data.IgnoreErrors {
			d.hold(h, t, end, det, false)
			return
		}
		sev, how, det.Ignored = log.SeverityWarn, outcome.Ignored, true
		count.OK++
		count.Ignored++
		if det.TaskResult.changed() {
			count.Changed++
		}
	case "runner_on_skipped":
		typ, how = TypeTaskSkippedOnHost, outcome.Skipped
		count.Skipped++
	case "runner_on_unreachable":
		// Counted, or ignored under ignore_unreachable, which runner's
		// event does not say: held like a failure (failures.go).
		d.hold(h, t, end, det, true)
		return
	}
	d.flushItems(h, det.Ignored, false)
	d.record(h.ctx, t, sev, typ, det)
	d.endHost(h, end, how)
}

// itemResult records one loop item in the host span. A failed item waits
// for the task's result, which says whether ignore_errors let it pass.
func (d *decoder) itemResult(t time.Time, e *jobEvent) {
	h := d.host(t, e)
	h.items++
	failed, skipped := e.Event == "runner_item_on_failed", e.Event == "runner_item_on_skipped"
	det := h.result(&e.Data.Res, failed, skipped)
	det.ItemLabel = e.Data.Res.itemLabel()
	switch {
	case failed:
		h.failedItems = append(h.failedItems, heldEvent{t: t, details: det})
	case skipped:
		d.record(h.ctx, t, log.SeverityInfo, TypeTaskSkippedOnHost, det)
	default:
		d.record(h.ctx, t, log.SeverityInfo, TypeTaskCompletedOnHost, det)
	}
}

// flushItems records the failed loop items of a host, marked as the
// task's result says: ignored, or rescued.
func (d *decoder) flushItems(h *hostState, ignored, rescued bool) {
	for _, it := range h.failedItems {
		it.details.Ignored, it.details.Rescued = ignored, rescued
		d.record(h.ctx, it.t, log.SeverityWarn, TypeTaskFailedOnHost, it.details)
	}
	h.failedItems = nil
}

func (d *decoder) prompt(t time.Time, e *jobEvent) {
	d.startPlaybook(t, e.Data.Playbook)
	ctx := d.pb.Ctx
	if d.play != nil {
		ctx = d.play.ctx
	}
	d.varPrompt = cmp.Or(d.varPrompt, e.Data.VarName)
	d.record(ctx, t, log.SeverityError, TypeVarPrompt, varPromptDetails{VarName: e.Data.VarName})
	if d.onPrompt != nil {
		d.onPrompt()
	}
}

// endStats takes Ansible's recap, which settles every pending failure, and
// records PlaybookResult.
func (d *decoder) endStats(t time.Time, e *jobEvent) {
	d.startPlaybook(t, e.Data.Playbook)
	d.endPlay(t)
	stats := map[string]HostStats{}
	s := &e.Data
	for _, m := range []map[string]int{s.Processed, s.OK, s.Changed, s.Failures, s.Dark, s.Skipped, s.Rescued, s.Ignored} {
		for h := range m {
			stats[h] = HostStats{OK: s.OK[h], Changed: s.Changed[h], Failures: s.Failures[h], Skipped: s.Skipped[h],
				Unreachable: s.Dark[h], Rescued: s.Rescued[h], Ignored: s.Ignored[h]}
		}
	}
	d.settle(stats)
	d.res.Stats, d.statsSeen = stats, true
	d.recordResult(t, false)
}

func (d *decoder) recordResult(t time.Time, rebuilt bool) {
	plays := make([]playEntry, len(d.res.Plays))
	for i, p := range d.res.Plays {
		plays[i] = playEntry{Play: p}
	}
	details := playbookResultDetails{Plays: plays, HostStats: d.res.Stats}
	if rebuilt {
		details.Rebuilt, details.RebuiltReason = true, rebuiltReason
	}
	d.record(d.pb.Ctx, t, log.SeverityInfo, TypePlaybookResult, details)
}

// runEnd is how a run ended, as Run or Stream saw it.
type runEnd struct {
	start     time.Time // when the run started (Run); used when no event came
	end       time.Time // when the run ended; zero: the last event's time
	rc        int       // -1: none (Stream)
	err       error     // the run's own failure (cancelled, prompt, playbook error): INTERNAL_ERROR
	reason    string    // user-safe description for err
	cancelled bool      // the run was stopped (ctx): open spans end cancelled
	broken    bool      // the caller stopped the stream for a cause: the tool failed
}

// finish ends every open span, rebuilds the PlaybookResult if the stats
// event never came, records the operation's end and returns the Result.
func (d *decoder) finish(o runEnd) Result {
	res := &d.res
	res.ExitCode = o.rc
	first := cmp.Or(res.Start, o.start, time.Now().UTC())
	if d.pb == nil {
		d.startPlaybook(first, "")
	}

	// The run ends with Ansible's last event, unless it was stopped before
	// its recap: then when it stopped.
	end := res.End
	if !d.statsSeen && o.end.After(end) {
		end = o.end
	}
	if end.IsZero() {
		end = first
	}
	stop := ""
	switch {
	case o.cancelled:
		stop = stopOutcome(o)
	case d.errorStop():
		// Ansible stopped the run: what it cut short did not fail.
		stop = outcome.Cancelled
	}
	d.endAll(end, stop)
	if !d.statsSeen {
		res.Stats = map[string]HostStats{}
		for h, s := range d.counted {
			res.Stats[h] = *s
		}
		if res.Events > 0 {
			res.StatsRebuilt = true
			d.recordResult(end, true)
		}
	}
	res.FailedHosts = hostsWhere(res.Stats, func(s HostStats) bool { return s.Failures > 0 })
	res.UnreachableHosts = hostsWhere(res.Stats, func(s HostStats) bool { return s.Unreachable > 0 })

	var code, reason string
	switch {
	case o.err != nil:
		code, reason = progress.FailureInternal, o.reason
	case len(res.UnreachableHosts) > 0:
		code, reason = progress.FailureResourceNotFound, "unreachable hosts: "+strings.Join(res.UnreachableHosts, ", ")
	case len(res.FailedHosts) > 0:
		code, reason = progress.FailureInfrastructure, "failed hosts: "+strings.Join(res.FailedHosts, ", ")
	case o.rc > 0:
		code, reason = progress.FailureInternal, fmt.Sprintf("ansible-playbook ended with status %d", o.rc)
	}
	if o.rc >= 0 {
		d.pb.Span.SetAttributes(attribute.Int("ansible.rc", o.rc))
	}
	// The run's own result is the recap's (or how it failed); its plays
	// may say more (outcome.Of).
	own := outcome.OK
	switch {
	case code != "":
		own = adapter.RunOutcome(runResult(o))
	case len(hostsWhere(res.Stats, func(s HostStats) bool { return s.Changed > 0 })) > 0:
		own = outcome.Changed
	}
	d.pb.Span.SetAttributes(attribute.String(outcome.Key, outcome.Of(own, d.plays...)))
	if code != "" {
		d.pb.FailAs(runResult(o), first, end, code, reason, nil)
	} else {
		d.pb.Complete(first, end)
	}
	return *res
}

// errorStop reports a run that Ansible's own error ended before its
// recap: a handler it could not find, a template it could not render in a
// play's keywords, an include it could not load.
func (d *decoder) errorStop() bool { return !d.statsSeen && d.ansibleErr != "" && d.varPrompt == "" }

// errorStopReason describes a run that Ansible's error ended (errorStop),
// in Ansible's words.
func (d *decoder) errorStopReason() string { return "Ansible stopped the run: " + d.ansibleErr }

// noRecapReason describes a run that ended without Ansible's recap, with
// Ansible's own error when it gave one.
func noRecapReason(d *decoder) string {
	reason := "the run ended before Ansible's recap"
	if d.res.Events == 0 {
		reason = "no Ansible job event was read"
	}
	if line := errorLine(d.output.String()); line != "" {
		reason += ": " + line
	}
	return reason
}

// endAll ends every span still open below the playbook span at t, those
// held for a pending failure (which now stands) too: settling it ends the
// play it held. The host spans Ansible never reported an end for end with
// stop (cancelled or timeout) when the run was stopped, else failed.
func (d *decoder) endAll(t time.Time, stop string) {
	if stop != "" {
		d.cutHow, d.stoppedAt = stop, t
	}
	d.endPlay(t)
	d.settle(nil)
}

// stopOutcome is the outcome of what a stopped run (runEnd.cancelled) cut
// short, and of the run: cancelled, or timeout when its deadline passed.
func stopOutcome(o runEnd) string {
	if runResult(o) == cicdconv.PipelineResultTimeout {
		return outcome.TimedOut
	}
	return outcome.Cancelled
}

// runResult is cicd.pipeline.result of a run that failed
// (docs/conventions.md): the context's; error for a run that could not
// start or whose stream broke off; else failure, a vars_prompt that nothing
// answers too (Run stops the run: it failed, it did not wait).
func runResult(o runEnd) cicdconv.PipelineResultAttr {
	switch r := adapter.ResultOf(o.err); {
	case o.broken:
		return cicdconv.PipelineResultError
	case r != cicdconv.PipelineResultFailure:
		return r
	case o.reason == "cancelled":
		return cicdconv.PipelineResultCancellation
	case o.err != nil && o.rc < 0:
		return cicdconv.PipelineResultError
	}
	return cicdconv.PipelineResultFailure
}

// cleanText makes Ansible's display text safe to log and to put in an
// error (see tooltext.Text: Ansible colours its output), cut to at most
// max bytes, without the spaces around it.
func cleanText(s string, max int) string {
	return strings.TrimSpace(tooltext.Text(s, max))
}

// tail keeps the last max lines of text, for error messages.
type tail struct {
	max   int
	lines []string
}

func (t *tail) add(text string) {
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			t.lines = append(t.lines, l)
		}
	}
	if over := len(t.lines) - t.max; over > 0 {
		t.lines = slices.Delete(t.lines, 0, over)
	}
}

func (t *tail) String() string { return strings.Join(t.lines, "\n") }
