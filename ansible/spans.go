package ansible

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
)

// The span tree below the playbook span: a play, its tasks, and a host span
// per task and host. Each kind's span ends in one function, which sets its
// outcome (progress.outcome) and its status: Error only for a failure that
// counts, an unreachable host, or a span cut short by the run's end or its
// time limit; a span the run's stop cut short is cancelled, without Error.

type playState struct {
	name, id string
	ctx      context.Context
	span     trace.Span
	start    time.Time
	endAt    time.Time             // set when the play ended; its span may wait for a held failure
	tasks    map[string]*taskState // by task uuid
	open     []*taskState          // tasks not ended, in start order
	last     *taskState            // the last task started
	free     bool                  // a task started again: the free strategy
	gone     map[string]bool       // hosts Ansible dropped from the play: failed or unreachable

	n     map[string]int // its tasks' outcomes
	ended bool           // its span has ended
}

type taskState struct {
	id, name, action, role string
	play                   *playState
	ctx                    context.Context // its span's, or its play's for a meta task without one
	span                   trace.Span      // nil for a meta task without host events
	start, lastSeen        time.Time
	handler, meta          bool
	hosts                  map[string]bool // the hosts that started it
	openHosts              int             // host spans open or held
	superseded             bool            // a later task of the play has started
	ended                  bool
	n                      map[string]int // host outcomes
}

type hostState struct {
	name     string
	task     *taskState
	ctx      context.Context
	span     trace.Span
	start    time.Time
	attempts int
	items    int

	failure     *heldEvent  // a failure waiting to be settled (failures.go)
	unknownEnd  time.Time   // the end of a result runner stripped, held for the recap (unknown.go)
	failedItems []heldEvent // failed loop items waiting for the task's result
}

// hostKey names a host's span: one per task and host.
type hostKey struct {
	task *taskState
	host string
}

// hostCut is the outcome of a host span that Ansible never reported an
// end for; decoder.cutHow says which outcome it takes (see endAll).
const hostCut = "cut"

// startPlay starts play name, id of Ansible's, from event e.
func (d *decoder) startPlay(t time.Time, e *jobEvent, name, id string) {
	d.startPlaybook(t, e.Data.Playbook)
	d.endPlay(t)
	p := &playState{name: name, id: id, start: t, tasks: map[string]*taskState{}, gone: map[string]bool{}, n: map[string]int{}}
	p.ctx, p.span = d.cfg.Tracer.Start(d.pb.Ctx, "play "+name, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attribute.String("ansible.play.name", name),
			attribute.String("ansible.play.id", id), attribute.String("ansible.play.pattern", e.Data.PlayPattern)))
	d.play = p
	d.res.Plays = append(d.res.Plays, Play{Name: name, ID: id})
	d.record(p.ctx, t, log.SeverityInfo, TypePlayStarted, playDetails{PlayName: name})
}

// currentPlay is the play in progress, or one made up from the event's
// play fields for a stream that starts in the middle of a play.
func (d *decoder) currentPlay(t time.Time, e *jobEvent) *playState {
	if d.play == nil || (e.Data.PlayUUID != "" && e.Data.PlayUUID != d.play.id) {
		d.startPlay(t, e, e.Data.Play, e.Data.PlayUUID)
	}
	return d.play
}

// endPlay ends the play in progress at t and every span still open in it,
// except those of a failure that may yet prove rescued (failures.go).
func (d *decoder) endPlay(t time.Time) {
	p := d.play
	if p == nil {
		return
	}
	d.play = nil
	for _, h := range d.openHosts() {
		d.endHost(h, t, hostCut)
	}
	d.endTasks(p)
	p.endAt = adapter.Later(t, p.start)
	d.dropped(p) // may end the play's span, with its last pending failure
	if !d.holds(p) {
		d.endPlaySpan(p)
	}
}

// endPlaySpan ends a play's span at p.endAt, with the outcome its tasks'
// give it (outcome.Of).
func (d *decoder) endPlaySpan(p *playState) {
	if p.ended {
		return
	}
	p.ended = true
	how := outcome.Of("", slices.Collect(maps.Keys(p.n))...)
	switch how {
	case outcome.Failed:
		p.span.SetStatus(codes.Error, "a task failed")
	case outcome.Unreachable:
		p.span.SetStatus(codes.Error, "a host was unreachable")
	case outcome.TimedOut:
		p.span.SetStatus(codes.Error, how)
	}
	d.plays = append(d.plays, how)
	p.span.SetAttributes(attribute.String(outcome.Key, how))
	p.span.End(trace.WithTimestamp(p.endAt))
}

// openHosts returns the open host spans, in start order. They are all of
// the play in progress: a host event opens its span in that play, and a
// play ends its spans when it ends.
func (d *decoder) openHosts() []*hostState {
	return slices.SortedFunc(maps.Values(d.hosts), func(a, b *hostState) int {
		return cmp.Or(a.start.Compare(b.start), strings.Compare(a.name, b.name))
	})
}

// newTask adds a task to p, from its start or a host event of it.
func (p *playState) newTask(id, name string, t time.Time, e *jobEvent) *taskState {
	task := &taskState{id: id, name: name, play: p, ctx: p.ctx, start: t, lastSeen: t,
		action: e.Data.TaskAction, role: e.Data.Role, hosts: map[string]bool{}}
	p.tasks[id] = task
	p.open = append(p.open, task)
	return task
}

// compact drops the ended tasks from p.open.
func (p *playState) compact() {
	p.open = slices.DeleteFunc(p.open, func(t *taskState) bool { return t.ended })
}

// task returns the task of a host event (a child of its task's start), or
// one made up from the event when its start was not seen. A meta task gets
// its span here.
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

// startTaskSpan starts a task's span as a task of the run (with the CI/CD
// conventions, cicd.pipeline.task.name replaces ansible.task.name).
func (d *decoder) startTaskSpan(task *taskState, spanName string) {
	attrs := []attribute.KeyValue{
		attribute.String("ansible.task.id", task.id),
		attribute.String("ansible.task.action", task.action),
	}
	if task.role != "" {
		attrs = append(attrs, attribute.String("ansible.task.role", task.role))
	}
	if task.handler {
		attrs = append(attrs, attribute.Bool("ansible.task.handler", true))
	}
	task.n = map[string]int{}
	task.ctx, task.span = d.pb.StartTask(task.play.ctx, task.start, adapter.Task{Name: task.name, ID: task.id,
		OldSpan: "task " + spanName, Old: []attribute.KeyValue{attribute.String("ansible.task.name", task.name)}}, attrs...)
}

// endTask ends a task whose hosts are done, if it is over: superseded by a
// later task (linear strategy) or its play ended (now). Its span ends at
// its last host's end with the outcome its hosts give it (outcome.Of).
func (d *decoder) endTask(task *taskState, now bool) {
	if task.ended || task.openHosts > 0 || !(now || task.superseded && !task.play.free) {
		return
	}
	task.ended = true
	if task.span == nil {
		return
	}
	n := task.n
	failed := n[outcome.Failed] + n[outcome.Unreachable]
	own, status := "", ""
	if !d.stoppedAt.IsZero() {
		// A task still open when the run was stopped was cut short too,
		// even if its hosts so far were done.
		own = d.cutHow
		if own == outcome.TimedOut {
			status = own
		}
		task.lastSeen = adapter.Later(d.stoppedAt, task.lastSeen)
	}
	var hosts []string
	for how, k := range n {
		if k > 0 {
			hosts = append(hosts, how)
		}
	}
	how := outcome.Of(own, hosts...)
	if failed == 1 {
		status = "failed on 1 host"
	} else if failed > 1 {
		status = fmt.Sprintf("failed on %d hosts", failed)
	}
	task.play.n[how]++
	task.span.SetAttributes(attribute.String(outcome.Key, how))
	d.pb.EndTask(task.span, adapter.Later(task.lastSeen, task.start), how, status)
}

// endTasks ends every task of play p that is not waiting for a host.
func (d *decoder) endTasks(p *playState) {
	for _, task := range p.open {
		d.endTask(task, true)
	}
	p.compact()
}

func (d *decoder) openHost(key hostKey, t time.Time) *hostState {
	task := key.task
	h := &hostState{name: key.host, task: task, start: t}
	h.ctx, h.span = d.cfg.Tracer.Start(task.ctx, "host "+h.name, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			attribute.String("ansible.host.name", h.name), attribute.String("ansible.task.name", task.name)))
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
	// Never before its task: the result of a meta task (end_host under a
	// when) carries the start of the host's previous task.
	return d.openHost(key, adapter.Later(start, task.start))
}

// endHost ends a host's span at end with its outcome (or hostCut), counts
// it in its task, and ends the task if that is over.
func (d *decoder) endHost(h *hostState, end time.Time, how string) {
	delete(d.hosts, hostKey{task: h.task, host: h.name})
	end = adapter.Later(end, h.start)
	desc := ""
	switch how {
	case hostCut:
		how, desc = d.cutHow, "Ansible reported no end"
		switch how {
		case outcome.TimedOut:
			desc = how // the run's time limit passed
		case outcome.Cancelled:
			desc = "" // stopped, not failed: no error of its own
		}
	case outcome.Failed, outcome.Unreachable:
		desc = how
	}
	if h.attempts > 0 {
		h.span.SetAttributes(attribute.Int("ansible.task.attempts", h.attempts+1))
	}
	if h.items > 0 {
		h.span.SetAttributes(attribute.Int("ansible.task.items", h.items))
	}
	h.span.SetAttributes(attribute.String("ansible.host.status", how), attribute.String(outcome.Key, how))
	if desc != "" {
		h.span.SetStatus(codes.Error, desc)
	}
	h.span.End(trace.WithTimestamp(end))
	task := h.task
	task.n[how]++
	task.openHosts--
	task.lastSeen = adapter.Later(task.lastSeen, end)
	d.endTask(task, false)
}
