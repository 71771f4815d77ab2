package encode

import (
	"strconv"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/base/wireformat"
	"github.com/progressotel/progressotel/internal/testkit/hostile"
	"github.com/progressotel/progressotel/progress/internal/redact"
	"github.com/progressotel/progressotel/tncomessage"
)

var defaults = Limits{MaxDepth: 8, MaxAttributes: 64, MaxStringLen: 4096, MaxSliceLen: 256, MaxDetailsBytes: 64 << 10}

func encode(t testing.TB, keys *KeyCache, lim Limits, details any) *Encoder {
	t.Helper()
	e := Get(keys, keys.red, lim)
	e.Details(details)
	return e
}

// TestStopsBuildingKeysPastTheLimit: a wide map on a fresh Recorder builds
// (and caches) the keys of the attributes it writes, not one key per
// entry: issue 12, defect 4.
func TestStopsBuildingKeysPastTheLimit(t *testing.T) {
	rules := redact.New(true, "password")
	keys := NewKeyCache(&rules)
	m := map[string]any{}
	for i := range 4000 {
		m["key"+strconv.Itoa(i)] = i
	}
	e := encode(t, keys, defaults, m)
	defer Put(e)
	if len(e.Attrs) != defaults.MaxAttributes || !e.Truncated() {
		t.Fatalf("%d attributes, truncated %v", len(e.Attrs), e.Truncated())
	}
	if n := int(keys.n.Load()); n > defaults.MaxAttributes+1 {
		t.Errorf("built and cached %d keys for %d attributes", n, defaults.MaxAttributes)
	}
}

// TestSizeAccounting: the encoder's running size is an upper bound of the
// encoded size of what it wrote, and never passes the cap, on the hostile
// shapes and on generated inputs, under caps from tiny to the default.
func TestSizeAccounting(t *testing.T) {
	rules := redact.New(true, "password")
	inputs := []any{}
	for _, s := range hostile.Shapes(1) {
		inputs = append(inputs, s.Details)
	}
	for i := range 300 {
		inputs = append(inputs, hostile.FromBytes([]byte(strings.Repeat(string(rune(i)), 1+i%7)+strconv.Itoa(i*7919))))
	}
	for _, capBytes := range []int{1, 40, 100, 1000, 64 << 10} {
		lim := defaults
		lim.MaxDetailsBytes = capBytes
		for i, in := range inputs {
			e := encode(t, NewKeyCache(&rules), lim, in)
			if got := wireformat.DetailsSize(e.Attrs); got > e.size || e.size > capBytes {
				t.Errorf("cap %d, input %d: measured %d, accounted %d", capBytes, i, got, e.size)
			}
			if e.depth != 0 {
				t.Errorf("cap %d, input %d: depth %d after the walk: an enter without its leave", capBytes, i, e.depth)
			}
			Put(e)
		}
	}
}

// TestRootMarkerKeys: the wide-map marker and a panic in the walk land on
// the documented top-level key.
func TestRootMarkerKeys(t *testing.T) {
	rules := redact.New(true)
	m := map[string]any{}
	for i := range 20000 {
		m[strconv.Itoa(i)] = i
	}
	e := encode(t, NewKeyCache(&rules), defaults, m)
	defer Put(e)
	if len(e.Attrs) != 1 || e.Attrs[0].Key != tncomessage.DetailsPrefix+tncomessage.ValueKey ||
		e.Attrs[0].Value.AsString() != "[truncated: map of 20000 entries]" {
		t.Errorf("attrs %v", e.Attrs)
	}
}
