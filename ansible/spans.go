package ansible

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
)

// The span tree below the playbook span (adapter.Operation): a play, its
// tasks, and a host span per task and host. Each kind's span starts in
// one function and ends in one, which sets its outcome (progress.outcome,
// see package outcome) and its status: Error only for a failure that
// counts (not one ignored or rescued), an unreachable host, or a span cut
// short by the run's end.

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
	held     int                   // failures of the play still pending
	ended    bool                  // its span ended
	gone     map[string]bool       // hosts Ansible dropped from the play: failed or unreachable

	failed, stopped, changed int // over its tasks' hosts (stopped: cancelled or timeout)
}

// newTask adds a task to p, from its start or a host event of it.
func (p *playState) newTask(id, name string, t time.Time, e *jobEvent) *taskState {
	task := &taskState{id: id, name: name, play: p, start: t, lastSeen: t,
		action: e.Data.TaskAction, role: e.Data.Role, hosts: map[string]bool{}}
	if p.tasks == nil {
		p.tasks = map[string]*taskState{}
	}
	p.tasks[id] = task
	p.open = append(p.open, task)
	return task
}

// leave notes a host that Ansible dropped from the play.
func (p *playState) leave(host string) {
	if p.gone == nil {
		p.gone = map[string]bool{}
	}
	p.gone[host] = true
}

// compact drops the ended tasks from p.open.
func (p *playState) compact() {
	p.open = slices.DeleteFunc(p.open, func(t *taskState) bool { return t.ended })
}

type taskState struct {
	id, name, action, role string
	play                   *playState
	ctx                    context.Context
	span                   trace.Span // nil for a meta task without host events
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
	failedAt    time.Time   // Ansible's end time of that failure
	failedItems []heldEvent // failed loop items waiting for the task's result
}

func (d *decoder) startPlaySpan(t time.Time, name, id, pattern string) *playState {
	p := &playState{name: name, id: id, start: t}
	p.ctx, p.span = d.cfg.Tracer.Start(d.pb.Ctx, "play "+name, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("ansible.play.name", name),
			attribute.String("ansible.play.id", id),
			attribute.String("ansible.play.pattern", pattern)))
	return p
}

// endPlaySpan ends a play's span at p.endAt: failed when a host's failure
// counts in it, cancelled (or timeout) when the run was stopped in it.
func (d *decoder) endPlaySpan(p *playState) {
	p.ended = true
	how := outcome.OK
	switch {
	case p.stopped > 0:
		how = d.cutHow
		p.span.SetStatus(codes.Error, how)
	case p.failed > 0:
		how = outcome.Failed
		p.span.SetStatus(codes.Error, "a task failed")
	case p.changed > 0:
		how = outcome.Changed
	}
	p.span.SetAttributes(attribute.String(outcome.Key, how))
	p.span.End(trace.WithTimestamp(p.endAt))
}

// startTaskSpan starts a task's span through the kit's StartTask: a task
// of the run (cicd.pipeline.task.*, with the CI/CD conventions, whose
// cicd.pipeline.task.name replaces ansible.task.name).
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

// endTaskSpan ends a task's span at its last host's end, with the outcome
// of its hosts: the worst that counts first. The kit's EndTask maps the
// outcome to the task's result (cicd.pipeline.task.run.result).
func (d *decoder) endTaskSpan(task *taskState) {
	n := task.n
	failed := n[outcome.Failed] + n[outcome.Unreachable]
	how, status := outcome.OK, ""
	switch {
	case n[outcome.Failed] > 0:
		how = outcome.Failed
	case n[outcome.Unreachable] > 0:
		how = outcome.Unreachable
	case !d.stoppedAt.IsZero():
		// A task still open when the run was stopped was cut short too,
		// even if its hosts so far were done: it ends with the run,
		// cancelled or timeout (d.cutHow, as its cut hosts).
		how, status = d.cutHow, d.cutHow
		task.lastSeen = adapter.Later(d.stoppedAt, task.lastSeen)
		n[how] = max(n[how], 1)
	case n[outcome.Rescued] > 0:
		how = outcome.Rescued
	case n[outcome.Ignored] > 0:
		how = outcome.Ignored
	case n[outcome.Changed] > 0:
		how = outcome.Changed
	case n[outcome.Skipped] > 0 && n[outcome.OK] == 0:
		how = outcome.Skipped
	}
	if failed > 0 {
		host := "hosts"
		if failed == 1 {
			host = "host"
		}
		status = fmt.Sprintf("failed on %d %s", failed, host)
	}
	p := task.play
	p.failed += failed
	p.stopped += n[outcome.Cancelled] + n[outcome.TimedOut]
	p.changed += n[outcome.Changed]
	task.span.SetAttributes(attribute.String(outcome.Key, how))
	d.pb.EndTask(task.span, adapter.Later(task.lastSeen, task.start), how, status)
}

func (d *decoder) startHostSpan(h *hostState) {
	h.ctx, h.span = d.cfg.Tracer.Start(h.task.ctx, "host "+h.name, trace.WithTimestamp(h.start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
			attribute.String("ansible.host.name", h.name),
			attribute.String("ansible.task.name", h.task.name)))
}

// endHostSpan ends a host's span at end with how it ended (hostCut: the
// run's end cut it, see decoder.cutHow), and counts it in its task.
func (d *decoder) endHostSpan(h *hostState, end time.Time, how string) {
	desc := ""
	switch how {
	case hostCut:
		how, desc = d.cutHow, "Ansible reported no end"
		if how != outcome.Failed {
			desc = how // cancelled or timeout: the run was stopped
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
	h.task.n[how]++
}
