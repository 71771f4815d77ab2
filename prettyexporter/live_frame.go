package prettyexporter

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
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

// candidate is a node that a tree could show, at its depth.
type candidate struct {
	n     *liveNode
	depth int
}

// frameScratch is what frame reuses from one frame to the next.
type frameScratch struct {
	row     liveRow
	cands   []candidate
	grant   []int
	frameNo uint64
}

// frame renders the live area at wall time now for a terminal of width columns and height rows: at
// most height-1 rows (the cursor keeps the row below them), each narrower than width, as
// DESIGN.md's "When the trees do not fit" says. It is a pure function of the model.
func (m *liveModel) frame(f *liveFrame, now time.Time, width, height int, color bool) {
	f.reset()
	budget, n := height-1, len(m.list)
	if budget < 1 || width < 8 || n == 0 {
		return
	}
	s := &m.scratch
	s.frameNo++
	if n > budget {
		shown := budget - 1
		f.add(m.textRow(0, sgrDim, "… "+strconv.Itoa(n-shown)+" more operations", color), width)
		for _, t := range m.list[n-shown:] {
			m.headerRow(&s.row, t, now, color)
			f.add(&s.row, width)
		}
		return
	}
	s.grant = slices.Grow(s.grant[:0], n)[:n]
	left := budget - n
	for i := n - 1; i >= 0; i-- {
		t := m.list[i]
		want := len(collect(s.cands[:0], &t.root, 1))
		if t.bar.ok {
			want++
		}
		if t.hidden > 0 {
			want++
		}
		g := min(want, left)
		s.grant[i], left = 1+g, left-g
	}
	for i, t := range m.list {
		m.treeRows(f, t, now, width, s.grant[i], color)
	}
}

// treeRows renders one tree in at most limit rows.
func (m *liveModel) treeRows(f *liveFrame, t *liveTree, now time.Time, width, limit int, color bool) {
	s := &m.scratch
	m.headerRow(&s.row, t, now, color)
	f.add(&s.row, width)
	avail := limit - 1
	if t.bar.ok && avail > 0 {
		m.barRow(&s.row, t, width, color)
		f.add(&s.row, width)
		avail--
	}
	if avail <= 0 {
		return
	}
	s.cands = collect(s.cands[:0], &t.root, 1)
	c := s.cands
	fits := len(c) <= avail && (t.hidden == 0 || len(c) < avail)
	selected := len(c)
	if !fits {
		selected = 0
		capacity := avail - 1 // the "… N more" row
		for rank := 0; rank <= maxRank && selected < capacity; rank++ {
			for _, cd := range c {
				if cd.n.mark == s.frameNo || ranks[cd.n.status] != rank {
					continue
				}
				k := 1
				for a := cd.n.parent; a != nil && a.kind != kindRoot && a.mark != s.frameNo; a = a.parent {
					k++
				}
				if selected+k > capacity {
					continue
				}
				for a := cd.n; a != nil && a.kind != kindRoot && a.mark != s.frameNo; a = a.parent {
					a.mark = s.frameNo
				}
				selected += k
			}
		}
	}
	for _, cd := range c {
		if fits || cd.n.mark == s.frameNo {
			m.nodeRow(&s.row, cd.n, cd.depth, now, color, false)
			f.add(&s.row, width)
		}
	}
	if more := len(c) - selected + t.hidden; more > 0 {
		f.add(m.textRow(2, sgrDim, "… "+strconv.Itoa(more)+" more", color), width)
	}
}

// collect appends the nodes below n in display order.
func collect(c []candidate, n *liveNode, depth int) []candidate {
	for k := n.first; k != nil; k = k.next {
		c = append(c, candidate{k, depth})
		c = collect(c, k, depth+1)
	}
	return c
}

// ranks order what a short terminal shows first: what runs now, then what failed, what changed,
// what is still to come.
var ranks = [numStatus]int{
	stRunning: 0, stFailed: 1, stUnreachable: 1, stCancelled: 1, stIgnored: 2, stRescued: 2,
	stChanged: 3, stPending: 4, stSkipped: maxRank, stOK: maxRank,
}

const maxRank = 5

// headerRow is a tree's header with its status and elapsed time.
func (m *liveModel) headerRow(r *liveRow, t *liveTree, now time.Time, color bool) {
	code := m.headerText(r, t, color, true)
	var b []byte
	switch t.status {
	case stRunning:
		if t.op != "" {
			b = append(b, "running "...)
		}
		b = appendDuration(b, t.clock(now).Sub(t.start), true)
	case stFailed:
		b = appendDuration(append(b, "failed "...), t.end.Sub(t.start), false)
	default:
		b = appendDuration(append(b, "done "...), t.end.Sub(t.start), false)
	}
	r.setRight(code, string(b))
}

// headerText starts a tree's header row: its status glyph (not on the line heading collapsed lines
// above the live area, where it would go stale), operation, resource, trace id and transaction id.
// It returns the status's colour.
func (m *liveModel) headerText(r *liveRow, t *liveTree, color, glyph bool) string {
	r.reset(color)
	l := looks[t.shownStatus()]
	if glyph {
		r.add(l.code, l.glyph)
		r.space(1)
	}
	r.add(sgrBold, t.name())
	if t.op != "" && t.resource != "" {
		r.space(2)
		r.add("", t.resource)
	}
	if tid := t.key.trace; tid.IsValid() {
		var buf [8]byte
		hex.Encode(buf[:], tid[:4])
		r.space(2)
		r.add(sgrDim, "trace ")
		r.add("", string(buf[:]))
	}
	if t.tx != "" {
		r.space(2)
		r.add(sgrDim, "tx=")
		r.add("", t.tx)
	}
	return l.code
}

// shownStatus is the status of a tree's glyph: an operation's own, or, without
// common/OperationStarted (a controller's condition streams), the worst of its parts once all have
// settled.
func (t *liveTree) shownStatus() liveStatus {
	if t.status != stRunning || t.op != "" || t.root.first == nil {
		return t.status
	}
	st := stOK
	for n := t.root.first; n != nil; n = n.next {
		switch {
		case n.status == stFailed || n.status == stUnreachable:
			return stFailed
		case !n.status.finished():
			st = stRunning
		}
	}
	return st
}

func barText(t *liveTree) string {
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
func (m *liveModel) barRow(r *liveRow, t *liveTree, width int, color bool) {
	r.reset(color)
	r.space(2)
	if t.bar.total > 0 {
		if cells := min(24, (width-30)/2); cells >= 4 {
			done := int(min(t.bar.done, t.bar.total) * int64(cells) / t.bar.total)
			for range done {
				r.add(sgrGreen, barDone)
			}
			for range cells - done {
				r.add(sgrDim, barLeft)
			}
			r.space(2)
		}
	}
	r.add("", barText(t))
	if t.bar.total > 0 {
		pct := min(t.bar.done, t.bar.total) * 100 / t.bar.total
		r.space(2)
		r.add(sgrDim, strconv.FormatInt(pct, 10)+"%")
	}
}

// nodeRow is one part: glyph, name, what happened, message, duration. header keeps only the name,
// for the line that heads collapsed lines above the live area (a status would go stale).
func (m *liveModel) nodeRow(r *liveRow, n *liveNode, depth int, now time.Time, color, header bool) {
	r.reset(color)
	r.space(2 * depth)
	l := looks[n.status]
	if !header {
		r.add(l.code, l.glyph)
		r.space(1)
	}
	switch {
	case depth == 1 && n.grouped():
		r.add(sgrBold, n.label)
	case n.status == stPending:
		r.add(sgrDim, n.label)
	default:
		r.add("", n.label)
	}
	if header {
		return
	}
	event := n.kind == kindStream || n.kind == kindEvent
	switch {
	case event:
	case n.grouped():
		m.appendCounts(r, n)
	case l.word != "":
		r.space(2)
		r.add(l.code, l.word)
	}
	if n.msg != "" {
		r.space(2)
		if n.status >= stRescued {
			r.add("", n.msg)
		} else {
			r.add(sgrDim, n.msg)
		}
	}
	var b []byte
	switch {
	case n.status == stPending:
	case event:
		if n.tree.status == stRunning {
			b = append(appendDuration(b, n.tree.clock(now).Sub(n.start), true), " ago"...)
		}
	case n.status == stRunning:
		b = appendDuration(b, n.tree.clock(now).Sub(n.start), true)
	default:
		b = appendDuration(b, n.end.Sub(n.start), false)
	}
	r.setRight(sgrDim, string(b))
}

// appendCounts writes a row's finished children by status, most alarming first: "1 failed · 1 ok".
func (m *liveModel) appendCounts(r *liveRow, n *liveNode) {
	sep := false
	for s := numStatus - 1; s >= stSkipped; s-- {
		if c := n.counts[s]; c > 0 {
			if sep {
				r.add(sgrDim, " · ")
			} else {
				r.space(2)
			}
			sep = true
			r.add(looks[s].code, strconv.Itoa(int(c))+" "+looks[s].count)
		}
	}
}

// ancestry fills buf with n and its ancestors below the root, nearest first, as many as fit.
func ancestry(n *liveNode, buf *[8]*liveNode) []*liveNode {
	chain := buf[:0]
	for a := n; a != nil && a.kind != kindRoot && len(chain) < len(buf); a = a.parent {
		chain = append(chain, a)
	}
	return chain
}

// printCollapsed prints a finished part as one line above the live area, after the headers of its
// tree and ancestors (printed once, and again after lines of another operation).
func (m *liveModel) printCollapsed(n *liveNode) {
	t := n.tree
	if m.lastHeader != t {
		for a := n.parent; a != nil; a = a.parent {
			a.headerOut = false
		}
	}
	r := &m.scratch.row
	now := t.seenWall
	if !t.root.headerOut {
		m.headerText(r, t, m.p.color, false)
		m.printRow(r)
		t.root.headerOut, m.lastHeader = true, t
	}
	var buf [8]*liveNode
	chain := ancestry(n.parent, &buf)
	for i := len(chain) - 1; i >= 0; i-- {
		if a := chain[i]; !a.headerOut {
			m.nodeRow(r, a, len(chain)-i, now, m.p.color, true)
			m.printRow(r)
			a.headerOut = true
		}
	}
	m.nodeRow(r, n, len(chain)+1, now, m.p.color, false)
	m.printRow(r)
}

// printFinal prints a tree as it ends: its header, the counts of its top rows, the parts that
// stayed, then the failure summary; in plain mode, where the records were the lines, only that.
func (m *liveModel) printFinal(t *liveTree, wall time.Time) {
	if !m.plain {
		r := &m.scratch.row
		m.headerRow(r, t, wall, m.p.color)
		if t.bar.ok { // the progress reached
			r.space(2)
			r.add("", barText(t))
		}
		m.printRow(r)
		m.lastHeader = t
		if t.root.done() > 1 {
			// What the top rows came to, the collapsed ones included.
			m.appendCounts(m.textRow(2, sgrDim, "in all:", m.p.color), &t.root)
			m.printRow(r)
		}
		if t.msg != "" {
			m.printLine(2, looks[t.status].code, t.msg)
		}
		m.scratch.cands = collect(m.scratch.cands[:0], &t.root, 1)
		for _, cd := range m.scratch.cands {
			if cd.n.kind == kindEvent && t.status == stOK {
				continue // the last event of a finished operation says nothing more
			}
			m.nodeRow(r, cd.n, cd.depth, wall, m.p.color, false)
			m.printRow(r)
		}
		if t.hidden > 0 {
			m.printLine(2, sgrDim, "… "+strconv.Itoa(t.hidden)+" more not kept (node limit)")
		}
	}
	m.printFailures(t)
}

// maxSummaryLines bounds the lines of one failure's message in the summary; maxSummaryFailures the
// failures listed.
const (
	maxSummaryLines    = 6
	maxSummaryFailures = 20
)

// printFailures prints what failed, where and why, as BuildKit does at the end of a build: each
// failed part's path in the tree (play › task › host) and its message below it, wrapped to the
// terminal's width (in plain mode whole). A successful operation prints nothing.
func (m *liveModel) printFailures(t *liveTree) {
	s := &m.scratch
	s.cands = collect(s.cands[:0], &t.root, 1)
	var failed []*liveNode
	for _, cd := range s.cands {
		// Where it failed: the deepest failures, and a failed part above them whose records said
		// why (a resource's diagnostic above its provisioner's failure).
		if n := cd.n; n.status.failure() && n.kind != kindEvent && (!failedBelow(n) || n.told) {
			failed = append(failed, n)
		}
	}
	if len(failed) == 0 && (t.status != stFailed || t.msg == "") {
		return
	}
	if m.plain {
		m.plainHeader(t)
	}
	word := " failed"
	if t.status != stFailed {
		word = " finished with failures"
	}
	r := m.textRow(0, sgrRed+sgrBold, glyphFailed+" "+t.name()+word, m.p.color)
	if len(failed) == 1 {
		r.add("", ": 1 failure")
	} else if len(failed) > 1 {
		r.add("", ": "+strconv.Itoa(len(failed))+" failures")
	}
	m.printRow(r)
	if t.msg != "" {
		m.printWrapped(t.msg, 4, "")
	}
	for i, n := range failed {
		if i == maxSummaryFailures {
			m.printLine(2, sgrDim, "… "+strconv.Itoa(len(failed)-i)+" more")
			break
		}
		l := looks[n.status]
		m.textRow(2, l.code, glyphFailed, m.p.color).space(1)
		var buf [8]*liveNode
		chain := ancestry(n, &buf)
		for j := len(chain) - 1; j >= 0; j-- {
			r.add("", chain[j].label)
			if j > 0 {
				r.add(sgrDim, " › ")
			}
		}
		r.space(2)
		r.add(l.code, l.word)
		m.printRow(r)
		if n.msg != "" {
			m.printWrapped(n.msg, 6, l.code)
		}
	}
}

// failedBelow reports whether a child of n failed: n failed because of it.
func failedBelow(n *liveNode) bool {
	for k := n.first; k != nil; k = k.next {
		if k.status.failure() {
			return true
		}
	}
	return false
}

// printWrapped prints text indented, in lines that fit the terminal (at most maxSummaryLines of
// them); in plain mode one line, whole.
func (m *liveModel) printWrapped(text string, indent int, code string) {
	avail := m.width - 1 - indent
	if m.plain || avail < 20 {
		m.printLine(indent, code, text)
		return
	}
	for i := 0; text != "" && i < maxSummaryLines; i++ {
		line := text
		if textWidth(line) > avail {
			cut := len(cutWidth(nil, []byte(line), avail, false)) - len("…")
			if sp := strings.LastIndexByte(line[:cut], ' '); sp > cut/2 {
				cut = sp
			}
			line = line[:cut]
			if i == maxSummaryLines-1 {
				line = string(cutWidth(nil, []byte(text), avail, false))
			}
		}
		m.printLine(indent, code, line)
		text = strings.TrimLeft(text[min(len(line), len(text)):], " ")
	}
}

// textRow is the scratch row holding text, indented, in colour code.
func (m *liveModel) textRow(indent int, code, text string, color bool) *liveRow {
	r := &m.scratch.row
	r.reset(color)
	r.space(indent)
	r.add(code, text)
	return r
}

// printLine prints text indented, in colour code, as a line above the live area.
func (m *liveModel) printLine(indent int, code, text string) {
	m.printRow(m.textRow(indent, code, text, m.p.color))
}

// printRow queues a row as a line above the live area, its right part aligned to the terminal's
// width, and cut to it: a line above never wraps. In plain mode (no width) it is whole.
func (m *liveModel) printRow(r *liveRow) {
	m.p.buf = r.appendTo(m.p.buf[:0], m.width, !m.plain)
	m.p.line(m.p.buf)
}
