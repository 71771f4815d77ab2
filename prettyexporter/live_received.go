package prettyexporter

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// Received is the live view's input for telemetry received from other processes (progressotel
// view): spans that arrive only when they end, and records whose spans the view may not have
// seen. A record with an event name opens the row of its span, labelled "span " and the span id's
// first 8 hex digits, under the tree's head; a span's parent not seen yet gets such a row too. When
// the span arrives, its row takes the span's name, moves under its parent's row and ends as the
// span ended (once its ancestors are named, or after 2 s); the trace's root span (no parent)
// becomes the tree's head, its header, which names the sender's service.name until then. A tree
// whose root never arrives ends when nothing came for a while (EndSilent) or at Shutdown.
//
// It implements go.opentelemetry.io/otel/sdk/log.Exporter and sdk/trace.SpanExporter, and is safe
// for concurrent use. Its Shutdown and ForceFlush are the exporter's.
type Received struct {
	e        *LiveExporter
	maxRows  int
	lastWall map[liveKey]time.Time  // guarded by e.mu: when each tree last received something
	ended    map[spanKey]struct{}   // guarded by e.mu: spans received, so that a late record opens no row
	unnamed  map[*liveNode]struct{} // guarded by e.mu: the rows opened before their spans arrived
	held     []heldEnd              // guarded by e.mu: ends waiting for their ancestors' names
	cut      [2]int                 // guarded by e.mu: traces ended past the limit of trees; those told
}

// heldEnd is a span received whose row has an ancestor not named yet: it ends when the ancestors
// are named, when the trace's root arrives, or after heldGrace, so that its line printed above the
// live area names its parents rather than their span ids.
type heldEnd struct {
	s    sdktrace.ReadOnlySpan
	wall time.Time
}

// heldGrace is how long an end waits for its ancestors' spans: a sender exports a batch every few
// seconds at most (the SDKs' default is 5 s), and one process's parent span may never come.
const heldGrace = 2 * time.Second

// maxEnded bounds Received.ended; past it, it starts again empty.
const maxEnded = 1 << 16

var (
	_ sdklog.Exporter       = (*Received)(nil)
	_ sdktrace.SpanExporter = (*Received)(nil)
)

// Received returns the view's input for telemetry received from other processes, keeping at most
// maxRows rows per trace (below 1: only the exporter's node limit); the rows past it are counted
// and shown as "… N more".
func (e *LiveExporter) Received(maxRows int) *Received {
	return &Received{e: e, maxRows: maxRows, lastWall: map[liveKey]time.Time{}, ended: map[spanKey]struct{}{},
		unnamed: map[*liveNode]struct{}{}}
}

// Export updates the model with records received: as LiveExporter.Export, after opening the rows
// of their spans.
func (r *Received) Export(ctx context.Context, records []sdklog.Record) error {
	if r.e.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	if err := ctx.Err(); err != nil || len(records) == 0 {
		return err
	}
	r.e.update(func(m *liveModel, wall time.Time) {
		m.batched = true
		for i := range records {
			rec := &records[i]
			if tid, sid := rec.TraceID(), rec.SpanID(); tid.IsValid() && sid.IsValid() && rec.EventName() != "" {
				k := spanKey{tid, sid}
				if _, done := r.ended[k]; !done && m.spans[k] == nil {
					if t := r.tree(m, tid, rec.Resource(), recordTime(rec), wall); t != nil {
						r.openRow(m, t, sid, cmp.Or(recordTime(rec), wall))
					}
				}
			}
			m.apply(rec, wall)
		}
	})
	return nil
}

// ExportSpans gives each span's row (opened now if no record named it) its name and its place
// under its parent, then ends the rows in the order the spans ended: the spans of one request are
// all placed before any collapses, so that a finished row is printed under its parents' names.
func (r *Received) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if r.e.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	if err := ctx.Err(); err != nil || len(spans) == 0 {
		return err
	}
	r.e.update(func(m *liveModel, wall time.Time) {
		m.batched = true
		placed := make([]sdktrace.ReadOnlySpan, 0, len(spans))
		for _, s := range spans {
			if r.place(m, s, wall) {
				placed = append(placed, s)
			}
		}
		slices.SortStableFunc(placed, func(a, b sdktrace.ReadOnlySpan) int { return a.EndTime().Compare(b.EndTime()) })
		for _, s := range placed {
			r.held = append(r.held, heldEnd{s, wall})
		}
		r.release(m, wall)
	})
	return nil
}

// release ends the held spans whose ancestors are named, whose trace's root has arrived, or that
// waited heldGrace, in the order they were held; and forgets the unnamed rows that have gone.
func (r *Received) release(m *liveModel, wall time.Time) {
	kept := r.held[:0]
	for _, h := range r.held {
		if r.waits(m, h.s) && wall.Sub(h.wall) < heldGrace && len(r.held) <= DefaultLiveMaxNodes {
			kept = append(kept, h)
			continue
		}
		r.end(m, h.s, wall)
	}
	clear(r.held[len(kept):])
	r.held = kept
	for n := range r.unnamed {
		if n.parent == nil || m.trees[n.tree.key] != n.tree {
			delete(r.unnamed, n)
		}
	}
}

// waits reports whether s's row has an ancestor not named yet, in a trace whose root has not
// arrived.
func (r *Received) waits(m *liveModel, s sdktrace.ReadOnlySpan) bool {
	sc := s.SpanContext()
	n := m.spans[spanKey{sc.TraceID(), sc.SpanID()}]
	if n == nil || n.tree.root.span.IsValid() {
		return false
	}
	for a := n.parent; a != nil; a = a.parent {
		if _, ok := r.unnamed[a]; ok {
			return true
		}
	}
	return false
}

// EndSilent ends as cancelled, with the message "silent for …", every tree that received nothing
// for after, and returns how many it ended. It also prints how many trees ended early, past the
// exporter's limit of trees (WithLiveLimits), when that count grew: call it every second or so.
func (r *Received) EndSilent(after time.Duration) (n int) {
	r.e.update(func(m *liveModel, wall time.Time) {
		r.release(m, wall)
		for i := 0; i < len(m.list); {
			t := m.list[i]
			last, ok := r.lastWall[t.key]
			if !ok {
				r.lastWall[t.key] = wall // a tree of the exporter's own
			}
			if !ok || wall.Sub(last) < after || !t.closing.IsZero() {
				i++
				continue
			}
			if t.status == stRunning {
				t.status = stCancelled
				t.msg = "silent for " + after.String() + ": no record or span since"
			}
			t.end = t.seen
			cancelOpen(&t.root, t.seen)
			m.endTree(t, wall)
			n++
		}
		for k := range r.lastWall {
			if m.trees[k] == nil {
				delete(r.lastWall, k)
			}
		}
		if r.cut[0] > r.cut[1] {
			r.cut[1] = r.cut[0]
			m.noteText([]byte("… " + strconv.Itoa(r.cut[0]) + " traces ended early: more than " + strconv.Itoa(m.maxTrees) +
				" at once (the least recently updated ends)"))
		}
	})
	return n
}

// cancelOpen ends n's spans still running as cancelled: a silent trace did not say how they ended.
func cancelOpen(n *liveNode, end time.Time) {
	for k := n.first; k != nil; k = k.next {
		cancelOpen(k, end)
		if k.kind == kindSpan && !k.status.finished() {
			k.status, k.end = stCancelled, end
			n.counts[stCancelled]++
		}
	}
}

// ForceFlush is the exporter's.
func (r *Received) ForceFlush(ctx context.Context) error { return r.e.ForceFlush(ctx) }

// Shutdown is the exporter's.
func (r *Received) Shutdown(ctx context.Context) error { return r.e.Shutdown(ctx) }

// semconvServiceName is the resource attribute that names a sender.
const semconvServiceName = "service.name"

// tree returns the tree of trace tid, creating it, or nil when it has ended or the view has no
// trees; res is the sender's, start the time of what arrived.
func (r *Received) tree(m *liveModel, tid trace.TraceID, res *resource.Resource, start, wall time.Time) *liveTree {
	key := liveKey{trace: tid}
	if _, ok := m.endedSet[key]; ok || m.flat {
		return nil
	}
	if m.trees[key] == nil && len(m.list) >= m.maxTrees {
		// m.tree ends the least recently updated: not done, cut.
		r.cut[0]++
		v := slices.MinFunc(m.list, func(a, b *liveTree) int { return cmp.Compare(a.touched, b.touched) })
		if v.status == stRunning {
			v.status, v.msg = stCancelled, "cut: more than "+strconv.Itoa(m.maxTrees)+" traces at once"
			v.end = v.seen
			cancelOpen(&v.root, v.seen)
		}
	}
	t := m.tree(key, wall)
	if t.title == "" {
		// Until its root span names it: the sender's service.name.
		if v, ok := res.Set().Value(semconvServiceName); ok {
			t.title = safeText(v.String(), maxLabelBytes)
		}
	}
	if start.IsZero() {
		start = wall
	}
	if t.start.IsZero() || start.Before(t.start) {
		t.start = start
	}
	t.see(start, wall)
	r.lastWall[key] = wall
	return t
}

// full reports whether t has its maxRows rows, counting the refused one.
func (r *Received) full(t *liveTree) bool {
	if r.maxRows < 1 || t.spanRows < r.maxRows {
		return false // spanRows counts every row ever made: below the bound, so is the tree
	}
	if countRows(&t.root) >= r.maxRows {
		t.hidden++
		return true
	}
	return false
}

func countRows(n *liveNode) (c int) {
	for k := n.first; k != nil; k = k.next {
		c += 1 + countRows(k)
	}
	return c
}

// openRow opens the row of span sid before the span arrives, under the tree's head.
func (r *Received) openRow(m *liveModel, t *liveTree, sid trace.SpanID, start time.Time) *liveNode {
	if r.full(t) {
		return nil
	}
	n := m.newNode(t, &t.root, kindSpan, "span "+sid.String()[:8], start)
	if n == nil {
		return nil
	}
	n.span = sid
	m.spans[spanKey{t.key.trace, sid}] = n
	t.spanRows++
	m.gen++
	r.unnamed[n] = struct{}{}
	return n
}

// place names the row of a span received and puts it under its parent's row; it reports whether
// the span has a row to end.
func (r *Received) place(m *liveModel, s sdktrace.ReadOnlySpan, wall time.Time) bool {
	sc, parent := s.SpanContext(), s.Parent()
	if !sc.IsValid() {
		return false
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	start := s.StartTime()
	if start.IsZero() {
		start = wall
	}
	t := r.tree(m, tid, s.Resource(), start, wall)
	if t == nil {
		return false
	}
	m.touch(t, start, wall)
	name := safeText(s.Name(), maxLabelBytes)
	n := m.spans[spanKey{tid, sid}]
	if !parent.SpanID().IsValid() || parent.TraceID() != tid {
		// The trace's root: the tree's head, unless the tree has one (a second root is a top row).
		if !t.root.span.IsValid() || t.root.span == sid {
			if n != nil && n != &t.root {
				for k := n.first; k != nil; {
					next := k.next
					move(k, &t.root)
					k = next
				}
				delete(r.unnamed, n)
				for i, c := range n.counts {
					t.root.counts[i] += c // its parts that collapsed
				}
				m.remove(n)
			}
			n = &t.root
			t.root.span = sid
			m.spans[spanKey{tid, sid}] = n
			if t.op == "" {
				t.start, t.title = start, name
			}
		} else if n == nil {
			if n = r.openRow(m, t, sid, start); n == nil {
				return false
			}
		}
	} else {
		pn := m.spans[spanKey{tid, parent.SpanID()}]
		if pn == nil {
			pn = r.openRow(m, t, parent.SpanID(), start)
		}
		if n == nil {
			if n = r.openRow(m, t, sid, start); n == nil {
				return false
			}
		}
		if pn != nil && n.parent != pn && !below(pn, n) {
			move(n, pn)
		}
	}
	if n != &t.root {
		n.label, n.start = name, start
	}
	delete(r.unnamed, n)
	return true
}

// end ends the row of a span placed.
func (r *Received) end(m *liveModel, s sdktrace.ReadOnlySpan, wall time.Time) {
	sc := s.SpanContext()
	if len(r.ended) >= maxEnded {
		clear(r.ended)
	}
	r.ended[spanKey{sc.TraceID(), sc.SpanID()}] = struct{}{}
	out := ""
	for _, kv := range s.Attributes() {
		if string(kv.Key) == outcome.Key {
			out = kv.Value.AsString()
		}
	}
	st := s.Status()
	end := s.EndTime()
	if end.IsZero() {
		end = wall
	}
	m.spanEnd(sc, end, st.Code, st.Description, out, wall)
}

// below reports whether n is a or under a.
func below(n, a *liveNode) bool {
	for ; n != nil; n = n.parent {
		if n == a {
			return true
		}
	}
	return false
}

// move makes n the last child of p, with its subtree.
func move(n, p *liveNode) {
	old := n.parent
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		old.first = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		old.last = n.prev
	}
	if n.status.finished() {
		old.counts[n.status]--
		p.counts[n.status]++
	}
	n.parent, n.prev, n.next = p, p.last, nil
	if p.last == nil {
		p.first = n
	} else {
		p.last.next = n
	}
	p.last = n
}
