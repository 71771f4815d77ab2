package otlptest

import (
	"strconv"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// ReceivedSpan is one span an HTTPServer received, with the service.name
// of its resource.
type ReceivedSpan struct {
	Service string
	Span    *tracepb.Span
}

// Attr returns the span's attribute key as a string ("" when absent),
// integers in decimal.
func (r ReceivedSpan) Attr(key string) (string, bool) {
	for _, kv := range r.Span.GetAttributes() {
		if kv.GetKey() != key {
			continue
		}
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			return v.GetStringValue(), true
		case v.GetArrayValue() != nil:
			out := ""
			for i, e := range v.GetArrayValue().GetValues() {
				if i > 0 {
					out += " "
				}
				out += e.GetStringValue()
			}
			return out, true
		default:
			return strconv.FormatInt(v.GetIntValue(), 10), true
		}
	}
	return "", false
}

// ReceivedSpans returns every span the server received, in order.
func (s *HTTPServer) ReceivedSpans() []ReceivedSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ReceivedSpan
	for _, req := range s.trace {
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					out = append(out, ReceivedSpan{Service: service, Span: sp})
				}
			}
		}
	}
	return out
}
