package prettyexporter

import (
	"bytes"
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

// Len is the number of rows.
func (f *liveFrame) Len() int { return len(f.ends) }

// Row returns row i, SGR sequences included, without a newline.
func (f *liveFrame) Row(i int) []byte {
	start := 0
	if i > 0 {
		start = f.ends[i-1]
	}
	return f.b[start:f.ends[i]]
}

func (f *liveFrame) end() { f.ends = append(f.ends, len(f.b)) }

func (f *liveFrame) equal(o *liveFrame) bool {
	return bytes.Equal(f.b, o.b) && slices.Equal(f.ends, o.ends)
}

func (f *liveFrame) copyFrom(o *liveFrame) {
	f.b = append(f.b[:0], o.b...)
	f.ends = append(f.ends[:0], o.ends...)
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
	need    []int
	grant   []int
	frameNo uint64
}

// frame renders the live area at wall time now for a terminal of width
// columns and height rows: at most height-1 rows (the cursor keeps the row
// below them), each narrower than width. It is a pure function of the
// model: the golden tests call it directly.
//
// When the trees do not fit, each keeps its header and the most recent
// ones get the rows left; inside a tree, running parts (with their
// ancestors) come first, then failures, changes and pending parts, and
// what is left out is counted in a "… N more" row.
func (m *liveModel) frame(f *liveFrame, now time.Time, width, height int, color bool) {
	f.reset()
	budget := height - 1
	n := len(m.list)
	if budget < 1 || width < 8 || n == 0 {
		return
	}
	s := &m.scratch
	s.frameNo++
	if n > budget {
		shown := budget - 1
		m.moreRow(f, n-shown, "operations", 0, width, color)
		for _, t := range m.list[n-shown:] {
			m.headerRow(&s.row, t, now, false, color)
			f.b = s.row.appendTo(f.b, width, true)
			f.end()
		}
		return
	}
	s.need, s.grant = s.need[:0], s.grant[:0]
	for _, t := range m.list {
		need := 1 + countRows(&t.root)
		if t.bar.ok {
			need++
		}
		if t.hidden > 0 {
			need++
		}
		s.need = append(s.need, need)
		s.grant = append(s.grant, 1)
	}
	left := budget - n
	for i := n - 1; i >= 0 && left > 0; i-- {
		g := min(s.need[i]-s.grant[i], left)
		s.grant[i] += g
		left -= g
	}
	for i, t := range m.list {
		m.treeRows(f, t, now, width, s.grant[i], color)
	}
}

// countRows is the number of nodes below n.
func countRows(n *liveNode) int {
	c := 0
	for k := n.first; k != nil; k = k.next {
		c += 1 + countRows(k)
	}
	return c
}

// treeRows renders one tree in at most limit rows.
func (m *liveModel) treeRows(f *liveFrame, t *liveTree, now time.Time, width, limit int, color bool) {
	s := &m.scratch
	m.headerRow(&s.row, t, now, false, color)
	f.b = s.row.appendTo(f.b, width, true)
	f.end()
	used := 1
	if t.bar.ok && used < limit {
		m.barRow(&s.row, t, width, color)
		f.b = s.row.appendTo(f.b, width, true)
		f.end()
		used++
	}
	avail := limit - used
	if avail <= 0 {
		return
	}
	s.cands = collect(s.cands[:0], &t.root, 1)
	c := s.cands
	if len(c) <= avail && (t.hidden == 0 || len(c) < avail) {
		for _, cd := range c {
			m.nodeRow(&s.row, cd.n, cd.depth, now, color)
			f.b = s.row.appendTo(f.b, width, true)
			f.end()
		}
		if t.hidden > 0 {
			m.moreRow(f, t.hidden, "", 1, width, color)
		}
		return
	}
	capacity := avail - 1 // the "… N more" row
	selected := 0
	for rank := 0; rank <= maxRank && selected < capacity; rank++ {
		for _, cd := range c {
			if cd.n.mark == s.frameNo || rankOf(cd.n) != rank {
				continue
			}
			k := 1
			for a := cd.n.parent; a != nil && a.kind != kindRoot && a.mark != s.frameNo; a = a.parent {
				k++
			}
			if selected+k > capacity {
				continue
			}
			cd.n.mark = s.frameNo
			for a := cd.n.parent; a != nil && a.kind != kindRoot && a.mark != s.frameNo; a = a.parent {
				a.mark = s.frameNo
			}
			selected += k
		}
	}
	for _, cd := range c {
		if cd.n.mark == s.frameNo {
			m.nodeRow(&s.row, cd.n, cd.depth, now, color)
			f.b = s.row.appendTo(f.b, width, true)
			f.end()
		}
	}
	m.moreRow(f, len(c)-selected+t.hidden, "", 1, width, color)
}

// collect appends the nodes below n in display order.
func collect(c []candidate, n *liveNode, depth int) []candidate {
	for k := n.first; k != nil; k = k.next {
		c = append(c, candidate{k, depth})
		c = collect(c, k, depth+1)
	}
	return c
}

const maxRank = 5

// rankOf orders what a short terminal shows first: what runs now, then
// what failed, what changed, what is still to come.
func rankOf(n *liveNode) int {
	switch n.status {
	case stRunning:
		return 0
	case stFailed, stUnreachable, stCancelled:
		return 1
	case stIgnored, stRescued:
		return 2
	case stChanged:
		return 3
	case stPending:
		return 4
	}
	return 5
}

func (m *liveModel) moreRow(f *liveFrame, n int, what string, depth, width int, color bool) {
	r := &m.scratch.row
	r.reset(color)
	r.space(2 * depth)
	text := "… " + strconv.Itoa(n) + " more"
	if what != "" {
		text += " " + what
	}
	r.add(sgrDim, text)
	f.b = r.appendTo(f.b, width, true)
	f.end()
}

// headerRow is a tree's header: operation, resource, trace id,
// transaction id, status and elapsed time. final adds the progress
// reached, for the block printed when the operation ends.
func (m *liveModel) headerRow(r *liveRow, t *liveTree, now time.Time, final bool, color bool) {
	r.reset(color)
	glyph, code, _ := statusLook(t.shownStatus())
	r.add(code, glyph)
	r.space(1)
	m.headerText(r, t)
	m.headerRight(r, t, now, final, code)
}

// contextRow is a tree's header as the line that heads collapsed lines
// above the live area: no status, which would be stale in the
// scrollback, and no time.
func (m *liveModel) contextRow(r *liveRow, t *liveTree, color bool) {
	r.reset(color)
	m.headerText(r, t)
}

// headerText is the header's operation, resource, trace id and
// transaction id.
func (m *liveModel) headerText(r *liveRow, t *liveTree) {
	title, resource := t.op, t.resource
	if title == "" {
		title, resource = t.resource, ""
	}
	if title == "" {
		title = t.title
	}
	r.add(sgrBold, title)
	if resource != "" {
		r.space(2)
		r.add("", resource)
	}
	if t.trace.IsValid() {
		var buf [8]byte
		hex.Encode(buf[:], t.trace[:4])
		r.space(2)
		r.add(sgrDim, "trace ")
		r.add("", string(buf[:]))
	}
	if t.tx != "" {
		r.space(2)
		r.add(sgrDim, "tx=")
		r.add("", t.tx)
	}
}

// headerRight is the header's progress (final) and its status and time.
func (m *liveModel) headerRight(r *liveRow, t *liveTree, now time.Time, final bool, code string) {
	if final && t.bar.ok {
		r.space(2)
		r.add("", barText(t))
	}
	var b []byte
	var elapsed time.Duration
	switch t.status {
	case stRunning:
		if t.op != "" {
			b = append(b, "running "...)
		}
		elapsed = t.clock(now).Sub(t.start)
		b = appendDuration(b, elapsed, true)
	case stFailed:
		b = append(b, "failed "...)
		b = appendDuration(b, t.end.Sub(t.start), false)
	default:
		b = append(b, "done "...)
		b = appendDuration(b, t.end.Sub(t.start), false)
	}
	r.setRight(code, string(b))
}

// shownStatus is the status of a tree's glyph: an operation's own, or,
// for a tree without common/OperationStarted (a controller's condition
// streams), the worst of its parts when all have settled.
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
		b = append(b, '/')
		b = strconv.AppendInt(b, t.bar.total, 10)
	}
	if t.bar.unit != "" {
		b = append(b, ' ')
		b = append(b, t.bar.unit...)
	}
	return string(b)
}

// barRow is the N-of-M bar of common/Progress.
func (m *liveModel) barRow(r *liveRow, t *liveTree, width int, color bool) {
	r.reset(color)
	r.space(2)
	if t.bar.total > 0 {
		cells := min(24, (width-30)/2)
		if cells >= 4 {
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

// nodeRow is one part: glyph, name, what happened, message, duration.
func (m *liveModel) nodeRow(r *liveRow, n *liveNode, depth int, now time.Time, color bool) {
	m.partRow(r, n, depth, now, color, false)
}

// partRow is nodeRow; header keeps only the glyph and the name, for the
// line that heads collapsed lines printed above the live area.
func (m *liveModel) partRow(r *liveRow, n *liveNode, depth int, now time.Time, color, header bool) {
	r.reset(color)
	r.space(2 * depth)
	glyph, code, word := statusLook(n.status)
	if !header { // a header of collapsed lines: no status, stale in the scrollback
		r.add(code, glyph)
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
	switch {
	case n.kind == kindStream || n.kind == kindEvent:
	case n.grouped():
		m.appendCounts(r, n)
	case word != "":
		r.space(2)
		r.add(code, word)
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
	case n.kind == kindStream || n.kind == kindEvent:
		if n.tree.status == stRunning {
			b = appendDuration(b, n.tree.clock(now).Sub(n.start), true)
			b = append(b, " ago"...)
		}
	case n.status == stRunning:
		b = appendDuration(b, n.tree.clock(now).Sub(n.start), true)
	default:
		b = appendDuration(b, n.end.Sub(n.start), false)
	}
	r.setRight(sgrDim, string(b))
}

// appendCounts writes a task's or play's finished children by status,
// most alarming first: "1 failed · 1 ok".
func (m *liveModel) appendCounts(r *liveRow, n *liveNode) {
	first := true
	for s := numStatus - 1; s >= stSkipped; s-- {
		c := n.counts[s]
		if c == 0 {
			continue
		}
		_, code, word := statusLook(s)
		if word == "" {
			word = "ok"
		}
		switch s {
		case stIgnored:
			word = "ignored"
		case stRescued:
			word = "rescued"
		}
		if first {
			r.space(2)
			first = false
		} else {
			r.add(sgrDim, " · ")
		}
		r.add(code, strconv.Itoa(int(c))+" "+word)
	}
}

// printCollapsed prints a finished, successful part as one line above the
// live area, after the headers of its tree and ancestors (each printed
// once, and again when lines of another operation came in between).
func (m *liveModel) printCollapsed(n *liveNode) {
	t := n.tree
	if m.lastHeader != t {
		t.headerOut = false
		for a := n.parent; a != nil; a = a.parent {
			a.headerOut = false
		}
	}
	r := &m.scratch.row
	now := t.seenWall
	if !t.headerOut {
		m.contextRow(r, t, m.p.color)
		m.printRow(r)
		t.headerOut = true
		m.lastHeader = t
	}
	var chain [8]*liveNode
	depth := 0
	for a := n.parent; a != nil && a.kind != kindRoot && depth < len(chain); a = a.parent {
		chain[depth] = a
		depth++
	}
	for i := depth - 1; i >= 0; i-- {
		a := chain[i]
		if a.headerOut {
			continue
		}
		m.partRow(r, a, depth-i, now, m.p.color, true)
		m.printRow(r)
		a.headerOut = true
	}
	m.nodeRow(r, n, depth+1, now, m.p.color)
	m.printRow(r)
}

// printFinal prints a tree as it ends: its header with the final status
// and the counts of its top rows, the parts that stayed (failed, changed,
// unreachable, with their messages), then the failure summary. In plain
// mode, where the lines so far were the records, only the summary.
func (m *liveModel) printFinal(t *liveTree, wall time.Time) {
	r := &m.scratch.row
	s := &m.scratch
	if !m.plain {
		m.headerRow(r, t, wall, true, m.p.color)
		m.printRow(r)
		m.lastHeader = t
		if t.root.counted() {
			// What the top rows came to, the collapsed ones included.
			r.reset(m.p.color)
			r.space(2)
			r.add(sgrDim, "in all:")
			m.appendCounts(r, &t.root)
			m.printRow(r)
		}
		if t.msg != "" {
			r.reset(m.p.color)
			r.space(2)
			_, code, _ := statusLook(t.status)
			r.add(code, t.msg)
			m.printRow(r)
		}
		s.cands = collect(s.cands[:0], &t.root, 1)
		for _, cd := range s.cands {
			if cd.n.kind == kindEvent && t.status == stOK {
				continue // the last event of a finished operation says nothing more
			}
			m.nodeRow(r, cd.n, cd.depth, wall, m.p.color)
			m.printRow(r)
		}
		if t.hidden > 0 {
			r.reset(m.p.color)
			r.space(2)
			r.add(sgrDim, "… "+strconv.Itoa(t.hidden)+" more not kept (node limit)")
			m.printRow(r)
		}
	}
	m.printFailures(t)
}

// maxSummaryLines bounds the lines of one failure's message in the
// summary; maxSummaryFailures the failures listed.
const (
	maxSummaryLines    = 6
	maxSummaryFailures = 20
)

// printFailures prints what failed, where and why, as BuildKit does at
// the end of a build: one entry per failed part, its path in the tree
// (play › task › host, or the resource) and its message below it,
// wrapped to the terminal's width (in plain mode, one line each, whole).
// A successful operation prints nothing.
func (m *liveModel) printFailures(t *liveTree) {
	s := &m.scratch
	s.cands = collect(s.cands[:0], &t.root, 1)
	var failed []*liveNode
	for _, cd := range s.cands {
		// Where it failed: the deepest failures, and a failed part above
		// them whose records said why (a resource's diagnostic above its
		// provisioner's failure).
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
	r := &m.scratch.row
	r.reset(m.p.color)
	title := t.op
	if title == "" {
		title = t.resource
	}
	if title == "" {
		title = t.title
	}
	word := "failed"
	if t.status != stFailed {
		word = "finished with failures"
	}
	r.add(sgrRed+sgrBold, glyphFailed+" "+title+" "+word)
	if len(failed) > 0 {
		r.add("", ": "+plural(len(failed), "failure"))
	}
	m.printRow(r)
	if t.msg != "" {
		m.printWrapped(t.msg, 4, "")
	}
	for i, n := range failed {
		if i == maxSummaryFailures {
			r.reset(m.p.color)
			r.space(2)
			r.add(sgrDim, "… "+strconv.Itoa(len(failed)-i)+" more")
			m.printRow(r)
			break
		}
		_, code, word := statusLook(n.status)
		r.reset(m.p.color)
		r.space(2)
		r.add(code, glyphFailed)
		r.space(1)
		var chain [8]*liveNode
		depth := 0
		for a := n; a != nil && a.kind != kindRoot && depth < len(chain); a = a.parent {
			chain[depth] = a
			depth++
		}
		for j := depth - 1; j >= 0; j-- {
			r.add("", chain[j].label)
			if j > 0 {
				r.add(sgrDim, " › ")
			}
		}
		r.space(2)
		r.add(code, word)
		m.printRow(r)
		if n.msg != "" {
			m.printWrapped(n.msg, 6, code)
		}
	}
}

// counted reports whether n has more than one finished child to count:
// one says no more than its own row.
func (n *liveNode) counted() bool {
	c := int32(0)
	for s := stSkipped; s < numStatus; s++ {
		c += n.counts[s]
	}
	return c > 1
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

// printWrapped prints text indented, in lines that fit the terminal (at
// most maxSummaryLines of them); in plain mode one line, whole.
func (m *liveModel) printWrapped(text string, indent int, code string) {
	r := &m.scratch.row
	avail := m.width - 1 - indent
	if m.plain || avail < 20 {
		r.reset(m.p.color)
		r.space(indent)
		r.add(code, text)
		m.printRow(r)
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
		r.reset(m.p.color)
		r.space(indent)
		r.add(code, line)
		m.printRow(r)
		text = strings.TrimLeft(text[min(len(line), len(text)):], " ")
	}
}

func plural(n int, what string) string {
	s := strconv.Itoa(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

// printRow queues a row as a line above the live area, its right part
// aligned to the terminal's width, and cut to it: a line above never
// wraps. In plain mode (no width) it is whole.
func (m *liveModel) printRow(r *liveRow) {
	m.p.buf = r.appendTo(m.p.buf[:0], m.width, !m.plain)
	m.p.line(m.p.buf)
}
