package progress

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"
)

// sequencer hands out contiguous sequence numbers per trace (operation), or
// per resource when ctx has no span, or per Recorder when neither is known.
// It remembers at most maxSequences keys, forgetting the oldest first; a
// forgotten key starts again at 1.
type sequencer struct {
	mu    sync.Mutex
	m     map[seqKey]*int64 // a pointer: one map lookup per call, not two
	order []seqKey          // ring of keys in insertion order
	next0 int
	// The last key and its counter: the records of one operation tend to
	// come in runs, and a comparison is cheaper than hashing the key.
	last  seqKey
	lastC *int64
}

type seqKey struct {
	trace       trace.TraceID
	typ, ns, id string
}

const maxSequences = 4096

func (s *sequencer) init() { s.m = make(map[seqKey]*int64) }

func (s *sequencer) next(ctx context.Context, env *Envelope) int64 {
	var k seqKey
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		k.trace = sc.TraceID()
	} else {
		k.typ, k.ns, k.id = env.Resource.Type, env.Resource.Namespace, env.Resource.ID
	}
	s.mu.Lock()
	if s.lastC != nil && s.last == k {
		*s.lastC++
		n := *s.lastC
		s.mu.Unlock()
		return n
	}
	c, ok := s.m[k]
	if !ok {
		if len(s.order) < maxSequences {
			s.order = append(s.order, k)
		} else {
			delete(s.m, s.order[s.next0])
			s.order[s.next0] = k
			s.next0 = (s.next0 + 1) % maxSequences
		}
		c = new(int64)
		s.m[k] = c
	}
	s.last, s.lastC = k, c
	*c++
	n := *c
	s.mu.Unlock()
	return n
}
