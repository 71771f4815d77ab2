package prettyexporter

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// maxChunk is the size at which Export writes out what it has encoded so
// far, so that a huge batch does not hold a huge buffer.
const maxChunk = 256 << 10

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 1 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// sink is the part both exporters share: a writer guarded by a one-slot
// semaphore (a channel rather than a sync.Mutex, so that waiting for it
// honours a context), and the shutdown state.
type sink struct {
	sem     chan struct{}
	w       io.Writer
	stopped atomic.Bool
}

func newSink(w io.Writer) sink { return sink{sem: make(chan struct{}, 1), w: w} }

// lock takes the writer, or gives up with ctx's error.
func (s *sink) lock(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sink) unlock() { <-s.sem }

var errNotNew = errors.New("prettyexporter: exporter not created by New or NewJSON")

// encodeFunc appends one record, newline included.
type encodeFunc func(b []byte, r *sdklog.Record) []byte

// export encodes records into a pooled buffer outside the lock and writes
// it with one Write (one per maxChunk for huge batches).
func (s *sink) export(ctx context.Context, records []sdklog.Record, enc encodeFunc) error {
	if s.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	if s.sem == nil {
		return errNotNew
	}
	if len(records) == 0 {
		return nil
	}
	bp := getBuf()
	defer putBuf(bp)
	b := *bp
	for i := range records {
		if err := ctx.Err(); err != nil {
			*bp = b
			return err
		}
		b = enc(b, &records[i])
		if len(b) >= maxChunk {
			if err := s.write(ctx, b); err != nil {
				*bp = b
				return err
			}
			b = b[:0]
		}
	}
	*bp = b
	if len(b) == 0 {
		return nil
	}
	return s.write(ctx, b)
}

func (s *sink) write(ctx context.Context, b []byte) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	// Checked again under the lock: once Shutdown has returned, nothing
	// more is written.
	if s.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	_, err := s.w.Write(b)
	return err
}

// flusher is a buffered writer, such as *bufio.Writer.
type flusher interface{ Flush() error }

func (s *sink) forceFlush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.stopped.Load() {
		return nil
	}
	f, ok := s.w.(flusher)
	if !ok || s.sem == nil {
		return nil // nothing is buffered here: each Export has written
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	return f.Flush()
}

// shutdown stops new writes at once, then waits (as long as ctx allows)
// for a Write in progress and flushes a buffered writer.
func (s *sink) shutdown(ctx context.Context) error {
	if s.stopped.Swap(true) || s.sem == nil {
		return nil
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if f, ok := s.w.(flusher); ok {
		return f.Flush()
	}
	return nil
}
