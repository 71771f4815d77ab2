package propagation_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	otelprop "go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/propagation"
)

// The mapping both ways, on the keys Ignition knows and on every byte a key
// may hold.
func TestEnvNameAndEnvKey(t *testing.T) {
	for _, tc := range []struct{ key, name string }{
		{"transactionid", "X_TRACECTX_TRANSACTIONID"},
		{"TransactionId", "X_TRACECTX_TRANSACTIONID"},
		{"tenantid", "X_TRACECTX_TENANTID"},
		{"driverrequestid", "X_TRACECTX_DRIVERREQUESTID"},
		{"request-id", "X_TRACECTX_REQUEST_2DID"},
		{"a.b", "X_TRACECTX_A_2EB"},
		{"driver_req.id", "X_TRACECTX_DRIVER_5FREQ_2EID"},
		{"a_2d", "X_TRACECTX_A_5F2D"}, // an escape's digits in a key stay the key's
		{"9lives", "X_TRACECTX_9LIVES"},
		{"a-_.b", "X_TRACECTX_A_2D_5F_2EB"},
	} {
		name, err := propagation.EnvName(tc.key)
		if err != nil || name != tc.name {
			t.Errorf("EnvName(%q) = %q, %v; want %q", tc.key, name, err, tc.name)
		}
		key, ok := propagation.EnvKey(tc.name)
		if want := strings.ToLower(tc.key); !ok || key != want {
			t.Errorf("EnvKey(%q) = %q, %v; want %q", tc.name, key, ok, want)
		}
	}
}

// The specification's normalization of a header name gives the same
// variable for the keys Ignition knows, so another tool's variables work.
func TestEnvNameMatchesEnvcarForPlainKeys(t *testing.T) {
	var set map[string]string
	c := propagation.EnvCarrier{SetEnv: func(k, v string) { set[k] = v }}
	for _, header := range []string{"x-tracectx-TransactionId", "x-tracectx-ProcessId", "x-tracectx-TaskId", "x-tracectx-TenantId", "x-tracectx-ExternalRequestId"} {
		set = map[string]string{}
		c.Set(header, "v")
		plain := strings.ToUpper(strings.ReplaceAll(header, "-", "_"))
		if _, ok := set[plain]; !ok || len(set) != 1 {
			t.Errorf("Set(%q) wrote %v, want %s", header, set, plain)
		}
	}
}

func TestEnvKeyReadsNamesWrittenByHand(t *testing.T) {
	for name, want := range map[string]string{
		"X_TRACECTX_DRIVER_REQUEST_ID": "driver_request_id", // lone '_' is '_'
		"X_TRACECTX_A_BC":              "a_bc",
		"X_TRACECTX_A_2":               "a_2",
		"X_TRACECTX_A_":                "a_",
	} {
		if got, ok := propagation.EnvKey(name); !ok || got != want {
			t.Errorf("EnvKey(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{
		"", "X_TRACECTX_", "TRACEPARENT", "x_tracectx_transactionid",
		"X_TRACECTX_transactionid", "X_TRACECTX__5FA", "X_TRACECTX__A", "X_TRACECTX_A-B",
		"X_TRACECTX_" + strings.Repeat("A", propagation.MaxKeyLen+1),
	} {
		if got, ok := propagation.EnvKey(name); ok {
			t.Errorf("EnvKey(%q) = %q, want no key", name, got)
		}
	}
	for _, key := range []string{"", "a b", "a=b", "_a", "é", strings.Repeat("a", propagation.MaxKeyLen+1)} {
		if name, err := propagation.EnvName(key); !errors.Is(err, propagation.ErrInvalidKey) {
			t.Errorf("EnvName(%q) = %q, %v; want ErrInvalidKey", key, name, err)
		}
	}
}

// FuzzEnvName: every valid key maps to a portable variable name that
// maps back to it, and every name EnvKey accepts maps to a key whose
// EnvName decodes to the same key.
func FuzzEnvName(f *testing.F) {
	for _, s := range []string{"transactionid", "a-b.c_d", "a_2d", "X_TRACECTX_A_5F2D", "X_TRACECTX_A__B", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if norm, err := propagation.NormalizeKey(s); err == nil {
			name, err := propagation.EnvName(s)
			if err != nil {
				t.Fatalf("EnvName(%q): %v", s, err)
			}
			for _, c := range []byte(name) {
				if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
					t.Fatalf("EnvName(%q) = %q: byte %q is not portable", s, name, c)
				}
			}
			if back, ok := propagation.EnvKey(name); !ok || back != norm {
				t.Fatalf("EnvKey(EnvName(%q)) = %q, %v; want %q", s, back, ok, norm)
			}
		}
		if key, ok := propagation.EnvKey(s); ok {
			name, err := propagation.EnvName(key)
			if err != nil {
				t.Fatalf("EnvName(EnvKey(%q) = %q): %v", s, key, err)
			}
			if again, ok := propagation.EnvKey(name); !ok || again != key {
				t.Fatalf("EnvKey(%q) = %q, %v; want %q", name, again, ok, key)
			}
		}
	})
}

// Inject into a child's environment, then extract in the child (here:
// the same process with that environment): trace context, baggage and
// every tracectx value come back.
func TestEnvCarrierRoundTrip(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: mustTraceID(t, traceID), SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled, TraceState: mustTraceState(t, "vendor=x"),
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	m, _ := baggage.NewMember("user", "alice")
	bag, _ := baggage.New(m)
	ctx = baggage.ContextWithBaggage(ctx, bag)
	want := map[string]string{"transactionid": "tx-1", "tenantid": "tenant-a", "request-id": "r-1", "driver_req.id": "d-1", "a_2d": "x"}
	vals, err := propagation.NewValues(want)
	if err != nil {
		t.Fatal(err)
	}
	ctx = propagation.ContextWithValues(ctx, vals)

	env := map[string]string{}
	propagation.Default().Inject(ctx, propagation.EnvCarrier{SetEnv: func(k, v string) { env[k] = v }})
	wantEnv := map[string]string{
		"TRACEPARENT":                  "00-" + traceID + "-0102030405060708-01",
		"TRACESTATE":                   "vendor=x",
		"BAGGAGE":                      "user=alice",
		"X_TRACECTX_TRANSACTIONID":     "tx-1",
		"X_TRACECTX_TENANTID":          "tenant-a",
		"X_TRACECTX_REQUEST_2DID":      "r-1",
		"X_TRACECTX_DRIVER_5FREQ_2EID": "d-1",
		"X_TRACECTX_A_5F2D":            "x",
	}
	if !maps.Equal(env, wantEnv) {
		t.Fatalf("injected %v\nwant %v", env, wantEnv)
	}

	clearTraceEnv(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Setenv("X_TRACECTX_BAD_KEY_", "") // empty value: skipped
	t.Setenv("PATH_LIKE", "/bin")
	got := propagation.Default().Extract(context.Background(), propagation.EnvCarrier{})
	if gsc := trace.SpanContextFromContext(got); !gsc.Equal(sc.WithRemote(true)) {
		t.Errorf("span context %v, want %v", gsc, sc)
	}
	if b := baggage.FromContext(got).Member("user").Value(); b != "alice" {
		t.Errorf("baggage user = %q", b)
	}
	if v := propagation.FromContext(got).Map(); !maps.Equal(v, want) {
		t.Errorf("tracectx %v, want %v", v, want)
	}
}

// A variable in a non-canonical spelling is found by Get as well as
// listed by Keys; the canonical spelling wins when both are set.
func TestEnvCarrierGetFindsHandWrittenNames(t *testing.T) {
	clearTraceEnv(t)
	t.Setenv("X_TRACECTX_DRIVER_REQUEST_ID", "by-hand")
	got := propagation.TraceCtx().Extract(context.Background(), propagation.EnvCarrier{})
	if v, _ := propagation.FromContext(got).Get("driver_request_id"); v != "by-hand" {
		t.Fatalf("driver_request_id = %q, want by-hand", v)
	}
	t.Setenv("X_TRACECTX_DRIVER_5FREQUEST_5FID", "canonical")
	got = propagation.TraceCtx().Extract(context.Background(), propagation.EnvCarrier{})
	if v, _ := propagation.FromContext(got).Get("driver_request_id"); v != "canonical" {
		t.Fatalf("driver_request_id = %q, want canonical", v)
	}
}

// Bad values from the environment are rejected as from any carrier, and
// ExtractValues says which.
func TestEnvCarrierRejectsBadValues(t *testing.T) {
	clearTraceEnv(t)
	t.Setenv("X_TRACECTX_TRANSACTIONID", "tx-1\nforged: line")
	t.Setenv("X_TRACECTX_TASKID", "t-1")
	v, err := propagation.ExtractValues(propagation.EnvCarrier{})
	if !errors.Is(err, propagation.ErrInvalidValue) {
		t.Fatalf("error %v, want ErrInvalidValue", err)
	}
	if m := v.Map(); !maps.Equal(m, map[string]string{"taskid": "t-1"}) {
		t.Fatalf("values %v", m)
	}
}

func TestEnvCarrierWithoutSetEnvSetsNothing(t *testing.T) {
	clearTraceEnv(t)
	propagation.EnvCarrier{}.Set("traceparent", traceparent)
	propagation.EnvCarrier{}.Set("x-tracectx-TransactionId", "tx-1")
	if os.Getenv("TRACEPARENT") != "" || os.Getenv("X_TRACECTX_TRANSACTIONID") != "" {
		t.Fatal("an extract-only carrier changed the process environment")
	}
}

// clearTraceEnv unsets, for the test, the variables a surrounding run
// (progressotel run -- go test) may have set.
func clearTraceEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, propagation.EnvPrefix) || name == "TRACEPARENT" || name == "TRACESTATE" || name == "BAGGAGE" {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
}

func mustTraceID(t *testing.T, s string) trace.TraceID {
	t.Helper()
	id, err := trace.TraceIDFromHex(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustTraceState(t *testing.T, s string) trace.TraceState {
	t.Helper()
	ts, err := trace.ParseTraceState(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

var _ otelprop.TextMapCarrier = propagation.EnvCarrier{}
