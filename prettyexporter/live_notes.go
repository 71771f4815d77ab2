package prettyexporter

import (
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"
)

// What the model hands to the renderer: notes of what is to be printed above the live area, in the
// order they happened, and snapshots of the trees to draw the live area from. Both are copies: the
// renderer reads them outside the model's lock, and the model never changes them after.

type noteKind uint8

const (
	noteRecord    noteKind = iota // a record printed as a line of its own (a log, a late record, a warning)
	noteLine                      // a record of an operation, for the plain lines (liveModel.lines)
	noteCollapsed                 // a finished part that leaves the tree, under its ancestors' headers
	noteEnded                     // an operation's final state, as it ends
	noteText                      // a line of Output, made safe
	noteFinished                  // a span's part that finished, with its ancestors (liveModel.parts: the CI format)
)

// liveNote is one thing to print above the live area.
type liveNote struct {
	kind  noteKind
	wall  time.Time      // when it happened: noteLine, noteEnded
	rec   *sdklog.Record // noteRecord, noteLine: a clone
	text  []byte         // noteText
	tree  snapTree       // noteLine, noteCollapsed, noteEnded: its tree as it was then
	nodes []snapNode     // noteCollapsed: the part's ancestors, top first, then the part; noteEnded: the tree's rows
}

// snapTree is a tree as a snapshot holds it: its header, and its rows as a range of the snapshot's
// nodes.
type snapTree struct {
	liveHead
	shown  liveStatus       // shownStatus
	span   trace.SpanID     // the head span's, when there is one
	counts [numStatus]int32 // the root's finished children
	lo, hi int              // its rows: nodes[lo:hi], in display order
}

// snapNode is a row as a snapshot holds it.
type snapNode struct {
	id          uint64
	parent      int // the index of its parent's row in the tree's rows, -1 under the head
	depth       int // 1 for a top row
	kind        nodeKind
	status      liveStatus
	label, msg  string
	start, end  time.Time
	counts      [numStatus]int32
	changes     int32 // a condition stream's transitions
	grouped     bool  // has or had children
	told        bool
	failedBelow bool         // a child failed: it failed because of it
	span        trace.SpanID // the span it shows, for a renderer that groups records by it
	op          bool         // its span recorded common/OperationStarted
}

// liveSnap is the trees being watched, copied for one frame.
type liveSnap struct {
	trees []snapTree
	nodes []snapNode
}

// done is the number of the head's finished children.
func (t *snapTree) done() (c int32) {
	for _, k := range t.counts {
		c += k
	}
	return c
}

// snapshot copies every tree into s, reusing its memory.
func (m *liveModel) snapshot(s *liveSnap) {
	s.trees, s.nodes = s.trees[:0], s.nodes[:0]
	for _, t := range m.list {
		var st snapTree
		st, s.nodes = snapshotTree(t, s.nodes)
		s.trees = append(s.trees, st)
	}
}

// snapshotTree appends t's rows to nodes and returns its header.
func snapshotTree(t *liveTree, nodes []snapNode) (snapTree, []snapNode) {
	st := snapTree{liveHead: t.liveHead, shown: t.shownStatus(), counts: t.root.counts, span: t.root.span, lo: len(nodes)}
	nodes = appendRows(nodes, &t.root, -1, 1, st.lo)
	st.hi = len(nodes)
	return st, nodes
}

// appendRows appends the rows below n in display order; parent is n's index relative to base.
func appendRows(nodes []snapNode, n *liveNode, parent, depth, base int) []snapNode {
	for k := n.first; k != nil; k = k.next {
		i := len(nodes)
		nodes = append(nodes, snapRow(k, parent, depth))
		nodes = appendRows(nodes, k, i-base, depth+1, base)
	}
	return nodes
}

func snapRow(n *liveNode, parent, depth int) snapNode {
	return snapNode{
		id: n.id, parent: parent, depth: depth, kind: n.kind, status: n.status, label: n.label, msg: n.msg,
		start: n.start, end: n.end, counts: n.counts, changes: n.changes, grouped: n.grouped(), told: n.told, failedBelow: failedBelow(n),
		span: n.span, op: n.op,
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

// head is t's header alone, for a note.
func head(t *liveTree) snapTree {
	return snapTree{liveHead: t.liveHead, shown: t.shownStatus(), counts: t.root.counts, span: t.root.span}
}

// Estimated bytes of a note, for the bound on what waits to be printed.
const (
	noteRowBytes    = 100
	noteRecordBytes = 200
)

// note queues n unless the queue is past liveMaxPending, when it is dropped and counted.
func (m *liveModel) note(n liveNote, size int) {
	if m.pending+size > liveMaxPending {
		m.dropped++
		return
	}
	m.pending += size
	m.notes = append(m.notes, n)
}

// noteRecord notes r to be printed as a line of its own.
func (m *liveModel) noteRecord(r *sdklog.Record) {
	m.note(liveNote{kind: noteRecord, rec: cloneRecord(r)}, noteRecordBytes+len(r.Body().AsString()))
}

// noteLine notes r, a record of t, for the plain lines.
func (m *liveModel) noteLine(t *liveTree, r *sdklog.Record, wall time.Time) {
	m.note(liveNote{kind: noteLine, wall: wall, rec: cloneRecord(r), tree: head(t)}, noteRecordBytes+len(r.Body().AsString()))
}

func cloneRecord(r *sdklog.Record) *sdklog.Record {
	c := r.Clone()
	return &c
}

// noteCollapsed notes n, finished, with its ancestors' rows as they are now.
func (m *liveModel) noteCollapsed(n *liveNode) { m.notePart(noteCollapsed, n) }

func (m *liveModel) notePart(kind noteKind, n *liveNode) {
	var buf [8]*liveNode
	chain := ancestry(n.parent, &buf)
	rows := make([]snapNode, 0, len(chain)+1)
	for i := len(chain) - 1; i >= 0; i-- {
		rows = append(rows, snapRow(chain[i], len(rows)-1, len(rows)+1))
	}
	rows = append(rows, snapRow(n, len(rows)-1, len(rows)+1))
	m.note(liveNote{kind: kind, tree: head(n.tree), nodes: rows}, noteRowBytes*(len(rows)+1))
}

// noteFinished notes n, a span's part that finished whatever its status, with its ancestors' rows:
// what the CI format groups a part's lines by.
func (m *liveModel) noteFinished(n *liveNode) { m.notePart(noteFinished, n) }

// noteEnded notes t's final state.
func (m *liveModel) noteEnded(t *liveTree, wall time.Time) {
	st, rows := snapshotTree(t, nil)
	m.note(liveNote{kind: noteEnded, wall: wall, tree: st, nodes: rows}, noteRowBytes*(len(rows)+4))
}

// noteText notes a line of Output, already made safe; the note keeps line.
func (m *liveModel) noteText(line []byte) {
	m.note(liveNote{kind: noteText, text: line}, len(line)+1)
}

// takeNotes hands the notes over, with the count of those dropped since the last take, leaving
// spare (emptied) in their place.
func (m *liveModel) takeNotes(spare []liveNote) (notes []liveNote, dropped int) {
	notes, dropped = m.notes, m.dropped
	clear(spare)
	m.notes, m.pending, m.dropped = spare[:0], 0, 0
	return notes, dropped
}

// ancestry fills buf with n and its ancestors below the root, nearest first, as many as fit.
func ancestry(n *liveNode, buf *[8]*liveNode) []*liveNode {
	chain := buf[:0]
	for a := n; a != nil && a.kind != kindRoot && len(chain) < len(buf); a = a.parent {
		chain = append(chain, a)
	}
	return chain
}
