package ansible

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress"
)

// decoder turns job events, one line at a time, into progress events and
// spans, live: each event is recorded while its line is handled. It is used
// by one goroutine; only pid is read by another (Run's supervisor).
type decoder struct {
	cfg    *config
	parent context.Context
	ev     jobEvent // reused between lines

	pbStarted bool
	pbName    string
	pb        *adapter.Operation // the playbook span, once started

	play  *playState
	plays []Play
	tasks map[string]*taskState // by task uuid
	hosts map[hostKey]*hostState

	counted   map[string]*HostStats // rebuilt from results
	stats     map[string]HostStats  // from playbook_on_stats
	statsSeen bool

	first, last time.Time
	events      int
	skipped     int
	warnings    []string
	output      tail // lines that were not job events, for errors

	pid       atomic.Int64 // ansible-playbook's pid, from the events
	varPrompt string
	onPrompt  func(name string) // Run: stop the run
}

type playState struct {
	name, id string
	ctx      context.Context
	span     trace.Span
	start    time.Time
	open     []*taskState // tasks whose span is not ended
	failed   bool
}

type taskState struct {
	name       string
	play       *playState
	ctx        context.Context
	span       trace.Span
	start      time.Time
	lastSeen   time.Time
	openHosts  int
	superseded bool // a later task of the play has started
	ended      bool
	failed     int // hosts failed (not ignored) or unreachable
	tally      tally
}

type hostKey struct{ task, host string }

type hostState struct {
	name     string
	task     *taskState
	ctx      context.Context
	span     trace.Span
	start    time.Time
	attempts int
	items    int
}

func newDecoder(ctx context.Context, cfg *config) *decoder {
	return &decoder{
		cfg:     cfg,
		parent:  ctx,
		tasks:   map[string]*taskState{},
		hosts:   map[hostKey]*hostState{},
		counted: map[string]*HostStats{},
		output:  tail{max: 40},
	}
}

// handle decodes one line and records what it means.
func (d *decoder) handle(line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] != '{' {
		d.nonEvent(trimmed, "not JSON")
		return
	}
	if err := decodeEvent(trimmed, &d.ev); err != nil || d.ev.Event == "" {
		d.nonEvent(trimmed, "not a job event")
		return
	}
	d.events++
	e := &d.ev
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

// nonEvent handles a line that is not a job event: start-up errors and
// warnings of ansible-runner, or garbage. It is counted, kept for error
// messages and logged; it never stops the stream.
func (d *decoder) nonEvent(line []byte, why string) {
	d.skipped++
	text := cleanText(string(line), 1024)
	d.output.add(text)
	d.cfg.Logger.Warn("ansible: line skipped: "+why, "line", d.cfg.Redactor.Value(text))
}

func (d *decoder) message(kind string, line []byte) {
	var stdout string
	_ = members(bytes.TrimSpace(line), func(key, val []byte) error {
		if string(key) == "stdout" {
			stdout = str(val)
		}
		return nil
	})
	text := cleanText(stdout, 2048)
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
	p := &playState{name: name, id: id, start: t}
	p.ctx, p.span = d.cfg.Tracer.Start(d.pb.Ctx, "play "+name, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("ansible.play.name", name),
			attribute.String("ansible.play.id", id),
			attribute.String("ansible.play.pattern", e.Data.PlayPattern)))
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

// endPlay ends the play in progress and every span still open in it.
func (d *decoder) endPlay(t time.Time) {
	p := d.play
	if p == nil {
		return
	}
	for k, h := range d.hosts {
		if h.task.play == p {
			d.endHost(k, h, t)
		}
	}
	for _, task := range p.open {
		d.endTask(task)
	}
	p.open = nil
	if p.failed {
		p.span.SetStatus(codes.Error, "a task failed")
	}
	p.span.End(trace.WithTimestamp(adapter.Later(t, p.start)))
	d.play = nil
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

func (d *decoder) startTask(t time.Time, e *jobEvent) {
	p := d.currentPlay(t, e)
	id := e.Data.TaskUUID
	if id == "" {
		id = e.UUID
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

	// Any earlier task of the play is over once its hosts are done (with
	// the free strategy they may still be running).
	for _, other := range p.open {
		if other.superseded {
			continue
		}
		other.superseded = true
		if other.openHosts == 0 {
			d.endTask(other)
		}
	}
	p.open = compact(p.open)

	task := d.tasks[id]
	if task == nil || task.ended {
		// A repeated task uuid (serial batches, the free strategy) whose
		// span has ended gets a new span.
		attrs := []attribute.KeyValue{
			attribute.String("ansible.task.id", id),
			attribute.String("ansible.task.action", e.Data.TaskAction),
		}
		if e.Data.Role != "" {
			attrs = append(attrs, attribute.String("ansible.task.role", e.Data.Role))
		}
		if e.Data.IsConditional {
			attrs = append(attrs, attribute.Bool("ansible.task.handler", true))
		}
		task = &taskState{name: name, play: p, start: t, lastSeen: t}
		task.ctx, task.span = d.pb.StartTask(p.ctx, t, adapter.Task{Name: name, ID: id, OldSpan: "task " + startedName,
			Old: []attribute.KeyValue{attribute.String("ansible.task.name", name)}}, attrs...)
		d.tasks[id] = task
		p.open = append(p.open, task)
	} else {
		task.superseded = false
	}
	args, hidden := parseTaskArgs(e.Data.TaskArgs, d.cfg.Redactor)
	details := taskStartedDetails{TaskName: startedName, ArgsHidden: hidden}
	if !hidden {
		details.Args = args
	}
	d.record(task.ctx, t, log.SeverityInfo, TypeTaskStarted, details)
}

func compact(ts []*taskState) []*taskState {
	out := ts[:0]
	for _, t := range ts {
		if !t.ended {
			out = append(out, t)
		}
	}
	clear(ts[len(out):])
	return out
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
// task fields when its start was not seen.
func (d *decoder) task(t time.Time, e *jobEvent) *taskState {
	id := taskID(e)
	if task := d.tasks[id]; task != nil && !task.ended {
		return task
	}
	p := d.currentPlay(t, e)
	task := &taskState{name: taskName(e), play: p, start: t, lastSeen: t}
	task.ctx, task.span = d.pb.StartTask(p.ctx, t, adapter.Task{Name: task.name, ID: id, OldSpan: "task " + task.name,
		Old: []attribute.KeyValue{attribute.String("ansible.task.name", task.name)}},
		attribute.String("ansible.task.id", id),
		attribute.String("ansible.task.action", e.Data.TaskAction))
	d.tasks[id] = task
	p.open = append(p.open, task)
	return task
}

func (d *decoder) endTask(task *taskState) {
	if task.ended {
		return
	}
	task.ended = true
	status := ""
	if task.failed > 0 {
		host := "hosts"
		if task.failed == 1 {
			host = "host"
		}
		status = fmt.Sprintf("failed on %d %s", task.failed, host)
		task.play.failed = true
	}
	d.pb.EndTask(task.span, adapter.Later(task.lastSeen, task.start), task.tally.outcome(), status)
}

func (d *decoder) startHost(t time.Time, e *jobEvent) {
	task := d.task(t, e)
	key := hostKey{task: taskID(e), host: e.Data.Host}
	if old := d.hosts[key]; old != nil {
		d.endHost(key, old, t) // the same task again on the host: a new span
	}
	h := d.openHost(key, task, e.Data.Host, t)
	args, hidden := parseTaskArgs(e.Data.TaskArgs, d.cfg.Redactor)
	details := taskStartedOnHostDetails{TaskName: task.name, HostName: h.name, ArgsHidden: hidden}
	if !hidden {
		details.Args = args
	}
	d.record(h.ctx, t, log.SeverityInfo, TypeTaskStartedOnHost, details)
}

func (d *decoder) openHost(key hostKey, task *taskState, host string, t time.Time) *hostState {
	h := &hostState{name: host, task: task, start: t}
	h.ctx, h.span = d.cfg.Tracer.Start(task.ctx, "host "+host, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			attribute.String("ansible.host.name", host),
			attribute.String("ansible.task.name", task.name)))
	d.hosts[key] = h
	task.openHosts++
	if t.After(task.lastSeen) {
		task.lastSeen = t
	}
	return h
}

// host returns the open host span of an event, or opens one at the
// result's start time when runner_on_start was not seen.
func (d *decoder) host(t time.Time, e *jobEvent) (hostKey, *hostState) {
	key := hostKey{task: taskID(e), host: e.Data.Host}
	if h := d.hosts[key]; h != nil {
		return key, h
	}
	start := parseTime(e.Data.Start)
	if start.IsZero() || start.After(t) {
		start = t
	}
	return key, d.openHost(key, d.task(t, e), e.Data.Host, start)
}

func (d *decoder) endHost(key hostKey, h *hostState, t time.Time) {
	delete(d.hosts, key)
	if h.attempts > 0 {
		h.span.SetAttributes(attribute.Int("ansible.task.attempts", h.attempts+1))
	}
	if h.items > 0 {
		h.span.SetAttributes(attribute.Int("ansible.task.items", h.items))
	}
	h.span.End(trace.WithTimestamp(adapter.Later(t, h.start)))
	task := h.task
	task.openHosts--
	if t.After(task.lastSeen) {
		task.lastSeen = t
	}
	if task.superseded && task.openHosts == 0 {
		d.endTask(task)
		task.play.open = compact(task.play.open)
	}
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
// recap count, the span's status, and the end of the host span at
// Ansible's end time for the host.
func (d *decoder) hostResult(t time.Time, e *jobEvent) {
	key, h := d.host(t, e)
	res := decodeResult(e.Data.Res)
	ignored := bool(e.Data.IgnoreErrors)
	count := d.countFor(e.Data.Host)
	var (
		typ    string
		sev    = log.SeverityInfo
		status string
		tr     taskResult
	)
	switch e.Event {
	case "runner_on_ok":
		typ, tr = TypeTaskCompletedOnHost, res.reduce(false, false, 0)
		status = "ok"
		if !isInclude(e.Data.TaskAction) {
			count.OK++
			if tr.Changed {
				count.Changed++
				status = "changed"
			}
		}
	case "runner_on_failed":
		typ, tr = TypeTaskFailedOnHost, res.reduce(true, false, 0)
		if ignored {
			sev, status = log.SeverityWarn, "ignored"
			count.OK++
			count.Ignored++
			if tr.Changed {
				count.Changed++
			}
		} else {
			sev, status = log.SeverityError, "failed"
			count.Failures++
		}
	case "runner_on_skipped":
		typ, tr = TypeTaskSkippedOnHost, res.reduce(false, true, 0)
		status = "skipped"
		count.Skipped++
	case "runner_on_unreachable":
		typ, tr = TypeHostUnreachable, res.reduce(true, false, 0)
		sev, status = log.SeverityError, "unreachable"
		count.Unreachable++
	}
	if typ == TypeHostUnreachable {
		d.record(h.ctx, t, sev, typ, hostEventDetails{
			TaskName: h.task.name, HostName: h.name, DelegatedHostName: res.delegatedHost(), TaskResult: tr,
		})
	} else {
		d.record(h.ctx, t, sev, typ, hostResultDetails{
			TaskName: h.task.name, HostName: h.name, DelegatedHostName: res.delegatedHost(),
			TaskResult: tr, Ignored: typ == TypeTaskFailedOnHost && ignored,
		})
	}
	h.span.SetAttributes(attribute.String("ansible.host.status", status))
	h.task.tally.add(status)
	if dh, ok := res.delegatedHost().(string); ok {
		h.span.SetAttributes(attribute.String("ansible.delegated_host", dh))
	}
	if status == "failed" || status == "unreachable" {
		h.span.SetStatus(codes.Error, status)
		h.task.failed++
	}
	end := parseTime(e.Data.End)
	if end.IsZero() {
		end = t
	}
	d.endHost(key, h, end)
}

// itemResult records one loop item in the host span; the task's final
// result follows as its own event.
func (d *decoder) itemResult(t time.Time, e *jobEvent) {
	_, h := d.host(t, e)
	res := decodeResult(e.Data.Res)
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
	d.record(h.ctx, t, sev, typ, hostResultDetails{
		TaskName: h.task.name, ItemLabel: res.itemLabel(), HostName: h.name,
		DelegatedHostName: res.delegatedHost(), TaskResult: tr,
	})
}

func (d *decoder) retry(t time.Time, e *jobEvent) {
	_, h := d.host(t, e)
	res := decodeResult(e.Data.Res)
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

// endStats takes Ansible's recap and records PlaybookResult.
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

// outcome is how a run ended, as Run or Stream saw it.
type outcome struct {
	start  time.Time // when the run started (Run); used when no event came
	end    time.Time // when the run ended; zero: the last event's time
	rc     int       // -1: none (Stream)
	err    error     // the run's own failure (cancelled, prompt, playbook error)
	code   string    // failure code for err
	reason string    // user-safe description for err
	always bool      // report the operation even when no event came
}

// finish ends every open span, rebuilds the PlaybookResult if the stats
// event never came, records the operation's end and returns the Result.
func (d *decoder) finish(o outcome) Result {
	res := Result{
		ExitCode: o.rc, Start: d.first, End: d.last,
		Events: d.events, SkippedLines: d.skipped, Warnings: d.warnings,
	}
	switch {
	case d.pbStarted:
	case d.events > 0: // only events the mapping does not use
		d.startPlaybook(d.first, "")
	case o.always:
		start := o.start
		if start.IsZero() {
			start = time.Now().UTC()
		}
		d.startPlaybook(start, "")
		d.first = start
	default:
		return res
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
	d.markStopped(o)
	d.endAll(end)
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
	}
	if o.rc >= 0 {
		d.pb.Span.SetAttributes(attribute.Int("ansible.rc", o.rc))
	}
	if code != "" {
		d.pb.FailAs(runResult(o), d.first, end, code, reason, nil)
	} else {
		d.pb.Complete(d.first, end)
	}
	return res
}

// endAll ends every span still open below the playbook span: those of
// the play in progress, and any that events after the recap opened.
func (d *decoder) endAll(t time.Time) {
	d.endPlay(t)
	for k, h := range d.hosts {
		d.endHost(k, h, t)
	}
	for _, task := range d.tasks {
		if !task.ended {
			d.endTask(task)
		}
	}
}
