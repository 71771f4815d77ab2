package progresstest

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/wireformat"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/internal/encode"
	"github.com/progressotel/progressotel/progress/internal/redact"
)

// Flatten returns the detail attributes progress.Record writes for details
// with the default redaction and limits, and reports whether anything was
// cut: for a test that builds a record by hand. The package wire describes
// the encoding; wire.Decode undoes it.
func Flatten(details any) (attrs []attribute.KeyValue, truncated bool) {
	rules := redact.New(true, progress.DefaultSecretKeys()...)
	e := encode.Get(encode.NewKeyCache(&rules), &rules, encode.Limits(progress.DefaultLimits()))
	e.Details(details)
	attrs = append([]attribute.KeyValue(nil), e.Attrs...)
	truncated = e.Truncated()
	encode.Put(e)
	return attrs, truncated
}

// ValueOf converts an attribute value to its JSON-like Go value (string,
// bool, int64, float64, []byte, nil, []any or map[string]any), as
// wire.Decode reads the details.
func ValueOf(v attribute.Value) any { return wireformat.ValueOf(v) }
