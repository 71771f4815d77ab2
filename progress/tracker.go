package progress

import (
	"context"
	"strings"
	"sync"
	"time"
)

// DefaultTrackerCapacity is the number of resources a Tracker remembers
// when no WithCapacity option is given.
const DefaultTrackerCapacity = 10000

// maxTrackedStreams bounds the streams remembered per resource, so that a
// caller inventing stream names cannot grow one entry without limit. Real
// resources have two or three (provisioning, lifecycle, health).
const maxTrackedStreams = 16

// Tracker makes condition transitions edge-triggered: Observe emits a
// transition only when the (status, reason, message) tuple of a resource's
// stream differs from the one it saw last, and fills Transition.Previous
// with that last tuple. The rules, which the tests pin down:
//   - Any change of status, reason or message, a message-only one too, is a
//     transition; the same tuple again emits nothing. Every distinct
//     transition is emitted in full: never merged, counted into one record
//     or rewritten (unlike Kubernetes event aggregation).
//   - The key is (Resource.Type, Resource.Namespace, Resource.ID, Stream).
//     When Resource.UID is set and differs from the UID last seen for that
//     key, the object was re-created under the same name: its remembered
//     state is dropped first.
//   - At most the capacity's number of resources are remembered, the least
//     recently observed evicted first; Forget drops a deleted one at once.
//   - A resource the Tracker does not remember (first observation,
//     evicted, forgotten, a process restart) is emitted with Previous nil,
//     even when it repeats what was emitted before: consumers read nil as
//     "unknown", not "created". RecordIfChanged against a condition
//     persisted on the object survives restarts.
//
// Its methods are safe for concurrent use. Racing observations of one key
// are decided under a lock in one order, and every emitted record's
// Previous is the state emitted just before it in that order, though
// records of one key may reach the exporter out of that order.
type Tracker struct {
	rec *Recorder // nil: Default() at each emission

	mu       sync.Mutex
	capacity int
	m        map[resourceKey]*trackedResource
	lru      trackedResource // sentinel: lru.next is the most recent
	stats    TrackerStats
}

// TrackerStats are a Tracker's counters since it was created.
type TrackerStats struct {
	Tracked    int   // resources remembered now
	Emitted    int64 // transitions handed to the Recorder
	Suppressed int64 // observations equal to the remembered state
	Evicted    int64 // resources dropped for capacity (not by Forget)
}

// TrackerOption configures a Tracker.
type TrackerOption func(*Tracker)

// WithCapacity sets how many resources a Tracker remembers (each with all
// its streams). n <= 0 keeps DefaultTrackerCapacity.
func WithCapacity(n int) TrackerOption {
	return func(t *Tracker) {
		if n > 0 {
			t.capacity = n
		}
	}
}

// NewTracker returns a Tracker that emits through r, or through the
// Default Recorder of the moment when r is nil (so SetDefault applies).
func NewTracker(r *Recorder, opts ...TrackerOption) *Tracker {
	t := &Tracker{rec: r, capacity: DefaultTrackerCapacity}
	for _, o := range opts {
		o(t)
	}
	t.m = make(map[resourceKey]*trackedResource)
	t.lru.next, t.lru.prev = &t.lru, &t.lru
	return t
}

// resourceKey is comparable and built from the caller's strings, so a
// lookup allocates nothing.
type resourceKey struct{ typ, namespace, id string }

// trackedResource is an entry of the map and of the intrusive LRU list.
type trackedResource struct {
	key        resourceKey
	uid        string
	streams    []trackedStream // in first-seen order
	prev, next *trackedResource
}

type trackedStream struct {
	stream string
	cond   Condition
}

// Observe emits tr through the Recorder when its condition differs from the
// last one observed for the same resource and stream, with Previous set to
// that last condition (nil when unknown). It reports whether it emitted.
//
// An invalid transition (bad stream name, empty status) is not remembered:
// Observe returns the Recorder's error, wrapping ErrInvalidEvent. A nil ctx
// is treated as context.Background(). The resource is tr.Resource
// completed by the envelope of ctx (ContextWithEnvelope). Call Observe after the new condition
// has been persisted, so that a failed write emits nothing; see
// RecordIfChanged.
func (t *Tracker) Observe(ctx context.Context, tr Transition) (emitted bool, err error) {
	if ctx != nil {
		withScope(ctx, &tr.Envelope) // the key may come from the context
	}
	key := resourceKey{tr.Resource.Type, tr.Resource.Namespace, tr.Resource.ID}

	t.mu.Lock()
	e := t.m[key]
	var s *trackedStream
	recreated := false
	if e != nil {
		t.touch(e)
		switch {
		case tr.Resource.UID == "" || tr.Resource.UID == e.uid:
			s = e.find(tr.Stream)
		case e.uid == "":
			e.uid = strings.Clone(tr.Resource.UID) // learnt once
			s = e.find(tr.Stream)
		default:
			recreated = true
		}
	}
	// The hot path: a remembered stream with the same condition. The
	// stream and status were validated when they were remembered.
	if s != nil && s.cond == tr.Condition {
		t.stats.Suppressed++
		t.mu.Unlock()
		return false, nil
	}
	if tr.Status == "" || validateStream(tr.Stream) != nil {
		t.mu.Unlock()
		// Not remembered; the Recorder returns the error and counts it.
		return false, t.recorder().RecordTransition(ctx, tr)
	}
	switch {
	case e == nil:
		e = t.insert(key, tr.Resource.UID)
	case recreated:
		clear(e.streams) // deleted and re-created: nothing is known
		e.streams = e.streams[:0]
		e.uid = strings.Clone(tr.Resource.UID)
	}
	if s != nil {
		prev := s.cond
		tr.Previous = &prev
	} else {
		tr.Previous = nil
		s = e.addStream(tr.Stream)
	}
	s.cond = cloneCondition(tr.Condition)
	if tr.Time.IsZero() {
		// Stamped under the lock, so the timestamps of one key follow the
		// order in which its transitions were decided.
		tr.Time = time.Now()
	}
	t.stats.Emitted++
	t.mu.Unlock()

	// Outside the lock: an exporter that blocks must not stall every other
	// reconciler's unchanged observations.
	return true, t.recorder().RecordTransition(ctx, tr)
}

// Forget drops everything remembered about res (matched by Type, Namespace
// and ID) on every stream, e.g. when the object is deleted. Its next
// observation is a first one, with Previous nil.
func (t *Tracker) Forget(res Resource) {
	key := resourceKey{res.Type, res.Namespace, res.ID}
	t.mu.Lock()
	if e := t.m[key]; e != nil {
		t.unlink(e)
		delete(t.m, key)
	}
	t.mu.Unlock()
}

// Len returns the number of resources remembered.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// Stats returns the Tracker's counters.
func (t *Tracker) Stats() TrackerStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.Tracked = len(t.m)
	return s
}

func (t *Tracker) recorder() *Recorder {
	if t.rec != nil {
		return t.rec
	}
	return Default()
}

// touch moves e to the front of the LRU list. Caller holds t.mu.
func (t *Tracker) touch(e *trackedResource) {
	if t.lru.next == e {
		return
	}
	t.unlink(e)
	t.pushFront(e)
}

// insert adds a new entry, evicting the least recently used one when the
// Tracker is full. Caller holds t.mu.
func (t *Tracker) insert(key resourceKey, uid string) *trackedResource {
	var e *trackedResource
	if len(t.m) >= t.capacity {
		// Reuse the evicted entry: a full Tracker then allocates no new
		// entries, only the strings of the new key.
		e = t.lru.prev
		t.unlink(e)
		delete(t.m, e.key)
		t.stats.Evicted++
		clear(e.streams)
		*e = trackedResource{streams: e.streams[:0]}
	} else {
		e = &trackedResource{}
	}
	// Cloned so that a long-lived entry does not pin a large buffer the
	// caller's strings may point into (a decoded object, say).
	e.key = resourceKey{strings.Clone(key.typ), strings.Clone(key.namespace), strings.Clone(key.id)}
	e.uid = strings.Clone(uid)
	t.m[e.key] = e
	t.pushFront(e)
	return e
}

func (t *Tracker) pushFront(e *trackedResource) {
	e.prev, e.next = &t.lru, t.lru.next
	t.lru.next.prev = e
	t.lru.next = e
}

func (t *Tracker) unlink(e *trackedResource) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (e *trackedResource) find(stream string) *trackedStream {
	for i := range e.streams {
		if e.streams[i].stream == stream {
			return &e.streams[i]
		}
	}
	return nil
}

// addStream remembers a new stream of e, dropping its oldest stream when it
// already has maxTrackedStreams.
func (e *trackedResource) addStream(stream string) *trackedStream {
	if len(e.streams) >= maxTrackedStreams {
		copy(e.streams, e.streams[1:])
		e.streams = e.streams[:len(e.streams)-1]
	}
	e.streams = append(e.streams, trackedStream{stream: strings.Clone(stream)})
	return &e.streams[len(e.streams)-1]
}

func cloneCondition(c Condition) Condition {
	return Condition{strings.Clone(c.Status), strings.Clone(c.Reason), strings.Clone(c.Message)}
}

// RecordIfChanged is the stateless edge-trigger for the reconcile pattern:
// it emits t only when t.Condition differs from prior, the condition read
// from the object before this reconcile changed it. Previous is set to
// prior, or to nil when prior is zero (the condition did not exist). It
// reports whether it emitted; the error is RecordTransition's.
//
// Call it after the status write has been persisted, never before: a write
// that fails (a conflict, a lost leader election) then emits nothing, and
// the retry, which reads the same prior, emits the transition once it
// really happened.
//
// Messages must be fixed, user-safe text, never raw error strings, which
// can leak internals (CWE-209): tenants read them.
func (r *Recorder) RecordIfChanged(ctx context.Context, prior Condition, t Transition) (bool, error) {
	if prior == t.Condition {
		return false, nil
	}
	if prior.IsZero() {
		t.Previous = nil
	} else {
		t.Previous = &prior
	}
	if err := r.RecordTransition(ctx, t); err != nil {
		return false, err
	}
	return true, nil
}
