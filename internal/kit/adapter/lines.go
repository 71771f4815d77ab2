package adapter

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"time"
)

// headBytes is how much of a line over the limit LineReader keeps, for
// the adapter's warning.
const headBytes = 256

// LineReader reads lines of any length up to a limit (bufio.Scanner's 64
// KiB breaks on gathered facts and big results); a longer line is read to
// its end and skipped, never held whole in memory.
type LineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	err error // returned once the pending line is out
}

// NewLineReader reads lines of at most max bytes (without the line end)
// from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its line end ("\n" or "\r\n"),
// valid until the next call. tooLong reports a line over the limit,
// skipped to its end: line holds its first bytes. At the end err is io.EOF
// or the read error, after a last line without a line end.
func (lr *LineReader) Next() (line []byte, tooLong bool, err error) {
	if lr.err != nil {
		return nil, false, lr.err
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if err == nil && len(lr.buf) == 0 && !tooLong && len(chunk) <= lr.max+2 {
			return trimEOL(chunk), false, nil // the common case: no copy
		}
		if !tooLong && len(lr.buf)+len(chunk) > lr.max+2 { // +2: the line end is not counted
			tooLong = true
			lr.buf = append(lr.buf, chunk[:min(len(chunk), max(0, headBytes-len(lr.buf)))]...)
		} else if !tooLong {
			lr.buf = append(lr.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if lr.err = err; err != nil && !tooLong && len(lr.buf) == 0 {
			return nil, false, err
		}
		if tooLong {
			return lr.buf, true, nil
		}
		return trimEOL(lr.buf), false, nil
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// ReadLines reads r line by line, at most c.MaxLineBytes each, until its
// end, a read error or the end of ctx: every line that is not empty goes
// to line, the first bytes of every longer line to tooLong, and the lines
// within the limit, empty ones included, to c.RawTee.
//
// It returns nil at the end of r, ctx's error when ctx ended, else the
// read error. A Read blocked when ctx ends is released at once only if r
// has SetReadDeadline (an *os.File pipe, a net.Conn); otherwise when it
// returns (close r to end it).
func (c *Config) ReadLines(ctx context.Context, r io.Reader, line func([]byte), tooLong func(head []byte)) error {
	if dl, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok && ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = dl.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	lr := NewLineReader(r, c.MaxLineBytes)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, long, err := lr.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case long:
			tooLong(l)
		default:
			if c.RawTee != nil {
				_, _ = c.RawTee.Write(l)
				_, _ = c.RawTee.Write([]byte{'\n'})
			}
			if len(l) > 0 {
				line(l)
			}
		}
	}
}
