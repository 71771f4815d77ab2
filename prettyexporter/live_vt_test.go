package prettyexporter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// vt is a small terminal emulator for the sequences the live view may
// write, and no others: printable text (graphemes one or two columns
// wide, with auto-wrap and the pending-wrap state of the last column),
// CR, LF (with the tty's onlcr: LF moves to column 0), CUU (ESC[nA), EL
// (ESC[K), ED (ESC[J) and SGR (ESC[...m, ignored). Anything else is an
// error: the live view must not write it. Lines scrolled off the top go
// to the scrollback. A resize rewraps the lines, as tmux and most modern
// terminals do (reflow), or crops them, as xterm does.
type vt struct {
	w, h       int
	rows       []vtLine
	x, y       int
	scrollback []vtLine
	reflow     bool
	progress   []string // OSC 9;4 sequences received: "state;percent"
	err        error
}

type vtLine struct {
	cells   []string // one grapheme per cell; "" after a wide one, " " when empty
	wrapped bool     // continued on the next row by auto-wrap
}

func newVT(w, h int) *vt {
	t := &vt{w: w, h: h, reflow: true}
	for range h {
		t.rows = append(t.rows, t.blank())
	}
	return t
}

func (t *vt) blank() vtLine {
	l := vtLine{cells: make([]string, t.w)}
	for i := range l.cells {
		l.cells[i] = " "
	}
	return l
}

func (t *vt) fail(format string, args ...any) {
	if t.err == nil {
		t.err = fmt.Errorf(format, args...)
	}
}

// osc takes an OSC sequence ended by BEL: only OSC 9;4 (progress: state 0 to 4, a percent 0 to
// 100) is one the live view may write; it is recorded, not drawn.
func (t *vt) osc(s string) string {
	end := strings.IndexByte(s, '\a')
	if end < 0 {
		t.fail("unterminated OSC %q", s)
		return ""
	}
	body := s[2:end]
	args, ok := strings.CutPrefix(body, "9;4;")
	st, pct, ok2 := strings.Cut(args, ";")
	state, err1 := strconv.Atoi(st)
	percent, err2 := strconv.Atoi(pct)
	if !ok || !ok2 || err1 != nil || err2 != nil || state < 0 || state > 4 || percent < 0 || percent > 100 {
		t.fail("OSC %q is not a valid OSC 9;4", body)
	}
	t.progress = append(t.progress, args)
	return s[end+1:]
}

// Write feeds bytes to the terminal.
func (t *vt) Write(b []byte) (int, error) {
	n := len(b)
	s := string(b)
	state := -1
	for len(s) > 0 {
		c := s[0]
		switch {
		case c == 0x1b:
			s = t.escape(s)
			state = -1
			continue
		case c == '\r':
			t.x = 0
			s, state = s[1:], -1
			continue
		case c == '\n':
			t.x = 0
			t.lineFeed(false)
			s, state = s[1:], -1
			continue
		case c < ' ' || c == 0x7f:
			t.fail("control byte %#x written raw", c)
			s, state = s[1:], -1
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s); r >= 0x80 && r <= 0x9f {
			t.fail("C1 control %U written raw", r)
		}
		var cluster string
		var w int
		cluster, s, w, state = uniseg.FirstGraphemeClusterInString(s, state)
		t.put(cluster, w)
	}
	return n, nil
}

func (t *vt) put(g string, w int) {
	if w == 0 {
		return
	}
	if t.x+w > t.w { // pending wrap, or a wide grapheme that does not fit
		t.rows[t.y].wrapped = true
		t.x = 0
		t.lineFeed(true)
	}
	t.rows[t.y].cells[t.x] = g
	if w == 2 {
		t.rows[t.y].cells[t.x+1] = ""
	}
	t.x += w // t.x == t.w: the pending-wrap state
}

// lineFeed moves down, scrolling at the bottom. As in tmux, a row keeps
// its wrapped mark until it is erased from its first column.
func (t *vt) lineFeed(soft bool) {
	if t.y < t.h-1 {
		t.y++
		return
	}
	t.scrollback = append(t.scrollback, t.rows[0])
	copy(t.rows, t.rows[1:])
	t.rows[t.h-1] = t.blank()
}

func (t *vt) escape(s string) string {
	if len(s) >= 2 && s[1] == ']' {
		return t.osc(s)
	}
	if len(s) < 2 || s[1] != '[' {
		t.fail("escape %q not a CSI", s[:min(len(s), 4)])
		return s[1:]
	}
	i := 2
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == ';') {
		i++
	}
	if i == len(s) {
		t.fail("unterminated CSI %q", s)
		return ""
	}
	params, final := s[2:i], s[i]
	switch final {
	case 'm':
	case 'A':
		n := 1
		if params != "" {
			n, _ = strconv.Atoi(params)
		}
		t.y = max(0, t.y-n)
		t.x = min(t.x, t.w-1)
	case 'K':
		if params != "" && params != "0" {
			t.fail("EL %s", params)
		}
		for x := min(t.x, t.w-1); x < t.w; x++ {
			t.rows[t.y].cells[x] = " "
		}
		if t.x == 0 {
			t.rows[t.y].wrapped = false
		}
	case 'J':
		if params != "" && params != "0" {
			t.fail("ED %s", params)
		}
		if t.x == 0 && t.y == 0 {
			// As tmux does (scroll-on-clear): clearing the whole
			// screen from its top-left corner keeps what it held in
			// the scrollback.
			last := -1
			for y, l := range t.rows {
				if l.String() != "" {
					last = y
				}
			}
			for _, l := range t.rows[:last+1] {
				t.scrollback = append(t.scrollback, vtLine{cells: append([]string(nil), l.cells...), wrapped: l.wrapped})
			}
		}
		for x := min(t.x, t.w-1); x < t.w; x++ {
			t.rows[t.y].cells[x] = " "
		}
		t.rows[t.y].wrapped = false
		for y := t.y + 1; y < t.h; y++ {
			t.rows[y] = t.blank()
		}
	default:
		t.fail("CSI %q%c not expected", params, final)
	}
	return s[i+1:]
}

// Resize changes the size. With reflow, the logical lines of the
// scrollback and the screen up to the cursor's row are rewrapped to the
// new width and the cursor stays after the last of them; without, rows are
// cropped or padded, and when the height shrinks the top rows go to the
// scrollback so that the cursor's row stays on screen.
func (t *vt) Resize(w, h int) {
	if !t.reflow {
		for i := range t.rows {
			t.rows[i] = t.fit(t.rows[i], w)
		}
		for i := range t.scrollback {
			t.scrollback[i] = t.fit(t.scrollback[i], w)
		}
		t.w = w
		for len(t.rows) > h && t.y > 0 {
			t.scrollback = append(t.scrollback, t.rows[0])
			t.rows = t.rows[1:]
			t.y--
		}
		t.rows = t.rows[:min(len(t.rows), h)]
		for len(t.rows) < h {
			t.rows = append(t.rows, t.blank())
		}
		t.h, t.x = h, min(t.x, w-1)
		return
	}
	// Logical lines: joined across soft wraps, up to the cursor's row.
	var logical [][]string
	var cur []string
	all := append(append([]vtLine{}, t.scrollback...), t.rows[:t.y+1]...)
	for i, l := range all {
		cells := l.cells
		if !l.wrapped {
			cells = trimCells(cells)
		}
		cur = append(cur, cells...)
		if i == len(all)-1 {
			cur = trimCells(cur)
			if t.x == 0 {
				cur = nil // the live view leaves the cursor on an empty row
			}
		}
		if !l.wrapped || i == len(all)-1 {
			logical = append(logical, cur)
			cur = nil
		}
	}
	t.w, t.h = w, h
	var out []vtLine
	for _, cells := range logical {
		line := t.blank()
		x := 0
		for _, g := range cells {
			if g == "" {
				continue
			}
			gw := uniseg.StringWidth(g)
			if x+gw > w {
				line.wrapped = true
				out = append(out, line)
				line, x = t.blank(), 0
			}
			line.cells[x] = g
			if gw == 2 {
				line.cells[x+1] = ""
			}
			x += gw
		}
		out = append(out, line)
	}
	t.x = 0
	if last := logical[len(logical)-1]; len(last) > 0 {
		t.x = min(cellsWidth(last), w-1)
	}
	t.scrollback = nil
	if len(out) > h {
		t.scrollback = append(t.scrollback, out[:len(out)-h]...)
		out = out[len(out)-h:]
	}
	t.rows = append([]vtLine(nil), out...)
	t.y = len(out) - 1
	for len(t.rows) < h {
		t.rows = append(t.rows, t.blank())
	}
}

func cellsWidth(cells []string) int {
	w := 0
	for _, g := range cells {
		if g != "" {
			w += uniseg.StringWidth(g)
		}
	}
	return w
}

func trimCells(c []string) []string {
	n := len(c)
	for n > 0 && c[n-1] == " " {
		n--
	}
	return c[:n]
}

func (t *vt) fit(l vtLine, w int) vtLine {
	out := vtLine{cells: make([]string, w), wrapped: l.wrapped}
	for i := range out.cells {
		out.cells[i] = " "
		if i < len(l.cells) {
			out.cells[i] = l.cells[i]
		}
	}
	return out
}

func (l vtLine) String() string {
	return strings.TrimRight(strings.Join(l.cells, ""), " ")
}

// Screen returns the visible rows, trailing blanks trimmed, trailing
// empty rows dropped.
func (t *vt) Screen() []string {
	var out []string
	for _, l := range t.rows {
		out = append(out, l.String())
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// WrappedOnScreen returns the screen rows marked as wrapped, whose
// next row a copy (tmux capture-pane -J) or a later reflow joins to them.
func (t *vt) WrappedOnScreen() []int {
	var out []int
	for y, l := range t.rows {
		if l.wrapped {
			out = append(out, y)
		}
	}
	return out
}

// History is the scrollback followed by the screen.
func (t *vt) History() []string {
	var out []string
	for _, l := range t.scrollback {
		out = append(out, l.String())
	}
	return append(out, t.Screen()...)
}
