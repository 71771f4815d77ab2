package prettyexporter

import (
	"cmp"
	"time"

	"github.com/progressotel/progressotel/tncomessage"
)

// Plain mode, for output that is not a terminal (CI logs, pipes, TERM=dumb): the pretty format's
// lines, with the resource, trace and transaction moved into a header line per operation, progress
// lines throttled, and a heartbeat for long steps. The renderer draws them from the model's notes
// (every record of an operation is one, liveModel.lines) and, once a second, a snapshot.

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

func (r *liveRenderer) plainState(id uint64) *plainState {
	ps := r.plains[id]
	if ps == nil {
		ps = &plainState{}
		r.plains[id] = ps
	}
	return ps
}

// printPlain prints one record of an operation as a plain line, under the tree's header when the
// previous line belonged to another operation.
func (r *liveRenderer) printPlain(n *liveNote) {
	if !r.plain {
		return
	}
	t, wall := &n.tree, n.wall
	ps := r.plainState(t.id)
	v := tncomessage.GetView()
	defer tncomessage.PutView(v)
	v.Load(n.rec)
	if v.Kind == tncomessage.KindEvent && v.Name == typeProgress {
		pct := int64(-1)
		if t.bar.total > 0 {
			pct = min(t.bar.done, t.bar.total) * 100 / t.bar.total
		}
		last := t.bar.total > 0 && t.bar.done >= t.bar.total
		if ps.printed && !last && wall.Sub(ps.progAt) < plainProgressEvery && (pct < 0 || max(pct-ps.pct, ps.pct-pct) < plainProgressStep) {
			ps.pending = r.p.bare.appendView(ps.pending[:0], n.rec, v)
			ps.pendingPct = pct
			return
		}
		ps.printed, ps.pct, ps.progAt, ps.pending = true, pct, wall, ps.pending[:0]
	}
	if v.Name == typeOperationCompleted || v.Name == typeOperationFailed {
		r.flushProgress(t, ps, wall)
	}
	r.plainHeader(t)
	r.p.buf = r.p.bare.appendView(r.p.buf[:0], n.rec, v)
	r.p.line(r.p.buf[:len(r.p.buf)-1])
	ps.last = wall
}

// flushProgress prints the progress line the throttle held back.
func (r *liveRenderer) flushProgress(t *snapTree, ps *plainState, wall time.Time) {
	if len(ps.pending) == 0 {
		return
	}
	r.plainHeader(t)
	r.p.line(ps.pending[:len(ps.pending)-1])
	ps.pct, ps.progAt, ps.last, ps.pending = ps.pendingPct, wall, wall, ps.pending[:0]
}

// plainHeader prints t's header line (no status and time) unless the last line was t's.
func (r *liveRenderer) plainHeader(t *snapTree) {
	if r.lastHeader != t.id {
		r.headerText(&r.row, t, r.p.color, true)
		r.printRow(&r.row)
		r.header(t.id)
	}
}

// plainTick runs about once a second in plain mode, on a snapshot: it prints the progress lines
// that are due and the heartbeats.
func (r *liveRenderer) plainTick(s *liveSnap, wall time.Time) {
	for i := range s.trees {
		t := &s.trees[i]
		ps := r.plains[t.id]
		if ps == nil {
			continue
		}
		if len(ps.pending) > 0 && wall.Sub(ps.progAt) >= plainProgressEvery {
			r.flushProgress(t, ps, wall)
		}
		if t.status == stRunning && !ps.last.IsZero() && wall.Sub(ps.last) >= plainHeartbeat {
			r.heartbeat(t, s.nodes[t.lo:t.hi], wall)
			ps.last = wall
		}
	}
}

// heartbeat prints "still running [45s]" for what t is waiting for: the part that started last
// among those still running, else the operation itself.
func (r *liveRenderer) heartbeat(t *snapTree, rows []snapNode, wall time.Time) {
	label, start := cmp.Or(t.op, t.title), t.start
	if step := latestRunning(rows); step != nil {
		label, start = step.label, step.start
	}
	now := t.clock(wall)
	r.plainHeader(t)
	e, b := r.p.bare, r.p.buf[:0]
	if !e.noTime {
		b = append(e.marked(b, sgrDim, now.Local().Format(e.layout)), ' ')
	}
	b = append(e.marked(b, sgrGreen, "INF"), ' ')
	b = append(append(b, label...), ": still running ["...)
	b = append(appendDuration(b, now.Sub(start), true), ']')
	r.p.buf = b
	r.p.line(b)
}

// latestRunning is the running span among rows that started last.
func latestRunning(rows []snapNode) (best *snapNode) {
	for i := range rows {
		if k := &rows[i]; k.kind == kindSpan && k.status == stRunning && (best == nil || !k.start.Before(best.start)) {
			best = k
		}
	}
	return best
}
