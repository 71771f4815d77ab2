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
//   - the host runs a task that a host which passed the failed task does
//     not run: a rescue section, which only failed hosts run (byTask);
//   - the host runs a task after its failure (an always section, which the
//     other hosts run too), then does not start the next task that other
//     hosts run: it was dropped, the failure counts (byTask);
//   - the host starts a task of a later play, which a failed host never
//     does: rescued (continued);
//   - the play ends and the host ran nothing after its failure: it had no
//     rescue (which runs within the play), the failure counts (dropped);
//   - the recap's rescued count per host settles the rest (settle); a run
//     without a recap keeps them as failures.
//
// A failed host that merely does not start the next task proves nothing:
// under the linear strategy a host whose block has a rescue section waits
// while the other hosts run the rest of the block, and only then runs its
// rescue tasks (Ansible runs the play's tasks in their order); a host
// whose failure counts waits in the same way, for ever. So such a failure
// is settled when the play ends, with its own time.
//
// The rules err only where Ansible runs a task on some hosts by design: a
// rescued host left out of a run_once task after it ran its rescue looks
// dropped; a failed host chosen for a run_once task, or whose peer
// end_host ended, looks rescued. The failure is then recorded with its own
// time: TaskFailedOnHost at ERROR, or at WARN with rescued: true.
//
// An unreachable host is held the same way (an unreachable result under
// ignore_unreachable is counted ignored, and runner's event does not say
// so): it is ignored once the host starts a later task, unreachable once
// the other hosts start a task it does not (Ansible drops an unreachable
// host at once), else as the recap says.

// heldEvent is a TaskFailedOnHost (or HostUnreachable) waiting to be
// recorded.
type heldEvent struct {
	t, end      time.Time // end: Ansible's end time of a host's failure
	details     hostResultDetails
	unreachable bool // runner_on_unreachable: ignored (ignore_unreachable) or unreachable
	resumed     bool // the host started a task of the play after the failure
}

// hold keeps host h's failure pending; end is Ansible's end time for it.
func (d *decoder) hold(h *hostState, t, end time.Time, details hostResultDetails, unreachable bool) {
	delete(d.hosts, hostKey{task: h.task, host: h.name})
	h.failure = &heldEvent{t: t, end: end, details: details, unreachable: unreachable}
	d.pending = append(d.pending, h)
}

// resolve records h's pending failure as spared (rescued; ignored for an
// unreachable host) or counted, ends its span, and the play it held, if
// that has ended meanwhile (only the play in progress can hold a new
// failure).
func (d *decoder) resolve(h *hostState, spared bool) {
	d.pending = slices.DeleteFunc(d.pending, func(x *hostState) bool { return x == h })
	ev, p, count := h.failure, h.task.play, d.countFor(h.name)
	h.failure = nil
	if ev.unreachable {
		sev, how := log.SeverityWarn, outcome.Ignored
		if spared {
			count.OK++
			count.Ignored++
		} else {
			sev, how = log.SeverityError, outcome.Unreachable
			count.Unreachable++
			p.gone[h.name] = true
		}
		det := ev.details.event()
		det.Ignored = spared
		d.record(h.ctx, ev.t, sev, TypeHostUnreachable, det)
		d.endHost(h, ev.end, how)
	} else {
		sev, how := log.SeverityWarn, outcome.Rescued
		if spared {
			count.Rescued++
		} else {
			sev, how = log.SeverityError, outcome.Failed
			count.Failures++
			p.gone[h.name] = true
		}
		d.flushItems(h, false, spared)
		ev.details.Rescued = spared
		d.record(h.ctx, ev.t, sev, TypeTaskFailedOnHost, ev.details)
		d.endHost(h, ev.end, how)
	}
	if p != d.play && !d.holds(p) {
		d.endTasks(p)
		d.endPlaySpan(p)
	}
}

// holds reports whether a failure of play p, or a result of it that
// runner stripped, is pending.
func (d *decoder) holds(p *playState) bool {
	of := func(h *hostState) bool { return h.task.play == p }
	return slices.ContainsFunc(d.pending, of) || slices.ContainsFunc(d.unknown, of)
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
		switch f := h.failure; {
		case f == nil || f.unreachable || h.task.play != p || !prev.start.After(f.t):
		case !prev.hosts[h.name] && f.resumed:
			d.resolve(h, false)
		case prev.hosts[h.name] && d.passedAndLeftOut(h.task, prev):
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

// continued notes that host starts task in play p: its pending failures in
// earlier plays were rescued (Ansible runs no later play on a host whose
// failure counts), an unreachable result of p was ignored (Ansible drops an
// unreachable host at once), and a failure of p goes on to its always or
// rescue tasks (resumed).
func (d *decoder) continued(task *taskState, host string) {
	for _, h := range slices.Clone(d.pending) {
		switch {
		case h.name != host || h.task == task:
		case h.task.play != task.play || h.failure.unreachable:
			d.resolve(h, true)
		default:
			h.failure.resumed = true
		}
	}
}

// dropped settles, when play p ends, the failures of p whose host ran
// nothing after them: a rescue would have run within the play, so they
// count. One whose host went on (rescue or always tasks) waits for a later
// play or the recap; so does an unreachable result (an ignored one may
// show in a later play).
func (d *decoder) dropped(p *playState) {
	for _, h := range slices.Clone(d.pending) {
		if f := h.failure; h.task.play == p && !f.unreachable && !f.resumed {
			d.resolve(h, false)
		}
	}
}

// settle resolves every pending failure: with Ansible's recap (stats), as
// many of each host's as it counts rescued (ignored, for an unreachable
// result), in order, the others as counted; without one (nil), all as
// counted.
func (d *decoder) settle(stats map[string]HostStats) {
	rescued, ignored, changed := map[string]int{}, map[string]int{}, map[string]int{}
	for host, s := range stats {
		rescued[host] = s.Rescued - d.countFor(host).Rescued
		ignored[host] = s.Ignored - d.countFor(host).Ignored
		changed[host] = s.Changed - d.countFor(host).Changed
	}
	for _, h := range slices.Clone(d.unknown) {
		changed[h.name]--
		d.resolveUnknown(h, stats != nil && changed[h.name] >= 0)
	}
	for _, h := range slices.Clone(d.pending) {
		budget := rescued
		if h.failure.unreachable {
			budget = ignored
		}
		budget[h.name]--
		d.resolve(h, budget[h.name] >= 0)
	}
}
