package sdkparts

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress/wire"
)

// NewMessageBodyExporter wraps next so that each progress record it exports
// (events and condition transitions) carries, as its record body, the
// message TNCO receives for it: the JSON text of wire.AppendMessage, as a
// BYTESLICE value. Other records pass unchanged.
//
// The message is built once, on the export goroutine (never in
// progress.Record). A collector forwards it as it is; collector-config's
// pipeline checks it against the record's attributes (kept for filters and
// routing) and redacts it instead of building it. The price is the details
// travelling twice on the OTLP hop. Export is not safe for concurrent use,
// which the SDK's processors never do: it reuses its buffers.
func NewMessageBodyExporter(next sdklog.Exporter) sdklog.Exporter {
	return &messageBodyExporter{next: next}
}

type messageBodyExporter struct {
	next sdklog.Exporter
	buf  []sdklog.Record // reused: Export is never called concurrently
	msg  []byte          // the message being built, reused
}

// maxKeptMessageBuffer bounds the message buffer kept between exports, so
// that one huge record does not pin its size for the life of the driver.
const maxKeptMessageBuffer = 256 << 10

func (e *messageBodyExporter) Export(ctx context.Context, records []sdklog.Record) error {
	out := e.buf[:0]
	for i := range records {
		// A shallow copy shares the attributes, which nothing here
		// changes; only the copy's body is set (the Exporter contract:
		// never modify the caller's record).
		c := records[i]
		if c.InstrumentationScope().Name == wire.ScopeName {
			var ok bool
			if e.msg, ok = wire.AppendMessage(e.msg[:0], &c); ok {
				c.SetBody(attribute.ByteSliceValue(e.msg)) // copies the bytes
			}
		}
		out = append(out, c)
	}
	err := e.next.Export(ctx, out)
	clear(out) // retain no records between exports
	e.buf = out[:0]
	if cap(e.msg) > maxKeptMessageBuffer {
		e.msg = nil
	}
	return err
}

func (e *messageBodyExporter) Shutdown(ctx context.Context) error   { return e.next.Shutdown(ctx) }
func (e *messageBodyExporter) ForceFlush(ctx context.Context) error { return e.next.ForceFlush(ctx) }
