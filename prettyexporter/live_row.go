package prettyexporter

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rivo/uniseg"
)

// liveRow builds one row of the live view: text measured in display columns (grapheme clusters and
// East Asian widths: CJK and emoji count two), with an optional right-aligned part (a duration),
// cut to the width when it does not fit. All text given to it is already safe.
type liveRow struct {
	b, right  []byte
	w, rightW int // display widths
	color     bool
}

func (r *liveRow) reset(color bool) {
	r.b, r.w, r.color, r.right, r.rightW = r.b[:0], 0, color, r.right[:0], 0
}

// paint appends s to dst in colour code ("" for none).
func (r *liveRow) paint(dst []byte, code, s string) []byte {
	if r.color && code != "" {
		dst = append(dst, code...)
		dst = append(dst, s...)
		return append(dst, sgrReset...)
	}
	return append(dst, s...)
}

// add appends s in colour code ("" for none).
func (r *liveRow) add(code, s string) {
	if s != "" {
		r.b = r.paint(r.b, code, s)
		r.w += textWidth(s)
	}
}

func (r *liveRow) setRight(code, s string) {
	r.right = r.paint(r.right[:0], code, s)
	r.rightW = textWidth(s)
}

// textWidth is the display width of s: its length when it is ASCII (the common case, and printable:
// the text given to a row is safe), else Unicode's measure.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return uniseg.StringWidth(s)
		}
	}
	return len(s)
}

func (r *liveRow) space(n int) {
	for ; n > 0; n-- {
		r.b = append(r.b, ' ')
		r.w++
	}
}

// appendTo appends the row to dst. A row of the live area (cut) is narrower than width, so that the
// terminal never wraps it, whatever it does with the last column. A line printed above the live
// area (not cut) is whole, its right part aligned to width when it fits.
func (r *liveRow) appendTo(dst []byte, width int, cut bool) []byte {
	avail := width - 1
	if r.rightW == 0 {
		if cut && r.w > avail {
			return cutWidth(dst, r.b, avail, r.color)
		}
		return append(dst, r.b...)
	}
	switch {
	case r.w+2+r.rightW <= avail:
		dst = append(dst, r.b...)
		for i := r.w + r.rightW; i < avail; i++ {
			dst = append(dst, ' ')
		}
	case !cut:
		dst = append(dst, r.b...)
		dst = append(dst, ' ', ' ')
	case avail-2-r.rightW >= 12:
		dst = cutWidth(dst, r.b, avail-2-r.rightW, r.color)
		dst = append(dst, ' ', ' ')
	default:
		return cutWidth(dst, r.b, avail, r.color)
	}
	return append(dst, r.right...)
}

// cutWidth appends the first columns of b (SGR sequences kept, not counted) so that the result is
// at most max columns wide, ending in "…" when something was cut.
func cutWidth(dst, b []byte, max int, color bool) []byte {
	if max <= 0 {
		return dst
	}
	if displayWidth(b) <= max {
		return append(dst, b...)
	}
	w, state := 0, -1
	for i := 0; i < len(b); {
		if b[i] == 0x1b {
			j := sgrEnd(b, i)
			dst = append(dst, b[i:j]...)
			i, state = j, -1
			continue
		}
		end := i
		for end < len(b) && b[end] != 0x1b {
			end++
		}
		cluster, _, cw, next := uniseg.FirstGraphemeCluster(b[i:end], state)
		if w+cw > max-1 {
			break
		}
		dst = append(dst, cluster...)
		w += cw
		i += len(cluster)
		state = next
	}
	dst = append(dst, "…"...)
	if color {
		dst = append(dst, sgrReset...)
	}
	return dst
}

// displayWidth is the columns b takes on a terminal, its SGR sequences not counted.
func displayWidth(b []byte) int {
	w := 0
	for i := 0; i < len(b); {
		if b[i] == 0x1b {
			i = sgrEnd(b, i)
			continue
		}
		end := i
		for end < len(b) && b[end] != 0x1b {
			end++
		}
		w += textWidth(string(b[i:end]))
		i = end
	}
	return w
}

// sgrEnd returns the index just after the SGR sequence (ESC [ ... m) that starts at b[i]: the
// view's own colours, the only escapes in its rows.
func sgrEnd(b []byte, i int) int {
	for i < len(b) && b[i] != 'm' {
		i++
	}
	return min(i+1, len(b))
}

// The glyphs of the live view: each one column wide and of neutral East Asian width, so that no
// terminal setting makes it two (a test checks).
const (
	glyphPending     = "◌"
	glyphRunning     = "▸"
	glyphOK          = "✓"
	glyphSkipped     = "↷"
	glyphFailed      = "✗"
	glyphUnreachable = "⊘"
	glyphCancelled   = "⊖"
	glyphTimeout     = "⧗"
	glyphRescued     = "↺" // failed, and recovered
	glyphIgnored     = "↯" // failed, and let through
	barDone          = "▰"
	barLeft          = "▱"
)

// looks are each status's glyph, colour and word in a row's counts of its children; statusWords
// says each without colour.
var looks = [numStatus]struct{ glyph, code, count string }{
	stPending:     {glyphPending, sgrDim, "ok"},
	stRunning:     {glyphRunning, sgrCyan, "ok"},
	stSkipped:     {glyphSkipped, sgrDim, "skipped"},
	stOK:          {glyphOK, sgrGreen, "ok"},
	stChanged:     {glyphOK, sgrYellow, "changed"},
	stRescued:     {glyphRescued, sgrYellow, "rescued"},
	stIgnored:     {glyphIgnored, sgrYellow, "ignored"},
	stCancelled:   {glyphCancelled, sgrRed, "cancelled"},
	stTimeout:     {glyphTimeout, sgrRed, "timeout"},
	stFailed:      {glyphFailed, sgrRed, "failed"},
	stUnreachable: {glyphUnreachable, sgrRed, "unreachable"},
}

// appendDuration writes d for a person: 0.4s, 12.3s, 1m05s, 2h03m; a running part in whole seconds,
// so that a frame changes once a second.
func appendDuration(b []byte, d time.Duration, running bool) []byte {
	d = max(d, 0)
	switch {
	case d < 10*time.Second && !running:
		return append(strconv.AppendFloat(b, d.Seconds(), 'f', 1, 64), 's')
	case d < time.Minute:
		return append(strconv.AppendInt(b, int64(d/time.Second), 10), 's')
	case d < time.Hour:
		return fmt.Appendf(b, "%dm%02ds", int64(d/time.Minute), int64(d%time.Minute/time.Second))
	}
	return fmt.Appendf(b, "%dh%02dm", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
}
