package ansible

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the longest event line read by default: far above
// what ansible-runner writes (it drops a result above about 700 KB, but the
// event's display text repeats big values, so lines of 1–2 MB are real),
// and low enough that a runaway line cannot take the driver's memory.
const DefaultMaxLineBytes = 64 << 20

// errLineTooLong reports a line that exceeded the limit; the reader has
// skipped the rest of it and can go on with the next line.
var errLineTooLong = errors.New("line too long")

// lineReader reads newline-terminated lines of any length up to max bytes,
// unlike bufio.Scanner, whose default 64 KiB limit breaks on gathered facts
// and big results. The returned slice is valid until the next call.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending ("\n" or "\r\n").
// At the end of input it returns io.EOF (a last line without a newline is
// returned first). A line longer than max is skipped up to its newline and
// reported as errLineTooLong with the line's first bytes.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(l.buf)+len(chunk) > l.max+2 { // +2: the line ending is not counted
				tooLong = true
				keep := min(len(chunk), max(0, 256-len(l.buf)))
				l.buf = append(l.buf, chunk[:keep]...)
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return l.buf, errLineTooLong
			}
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return l.buf, errLineTooLong
			}
			if len(l.buf) > 0 {
				return trimEOL(l.buf), nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
