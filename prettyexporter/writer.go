package prettyexporter

import (
	"context"
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

// sink is the part both exporters share: a writer guarded by a mutex, and
// the shutdown state.
type sink struct {
	mu      sync.Mutex
	w       io.Writer
	stopped atomic.Bool
}

// encodeFunc appends one record, newline included.
type encodeFunc func(b []byte, r *sdklog.Record) []byte

// export encodes records into a pooled buffer outside the lock and writes
// it with one Write (one per maxChunk for huge batches).
func (s *sink) export(ctx context.Context, records []sdklog.Record, enc encodeFunc) error {
	if s.stopped.Load() {
		return sdklog.ErrExporterShutdown
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
			if err := s.write(b); err != nil {
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
	return s.write(b)
}

func (s *sink) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	if !ok {
		return nil // nothing is buffered here: each Export has written
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return f.Flush()
}

func (s *sink) shutdown() error {
	if s.stopped.Load() {
		return nil
	}
	// Taking the lock waits for a Write in progress, so that nothing is
	// written after Shutdown returns.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped.Swap(true) {
		return nil
	}
	if f, ok := s.w.(flusher); ok {
		return f.Flush()
	}
	return nil
}
