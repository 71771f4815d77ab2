// Package cache holds the read-mostly interning map that the encoder's key
// cache and the transition key cache share.
package cache

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Bounded is a map for values built once and read on every call: reads of
// an entry that has settled are lock-free and allocate nothing, inserts cost
// amortised O(1), and it holds at most its limit of entries. Past the
// limit, Get still returns a freshly built value, which is simply not kept.
//
// The design is sync.Map's: a read-only map published through an atomic
// pointer, and a dirty map under a mutex holding the newer entries, merged
// into a new read-only map once they have been looked up as many times as
// the read-only map has entries, or once they outnumber it: a long run of
// distinct keys costs O(1) per insert, not O(n). Unlike a sync.Map it
// boxes no key into an interface, which would allocate on every lookup.
//
// The zero value is not usable: call New.
type Bounded[K comparable, V any] struct {
	read  atomic.Pointer[map[K]V]
	mu    sync.Mutex
	dirty map[K]V // entries not yet in read; under mu
	miss  int     // locked lookups since the last merge; under mu
	n     int     // entries in read and dirty; under mu
	limit int
	// hasDirty and full let a miss skip the lock when there is nothing
	// to find under it or no room to insert: the steady state of a cache
	// that has settled or filled up.
	hasDirty, full atomic.Bool
	// copied counts the entries copied by merges since New, for the test
	// that pins the amortised cost.
	copied atomic.Int64
}

// New returns a Bounded map that keeps at most limit entries.
func New[K comparable, V any](limit int) *Bounded[K, V] {
	c := &Bounded[K, V]{limit: limit}
	m := map[K]V{}
	c.read.Store(&m)
	return c
}

// Peek returns the value stored for k if it has settled in the read-only
// map: the lock-free hot path, small enough to inline. On a miss, call
// Load or Get.
func (c *Bounded[K, V]) Peek(k K) (V, bool) {
	v, ok := (*c.read.Load())[k]
	return v, ok
}

// Load returns the value stored for k.
func (c *Bounded[K, V]) Load(k K) (V, bool) {
	if v, ok := (*c.read.Load())[k]; ok {
		return v, true
	}
	if !c.hasDirty.Load() {
		var zero V
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loadLocked(k)
}

func (c *Bounded[K, V]) loadLocked(k K) (V, bool) {
	if v, ok := (*c.read.Load())[k]; ok {
		return v, true // merged meanwhile
	}
	v, ok := c.dirty[k]
	if ok {
		c.miss++
		c.maybeMerge()
	}
	return v, ok
}

// Get returns the value stored for k, or stores and returns build(k) when
// there is none. build runs outside any lock and may run more than once for
// the same key under contention; the first stored value wins. key is called
// on k before k is stored, so that a stored key does not pin a caller's
// larger buffer (strings.Clone, for instance); it may be nil.
func (c *Bounded[K, V]) Get(k K, build func(K) V, key func(K) K) V {
	v, _ := c.GetOrStore(k, build, key)
	return v
}

// GetOrStore is Get that also reports whether this call stored the value.
func (c *Bounded[K, V]) GetOrStore(k K, build func(K) V, key func(K) K) (V, bool) {
	if v, ok := (*c.read.Load())[k]; ok {
		return v, false
	}
	if c.full.Load() && !c.hasDirty.Load() {
		return build(k), false // nothing to find, no room to keep it
	}
	c.mu.Lock()
	if v, ok := c.loadLocked(k); ok {
		c.mu.Unlock()
		return v, false
	}
	full := c.n >= c.limit
	c.mu.Unlock()
	v := build(k)
	if full {
		return v, false // correct, only not reused
	}
	if key != nil {
		k = key(k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.loadLocked(k); ok {
		return old, false // another goroutine stored it first
	}
	if c.n >= c.limit {
		return v, false
	}
	if c.dirty == nil {
		c.dirty = map[K]V{}
	}
	c.dirty[k] = v
	c.hasDirty.Store(true)
	c.n++
	if c.n >= c.limit {
		// Full: publish everything now, so that from here on every
		// lookup, hit or miss, is lock-free.
		c.full.Store(true)
		c.merge()
		return v, true
	}
	c.maybeMerge()
	return v, true
}

// Len returns the number of entries kept.
func (c *Bounded[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// maybeMerge publishes read ∪ dirty when the dirty entries have been paid
// for: looked up or inserted at least as many times as read has entries.
// Caller holds mu.
func (c *Bounded[K, V]) maybeMerge() {
	if len(c.dirty) == 0 || c.miss+len(c.dirty) < len(*c.read.Load())+8 {
		return
	}
	c.merge()
}

// merge publishes read ∪ dirty. Caller holds mu.
func (c *Bounded[K, V]) merge() {
	next := maps.Clone(*c.read.Load())
	maps.Copy(next, c.dirty)
	c.copied.Add(int64(len(next)))
	c.read.Store(&next)
	c.dirty = nil
	c.hasDirty.Store(false)
	c.miss = 0
}
