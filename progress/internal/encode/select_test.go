package encode

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		n := r.IntN(200)
		s := make([]int, n)
		for i := range s {
			s[i] = r.IntN(50) // duplicates too
		}
		want := slices.Clone(s)
		slices.Sort(want)
		k := r.IntN(n + 3)
		got := sortFirst(slices.Clone(s), k, cmp.Compare[int])
		if w := want[:min(k, n)]; !slices.Equal(got, w) {
			t.Fatalf("sortFirst(%v, %d) = %v, want %v", s, k, got, w)
		}
	}
}
