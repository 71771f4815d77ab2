package prettyexporter

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	"github.com/progressotel/progressotel/internal/base/tooltext"
)

// maxOutputLine bounds one line of Output: a longer one is cut.
const maxOutputLine = 8 << 10

type liveOutput struct{ e *LiveExporter }

// Write queues the complete lines of b to be printed above the live area (an unfinished line waits
// for its end, or for Shutdown). It never blocks on the terminal and never fails; after Shutdown it
// writes to the exporter's writer directly.
func (o liveOutput) Write(b []byte) (int, error) {
	e := o.e
	if e == nil || e.model == nil {
		return len(b), nil
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		e.wmu.Lock()
		defer e.wmu.Unlock()
		return e.w.Write(b)
	}
	n := len(b)
	for len(b) > 0 {
		line, rest, complete := bytes.Cut(b, newline)
		e.partial = append(e.partial, line[:min(len(line), max(0, maxOutputLine-len(e.partial)))]...)
		if !complete {
			break
		}
		e.outputLine()
		b = rest
	}
	e.mu.Unlock()
	e.signal()
	return n, nil
}

var newline = []byte{'\n'}

// outputLine notes Output's line, made safe. Called with e.mu held.
func (e *LiveExporter) outputLine() {
	e.model.moveOn(liveKey{}, e.now())
	e.model.noteText(appendTerminalSafe(nil, e.partial))
	e.partial = e.partial[:0]
}

// appendTerminalSafe appends a line of a program's own output so that it cannot move the cursor or
// change the terminal: what a carriage return overwrote is left out (a tool's progress line shows
// its last state), escape sequences (colours, cursor movement, titles) are removed, tabs become
// spaces, and every other control character, DEL, C1 control, non-printable rune and invalid byte
// is escaped as \x07, \u202e or \xff.
func appendTerminalSafe(dst, line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if i := bytes.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	col := 0
	for i := 0; i < len(line); {
		c := line[i]
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(line[i:])
		}
		switch {
		case c == 0x1b:
			i = tooltext.EscapeEnd(line, i)
			continue
		case r == 0x9b: // CSI in one byte: skip its sequence as ESC [
			i = tooltext.CSIEnd(line, i+size)
			continue
		case c == '\t':
			n := 8 - col%8
			dst = append(dst, "        "[:n]...)
			col += n
		case c < ' ' || c == 0x7f || r == utf8.RuneError && size == 1:
			dst = hex.AppendEncode(append(dst, '\\', 'x'), line[i:i+1])
			col += 4
		case c >= utf8.RuneSelf && !strconv.IsPrint(r):
			q := strconv.AppendQuoteRuneToASCII(nil, r)
			dst = append(dst, q[1:len(q)-1]...)
			col += len(q) - 2
		default:
			dst = append(dst, line[i:i+size]...)
			col++
		}
		i += size
	}
	return dst
}
