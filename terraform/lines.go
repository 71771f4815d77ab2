package terraform

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader splits a stream into lines of at most max bytes. A longer
// line is read to its end and discarded, never held whole in memory.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	err error // returned once the pending line is out
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line end, valid until the next
// call. tooLong reports a line longer than max: its content is dropped and
// line is empty. At the end of the stream err is io.EOF, or the read error;
// a last line without a line end is returned before it.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	if lr.err != nil {
		return nil, false, lr.err
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.br.ReadSlice('\n')
		if err == nil && len(lr.buf) == 0 && !tooLong && len(chunk) <= lr.max+2 {
			return trimEOL(chunk), false, nil // the common case: no copy
		}
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+2 { // +2: the line end
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			return trimEOL(lr.buf), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			lr.err = err
			if len(lr.buf) > 0 || tooLong {
				return trimEOL(lr.buf), tooLong, nil
			}
			return nil, false, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
