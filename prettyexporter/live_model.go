package prettyexporter

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
)

// This file holds the live view's model: one tree per operation, bounded
// in nodes and trees. It is guarded by the LiveExporter's mutex; Export
// updates it (live_events.go), the terminal goroutine renders it
// (live_frame.go). Nothing in it refers to a record after Export returns:
// every string kept is clipped, escaped and copied.

// liveStatus is a node's or a tree's state. The finished states are in
// increasing order of attention, so that a task's status is the greatest
// of its hosts'.
type liveStatus uint8

const (
	stPending liveStatus = iota // announced (a planned change), not started
	stRunning
	stSkipped
	stOK
	stChanged
	stIgnored // failed, and the failure was ignored (ignore_errors)
	stFailed
	stUnreachable
	numStatus
)

// success reports whether a finished part collapses: nothing to look at.
func (s liveStatus) success() bool { return s == stOK || s == stSkipped }

func (s liveStatus) finished() bool { return s >= stSkipped }

type nodeKind uint8

const (
	kindRoot nodeKind = iota
	kindPlay
	kindTask
	kindHost
	kindResource
	kindStream
	kindEvent // the last event of a driver the view has no mapping for
)

// liveNode is a play, task, host, resource operation, condition stream or
// generic event. Children form a doubly linked list, so that a finished
// part leaves its parent in O(1).
type liveNode struct {
	kind       nodeKind
	status     liveStatus
	label      string // safe to print: escaped, clipped
	msg        string // safe to print: escaped, clipped
	start, end time.Time
	attempts   int32
	items      int32
	counts     [numStatus]int32 // finished children by status, pruned ones included

	superseded bool  // a later sibling started: finish when the last child does
	headerOut  bool  // its row was printed above as a header of collapsed lines
	running    int32 // children of a task or play not finished yet

	parent      *liveNode
	first, last *liveNode
	prev, next  *liveNode
	byName      map[string]*liveNode // hosts of a task, tasks of a play, resources, streams
	nameKey     string               // its key in parent.byName
	tree        *liveTree
	mark        uint64 // the frame that selected it (live_frame.go)
}

// liveKey identifies an operation's tree: its trace id, else (no span) its
// resource, else its transaction id.
type liveKey struct {
	trace trace.TraceID
	other string
}

// liveTree is one operation.
type liveTree struct {
	key      liveKey
	op       string // the operation (common/OperationStarted), safe
	title    string // what names it when neither op nor resource is known: the first event's group, safe
	resource string // Type/id, safe
	trace    trace.TraceID
	tx       string // safe
	status   liveStatus
	msg      string // the failure, safe
	recap    string // Ansible's recap, safe
	start    time.Time
	end      time.Time
	// The clock of the operation: the last record's time and the wall
	// time it arrived, so that a replayed run shows elapsed times as it
	// unfolds, not the time since the recording.
	seen, seenWall time.Time
	touched        uint64

	bar struct {
		done, total int64
		unit        string
		ok          bool
	}

	root       liveNode
	play, task *liveNode // Ansible: the current play and task
	last       *liveNode // the generic last event
	hidden     int       // nodes refused by the cap
	headerOut  bool      // the header was printed above the live area
	index      int       // in liveModel.list

	plain plainState
}

// clock is the operation's time at wall time now.
func (t *liveTree) clock(now time.Time) time.Time {
	if t.seen.IsZero() {
		return now
	}
	d := now.Sub(t.seenWall)
	if d < 0 {
		d = 0
	}
	return t.seen.Add(d)
}

// liveModel holds every operation being watched.
type liveModel struct {
	trees    map[liveKey]*liveTree
	list     []*liveTree // in order of arrival
	nodes    int
	maxNodes int
	maxTrees int
	tick     uint64
	gen      uint64 // bumped by every change: a frame is drawn only after one

	ended    [64]liveKey // recently ended operations: late records print as lines
	endedAt  int
	endedSet map[liveKey]struct{}

	plain      bool // plain lines instead of the live area
	p          *printer
	width      int       // the terminal's width at the last frame: aligns lines printed above
	lastHeader *liveTree // whose header the last line printed above belongs under
	scratch    frameScratch
}

func newLiveModel(maxNodes, maxTrees int, plain bool, p *printer) *liveModel {
	return &liveModel{
		trees: map[liveKey]*liveTree{}, endedSet: map[liveKey]struct{}{},
		maxNodes: maxNodes, maxTrees: maxTrees, plain: plain, p: p, width: 80,
	}
}

// newNode makes a child of parent, or returns nil at the node cap.
func (m *liveModel) newNode(t *liveTree, parent *liveNode, kind nodeKind, name, label string, start time.Time) *liveNode {
	if m.nodes >= m.maxNodes {
		t.hidden++
		return nil
	}
	m.nodes++
	n := &liveNode{kind: kind, status: stRunning, label: label, start: start, parent: parent, tree: t}
	if parent.last == nil {
		parent.first = n
	} else {
		parent.last.next = n
		n.prev = parent.last
	}
	parent.last = n
	if parent.kind != kindRoot {
		parent.running++
	}
	if name != "" {
		if parent.byName == nil {
			parent.byName = map[string]*liveNode{}
		}
		n.nameKey = strings.Clone(name)
		parent.byName[n.nameKey] = n
	}
	return n
}

// remove takes n and its subtree out of the model.
func (m *liveModel) remove(n *liveNode) {
	p := n.parent
	if p == nil {
		return
	}
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
	if n.nameKey != "" && p.byName[n.nameKey] == n {
		delete(p.byName, n.nameKey)
	}
	if p.kind != kindRoot && !n.status.finished() {
		p.running--
	}
	t := n.tree
	if t.play == n {
		t.play = nil
	}
	if t.task == n {
		t.task = nil
	}
	if t.last == n {
		t.last = nil
	}
	m.nodes -= countNodes(n)
	n.parent, n.prev, n.next = nil, nil, nil
}

func countNodes(n *liveNode) int {
	c := 1
	for k := n.first; k != nil; k = k.next {
		c += countNodes(k)
	}
	return c
}

// tree returns the tree of key, creating it (and evicting the least
// recently updated tree past the cap).
func (m *liveModel) tree(key liveKey, wall time.Time) *liveTree {
	if t := m.trees[key]; t != nil {
		return t
	}
	if len(m.list) >= m.maxTrees {
		lru := m.list[0]
		for _, t := range m.list[1:] {
			if t.touched < lru.touched {
				lru = t
			}
		}
		m.endTree(lru, wall)
	}
	t := &liveTree{key: key, status: stRunning, trace: key.trace, index: len(m.list)}
	t.root.kind = kindRoot
	t.root.tree = t
	m.trees[key] = t
	m.list = append(m.list, t)
	return t
}

// endTree prints a tree's final state above the live area and forgets it.
func (m *liveModel) endTree(t *liveTree, wall time.Time) {
	if t.play != nil {
		m.supersedePlay(t.play, t.seen)
	}
	m.printFinal(t, wall)
	m.nodes -= countNodes(&t.root) - 1
	delete(m.trees, t.key)
	if m.lastHeader == t {
		m.lastHeader = nil
	}
	copy(m.list[t.index:], m.list[t.index+1:])
	m.list[len(m.list)-1] = nil
	m.list = m.list[:len(m.list)-1]
	for i := t.index; i < len(m.list); i++ {
		m.list[i].index = i
	}
	if old := m.ended[m.endedAt]; old != (liveKey{}) {
		delete(m.endedSet, old)
	}
	m.ended[m.endedAt] = t.key
	m.endedSet[t.key] = struct{}{}
	m.endedAt = (m.endedAt + 1) % len(m.ended)
	m.gen++
}

// endAll ends every tree: at Shutdown.
func (m *liveModel) endAll(wall time.Time) {
	for len(m.list) > 0 {
		m.endTree(m.list[0], wall)
	}
}

// finish gives n its final status and counts it in its parent. A task or
// play that succeeded with nothing left to show collapses, before its
// parent (if it was superseded and waited for n) finishes in turn, so
// that the lines printed above keep the order of the run.
func (m *liveModel) finish(n *liveNode, st liveStatus, end time.Time) {
	if n.status.finished() {
		return
	}
	n.status, n.end = st, end
	m.gen++
	p := n.parent
	if p == nil || p.kind == kindRoot {
		return
	}
	p.counts[st]++
	p.running--
	if (n.kind == kindTask || n.kind == kindPlay) && st.success() && n.first == nil {
		m.collapse(n)
	}
	if p.superseded && p.running == 0 && !p.status.finished() {
		m.finishGroup(p, end)
	}
}

// finishGroup finishes a task or a play whose children have all finished:
// its status is the worst of theirs, its successful children are folded
// into its counts, and if it succeeded as a whole it collapses to one line
// printed above the live area.
func (m *liveModel) finishGroup(n *liveNode, end time.Time) {
	st := stOK
	any := false
	for s := numStatus - 1; s >= stSkipped; s-- {
		if n.counts[s] > 0 {
			if !any {
				st = s
			}
			any = true
		}
	}
	if any && st == stSkipped && n.counts[stOK] > 0 {
		st = stOK
	}
	if n.kind == kindPlay && st == stIgnored {
		st = stChanged // the play went on: an ignored failure is not the play's
	}
	for k := n.first; k != nil; {
		next := k.next
		if k.status.success() || k.kind == kindHost && k.status == st && k.msg == "" && k.attempts <= 1 {
			m.remove(k) // the task's row says it all
		}
		k = next
	}
	latest := end
	if n.last != nil && n.last.end.After(latest) {
		latest = n.last.end
	}
	if n.parent == nil || n.parent.kind == kindRoot {
		// A play: finish does not collapse what has no group above.
		m.finish(n, st, latest)
		if st.success() && n.first == nil {
			m.collapse(n)
		}
		return
	}
	m.finish(n, st, latest)
}

// collapse prints a finished, successful node as one line above the live
// area (under the headers of its ancestors, printed once) and removes it.
func (m *liveModel) collapse(n *liveNode) {
	if !m.plain && !(n.kind == kindPlay && n.headerOut) {
		m.printCollapsed(n)
	}
	m.remove(n)
}

// supersedeTask marks the current task done as far as Ansible is
// concerned: it finishes when its last host does.
func (m *liveModel) supersedeTask(task *liveNode, ts time.Time) {
	if task == nil || task.superseded {
		return
	}
	task.superseded = true
	if task.running == 0 {
		m.finishGroup(task, ts)
	}
}

// supersedePlay ends the current play: its current task is superseded,
// and the play finishes when its last task does.
func (m *liveModel) supersedePlay(play *liveNode, ts time.Time) {
	if play == nil || play.superseded {
		return
	}
	t := play.tree
	if t.task != nil && t.task.parent == play {
		m.supersedeTask(t.task, ts)
		t.task = nil
	}
	play.superseded = true
	if t.play == play {
		t.play = nil
	}
	if !play.status.finished() && play.running == 0 {
		m.finishGroup(play, ts)
	}
}

// Text kept from records is clipped to these many bytes.
const (
	maxLabelBytes = 200
	maxMsgBytes   = 400
)

// safeText returns s clipped to max bytes (at a rune boundary, marked
// with …) and escaped for a terminal: as it is when printable, else
// Go-quoted, as the pretty format writes a message. The result never
// shares memory with s, so that a record's strings are not kept alive.
func safeText(s string, max int) string {
	cut := false
	if len(s) > max {
		i := max
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, cut = s[:i], true
	}
	if !printable(s) {
		s = strconv.Quote(s)
	} else {
		s = strings.Clone(s)
	}
	if cut {
		s += "…"
	}
	return s
}
