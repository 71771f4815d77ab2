package cache

import (
	"strconv"
	"sync"
	"testing"
)

func build(k string) int { n, _ := strconv.Atoi(k[1:]); return n }

// TestInsertsAreAmortisedConstant pins the fix for wide maps: inserting n
// distinct keys copies O(n) entries in all, not O(n²) as copying the map on
// every insert did.
func TestInsertsAreAmortisedConstant(t *testing.T) {
	for _, n := range []int{1000, 4000, 16000} {
		c := New[string, int](1 << 20)
		for i := range n {
			k := "k" + strconv.Itoa(i)
			if got := c.Get(k, build, nil); got != i {
				t.Fatalf("Get(%q) = %d", k, got)
			}
		}
		if copied := c.copied.Load(); copied > int64(4*n) {
			t.Errorf("%d inserts copied %d entries, want at most %d", n, copied, 4*n)
		}
		if c.Len() != n {
			t.Errorf("Len = %d, want %d", c.Len(), n)
		}
	}
}

// TestSettledReadsAreLockFreeAndAllocationFree: once an entry has been
// looked up a few times it is in the read map, where a lookup takes no lock
// and allocates nothing.
func TestSettledReadsAreLockFreeAndAllocationFree(t *testing.T) {
	c := New[string, int](100)
	for i := range 10 {
		c.Get("k"+strconv.Itoa(i), build, nil)
	}
	for range 20 {
		c.Get("k3", build, nil)
	}
	if _, ok := (*c.read.Load())["k3"]; !ok {
		t.Fatal("a hot entry never reached the read-only map")
	}
	if n := testing.AllocsPerRun(100, func() { c.Get("k3", build, nil) }); n != 0 {
		t.Errorf("settled Get allocates %v times", n)
	}
}

func TestLimit(t *testing.T) {
	c := New[string, int](5)
	for i := range 50 {
		if got := c.Get("k"+strconv.Itoa(i), build, nil); got != i {
			t.Fatalf("past the limit Get must still build the value: %d, want %d", got, i)
		}
	}
	if c.Len() != 5 {
		t.Errorf("Len = %d, want the limit 5", c.Len())
	}
	if _, ok := c.Load("k49"); ok {
		t.Error("an entry past the limit was stored")
	}
	if c.hasDirty.Load() || len(*c.read.Load()) != 5 {
		t.Error("a full cache publishes every entry, so that no lookup takes the lock")
	}
	if v, ok := c.Load("k0"); !ok || v != 0 {
		t.Error("an entry within the limit was lost")
	}
}

func TestKeyCopiedBeforeStoring(t *testing.T) {
	c := New[string, int](10)
	var stored []string
	c.Get("k1", build, func(k string) string { stored = append(stored, k); return k })
	c.Get("k1", build, func(k string) string { stored = append(stored, k); return k })
	if len(stored) != 1 {
		t.Errorf("key func called %d times, want once (on the insert)", len(stored))
	}
}

func TestConcurrent(t *testing.T) {
	c := New[string, int](500)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := "k" + strconv.Itoa((i*7+g)%1000)
				if got := c.Get(k, build, nil); got != build(k) {
					t.Errorf("Get(%q) = %d", k, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 500 {
		t.Errorf("Len %d exceeds the limit", c.Len())
	}
}
