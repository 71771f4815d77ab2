package adapter

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

func TestLineReader(t *testing.T) {
	big := strings.Repeat("a", 3<<20)
	in := "one\r\n" + big + "\n\nlast"
	lr := NewLineReader(strings.NewReader(in), 64<<20)
	var got []string
	for {
		l, tooLong, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || tooLong {
			t.Fatal(err, tooLong)
		}
		got = append(got, string(l))
	}
	if !slices.Equal(got, []string{"one", big, "", "last"}) {
		t.Errorf("lines: %d, first %q", len(got), got[0])
	}

	lr = NewLineReader(strings.NewReader("short\n"+big+"\nafter\n"), 1<<20)
	var long []bool
	got = nil
	for {
		l, tooLong, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		long = append(long, tooLong)
		got = append(got, string(l[:min(len(l), 10)]))
	}
	if !slices.Equal(got, []string{"short", "aaaaaaaaaa", "after"}) || !slices.Equal(long, []bool{false, true, false}) {
		t.Errorf("with a limit: %q %v", got, long)
	}
}

// TestLineReaderKeepsOnlyTheHead: a line over the limit is never held
// whole: only its first bytes come back.
func TestLineReaderKeepsOnlyTheHead(t *testing.T) {
	lr := NewLineReader(strings.NewReader(strings.Repeat("x", 1<<20)+"\n"), 1000)
	l, tooLong, err := lr.Next()
	if err != nil || !tooLong || len(l) != headBytes {
		t.Errorf("got %d bytes, tooLong %v, err %v: want the first %d bytes, true, nil", len(l), tooLong, err, headBytes)
	}
}

// TestLineReaderReadError: the line pending when a read fails is returned
// first, then the error.
func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewLineReader(io.MultiReader(strings.NewReader("a\npart"), iotest.ErrReader(boom)), 100)
	var got []string
	var err error
	for err == nil {
		var l []byte
		l, _, err = lr.Next()
		if err == nil {
			got = append(got, string(l))
		}
	}
	if !slices.Equal(got, []string{"a", "part"}) || !errors.Is(err, boom) {
		t.Errorf("got %q, %v", got, err)
	}
}

// TestReadLines: empty lines are not handled but reach the tee, long
// lines are reported by their head and do not.
func TestReadLines(t *testing.T) {
	var tee strings.Builder
	c := &Config{MaxLineBytes: 8, RawTee: &tee}
	var lines, long []string
	err := c.ReadLines(context.Background(), strings.NewReader("one\n\n"+strings.Repeat("z", 20)+"\r\ntwo"),
		func(l []byte) { lines = append(lines, string(l)) },
		func(head []byte) { long = append(long, string(head)) })
	if err != nil || !slices.Equal(lines, []string{"one", "two"}) || len(long) != 1 || !strings.HasPrefix(long[0], "zzzzzzzz") {
		t.Errorf("lines %q, long %q, err %v", lines, long, err)
	}
	if tee.String() != "one\n\ntwo\n" {
		t.Errorf("tee %q", tee.String())
	}
}

// TestReadLinesCancel: the end of ctx releases a Read blocked on a pipe.
func TestReadLinesCancel(t *testing.T) {
	pr, pw := testutil.Pipe(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	c := &Config{MaxLineBytes: 100}
	go func() { done <- c.ReadLines(ctx, pr, func([]byte) {}, func([]byte) {}) }()
	if _, err := pw.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("err = %v, want the cancellation", err)
	}
}
