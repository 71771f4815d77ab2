package progress_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// limResult is one event recorded through the real SDK and read back.
type limResult struct {
	evt    progresstest.Event
	stats  progress.Stats
	metric int64 // progress.events.truncated
}

func limRecord(t *testing.T, details any, opts ...progress.Option) limResult {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	sink := progresstest.NewSink()
	rec := sink.Recorder(append([]progress.Option{progress.WithMeterProvider(mp)}, opts...)...)
	if err := rec.Record(context.Background(), progress.Event{Type: "test/Limits", Details: details}); err != nil {
		t.Fatal(err)
	}
	evs := sink.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "progress.events.truncated" {
				for _, dp := range s.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return limResult{evt: evs[0], stats: rec.Stats(), metric: n}
}

// assertCut checks the three signs of a cut: the record's
// progress.truncated, the Recorder's Stats and the metric, each counting
// the event once however many cuts it had.
func assertCut(t *testing.T, r limResult) {
	t.Helper()
	if !r.evt.Truncated {
		t.Errorf("record lacks %s=true", wire.AttrTruncated)
	}
	if r.stats.Truncated != 1 || r.stats.Recorded != 1 {
		t.Errorf("Stats = %+v, want Truncated 1, Recorded 1", r.stats)
	}
	if r.metric != 1 {
		t.Errorf("progress.events.truncated = %d, want 1", r.metric)
	}
}

func nested(levels int) map[string]any {
	var v any = "leaf"
	for i := levels; i >= 1; i-- {
		v = map[string]any{fmt.Sprint("l", i): v}
	}
	return v.(map[string]any)
}

// depthOf follows the single-key chain and returns its length and leaf.
func depthOf(m map[string]any) (int, any) {
	n := 0
	var v any = m
	for {
		mm, ok := v.(map[string]any)
		if !ok || len(mm) != 1 {
			return n, v
		}
		for _, x := range mm {
			v = x
		}
		n++
	}
}

func TestLimitDepth(t *testing.T) {
	def := progress.DefaultLimits().MaxDepth
	if def != 8 {
		t.Fatalf("documented default MaxDepth is 8, got %d", def)
	}
	r := limRecord(t, nested(12))
	if n, leaf := depthOf(r.evt.Details); n != def || leaf != wire.TruncatedDepth {
		t.Errorf("12 levels kept %d levels ending in %v, want %d ending in %q", n, leaf, def, wire.TruncatedDepth)
	}
	assertCut(t, r)

	r = limRecord(t, nested(3), progress.WithLimits(progress.Limits{MaxDepth: 3}))
	if n, leaf := depthOf(r.evt.Details); n != 3 || leaf != "leaf" {
		t.Errorf("3 levels with MaxDepth 3: %d levels, leaf %v; want all kept", n, leaf)
	}
	if r.evt.Truncated || r.stats.Truncated != 0 {
		t.Errorf("nothing was cut, yet truncated=%v stats=%+v", r.evt.Truncated, r.stats)
	}
	r = limRecord(t, nested(4), progress.WithLimits(progress.Limits{MaxDepth: 3}))
	if n, leaf := depthOf(r.evt.Details); n != 3 || leaf != wire.TruncatedDepth {
		t.Errorf("4 levels with MaxDepth 3: %d levels, leaf %v", n, leaf)
	}
	assertCut(t, r)
}

func TestLimitDepthInsideSlices(t *testing.T) {
	var v any = "leaf"
	for range 20 {
		v = []any{v}
	}
	r := limRecord(t, map[string]any{"s": v})
	s := fmt.Sprint(r.evt.Details["s"])
	if !strings.Contains(s, wire.TruncatedDepth) || strings.Contains(s, "leaf") {
		t.Errorf("20 nested slices: %s", s)
	}
	assertCut(t, r)
}

func TestLimitKeyCount(t *testing.T) {
	max := progress.DefaultLimits().MaxAttributes
	if max != 64 {
		t.Fatalf("documented default MaxAttributes is 64, got %d", max)
	}
	d := map[string]any{}
	for i := range 200 {
		d[fmt.Sprintf("k%03d", i)] = i
	}
	r := limRecord(t, d)
	if len(r.evt.Details) != max {
		t.Errorf("200 keys kept %d, want %d", len(r.evt.Details), max)
	}
	// Keys are written in sorted order, so the first ones are kept.
	if _, ok := r.evt.Details["k000"]; !ok {
		t.Error("k000 was dropped")
	}
	if _, ok := r.evt.Details["k199"]; ok {
		t.Error("k199 was kept")
	}
	// The markers survive the SDK's own attribute limit.
	if r.evt.Sequence != 1 {
		t.Errorf("progress.sequence lost (got %d): the record exceeded the SDK's attribute limit", r.evt.Sequence)
	}
	assertCut(t, r)

	r = limRecord(t, d, progress.WithLimits(progress.Limits{MaxAttributes: 10}))
	if len(r.evt.Details) != 10 {
		t.Errorf("MaxAttributes 10 kept %d", len(r.evt.Details))
	}
}

func TestLimitStringLength(t *testing.T) {
	max := progress.DefaultLimits().MaxStringLen
	if max != 4096 {
		t.Fatalf("documented default MaxStringLen is 4096, got %d", max)
	}
	r := limRecord(t, map[string]any{"ok": strings.Repeat("a", max), "long": strings.Repeat("x", max+1)})
	if got := r.evt.Details["ok"].(string); len(got) != max {
		t.Errorf("a string of exactly %d bytes was changed to %d bytes", max, len(got))
	}
	long := r.evt.Details["long"].(string)
	if long != strings.Repeat("x", max)+wire.TruncatedSuffix {
		t.Errorf("long string: %d bytes, want %d + %q", len(long), max, wire.TruncatedSuffix)
	}
	assertCut(t, r)

	// Cut at a UTF-8 boundary: never an invalid rune.
	r = limRecord(t, map[string]any{"u": strings.Repeat("é", max)})
	u := r.evt.Details["u"].(string)
	if !utf8.ValidString(u) || !strings.HasSuffix(u, wire.TruncatedSuffix) || len(u) > max+len(wire.TruncatedSuffix) {
		t.Errorf("UTF-8 cut: valid=%v len=%d", utf8.ValidString(u), len(u))
	}
}

func TestLimitSliceLength(t *testing.T) {
	max := progress.DefaultLimits().MaxSliceLen
	if max != 256 {
		t.Fatalf("documented default MaxSliceLen is 256, got %d", max)
	}
	for name, v := range map[string]any{
		"[]any":    make([]any, 300),
		"[]string": make([]string, 300),
		"[]int":    make([]int, 300),
	} {
		t.Run(name, func(t *testing.T) {
			r := limRecord(t, map[string]any{"s": v})
			if got := r.evt.Details["s"].([]any); len(got) != max {
				t.Errorf("300 elements kept %d, want %d", len(got), max)
			}
			assertCut(t, r)
		})
	}
}

// TestLimitTotalDetailsBytes: MaxDetailsBytes caps the encoded size of the
// details; keys are written in sorted order until the cap, the string that
// does not fit is cut to fit, and the rest is cut.
func TestLimitTotalDetailsBytes(t *testing.T) {
	max := progress.DefaultLimits().MaxDetailsBytes
	if max != 64<<10 {
		t.Fatalf("documented default MaxDetailsBytes is 65536, got %d", max)
	}
	d := map[string]any{}
	for i := range 20 {
		d[fmt.Sprintf("s%02d", i)] = strings.Repeat("y", 4000) // 80000 bytes in all
	}
	sink := progresstest.NewSink()
	if err := sink.Recorder().Record(context.Background(), progress.Event{Type: "test/Limits", Details: d}); err != nil {
		t.Fatal(err)
	}
	rec := sink.Records()[0]
	if size := detailsSize(&rec); size > max {
		t.Errorf("encoded details: %d bytes, over the cap of %d", size, max)
	}
	ev := sink.Events()[0]
	n := len(ev.Details)
	if n < 15 || n >= 20 {
		t.Fatalf("kept %d of 20 strings of 4000 bytes under a 64 KiB cap", n)
	}
	for i := range n {
		s, ok := ev.Details[fmt.Sprintf("s%02d", i)].(string)
		switch {
		case !ok:
			t.Errorf("s%02d missing: the kept keys must be the first in sorted order", i)
		case i < n-1 && len(s) != 4000:
			t.Errorf("s%02d has %d bytes; only the last kept string may be cut", i, len(s))
		case i == n-1 && len(s) != 4000 && !strings.HasSuffix(s, wire.TruncatedSuffix):
			t.Errorf("the last kept string was cut without the marker")
		}
	}
	if !ev.Truncated {
		t.Error("record not marked truncated")
	}
}

func TestLimitsLeaveSmallEventsAlone(t *testing.T) {
	r := limRecord(t, map[string]any{"a": "b", "n": 1, "l": []any{1, 2}})
	if r.evt.Truncated || r.stats.Truncated != 0 || r.metric != 0 {
		t.Errorf("small event marked truncated: %+v", r)
	}
}

func TestUnsupportedValuesCountAsTruncation(t *testing.T) {
	r := limRecord(t, map[string]any{"c": make(chan int)})
	if got := r.evt.Details["c"]; got != "[unsupported: chan int]" {
		t.Errorf("chan became %v", got)
	}
	assertCut(t, r)
}

func TestTypeLength(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	const maxTypeLen = 128 // documented on ValidationError
	ok := "g/" + strings.Repeat("N", maxTypeLen-2)
	if err := rec.Record(context.Background(), progress.Event{Type: ok}); err != nil {
		t.Errorf("a type of exactly %d bytes: %v", maxTypeLen, err)
	}
	long := ok + "x"
	err := rec.Record(context.Background(), progress.Event{Type: long})
	var ve *progress.ValidationError
	if !errors.Is(err, progress.ErrInvalidEvent) || !errors.As(err, &ve) {
		t.Fatalf("a type of %d bytes: %v, want a *ValidationError", len(long), err)
	}
	if len(err.Error()) > 2*maxTypeLen+300 {
		t.Errorf("the error repeats an oversized input: %d bytes", len(err.Error()))
	}
	if s := rec.Stats(); s.Invalid != 1 || s.Recorded != 1 {
		t.Errorf("Stats %+v, want Invalid 1, Recorded 1", s)
	}
	if n := len(sink.Records()); n != 1 {
		t.Errorf("%d records, want only the valid one", n)
	}
}

// TestTransitionStringsAreBounded: condition messages obey MaxStringLen too.
func TestTransitionStringsAreBounded(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	msg := strings.Repeat("m", 10000)
	if err := rec.RecordTransition(context.Background(), progress.Transition{
		Stream: progress.StreamProvisioning, Condition: progress.Condition{Status: "False", Reason: "Errored", Message: msg},
	}); err != nil {
		t.Fatal(err)
	}
	evs := sink.Events()
	if len(evs) != 1 || evs[0].Transition == nil {
		t.Fatalf("events %+v", evs)
	}
	if got := evs[0].Transition.Message; len(got) > progress.DefaultLimits().MaxStringLen+len(wire.TruncatedSuffix) {
		t.Errorf("message kept %d bytes", len(got))
	}
}
