package ansible

import (
	"slices"
	"time"

	"go.opentelemetry.io/otel/log"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// A task that fails on a host inside a block with a rescue section is
// rescued: Ansible's recap counts it in rescued, not in failures, and the
// run goes on. Its runner_on_failed event looks exactly like that of a
// failure that counts, so the adapter holds the failure (the event, the
// host span, and so its task and play) until Ansible shows which it was:
//
//   - the host does not start the next task that other hosts run (linear
//     strategy): it was dropped, the failure counts (byTask);
//   - the host runs a task that a host which passed the failed task does
//     not run: a rescue section, which only failed hosts run (byTask);
//   - the host starts a task of a later play: failed hosts never do, so it
//     was rescued (continued);
//   - the recap: its rescued count per host settles the rest (settle);
//   - the run ends without a recap: the failure counts.
//
// A host that goes on after its failure inside the same play (its rescue
// or always section) keeps it pending until one of these. The rules can
// err only where Ansible runs a task on some hosts by design: a rescued
// host left out of a run_once task looks dropped, and a failed host
// chosen for a run_once task, or whose peer end_host ended, looks
// rescued. The failure is
// then recorded with its own time: TaskFailedOnHost at ERROR, or at WARN
// with rescued: true.

// heldEvent is a TaskFailedOnHost waiting to be recorded.
type heldEvent struct {
	t       time.Time
	details hostResultDetails
}

// hold keeps host h's failure pending; end is Ansible's end time for it.
func (d *decoder) hold(h *hostState, t, end time.Time, details hostResultDetails) {
	delete(d.hosts, hostKey{task: h.task, host: h.name})
	h.failure, h.failedAt = &heldEvent{t: t, details: details}, end
	h.task.play.held++
	d.pending = append(d.pending, h)
}

// resolve records h's pending failure as rescued or not, ends its span,
// and the play it held, if that has ended meanwhile.
func (d *decoder) resolve(h *hostState, rescued bool) {
	d.pending = slices.DeleteFunc(d.pending, func(x *hostState) bool { return x == h })
	ev := h.failure
	h.failure = nil
	count := d.countFor(h.name)
	sev, how := log.SeverityError, outcome.Failed
	if rescued {
		sev, how = log.SeverityWarn, outcome.Rescued
		count.Rescued++
	} else {
		count.Failures++
	}
	d.flushItems(h, false, rescued)
	ev.details.Rescued = rescued
	d.record(h.ctx, ev.t, sev, TypeTaskFailedOnHost, ev.details)
	p := h.task.play
	if !rescued {
		p.leave(h.name)
	}
	d.endHost(h, h.failedAt, how)
	p.held--
	if p.held == 0 && p != d.play && !p.endAt.IsZero() && !p.ended {
		d.endTasks(p)
		d.endPlaySpan(p)
		d.held = slices.DeleteFunc(d.held, func(x *playState) bool { return x == p })
	}
}

// byTask settles, when a task of play p starts, the failures that the
// task before it shows, if it started after them (the linear strategy:
// it is done on every host). A failed host that did not run it was
// dropped by Ansible: the failure counts. A failed host that ran it while
// a host that passed the failed task did not ran a rescue section, which
// only failed hosts run: it was rescued. Handlers and meta tasks run on
// some hosts only, and under the free strategy hosts are at different
// tasks: they say nothing.
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
	for host := range failed.hosts {
		if !prev.hosts[host] && !failed.play.gone[host] && !d.isPending(host, failed.play) {
			return true
		}
	}
	return false
}

func (d *decoder) isPending(host string, p *playState) bool {
	return slices.ContainsFunc(d.pending, func(h *hostState) bool { return h.name == host && h.task.play == p })
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
		rescued := budget[h.name] > 0
		if rescued {
			budget[h.name]--
		}
		d.resolve(h, rescued)
	}
}
