package testutil

import (
	"fmt"
	"strings"
)

// DiffLines shows where got differs from want, line by line: the first
// ten lines that differ, each as "line N:", then "- want" and "+ got",
// Go-quoted so that control characters and trailing spaces show. It is
// empty when they are equal.
func DiffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %q\n+ %q\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
