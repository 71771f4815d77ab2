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

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress"
)

// decoder turns job events, one line at a time, into progress events and
// spans, live (a failure waits until Ansible shows whether a rescue took
// it, see failures.go). One goroutine uses it; only pid is read by another
// (Run's supervisor).
type decoder struct {
	cfg    *config
	parent context.Context
	ev     jobEvent // reused between lines

	pbName string
	pb     *adapter.Operation // the playbook span, once started

	play    *playState   // the play in progress
	plays   []Play       // every play started, for the Result
	held    []*playState // plays ended while a failure of theirs is pending
	hosts   map[hostKey]*hostState
	pending []*hostState // failed hosts whose failure may be rescued

	counted   map[string]*HostStats // rebuilt from results
	stats     map[string]HostStats  // from playbook_on_stats
	statsSeen bool

	first, last time.Time
	events      int
	skipped     int
	warnings    []string
	output      tail // lines that were not job events, for errors

	cutHow    string    // the outcome of spans Ansible reported no end for
	stoppedAt time.Time // when the run was stopped (cancelled or timed out), else zero

	pid       atomic.Int64 // ansible-playbook's pid, from the events
	varPrompt string
	onPrompt  func() // Run: stop the run
}

// hostKey names a host's span: one per task and host.
type hostKey struct {
	task *taskState
	host string
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
	d.events++
	e := &d.ev
	d.cfg.Show(e.Stdout)
	t := parseTime(e.Created)
	if t.IsZero() {
		// Keep the order; the first event without a time gets the clock.
		t = cmp.Or(d.last, time.Now().UTC())
	}
	if d.first.IsZero() {
		d.first = t
	}
	if t.After(d.last) {
		d.last = t
	}
	if e.PID > 0 {
		d.pid.Store(int64(e.PID))
	}

	switch e.Event {
	case "playbook_on_start":
		d.startPlaybook(t, e.Data.Playbook)
	case "playbook_on_play_start":
		d.startPlay(t, e)
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
		d.message(e.Event, line)
	}
}

// skip counts a line that is no job event and keeps it for the run's
// error. Plain text is Ansible's or runner's own (a playbook that cannot be
// loaded, a start-up error): logged at debug level only, since the error
// says it (see errorLine). JSON that is no job event is garbage: shown and
// logged as a warning. Neither stops the stream.
func (d *decoder) skip(line []byte) {
	d.skipped++
	text := cleanText(string(line), 1024)
	d.output.add(text)
	if line[0] != '{' {
		d.cfg.Logger.Debug("ansible: text outside the job events", "line", d.cfg.Redactor.Value(text))
		return
	}
	d.cfg.Show(string(line))
	d.cfg.Logger.Warn("ansible: line skipped: not a job event", "line", d.cfg.Redactor.Value(text))
}

func (d *decoder) message(kind string, line []byte) {
	text := cleanText(displayText(line), 2048)
	if text == "" {
		return
	}
	if kind == "error" {
		d.output.add(text)
	}
	if len(d.warnings) < 100 {
		d.warnings = append(d.warnings, text)
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

func (d *decoder) startPlay(t time.Time, e *jobEvent) {
	d.startPlaybook(t, e.Data.Playbook)
	d.endPlay(t)
	name, id := cmp.Or(e.Data.Name, e.Data.Play), cmp.Or(e.Data.PlayUUID, e.UUID)
	p := d.startPlaySpan(t, name, id, e.Data.PlayPattern)
	d.play = p
	d.plays = append(d.plays, Play{Name: name, ID: id})
	d.record(p.ctx, t, log.SeverityInfo, TypePlayStarted, playDetails{PlayName: name})
}

// currentPlay is the play in progress, or one made up from the event's
// play fields for a stream that starts in the middle of a play.
func (d *decoder) currentPlay(t time.Time, e *jobEvent) *playState {
	if d.play == nil || (e.Data.PlayUUID != "" && e.Data.PlayUUID != d.play.id) {
		d.startPlay(t, &jobEvent{UUID: e.Data.PlayUUID, Data: eventData{
			Playbook: e.Data.Playbook, Play: e.Data.Play, PlayUUID: e.Data.PlayUUID, PlayPattern: e.Data.PlayPattern,
		}})
	}
	return d.play
}

// endPlay ends the play in progress at t and every span still open in it,
// except those of a failure that may yet prove rescued: they, and so the
// play, end when it is known (see failures.go).
func (d *decoder) endPlay(t time.Time) {
	p := d.play
	if p == nil {
		return
	}
	d.play = nil
	for _, h := range d.openHosts(p) {
		d.endHost(h, t, hostCut)
	}
	d.endTasks(p)
	p.endAt = adapter.Later(t, p.start)
	if p.held > 0 {
		d.held = append(d.held, p)
		return
	}
	d.endPlaySpan(p)
}

// openHosts returns the open host spans of play p (all when p is nil), in
// the order they started.
func (d *decoder) openHosts(p *playState) []*hostState {
	var hs []*hostState
	for _, h := range d.hosts {
		if p == nil || h.task.play == p {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, func(a, b *hostState) int {
		return cmp.Or(a.start.Compare(b.start), strings.Compare(a.name, b.name))
	})
	return hs
}

// taskName is the name Ansible shows: "role : task" for role tasks.
func taskName(e *jobEvent) string {
	name := cmp.Or(e.Data.Task, e.Data.TaskAction)
	if e.Data.Role != "" && !strings.HasPrefix(name, e.Data.Role+" : ") {
		name = e.Data.Role + " : " + name
	}
	return name
}

// isMeta reports a meta task (flush_handlers, end_play, ...): Ansible runs
// it itself, mostly without any host event, so it gets a span only when a
// host event comes for it.
func isMeta(action string) bool {
	return strings.TrimPrefix(action, "ansible.builtin.") == "meta"
}

func (d *decoder) startTask(t time.Time, e *jobEvent) {
	p := d.currentPlay(t, e)
	id := cmp.Or(e.Data.TaskUUID, e.UUID)

	// Under the free strategy each host starts a task on its own, so the
	// start of a task still open repeats: the same task, one span, one
	// TaskStarted. Such a play's tasks end with the play, since any host
	// may still start them. A meta task's start also repeats under the
	// linear strategy (end_host, once per host): it is the same task too,
	// and says nothing of the strategy.
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
	if name == "" {
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
	ctx := p.ctx
	if !task.meta {
		d.startTaskSpan(task, startedName)
		ctx = task.ctx
	}
	p.last = task
	args, hidden := parseTaskArgs(e.Data.TaskArgs, d.cfg.Redactor)
	details := taskStartedDetails{TaskName: startedName, ArgsHidden: hidden}
	if !hidden {
		details.Args = args
	}
	d.record(ctx, t, log.SeverityInfo, TypeTaskStarted, details)
}

// task returns the task of a host event (runner makes every runner_* event
// a child of its task's start), or one made up from the event's task fields
// when its start was not seen. A meta task gets its span here.
func (d *decoder) task(t time.Time, e *jobEvent) *taskState {
	p := d.currentPlay(t, e)
	id := cmp.Or(e.Data.TaskUUID, e.ParentUUID)
	task := p.tasks[id]
	if task == nil || task.ended {
		task = p.newTask(id, taskName(e), t, e)
	}
	if task.span == nil {
		d.startTaskSpan(task, task.name)
	}
	return task
}

// endTask ends a task whose hosts are done, if it is over: superseded by a
// later task (linear strategy) or its play ended (now).
func (d *decoder) endTask(task *taskState, now bool) {
	if task.ended || task.openHosts > 0 || !(now || task.superseded && !task.play.free) {
		return
	}
	task.ended = true
	if task.span != nil {
		d.endTaskSpan(task)
	}
}

// endTasks ends every task of play p that is not waiting for a host.
func (d *decoder) endTasks(p *playState) {
	for _, task := range p.open {
		d.endTask(task, true)
	}
	p.compact()
}

func (d *decoder) startHost(t time.Time, e *jobEvent) {
	task := d.task(t, e)
	d.continued(task.play, e.Data.Host)
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

func (d *decoder) openHost(key hostKey, t time.Time) *hostState {
	task := key.task
	h := &hostState{name: key.host, task: task, start: t}
	d.startHostSpan(h)
	d.hosts[key] = h
	task.openHosts++
	task.hosts[key.host] = true
	task.lastSeen = adapter.Later(task.lastSeen, t)
	return h
}

// host returns the open host span of an event, or opens one at the
// result's start time when runner_on_start was not seen.
func (d *decoder) host(t time.Time, e *jobEvent) *hostState {
	task := d.task(t, e)
	key := hostKey{task: task, host: e.Data.Host}
	if h := d.hosts[key]; h != nil {
		return h
	}
	start := parseTime(e.Data.Start)
	if start.IsZero() || start.After(t) {
		start = t
	}
	return d.openHost(key, start)
}

// hostCut is the outcome of a host span that Ansible never reported an
// end for; decoder.cutHow says which outcome it takes (see endAll).
const hostCut = "cut"

// endHost ends a host's span at end with its outcome (one of package
// outcome's, or hostCut), and its task if that is over.
func (d *decoder) endHost(h *hostState, end time.Time, how string) {
	delete(d.hosts, hostKey{task: h.task, host: h.name})
	end = adapter.Later(end, h.start)
	d.endHostSpan(h, end, how)
	task := h.task
	task.openHosts--
	task.lastSeen = adapter.Later(task.lastSeen, end)
	d.endTask(task, false)
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
// recap count, the span's outcome, and the end of the host span at
// Ansible's end time for the host. A failure that counts waits for its
// fate (failures.go).
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
		if !isInclude(e.Data.TaskAction) {
			count.OK++
			if det.TaskResult.Changed {
				count.Changed++
				how = outcome.Changed
			}
		}
	case "runner_on_failed":
		typ = TypeTaskFailedOnHost
		if !e.Data.IgnoreErrors {
			d.hold(h, t, end, det)
			return
		}
		sev, how, det.Ignored = log.SeverityWarn, outcome.Ignored, true
		count.OK++
		count.Ignored++
		if det.TaskResult.Changed {
			count.Changed++
		}
	case "runner_on_skipped":
		typ, how = TypeTaskSkippedOnHost, outcome.Skipped
		count.Skipped++
	case "runner_on_unreachable":
		sev, how = log.SeverityError, outcome.Unreachable
		count.Unreachable++
		h.task.play.leave(h.name)
	}
	d.flushItems(h, det.Ignored, false)
	if how == outcome.Unreachable {
		d.record(h.ctx, t, sev, TypeHostUnreachable, det.event())
	} else {
		d.record(h.ctx, t, sev, typ, det)
	}
	d.endHost(h, end, how)
}

// itemResult records one loop item in the host span; the task's final
// result follows as its own event. A failed item waits for that result,
// which says whether ignore_errors let it pass.
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
	d.stats, d.statsSeen = stats, true
	d.recordResult(t, false)
}

func (d *decoder) recordResult(t time.Time, rebuilt bool) {
	plays := make([]playEntry, len(d.plays))
	for i, p := range d.plays {
		plays[i] = playEntry{Play: p}
	}
	details := playbookResultDetails{Plays: plays, HostStats: d.stats}
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
	err       error     // the run's own failure (cancelled, prompt, playbook error)
	code      string    // failure code for err
	reason    string    // user-safe description for err
	cancelled bool      // the run was stopped (ctx): open spans end cancelled
}

// finish ends every open span, rebuilds the PlaybookResult if the stats
// event never came, records the operation's end and returns the Result.
// Every run is reported, even one without a single job event: a run that
// did not end with Ansible's recap is a failure that says so.
func (d *decoder) finish(o runEnd) Result {
	res := Result{
		ExitCode: o.rc, Start: d.first, End: d.last,
		Events: d.events, SkippedLines: d.skipped, Warnings: d.warnings,
	}
	if d.pb == nil {
		d.first = cmp.Or(d.first, o.start, time.Now().UTC())
		d.startPlaybook(d.first, "")
	}

	// The run ends with Ansible's last event, unless it was stopped before
	// its recap: then when it stopped.
	end := d.last
	if !d.statsSeen && o.end.After(end) {
		end = o.end
	}
	if end.IsZero() {
		end = d.first
	}
	stop := ""
	if o.cancelled {
		stop = stopOutcome(o)
	}
	d.endAll(end, stop)
	if !d.statsSeen {
		stats := map[string]HostStats{}
		for h, s := range d.counted {
			stats[h] = *s
		}
		d.stats = stats
		if d.events > 0 {
			res.StatsRebuilt = true
			d.recordResult(end, true)
		}
	}
	res.Plays = d.plays
	res.Stats = d.stats
	res.FailedHosts = hostsWhere(d.stats, func(s HostStats) bool { return s.Failures > 0 })
	res.UnreachableHosts = hostsWhere(d.stats, func(s HostStats) bool { return s.Unreachable > 0 })

	var code, reason string
	switch {
	case o.err != nil:
		code, reason = o.code, o.reason
	case len(res.UnreachableHosts) > 0:
		code, reason = FailureResourceNotFound, "unreachable hosts: "+strings.Join(res.UnreachableHosts, ", ")
	case len(res.FailedHosts) > 0:
		code, reason = FailureInfrastructure, "failed hosts: "+strings.Join(res.FailedHosts, ", ")
	case o.rc > 0:
		code, reason = FailureInternal, fmt.Sprintf("ansible-playbook ended with status %d", o.rc)
	case !d.statsSeen:
		code, reason = FailureInternal, noRecapReason(d)
	}
	if o.rc >= 0 {
		d.pb.Span.SetAttributes(attribute.Int("ansible.rc", o.rc))
	}
	how := outcome.OK
	switch {
	case code != "":
		// failed, or cancelled or timeout: the run span's result says
		// which (runResult).
		how = adapter.RunOutcome(runResult(o))
	case len(hostsWhere(d.stats, func(s HostStats) bool { return s.Changed > 0 })) > 0:
		how = outcome.Changed
	}
	d.pb.Span.SetAttributes(attribute.String(outcome.Key, how))
	if code != "" {
		d.pb.FailAs(runResult(o), d.first, end, code, reason, nil)
	} else {
		d.pb.Complete(d.first, end)
	}
	return res
}

// noRecapReason describes a run that ended without Ansible's recap, with
// Ansible's own error when it gave one.
func noRecapReason(d *decoder) string {
	reason := "the run ended before Ansible's recap"
	if d.events == 0 {
		reason = "no Ansible job event was read"
	}
	if line := errorLine(d.output.String()); line != "" {
		reason += ": " + line
	}
	return reason
}

// endAll ends every span still open below the playbook span at t: those
// of the play in progress, the plays held for a pending failure (which
// now stands: Ansible reported no rescue), and any that events after the
// recap opened. The host spans Ansible never reported an end for end
// with stop (cancelled or timeout) when the run was stopped, else failed
// with "no end reported".
func (d *decoder) endAll(t time.Time, stop string) {
	if stop != "" {
		d.cutHow, d.stoppedAt = stop, t
	}
	d.endPlay(t)
	for _, h := range d.openHosts(nil) {
		d.endHost(h, t, hostCut)
	}
	d.settle(nil)
	for _, p := range d.held {
		d.endTasks(p)
		if !p.ended {
			d.endPlaySpan(p)
		}
	}
	d.held = nil
}
