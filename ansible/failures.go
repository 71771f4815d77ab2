package ansible

import (
	"slices"
	"time"

	"go.opentelemetry.io/otel/log"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// A failure that a block's rescue section takes is counted rescued, not
// failed, but its runner_on_failed event looks exactly like that of one
// that counts. So the failure (its event, host span, and so its task and
// play) is held until Ansible shows which it was:
//
//   - the host does not start the next task that other hosts run (linear
//     strategy): it was dropped, the failure counts (byTask);
//   - the host runs a task that a host which passed the failed task does
//     not run: a rescue section, which only failed hosts run (byTask);
//   - the host starts a task of a later play, which a failed host never
//     does: rescued (continued);
//   - the recap's rescued count per host settles the rest (settle); a run
//     without a recap keeps them as failures.
//
// The rules err only where Ansible runs a task on some hosts by design: a
// rescued host left out of a run_once task looks dropped; a failed host
// chosen for a run_once task, or whose peer end_host ended, looks rescued.
// The failure is then recorded with its own time: TaskFailedOnHost at
// ERROR, or at WARN with rescued: true.

// heldEvent is a TaskFailedOnHost waiting to be recorded.
type heldEvent struct {
	t, end  time.Time // end: Ansible's end time of a host's failure
	details hostResultDetails
}

// hold keeps host h's failure pending; end is Ansible's end time for it.
func (d *decoder) hold(h *hostState, t, end time.Time, details hostResultDetails) {
	delete(d.hosts, hostKey{task: h.task, host: h.name})
	h.failure = &heldEvent{t: t, end: end, details: details}
	d.pending = append(d.pending, h)
}

// resolve records h's pending failure as rescued or not, ends its span,
// and the play it held, if that has ended meanwhile (only the play in
// progress can hold a new failure).
func (d *decoder) resolve(h *hostState, rescued bool) {
	d.pending = slices.DeleteFunc(d.pending, func(x *hostState) bool { return x == h })
	ev, p, count := h.failure, h.task.play, d.countFor(h.name)
	h.failure = nil
	sev, how := log.SeverityWarn, outcome.Rescued
	if rescued {
		count.Rescued++
	} else {
		sev, how = log.SeverityError, outcome.Failed
		count.Failures++
		p.gone[h.name] = true
	}
	d.flushItems(h, false, rescued)
	ev.details.Rescued = rescued
	d.record(h.ctx, ev.t, sev, TypeTaskFailedOnHost, ev.details)
	d.endHost(h, ev.end, how)
	if p != d.play && !d.holds(p) {
		d.endTasks(p)
		d.endPlaySpan(p)
	}
}

// holds reports whether a failure of play p is pending.
func (d *decoder) holds(p *playState) bool {
	return slices.ContainsFunc(d.pending, func(h *hostState) bool { return h.task.play == p })
}

// byTask settles, when a task of play p starts, the failures that the task
// before it shows, if it started after them (the linear strategy: it is
// done on every host). Handlers and meta tasks run on some hosts only, and
// under the free strategy hosts are at different tasks: they say nothing.
func (d *decoder) byTask(p *playState) {
	prev := p.last
	if prev == nil || prev.handler || prev.meta || len(prev.hosts) == 0 {
		return
	}
	for _, h := range slices.Clone(d.pending) {
		switch {
		case h.failure == nil || h.task.play != p || !prev.start.After(h.failure.t):
		case !prev.hosts[h.name]:
			d.resolve(h, false)
		case d.passedAndLeftOut(h.task, prev):
			d.resolve(h, true)
		}
	}
}

// passedAndLeftOut reports a host that ran the failed task without a
// failure that counts, is still in the play, and did not run task prev.
func (d *decoder) passedAndLeftOut(failed, prev *taskState) bool {
	p := failed.play
	for host := range failed.hosts {
		if !prev.hosts[host] && !p.gone[host] &&
			!slices.ContainsFunc(d.pending, func(h *hostState) bool { return h.name == host && h.task.play == p }) {
			return true
		}
	}
	return false
}

// continued settles the pending failures of host in earlier plays than p
// when it starts a task of p: Ansible runs no later play on a host whose
// failure counts, so it was rescued.
func (d *decoder) continued(p *playState, host string) {
	for _, h := range slices.Clone(d.pending) {
		if h.name == host && h.task.play != p {
			d.resolve(h, true)
		}
	}
}

// settle resolves every pending failure: with Ansible's recap (stats), as
// many of each host's as it counts rescued, in order, the others as
// failures; without one (nil), all as failures.
func (d *decoder) settle(stats map[string]HostStats) {
	budget := map[string]int{}
	for host, s := range stats {
		budget[host] = s.Rescued - d.countFor(host).Rescued
	}
	for _, h := range slices.Clone(d.pending) {
		budget[h.name]--
		d.resolve(h, budget[h.name] >= 0)
	}
}
