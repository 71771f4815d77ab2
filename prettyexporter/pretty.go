package prettyexporter

import (
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/tncomessage"
)

// Exporter writes each record as one readable line: the human format of docs/formats.md. It
// implements go.opentelemetry.io/otel/sdk/log.Exporter and is safe for concurrent use. Create it
// with New; the zero value writes nothing.
type Exporter struct {
	sink
	color  bool
	noTime bool
	layout string
	// noContext leaves out the resource, the trace id and the transaction id: the live exporter's
	// plain lines have them in a header line per operation.
	noContext bool
}

var _ sdklog.Exporter = (*Exporter)(nil)

// New returns a pretty exporter writing to os.Stderr unless WithWriter says otherwise. It colours
// when the writer is a terminal (see WithColor). The error is always nil today; it is there so that
// a future option can fail without an API change.
func New(opts ...Option) (*Exporter, error) {
	c := newConfig(os.Stderr, opts)
	e := &Exporter{color: useColor(c.color, c.w), noTime: c.noTime, layout: c.timeLayout}
	e.sink = sink{sem: make(chan struct{}, 1), w: c.w, enc: e.appendRecord}
	return e, nil
}

// Colored reports whether the exporter writes ANSI colours, as resolved from WithColor, the writer
// and NO_COLOR when it was created.
func (e *Exporter) Colored() bool { return e.color }

func (e *Exporter) sgr(b []byte, code string) []byte {
	if e.color {
		b = append(b, code...)
	}
	return b
}

func (e *Exporter) reset(b []byte) []byte { return e.sgr(b, sgrReset) }

// marked appends s, which is safe, in colour code.
func (e *Exporter) marked(b []byte, code, s string) []byte {
	return e.reset(append(e.sgr(b, code), s...))
}

// text appends s, escaped as appendText does, in colour code.
func (e *Exporter) text(b []byte, code, s string) []byte {
	return e.reset(appendText(e.sgr(b, code), s, false))
}

func (e *Exporter) appendRecord(b []byte, r *sdklog.Record) []byte {
	v := tncomessage.GetView()
	defer tncomessage.PutView(v)
	v.Load(r)
	return e.appendView(b, r, v)
}

// recordTime is a record's timestamp, else its observed timestamp.
func recordTime(r *sdklog.Record) time.Time {
	if ts := r.Timestamp(); !ts.IsZero() {
		return ts
	}
	return r.ObservedTimestamp()
}

// appendView appends r's line from its View v, already loaded.
func (e *Exporter) appendView(b []byte, r *sdklog.Record, v *tncomessage.View) []byte {
	if !e.noTime {
		b = e.reset(recordTime(r).Local().AppendFormat(e.sgr(b, sgrDim), e.layout))
		b = append(b, ' ')
	}
	b = append(e.appendLevel(b, r), ' ')
	switch v.Kind {
	case tncomessage.KindEvent:
		b = e.appendType(b, v.Name)
		b = e.appendResource(b, v)
	case tncomessage.KindTransition:
		b = e.text(b, groupColor(v.Name), v.Name)
		b = append(e.appendResource(b, v), "  "...)
		b = e.appendTransition(b, v)
	default:
		if v.Name != "" {
			b = append(e.text(b, sgrBold, v.Name), ' ')
		}
		switch body := r.Body(); body.Type() {
		case attribute.EMPTY:
		case attribute.STRING: // as it is when printable, else quoted
			if s := body.AsString(); printable(s, false, false) {
				b = append(b, s...)
			} else {
				b = strconv.AppendQuote(b, s)
			}
		default:
			b = appendPrettyValue(b, body, false)
		}
	}
	if tid := r.TraceID(); tid.IsValid() && !e.noContext {
		b = e.reset(hex.AppendEncode(e.sgr(append(b, "  "...), sgrDim), tid[:4]))
	}
	if v.HasTx && !e.noContext {
		b = appendText(e.marked(append(b, "  "...), sgrDim, "tx="), v.TxID, false)
	}
	// An absent value (a null detail) is left out: a person reads what is there, and "<nil>" on
	// half the lines hides it. JSON keeps nulls.
	sep := "  "
	kv := func(k string, val attribute.Value) {
		if val.Type() != attribute.EMPTY {
			b = e.appendKV(append(b, sep...), nil, k, val)
			sep = " "
		}
	}
	for _, d := range v.Details {
		kv(d.Path, d.Value)
	}
	for _, x := range v.Extra {
		kv(string(x.Key), x.Value)
	}
	return append(e.appendEnvelope(b, v), '\n')
}

// appendType writes group/ in the group's colour and the name in bold.
func (e *Exporter) appendType(b []byte, typ string) []byte {
	i := strings.IndexByte(typ, '/')
	if i < 0 || !bare(typ, false) {
		return e.text(b, sgrBold, typ)
	}
	return e.marked(e.marked(b, groupColor(typ[:i]), typ[:i+1]), sgrBold, typ[i+1:])
}

// appendResource writes "  Type/id" (or whichever of the two is set), unless noContext.
func (e *Exporter) appendResource(b []byte, v *tncomessage.View) []byte {
	if e.noContext || v.ResourceType == "" && v.ResourceID == "" {
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

// appendTransition writes `False (Provisioning) → True (Provisioned) "msg"`, the previous state
// only when known; a change of the message alone `False (Provisioning) "old" → "new"`, so that it
// reads as the change it is.
func (e *Exporter) appendTransition(b []byte, v *tncomessage.View) []byte {
	if p, c := &v.Previous, &v.Transition; v.HasPrevious && p.Status == c.Status && p.Reason == c.Reason {
		// The message alone changed: the condition once, then the old message and the new one.
		b = appendReason(e.text(b, sgrBold, c.Status), c.Reason)
		if p.Message != "" {
			b = e.reset(strconv.AppendQuote(append(e.sgr(b, sgrDim), ' '), p.Message))
		}
		b = append(b, " → "...)
		if c.Message == "" {
			return append(b, `""`...)
		}
		return strconv.AppendQuote(b, c.Message)
	}
	if v.HasPrevious {
		b = e.reset(appendReason(appendText(e.sgr(b, sgrDim), v.Previous.Status, false), v.Previous.Reason))
		b = append(b, " → "...)
	}
	b = appendReason(e.text(b, sgrBold, v.Transition.Status), v.Transition.Reason)
	if v.Transition.Message != "" {
		b = strconv.AppendQuote(append(b, ' '), v.Transition.Message)
	}
	return b
}

func appendReason(b []byte, reason string) []byte {
	if reason != "" {
		b = append(appendText(append(b, " ("...), reason, false), ')')
	}
	return b
}

// appendKV writes key=value, the key after path (the escaped keys of the maps above it, each
// followed by a dot); a non-empty map value is spread into key.sub=value pairs, the way details
// travel on the wire.
func (e *Exporter) appendKV(b, path []byte, k string, val attribute.Value) []byte {
	if val.Type() == attribute.MAP {
		if kvs := val.AsMap(); len(kvs) > 0 { // AsMap copies: call it once
			path = append(appendText(path, k, false), '.')
			for i, kv := range kvs {
				if i > 0 {
					b = append(b, ' ')
				}
				b = e.appendKV(b, path, string(kv.Key), kv.Value)
			}
			return b
		}
	}
	b = appendText(append(e.sgr(b, sgrDim), path...), k, false)
	return appendPrettyValue(e.reset(append(b, '=')), val, false)
}

// appendEnvelope writes, dimmed, the envelope fields that change what a line means: the resource's
// namespace, the observed generation and the truncation mark. The component, uid, scope, tenant,
// sequence and the tracectx values other than the transaction id repeat on every line of an
// operation; they are in the JSON format only.
func (e *Exporter) appendEnvelope(b []byte, v *tncomessage.View) []byte {
	if v.ResourceNamespace == "" && !v.HasGeneration && !v.Truncated {
		return b
	}
	b = e.sgr(append(b, "  "...), sgrDim)
	sep := ""
	if v.ResourceNamespace != "" {
		b = appendText(append(b, "namespace="...), v.ResourceNamespace, false)
		sep = " "
	}
	if v.HasGeneration {
		b = strconv.AppendInt(append(append(b, sep...), "generation="...), v.Generation, 10)
		sep = " "
	}
	if v.Truncated {
		b = append(append(b, sep...), "truncated=true"...)
	}
	return e.reset(b)
}
