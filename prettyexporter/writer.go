package prettyexporter

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	sdklog "go.opentelemetry.io/otel/sdk/log"
)

const (
	maxChunk  = 256 << 10 // Export writes out what it has encoded so far: a huge batch, no huge buffer
	maxPooled = 1 << 20   // the largest buffer kept for reuse
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// sink is the part both exporters share: a writer guarded by a one-slot semaphore (a channel rather
// than a sync.Mutex, so that waiting for it honours a context), the record's encoder (appending
// one, newline included) and the shutdown state.
type sink struct {
	sem     chan struct{}
	w       io.Writer
	enc     func(b []byte, r *sdklog.Record) []byte
	stopped atomic.Bool
}

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

// Export writes records, one line each, with a single Write (one per 256 KiB for larger batches),
// encoded outside the lock. It returns ctx's error, writing nothing more, if ctx ends first, and
// sdk/log.ErrExporterShutdown after Shutdown, writing nothing.
func (s *sink) Export(ctx context.Context, records []sdklog.Record) error {
	if s.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	if s.sem == nil {
		return errNotNew
	}
	if len(records) == 0 {
		return nil
	}
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	defer func() {
		if cap(b) <= maxPooled {
			*bp = b[:0]
			bufPool.Put(bp)
		}
	}()
	for i := range records {
		if err := ctx.Err(); err != nil {
			return err
		}
		if b = s.enc(b, &records[i]); len(b) >= maxChunk {
			if err := s.write(ctx, b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
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
	// Checked again under the lock: once Shutdown has returned, nothing more is written.
	if s.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	_, err := s.w.Write(b)
	return err
}

// flusher is a buffered writer, such as *bufio.Writer.
type flusher interface{ Flush() error }

// ForceFlush flushes the writer if it is buffered (has a Flush() error method).
func (s *sink) ForceFlush(ctx context.Context) error {
	if err := ctx.Err(); err != nil || s.stopped.Load() {
		return err
	}
	if _, ok := s.w.(flusher); !ok || s.sem == nil {
		return nil // nothing is buffered here: each Export has written
	}
	return s.flush(ctx)
}

// Shutdown stops the exporter: later Exports write nothing and return sdk/log.ErrExporterShutdown.
// It waits for a Write already in progress, at most until ctx ends (then it returns ctx's error),
// and flushes a buffered writer.
func (s *sink) Shutdown(ctx context.Context) error {
	if s.stopped.Swap(true) || s.sem == nil {
		return nil
	}
	return s.flush(ctx)
}

// flush waits for the writer and flushes it when it is buffered.
func (s *sink) flush(ctx context.Context) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if f, ok := s.w.(flusher); ok {
		return f.Flush()
	}
	return nil
}
