package progress_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/progressotel/progressotel/progress"
)

// TestErrorsAreTheirMessage: an error anywhere in details (the details
// themselves, a map value, a struct field, a slice element) is its
// Error() text: errors.New, fmt.Errorf with %w, errors.Join, and
// *os.PathError, whose fields are not flattened.
func TestErrorsAreTheirMessage(t *testing.T) {
	pathErr := &os.PathError{Op: "open", Path: "/etc/app.conf", Err: fs.ErrNotExist}
	errs := []error{
		errors.New("disk full"),
		fmt.Errorf("write state: %w", errors.New("disk full")),
		errors.Join(errors.New("first"), errors.New("second")),
		pathErr,
		fmt.Errorf("load: %w", pathErr),
	}
	type withField struct {
		Err   error
		Cause *os.PathError
	}
	for _, err := range errs {
		want := err.Error()
		t.Run(want, func(t *testing.T) {
			_, ev, _ := recordOne(t, err)
			if got := ev.Details["value"]; got != want || ev.Truncated {
				t.Errorf("details %v: got %#v (truncated %v), want %q", err, ev.Details, ev.Truncated, want)
			}
			_, ev, _ = recordOne(t, map[string]any{"error": err, "list": []any{err}, "errs": []error{err}})
			if ev.Details["error"] != want {
				t.Errorf("map value: %#v", ev.Details)
			}
			if l, _ := ev.Details["list"].([]any); len(l) != 1 || l[0] != want {
				t.Errorf("[]any element: %#v", ev.Details["list"])
			}
			if l, _ := ev.Details["errs"].([]any); len(l) != 1 || l[0] != want {
				t.Errorf("[]error element: %#v", ev.Details["errs"])
			}
			_, ev, _ = recordOne(t, withField{Err: err, Cause: pathErr})
			if ev.Details["Err"] != want || ev.Details["Cause"] != pathErr.Error() {
				t.Errorf("struct fields: %#v", ev.Details)
			}
		})
	}
}

// wideMap is a map of n entries with keys that sort as their numbers.
func wideMap(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m["k"+fmt.Sprintf("%06d", i)] = i
	}
	return m
}

// checkCut asserts the documented cut of a map of n entries at path in
// details: either its entries, the first ones in sorted key order (all of
// them unless truncated), or the marker "[truncated: map of n entries]";
// never nothing.
func checkCut(t *testing.T, n int, got any, truncated bool) {
	t.Helper()
	marker := "[truncated: map of " + strconv.Itoa(n) + " entries]"
	switch g := got.(type) {
	case string:
		if g != marker || !truncated {
			t.Fatalf("n=%d: %q (truncated %v), want the marker %q", n, g, truncated, marker)
		}
	case map[string]any:
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range g {
				if !yield(k) {
					return
				}
			}
		})
		if n > 0 && len(keys) == 0 {
			t.Fatalf("n=%d: no key and no marker", n)
		}
		for i, k := range keys {
			if want := "k" + fmt.Sprintf("%06d", i); k != want {
				t.Fatalf("n=%d: key %d is %q, want %q: not the first keys in order", n, i, k, want)
			}
		}
		if len(keys) < n && !truncated {
			t.Fatalf("n=%d: %d keys kept, not marked truncated", n, len(keys))
		}
	case nil:
		if n > 0 {
			t.Fatalf("n=%d: the map is gone, no marker", n)
		}
	default:
		t.Fatalf("n=%d: %T %v", n, got, got)
	}
}

// TestMapCutProperty: a map of any size from 0 to 100,000 entries, at the
// root or nested between siblings, is cut the documented way; a nested
// one never takes its siblings with it past what MaxAttributes cuts.
func TestMapCutProperty(t *testing.T) {
	sizes := []int{0, 1, 2, 12, 13, 63, 64, 65, 100, 1000, 9361, 9362, 9400, 12000, 16000, 16384, 16385, 17000, 100000}
	rng := rand.New(rand.NewPCG(23, 3))
	for range 12 {
		sizes = append(sizes, rng.IntN(100001))
	}
	if testing.Short() {
		sizes = sizes[:12]
	}
	for _, n := range sizes {
		m := wideMap(n)
		// At the root.
		_, ev, _ := recordOne(t, m)
		if v, ok := ev.Details["value"]; ok {
			checkCut(t, n, v, ev.Truncated)
		} else {
			checkCut(t, n, map[string]any(ev.Details), ev.Truncated)
		}
		// Nested between siblings, flattened and inside a slice (MAP).
		for _, nest := range []string{"flat", "slice"} {
			var details map[string]any
			if nest == "flat" {
				details = map[string]any{"a": 1, "facts": m, "z": "last"}
			} else {
				details = map[string]any{"a": 1, "hosts": []any{map[string]any{"facts": m}}, "z": "last"}
			}
			rec, ev, _ := recordOne(t, details)
			if ev.Details["a"] != int64(1) {
				t.Fatalf("n=%d %s: sibling a lost: %v", n, nest, ev.Details["a"])
			}
			var got any
			if nest == "flat" {
				got = ev.Details["facts"]
				if got == nil && n == 0 {
					got = map[string]any{}
				}
			} else {
				hosts, _ := ev.Details["hosts"].([]any)
				if len(hosts) != 1 {
					t.Fatalf("n=%d %s: hosts %v", n, nest, ev.Details["hosts"])
				}
				got = hosts[0].(map[string]any)["facts"]
			}
			checkCut(t, n, got, ev.Truncated)
			// z comes after every facts key in sorted order: it is cut
			// only when MaxAttributes or the size cap is reached before it.
			lim := progress.DefaultLimits()
			attrs, size := countLeaves(ev.Details), detailsSize(&rec)
			if ev.Details["z"] != "last" && attrs < lim.MaxAttributes && size < lim.MaxDetailsBytes-64 {
				t.Fatalf("n=%d %s: sibling z lost with %d attributes and %d bytes written", n, nest, attrs, size)
			}
		}
	}
}

// countLeaves counts the flattened attributes of nested details (a MAP
// inside a slice is one attribute).
func countLeaves(d map[string]any) int {
	n := 0
	for _, v := range d {
		if m, ok := v.(map[string]any); ok {
			n += countLeaves(m)
		} else {
			n++
		}
	}
	return n
}

// TestErrorPlacementProperty: an error built at random (errors.New,
// fmt.Errorf with %w, errors.Join, *os.PathError, nested in each other)
// and placed at a random path of nested maps, slices and struct fields is
// its Error() text at that path, and the details are not marked truncated.
func TestErrorPlacementProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 4))
	var build func(depth int) error
	build = func(depth int) error {
		switch k := rng.IntN(5); {
		case depth > 3 || k == 0:
			return errors.New("leaf " + strconv.Itoa(rng.IntN(1000)))
		case k == 1:
			return fmt.Errorf("wrapped %d: %w", rng.IntN(100), build(depth+1))
		case k == 2:
			return errors.Join(build(depth+1), build(depth+1))
		case k == 3:
			return &os.PathError{Op: "open", Path: "/p/" + strconv.Itoa(rng.IntN(100)), Err: build(depth + 1)}
		default:
			return fmt.Errorf("two: %w and %w", build(depth+1), build(depth+1))
		}
	}
	type holder struct {
		Err  error
		Errs []error
	}
	for i := range 300 {
		err := build(0)
		want := err.Error()
		// A random container path down to the error, and how to read it back.
		var v any = err
		var read []func(any) any
		for range rng.IntN(4) {
			switch rng.IntN(3) {
			case 0:
				v = map[string]any{"e": v, "other": 1}
				read = append(read, func(x any) any { return x.(map[string]any)["e"] })
			case 1:
				v = []any{"x", v}
				read = append(read, func(x any) any { return x.([]any)[1] })
			default:
				if e, ok := v.(error); ok && rng.IntN(2) == 0 {
					v = holder{Errs: []error{e}}
					read = append(read, func(x any) any { return x.(map[string]any)["Errs"].([]any)[0] })
				} else {
					v = map[string]any{"h": v}
					read = append(read, func(x any) any { return x.(map[string]any)["h"] })
				}
			}
		}
		_, ev, _ := recordOne(t, v)
		var got any = map[string]any(ev.Details)
		switch v.(type) {
		case map[string]any, holder:
		default: // an error or a slice at the root is kept under "value"
			got = ev.Details["value"]
		}
		for j := len(read) - 1; j >= 0; j-- {
			func() {
				defer func() {
					if recover() != nil {
						t.Fatalf("case %d: details %#v do not have the shape of %#v", i, ev.Details, v)
					}
				}()
				got = read[j](got)
			}()
		}
		if got != want || ev.Truncated {
			t.Fatalf("case %d: got %#v (truncated %v), want %q, in %#v", i, got, ev.Truncated, want, ev.Details)
		}
	}
}
