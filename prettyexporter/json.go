package prettyexporter

import (
	"context"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
)

// JSONExporter writes one JSON object per record and line, in the shape of
// docs/formats.md: the seed schema (eventType, progressEventType, nested
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
	v := getView()
	defer putView(v)
	v.load(r)

	b = append(b, '{')
	if !e.noTime {
		ts := r.Timestamp()
		if ts.IsZero() {
			ts = r.ObservedTimestamp()
		}
		b = append(b, `"@timestamp":"`...)
		b = ts.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"@version":"1","level":`...)
	b = appendJSONString(b, levelName(r))
	if name := r.InstrumentationScope().Name; name != "" {
		b = append(b, `,"logger_name":`...)
		b = appendJSONString(b, name)
	}
	b = append(b, `,"message":`...)
	switch v.kind {
	case kindEvent:
		b = appendJSONString(b, v.name)
		b = append(b, `,"eventType":"`+progress.EventType+`","progressEventType":`...)
		b = appendJSONString(b, v.name)
		b = append(b, `,"details":`...)
		b = v.appendDetails(b)
	case kindTransition:
		b = appendJSONString(b, v.name)
		b = append(b, `,"eventType":"`+progress.TransitionEventType+`","stream":`...)
		b = appendJSONString(b, v.name)
		b = append(b, ',')
		if slices.Contains(reservedJSON, v.name) || strings.HasPrefix(v.name, progress.TraceCtxPrefix) {
			b = append(b, `"transition"`...)
		} else {
			b = appendJSONString(b, v.name)
		}
		b = append(b, `:{"status":`...)
		b = appendJSONString(b, v.tr.status)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, v.tr.reason)
		if v.tr.message != "" {
			b = append(b, `,"message":`...)
			b = appendJSONString(b, v.tr.message)
		}
		if v.tr.hasPrev {
			b = append(b, `,"previous":{"status":`...)
			b = appendJSONString(b, v.tr.pStatus)
			b = append(b, `,"reason":`...)
			b = appendJSONString(b, v.tr.pReason)
			if v.tr.pMessage != "" {
				b = append(b, `,"message":`...)
				b = appendJSONString(b, v.tr.pMessage)
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
		if v.name != "" {
			b = append(b, `,"eventName":`...)
			b = appendJSONString(b, v.name)
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
	for _, kv := range v.traceCtx {
		b = append(b, ',')
		b = appendJSONString(b, string(kv.Key))
		b = append(b, ':')
		b = appendJSONString(b, kv.Value.String())
	}
	if v.compName != "" || v.compVersion != "" {
		b = append(b, `,"component":{`...)
		b = appendField(b, "name", v.compName, true)
		b = appendField(b, "version", v.compVersion, v.compName == "")
		b = append(b, '}')
	}
	if v.hasResource() {
		b = append(b, `,"resource":{`...)
		b = appendField(b, "type", v.resType, true)
		b = appendField(b, "id", v.resID, b[len(b)-1] == '{')
		b = appendField(b, "namespace", v.resNS, b[len(b)-1] == '{')
		b = appendField(b, "uid", v.resUID, b[len(b)-1] == '{')
		b = append(b, '}')
	}
	if len(v.scope) > 0 {
		// The Recorder writes the scope map in Go's random map order;
		// sorted, equal events give equal lines.
		if len(v.scope) > 1 && !slices.IsSortedFunc(v.scope, comparePath) {
			slices.SortFunc(v.scope, comparePath)
		}
		b = append(b, `,"scope":{`...)
		for i, kv := range v.scope {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = appendJSONSegment(b, kv.path)
			b = append(b, `":`...)
			b = appendJSONString(b, kv.v.String())
		}
		b = append(b, '}')
	}
	if v.tenant != "" {
		b = append(b, `,"tenant":`...)
		b = appendJSONString(b, v.tenant)
	}
	if v.hasGen {
		b = append(b, `,"observedGeneration":`...)
		b = strconv.AppendInt(b, v.gen, 10)
	}
	if v.hasSeq {
		b = append(b, `,"sequence":`...)
		b = strconv.AppendInt(b, v.seq, 10)
	}
	if v.truncated {
		b = append(b, `,"truncated":true`...)
	}
	if len(v.extra) > 0 {
		b = append(b, `,"attributes":{`...)
		for i, kv := range v.extra {
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

// appendDetails writes the flattened details nested back into one object,
// as progress.Decode would rebuild them, without building maps: the paths
// are sorted so that every subtree is contiguous, then written in one pass
// with a stack of open objects.
func (v *view) appendDetails(b []byte) []byte {
	d := v.details
	if !slices.IsSortedFunc(d, comparePath) {
		slices.SortStableFunc(d, comparePath)
	}
	b = append(b, '{')
	depth := 0 // open nested objects below details
	var open [maxOpen]string
	for i := range d {
		p := d[i].path
		// When a later path repeats this one (the last wins) or runs
		// through it (the map wins), Decode keeps the later one.
		if i+1 < len(d) {
			n := d[i+1].path
			if n == p || len(n) > len(p) && n[len(p)] == '.' && n[:len(p)] == p {
				continue
			}
		}
		// Split the parent segments and find how many stay open.
		keep, rest := 0, p
		for keep < depth {
			j := strings.IndexByte(rest, '.')
			if j < 0 || rest[:j] != open[keep] {
				break
			}
			rest = rest[j+1:]
			keep++
		}
		for ; depth > keep; depth-- {
			b = append(b, '}')
		}
		for {
			j := strings.IndexByte(rest, '.')
			if j < 0 || depth == maxOpen {
				break
			}
			if b[len(b)-1] != '{' {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = appendJSONSegment(b, rest[:j])
			b = append(b, `":{`...)
			open[depth] = rest[:j]
			depth++
			rest = rest[j+1:]
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = appendJSONSegment(b, rest)
		b = append(b, `":`...)
		b = appendJSONValue(b, d[i].v)
	}
	for ; depth > 0; depth-- {
		b = append(b, '}')
	}
	return append(b, '}')
}

// maxOpen bounds the nesting written for details. It is far above
// progress.Limits' depth; a deeper path keeps its remaining segments
// joined in the last key.
const maxOpen = 64

// comparePath orders paths segment by segment: '.' sorts before every
// other byte, so all paths below "a." follow "a" with nothing between.
func comparePath(a, b pathValue) int {
	x, y := a.path, b.path
	n := min(len(x), len(y))
	for i := 0; i < n; i++ {
		cx, cy := x[i], y[i]
		if cx == cy {
			continue
		}
		if cx == '.' {
			return -1
		}
		if cy == '.' {
			return 1
		}
		if cx < cy {
			return -1
		}
		return 1
	}
	return len(x) - len(y)
}
