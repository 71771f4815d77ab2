package prettyexporter

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivo/uniseg"
)

// fakeClock is the exporter's wall clock in these tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func withClock(c *fakeClock) Option { return func(cfg *config) { cfg.now = c.now } }

// vtWriter feeds each Write to a terminal emulator and checks that every
// frame is one Write of the shape the live view promises.
type vtWriter struct {
	mu     sync.Mutex
	t      testing.TB
	vt     *vt
	writes int
	raw    bytes.Buffer
	last   []byte
	w, h   int
	direct bool // writes that are not frames (Output after Shutdown)
}

func (w *vtWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	w.raw.Write(b)
	w.last = append(w.last[:0], b...)
	if !w.direct && (!bytes.HasPrefix(b, []byte("\r")) || !bytes.HasSuffix(b, []byte("\x1b[J")) && !bytes.HasSuffix(b, []byte("A"))) {
		w.t.Errorf("a frame not written in one piece: %q", b)
	}
	return w.vt.Write(b)
}

func (w *vtWriter) size() (int, int) { w.mu.Lock(); defer w.mu.Unlock(); return w.w, w.h }

func (w *vtWriter) resize(width, height int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w, w.h = width, height
	w.vt.Resize(width, height)
}

func (w *vtWriter) history() []string { w.mu.Lock(); defer w.mu.Unlock(); return w.vt.History() }
func (w *vtWriter) screen() []string  { w.mu.Lock(); defer w.mu.Unlock(); return w.vt.Screen() }
func (w *vtWriter) count() int        { w.mu.Lock(); defer w.mu.Unlock(); return w.writes }

// wrap is how a terminal of width columns shows lines: each cut into rows
// of at most width columns (a grapheme that does not fit goes to the next).
func wrap(lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		var row strings.Builder
		w, state := 0, -1
		rest := l
		for len(rest) > 0 {
			var g string
			var gw int
			g, rest, gw, state = uniseg.FirstGraphemeClusterInString(rest, state)
			if w+gw > width {
				out = append(out, strings.TrimRight(row.String(), " "))
				row.Reset()
				w = 0
			}
			row.WriteString(g)
			w += gw
		}
		out = append(out, strings.TrimRight(row.String(), " "))
	}
	return out
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// twin replays what the exporter is given into a model of its own, to
// know what the terminal must show: the lines printed above so far and
// the current frame.
type twin struct {
	m     *testView
	above []string
	f     liveFrame
}

func (tw *twin) apply(recs []step, wall time.Time) {
	for i := range recs {
		applyStep(tw.m.liveModel, &recs[i], wall)
	}
}

func (tw *twin) draw(now time.Time, w, h int) []string {
	tw.m.r.width = w
	tw.m.closeDue(now) // as the exporter's goroutine does before each frame
	tw.m.frame(&tw.f, now, w, h, false)
	q := tw.m.take()
	tw.above = append(tw.above, splitLines(q)...)
	var rows []string
	for i := 0; i < tw.f.Len(); i++ {
		rows = append(rows, strings.TrimRight(string(tw.f.Row(i)), " "))
	}
	return rows
}

// onTerminal makes a live exporter that draws on a terminal emulator of w
// columns and h rows (which rewraps its lines on resize, as tmux does,
// when reflow is set), colourless and without times, its clock at the
// arrival of the first of recs.
func onTerminal(t *testing.T, recs []step, w, h int, reflow bool) (*LiveExporter, *vtWriter, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: recs[0].when()}
	out := &vtWriter{t: t, vt: newVT(w, h), w: w, h: h}
	out.vt.reflow = reflow
	e, err := NewLive(WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(out.size),
		WithColor(ColorNever), WithoutTime(), withClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	return e, out, clock
}

// TestLiveTerminalScreen replays the exact bytes the exporter writes for
// a real Ansible run through a terminal emulator: after every frame the
// terminal holds every line printed above the live area, once, in order,
// then the live area as the frame function draws it, and nothing else;
// the same after the terminal shrinks (rewrapping its lines, as tmux
// does) and with more parts than rows.
func TestLiveTerminalScreen(t *testing.T) {
	recs := ansibleRecords(t, "../ansible/testdata/streams/site.jsonl")
	e, out, clock := onTerminal(t, recs, 100, 16, true)
	defer e.Shutdown(context.Background())
	tw := &twin{m: testModel(false)}

	resizedAt := -1 // lines of tw.above printed before the resize
	check := func(step string) {
		t.Helper()
		w, h := out.size()
		rows := tw.draw(clock.now(), w, h)
		if out.vt.err != nil {
			t.Fatalf("%s: %v", step, out.vt.err)
		}
		out.mu.Lock()
		wrapped, y := out.vt.WrappedOnScreen(), out.vt.y
		out.mu.Unlock()
		for _, row := range wrapped {
			if row >= y-len(rows) {
				t.Fatalf("%s: row %d of the live area is marked wrapped: a copy or a reflow would join it to the next", step, row)
			}
		}
		if resizedAt < 0 {
			want := append(wrap(tw.above, w), rows...)
			if got := out.history(); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: the terminal shows\n%s\n---- want\n%s", step, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			return
		}
		// After a shrink, a terminal that rewraps its lines holds the
		// old area on more rows than the screen has: those in the
		// scrollback are out of the cursor's reach. The screen is
		// clean: the lines printed above since the resize, then the
		// live area.
		since := wrap(tw.above[resizedAt:], w)
		want := append(since, rows...)
		screen := out.screen()
		if len(want) > h-1 { // the cursor keeps the last row
			want = want[len(want)-(h-1):]
		}
		// When the live area shrinks, the cursor ends above the last
		// row, and the screen holds fewer lines than it could.
		if len(screen) >= len(rows) && len(screen) < len(want) {
			want = want[len(want)-len(screen):]
		}
		if len(screen) < len(want) || strings.Join(screen[len(screen)-len(want):], "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: the screen shows\n%s\n---- want it to end with\n%s\nlast write %q", step, strings.Join(screen, "\n"), strings.Join(want, "\n"), out.last)
		}
		for _, l := range screen[:len(screen)-len(want)] {
			if strings.Contains(l, "running ") {
				t.Fatalf("%s: a stale row of the live area is on screen: %q\n%s", step, l, strings.Join(screen, "\n"))
			}
		}
	}
	sawMore := false
	for i := 0; i < len(recs); i += 6 {
		batch := recs[i:min(i+6, len(recs))]
		wall := batch[len(batch)-1].when()
		clock.set(wall)
		if err := e.feed(batch); err != nil {
			t.Fatal(err)
		}
		tw.apply(batch, wall)
		clock.set(wall.Add(1200 * time.Millisecond))
		if err := e.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		check("after record " + batch[len(batch)-1].what())
		sawMore = sawMore || strings.Contains(strings.Join(out.screen(), "\n"), " more")
		if i == 36 {
			out.resize(64, 5) // the terminal shrinks mid-run
			resizedAt = len(tw.above)
		}
	}
	if !sawMore {
		t.Error("the run never had more parts than rows: the test lost its point")
	}
	// Nothing changed: no frame.
	n := out.count()
	for range 3 {
		_ = e.ForceFlush(context.Background())
	}
	if out.count() != n {
		t.Errorf("%d frames written while nothing changed", out.count()-n)
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
	// After the shutdown the live area is gone: the terminal ends with
	// what was printed above it since the resize, ending with the final
	// block.
	tw.m.endAll(clock.now())
	tw.draw(clock.now(), 64, 5)
	got, want := out.history(), wrap(tw.above[resizedAt:], 64)
	if len(got) < len(want) || strings.Join(got[len(got)-len(want):], "\n") != strings.Join(want, "\n") {
		t.Fatalf("after Shutdown the terminal shows\n%s\n---- want it to end with\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if joined := strings.Join(tw.above, "\n"); !strings.Contains(joined, "\n✗ Install failed: 1 failure\n") {
		t.Errorf("no failure summary at the end:\n%s", joined)
	}
}

// TestLiveTerminalNoReflow: a terminal that crops its lines on resize
// (xterm) instead of rewrapping them: the live area is redrawn whole at
// the bottom and no row of the old one is left on screen.
func TestLiveTerminalNoReflow(t *testing.T) {
	recs := terraformRecords(t, "../terraform/testdata/streams/tofu-apply-create.jsonl", "Install")
	e, out, clock := onTerminal(t, recs, 90, 12, false)
	defer e.Shutdown(context.Background())
	tw := &twin{m: testModel(false)}
	for i := 0; i < len(recs); i += 8 {
		batch := recs[i:min(i+8, len(recs))]
		wall := batch[len(batch)-1].when()
		clock.set(wall)
		_ = e.feed(batch)
		tw.apply(batch, wall)
		_ = e.ForceFlush(context.Background())
		w, h := out.size()
		rows := tw.draw(clock.now(), w, h)
		screen := out.screen()
		if len(screen) < len(rows) || strings.Join(screen[len(screen)-len(rows):], "\n") != strings.Join(rows, "\n") {
			t.Fatalf("the screen\n%s\n---- does not end with the frame\n%s", strings.Join(screen, "\n"), strings.Join(rows, "\n"))
		}
		for _, l := range screen[:len(screen)-len(rows)] {
			if strings.Contains(l, "running ") || strings.HasPrefix(l, "  ◌") || strings.HasPrefix(l, "  ▰") || strings.HasPrefix(l, "  ▱") {
				t.Fatalf("a stale row of the live area is left on screen: %q\n%s", l, strings.Join(screen, "\n"))
			}
		}
		if i == 16 {
			out.resize(45, 12)
		}
	}
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
}

// TestLiveFrameRate: while records keep coming, at most one frame per
// 100 ms is written (the count can only be lower on a loaded machine).
func TestLiveFrameRate(t *testing.T) {
	out := &vtWriter{t: t, vt: newVT(80, 24), w: 80, h: 24}
	e, _ := NewLive(WithWriter(out), WithLiveMode(LiveTerminal), WithTerminalSize(out.size), WithColor(ColorNever))
	recs := ansibleRecords(t, "../ansible/testdata/streams/site.jsonl")
	start := time.Now()
	for i := range 400 {
		_ = e.feed(recs[i%len(recs) : i%len(recs)+1])
		time.Sleep(2 * time.Millisecond)
	}
	elapsed := time.Since(start)
	n := out.count()
	if limit := int(elapsed/liveFrameInterval) + 2; n > limit {
		t.Errorf("%d frames in %v: more than 10 a second", n, elapsed)
	}
	if n == 0 {
		t.Error("no frame at all")
	}
	_ = e.Shutdown(context.Background())
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
}

// TestLiveOutputAbove: what the program writes to Output is printed above
// the live area, whole lines, made safe, never inside the area.
func TestLiveOutputAbove(t *testing.T) {
	recs := ansibleRecords(t, "../ansible/testdata/streams/site.jsonl")
	e, out, _ := onTerminal(t, recs, 80, 12, true)
	_ = e.feed(recs[:10])
	_ = e.ForceFlush(context.Background())
	o := e.Output()
	_, _ = o.Write([]byte("TASK [Install nginx] \x1b[0;33mchanged\x1b[0m\n"))
	_, _ = o.Write([]byte("half a "))
	_, _ = o.Write([]byte("line\x1b]0;title\x07 \x1b[2J\x1b[Hcleared?\tbell\a\r\nprogress 10%\rprogress 100%\n"))
	_, _ = o.Write([]byte("no newline yet"))
	_ = e.ForceFlush(context.Background())
	h := out.history()
	joined := strings.Join(h, "\n")
	for _, want := range []string{"TASK [Install nginx] changed", "half a line cleared?    bell\\x07", "progress 100%"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %q in\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "progress 10%\n") || strings.Contains(joined, "no newline yet") {
		t.Errorf("an overwritten or unfinished line shown:\n%s", joined)
	}
	// Above the area: the live area's header is the last block on screen.
	screen := out.screen()
	area := -1
	for i, l := range screen {
		if strings.HasPrefix(l, "▸ Install") && strings.Contains(l, "running") {
			area = i
		}
	}
	if area < 0 {
		t.Fatalf("no live area on screen:\n%s", strings.Join(screen, "\n"))
	}
	for _, l := range screen[area:] {
		if strings.Contains(l, "TASK") || strings.Contains(l, "progress") || strings.Contains(l, "half") {
			t.Errorf("tool output inside the live area:\n%s", strings.Join(screen, "\n"))
		}
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(out.history(), "\n"), "no newline yet") {
		t.Error("Shutdown lost the unfinished line")
	}
	// After Shutdown, Output writes through.
	out.mu.Lock()
	out.direct = true
	out.mu.Unlock()
	_, _ = o.Write([]byte("after\n"))
	if !strings.HasSuffix(out.raw.String(), "after\n") {
		t.Errorf("after Shutdown, Output did not write through: %q", out.raw.String())
	}
	if out.vt.err != nil {
		t.Fatal(out.vt.err)
	}
}

// TestVTScrollOnClear: the emulator keeps what ED from the top-left
// corner clears in the scrollback, as tmux does: the trap a live area
// drawn from the top of the screen must not fall into (it would copy
// every frame into the scrollback).
func TestVTScrollOnClear(t *testing.T) {
	v := newVT(10, 4)
	_, _ = v.Write([]byte("frame 1\nrow\n\r\x1b[2A\x1b[J"))
	if got := strings.Join(v.History(), "|"); got != "frame 1|row" {
		t.Errorf("history %q", got)
	}
	if len(v.Screen()) != 0 {
		t.Errorf("screen %q", v.Screen())
	}
	// The live view's frames, drawn from the top of a fresh screen,
	// leave no copy in the scrollback.
	var f1, f2 liveFrame
	f1.b, f1.ends = []byte("▸ a  running 1sb"), []int{15, 16}
	f2.b, f2.ends = []byte("▸ a  running 2s"), []int{15}
	var s screen
	v = newVT(20, 3)
	_, _ = v.Write(s.compose(nil, nil, &f1, 20))
	_, _ = v.Write(s.compose(nil, []byte("above\n"), &f2, 20))
	_, _ = v.Write(s.compose(nil, nil, &liveFrame{}, 20))
	if got := strings.Join(v.History(), "|"); got != "above" {
		t.Errorf("history %q, want only the line printed above", got)
	}
	if v.err != nil {
		t.Fatal(v.err)
	}
}
