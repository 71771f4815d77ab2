package progress

import (
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// SeedBody returns a progress event's seed-000 form as a MAP value:
// {eventType, progressEventType, details} with the details nested back. It
// reports false for records that are not progress events (transitions and
// ordinary logs).
//
// It exists for destinations that cannot unflatten attributes themselves
// (the Collector's OTTL cannot): otelbridge puts it in the body of records
// sent over OTLP. Leaf values are the record's own attribute values.
func SeedBody(r RecordReader) (attribute.Value, bool) {
	var (
		isEvent bool
		root    seedNode
	)
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		k := string(kv.Key)
		switch {
		case k == AttrEventType:
			isEvent = kv.Value.AsString() == EventType
		case strings.HasPrefix(k, DetailsPrefix):
			root.set(k[len(DetailsPrefix):], kv.Value)
		}
		return true
	})
	if !isEvent {
		return attribute.Value{}, false
	}
	details := attribute.MapValue()
	if root.children != nil {
		details = root.value()
	}
	return attribute.MapValue(
		attribute.String("eventType", EventType),
		attribute.String("progressEventType", r.EventName()),
		attribute.KeyValue{Key: "details", Value: details},
	), true
}

// seedNode is a detail path being nested back: a leaf or a map of children.
type seedNode struct {
	leaf     attribute.Value
	children map[string]*seedNode
}

func (n *seedNode) set(path string, v attribute.Value) {
	for {
		i := strings.Index(path, DetailsSeparator)
		if i < 0 {
			n.child(unescapeSegment(path)).leaf = v
			return
		}
		n = n.child(unescapeSegment(path[:i]))
		path = path[i+len(DetailsSeparator):]
	}
}

func (n *seedNode) child(seg string) *seedNode {
	if n.children == nil {
		n.children = map[string]*seedNode{}
	}
	c := n.children[seg]
	if c == nil {
		c = &seedNode{}
		n.children[seg] = c
	}
	return c
}

// value is the node as an attribute value; as in Decode, a path that runs
// through a leaf (only in records this package did not build) wins over it.
func (n *seedNode) value() attribute.Value {
	if n.children == nil {
		return n.leaf
	}
	keys := make([]string, 0, len(n.children))
	for k := range n.children {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kvs := make([]attribute.KeyValue, len(keys))
	for i, k := range keys {
		kvs[i] = attribute.KeyValue{Key: attribute.Key(k), Value: n.children[k].value()}
	}
	return attribute.MapValue(kvs...)
}
