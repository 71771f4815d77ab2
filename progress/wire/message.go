package wire

import (
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/tncomessage"
)

// MessageRecord is the part of a log record AppendMessage reads: what
// RecordReader reads, and the record's time, severity text and trace
// context. The SDK's *sdk/log.Record implements it.
type MessageRecord interface {
	RecordReader
	Timestamp() time.Time
	SeverityText() string
	TraceID() trace.TraceID
	SpanID() trace.SpanID
}

// AppendMessage appends to dst the TNCO message of a progress record (an
// event or a condition transition): the JSON object that TNCO receives on
// Kafka for it, byte for byte as collector-config's tnco processor builds
// it from the same record (docs/collector.md, "The TNCO message"), before
// the collector's redaction. It reports false, and appends nothing, for a
// record that is not a progress record.
//
// The message is Ignition's event (eventType, progressEventType, the
// nested details; a transition's details are its condition and the
// previous one) with the envelope: @timestamp (UTC, three millisecond
// digits), level, traceId, spanId, tenant, component, resource, scope,
// observedGeneration, sequence, truncated and every tracectx.* attribute
// as a top-level key. Keys are in byte order at every level and values
// are written as encoding/json writes them (HTML characters escaped), so
// the text is the one a consumer would get from encoding/json too.
//
// The builder is the tncomessage module's, the one the collector runs: a
// driver sends standard log records, and the collector builds the message
// once, after redacting them. AppendMessage is for a driver that writes
// the messages itself (a file, a test).
func AppendMessage(dst []byte, r MessageRecord) ([]byte, bool) {
	m := tncomessage.MessageMeta{SeverityText: r.SeverityText(), TraceID: r.TraceID(), SpanID: r.SpanID()}
	if t := r.Timestamp(); !t.IsZero() {
		// What OTLP carries: time_unix_nano, 0 before 1970.
		m.TimeUnixNano = max(0, t.UnixNano())
	}
	return tncomessage.Append(dst, r, m)
}
