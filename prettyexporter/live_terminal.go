package prettyexporter

import (
	"bytes"
	"slices"
	"strconv"
)

// screen is what the terminal goroutine knows of the terminal: the rows of the live area it drew
// last, at which width. It writes CR, CUU (ESC[nA) back to the area's first row, EL (ESC[K) at each
// row's start, ED (ESC[J) below what it wrote, and SGR; nothing else (DESIGN.md: why it overwrites
// in place, never erases first: tmux's scroll-on-clear and its wrapped-row mark).
type screen struct {
	prev   liveFrame
	prevW  int
	widths []int // display width of each row drawn
}

// compose appends to dst the bytes of one frame: the cursor back to the first row of the live area,
// the lines to print above it (which scroll into the scrollback), the new rows, and what is left of
// the old area cleared. The cursor ends at the start of the row below the area. Nothing is appended
// when there is nothing to print and the rows did not change.
func (s *screen) compose(dst, above []byte, next *liveFrame, width int) []byte {
	resized := s.prevW != 0 && width != s.prevW
	if len(above) == 0 && !resized && bytes.Equal(next.b, s.prev.b) && slices.Equal(next.ends, s.prev.ends) {
		return dst
	}
	up := s.prev.Len()
	if resized && width < s.prevW {
		// A terminal that rewraps its lines on resize (tmux, VTE, kitty, iTerm2, Windows Terminal)
		// now holds each old row on ceil(w/width) rows. One that does not (xterm) holds it on one:
		// going up too far then overwrites a few lines of output above the area on the screen,
		// never leaves a stale row.
		up = 0
		for _, w := range s.widths {
			up += max(1, (w+width-1)/width)
		}
	}
	dst = append(dst, '\r')
	if up > 0 {
		dst = appendUp(dst, up)
	}
	for line := range bytes.Lines(above) {
		dst = appendAbove(dst, bytes.TrimSuffix(line, newline), width)
	}
	s.widths = s.widths[:0]
	for i := 0; i < next.Len(); i++ {
		row := next.Row(i)
		dst = append(dst, "\x1b[K"...)
		dst = append(dst, row...)
		dst = append(dst, '\n')
		s.widths = append(s.widths, displayWidth(row))
	}
	if len(above) > 0 || next.Len() > 0 {
		dst = append(dst, "\x1b[J"...)
	} else {
		// Nothing drawn over the old area: clear it row by row, then come back.
		for range up {
			dst = append(dst, "\x1b[K\n"...)
		}
		dst = appendUp(dst, up)
	}
	if next != &s.prev {
		s.prev.b = append(s.prev.b[:0], next.b...)
		s.prev.ends = append(s.prev.ends[:0], next.ends...)
	}
	s.prevW = width
	return dst
}

func appendUp(dst []byte, n int) []byte {
	return append(strconv.AppendInt(append(dst, "\x1b["...), int64(n), 10), 'A')
}

// appendAbove writes one line above the live area, over whatever the old area had there: EL, the
// line, EL again to clear the rest of its last row when it wrapped (unless the line fills that row
// exactly: EL would then erase its last character on terminals that keep the cursor on the last
// column), then a newline.
func appendAbove(dst, line []byte, width int) []byte {
	dst = append(dst, "\x1b[K"...)
	dst = append(dst, line...)
	if w := displayWidth(line); w == 0 || w%width != 0 {
		dst = append(dst, "\x1b[K"...)
	}
	return append(dst, '\n')
}

// droppedLine is the line that says lines were lost because the writer did not keep up, without its
// newline.
func droppedLine(dst []byte, n int, color bool) []byte {
	e := Exporter{color: color}
	return e.marked(dst, sgrYellow, "… "+strconv.Itoa(n)+" lines not shown: the terminal did not keep up")
}
