package testutil

import (
	"os"
	"testing"
)

// Pipe returns an os.Pipe, closed at the end of the test: a reader whose
// Read blocks until something is written, and that has SetReadDeadline,
// as a tool's stdout has.
func Pipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.Close()
		_ = w.Close()
	})
	return r, w
}
