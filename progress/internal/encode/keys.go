package encode

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/cache"
	"github.com/progressotel/progressotel/internal/wireformat"
	"github.com/progressotel/progressotel/progress/internal/redact"
)

// maxCachedKeys bounds the key cache of one Recorder. Past it, new keys are
// still correct, only built per call.
const maxCachedKeys = 4096

// maxCachedSegment is the longest segment whose key is cached, so that a
// Recorder fed long keys cannot pin megabytes of them.
const maxCachedSegment = 256

// keyNode is one detail path: its full attribute key and whether its last
// segment names a secret.
type keyNode struct {
	key    attribute.Key
	secret bool
}

// childKey is a segment below a parent node: the cache hashes only the new
// segment and a pointer, never the whole parent path.
type childKey struct {
	parent *keyNode
	seg    string
}

// KeyCache interns flattened detail keys, so that the hot path builds no
// strings for keys it has seen. Reads are lock-free once a key has
// settled, inserts cost amortised O(1) (see cache.Bounded). One KeyCache
// belongs to one Recorder and its Rules.
type KeyCache struct {
	root  keyNode // DetailsRoot: the parent of every top-level detail
	value keyNode // DetailsRoot + ".value": a top-level non-map value
	red   *redact.Rules
	m     *cache.Bounded[childKey, *keyNode]
	// secret remembers SecretKey for the keys of maps inside slices,
	// which are not flattened: the same few keys repeat across elements
	// (a fact name per host), and matching every fragment costs more
	// than a lookup.
	secret *cache.Bounded[string, bool]
}

// NewKeyCache returns an empty cache for keys redacted by red.
func NewKeyCache(red *redact.Rules) *KeyCache {
	return &KeyCache{
		root:   keyNode{key: wireformat.DetailsRoot},
		value:  keyNode{key: wireformat.DetailsPrefix + wireformat.ValueKey},
		red:    red,
		m:      cache.New[childKey, *keyNode](maxCachedKeys),
		secret: cache.New[string, bool](maxCachedKeys),
	}
}

// secretKey is red.SecretKey(seg), remembered.
func (c *KeyCache) secretKey(seg string) bool {
	if len(seg) > maxCachedSegment {
		return c.red.SecretKey(seg)
	}
	if v, ok := c.secret.Load(seg); ok {
		return v
	}
	return c.secret.Get(seg, c.red.SecretKey, strings.Clone)
}

// lookup returns the cached node of segment seg below parent.
func (c *KeyCache) lookup(parent *keyNode, seg string) (*keyNode, bool) {
	if len(seg) > maxCachedSegment {
		return nil, false
	}
	return c.m.Load(childKey{parent, seg})
}

// child returns the node of segment seg below parent, building and
// caching it when it is new.
func (c *KeyCache) child(parent *keyNode, seg string) *keyNode {
	k := childKey{parent, seg}
	if len(seg) > maxCachedSegment {
		return c.build(k)
	}
	return c.m.Get(k, c.build, cloneChildKey)
}

func (c *KeyCache) build(k childKey) *keyNode {
	return &keyNode{
		key:    attribute.Key(string(k.parent.key) + wireformat.DetailsSeparator + wireformat.EscapeSegment(k.seg)),
		secret: c.red.SecretKey(k.seg),
	}
}

// cloneChildKey keeps a stored segment from pinning a caller's larger
// string.
func cloneChildKey(k childKey) childKey { return childKey{k.parent, strings.Clone(k.seg)} }

// keyLen is the length of child(parent, seg).key, without building it.
func keyLen(parent *keyNode, seg string) int {
	return len(parent.key) + len(wireformat.DetailsSeparator) + wireformat.EscapedLen(seg)
}
