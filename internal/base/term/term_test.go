package term

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestIsTerminal: files, buffers and /dev/null are not terminals
// (`OTEL_LOGS_EXPORTER=live cmd >/dev/null` must not take /dev/null for
// the screen); a pseudo-terminal is one (TestIsTerminalPty).
func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) || IsTerminal((*os.File)(nil)) {
		t.Error("a file, a buffer and a nil file are not terminals")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if IsTerminal(null) {
		t.Error("/dev/null is taken for a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) {
		t.Error("a pipe is taken for a terminal")
	}
}

func TestSize(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, ok := Size(f); ok {
		t.Error("a file has no terminal size")
	}
	if _, _, ok := Size(&bytes.Buffer{}); ok {
		t.Error("a buffer has no terminal size")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		if _, _, ok := Size(null); ok {
			t.Error("/dev/null is a character device but no terminal")
		}
	}
}
