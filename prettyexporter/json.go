package prettyexporter

import (
	"context"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// JSONExporter writes one JSON object per record and line, in the shape of
// docs/formats.md: Ignition's schema (eventType, progressEventType, nested
// details) with @timestamp, level, traceId, spanId and every tracectx.*
// attribute as a top-level field, as Ignition's logstash lines had them.
//
// It implements go.opentelemetry.io/otel/sdk/log.Exporter and is safe for
// concurrent use. Create it with NewJSON; the zero value writes nothing.
type JSONExporter struct {
	sink
	noTime bool
}

var _ sdklog.Exporter = (*JSONExporter)(nil)

// NewJSON returns a JSON lines exporter writing to os.Stdout unless
// WithWriter says otherwise. WithoutTime leaves @timestamp out; the other
// options do not apply. The error is always nil today; it is there so that
// a future option can fail without an API change.
func NewJSON(opts ...Option) (*JSONExporter, error) {
	c := newConfig(os.Stdout, opts)
	e := &JSONExporter{sink: newSink(c.w), noTime: c.noTime}
	return e, nil
}

// Export writes records, one line each, with a single Write (one per 256
// KiB for larger batches). It returns ctx's error, writing nothing more,
// if ctx ends first, and sdk/log.ErrExporterShutdown after Shutdown,
// writing nothing.
func (e *JSONExporter) Export(ctx context.Context, records []sdklog.Record) error {
	return e.export(ctx, records, e.appendRecord)
}

// ForceFlush flushes w if it is buffered (has a Flush() error method).
func (e *JSONExporter) ForceFlush(ctx context.Context) error { return e.forceFlush(ctx) }

// Shutdown stops the exporter: later Exports write nothing and return
// sdk/log.ErrExporterShutdown. It waits for a Write already in progress,
// at most until ctx ends (then it returns ctx's error), and flushes a
// buffered writer.
func (e *JSONExporter) Shutdown(ctx context.Context) error { return e.shutdown(ctx) }

// reservedJSON are top-level names a transition's stream key must not
// shadow; such a stream's payload (and that of a stream named tracectx.*)
// is written under "transition" instead.
var reservedJSON = []string{
	"@timestamp", "@version", "level", "logger_name", "message", "eventType", "stream",
	"traceId", "spanId", "component", "resource", "scope", "tenant", "observedGeneration",
	"sequence", "truncated", "attributes", "eventName", "transition",
}

func (e *JSONExporter) appendRecord(b []byte, r *sdklog.Record) []byte {
	v := wireformat.GetView()
	defer wireformat.PutView(v)
	v.Load(r)

	b = append(b, '{')
	if !e.noTime {
		ts := r.Timestamp()
		if ts.IsZero() {
			ts = r.ObservedTimestamp()
		}
		b = append(b, `"@timestamp":"`...)
		b = ts.UTC().AppendFormat(b, timestampLayout)
		b = append(b, `",`...)
	}
	b = append(b, `"@version":"1","level":`...)
	b = appendJSONString(b, levelName(r))
	if name := r.InstrumentationScope().Name; name != "" {
		b = append(b, `,"logger_name":`...)
		b = appendJSONString(b, name)
	}
	b = append(b, `,"message":`...)
	switch v.Kind {
	case wireformat.KindEvent:
		b = appendJSONString(b, v.Name)
		b = append(b, `,"eventType":"`+wireformat.EventType+`","progressEventType":`...)
		b = appendJSONString(b, v.Name)
		b = append(b, `,"details":`...)
		b = wireformat.AppendNestedJSON(b, v.Details, wireformat.TerminalEscapes)
	case wireformat.KindTransition:
		b = appendJSONString(b, v.Name)
		b = append(b, `,"eventType":"`+wireformat.TransitionEventType+`","stream":`...)
		b = appendJSONString(b, v.Name)
		b = append(b, ',')
		if slices.Contains(reservedJSON, v.Name) || strings.HasPrefix(v.Name, wireformat.TraceCtxPrefix) {
			b = append(b, `"transition"`...)
		} else {
			b = appendJSONString(b, v.Name)
		}
		b = append(b, `:{"status":`...)
		b = appendJSONString(b, v.Transition.Status)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, v.Transition.Reason)
		if v.Transition.Message != "" {
			b = append(b, `,"message":`...)
			b = appendJSONString(b, v.Transition.Message)
		}
		if v.HasPrevious {
			b = append(b, `,"previous":{"status":`...)
			b = appendJSONString(b, v.Previous.Status)
			b = append(b, `,"reason":`...)
			b = appendJSONString(b, v.Previous.Reason)
			if v.Previous.Message != "" {
				b = append(b, `,"message":`...)
				b = appendJSONString(b, v.Previous.Message)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	default:
		body := r.Body()
		if t := body.Type(); t == attribute.STRING || t == attribute.EMPTY {
			b = appendJSONString(b, body.AsString())
		} else {
			// message stays a string for log indexers; the structure is
			// kept as its JSON text.
			tmp := appendJSONValue(nil, body)
			b = appendJSONString(b, string(tmp))
		}
		if v.Name != "" {
			b = append(b, `,"eventName":`...)
			b = appendJSONString(b, v.Name)
		}
	}
	if tid := r.TraceID(); tid.IsValid() {
		b = append(b, `,"traceId":"`...)
		b = hex.AppendEncode(b, tid[:])
		b = append(b, '"')
	}
	if sid := r.SpanID(); sid.IsValid() {
		b = append(b, `,"spanId":"`...)
		b = hex.AppendEncode(b, sid[:])
		b = append(b, '"')
	}
	for _, kv := range v.TraceCtx {
		b = append(b, ',')
		b = appendJSONString(b, string(kv.Key))
		b = append(b, ':')
		b = appendJSONString(b, kv.Value.String())
	}
	if v.ComponentName != "" || v.ComponentVersion != "" {
		b = append(b, `,"component":{`...)
		b = appendField(b, "name", v.ComponentName, true)
		b = appendField(b, "version", v.ComponentVersion, v.ComponentName == "")
		b = append(b, '}')
	}
	if v.HasResource() {
		b = append(b, `,"resource":{`...)
		b = appendField(b, "type", v.ResourceType, true)
		b = appendField(b, "id", v.ResourceID, b[len(b)-1] == '{')
		b = appendField(b, "namespace", v.ResourceNamespace, b[len(b)-1] == '{')
		b = appendField(b, "uid", v.ResourceUID, b[len(b)-1] == '{')
		b = append(b, '}')
	}
	if len(v.Scope) > 0 {
		// The Recorder writes the scope map in Go's random map order;
		// sorted, equal events give equal lines.
		if len(v.Scope) > 1 && !slices.IsSortedFunc(v.Scope, wireformat.ComparePath) {
			slices.SortFunc(v.Scope, wireformat.ComparePath)
		}
		b = append(b, `,"scope":{`...)
		for i, kv := range v.Scope {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = appendJSONChars(b, wireformat.UnescapeSegment(kv.Path))
			b = append(b, `":`...)
			b = appendJSONString(b, kv.Value.String())
		}
		b = append(b, '}')
	}
	if v.Tenant != "" {
		b = append(b, `,"tenant":`...)
		b = appendJSONString(b, v.Tenant)
	}
	if v.HasGeneration {
		b = append(b, `,"observedGeneration":`...)
		b = strconv.AppendInt(b, v.Generation, 10)
	}
	if v.HasSequence {
		b = append(b, `,"sequence":`...)
		b = strconv.AppendInt(b, v.Sequence, 10)
	}
	if v.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	if len(v.Extra) > 0 {
		b = append(b, `,"attributes":{`...)
		for i, kv := range v.Extra {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, string(kv.Key))
			b = append(b, ':')
			b = appendJSONValue(b, kv.Value)
		}
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

// appendField appends "key":"val" when val is set, with a leading comma
// unless first.
func appendField(b []byte, key, val string, first bool) []byte {
	if val == "" {
		return b
	}
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return appendJSONString(b, val)
}

// timestampLayout is RFC 3339 in UTC with exactly three fractional digits,
// the collector's @timestamp: fixed width, so that a fixed-format parser
// reads every line and sorting the strings sorts by time (RFC3339Nano drops
// trailing zeros, and the dot with them).
const timestampLayout = "2006-01-02T15:04:05.000Z"
