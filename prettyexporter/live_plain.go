package prettyexporter

import (
	"cmp"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// Plain mode, for output that is not a terminal (CI logs, pipes, TERM=dumb): the pretty format's
// lines, with the resource, trace and transaction moved into a header line per operation, progress
// lines throttled, and a heartbeat for long steps.

const (
	// plainProgressStep and plainProgressEvery throttle common/Progress lines: one is printed when
	// it moved this many percent since the last one printed, or this long after it (the latest
	// value held back, so it is never lost); the first and the last always are.
	plainProgressStep  = 5
	plainProgressEvery = 5 * time.Second
	// plainHeartbeat is how long an operation may print nothing before a "still running" line says
	// what it is waiting for.
	plainHeartbeat = 30 * time.Second
)

// plainState is a tree's plain-mode bookkeeping.
type plainState struct {
	last       time.Time // wall time of its last line
	printed    bool      // a progress line was printed
	pct        int64     // its percent, -1 when the total is unknown
	progAt     time.Time // and when
	pending    []byte    // the latest progress line held back by the throttle
	pendingPct int64
}

// printPlain prints one record of tree t as a plain line, under the tree's header when the previous
// line belonged to another operation.
func (m *liveModel) printPlain(t *liveTree, r *sdklog.Record, v *wireformat.View, wall time.Time) {
	ps := &t.plain
	if v.Kind == wireformat.KindEvent && v.Name == typeProgress {
		pct := int64(-1)
		if t.bar.total > 0 {
			pct = min(t.bar.done, t.bar.total) * 100 / t.bar.total
		}
		last := t.bar.total > 0 && t.bar.done >= t.bar.total
		if ps.printed && !last && wall.Sub(ps.progAt) < plainProgressEvery && (pct < 0 || max(pct-ps.pct, ps.pct-pct) < plainProgressStep) {
			ps.pending = m.p.bare.appendView(ps.pending[:0], r, v)
			ps.pendingPct = pct
			return
		}
		ps.printed, ps.pct, ps.progAt, ps.pending = true, pct, wall, ps.pending[:0]
	}
	if v.Name == typeOperationCompleted || v.Name == typeOperationFailed {
		m.flushProgress(t, wall)
	}
	m.plainHeader(t)
	m.p.record(r, v, true)
	ps.last = wall
}

// flushProgress prints the progress line the throttle held back.
func (m *liveModel) flushProgress(t *liveTree, wall time.Time) {
	ps := &t.plain
	if len(ps.pending) == 0 {
		return
	}
	m.plainHeader(t)
	m.p.line(ps.pending[:len(ps.pending)-1])
	ps.pct, ps.progAt, ps.last, ps.pending = ps.pendingPct, wall, wall, ps.pending[:0]
}

// plainHeader prints t's header line (no status and time) unless the last line was t's.
func (m *liveModel) plainHeader(t *liveTree) {
	if m.lastHeader != t {
		m.headerText(&m.scratch.row, t, m.p.color, true)
		m.printRow(&m.scratch.row)
		m.lastHeader = t
	}
}

// plainTick runs about once a second in plain mode: it prints the progress lines that are due and
// the heartbeats.
func (m *liveModel) plainTick(wall time.Time) {
	for _, t := range m.list {
		ps := &t.plain
		if len(ps.pending) > 0 && wall.Sub(ps.progAt) >= plainProgressEvery {
			m.flushProgress(t, wall)
		}
		if t.status == stRunning && !ps.last.IsZero() && wall.Sub(ps.last) >= plainHeartbeat {
			m.heartbeat(t, wall)
			ps.last = wall
		}
	}
}

// heartbeat prints "still running [45s]" for what t is waiting for: the part that started last
// among those still running, else the operation itself.
func (m *liveModel) heartbeat(t *liveTree, wall time.Time) {
	label, start := cmp.Or(t.op, t.title), t.start
	if step := latestRunning(&t.root, nil); step != nil {
		label, start = step.label, step.start
	}
	now := t.clock(wall)
	m.plainHeader(t)
	e, b := m.p.bare, m.p.buf[:0]
	if !e.noTime {
		b = append(e.marked(b, sgrDim, now.Local().Format(e.layout)), ' ')
	}
	b = append(e.marked(b, sgrGreen, "INF"), ' ')
	b = append(append(b, label...), ": still running ["...)
	b = append(appendDuration(b, now.Sub(start), true), ']')
	m.p.buf = b
	m.p.line(b)
}

// latestRunning is the running span below n that started last.
func latestRunning(n, best *liveNode) *liveNode {
	for k := n.first; k != nil; k = k.next {
		if k.kind == kindSpan && k.status == stRunning && (best == nil || !k.start.Before(best.start)) {
			best = k
		}
		best = latestRunning(k, best)
	}
	return best
}
