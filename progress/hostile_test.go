package progress_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/wireformat"
	"github.com/progressotel/progressotel/internal/testkit/hostile"
	"github.com/progressotel/progressotel/internal/testkit/wiretest"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// detailsSize is the encoded size of r's details (the measure
// Limits.MaxDetailsBytes caps), computed from the record alone.
func detailsSize(r *sdklog.Record) int {
	var attrs []attribute.KeyValue
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		attrs = append(attrs, kv)
		return true
	})
	return wireformat.DetailsSize(attrs)
}

// recordOne records details once and returns the record and its decoded
// event; it fails the test if Record returns an error or panics.
func recordOne(t testing.TB, details any, opts ...progress.Option) (sdklog.Record, progresstest.Event, progress.Stats) {
	t.Helper()
	sink := progresstest.NewSink()
	rec := sink.Recorder(opts...)
	if err := rec.Record(context.Background(), progress.Event{Type: "test/Hostile", Details: details}); err != nil {
		t.Fatal(err)
	}
	recs, evs := sink.Records(), sink.Events()
	if len(recs) != 1 || len(evs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	return recs[0], evs[0], rec.Stats()
}

// TestTypedNilsAreNull: a typed nil (an error interface holding a nil
// *MyErr, a nil pointer whose type has value-receiver methods) is written
// as null, as encoding/json writes it, and never has a method called:
// before, Record dereferenced it and crashed the driver.
func TestTypedNilsAreNull(t *testing.T) {
	type withErr struct {
		Err  error              `json:"err"`
		JSON *hostile.ValueJSON `json:"json"`
	}
	for name, details := range map[string]any{
		"error in a map":     map[string]any{"err": hostile.NilErr()},
		"error in a struct":  withErr{Err: hostile.NilErr()},
		"error in a slice":   map[string]any{"errs": []any{hostile.NilErr()}},
		"errors slice":       map[string]any{"errs": []error{hostile.NilErr()}},
		"nil marshaler":      map[string]any{"json": (*hostile.ValueJSON)(nil)},
		"top-level typed":    hostile.NilErr(),
		"struct of nils":     withErr{},
		"map of typed nils":  map[string]error{"a": hostile.NilErr()},
		"pointer to nil err": map[string]any{"p": new(error)},
	} {
		t.Run(name, func(t *testing.T) {
			_, ev, st := recordOne(t, details)
			if st.Truncated != 0 || ev.Truncated {
				t.Errorf("a typed nil is a value (null), not a cut: %+v", ev.Details)
			}
			want := wiretest.JSONLike(t, details)
			if name == "top-level typed" {
				want = map[string]any{} // details that are nil write nothing
			}
			if !reflect.DeepEqual(ev.Details, want) {
				t.Errorf("details = %#v\nencoding/json gives %#v", ev.Details, want)
			}
		})
	}
}

// TestPanickingMethodsFallBack: a panic inside a caller's MarshalJSON,
// MarshalText or Error never escapes Record: the value becomes the
// documented "[unsupported: <type>: <method> panicked]" and the record
// counts as truncated.
func TestPanickingMethodsFallBack(t *testing.T) {
	for name, c := range map[string]struct {
		details any
		key     string
		want    string
	}{
		"MarshalJSON":           {map[string]any{"v": hostile.PanicJSON{}}, "v", "[unsupported: hostile.PanicJSON: MarshalJSON panicked]"},
		"MarshalJSON (pointer)": {map[string]any{"v": &hostile.PanicJSON{}}, "v", "[unsupported: *hostile.PanicJSON: MarshalJSON panicked]"},
		"MarshalText":           {map[string]any{"v": hostile.PanicText{}}, "v", "[unsupported: hostile.PanicText: MarshalText panicked]"},
		"Error":                 {map[string]any{"v": hostile.PanicError{}}, "v", "[unsupported: hostile.PanicError: Error panicked]"},
		"in a slice":            {map[string]any{"v": []any{hostile.PanicJSON{}}}, "v", "[[unsupported: hostile.PanicJSON: MarshalJSON panicked]]"},
		"MarshalJSON error":     {map[string]any{"v": hostile.FailJSON{}}, "v", "[unsupported: hostile.FailJSON: MarshalJSON failed]"},
		"top level":             {hostile.PanicJSON{}, "value", "[unsupported: hostile.PanicJSON: MarshalJSON panicked]"},
	} {
		t.Run(name, func(t *testing.T) {
			_, ev, st := recordOne(t, c.details)
			got := ev.Details[c.key]
			if s, ok := got.([]any); ok && len(s) == 1 {
				got = "[" + s[0].(string) + "]"
			}
			if got != c.want {
				t.Errorf("%s = %#v, want %q", c.key, got, c.want)
			}
			if !ev.Truncated || st.Truncated != 1 {
				t.Errorf("a failed method is a cut: truncated=%v stats=%+v", ev.Truncated, st)
			}
		})
	}
	// A map key whose MarshalText panics drops that entry only.
	_, ev, _ := recordOne(t, map[string]any{"m": map[hostile.TextKey]int{1: 1, hostile.BadKey: 2}})
	if !reflect.DeepEqual(ev.Details["m"], map[string]any{"t:1": int64(1)}) || !ev.Truncated {
		t.Errorf("panicking map key: %#v truncated=%v", ev.Details["m"], ev.Truncated)
	}
}

// TestPrivateKeysNeverLeave: private-key material is found in every form
// and position (issue 12, defect 2) and no trace of it is in the record.
func TestPrivateKeysNeverLeave(t *testing.T) {
	for _, f := range hostile.KeyForms() {
		t.Run(f.Name, func(t *testing.T) {
			for _, details := range []any{map[string]any{"x": f.Details}, f.Details} {
				r, _, _ := recordOne(t, details)
				r.WalkAttributes(func(kv attribute.KeyValue) bool {
					if hostile.Leaks(kv.Value.String()) {
						t.Errorf("%s leaks the key: %s", kv.Key, kv.Value.String())
					}
					return true
				})
			}
		})
	}
}

// TestHostileShapesStayUnderTheCap: the inputs that produced records of
// megabytes (issue 12, defect 3) are cut to the encoded-size cap, marked
// and counted.
func TestHostileShapesStayUnderTheCap(t *testing.T) {
	capBytes := progress.DefaultLimits().MaxDetailsBytes
	for _, s := range hostile.Shapes(1) {
		t.Run(s.Name, func(t *testing.T) {
			r, ev, st := recordOne(t, s.Details)
			if size := detailsSize(&r); size > capBytes {
				t.Errorf("encoded details %d bytes, cap %d", size, capBytes)
			}
			if s.Cut && (!ev.Truncated || st.Truncated != 1) {
				t.Errorf("not marked and counted: truncated=%v stats=%+v", ev.Truncated, st)
			}
		})
	}
	// A smaller cap holds as well.
	small := progress.Limits{MaxDetailsBytes: 1000}
	for _, s := range hostile.Shapes(1) {
		r, _, _ := recordOne(t, s.Details, progress.WithLimits(small))
		if size := detailsSize(&r); size > small.MaxDetailsBytes {
			t.Errorf("%s: %d bytes under a cap of %d", s.Name, size, small.MaxDetailsBytes)
		}
	}
}

// TestWideMapIsNotScannedPastTheBound: a map too wide to visit within the
// work bound becomes one marker instead of being sorted.
func TestWideMapIsNotScannedPastTheBound(t *testing.T) {
	m := map[string]any{}
	for i := range 20000 {
		m[strings.Repeat("k", i%7)+string(rune('a'+i%26))+string(rune(i))] = i
	}
	_, ev, _ := recordOne(t, map[string]any{"facts": m})
	if got, _ := ev.Details["facts"].(string); !strings.HasPrefix(got, "[truncated: map of ") {
		t.Errorf("facts = %.80v, want the wide-map marker", ev.Details["facts"])
	}
}

// TestNilAndEmptyLikeEncodingJSON: a nil map or slice is null and an empty
// one {} or [], at the top level and inside slices alike (issue 12,
// defect 6).
func TestNilAndEmptyLikeEncodingJSON(t *testing.T) {
	type inner struct {
		M map[string]int `json:"m"`
		S []string       `json:"s"`
	}
	details := map[string]any{
		"nilMap": map[string]any(nil), "nilSlice": []any(nil), "nilStrings": []string(nil),
		"nilStringMap": map[string]string(nil), "nilIntMap": map[int]int(nil), "nilBytes": []byte(nil),
		"emptyMap": map[string]any{}, "emptySlice": []any{}, "emptyStrings": []string{},
		"inSlice": []any{map[string]any(nil), []any(nil), []string(nil), map[string]any{}, []any{}, inner{}, inner{M: map[string]int{}, S: []string{}}},
		"struct":  inner{},
	}
	_, ev, _ := recordOne(t, details)
	if want := wiretest.JSONLike(t, details); !reflect.DeepEqual(ev.Details, want) {
		t.Errorf("details:\n got %#v\nwant %#v (encoding/json)", ev.Details, want)
	}
}

// TestStringOptionLikeEncodingJSON: the ",string" tag option is honoured.
func TestStringOptionLikeEncodingJSON(t *testing.T) {
	q := hostile.NewQuoted()
	_, ev, _ := recordOne(t, q)
	if want := wiretest.JSONLike(t, q); !reflect.DeepEqual(ev.Details, want) {
		t.Errorf("details:\n got %#v\nwant %#v (encoding/json)", ev.Details, want)
	}
	_, ev, _ = recordOne(t, map[string]any{"q": []any{q}})
	if want := wiretest.JSONLike(t, map[string]any{"q": []any{q}}); !reflect.DeepEqual(ev.Details, want) {
		t.Errorf("inside a slice:\n got %#v\nwant %#v (encoding/json)", ev.Details, want)
	}
}

// TestNaNAndInfAreCuts: NaN and ±Inf, which JSON cannot hold, become
// "NaN", "+Inf" and "-Inf" and count as truncation, as docs/reliability.md
// says and as every other value JSON cannot hold does.
func TestNaNAndInfAreCuts(t *testing.T) {
	_, ev, st := recordOne(t, hostile.NaNs())
	want := map[string]any{"nan": "NaN", "inf": "+Inf", "ninf": "-Inf", "f32": "+Inf"}
	if !reflect.DeepEqual(ev.Details, want) {
		t.Errorf("details = %#v, want %#v", ev.Details, want)
	}
	if !ev.Truncated || st.Truncated != 1 {
		t.Errorf("NaN must count as a cut: truncated=%v stats=%+v", ev.Truncated, st)
	}
	if _, cut := progresstest.Flatten(map[string]any{"n": hostile.NaNs()["nan"]}); !cut {
		t.Error("Flatten must report NaN as a cut too")
	}
}

type ptrJSON struct{ N int }

func (p *ptrJSON) MarshalJSON() ([]byte, error) { return []byte(`{"via":"pointer"}`), nil }

type textInt int

func (t textInt) MarshalText() ([]byte, error) { return []byte("n" + string(rune('0'+int(t)))), nil }

// TestMethodsLikeEncodingJSON: a MarshalJSON with a pointer receiver is
// used through a pointer, and an integer map key with MarshalText is
// written through the method, as encoding/json does.
func TestMethodsLikeEncodingJSON(t *testing.T) {
	details := map[string]any{
		"ptr":  &ptrJSON{N: 1},
		"val":  ptrJSON{N: 2}, // not addressable: its fields, as encoding/json
		"keys": map[textInt]int{1: 1, 2: 2},
		"f32":  float32(0.1),
	}
	_, ev, _ := recordOne(t, details)
	if want := wiretest.JSONLike(t, details); !reflect.DeepEqual(ev.Details, want) {
		t.Errorf("details:\n got %#v\nwant %#v (encoding/json)", ev.Details, want)
	}
}
