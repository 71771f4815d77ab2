package prettyexporter

import (
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/tncomessage"
)

// JSONExporter writes one JSON object per record and line, in the shape of docs/formats.md:
// Ignition's schema (eventType, progressEventType, nested details) with @timestamp, level, traceId,
// spanId and every tracectx.* attribute as a top-level field, as in Ignition's logstash lines.
//
// It implements go.opentelemetry.io/otel/sdk/log.Exporter and is safe for concurrent use. Create it
// with NewJSON; the zero value writes nothing.
type JSONExporter struct {
	sink
	noTime bool
}

var _ sdklog.Exporter = (*JSONExporter)(nil)

// NewJSON returns a JSON lines exporter writing to os.Stdout unless WithWriter says otherwise.
// WithoutTime leaves @timestamp out; the other options do not apply. The error is always nil today;
// it is there so that a future option can fail without an API change.
func NewJSON(opts ...Option) (*JSONExporter, error) {
	c := newConfig(os.Stdout, opts)
	e := &JSONExporter{noTime: c.noTime}
	e.sink = sink{sem: make(chan struct{}, 1), w: c.w, enc: e.appendRecord}
	return e, nil
}

// reservedJSON are top-level names a transition's stream key must not shadow; such a stream's
// payload (and that of a stream named tracectx.*) is written under "transition" instead.
var reservedJSON = []string{
	tncomessage.MemberTimestamp, "@version", tncomessage.MemberLevel, "logger_name", "message",
	tncomessage.MemberEventType, "stream", tncomessage.MemberTraceID, tncomessage.MemberSpanID,
	tncomessage.MemberComponent, tncomessage.MemberResource, tncomessage.MemberScope, tncomessage.MemberTenant,
	tncomessage.MemberObservedGeneration, tncomessage.MemberSequence, tncomessage.MemberTruncated,
	"attributes", "eventName", "transition",
}

func (e *JSONExporter) appendRecord(b []byte, r *sdklog.Record) []byte {
	v := tncomessage.GetView()
	defer tncomessage.PutView(v)
	v.Load(r)

	b = append(b, '{')
	if !e.noTime {
		b = append(b, `"`+tncomessage.MemberTimestamp+`":"`...)
		b = append(recordTime(r).UTC().AppendFormat(b, timestampLayout), `",`...)
	}
	b = appendJSONString(append(b, `"@version":"1","`+tncomessage.MemberLevel+`":`...), levelName(r))
	if name := r.InstrumentationScope().Name; name != "" {
		b = appendJSONString(append(b, `,"logger_name":`...), name)
	}
	b = append(b, `,"message":`...)
	switch v.Kind {
	case tncomessage.KindEvent:
		b = appendJSONString(b, v.Name)
		b = append(b, `,"`+tncomessage.MemberEventType+`":"`+tncomessage.EventType+`","`+tncomessage.MemberProgressEventType+`":`...)
		b = append(appendJSONString(b, v.Name), `,"`+tncomessage.MemberDetails+`":`...)
		b = tncomessage.AppendNestedJSON(b, v.Details, tncomessage.TerminalEscapes)
	case tncomessage.KindTransition:
		b = appendJSONString(b, v.Name)
		b = append(b, `,"`+tncomessage.MemberEventType+`":"`+tncomessage.TransitionEventType+`","stream":`...)
		b = append(appendJSONString(b, v.Name), ',')
		if slices.Contains(reservedJSON, v.Name) || strings.HasPrefix(v.Name, tncomessage.TraceCtxPrefix) {
			b = append(b, `"transition"`...)
		} else {
			b = appendJSONString(b, v.Name)
		}
		b = appendConditionJSON(append(b, ':'), v.Transition)
		if v.HasPrevious {
			b = append(appendConditionJSON(append(b, `,"`+tncomessage.MemberPrevious+`":`...), v.Previous), '}')
		}
		b = append(b, '}')
	default:
		if body := r.Body(); body.Type() == attribute.STRING || body.Type() == attribute.EMPTY {
			b = appendJSONString(b, body.AsString())
		} else {
			// message stays a string for log indexers; the structure is kept as its JSON text.
			b = appendJSONString(b, string(tncomessage.AppendJSONValue(nil, body, tncomessage.TerminalEscapes)))
		}
		if v.Name != "" {
			b = appendJSONString(append(b, `,"eventName":`...), v.Name)
		}
	}
	if tid := r.TraceID(); tid.IsValid() {
		b = append(hex.AppendEncode(append(b, `,"`+tncomessage.MemberTraceID+`":"`...), tid[:]), '"')
	}
	if sid := r.SpanID(); sid.IsValid() {
		b = append(hex.AppendEncode(append(b, `,"`+tncomessage.MemberSpanID+`":"`...), sid[:]), '"')
	}
	for _, kv := range v.TraceCtx {
		b = append(appendJSONString(append(b, ','), string(kv.Key)), ':')
		b = appendJSONString(b, kv.Value.String())
	}
	if v.ComponentName != "" || v.ComponentVersion != "" {
		b = appendField(append(b, `,"`+tncomessage.MemberComponent+`":{`...), "name", v.ComponentName)
		b = append(appendField(b, "version", v.ComponentVersion), '}')
	}
	if v.HasResource() {
		b = appendField(append(b, `,"`+tncomessage.MemberResource+`":{`...), "type", v.ResourceType)
		b = appendField(appendField(b, "id", v.ResourceID), "namespace", v.ResourceNamespace)
		b = append(appendField(b, "uid", v.ResourceUID), '}')
	}
	if len(v.Scope) > 0 {
		// The Recorder writes the scope map in Go's random map order; sorted, equal events give
		// equal lines.
		if len(v.Scope) > 1 && !slices.IsSortedFunc(v.Scope, tncomessage.ComparePath) {
			slices.SortFunc(v.Scope, tncomessage.ComparePath)
		}
		b = appendList(append(b, `,"`+tncomessage.MemberScope+`":`...), "{}", ",", v.Scope, func(b []byte, kv tncomessage.PathValue) []byte {
			b = tncomessage.AppendJSONChars(append(b, '"'), tncomessage.UnescapeSegment(kv.Path), tncomessage.TerminalEscapes)
			return appendJSONString(append(b, `":`...), kv.Value.String())
		})
	}
	if v.Tenant != "" {
		b = appendJSONString(append(b, `,"`+tncomessage.MemberTenant+`":`...), v.Tenant)
	}
	if v.HasGeneration {
		b = strconv.AppendInt(append(b, `,"`+tncomessage.MemberObservedGeneration+`":`...), v.Generation, 10)
	}
	if v.HasSequence {
		b = strconv.AppendInt(append(b, `,"`+tncomessage.MemberSequence+`":`...), v.Sequence, 10)
	}
	if v.Truncated {
		b = append(b, `,"`+tncomessage.MemberTruncated+`":true`...)
	}
	if len(v.Extra) > 0 {
		b = appendList(append(b, `,"attributes":`...), "{}", ",", v.Extra, func(b []byte, kv attribute.KeyValue) []byte {
			b = append(appendJSONString(b, string(kv.Key)), ':')
			return tncomessage.AppendJSONValue(b, kv.Value, tncomessage.TerminalEscapes)
		})
	}
	return append(b, "}\n"...)
}

// appendConditionJSON appends c as {"status":..,"reason":..,"message":..} without its closing
// brace; the message only when there is one.
func appendConditionJSON(b []byte, c tncomessage.Condition) []byte {
	b = appendJSONString(append(b, `{"`+tncomessage.MemberStatus+`":`...), c.Status)
	b = appendJSONString(append(b, `,"`+tncomessage.MemberReason+`":`...), c.Reason)
	if c.Message != "" {
		b = appendJSONString(append(b, `,"`+tncomessage.MemberMessage+`":`...), c.Message)
	}
	return b
}

// appendField appends "key":"val" when val is set, after a comma unless it opens the object.
func appendField(b []byte, key, val string) []byte {
	if val == "" {
		return b
	}
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(append(append(b, '"'), key...), `":`...)
	return appendJSONString(b, val)
}

// timestampLayout is RFC 3339 in UTC with exactly three fractional digits, the collector's
// @timestamp: fixed width, so that a fixed-format parser reads every line and sorting the strings
// sorts by time (RFC3339Nano drops trailing zeros, and the dot with them).
const timestampLayout = "2006-01-02T15:04:05.000Z"
