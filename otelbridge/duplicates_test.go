package otelbridge

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

// repeatedKey returns a key r holds more than once, or "".
func repeatedKey(r *sdklog.Record) string {
	seen := map[attribute.Key]bool{}
	dup := ""
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if seen[kv.Key] {
			dup = string(kv.Key)
			return false
		}
		seen[kv.Key] = true
		return true
	})
	return dup
}

// hostileDetails are details whose keys try to meet each other or the
// envelope's once flattened: dotted keys beside the nested path they spell,
// escapes, the envelope's names, a tracectx key, empty and repeated-looking
// keys, at random depths.
func hostileDetails(r *rand.Rand) map[string]any {
	keys := []string{"a", "b", "a.b", "a%2Eb", "a%b", "%2E", ".", "..", "", "value", "tenant", "progress",
		"progress.tenant", "tracectx", "tracectx.transactionid", "scope", "details", "status", "sequence"}
	var fill func(depth int) map[string]any
	fill = func(depth int) map[string]any {
		m := map[string]any{}
		for range r.IntN(6) {
			k := keys[r.IntN(len(keys))]
			switch {
			case depth < 3 && r.IntN(3) == 0:
				m[k] = fill(depth + 1)
			case r.IntN(5) == 0:
				m[k] = []any{1, "x", map[string]any{k: k}}
			default:
				m[k] = r.IntN(100)
			}
		}
		return m
	}
	return fill(0)
}

// Setup's default Recorder writes through a provider without the SDK's
// duplicate-key check (progressProvider). This holds it to what that
// relies on: no progress record, with every tracectx value of a request
// stamped by the tracectx processor, has a key twice, whatever its details,
// scope, envelope or stream. The check itself is live: a hand-built record
// with a repeated key keeps it through the same provider.
func TestProgressRecordsHaveNoDuplicateKeys(t *testing.T) {
	capture := &progresstest.Exporter{}
	tel, err := Setup(context.Background(), WithExporters("none"), WithExporter(capture), WithoutTracerProvider(),
		WithoutGlobalPropagator(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	if tel.progressLP == tel.lp {
		t.Fatal("Setup's Recorder uses the provider with the duplicate-key check")
	}
	vals := propagation.Values{}
	for _, k := range []string{"transactionid", "tenantid", "processid", "taskid", "driverrequestid", "externalrequestid", "token", "x"} {
		if vals, err = vals.With(k, "v-"+k); err != nil {
			t.Fatal(err)
		}
	}
	ctx := propagation.ContextWithValues(context.Background(), vals)
	r := rand.New(rand.NewPCG(7, 8))
	streams := []string{progress.StreamProvisioning, progress.StreamLifecycle, "health", "tracectx", "a_b"}
	n := 0
	for i := range 400 {
		env := progress.Envelope{
			Component: progress.Component{Name: "d", Version: "1"},
			Resource:  progress.Resource{Type: "T", ID: fmt.Sprint(i), Namespace: "ns", UID: "u"},
			Scope:     map[string]string{"tenant": "t", "status": "s", "a.b": "x", "a": "y", "": "z", "tracectx.x": "w"},
		}
		if i%3 == 0 {
			env.ObservedGeneration = int64(i)
		}
		if err := progress.Record(ctx, progress.Event{Type: "test/Hostile", Envelope: env, Details: hostileDetails(r)}); err != nil {
			t.Fatal(err)
		}
		prev := &progress.Condition{Status: "False", Reason: "Before", Message: "m"}
		err := progress.RecordTransition(ctx, progress.Transition{Stream: streams[i%len(streams)], Envelope: env,
			Condition: progress.Condition{Status: "True", Reason: "Now", Message: "m"}, Previous: prev})
		if err != nil && i%len(streams) != 3 { // "tracectx" may be refused as a stream
			t.Fatal(err)
		}
		n += 2
	}
	// A record with a repeated key, through the same provider: the
	// provider keeps it (so the check above could have failed).
	var rec log.Record
	rec.SetEventName("test/Repeated")
	rec.AddAttributes(attribute.String("k", "1"), attribute.String("k", "2"))
	tel.progressLP.Logger(wire.ScopeName).Emit(ctx, rec)
	if err := tel.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := n - 400/len(streams) + 1 // a stream may be refused; the hand-built record
	deadline := time.Now().Add(10 * time.Second)
	for len(capture.Records()) < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	records := capture.Records()
	sawRepeat, checked := false, 0
	for i := range records {
		rec := &records[i]
		k := repeatedKey(rec)
		if rec.EventName() == "test/Repeated" {
			sawRepeat = k == "k"
			continue
		}
		checked++
		if k != "" {
			t.Errorf("%s record has %q twice", rec.EventName(), k)
		}
	}
	if !sawRepeat {
		t.Error("the hand-built record lost its repeated key: the provider checks duplicates, and this test proves nothing")
	}
	if checked < n-400/len(streams) {
		t.Errorf("%d progress records checked, want at least %d", checked, n-400/len(streams))
	}
}
