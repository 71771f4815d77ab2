package sdkparts

import (
	"context"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress/wire"
)

// NewMessageBodyExporter wraps next so that each progress event it exports
// carries, as its record body, the message TNCO receives for it:
// {eventType, progressEventType, details} with the details nested, as
// Ignition's ResourceTransitionProgressEvent.to_dict() has it (see
// wire.MessageBody). Other records pass unchanged.
//
// The Collector's transform language cannot unflatten the
// progress.details.* attributes, so the collector config builds the TNCO
// message's nested details from this body. The attributes stay as they are,
// so filters, redaction and routing keep working on flat keys; the price is
// the details travelling twice on the OTLP hop. The work happens on the
// export goroutine, never in progress.Record. otelbridge.Setup wraps its
// otlp exporter with it unless otelbridge.WithoutMessageBody is given.
//
// Export is not safe for concurrent use, which the SDK's processors never
// do: it reuses one buffer.
func NewMessageBodyExporter(next sdklog.Exporter) sdklog.Exporter {
	return &messageBodyExporter{next: next}
}

type messageBodyExporter struct {
	next sdklog.Exporter
	buf  []sdklog.Record // reused: Export is never called concurrently
}

func (e *messageBodyExporter) Export(ctx context.Context, records []sdklog.Record) error {
	out := e.buf[:0]
	for i := range records {
		r := &records[i]
		if r.InstrumentationScope().Name == wire.ScopeName {
			if body, ok := wire.MessageBody(r); ok {
				c := r.Clone() // the Exporter contract: never modify the caller's record
				c.SetBody(body)
				out = append(out, c)
				continue
			}
		}
		out = append(out, *r)
	}
	err := e.next.Export(ctx, out)
	clear(out) // retain no records between exports
	e.buf = out[:0]
	return err
}

func (e *messageBodyExporter) Shutdown(ctx context.Context) error   { return e.next.Shutdown(ctx) }
func (e *messageBodyExporter) ForceFlush(ctx context.Context) error { return e.next.ForceFlush(ctx) }
