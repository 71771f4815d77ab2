package term

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) || IsTerminal((*os.File)(nil)) {
		t.Error("a file, a buffer and a nil file are not terminals")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		if !IsTerminal(null) {
			t.Error("/dev/null is a character device")
		}
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
