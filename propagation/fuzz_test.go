package propagation_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	otelprop "go.opentelemetry.io/otel/propagation"

	"github.com/progressotel/progressotel/propagation"
)

// FuzzExtract feeds arbitrary headers to the tracectx parser: "name: value"
// lines plus one header whose name and value may hold anything, newlines
// included. Seeds are in testdata/fuzz/FuzzExtract.
func FuzzExtract(f *testing.F) {
	f.Add("X-Tracectx-TransactionId: tx-1\nx-tracectx-processid: p-1", "X-TRACECTX-TASKID", "t-1")
	f.Fuzz(func(t *testing.T, lines, name, value string) {
		carrier := otelprop.MapCarrier{}
		for _, line := range strings.Split(lines, "\n") {
			if n, v, ok := strings.Cut(line, ":"); ok {
				carrier[n] = v
			}
		}
		carrier[name] = value

		vals, _ := propagation.ExtractValues(carrier)
		if vals.Len() > propagation.MaxValues {
			t.Fatalf("%d values, limit %d", vals.Len(), propagation.MaxValues)
		}
		vals.All(func(k, v string) bool {
			if nk, err := propagation.NormalizeKey(k); err != nil || nk != k {
				t.Fatalf("kept key %q: %v", k, err)
			}
			if nv, err := propagation.NormalizeValue(v); err != nil || nv != v {
				t.Fatalf("kept value %q: %v", v, err)
			}
			// Values are kept or rejected, never rewritten.
			found := false
			for _, in := range carrier {
				if strings.Trim(in, " \t") == v {
					found = true
				}
			}
			if !found {
				t.Fatalf("value %q is not one of the input values", v)
			}
			return true
		})

		// The propagator agrees with ExtractValues and survives a round trip.
		ctx := propagation.TraceCtx().Extract(context.Background(), carrier)
		got := propagation.FromContext(ctx).Map()
		if !maps.Equal(got, vals.Map()) {
			t.Fatalf("Extract %v, ExtractValues %v", got, vals.Map())
		}
		out := otelprop.MapCarrier{}
		propagation.TraceCtx().Inject(ctx, out)
		back := propagation.FromContext(propagation.TraceCtx().Extract(context.Background(), out)).Map()
		if !maps.Equal(back, got) {
			t.Fatalf("round trip %v, want %v", back, got)
		}
	})
}
