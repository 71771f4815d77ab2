package tncomessage

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

func TestEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a.b", "100%", "%2E", "a.%.b", "..", "%"} {
		esc := EscapeSegment(s)
		if strings.Contains(esc, ".") {
			t.Errorf("EscapeSegment(%q) = %q still holds the separator", s, esc)
		}
		if len(esc) != EscapedLen(s) {
			t.Errorf("EscapedLen(%q) = %d, want %d", s, EscapedLen(s), len(esc))
		}
		if got := UnescapeSegment(esc); got != s {
			t.Errorf("UnescapeSegment(EscapeSegment(%q)) = %q", s, got)
		}
	}
	if got := UnescapeSegment("a%2eb%zz%"); got != "a.b%zz%" {
		t.Errorf("lower-case and malformed escapes: %q", got)
	}
}

// rec is a hand-built record.
type rec struct {
	name  string
	attrs []attribute.KeyValue
}

func (r rec) EventName() string { return r.name }
func (r rec) WalkAttributes(f func(attribute.KeyValue) bool) {
	for _, kv := range r.attrs {
		if !f(kv) {
			return
		}
	}
}

func TestViewKinds(t *testing.T) {
	var v View
	v.Load(rec{"lifecycle", []attribute.KeyValue{
		attribute.String(AttrEventType, TransitionEventType),
		attribute.String("progress.lifecycle.status", "True"),
		attribute.String("progress.lifecycle.previous.status", "False"),
		attribute.String("progress.other.status", "x"),
		attribute.String(TxKey, "tx-1"),
		attribute.String(AttrSequence, "not an int"),
		attribute.Int64(AttrObservedGeneration, 3),
	}})
	if v.Kind != KindTransition || v.Transition.Status != "True" || !v.HasPrevious || v.Previous.Status != "False" {
		t.Errorf("transition view %+v", v)
	}
	if !v.HasTx || v.TxID != "tx-1" || !v.HasGeneration || v.Generation != 3 || v.HasSequence {
		t.Errorf("envelope view %+v", v)
	}
	if len(v.Extra) != 2 {
		t.Errorf("another stream's key and a mistyped sequence stay extra: %v", v.Extra)
	}

	v.Reset()
	v.Load(rec{"x", []attribute.KeyValue{attribute.String(DetailsPrefix+"a", "b"), attribute.String(TxKey, "t")}})
	if v.Kind != KindLog || len(v.Extra) != 1 || len(v.Details) != 0 || !v.HasTx {
		t.Errorf("an ordinary log keeps contract-looking keys as extra: %+v", v)
	}
}

// nestString renders Nest's steps.
func nestString(d []PathValue) string {
	var b strings.Builder
	Nest(d, func(op NestOp, key string, v attribute.Value) {
		switch op {
		case Open:
			b.WriteString(key + ":{")
		case Leaf:
			b.WriteString(key + "=" + v.String() + " ")
		case Close:
			b.WriteString("} ")
		}
	})
	return b.String()
}

func TestNest(t *testing.T) {
	pv := func(p, v string) PathValue { return PathValue{p, attribute.StringValue(v)} }
	cases := []struct {
		name string
		in   []PathValue
		want string
	}{
		{"nested and sorted", []PathValue{pv("b", "1"), pv("a.y", "2"), pv("a.x", "3")}, "a:{x=3 y=2 } b=1 "},
		{"escaped segments", []PathValue{pv("a%2Eb.c", "1"), pv("100%25", "2")}, "100%=2 a.b:{c=1 } "},
		{"subtree contiguous", []PathValue{pv("a-x", "1"), pv("a.b", "2"), pv("a.c.d", "3")}, "a:{b=2 c:{d=3 } } a-x=1 "},
		{"last duplicate wins", []PathValue{pv("a", "1"), pv("a", "2")}, "a=2 "},
		{"map wins over leaf", []PathValue{pv("a.b", "1"), pv("a", "2")}, "a:{b=1 } "},
		{"deep", []PathValue{pv(strings.Repeat("x.", 40)+"y", "1")}, strings.Repeat("x:{", 40) + "y=1 " + strings.Repeat("} ", 40)},
	}
	for _, c := range cases {
		if got := nestString(c.in); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestNestAllocatesNothing(t *testing.T) {
	d := []PathValue{{"a.b", attribute.IntValue(1)}, {"a.c", attribute.IntValue(2)}, {"d", attribute.IntValue(3)}}
	n := 0
	visit := func(NestOp, string, attribute.Value) { n++ }
	if allocs := testing.AllocsPerRun(100, func() { Nest(d, visit) }); allocs != 0 {
		t.Errorf("Nest allocates %v times", allocs)
	}
}

func TestTransitionRaw(t *testing.T) {
	for key, want := range map[string]string{
		"progress.lifecycle.status":          "status",
		"progress.lifecycle.previous.reason": "previous.reason",
		"progress.lifecycle.other":           "",
		"progress.lifecyclex.status":         "",
		"progress.provisioning.status":       "",
		"progress.lifecycle":                 "",
	} {
		if got, _, _ := transitionRaw(key, "lifecycle"); got != want {
			t.Errorf("transitionRaw(%q) = %q, want %q", key, got, want)
		}
	}
}

// appendTimestamp, with its cache of the last second, writes what the
// layout writes, for times in and across seconds, in any order.
func TestAppendTimestamp(t *testing.T) {
	for _, ns := range []int64{1, 999_999, 1_000_000, 1_764_432_000_123_456_789, 1_764_432_000_999_999_999,
		1_764_432_001_000_000_000, 1_764_432_000_000_000_001, 253_402_300_799_999_999, 1_000_000_000} {
		want := time.Unix(0, ns).UTC().Format(MessageTimeLayout)
		if got := string(appendTimestamp(nil, ns)); got != want {
			t.Errorf("appendTimestamp(%d) = %s, want %s", ns, got, want)
		}
	}
}
