package prettyexporter

import (
	"cmp"
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/term"
)

// LiveExporter is the live view: on a terminal, one tree per operation (a header, the operation's
// spans as rows from SpanProcessor, condition streams, an N-of-M bar from common/Progress), redrawn
// in place at most 10 times a second; finished parts, logs and Output's lines printed above it.
// Where the writer is not a terminal or TERM=dumb, it writes plain lines instead. The package
// documentation says more.
//
// It implements go.opentelemetry.io/otel/sdk/log.Exporter and is safe for concurrent use. Export
// only updates a bounded in-memory model; one goroutine of the exporter's owns the writer, so a
// terminal that stops reading stalls nothing: frames are skipped, lines past a bound are counted
// and dropped. Create it with NewLive and call Shutdown, which prints what is left and stops the
// goroutine; the zero value writes nothing.
type LiveExporter struct {
	mu      sync.Mutex
	model   *liveModel
	partial []byte     // Output's unfinished line
	closed  bool       // the goroutine wrote its last frame: Output writes directly
	wmu     sync.Mutex // orders Output's direct writes after Shutdown behind the goroutine's

	w            io.Writer
	plain, color bool
	size         func() (width, height int)
	now          func() time.Time

	stopped          atomic.Bool
	wake, stop, done chan struct{}
	flushReq         chan chan struct{}

	// Owned by the goroutine.
	r            *liveRenderer
	notes        []liveNote // the notes taken last, emptied: the model's next queue
	scr          screen
	next         liveFrame
	spare, out   []byte
	prog         termProgress // the terminal's progress bar (live_progress.go)
	ci           *ciRenderer  // the CI format, instead of plain lines (live_ci.go)
	lastTick     time.Time    // plain mode's last tick
	lastGen      uint64
	lastSec      int64
	lastW, lastH int // lastW is -1 before the first frame
}

var _ sdklog.Exporter = (*LiveExporter)(nil)

// NewLive returns a live exporter writing to os.Stderr unless WithWriter says otherwise, and starts
// the goroutine that owns the writer. The mode is WithLiveMode's (by default: the live area on a
// real terminal, plain lines elsewhere); colour follows WithColor and NO_COLOR as for New. The
// error is always nil today; it is there so that a future option can fail without an API change.
func NewLive(opts ...Option) (*LiveExporter, error) {
	c := newConfig(os.Stderr, opts)
	_, _, isTerm := term.Size(c.w)
	mode := c.liveMode
	ci := detectCI(mode, isTerm, os.Getenv) // live_ci.go
	plain := mode == LivePlain || mode == LiveFlat || mode == LiveAuto && !isTerm || os.Getenv("TERM") == "dumb" || ci != ciNone
	color := useColor(c.color, c.w)
	if ci != ciNone {
		color = c.color != ColorNever && os.Getenv("NO_COLOR") == "" // both CIs show colours
		c.noTime = true                                              // and time each line themselves
	}
	size := c.size
	if size == nil {
		size = func() (int, int) {
			if cols, rows, ok := term.Size(c.w); ok {
				return cols, rows
			}
			return 80, 24
		}
	}
	e := &LiveExporter{
		w: c.w, plain: plain, color: color, size: size, now: c.now, lastW: -1,
		wake: make(chan struct{}, 1), flushReq: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if e.now == nil {
		e.now = time.Now
	}
	e.prog.on = !plain && terminalProgressOn(os.Getenv)
	e.r = newLiveRenderer(printer{
		pretty: &Exporter{color: color, noTime: c.noTime, layout: c.timeLayout},
		bare:   &Exporter{color: color, noTime: c.noTime, layout: c.timeLayout, noContext: true},
		color:  color,
	}, plain)
	e.model = newLiveModel(cmp.Or(c.maxNodes, DefaultLiveMaxNodes), cmp.Or(c.maxOps, DefaultLiveMaxOperations), plain)
	e.model.flat = mode == LiveFlat
	if ci != ciNone {
		e.ci = newCIRenderer(ci, e.r, os.Getenv)
		e.model.parts = true
	}
	go e.run()
	return e, nil
}

// Plain reports whether the exporter writes plain lines rather than the live area, as resolved when
// it was created.
func (e *LiveExporter) Plain() bool { return e.plain }

// Colored reports whether the exporter writes ANSI colours.
func (e *LiveExporter) Colored() bool { return e.color }

// Output returns a writer for the program's own text: a wrapped tool's output, notices, a
// slog.TextHandler's lines. Each complete line is printed above the live area, never into it, in
// order with the exporter's own lines; an unfinished line waits for its newline (or Shutdown).
// Escape sequences are removed and control characters escaped, so that a tool cannot move the
// cursor under the live area. Write never blocks on the terminal and never fails: lines past the
// bound are counted and dropped. After Shutdown, writes go to the exporter's writer unchanged.
func (e *LiveExporter) Output() io.Writer { return liveOutput{e} }

// Export updates the model with records; the goroutine draws it. It never writes and never waits
// for the writer. It returns sdk/log.ErrExporterShutdown after Shutdown, and ctx's error if ctx has
// already ended.
func (e *LiveExporter) Export(ctx context.Context, records []sdklog.Record) error {
	if e.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	if e.model == nil {
		return errNotNew
	}
	if err := ctx.Err(); err != nil || len(records) == 0 {
		return err
	}
	e.update(func(m *liveModel, wall time.Time) {
		m.batched = true
		for i := range records {
			m.apply(&records[i], wall)
		}
	})
	return nil
}

// signal wakes the goroutine in plain mode, where lines go out at once; a live frame takes the
// change within 100 ms anyway.
func (e *LiveExporter) signal() {
	if e.plain {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// ForceFlush returns when everything exported so far has been written (in the next frame, so that
// flushing does not raise the frame rate), or with ctx's error if ctx ends first, e.g. when the
// terminal does not read.
func (e *LiveExporter) ForceFlush(ctx context.Context) error {
	if e.model == nil || e.stopped.Load() {
		return nil
	}
	ch := make(chan struct{})
	select {
	case e.flushReq <- ch:
	case <-e.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	return e.wait(ctx, ch)
}

// wait returns when ch or the goroutine is done, or with ctx's error.
func (e *LiveExporter) wait(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-e.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown prints every operation still held as its final state, clears the live area and stops the
// goroutine. Later Exports return sdk/log.ErrExporterShutdown. It returns ctx's error if the last
// write has not returned when ctx ends (a terminal that does not read): the goroutine then ends
// when that write returns.
func (e *LiveExporter) Shutdown(ctx context.Context) error {
	if e.model == nil || e.stopped.Swap(true) {
		return nil
	}
	close(e.stop)
	return e.wait(ctx, e.done)
}

// run is the goroutine that owns the writer.
func (e *LiveExporter) run() {
	defer close(e.done)
	interval := liveFrameInterval
	if e.plain {
		interval = time.Second // heartbeats and held-back progress; lines go out on wake
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var waiting []chan struct{}
	for {
		final := false
		select {
		case <-ticker.C:
		case <-e.wake:
		case ch := <-e.flushReq:
			waiting = append(waiting, ch)
			if !e.plain {
				continue // answered by the next frame
			}
		case <-e.stop:
			final = true
		}
		e.step(final)
		for _, ch := range waiting {
			close(ch)
		}
		waiting = waiting[:0]
		if final {
			return
		}
	}
}

// step draws one frame (live) or writes the queued lines (plain), with one Write. Under the lock it
// only takes the model's notes and, when a frame is due, copies a snapshot; it renders both, and
// writes, outside it, so that a Write that blocks holds up nothing but this goroutine.
func (e *LiveExporter) step(final bool) {
	width, height := 0, 0
	if !e.plain {
		width, height = e.size()
	}
	r := e.r
	e.mu.Lock()
	now := e.now()
	e.model.closeDue(now)
	if final {
		e.model.endAll(now)
		if len(e.partial) > 0 {
			e.outputLine() // an unfinished line
		}
	}
	draw, tick := false, false
	if e.plain {
		// Heartbeats and held-back progress lines: once a second is enough.
		if tick = len(e.model.list) > 0 && now.Sub(e.lastTick) >= time.Second; tick {
			e.model.snapshot(&r.snap)
			e.lastTick = now
		}
	} else if sec := now.Unix(); final || e.model.gen != e.lastGen || (sec != e.lastSec && len(e.model.list) > 0) || width != e.lastW || height != e.lastH {
		e.model.snapshot(&r.snap)
		e.lastGen, e.lastSec, e.lastW, e.lastH = e.model.gen, sec, width, height
		draw = true
	}
	notes, dropped := e.model.takeNotes(e.notes)
	e.mu.Unlock()

	if !e.plain {
		r.width = width
	}
	r.p.q = e.spare[:0]
	if e.ci != nil {
		e.ci.print(notes, dropped)
	} else {
		r.print(notes, dropped)
	}
	e.notes = notes
	next := &e.scr.prev // the rows drawn last, unless something changed
	if tick {
		r.plainTick(&r.snap, now)
	} else if draw {
		r.frame(&e.next, &r.snap, now, width, height, e.color)
		next = &e.next
	}
	above := r.p.take(nil)

	buf := e.out[:0]
	if e.plain {
		buf = append(buf, above...)
	} else {
		buf = e.scr.compose(buf, above, next, width)
		buf = e.prog.update(buf, &r.snap, notes, now, final)
	}
	e.spare = above[:0]
	if final {
		e.wmu.Lock()
		defer e.wmu.Unlock()
	}
	if len(buf) > 0 {
		_, _ = e.w.Write(buf)
	}
	if final {
		// From now on Output writes directly (under wmu, so after this). What it queued since the
		// frame was composed goes out first.
		e.mu.Lock()
		e.closed = true
		notes, dropped := e.model.takeNotes(nil)
		e.mu.Unlock()
		if e.ci != nil {
			e.ci.print(notes, dropped)
		} else {
			r.print(notes, dropped)
		}
		if rest := r.p.take(nil); len(rest) > 0 {
			_, _ = e.w.Write(rest)
		}
	}
	if f, ok := e.w.(flusher); ok && (len(buf) > 0 || final) {
		_ = f.Flush()
	}
	e.out = buf[:0]
	if cap(buf) > maxPooled {
		e.out = nil
	}
	if cap(e.spare) > maxPooled {
		e.spare = nil
	}
}
