package tncomessage

import (
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// NestOp is one step of Nest.
type NestOp uint8

const (
	// Open starts a nested map under the key.
	Open NestOp = iota
	// Leaf is a key and its value in the current map.
	Leaf
	// Close ends the map opened last.
	Close
)

// Nest turns flattened detail paths back into nested maps, as steps:
// Open(key) ... Close() around each nested map, Leaf(key, value) for each
// value, keys unescaped and sorted within each map. It sorts d in place
// and builds nothing, so each reader builds what it needs from the same
// decisions: among equal paths the last wins; when a path runs through
// another's leaf ("a" and "a.b", only in a record progress did not build),
// the nested map wins. Nothing is allocated unless a segment holds an
// escape.
func Nest(d []PathValue, visit func(op NestOp, key string, v attribute.Value)) {
	if len(d) > 1 && !slices.IsSortedFunc(d, ComparePath) {
		slices.SortStableFunc(d, ComparePath)
	}
	var buf [16]string
	open := buf[:0] // escaped segments of the open maps
	for i := range d {
		p := d[i].Path
		if i+1 < len(d) {
			n := d[i+1].Path
			if n == p || len(n) > len(p) && n[len(p)] == '.' && n[:len(p)] == p {
				continue
			}
		}
		keep, rest := 0, p
		for keep < len(open) {
			j := strings.IndexByte(rest, '.')
			if j < 0 || rest[:j] != open[keep] {
				break
			}
			rest = rest[j+1:]
			keep++
		}
		for len(open) > keep {
			open = open[:len(open)-1]
			visit(Close, "", attribute.Value{})
		}
		for {
			j := strings.IndexByte(rest, '.')
			if j < 0 {
				break
			}
			open = append(open, rest[:j])
			visit(Open, UnescapeSegment(rest[:j]), attribute.Value{})
			rest = rest[j+1:]
		}
		visit(Leaf, UnescapeSegment(rest), d[i].Value)
	}
	for range open {
		visit(Close, "", attribute.Value{})
	}
}

// ComparePath orders paths segment by segment: '.' sorts before every
// other byte, so all paths below "a." follow "a" with nothing between.
func ComparePath(a, b PathValue) int {
	x, y := a.Path, b.Path
	n := min(len(x), len(y))
	for i := 0; i < n; i++ {
		cx, cy := x[i], y[i]
		if cx == cy {
			continue
		}
		if cx == '.' {
			return -1
		}
		if cy == '.' {
			return 1
		}
		if cx < cy {
			return -1
		}
		return 1
	}
	return len(x) - len(y)
}
