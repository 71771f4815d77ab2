package progress

import (
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
)

// detailsRoot is DetailsPrefix without its trailing separator: the parent
// of every top-level detail key.
const detailsRoot = "progress.details"

// maxCachedKeys bounds the key cache of one Recorder. Past it, new keys are
// still correct, only built per call.
const maxCachedKeys = 4096

// keyNode is one detail path in the key cache: its full attribute key and
// the children seen below it. The cache is a tree, so a lookup hashes only
// the new segment, never the whole parent path.
type keyNode struct {
	key    attribute.Key // full attribute key
	secret bool          // the last segment names a secret
	// kids maps an unescaped segment to its node. Reads are lock-free;
	// writers copy the map under keyCache.mu.
	kids atomic.Pointer[map[string]*keyNode]
}

// keyCache interns flattened detail keys, so that the hot path builds no
// strings for keys it has seen. Set red before use; do not copy it.
type keyCache struct {
	once  sync.Once
	mu    sync.Mutex
	n     int     // nodes stored, at most maxCachedKeys
	root  keyNode // detailsRoot: the parent of every top-level detail
	value keyNode // detailsRoot + ".value": a top-level non-map value
	red   *Redactor
}

// ready names the fixed nodes on first use, so that a keyCache needs no
// constructor.
func (c *keyCache) ready() {
	c.once.Do(func() {
		c.root.key = detailsRoot
		c.value.key = detailsRoot + DetailsSeparator + "value"
	})
}

// child returns the node of segment seg below parent. Past maxCachedKeys
// it returns a node that is not stored: correct, only not reused.
func (c *keyCache) child(parent *keyNode, seg string) *keyNode {
	if m := parent.kids.Load(); m != nil {
		if n, ok := (*m)[seg]; ok {
			return n
		}
	}
	n := &keyNode{
		key:    attribute.Key(string(parent.key) + DetailsSeparator + escapeSegment(seg)),
		secret: c.red.SecretKey(seg),
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := parent.kids.Load()
	size := 0
	if old != nil {
		if n2, ok := (*old)[seg]; ok {
			return n2 // another goroutine stored it first
		}
		size = len(*old)
	}
	if c.n >= maxCachedKeys {
		return n
	}
	next := make(map[string]*keyNode, size+1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[strings.Clone(seg)] = n // do not keep a caller's larger string alive
	parent.kids.Store(&next)
	c.n++
	return n
}

// escapeSegment makes a detail key safe to join: '%' becomes "%25" and '.'
// becomes "%2E", so a key containing the separator never collides with a
// nested path. UnescapeSegment undoes it.
func escapeSegment(s string) string {
	if !strings.ContainsAny(s, ".%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '%':
			b.WriteString("%25")
		case '.':
			b.WriteString("%2E")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// unescapeSegment reverses escapeSegment. Malformed escapes are kept as
// they are.
func unescapeSegment(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			switch s[i+1 : i+3] {
			case "25":
				b.WriteByte('%')
				i += 2
				continue
			case "2E", "2e":
				b.WriteByte('.')
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
