package tncomessage

import (
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// Append appends to dst the TNCO message of r, with the time, severity
// and trace context of m. It reports false, and appends nothing, for a
// record that is not a progress record (no progress.event_type of either
// event type).
func Append(dst []byte, r Record, m MessageMeta) ([]byte, bool) {
	v := GetView()
	defer PutView(v)
	v.Load(r)
	if v.Kind == KindLog {
		return dst, false
	}
	return AppendMessage(dst, v, m), true
}

// Fit says what AppendWithin did to keep a message within its limit.
type Fit uint8

const (
	// Whole: the message as Append builds it.
	Whole Fit = iota
	// Cut: marked truncated, and every detail string (a transition's
	// messages) longer than CutLen bytes cut to CutLen at a UTF-8
	// boundary, with TruncatedSuffix.
	Cut
	// Emptied: marked truncated, and the details are {}.
	Emptied
	// Replaced: the envelope alone is over the limit; the message is a
	// common/EventsDropped report of the record instead (EventsDroppedType).
	Replaced
)

// CutLen is the length AppendWithin cuts detail strings to: the library's
// default MaxStringLen.
const CutLen = 4096

// Names of the report that replaces a message whose envelope alone is over
// the limit: shaped as the library's own drop report (docs/reliability.md).
const (
	EventsDroppedType = "common/EventsDropped"
	TooLargeReason    = "too_large"
	// Bounds of what the report copies from the record: the routing limit
	// of a tenant, and of an event type and a transaction id.
	maxReportTenant = 64
	maxReportText   = 256
)

// AppendWithin is Append with the message kept within limit bytes, in
// steps, each only while the message is still too large: Cut, Emptied,
// Replaced. The report of Replaced is bounded; it is larger than limit
// only for a limit below a few hundred bytes.
func AppendWithin(dst []byte, r Record, m MessageMeta, limit int) ([]byte, Fit, bool) {
	v := GetView()
	defer PutView(v)
	v.Load(r)
	if v.Kind == KindLog {
		return dst, Whole, false
	}
	start := len(dst)
	dst = AppendMessage(dst, v, m)
	size := len(dst) - start
	if size <= limit {
		return dst, Whole, true
	}
	markTruncated(v)
	if cutStrings(v) {
		if dst = AppendMessage(dst[:start], v, m); len(dst)-start <= limit {
			return dst, Cut, true
		}
	}
	v.noDetails = true
	if dst = AppendMessage(dst[:start], v, m); len(dst)-start <= limit {
		return dst, Emptied, true
	}
	return appendReport(dst[:start], v, m, size), Replaced, true
}

// markTruncated sets truncated and drops a progress.truncated attribute of
// another type than the contract's, which the message would write instead.
func markTruncated(v *View) {
	v.Truncated = true
	extra := v.Extra[:0]
	for _, kv := range v.Extra {
		if kv.Key != AttrTruncated {
			extra = append(extra, kv)
		}
	}
	clear(v.Extra[len(extra):])
	v.Extra = extra
}

// cutStrings cuts the strings of Cut and reports whether any was cut.
func cutStrings(v *View) bool {
	cut := false
	for i := range v.Details {
		if s, ok := cutString(v.Details[i].Value); ok {
			v.Details[i].Value, cut = s, true
		}
	}
	for _, f := range [...]int{rawMessage, rawPrevMessage} {
		if s, ok := cutString(v.raw[f].v); ok && v.raw[f].ok {
			v.raw[f].v, cut = s, true
		}
	}
	return cut
}

func cutString(val attribute.Value) (attribute.Value, bool) {
	if val.Type() != attribute.STRING || len(val.AsString()) <= CutLen {
		return val, false
	}
	s := val.AsString()
	n := CutLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return attribute.StringValue(s[:n] + TruncatedSuffix), true
}

// appendReport appends the common/EventsDropped report of a record whose
// message was size bytes: keys in byte order, as every message.
func appendReport(b []byte, v *View, m MessageMeta, size int) []byte {
	var ts []byte
	if m.TimeUnixNano > 0 {
		var buf [32]byte
		ts = appendTimestamp(buf[:0], m.TimeUnixNano)
	}
	b = append(b, '{')
	if ts != nil {
		b = append(append(append(b, `"`+MemberTimestamp+`":"`...), ts...), `",`...)
	}
	b = strconv.AppendInt(append(b, `"`+MemberDetails+`":{"bytes":`...), int64(size), 10)
	b = append(b, `,"count":1`...)
	if len(v.Name) <= maxReportText {
		b = AppendStdString(append(b, `,"droppedType":`...), v.Name)
	}
	b = AppendStdString(append(b, `,"`+MemberReason+`":`...), TooLargeReason)
	if ts != nil {
		b = append(append(append(b, `,"since":"`...), ts...), '"')
		b = append(append(append(b, `,"until":"`...), ts...), '"')
	}
	b = AppendStdString(append(b, `},"`+MemberEventType+`":`...), EventType)
	b = AppendStdString(append(b, `,"`+MemberLevel+`":`...), "WARN")
	b = AppendStdString(append(b, `,"`+MemberProgressEventType+`":`...), EventsDroppedType)
	if v.HasSequence {
		b = strconv.AppendInt(append(b, `,"`+MemberSequence+`":`...), v.Sequence, 10)
	}
	if m.SpanID != [8]byte{} {
		b = appendHex(append(b, `,"`+MemberSpanID+`":`...), m.SpanID[:])
	}
	if t := v.raw[rawTenant]; t.ok && t.v.Type() == attribute.STRING && len(t.v.AsString()) <= maxReportTenant {
		b = AppendStdString(append(b, `,"`+MemberTenant+`":`...), t.v.AsString())
	}
	if m.TraceID != [16]byte{} {
		b = appendHex(append(b, `,"`+MemberTraceID+`":`...), m.TraceID[:])
	}
	for _, kv := range v.TraceCtx {
		if kv.Key == TxKey && kv.Value.Type() == attribute.STRING && len(kv.Value.AsString()) <= maxReportText {
			b = AppendStdString(append(AppendStdString(append(b, ','), TxKey), ':'), kv.Value.AsString())
			break
		}
	}
	return append(b, '}')
}
