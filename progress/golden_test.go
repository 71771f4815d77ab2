package progress_test

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/testkit/wiretest"
)

// TestGoldenAttributes: the attributes Record writes for every record of
// the wire corpus (internal/testkit/wiretest), sorted by key, with their types.
func TestGoldenAttributes(t *testing.T) {
	wiretest.Check(t, "attributes", func(t *testing.T, r *sdklog.Record) string {
		var kvs []attribute.KeyValue
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			kvs = append(kvs, kv)
			return true
		})
		slices.SortStableFunc(kvs, func(a, b attribute.KeyValue) int { return cmp.Compare(a.Key, b.Key) })
		var b strings.Builder
		b.WriteString("event=" + strconv.Quote(r.EventName()) + " severity=" + r.Severity().String() +
			" text=" + strconv.Quote(r.SeverityText()) + " body=" + strconv.Quote(r.Body().String()) + "\n")
		for _, kv := range kvs {
			v := kv.Value.String()
			if kv.Value.Type() == attribute.STRING {
				v = strconv.Quote(v)
			}
			b.WriteString(strconv.Quote(string(kv.Key)) + " " + kv.Value.Type().String() + " " + v + "\n")
		}
		return b.String()
	})
}
