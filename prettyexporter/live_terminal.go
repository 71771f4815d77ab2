package prettyexporter

import "strconv"

// screen is what the terminal goroutine knows of the terminal: the rows
// of the live area it drew last, at which width. It uses four sequences
// and SGR, nothing else: CR, CUU (ESC[nA) to go back to the area's first
// row, EL (ESC[K) at each row's end, ED (ESC[J) to clear below. No
// cursor save/restore (scrolling breaks it), no alternate screen (the
// lines printed above must stay in the scrollback), no query of the
// terminal (the exporter never reads stdin).
type screen struct {
	prev   liveFrame
	prevW  int
	widths []int // display width of each row drawn
}

// compose appends to dst the bytes of one frame: the cursor back to the
// first row of the live area, the lines to print above it (which scroll
// into the scrollback), the new rows, and the area below cleared. The
// cursor ends at the start of the row below the area. Nothing is
// appended when there is nothing to print and the rows did not change.
func (s *screen) compose(dst, above []byte, dropped int, next *liveFrame, width int, color bool) []byte {
	resized := s.prevW != 0 && width != s.prevW
	if len(above) == 0 && dropped == 0 && !resized && next.equal(&s.prev) {
		return dst
	}
	up := s.prev.Len()
	if resized && width < s.prevW {
		// A terminal that rewraps its lines on resize (tmux, VTE,
		// kitty, iTerm2, Windows Terminal) now holds each old row on
		// ceil(w/width) rows. One that does not (xterm) holds it on
		// one: going up too far then clears a few lines of output
		// above the area from the screen, never leaves a stale row.
		up = 0
		for _, w := range s.widths {
			up += max(1, (w+width-1)/width)
		}
	}
	dst = append(dst, '\r')
	if up > 0 {
		dst = append(dst, "\x1b["...)
		dst = strconv.AppendInt(dst, int64(up), 10)
		dst = append(dst, 'A')
	}
	if len(above) > 0 || dropped > 0 || resized {
		dst = append(dst, "\x1b[J"...)
	}
	if dropped > 0 {
		dst = appendDropped(dst, dropped, color)
	}
	dst = append(dst, above...)
	s.widths = s.widths[:0]
	for i := 0; i < next.Len(); i++ {
		row := next.Row(i)
		dst = append(dst, row...)
		dst = append(dst, "\x1b[K\n"...)
		s.widths = append(s.widths, displayWidth(row))
	}
	dst = append(dst, "\x1b[J"...)
	if next != &s.prev {
		s.prev.copyFrom(next)
	}
	s.prevW = width
	return dst
}

// appendDropped is the line that says lines were lost because the writer
// did not keep up.
func appendDropped(dst []byte, n int, color bool) []byte {
	if color {
		dst = append(dst, sgrYellow...)
	}
	dst = append(dst, "… "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, " lines not shown: the terminal did not keep up"...)
	if color {
		dst = append(dst, sgrReset...)
	}
	return append(dst, '\n')
}
