package prettyexporter

import (
	"slices"
	"strconv"
	"strings"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/tncomessage"
)

// liveRenderer draws the live view from what the model hands over: the notes, as lines printed
// above the live area (or as plain lines), and a snapshot, as the live area's frame. It is owned by
// the exporter's goroutine and never touches the model: everything it reads was copied under the
// model's lock.
type liveRenderer struct {
	p     printer
	plain bool // plain lines: no live area, no collapsed lines
	width int  // the terminal's width: cuts lines printed above

	// The headers printed above: whose tree the last line belongs under, and the rows of it (and
	// the tree's own id for its header) printed as headers since it became the last.
	lastHeader uint64
	headers    map[uint64]struct{}
	plains     map[uint64]*plainState // plain mode's bookkeeping, by tree

	snap  liveSnap // the snapshot of the next frame, filled under the model's lock
	row   liveRow
	grant []int
	marks []bool
	path  []int
}

func newLiveRenderer(p printer, plain bool) *liveRenderer {
	return &liveRenderer{p: p, plain: plain, width: 80, headers: map[uint64]struct{}{}, plains: map[uint64]*plainState{}}
}

// printer collects the lines printed above the live area (or, in plain mode, every line) until the
// goroutine writes them. What waits is bounded before it gets here, in the model's notes.
type printer struct {
	pretty *Exporter // record lines with the operation's context
	bare   *Exporter // plain mode: without resource, trace and tx (in the header)
	color  bool
	q      []byte
	buf    []byte // one line being built
}

// line queues one line (without its newline).
func (p *printer) line(b []byte) {
	p.q = append(p.q, b...)
	p.q = append(p.q, '\n')
}

// record queues r in the pretty format; bare leaves the context out.
func (p *printer) record(r *sdklog.Record, bare bool) {
	v := tncomessage.GetView()
	defer tncomessage.PutView(v)
	v.Load(r)
	e := p.pretty
	if bare {
		e = p.bare
	}
	p.buf = e.appendView(p.buf[:0], r, v)
	p.line(p.buf[:len(p.buf)-1])
}

// take hands the queue over, leaving spare (emptied) in its place.
func (p *printer) take(spare []byte) []byte {
	q := p.q
	p.q = spare[:0]
	return q
}

// print renders notes as lines, after a line saying how many were dropped if some were.
func (r *liveRenderer) print(notes []liveNote, dropped int) {
	if dropped > 0 {
		r.p.line(droppedLine(r.p.buf[:0], dropped, r.p.color))
	}
	for i := range notes {
		n := &notes[i]
		switch n.kind {
		case noteText:
			r.p.line(n.text)
		case noteRecord:
			r.p.record(n.rec, false)
		case noteLine:
			r.printPlain(n)
		case noteCollapsed:
			if !r.plain {
				r.printCollapsed(n)
			}
		case noteEnded:
			r.printFinal(&n.tree, n.nodes, n.wall)
			if r.lastHeader == n.tree.id {
				r.lastHeader = 0
			}
			delete(r.plains, n.tree.id)
		}
	}
}

// header switches the headers printed above to tree id's.
func (r *liveRenderer) header(id uint64) {
	if r.lastHeader != id {
		clear(r.headers)
		r.lastHeader = id
	}
}

// printCollapsed prints a finished part as one line above the live area, after the headers of its
// tree and ancestors (printed once, and again after lines of another operation).
func (r *liveRenderer) printCollapsed(n *liveNote) {
	t := &n.tree
	r.header(t.id)
	row := &r.row
	if _, ok := r.headers[t.id]; !ok {
		r.headerText(row, t, r.p.color, false)
		r.printRow(row)
		r.headers[t.id] = struct{}{}
	}
	last := len(n.nodes) - 1
	for i := range n.nodes[:last] {
		if a := &n.nodes[i]; !r.printed(a.id) {
			r.nodeRow(row, a, &t.liveHead, a.depth, t.seenWall, r.p.color, true)
			r.printRow(row)
			r.headers[a.id] = struct{}{}
		}
	}
	r.nodeRow(row, &n.nodes[last], &t.liveHead, n.nodes[last].depth, t.seenWall, r.p.color, false)
	r.printRow(row)
}

func (r *liveRenderer) printed(id uint64) bool {
	_, ok := r.headers[id]
	return ok
}

// printFinal prints a tree as it ends: its header, the counts of its top rows, the parts that
// stayed, then the failure summary; in plain mode, where the records were the lines, only that.
func (r *liveRenderer) printFinal(t *snapTree, rows []snapNode, wall time.Time) {
	if !r.plain {
		row := &r.row
		r.headerRow(row, t, wall, r.p.color)
		if t.bar.ok { // the progress reached
			row.space(2)
			row.add("", barText(t))
		}
		r.printRow(row)
		r.header(t.id)
		if t.done() > 1 {
			// What the top rows came to, the collapsed ones included.
			appendCounts(r.textRow(2, sgrDim, "in all:", r.p.color), &t.counts)
			r.printRow(row)
		}
		if t.msg != "" {
			r.printLine(2, looks[t.status].code, t.msg)
		}
		for i := range rows {
			if rows[i].kind == kindEvent && t.status == stOK {
				continue // the last event of a finished operation says nothing more
			}
			r.nodeRow(row, &rows[i], &t.liveHead, rows[i].depth, wall, r.p.color, false)
			r.printRow(row)
		}
		if t.hidden > 0 {
			r.printLine(2, sgrDim, "… "+strconv.Itoa(t.hidden)+" more not kept (node limit)")
		}
	}
	r.printFailures(t, rows)
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
func (r *liveRenderer) printFailures(t *snapTree, rows []snapNode) {
	var failed []int
	for i := range rows {
		// Where it failed: the deepest failures, and a failed part above them whose records said
		// why (a resource's diagnostic above its provisioner's failure).
		if n := &rows[i]; n.status.failure() && n.kind != kindEvent && (!n.failedBelow || n.told) {
			failed = append(failed, i)
		}
	}
	if len(failed) == 0 && (t.status != stFailed || t.msg == "") {
		return
	}
	if r.plain {
		r.plainHeader(t)
	}
	word := " failed"
	if t.status != stFailed {
		word = " finished with failures"
	}
	// A failure is counted once, at its cause: a part listed under a listed ancestor (a
	// provisioner's failure under its resource's diagnostic) is the same failure.
	causes := 0
	for _, k := range failed {
		a := rows[k].parent
		for a >= 0 && !rows[a].status.failure() || a >= 0 && !slices.Contains(failed, a) {
			a = rows[a].parent
		}
		if a < 0 {
			causes++
		}
	}
	row := r.textRow(0, sgrRed+sgrBold, glyphFailed+" "+t.name()+word, r.p.color)
	if causes == 1 {
		row.add("", ": 1 failure")
	} else if causes > 1 {
		row.add("", ": "+strconv.Itoa(causes)+" failures")
	}
	r.printRow(row)
	if t.msg != "" {
		r.printWrapped(t.msg, 4, "")
	}
	for i, k := range failed {
		if i == maxSummaryFailures {
			r.printLine(2, sgrDim, "… "+strconv.Itoa(len(failed)-i)+" more")
			break
		}
		n := &rows[k]
		l := looks[n.status]
		r.textRow(2, l.code, l.glyph, r.p.color).space(1)
		r.path = r.path[:0]
		for a := k; a >= 0 && len(r.path) < 8; a = rows[a].parent {
			r.path = append(r.path, a)
		}
		for j := len(r.path) - 1; j >= 0; j-- {
			row.add("", rows[r.path[j]].label)
			if j > 0 {
				row.add(sgrDim, " › ")
			}
		}
		row.space(2)
		row.add(l.code, statusWords[n.status])
		r.printRow(row)
		if n.msg != "" {
			r.printWrapped(n.msg, 6, l.code)
		}
	}
}

// printWrapped prints text indented, in lines that fit the terminal (at most maxSummaryLines of
// them); in plain mode one line, whole.
func (r *liveRenderer) printWrapped(text string, indent int, code string) {
	avail := r.width - 1 - indent
	if r.plain || avail < 20 {
		r.printLine(indent, code, text)
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
		r.printLine(indent, code, line)
		text = strings.TrimLeft(text[min(len(line), len(text)):], " ")
	}
}

// textRow is the scratch row holding text, indented, in colour code.
func (r *liveRenderer) textRow(indent int, code, text string, color bool) *liveRow {
	row := &r.row
	row.reset(color)
	row.space(indent)
	row.add(code, text)
	return row
}

// printLine prints text indented, in colour code, as a line above the live area.
func (r *liveRenderer) printLine(indent int, code, text string) {
	r.printRow(r.textRow(indent, code, text, r.p.color))
}

// printRow queues a row as a line above the live area, its right part aligned to the terminal's
// width, and cut to it: a line above never wraps. In plain mode (no width) it is whole.
func (r *liveRenderer) printRow(row *liveRow) {
	r.p.buf = row.appendTo(r.p.buf[:0], r.width, !r.plain)
	r.p.line(r.p.buf)
}
