package progress_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/testkit/hostile"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// FuzzRecordBounded drives Record with hostile details built from the
// fuzz input (hostile.FromBytes: wide maps, long keys, fanned-out nested
// slices, maps inside slices, typed nils, panicking methods, private keys
// in every form, NaNs, cycles) under a cap from 512 bytes to 64 KiB. On
// every input: Record neither panics nor fails, the encoded size of the
// details never exceeds MaxDetailsBytes, there are at most MaxAttributes
// detail attributes, no private key leaves, and the encoder's own panic
// net never fires. The seeds in testdata/fuzz/FuzzRecordBounded are the
// shapes of issue 12.
func FuzzRecordBounded(f *testing.F) {
	f.Add([]byte{}, uint8(255))
	f.Fuzz(func(t *testing.T, data []byte, capUnits uint8) {
		lim := progress.Limits{MaxDetailsBytes: 512 + int(capUnits)*256}
		sink := progresstest.NewSink()
		rec := sink.Recorder(progress.WithLimits(lim))
		details := hostile.FromBytes(data)
		if err := rec.Record(context.Background(), progress.Event{Type: "fuzz/Bounded", Details: details}); err != nil {
			t.Fatalf("Record: %v", err)
		}
		recs := sink.Records()
		if len(recs) != 1 {
			t.Fatalf("%d records", len(recs))
		}
		r := &recs[0]
		if size := detailsSize(r); size > lim.MaxDetailsBytes {
			t.Fatalf("encoded details %d bytes, cap %d", size, lim.MaxDetailsBytes)
		}
		n := 0
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			if strings.HasPrefix(string(kv.Key), wire.DetailsPrefix) {
				n++
			}
			text := kv.Value.String()
			if hostile.Leaks(text) {
				t.Errorf("%s leaks a private key: %.200s", kv.Key, text)
			}
			if strings.Contains(text, "encoder panicked") {
				t.Errorf("the encoder panicked on this input")
			}
			return true
		})
		if n > progress.DefaultLimits().MaxAttributes {
			t.Errorf("%d detail attributes", n)
		}
	})
}
