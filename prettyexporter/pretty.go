package prettyexporter

import (
	"context"
	"encoding/hex"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// Exporter writes each record as one readable line: the human format of
// docs/formats.md. It implements go.opentelemetry.io/otel/sdk/log.Exporter
// and is safe for concurrent use. Create it with New; the zero value writes
// nothing.
type Exporter struct {
	sink
	color  bool
	noTime bool
	layout string
	// noContext leaves out the resource, the trace id and the
	// transaction id: the live exporter's plain lines have them in a
	// header line per operation.
	noContext bool
}

var _ sdklog.Exporter = (*Exporter)(nil)

// New returns a pretty exporter writing to os.Stderr unless WithWriter says
// otherwise. It colours when the writer is a terminal (see WithColor). The
// error is always nil today; it is there so that a future option can fail
// without an API change.
func New(opts ...Option) (*Exporter, error) {
	c := newConfig(os.Stderr, opts)
	e := &Exporter{sink: newSink(c.w), color: useColor(c.color, c.w), noTime: c.noTime, layout: c.timeLayout}
	return e, nil
}

// Colored reports whether the exporter writes ANSI colours, as resolved
// from WithColor, the writer and NO_COLOR when it was created.
func (e *Exporter) Colored() bool { return e.color }

// Export writes records, one line each, with a single Write (one per 256
// KiB for larger batches). It returns ctx's error, writing nothing more,
// if ctx ends first, and sdk/log.ErrExporterShutdown after Shutdown,
// writing nothing.
func (e *Exporter) Export(ctx context.Context, records []sdklog.Record) error {
	return e.export(ctx, records, e.appendRecord)
}

// ForceFlush flushes w if it is buffered (has a Flush() error method).
func (e *Exporter) ForceFlush(ctx context.Context) error { return e.forceFlush(ctx) }

// Shutdown stops the exporter: later Exports write nothing and return
// sdk/log.ErrExporterShutdown. It waits for a Write already in progress,
// at most until ctx ends (then it returns ctx's error), and flushes a
// buffered writer.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.shutdown(ctx) }

func (e *Exporter) sgr(b []byte, code string) []byte {
	if e.color {
		b = append(b, code...)
	}
	return b
}

func (e *Exporter) reset(b []byte) []byte {
	if e.color {
		b = append(b, sgrReset...)
	}
	return b
}

func (e *Exporter) appendRecord(b []byte, r *sdklog.Record) []byte {
	v := wireformat.GetView()
	defer wireformat.PutView(v)
	v.Load(r)
	return e.appendView(b, r, v)
}

// appendView appends r's line from its View v, already loaded.
func (e *Exporter) appendView(b []byte, r *sdklog.Record, v *wireformat.View) []byte {
	if !e.noTime {
		ts := r.Timestamp()
		if ts.IsZero() {
			ts = r.ObservedTimestamp()
		}
		b = e.sgr(b, sgrDim)
		b = ts.Local().AppendFormat(b, e.layout)
		b = e.reset(b)
		b = append(b, ' ')
	}
	b = e.appendLevel(b, r)
	b = append(b, ' ')

	switch v.Kind {
	case wireformat.KindEvent:
		b = e.appendType(b, v.Name)
		if !e.noContext {
			b = e.appendResource(b, v)
		}
	case wireformat.KindTransition:
		b = e.sgr(b, groupColor(v.Name))
		b = appendText(b, v.Name, false)
		b = e.reset(b)
		if !e.noContext {
			b = e.appendResource(b, v)
		}
		b = append(b, "  "...)
		b = e.appendTransition(b, v)
	default:
		if v.Name != "" {
			b = e.sgr(b, sgrBold)
			b = appendText(b, v.Name, false)
			b = e.reset(b)
			b = append(b, ' ')
		}
		b = appendBody(b, r.Body())
	}

	if tid := r.TraceID(); tid.IsValid() && !e.noContext {
		b = append(b, "  "...)
		b = e.sgr(b, sgrDim)
		b = hex.AppendEncode(b, tid[:4])
		b = e.reset(b)
	}
	if v.HasTx && !e.noContext {
		b = append(b, "  "...)
		b = e.appendKey(b, "tx")
		b = appendText(b, v.TxID, false)
	}
	// An absent value (a null detail) is left out: a person reads what
	// is there, and "<nil>" on half the lines hides it. JSON keeps nulls.
	sep := "  "
	for _, d := range v.Details {
		if d.Value.Type() == attribute.EMPTY {
			continue
		}
		b = append(b, sep...)
		sep = " "
		b = e.appendKV(b, d.Path, d.Value)
	}
	for _, kv := range v.Extra {
		if kv.Value.Type() == attribute.EMPTY {
			continue
		}
		b = append(b, sep...)
		sep = " "
		b = e.appendKV(b, string(kv.Key), kv.Value)
	}
	b = e.appendEnvelope(b, v)
	return append(b, '\n')
}

func (e *Exporter) marked(b []byte, code, s string) []byte {
	b = e.sgr(b, code)
	b = append(b, s...)
	return e.reset(b)
}

// appendType writes group/ in the group's colour and the name in bold.
func (e *Exporter) appendType(b []byte, typ string) []byte {
	i := strings.IndexByte(typ, '/')
	if i < 0 || !bare(typ, false) {
		b = e.sgr(b, sgrBold)
		b = appendText(b, typ, false)
		return e.reset(b)
	}
	b = e.sgr(b, groupColor(typ[:i]))
	b = append(b, typ[:i+1]...)
	b = e.reset(b)
	b = e.sgr(b, sgrBold)
	b = append(b, typ[i+1:]...)
	return e.reset(b)
}

// appendResource writes "  Type/id" (or whichever of the two is set).
func (e *Exporter) appendResource(b []byte, v *wireformat.View) []byte {
	if v.ResourceType == "" && v.ResourceID == "" {
		return b
	}
	b = append(b, "  "...)
	if v.ResourceType != "" {
		b = appendText(b, v.ResourceType, false)
		if v.ResourceID != "" {
			b = append(b, '/')
		}
	}
	if v.ResourceID != "" {
		b = appendText(b, v.ResourceID, false)
	}
	return b
}

// appendTransition writes `False (Provisioning) → True (Provisioned) "msg"`,
// the previous state only when known.
func (e *Exporter) appendTransition(b []byte, v *wireformat.View) []byte {
	if v.HasPrevious {
		b = e.sgr(b, sgrDim)
		b = appendCondition(b, v.Previous.Status, v.Previous.Reason)
		b = e.reset(b)
		b = append(b, " → "...)
	}
	b = e.sgr(b, sgrBold)
	b = appendText(b, v.Transition.Status, false)
	b = e.reset(b)
	if v.Transition.Reason != "" {
		b = append(b, " ("...)
		b = appendText(b, v.Transition.Reason, false)
		b = append(b, ')')
	}
	if v.Transition.Message != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, v.Transition.Message)
	}
	return b
}

func appendCondition(b []byte, status, reason string) []byte {
	b = appendText(b, status, false)
	if reason != "" {
		b = append(b, " ("...)
		b = appendText(b, reason, false)
		b = append(b, ')')
	}
	return b
}

// appendBody writes a log's body: a string as it is when printable, any
// other value as in key=value.
func appendBody(b []byte, body attribute.Value) []byte {
	switch body.Type() {
	case attribute.EMPTY:
		return b
	case attribute.STRING:
		return appendMessage(b, body.AsString())
	}
	return appendPrettyValue(b, body, false)
}

func (e *Exporter) appendKey(b []byte, k string) []byte {
	b = e.sgr(b, sgrDim)
	b = appendText(b, k, false)
	b = append(b, '=')
	return e.reset(b)
}

// appendKV writes key=value; a non-empty map value is spread into
// key.sub=value pairs, the way details travel on the wire.
func (e *Exporter) appendKV(b []byte, k string, val attribute.Value) []byte {
	if val.Type() == attribute.MAP {
		// AsMap copies: call it once.
		if kvs := val.AsMap(); len(kvs) > 0 {
			var stack [8]string
			return e.appendMap(b, append(stack[:0], k), kvs)
		}
	}
	b = e.appendKey(b, k)
	return appendPrettyValue(b, val, false)
}

func (e *Exporter) appendMap(b []byte, path []string, kvs []attribute.KeyValue) []byte {
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ' ')
		}
		p := append(path, string(kv.Key))
		if kv.Value.Type() == attribute.MAP {
			if sub := kv.Value.AsMap(); len(sub) > 0 {
				b = e.appendMap(b, p, sub)
				continue
			}
		}
		b = e.sgr(b, sgrDim)
		for j, s := range p {
			if j > 0 {
				b = append(b, '.')
			}
			b = appendText(b, s, false)
		}
		b = append(b, '=')
		b = e.reset(b)
		b = appendPrettyValue(b, kv.Value, false)
	}
	return b
}

// appendEnvelope writes, dimmed, the envelope fields that change what a
// line means: the resource's namespace, the observed generation and the
// truncation mark. The component, uid, scope, tenant, sequence and the
// tracectx values other than the transaction id repeat on every line of an
// operation; they are in the JSON format only.
func (e *Exporter) appendEnvelope(b []byte, v *wireformat.View) []byte {
	if v.ResourceNamespace == "" && !v.HasGeneration && !v.Truncated {
		return b
	}
	b = append(b, "  "...)
	b = e.sgr(b, sgrDim)
	sep := ""
	if v.ResourceNamespace != "" {
		b = append(b, "namespace="...)
		b = appendText(b, v.ResourceNamespace, false)
		sep = " "
	}
	if v.HasGeneration {
		b = append(b, sep...)
		b = append(b, "generation="...)
		b = strconv.AppendInt(b, v.Generation, 10)
		sep = " "
	}
	if v.Truncated {
		b = append(b, sep...)
		b = append(b, "truncated=true"...)
	}
	return e.reset(b)
}
