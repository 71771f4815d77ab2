package encode

import "slices"

// sortFirst puts the k smallest elements of s, sorted, in s[:k] and
// returns s[:k] (all of s, sorted, when k ≥ len(s)). A wide map is
// written in sorted key order until a budget runs out, and a budget
// leaves room for at most k entries (see writable): sorting the entries
// it would cut is the work a wide map must not cost. The selection is a
// quickselect, linear on average; map iteration order is random, so no
// input can make it quadratic.
func sortFirst[T any](s []T, k int, cmp func(a, b T) int) []T {
	if k <= 0 {
		return s[:0]
	}
	if k < len(s) {
		selectSmallest(s, k, cmp)
		s = s[:k]
	}
	slices.SortFunc(s, cmp)
	return s
}

// selectSmallest reorders s so that s[:k] holds its k smallest elements
// (0 < k < len(s)), in no particular order.
func selectSmallest[T any](s []T, k int, cmp func(a, b T) int) {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if cmp(s[mid], s[lo]) < 0 {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if cmp(s[hi], s[lo]) < 0 {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if cmp(s[hi], s[mid]) < 0 {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for cmp(s[i], pivot) < 0 {
				i++
			}
			for cmp(s[j], pivot) > 0 {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		// s[lo:j+1] ≤ pivot ≤ s[i:hi+1]; what lies between equals pivot.
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// writable is how many entries of a map put in s can still be written:
// flattened, every entry makes at least one attribute; nested, every
// entry costs at least valueCost. Entries past it are cut unsorted.
func (e *Encoder) writable(s slot) int {
	if s.flat() {
		return e.lim.MaxAttributes - e.nattr
	}
	return e.room()/valueCost + 1
}
