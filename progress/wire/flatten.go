package wire

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/internal/encode"
	"github.com/progressotel/progressotel/progress/internal/redact"
)

// Flatten returns the detail attributes progress.Record writes for details
// with the default redaction and limits, and reports whether anything was
// cut. The package doc describes the encoding; Decode undoes it.
func Flatten(details any) (attrs []attribute.KeyValue, truncated bool) {
	rules := redact.New(true, redact.DefaultKeys...)
	e := encode.Get(encode.NewKeyCache(&rules), &rules, encode.Limits(progress.DefaultLimits()))
	e.Details(details)
	attrs = append([]attribute.KeyValue(nil), e.Attrs...)
	truncated = e.Truncated()
	encode.Put(e)
	return attrs, truncated
}
