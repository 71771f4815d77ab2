package progresstest

import (
	"context"
	"sync"

	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// Exporter is an sdk/log Exporter that keeps clones of the records it is
// given. Put it behind a processor (or pass it to otelbridge.WithExporter)
// to see records exactly as an exporter sees them, after every processor
// ran. It is safe for concurrent use.
type Exporter struct {
	mu      sync.Mutex
	records []sdklog.Record
}

// Export keeps clones of rs.
func (e *Exporter) Export(_ context.Context, rs []sdklog.Record) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range rs {
		e.records = append(e.records, rs[i].Clone())
	}
	return nil
}

// Records returns the records exported so far, in order.
func (e *Exporter) Records() []sdklog.Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]sdklog.Record(nil), e.records...)
}

// Shutdown does nothing: the records stay readable.
func (e *Exporter) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing: Export keeps records synchronously.
func (e *Exporter) ForceFlush(context.Context) error { return nil }
