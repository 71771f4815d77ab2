package progress

import (
	"strings"
	"sync"
	"sync/atomic"
)

// detailsRoot is DetailsPrefix without its trailing separator: the parent
// of every top-level detail key.
const detailsRoot = "progress.details"

// maxCachedKeys bounds the key cache of one Recorder. Past it, new keys are
// still correct, only built per call.
const maxCachedKeys = 4096

type pathKey struct{ parent, seg string }

type keyEntry struct {
	key    string // full attribute key
	secret bool   // the segment names a secret
}

// keyCache interns flattened detail keys, so that the hot path builds no
// strings for keys it has seen. Reads are lock-free (copy on write).
type keyCache struct {
	mu  sync.Mutex
	m   atomic.Pointer[map[pathKey]keyEntry]
	red *Redactor
}

func (c *keyCache) child(parent, seg string) keyEntry {
	if m := c.m.Load(); m != nil {
		if e, ok := (*m)[pathKey{parent, seg}]; ok {
			return e
		}
	}
	e := keyEntry{key: parent + DetailsSeparator + escapeSegment(seg), secret: c.red.SecretKey(seg)}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n >= maxCachedKeys {
		return e
	}
	next := make(map[pathKey]keyEntry, n+1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[pathKey{strings.Clone(parent), strings.Clone(seg)}] = e
	c.m.Store(&next)
	return e
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
