package ansible

import (
	"bytes"
	"context"
	"fmt"
	"maps"
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
// spans, live: each event is recorded while its line is handled (a failure
// waits until Ansible shows whether a rescue section took it, see
// failures.go). It is used by one goroutine; only pid is read by another
// (Run's supervisor).
type decoder struct {
	cfg    *config
	parent context.Context
	ev     jobEvent // reused between lines

	pbStarted bool
	pbName    string
	pb        *adapter.Operation // the playbook span, once started

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
	onPrompt  func(name string) // Run: stop the run
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
	if trimmed[0] != '{' {
		d.toolText(trimmed)
		return
	}
	if err := decodeEvent(trimmed, &d.ev); err != nil || d.ev.Event == "" {
		d.nonEvent(trimmed, "not a job event")
		return
	}
	d.events++
	e := &d.ev
	d.cfg.Show(e.Stdout)
	t := parseTime(e.Created)
	if t.IsZero() {
		t = d.last // keep the order; the first event without a time gets the clock
		if t.IsZero() {
			t = time.Now().UTC()
		}
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
		d.retry(t, e)
	case "playbook_on_vars_prompt":
		d.prompt(t, e)
	case "playbook_on_stats":
		d.endStats(t, e)
	case "warning", "deprecated", "error":
		d.message(e.Event, line)
	}
}

// toolText handles a line of plain text: Ansible's or ansible-runner's own
// messages outside the job events (a playbook that cannot be loaded or
// found, a start-up error). It is counted and kept for the run's error,
// which says what is wrong once (see errorLine); it is logged only at
// debug level, since the error carries it.
func (d *decoder) toolText(line []byte) {
	d.skipped++
	text := cleanText(string(line), 1024)
	d.output.add(text)
	d.cfg.Logger.Debug("ansible: text outside the job events", "line", d.cfg.Redactor.Value(text))
}

// nonEvent handles a line that looks like JSON but is no job event:
// garbage. It is counted, kept for error messages and logged; it never
// stops the stream.
func (d *decoder) nonEvent(line []byte, why string) {
	d.cfg.Show(string(line))
	d.skipped++
	text := cleanText(string(line), 1024)
	d.output.add(text)
	d.cfg.Logger.Warn("ansible: line skipped: "+why, "line", d.cfg.Redactor.Value(text))
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

func (d *decoder) operation() string {
	if d.cfg.Operation != "" {
		return d.cfg.Operation
	}
	if d.pbName != "" {
		return d.pbName
	}
	return "playbook"
}

// startPlaybook opens the playbook span (a child of the caller's span) and
// records common/OperationStarted in it.
func (d *decoder) startPlaybook(t time.Time, name string) {
	if d.pbStarted {
		return
	}
	d.pbStarted = true
	if name != "" {
		d.pbName = name
	}
	attrs := []attribute.KeyValue{}
	if d.pbName != "" {
		attrs = append(attrs, attribute.String("ansible.playbook", d.pbName))
	}
	d.pb = d.cfg.StartRun(d.parent, adapter.Run{Operation: d.operation(), Pipeline: d.operationName(),
		OldSpan: "playbook " + d.operationName(), Old: attrs}, t)
}

func (d *decoder) operationName() string {
	if d.pbName != "" {
		return d.pbName
	}
	return d.operation()
}

func (d *decoder) ensurePlaybook(t time.Time, e *jobEvent) {
	if !d.pbStarted {
		d.startPlaybook(t, e.Data.Playbook)
	}
}

func (d *decoder) startPlay(t time.Time, e *jobEvent) {
	d.ensurePlaybook(t, e)
	d.endPlay(t)
	name := e.Data.Name
	if name == "" {
		name = e.Data.Play
	}
	id := e.Data.PlayUUID
	if id == "" {
		id = e.UUID
	}
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
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return hs
}

// taskName is the name Ansible shows: "role : task" for role tasks.
func taskName(e *jobEvent) string {
	name := e.Data.Task
	if name == "" {
		name = e.Data.TaskAction
	}
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
	id := e.Data.TaskUUID
	if id == "" {
		id = e.UUID
	}

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

	name := e.Data.Name
	if name == "" {
		name = taskName(e)
	}
	// Ignition's driver names a handler's start "Handler/<name>"; runner
	// marks handlers only by is_conditional.
	startedName := name
	if e.Data.IsConditional {
		startedName = "Handler/" + name
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

	task := &taskState{id: id, name: name, play: p, start: t, lastSeen: t, handler: e.Data.IsConditional,
		meta: isMeta(e.Data.TaskAction), action: e.Data.TaskAction, role: e.Data.Role, hosts: map[string]bool{}}
	ctx := p.ctx
	if !task.meta {
		d.startTaskSpan(task, startedName)
		ctx = task.ctx
	}
	p.add(task)
	p.last = task
	args, hidden := parseTaskArgs(e.Data.TaskArgs, d.cfg.Redactor)
	details := taskStartedDetails{TaskName: startedName, ArgsHidden: hidden}
	if !hidden {
		details.Args = args
	}
	d.record(ctx, t, log.SeverityInfo, TypeTaskStarted, details)
}

// taskID is the task of a host event: runner makes every runner_* event
// a child of its task start.
func taskID(e *jobEvent) string {
	if e.Data.TaskUUID != "" {
		return e.Data.TaskUUID
	}
	return e.ParentUUID
}

// task returns the task of a host event, or one made up from the event's
// task fields when its start was not seen. A meta task gets its span here.
func (d *decoder) task(t time.Time, e *jobEvent) *taskState {
	p := d.currentPlay(t, e)
	id := taskID(e)
	task := p.tasks[id]
	if task != nil && !task.ended {
		if task.span == nil {
			d.startTaskSpan(task, task.name)
		}
		return task
	}
	task = &taskState{id: id, name: taskName(e), play: p, start: t, lastSeen: t,
		action: e.Data.TaskAction, role: e.Data.Role, hosts: map[string]bool{}}
	d.startTaskSpan(task, task.name)
	p.add(task)
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
	if t.After(task.lastSeen) {
		task.lastSeen = t
	}
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
	if end.After(task.lastSeen) {
		task.lastSeen = end
	}
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

// includeActions do not count in Ansible's recap.
func isInclude(action string) bool {
	switch strings.TrimPrefix(action, "ansible.builtin.") {
	case "include", "include_tasks", "include_role", "import_tasks", "import_role", "import_playbook":
		return true
	}
	return false
}

// hostResult handles the final result of a task on a host: the event, the
// recap count, the span's outcome, and the end of the host span at
// Ansible's end time for the host. A failure that counts waits for its
// fate (failures.go).
func (d *decoder) hostResult(t time.Time, e *jobEvent) {
	h := d.host(t, e)
	res := &e.Data.Res
	ignored := bool(e.Data.IgnoreErrors)
	count := d.countFor(e.Data.Host)
	end := parseTime(e.Data.End)
	if end.IsZero() {
		end = t
	}
	if dh, ok := res.delegatedHost().(string); ok {
		h.span.SetAttributes(attribute.String("ansible.delegated_host", dh))
	}
	var (
		typ = TypeTaskCompletedOnHost
		sev = log.SeverityInfo
		how string
		tr  taskResult
	)
	switch e.Event {
	case "runner_on_ok":
		tr, how = res.reduce(false, false, 0), outcome.OK
		if !isInclude(e.Data.TaskAction) {
			count.OK++
			if tr.Changed {
				count.Changed++
				how = outcome.Changed
			}
		}
	case "runner_on_failed":
		typ, tr = TypeTaskFailedOnHost, res.reduce(true, false, 0)
		if !ignored {
			d.hold(h, t, end, hostResultDetails{TaskName: h.task.name, HostName: h.name,
				DelegatedHostName: res.delegatedHost(), TaskResult: tr})
			return
		}
		sev, how = log.SeverityWarn, outcome.Ignored
		count.OK++
		count.Ignored++
		if tr.Changed {
			count.Changed++
		}
	case "runner_on_skipped":
		typ, tr, how = TypeTaskSkippedOnHost, res.reduce(false, true, 0), outcome.Skipped
		count.Skipped++
	case "runner_on_unreachable":
		tr, how = res.reduce(true, false, 0), outcome.Unreachable
		sev = log.SeverityError
		count.Unreachable++
		h.task.play.leave(h.name)
		d.flushItems(h, false, false)
		d.record(h.ctx, t, sev, TypeHostUnreachable, hostEventDetails{
			TaskName: h.task.name, HostName: h.name, DelegatedHostName: res.delegatedHost(), TaskResult: tr,
		})
		d.endHost(h, end, how)
		return
	}
	d.flushItems(h, how == outcome.Ignored, false)
	d.record(h.ctx, t, sev, typ, hostResultDetails{
		TaskName: h.task.name, HostName: h.name, DelegatedHostName: res.delegatedHost(),
		TaskResult: tr, Ignored: how == outcome.Ignored,
	})
	d.endHost(h, end, how)
}

// itemResult records one loop item in the host span; the task's final
// result follows as its own event. A failed item waits for that result,
// which says whether ignore_errors let it pass.
func (d *decoder) itemResult(t time.Time, e *jobEvent) {
	h := d.host(t, e)
	res := &e.Data.Res
	h.items++
	var (
		typ = TypeTaskCompletedOnHost
		sev = log.SeverityInfo
		tr  taskResult
	)
	switch e.Event {
	case "runner_item_on_ok":
		tr = res.reduce(false, false, 0)
	case "runner_item_on_failed":
		typ, sev, tr = TypeTaskFailedOnHost, log.SeverityWarn, res.reduce(true, false, 0)
	case "runner_item_on_skipped":
		typ, tr = TypeTaskSkippedOnHost, res.reduce(false, true, 0)
	}
	details := hostResultDetails{
		TaskName: h.task.name, ItemLabel: res.itemLabel(), HostName: h.name,
		DelegatedHostName: res.delegatedHost(), TaskResult: tr,
	}
	if typ == TypeTaskFailedOnHost {
		h.failedItems = append(h.failedItems, heldEvent{t: t, details: details})
		return
	}
	d.record(h.ctx, t, sev, typ, details)
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

func (d *decoder) retry(t time.Time, e *jobEvent) {
	h := d.host(t, e)
	res := &e.Data.Res
	h.attempts++
	d.record(h.ctx, t, log.SeverityWarn, TypeTaskRetryOnHost, hostEventDetails{
		TaskName: h.task.name, HostName: h.name, DelegatedHostName: res.delegatedHost(),
		TaskResult: res.reduce(false, false, 0),
	})
}

func (d *decoder) prompt(t time.Time, e *jobEvent) {
	d.ensurePlaybook(t, e)
	ctx := d.pb.Ctx
	if d.play != nil {
		ctx = d.play.ctx
	}
	if d.varPrompt == "" {
		d.varPrompt = e.Data.VarName
	}
	d.record(ctx, t, log.SeverityError, TypeVarPrompt, varPromptDetails{VarName: e.Data.VarName})
	if d.onPrompt != nil {
		d.onPrompt(e.Data.VarName)
	}
}

// endStats takes Ansible's recap, which settles every pending failure, and
// records PlaybookResult.
func (d *decoder) endStats(t time.Time, e *jobEvent) {
	d.ensurePlaybook(t, e)
	d.endPlay(t)
	stats := map[string]HostStats{}
	hosts := func(m map[string]int) {
		for h := range m {
			stats[h] = HostStats{}
		}
	}
	for _, m := range []map[string]int{e.Data.Processed, e.Data.OK, e.Data.Changed, e.Data.Failures,
		e.Data.Dark, e.Data.Skipped, e.Data.Rescued, e.Data.Ignored} {
		hosts(m)
	}
	for h := range stats {
		stats[h] = HostStats{
			OK: e.Data.OK[h], Changed: e.Data.Changed[h], Failures: e.Data.Failures[h],
			Skipped: e.Data.Skipped[h], Unreachable: e.Data.Dark[h], Rescued: e.Data.Rescued[h],
			Ignored: e.Data.Ignored[h],
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
	if !d.pbStarted {
		start := d.first
		if start.IsZero() {
			start = o.start
		}
		if start.IsZero() {
			start = time.Now().UTC()
		}
		d.startPlaybook(start, "")
		if d.first.IsZero() {
			d.first = start
		}
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
	case slices.ContainsFunc(slices.Collect(maps.Values(d.stats)), func(s HostStats) bool { return s.Changed > 0 }):
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
