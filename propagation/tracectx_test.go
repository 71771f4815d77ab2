package propagation_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	otelprop "go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/propagation"
)

const (
	traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
)

func values(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	return propagation.FromContext(ctx).Map()
}

func TestExtractMixedCaseHeaders(t *testing.T) {
	carrier := otelprop.MapCarrier{
		"X-TraceCtx-TransactionId": "tx-1",
		"x-tracectx-processid":     "p-1",
		"X-TRACECTX-TASKID":        "t-1",
		"x-TraceCtx-TenantId":      "tenant-a",
		"X-Tracectx-Custom.Key_1":  "c-1",
		"X-Other":                  "ignored",
		"x-tracectx":               "no key: ignored",
	}
	ctx := propagation.TraceCtx().Extract(context.Background(), carrier)
	want := map[string]string{
		"transactionid": "tx-1", "processid": "p-1", "taskid": "t-1",
		"tenantid": "tenant-a", "custom.key_1": "c-1",
	}
	if got := values(t, ctx); !maps.Equal(got, want) {
		t.Fatalf("extracted %v, want %v", got, want)
	}
	// Get is case-insensitive too.
	if v, ok := propagation.FromContext(ctx).Get("TransactionId"); !ok || v != "tx-1" {
		t.Fatalf("Get(TransactionId) = %q, %v", v, ok)
	}
}

func TestExtractFromHTTPHeader(t *testing.T) {
	h := http.Header{}
	h.Add("X-Tracectx-TransactionId", "tx-1")
	h.Add("x-tracectx-PROCESSID", "p-1")
	ctx := propagation.TraceCtx().Extract(context.Background(), otelprop.HeaderCarrier(h))
	want := map[string]string{"transactionid": "tx-1", "processid": "p-1"}
	if got := values(t, ctx); !maps.Equal(got, want) {
		t.Fatalf("extracted %v, want %v", got, want)
	}
}

func TestInjectUsesIgnitionSpelling(t *testing.T) {
	ctx := context.Background()
	for k, v := range map[string]string{"transactionid": "tx-1", "ProcessId": "p-1", "DRIVERREQUESTID": "d-1", "mykey": "m-1"} {
		var err error
		if ctx, err = propagation.WithValue(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	carrier := otelprop.MapCarrier{}
	propagation.TraceCtx().Inject(ctx, carrier)
	want := otelprop.MapCarrier{
		"x-tracectx-TransactionId":   "tx-1",
		"x-tracectx-ProcessId":       "p-1",
		"x-tracectx-DriverRequestId": "d-1",
		"x-tracectx-mykey":           "m-1",
	}
	if !maps.Equal(carrier, want) {
		t.Fatalf("injected %v, want %v", carrier, want)
	}

	// Through an http.Header (canonical names) and back.
	h := http.Header{}
	propagation.TraceCtx().Inject(ctx, otelprop.HeaderCarrier(h))
	if got := h.Get("x-tracectx-transactionid"); got != "tx-1" {
		t.Fatalf("header x-tracectx-transactionid = %q", got)
	}
	back := propagation.TraceCtx().Extract(context.Background(), otelprop.HeaderCarrier(h))
	if got, want := values(t, back), values(t, ctx); !maps.Equal(got, want) {
		t.Fatalf("round trip %v, want %v", got, want)
	}
}

func TestExtractMergesOverExisting(t *testing.T) {
	ctx, _ := propagation.WithValue(context.Background(), "driverrequestid", "d-1")
	ctx, _ = propagation.WithValue(ctx, "transactionid", "old")
	ctx = propagation.TraceCtx().Extract(ctx, otelprop.MapCarrier{"x-tracectx-transactionid": "new"})
	want := map[string]string{"driverrequestid": "d-1", "transactionid": "new"}
	if got := values(t, ctx); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

type markerKey struct{}

func TestExtractWithoutTraceCtxKeepsContext(t *testing.T) {
	ctx := context.WithValue(context.Background(), markerKey{}, 1)
	if got := propagation.TraceCtx().Extract(ctx, otelprop.MapCarrier{"traceparent": traceparent}); got != ctx {
		t.Fatal("Extract without x-tracectx-* keys returned a new context")
	}
}

func TestDefaultCompositeExtractsAll(t *testing.T) {
	h := http.Header{}
	h.Set("Traceparent", traceparent)
	h.Set("Baggage", "userId=alice")
	h.Set("X-Tracectx-TransactionId", "tx-1")
	ctx := propagation.Default().Extract(context.Background(), otelprop.HeaderCarrier(h))

	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsRemote() || sc.TraceID().String() != traceID {
		t.Fatalf("span context %v, want remote trace %s", sc, traceID)
	}
	if got := baggage.FromContext(ctx).Member("userId").Value(); got != "alice" {
		t.Fatalf("baggage userId = %q", got)
	}
	if v, _ := propagation.FromContext(ctx).Get("transactionid"); v != "tx-1" {
		t.Fatalf("transactionid = %q", v)
	}

	out := otelprop.MapCarrier{}
	propagation.Default().Inject(ctx, out)
	for _, k := range []string{"traceparent", "baggage", "x-tracectx-TransactionId"} {
		if out[k] == "" {
			t.Errorf("Default().Inject did not write %s: %v", k, out)
		}
	}
	fields := strings.Join(propagation.Default().Fields(), ",")
	for _, f := range []string{"traceparent", "baggage", "x-tracectx-transactionid"} {
		if !strings.Contains(fields, f) {
			t.Errorf("Fields() = %s, missing %s", fields, f)
		}
	}
}

func TestBadInput(t *testing.T) {
	long := strings.Repeat("a", propagation.MaxValueLen)
	longKey := strings.Repeat("k", propagation.MaxKeyLen)
	tests := []struct {
		name      string
		key, val  string
		wantKey   string
		wantVal   string // "" = rejected
		wantError error
	}{
		{"ok", "transactionid", "tx-1", "transactionid", "tx-1", nil},
		{"trimmed spaces and tabs", "transactionid", " \ttx-1 \t", "transactionid", "tx-1", nil},
		{"value at limit", "transactionid", long, "transactionid", long, nil},
		{"unicode ok", "transactionid", "tx-é-日本", "transactionid", "tx-é-日本", nil},
		{"value over limit", "transactionid", long + "a", "", "", propagation.ErrInvalidValue},
		{"CRLF", "transactionid", "tx-1\r\nX-Injected: 1", "", "", propagation.ErrInvalidValue},
		{"LF", "transactionid", "tx-1\nfake log line", "", "", propagation.ErrInvalidValue},
		{"NUL", "transactionid", "tx\x00", "", "", propagation.ErrInvalidValue},
		{"tab inside", "transactionid", "tx\t1", "", "", propagation.ErrInvalidValue},
		{"DEL", "transactionid", "tx\x7f", "", "", propagation.ErrInvalidValue},
		{"C1 control", "transactionid", "tx\u0085", "", "", propagation.ErrInvalidValue},
		{"line separator", "transactionid", "tx\u2028", "", "", propagation.ErrInvalidValue},
		{"ANSI escape", "transactionid", "\x1b[31mred", "", "", propagation.ErrInvalidValue},
		{"not UTF-8", "transactionid", "tx-\xff\xfe", "", "", propagation.ErrInvalidValue},
		{"empty value", "transactionid", "  ", "", "", propagation.ErrInvalidValue},
		{"key at limit", longKey, "v", longKey, "v", nil},
		{"key over limit", longKey + "k", "v", "", "", propagation.ErrInvalidKey},
		{"key with space", "transaction id", "v", "", "", propagation.ErrInvalidKey},
		{"key with colon", "a:b", "v", "", "", propagation.ErrInvalidKey},
		{"key non-ASCII", "tränsaction", "v", "", "", propagation.ErrInvalidKey},
		{"key starts with dot", ".a", "v", "", "", propagation.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Through the propagator: bad entries are skipped, good ones kept.
			carrier := otelprop.MapCarrier{
				"x-tracectx-" + tt.key: tt.val,
				"x-tracectx-processid": "p-1",
			}
			ctx := propagation.TraceCtx().Extract(context.Background(), carrier)
			got := values(t, ctx)
			if got["processid"] != "p-1" {
				t.Fatalf("a bad neighbour dropped processid: %v", got)
			}
			if tt.wantVal == "" {
				if len(got) != 1 {
					t.Fatalf("bad entry was kept: %q", got)
				}
			} else if got[tt.wantKey] != tt.wantVal {
				t.Fatalf("got %q, want %s=%q", got, tt.wantKey, tt.wantVal)
			}

			// Through ExtractValues and WithValue: the same rule, with an error.
			_, err := propagation.ExtractValues(carrier)
			_, werr := propagation.WithValue(context.Background(), tt.key, tt.val)
			for _, e := range []error{err, werr} {
				if tt.wantError == nil && e != nil {
					t.Fatalf("unexpected error %v", e)
				}
				if tt.wantError != nil && !errors.Is(e, tt.wantError) {
					t.Fatalf("error %v, want %v", e, tt.wantError)
				}
			}
		})
	}
}

func TestExtractCapsValues(t *testing.T) {
	carrier := otelprop.MapCarrier{}
	for i := range 1000 {
		carrier[fmt.Sprintf("X-Tracectx-Flood%04d", i)] = "x"
	}
	// Well-known keys sort after "flood..." but must survive the flood.
	carrier["x-tracectx-TransactionId"] = "tx-1"
	carrier["x-tracectx-TenantId"] = "tenant-a"

	v, err := propagation.ExtractValues(carrier)
	if !errors.Is(err, propagation.ErrTooManyValues) {
		t.Fatalf("error %v, want ErrTooManyValues", err)
	}
	ctx := propagation.TraceCtx().Extract(context.Background(), carrier)
	for _, got := range []propagation.Values{v, propagation.FromContext(ctx)} {
		if got.Len() != propagation.MaxValues {
			t.Fatalf("kept %d values, want %d", got.Len(), propagation.MaxValues)
		}
		if tx, _ := got.Get("transactionid"); tx != "tx-1" {
			t.Fatal("transactionid was dropped by the cap")
		}
		if _, ok := got.Get("tenantid"); !ok {
			t.Fatal("tenantid was dropped by the cap")
		}
		// The others are kept in byte order: flood0000..flood0029.
		if _, ok := got.Get("flood0029"); !ok {
			t.Fatal("flood0029 missing")
		}
		if _, ok := got.Get("flood0030"); ok {
			t.Fatal("flood0030 kept beyond the cap")
		}
	}

	// WithValue refuses a new key on a full context but replaces an old one.
	if _, err := propagation.WithValue(ctx, "another", "x"); !errors.Is(err, propagation.ErrTooManyValues) {
		t.Fatalf("WithValue on a full context: %v", err)
	}
	ctx2, err := propagation.WithValue(ctx, "TransactionId", "tx-2")
	if err != nil {
		t.Fatal(err)
	}
	if tx, _ := propagation.FromContext(ctx2).Get("transactionid"); tx != "tx-2" {
		t.Fatalf("transactionid = %q after replace", tx)
	}
}

func TestDuplicateSpellingsAreDeterministic(t *testing.T) {
	carrier := otelprop.MapCarrier{
		"x-tracectx-transactionid": "lower",
		"X-TRACECTX-TRANSACTIONID": "upper",
		"X-Tracectx-TransactionId": "mixed",
	}
	for range 20 { // map order varies from run to run
		v, _ := propagation.ExtractValues(carrier)
		if got, _ := v.Get("transactionid"); got != "upper" { // "X-TRACECTX-..." sorts first
			t.Fatalf("transactionid = %q, want the value of the spelling that sorts first", got)
		}
	}
}

// TestKafkaDuplicateHeadersFirstWins: Kafka headers keep their order and
// may repeat a key in any spelling; the first header wins, as
// docs/propagation.md says and as KafkaHeaders.Get returns it.
func TestKafkaDuplicateHeadersFirstWins(t *testing.T) {
	useDefaultPropagator(t)
	for _, hs := range []propagation.KafkaHeaders{
		{{Key: "x-tracectx-TaskId", Value: []byte("first")}, {Key: "X-TRACECTX-TASKID", Value: []byte("upper")}, {Key: "x-tracectx-TaskId", Value: []byte("again")}},
		{{Key: "X-Tracectx-Taskid", Value: []byte("first")}, {Key: "x-tracectx-taskid", Value: []byte("lower")}},
		{{Key: "x-tracectx-taskid", Value: []byte("first")}, {Key: "x-tracectx-taskid", Value: []byte("second")}},
	} {
		v := propagation.FromContext(propagation.ExtractKafka(context.Background(), hs))
		if got, _ := v.Get("taskid"); got != "first" {
			t.Errorf("%v: taskid = %q, want the first header's", hs, got)
		}
	}
}

func TestWithValueDoesNotChangeParent(t *testing.T) {
	parent, _ := propagation.WithValue(context.Background(), "transactionid", "tx-1")
	child, err := propagation.WithValue(parent, "driverrequestid", "d-1")
	if err != nil {
		t.Fatal(err)
	}
	if propagation.FromContext(parent).Len() != 1 || propagation.FromContext(child).Len() != 2 {
		t.Fatalf("parent %v, child %v", values(t, parent), values(t, child))
	}
	bad, err := propagation.WithValue(parent, "driverrequestid", "a\nb")
	if err == nil || bad != parent {
		t.Fatalf("WithValue with a bad value: ctx changed or no error (%v)", err)
	}
}

func TestNewValues(t *testing.T) {
	v, err := propagation.NewValues(map[string]string{"TransactionId": "tx-1", "bad key": "x", "processid": "p\r\n"})
	if !errors.Is(err, propagation.ErrInvalidKey) || !errors.Is(err, propagation.ErrInvalidValue) {
		t.Fatalf("error %v, want both ErrInvalidKey and ErrInvalidValue", err)
	}
	if got := v.Map(); !maps.Equal(got, map[string]string{"transactionid": "tx-1"}) {
		t.Fatalf("got %v", got)
	}
}
