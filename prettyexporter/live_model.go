package prettyexporter

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// The live view's model: one tree per operation, bounded in nodes and trees, guarded by the
// LiveExporter's mutex. Every string it keeps is clipped, escaped and copied: nothing refers to a
// record after Export returns. It knows no terminal: what is to be printed above the live area it
// queues as notes (live_notes.go), and the renderer (live_render.go) draws from a snapshot copied
// under the mutex.

// liveStatus is a node's or a tree's state. The finished states are in increasing order of
// attention, so that the worst of a node's children is the greatest.
type liveStatus uint8

const (
	stPending liveStatus = iota // announced, not started (a condition stream not yet true)
	stRunning
	stSkipped
	stOK
	stChanged
	stRescued   // failed, and a handler of the tool recovered (Ansible's rescue)
	stIgnored   // failed, and the tool was told to go on (ignore_errors)
	stCancelled // stopped before it ended, or still open when its operation ended
	stTimeout   // stopped by a time limit
	stFailed
	stUnreachable
	numStatus
)

// statusWords say each status without colour and without its glyph (ok and running need none):
// progress.outcome's words (internal/base/outcome), the same on the span, in the view and in
// docs/formats.md.
var statusWords = [numStatus]string{
	stSkipped: outcome.Skipped, stChanged: outcome.Changed, stRescued: outcome.Rescued, stIgnored: outcome.Ignored,
	stCancelled: outcome.Cancelled, stTimeout: outcome.TimedOut, stFailed: outcome.Failed, stUnreachable: outcome.Unreachable,
}

func (s liveStatus) finished() bool { return s >= stSkipped }

// failure reports whether a part goes into the failure summary.
func (s liveStatus) failure() bool { return s >= stCancelled }

type nodeKind uint8

const (
	kindRoot   nodeKind = iota
	kindSpan            // a span: a play, a task, a host, a resource, a driver's step
	kindStream          // a condition stream with its last transition
	kindEvent           // the last event of a driver that makes no spans
)

// liveNode is a span, a condition stream or a driver's last event, or a tree's root. Children form
// a doubly linked list, so that a finished part leaves its parent in O(1).
type liveNode struct {
	kind       nodeKind
	status     liveStatus
	label, msg string // safe to print: escaped, clipped
	start, end time.Time
	counts     [numStatus]int32 // finished children by status, folded ones included

	id        uint64   // unique in the model: the renderer knows which headers it printed by it
	told      bool     // msg came from a record (a warning's or a failure's text), not the span
	op        bool     // its span recorded common/OperationStarted: an operation under a span
	collapsed [2]int32 // leaf children noted to be printed above as lines: unchanged, changed
	changes   int32    // a condition stream's transitions: its history, folded

	span        trace.SpanID // the span it shows (kindSpan, and the root of a tree with a head)
	parent      *liveNode
	first, last *liveNode
	prev, next  *liveNode
	tree        *liveTree
}

// done is the number of n's finished children, folded ones included.
func (n *liveNode) done() (c int32) {
	for _, k := range n.counts {
		c += k
	}
	return c
}

// grouped reports whether n has or had children: its row shows their counts rather than a status
// word.
func (n *liveNode) grouped() bool { return n.first != nil || n.done() > 0 }

// quiet reports whether a finished part has nothing left to show: it went as planned (ok, skipped
// or changed: a change is what a run is for), with no message and no part of its own still shown.
// Its parent's counts say the rest.
func (n *liveNode) quiet() bool {
	return n.status >= stSkipped && n.status <= stChanged && n.msg == "" && n.first == nil
}

// spanKey identifies a span: span ids are unique only within a trace.
type spanKey struct {
	trace trace.TraceID
	span  trace.SpanID
}

// liveKey identifies an operation's tree: its trace id, else its resource, else its transaction id.
type liveKey struct {
	trace trace.TraceID
	other string
}

// liveHead is what a tree's header says, copied whole into a snapshot.
type liveHead struct {
	id         uint64 // unique in the model
	key        liveKey
	op         string // the operation (common/OperationStarted), safe
	title      string // names it without op and resource: the head span, else the first event's group
	resource   string // Type/id, safe
	tx         string // the transaction id, safe
	status     liveStatus
	msg        string // the failure, safe
	start, end time.Time
	// The operation's clock: the last record's time and the wall time it arrived, so that a
	// replayed run shows elapsed times as it unfolds, not the time since the recording.
	seen, seenWall time.Time

	bar struct {
		done, total int64
		unit        string
		ok          bool
	}
	hidden   int // nodes refused by the cap
	spanRows int // spans that got a row
	changes  int // condition transitions recorded
}

// liveTree is one operation: a trace. Its head is the first span of the trace whose parent the view
// does not know (the driver's own span, the run's, the adapter's operation span); the head's
// children are the tree's top rows.
type liveTree struct {
	liveHead
	touched uint64 // the model's gen at its last change: the least recent is evicted first

	root    liveNode             // the head span's node when there is one (root.span set)
	streams map[string]*liveNode // condition streams, by clipped name
	closing time.Time            // wall time at which the tree ends: its head span ended
	last    *liveNode            // the generic last event
}

// clock is the operation's time at wall time now.
func (t *liveHead) clock(now time.Time) time.Time {
	if t.seen.IsZero() {
		return now
	}
	return t.seen.Add(max(now.Sub(t.seenWall), 0))
}

// see moves the operation's clock to ts, which arrived at wall.
func (t *liveHead) see(ts, wall time.Time) {
	if t.seen.IsZero() || !ts.Before(t.seen) {
		t.seen, t.seenWall = ts, wall
	}
}

// conditionsOnly reports whether a tree is a resource's condition streams alone, with no operation
// and no span: a controller's object.
func (t *liveHead) conditionsOnly() bool { return t.op == "" && t.spanRows == 0 && t.changes > 0 }

// name is what names a tree: its operation, else its resource, else its title.
func (t *liveHead) name() string { return cmp.Or(t.op, t.resource, t.title) }

// liveModel holds every operation being watched.
type liveModel struct {
	trees                     map[liveKey]*liveTree
	list                      []*liveTree           // in order of arrival
	spans                     map[spanKey]*liveNode // the rows of the spans that have not ended
	nodes, maxNodes, maxTrees int
	gen                       uint64 // bumped by every change: a frame is drawn only after one

	ended    [64]liveKey // recently ended operations: late records print as lines
	endedAt  int
	endedSet map[liveKey]struct{}

	// How records come: direct through LogProcessor, batched through Export. A tree waits headGrace
	// after its head span's end unless every record came direct.
	direct, batched bool

	flat  bool   // every record is a note, and there are no trees (OTEL_LOGS_EXPORTER=pretty)
	lines bool   // every record of a tree is also a note (plain mode's lines)
	parts bool   // every span's part that finishes is a note (noteFinished: the CI format)
	seq   uint64 // the last id given to a tree or a node

	notes   []liveNote // what is to be printed above the live area, in order
	pending int        // their estimated bytes
	dropped int        // notes dropped since the last take: past liveMaxPending
}

// newLiveModel returns an empty model; lines makes every record of an operation a note too, for the
// plain lines.
func newLiveModel(maxNodes, maxTrees int, lines bool) *liveModel {
	return &liveModel{
		trees: map[liveKey]*liveTree{}, endedSet: map[liveKey]struct{}{}, spans: map[spanKey]*liveNode{},
		maxNodes: maxNodes, maxTrees: maxTrees, lines: lines,
	}
}

// newNode makes a child of parent, or returns nil at the node cap.
func (m *liveModel) newNode(t *liveTree, parent *liveNode, kind nodeKind, label string, start time.Time) *liveNode {
	if m.nodes >= m.maxNodes {
		t.hidden++
		return nil
	}
	m.nodes++
	m.seq++
	n := &liveNode{id: m.seq, kind: kind, status: stRunning, label: label, start: start, parent: parent, tree: t}
	if parent.last == nil {
		parent.first = n
	} else {
		parent.last.next = n
		n.prev = parent.last
	}
	parent.last = n
	return n
}

// remove takes n and its subtree out of the model.
func (m *liveModel) remove(n *liveNode) {
	p := n.parent
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		p.first = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		p.last = n.prev
	}
	m.nodes -= m.forget(n)
	n.parent, n.prev, n.next = nil, nil, nil
}

// forget drops the span ids of n's subtree and returns its node count.
func (m *liveModel) forget(n *liveNode) int {
	c := 1
	if k := (spanKey{n.tree.key.trace, n.span}); n.span.IsValid() && m.spans[k] == n {
		delete(m.spans, k)
	}
	for k := n.first; k != nil; k = k.next {
		c += m.forget(k)
	}
	return c
}

// tree returns the tree of key, creating it (and evicting the least recently updated tree past the
// cap).
func (m *liveModel) tree(key liveKey, wall time.Time) *liveTree {
	if t := m.trees[key]; t != nil {
		return t
	}
	if len(m.list) >= m.maxTrees {
		m.endTree(slices.MinFunc(m.list, func(a, b *liveTree) int { return cmp.Compare(a.touched, b.touched) }), wall)
	}
	m.seq++
	t := &liveTree{liveHead: liveHead{id: m.seq, key: key, status: stRunning}}
	t.root.tree = t
	m.trees[key] = t
	m.list = append(m.list, t)
	return t
}

// touch records a change to tree t, which its record or span moved to ts at wall.
func (m *liveModel) touch(t *liveTree, ts, wall time.Time) {
	m.gen++
	t.touched = m.gen
	t.see(ts, wall)
}

// endTree settles what is still open, notes the tree's final state to be printed above the live
// area (with its failure summary) and forgets it.
func (m *liveModel) endTree(t *liveTree, wall time.Time) {
	if t.status == stRunning && t.op != "" {
		t.status, t.msg = stFailed, cmp.Or(t.msg, "the operation did not report its end")
	}
	if t.end.IsZero() {
		t.end = t.seen
	}
	m.settle(&t.root, t)
	if t.status == stRunning {
		// No operation (condition streams, a driver's events): its status is its parts'.
		if t.status = t.shownStatus(); t.status == stRunning {
			t.status = stOK
		}
	}
	m.noteEnded(t, wall)
	m.nodes -= m.forget(&t.root) - 1
	delete(m.trees, t.key)
	i := slices.Index(m.list, t)
	m.list = slices.Delete(m.list, i, i+1)
	delete(m.endedSet, m.ended[m.endedAt]) // the oldest; the zero key (a free slot) is never a tree's
	m.ended[m.endedAt] = t.key
	m.endedSet[t.key] = struct{}{}
	m.endedAt = (m.endedAt + 1) % len(m.ended)
	m.gen++
}

// settle ends every part of n's subtree still open when its operation ended: nothing shows
// "running" under a finished operation. A span that did not end is cancelled when the operation
// failed, else done with it; a condition stream keeps its last condition.
func (m *liveModel) settle(n *liveNode, t *liveTree) {
	for k := n.first; k != nil; k = k.next {
		m.settle(k, t)
		if k.kind == kindStream && k.status == stRunning {
			k.status = stPending // a condition stream keeps its condition, not running any more
		}
		if k.status.finished() || k.kind == kindStream {
			continue
		}
		st := stOK
		if k.kind == kindSpan && t.status == stFailed {
			st = stCancelled
		}
		k.status, k.end = st, t.end
		if k.kind == kindSpan {
			n.counts[st]++
		}
	}
}

// settleStreams gives t's condition rows their settled status once its operation has ended: a
// condition not true is no longer being worked towards.
func (m *liveModel) settleStreams(t *liveTree) {
	for _, n := range t.streams {
		if n.status == stRunning {
			n.status = stPending
		}
	}
}

// endAll ends every tree: at Shutdown.
func (m *liveModel) endAll(wall time.Time) {
	for len(m.list) > 0 {
		m.endTree(m.list[0], wall)
	}
}

// closeDue ends the trees whose head span ended a while ago, time for their last records (batched
// behind the span) to arrive.
func (m *liveModel) closeDue(wall time.Time) {
	for i := 0; i < len(m.list); {
		if t := m.list[i]; !t.closing.IsZero() && !wall.Before(t.closing) {
			m.endTree(t, wall)
			continue
		}
		i++
	}
}

// moveOn ends the trees waiting after their operation's end, but for the tree of key: the program
// has moved on (it prints a line, or records for another operation), so that their final states
// come before what it prints next. Only when every record comes direct: batched records may still
// be on their way.
func (m *liveModel) moveOn(key liveKey, wall time.Time) {
	if !m.direct || m.batched {
		return
	}
	for i := 0; i < len(m.list); {
		if t := m.list[i]; !t.closing.IsZero() && t.key != key {
			m.endTree(t, wall)
			continue
		}
		i++
	}
}

// finish gives n its final status, folds into its counts the children that say nothing its row does
// not, counts it in its parent, and collapses it to one line above the live area (a note) when it
// has nothing left to show.
func (m *liveModel) finish(n *liveNode, st liveStatus, end time.Time) {
	n.status, n.end = st, end
	m.gen++
	for k := n.first; k != nil; {
		next := k.next
		if k.quiet() {
			m.remove(k) // the row's counts say it
		}
		k = next
	}
	p := n.parent
	p.counts[st]++
	if m.parts && n.kind == kindSpan {
		m.noteFinished(n)
	}
	if !n.quiet() {
		return
	}
	// Nothing left to show: one line above the live area (under the headers of its ancestors,
	// printed once), and it goes.
	top := p.kind == kindRoot || p.op
	c := &p.collapsed[0]
	if n.status == stChanged {
		c = &p.collapsed[1]
	}
	if n.grouped() || top && *c < maxCollapsedLeaves {
		*c++
		m.noteCollapsed(n)
	}
	m.remove(n)
}

// maxCollapsedLeaves bounds the lines printed above for the leaves of an operation (rows under the
// tree's head or a span that recorded common/OperationStarted), unchanged and changed ones apart;
// the rest, and deeper leaves, are only counted (DESIGN.md, "What stays and what collapses").
const maxCollapsedLeaves = 10

// Text kept from records is clipped to these many bytes.
const (
	maxLabelBytes = 200
	maxMsgBytes   = 400
)

// safeText returns s clipped to max bytes (at a rune boundary, marked with …) and escaped for a
// terminal: as it is when printable, else Go-quoted, as the pretty format writes a message. The
// result never shares memory with s, so that a record's strings are not kept alive.
func safeText(s string, max int) string {
	cut := false
	if len(s) > max {
		i := max
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, cut = s[:i], true
	}
	if !printable(s, false, false) {
		s = strconv.Quote(s)
	} else {
		s = strings.Clone(s)
	}
	if cut {
		s += "…"
	}
	return s
}
