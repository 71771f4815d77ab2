package encode

import (
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/cache"
	"github.com/progressotel/progressotel/progress/internal/redact"
	"github.com/progressotel/progressotel/tncomessage"
)

// maxCachedKeys bounds the key cache of one Recorder. Past it, new keys are
// still correct, only built per call.
const maxCachedKeys = 4096

// maxCachedSegment is the longest segment whose key is cached, so that a
// Recorder fed long keys cannot pin megabytes of them.
const maxCachedSegment = 256

// keyNode is one detail path: its full attribute key, whether its last
// segment names a secret, and the children seen below it. The cache is a
// tree, so a lookup hashes only the new segment (a string key hashes
// about three times faster than a struct of parent and segment).
type keyNode struct {
	key    attribute.Key
	secret bool
	kids   atomic.Pointer[cache.Bounded[string, *keyNode]]
}

// KeyCache interns flattened detail keys, so that the hot path builds no
// strings for keys it has seen. Reads are lock-free once a key has
// settled, inserts cost amortised O(1) (see cache.Bounded). One KeyCache
// belongs to one Recorder and its Rules. It keeps at most maxCachedKeys
// keys (a few more when goroutines race at the bound).
type KeyCache struct {
	root  keyNode // DetailsRoot: the parent of every top-level detail
	value keyNode // DetailsRoot + ".value": a top-level non-map value
	red   *redact.Rules
	n     atomic.Int64 // keys kept
	mu    sync.Mutex   // creates kids maps
	// secret remembers SecretKey for the keys of maps inside slices,
	// which are not flattened: the same few keys repeat across elements
	// (a fact name per host), and matching every fragment costs more
	// than a lookup.
	secret *cache.Bounded[string, bool]
}

// NewKeyCache returns an empty cache for keys redacted by red.
func NewKeyCache(red *redact.Rules) *KeyCache {
	return &KeyCache{
		root:   keyNode{key: tncomessage.DetailsRoot},
		value:  keyNode{key: tncomessage.DetailsPrefix + tncomessage.ValueKey},
		red:    red,
		secret: cache.New[string, bool](maxCachedKeys),
	}
}

// secretKey is red.SecretKey(seg), remembered.
func (c *KeyCache) secretKey(seg string) bool {
	if len(seg) > maxCachedSegment {
		return c.red.SecretKey(seg)
	}
	if v, ok := c.secret.Peek(seg); ok {
		return v
	}
	return c.secret.Get(seg, c.red.SecretKey, strings.Clone)
}

// lookup returns the cached node of segment seg below parent.
func (c *KeyCache) lookup(parent *keyNode, seg string) (*keyNode, bool) {
	kids := parent.kids.Load()
	if kids == nil {
		return nil, false
	}
	if n, ok := kids.Peek(seg); ok {
		return n, true
	}
	return kids.Load(seg)
}

// child returns the node of segment seg below parent, building it and,
// within the bound, caching it when it is new.
func (c *KeyCache) child(parent *keyNode, seg string) *keyNode {
	if len(seg) > maxCachedSegment || c.n.Load() >= maxCachedKeys {
		return c.build(parent, seg)
	}
	kids := parent.kids.Load()
	if kids == nil {
		c.mu.Lock()
		if kids = parent.kids.Load(); kids == nil {
			kids = cache.New[string, *keyNode](maxCachedKeys)
			parent.kids.Store(kids)
		}
		c.mu.Unlock()
	}
	n, stored := kids.GetOrStore(seg, func(seg string) *keyNode { return c.build(parent, seg) }, strings.Clone)
	if stored {
		c.n.Add(1)
	}
	return n
}

func (c *KeyCache) build(parent *keyNode, seg string) *keyNode {
	return &keyNode{
		key:    attribute.Key(string(parent.key) + tncomessage.DetailsSeparator + tncomessage.EscapeSegment(seg)),
		secret: c.red.SecretKey(seg),
	}
}

// keyLen is the length of child(parent, seg).key, without building it.
func keyLen(parent *keyNode, seg string) int {
	return len(parent.key) + len(tncomessage.DetailsSeparator) + tncomessage.EscapedLen(seg)
}
