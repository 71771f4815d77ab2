package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/progressotel/progressotel/internal/kit/procctl"
	"github.com/progressotel/progressotel/progress"
)

// DefaultLinesType is the progressEventType of an output line (--lines).
const DefaultLinesType = "command/OutputLine"

// maxLine is the longest line recorded as one event; a longer line is
// recorded in parts of this size. It is written through unchanged.
const maxLine = 16 << 10

// LinesOptions are the --lines settings.
type LinesOptions struct {
	Enabled bool
	Type    string // the progressEventType of each line
}

// lineRecorder passes the child's stdout and stderr through, line by
// line, and records each line as an event: details {stream, line}.
type lineRecorder struct {
	ctx     context.Context
	inv     *Invocation
	readers []*os.File
	writers []*os.File
	wg      sync.WaitGroup
}

func newLineRecorder(ctx context.Context, inv *Invocation, cmd *exec.Cmd) (*lineRecorder, error) {
	l := &lineRecorder{ctx: ctx, inv: inv}
	for _, s := range []struct {
		name string
		dst  io.Writer
		set  func(w *os.File)
	}{
		{"stdout", inv.Stdout, func(w *os.File) { cmd.Stdout = w }},
		{"stderr", inv.Stderr, func(w *os.File) { cmd.Stderr = w }},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			l.abort()
			return nil, err
		}
		l.readers, l.writers = append(l.readers, r), append(l.writers, w)
		s.set(w)
		l.wg.Add(1)
		go l.copy(s.name, r, s.dst)
	}
	return l, nil
}

// started closes the parent's copies of the pipes' write ends, once the
// child has its own.
func (l *lineRecorder) started() {
	for _, w := range l.writers {
		_ = w.Close()
	}
}

// abort closes everything, when the child did not start.
func (l *lineRecorder) abort() {
	l.started()
	for _, r := range l.readers {
		_ = r.Close()
	}
	l.wg.Wait()
}

// wait waits for the output to end, at most procctl.DrainTimeout after
// the command's exit: a process it left in the background can hold the
// pipes open.
func (l *lineRecorder) wait() {
	for _, r := range l.readers {
		_ = r.SetReadDeadline(time.Now().Add(procctl.DrainTimeout))
	}
	l.wg.Wait()
	for _, r := range l.readers {
		_ = r.Close()
	}
}

func (l *lineRecorder) copy(stream string, r io.Reader, dst io.Writer) {
	defer l.wg.Done()
	br := bufio.NewReaderSize(r, maxLine)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			_, _ = dst.Write(chunk)
			line := bytes.TrimRight(chunk, "\r\n")
			record(l.ctx, l.inv, progress.Event{
				Type:    l.inv.Lines.Type,
				Details: map[string]any{"stream": stream, "line": string(line)},
			})
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
