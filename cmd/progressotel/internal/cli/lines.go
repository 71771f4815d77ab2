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
// line, and records each line as an event: details {stream, line}. Its
// methods do nothing on nil.
type lineRecorder struct {
	ctx              context.Context
	inv              *Invocation
	readers, writers []*os.File
	wg               sync.WaitGroup
}

func newLineRecorder(ctx context.Context, inv *Invocation, cmd *exec.Cmd) (*lineRecorder, error) {
	l := &lineRecorder{ctx: ctx, inv: inv}
	for name, dst := range map[string]*io.Writer{"stdout": &cmd.Stdout, "stderr": &cmd.Stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			l.started()
			l.wait()
			return nil, err
		}
		l.readers, l.writers = append(l.readers, r), append(l.writers, w)
		l.wg.Add(1)
		go l.copy(name, r, *dst)
		*dst = w
	}
	return l, nil
}

// started closes the parent's copies of the pipes' write ends, once the
// child has its own (or could not start).
func (l *lineRecorder) started() {
	if l == nil {
		return
	}
	for _, w := range l.writers {
		_ = w.Close()
	}
}

// wait waits for the output to end, at most procctl.DrainTimeout after
// the command's exit: a process it left in the background can hold the
// pipes open.
func (l *lineRecorder) wait() {
	if l == nil {
		return
	}
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
			// Safe from both copies at once, unlike adapter.Config.Record.
			evt := progress.Event{Type: l.inv.Lines.Type, Envelope: l.inv.Envelope,
				Details: map[string]any{"stream": stream, "line": string(line)}}
			if err := l.inv.Recorder.Record(l.ctx, evt); err != nil {
				l.inv.Logger.Warn("event not recorded", "type", evt.Type, "error", err.Error())
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
