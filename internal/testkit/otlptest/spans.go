package otlptest

import (
	"strconv"
)

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
