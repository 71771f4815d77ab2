package prettyexporter

import (
	"encoding/hex"
	"slices"
	"strconv"
	"time"
)

// liveFrame is the rows of one frame of the live area, in one buffer.
type liveFrame struct {
	b    []byte
	ends []int
}

func (f *liveFrame) reset() { f.b, f.ends = f.b[:0], f.ends[:0] }

func (f *liveFrame) Len() int { return len(f.ends) }

// Row returns row i, SGR sequences included, without a newline.
func (f *liveFrame) Row(i int) []byte {
	start := 0
	if i > 0 {
		start = f.ends[i-1]
	}
	return f.b[start:f.ends[i]]
}

// add appends r as a row, cut to width.
func (f *liveFrame) add(r *liveRow, width int) {
	f.b = r.appendTo(f.b, width, true)
	f.ends = append(f.ends, len(f.b))
}

// frame renders the live area of snapshot s at wall time now for a terminal of width columns and
// height rows: at most height-1 rows (the cursor keeps the row below them), each narrower than
// width, as DESIGN.md's "When the trees do not fit" says. It is a pure function of the snapshot.
func (r *liveRenderer) frame(f *liveFrame, s *liveSnap, now time.Time, width, height int, color bool) {
	f.reset()
	budget, n := height-1, len(s.trees)
	if budget < 1 || width < 8 || n == 0 {
		return
	}
	if n > budget {
		shown := budget - 1
		f.add(r.textRow(0, sgrDim, "… "+strconv.Itoa(n-shown)+" more operations", color), width)
		for i := n - shown; i < n; i++ {
			r.headerRow(&r.row, &s.trees[i], now, color)
			f.add(&r.row, width)
		}
		return
	}
	r.grant = slices.Grow(r.grant[:0], n)[:n]
	left := budget - n
	for i := n - 1; i >= 0; i-- {
		t := &s.trees[i]
		want := t.hi - t.lo
		if t.bar.ok {
			want++
		}
		if t.hidden > 0 {
			want++
		}
		g := min(want, left)
		r.grant[i], left = 1+g, left-g
	}
	for i := range s.trees {
		r.treeRows(f, &s.trees[i], s.nodes[s.trees[i].lo:s.trees[i].hi], now, width, r.grant[i], color)
	}
}

// treeRows renders one tree, whose rows are c, in at most limit rows.
func (r *liveRenderer) treeRows(f *liveFrame, t *snapTree, c []snapNode, now time.Time, width, limit int, color bool) {
	r.headerRow(&r.row, t, now, color)
	f.add(&r.row, width)
	avail := limit - 1
	if t.bar.ok && avail > 0 {
		r.barRow(&r.row, t, width, color)
		f.add(&r.row, width)
		avail--
	}
	if avail <= 0 {
		return
	}
	fits := len(c) <= avail && (t.hidden == 0 || len(c) < avail)
	selected := len(c)
	mark := r.marks[:0]
	if !fits {
		mark = slices.Grow(mark, len(c))[:len(c)]
		clear(mark)
		selected = 0
		capacity := avail - 1 // the "… N more" row
		for rank := 0; rank <= maxRank && selected < capacity; rank++ {
			for i := range c {
				if mark[i] || ranks[c[i].status] != rank {
					continue
				}
				k := 1
				for a := c[i].parent; a >= 0 && !mark[a]; a = c[a].parent {
					k++
				}
				if selected+k > capacity {
					continue
				}
				for a := i; a >= 0 && !mark[a]; a = c[a].parent {
					mark[a] = true
				}
				selected += k
			}
		}
	}
	r.marks = mark
	for i := range c {
		if fits || mark[i] {
			r.nodeRow(&r.row, &c[i], &t.liveHead, c[i].depth, now, color, false)
			f.add(&r.row, width)
		}
	}
	if more := len(c) - selected + t.hidden; more > 0 {
		f.add(r.textRow(2, sgrDim, "… "+strconv.Itoa(more)+" more", color), width)
	}
}

// ranks order what a short terminal shows first: what runs now, then what failed, what changed,
// what is still to come.
var ranks = [numStatus]int{
	stRunning: 0, stFailed: 1, stUnreachable: 1, stCancelled: 1, stTimeout: 1, stIgnored: 2, stRescued: 2,
	stChanged: 3, stPending: 4, stSkipped: maxRank, stOK: maxRank,
}

const maxRank = 5

// headerRow is a tree's header with its status and elapsed time.
func (r *liveRenderer) headerRow(row *liveRow, t *snapTree, now time.Time, color bool) {
	code := r.headerText(row, t, color, true)
	var b []byte
	switch {
	case t.conditionsOnly() && t.status != stRunning:
		// A resource's conditions: no operation that ended, only its last conditions.
		b = strconv.AppendInt(b, int64(t.changes), 10)
		b = append(b, " transition"...)
		if t.changes > 1 {
			b = append(b, 's')
		}
	case t.status == stRunning:
		if t.op != "" {
			b = append(b, "running "...)
		}
		b = appendDuration(b, t.clock(now).Sub(t.start), true)
	case t.status == stFailed:
		b = appendDuration(append(b, "failed "...), t.end.Sub(t.start), false)
	default:
		b = appendDuration(append(b, "done "...), t.end.Sub(t.start), false)
	}
	row.setRight(code, string(b))
}

// headerText starts a tree's header row: its status glyph (not on the line heading collapsed lines
// above the live area, where it would go stale), operation, resource, trace id and transaction id.
// It returns the status's colour.
func (r *liveRenderer) headerText(row *liveRow, t *snapTree, color, glyph bool) string {
	row.reset(color)
	l := looks[t.shown]
	if glyph {
		row.add(l.code, l.glyph)
		row.space(1)
	}
	row.add(sgrBold, t.name())
	if t.op != "" && t.resource != "" {
		row.space(2)
		row.add("", t.resource)
	}
	if tid := t.key.trace; tid.IsValid() {
		var buf [8]byte
		hex.Encode(buf[:], tid[:4])
		row.space(2)
		row.add(sgrDim, "trace ")
		row.add("", string(buf[:]))
	}
	if t.tx != "" {
		row.space(2)
		row.add(sgrDim, "tx=")
		row.add("", t.tx)
	}
	return l.code
}

func barText(t *snapTree) string {
	b := strconv.AppendInt(nil, t.bar.done, 10)
	if t.bar.total > 0 {
		b = strconv.AppendInt(append(b, '/'), t.bar.total, 10)
	}
	if t.bar.unit != "" {
		b = append(append(b, ' '), t.bar.unit...)
	}
	return string(b)
}

// barRow is the N-of-M bar of common/Progress.
func (r *liveRenderer) barRow(row *liveRow, t *snapTree, width int, color bool) {
	row.reset(color)
	row.space(2)
	if t.bar.total > 0 {
		if cells := min(24, (width-30)/2); cells >= 4 {
			done := int(min(t.bar.done, t.bar.total) * int64(cells) / t.bar.total)
			for range done {
				row.add(sgrGreen, barDone)
			}
			for range cells - done {
				row.add(sgrDim, barLeft)
			}
			row.space(2)
		}
	}
	row.add("", barText(t))
	if t.bar.total > 0 {
		pct := min(t.bar.done, t.bar.total) * 100 / t.bar.total
		row.space(2)
		row.add(sgrDim, strconv.FormatInt(pct, 10)+"%")
	}
}

// nodeRow is one part of tree t: glyph, name, what happened, message, duration. header keeps only
// the name, for the line that heads collapsed lines above the live area (a status would go stale).
func (r *liveRenderer) nodeRow(row *liveRow, n *snapNode, t *liveHead, depth int, now time.Time, color, header bool) {
	row.reset(color)
	row.space(2 * depth)
	l := looks[n.status]
	if !header {
		row.add(l.code, l.glyph)
		row.space(1)
	}
	switch {
	case depth == 1 && n.grouped:
		row.add(sgrBold, n.label)
	case n.status == stPending:
		row.add(sgrDim, n.label)
	default:
		row.add("", n.label)
	}
	if header {
		return
	}
	event := n.kind == kindStream || n.kind == kindEvent
	switch {
	case event:
	case n.grouped:
		// A part's own outcome where its children do not say it: a create
		// that ran a provisioner changed something, its provisioner is ok.
		if w := statusWords[n.status]; w != "" && n.counts[n.status] == 0 {
			row.space(2)
			row.add(l.code, w)
		}
		appendCounts(row, &n.counts)
	case statusWords[n.status] != "":
		row.space(2)
		row.add(l.code, statusWords[n.status])
	}
	if n.msg != "" {
		row.space(2)
		if n.status >= stRescued {
			row.add("", n.msg)
		} else {
			row.add(sgrDim, n.msg)
		}
	}
	if n.changes > 2 {
		// The history the row does not show (it shows the last transition), folded.
		row.space(2)
		row.add(sgrDim, "("+strconv.Itoa(int(n.changes))+" transitions)")
	}
	var b []byte
	switch {
	case n.status == stPending:
	case event:
		if t.status == stRunning {
			b = append(appendDuration(b, t.clock(now).Sub(n.start), true), " ago"...)
		}
	case n.status == stRunning:
		b = appendDuration(b, t.clock(now).Sub(n.start), true)
	default:
		b = appendDuration(b, n.end.Sub(n.start), false)
	}
	row.setRight(sgrDim, string(b))
}

// appendCounts writes a row's finished children by status, most alarming first: "1 failed · 1 ok".
func appendCounts(row *liveRow, counts *[numStatus]int32) {
	sep := false
	for s := numStatus - 1; s >= stSkipped; s-- {
		if c := counts[s]; c > 0 {
			if sep {
				row.add(sgrDim, " · ")
			} else {
				row.space(2)
			}
			sep = true
			row.add(looks[s].code, strconv.Itoa(int(c))+" "+looks[s].count)
		}
	}
}
