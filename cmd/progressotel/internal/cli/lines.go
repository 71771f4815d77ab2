package cli

import (
	"bytes"
	"context"
	"io"

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

// lineRecorder is the command's stdout or stderr: it passes the output
// through to dst, line by line, and records each line as an event: details
// {stream, line}. Each line recorded goes through redactor.Line, so that a
// private key printed over several lines is redacted from its header to its
// end line (the Recorder sees one line at a time). exec copies the command's output into it; the copy ends
// at most procctl.DrainTimeout after the command's exit (cmd.WaitDelay),
// since a process it left in the background can hold the pipe open. Call
// flush once the command has been waited for.
type lineRecorder struct {
	ctx      context.Context
	inv      *Invocation
	stream   string
	dst      io.Writer
	redactor *progress.Redactor
	inKey    bool   // inside a private key: see progress.Redactor.Line
	part     []byte // the line so far, at most maxLine bytes
}

func (l *lineRecorder) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n') + 1
		if i == 0 || len(l.part)+i > maxLine {
			i = min(len(p), maxLine-len(l.part))
		}
		l.part, p = append(l.part, p[:i]...), p[i:]
		if len(l.part) == maxLine || l.part[len(l.part)-1] == '\n' {
			l.flush()
		}
	}
	return n, nil
}

// flush writes and records the line so far, if any.
func (l *lineRecorder) flush() {
	if len(l.part) == 0 {
		return
	}
	_, _ = l.dst.Write(l.part)
	// Safe from both streams at once, unlike adapter.Config.Record.
	evt := progress.Event{Type: l.inv.Lines.Type, Envelope: l.inv.Envelope,
		Details: map[string]any{"stream": l.stream, "line": l.redactor.Line(&l.inKey, string(bytes.TrimRight(l.part, "\r\n")))}}
	if err := l.inv.Recorder.Record(l.ctx, evt); err != nil {
		l.inv.Logger.Warn("event not recorded", "type", evt.Type, "error", err.Error())
	}
	l.part = l.part[:0]
}
