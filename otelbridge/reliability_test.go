package otelbridge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	progresswire "github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

// TestSequenceContiguousPerTraceUnderConcurrency: the rule a consumer relies
// on. progress.sequence counts 1, 2, 3, ... per trace (operation), or per
// resource when there is no span, whatever the goroutines; so a missing
// number is a lost record and a consumer can reorder.
func TestSequenceContiguousPerTraceUnderConcurrency(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	const traces, resources, goroutines, each = 8, 4, 4, 250
	var wg sync.WaitGroup
	for tr := range traces {
		ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{0xc, byte(tr + 1)}, SpanID: trace.SpanID{1},
		}))
		for range goroutines {
			wg.Go(func() {
				for i := range each {
					_ = rec.Record(ctx, progress.Progress(int64(i), each, ""))
				}
			})
		}
	}
	for r := range resources {
		for range goroutines {
			wg.Go(func() {
				for i := range each {
					evt := progress.Progress(int64(i), each, "")
					// Same resource, several operations without a span.
					evt.Resource = progress.Resource{Type: "Deployment", ID: fmt.Sprint("web-", r)}
					_ = rec.Record(context.Background(), evt)
				}
			})
		}
	}
	wg.Wait()

	byKey := map[string][]int64{}
	for _, e := range sink.Events() {
		k := e.TraceID.String()
		if !e.TraceID.IsValid() {
			k = e.Resource.Type + "/" + e.Resource.ID
		}
		byKey[k] = append(byKey[k], e.Sequence)
	}
	if len(byKey) != traces+resources {
		t.Fatalf("%d sequence keys, want %d", len(byKey), traces+resources)
	}
	for k, s := range byKey {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		for i, n := range s {
			if n != int64(i+1) {
				t.Fatalf("%s: sequence %v... is not 1..%d without gaps or repeats (at %d: %d)", k, s[:min(len(s), 10)], goroutines*each, i, n)
			}
		}
		// A consumer that lost one record sees exactly that gap.
		lost := append(append([]int64(nil), s[:100]...), s[101:]...)
		if gap := otlptest.Missing(lost, int64(len(s))); len(gap) != 1 || gap[0] != 101 {
			t.Fatalf("%s: gap detection found %v, want [101]", k, gap)
		}
	}
}

// The secrets of the test: none may appear in any output.
var secrets = []string{
	"S3CR3T-nested-1", "S3CR3T-slice-2", "S3CR3T-struct-3", "S3CR3T-pem-4", "S3CR3T-tracectx-5",
	"S3CR3T-case-6", "S3CR3T-token-7", "S3CR3T-structslice-8", "S3CR3T-mapslice-9", "S3CR3T-extra-10",
}

type dbCreds struct {
	User     string `json:"user"`
	Password string `json:"password"`
	Token    string // no tag: key "Token"
}

func secretDetails() map[string]any {
	return map[string]any{
		"user": "alice",
		"db":   map[string]any{"connection": map[string]any{"host": "db-1", "password": secrets[0]}},
		"hosts": []any{
			map[string]any{"name": "h1", "apiKey": secrets[1]},
			map[string]any{"name": "h2", "nested": []any{map[string]any{"Private_Key": secrets[8]}}},
		},
		"creds": dbCreds{User: "bob", Password: secrets[2], Token: secrets[6]},
		"list":  []dbCreds{{User: "carol", Password: secrets[7]}},
		"tls": map[string]string{
			"cert": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + secrets[3] + "\n-----END RSA PRIVATE KEY-----\n",
		},
		"Client-SECRET": secrets[5],
		"site":          map[string]any{"deployKey": secrets[9]}, // redacted only through WithSecretKeys
	}
}

func secretContext(t *testing.T) context.Context {
	t.Helper()
	ctx, err := propagation.WithValue(context.Background(), "transactionid", "tx-secret-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, err = propagation.WithValue(ctx, "authtoken", secrets[4])
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// runSecrets records secretDetails through a real Setup with the pretty,
// JSON and OTLP exporters at once and returns the local output and the
// OTLP request bytes the server received.
func runSecrets(t *testing.T, opts ...otelbridge.Option) (local string, wire [][]byte, got []progresswire.Decoded) {
	t.Helper()
	srv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.Addr)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	var out testutil.SyncBuffer
	prevLP, prevRec := otel.GetLoggerProvider(), progress.Default()
	t.Cleanup(func() { progress.SetDefault(prevRec); otel.SetLoggerProvider(prevLP) })
	tel, err := otelbridge.Setup(context.Background(), append([]otelbridge.Option{
		otelbridge.WithExporters(otelbridge.ExporterPretty, otelbridge.ExporterJSON, otelbridge.ExporterOTLP),
		otelbridge.WithWriter(&out),
		otelbridge.WithResource(resource.NewSchemaless(attribute.String("service.name", "secrets-test"))),
		otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator(),
		otelbridge.WithRecorderOptions(progress.WithSecretKeys("deploykey")),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := progress.Record(secretContext(t), progress.Event{Type: "test/Secrets", Details: secretDetails()}); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := srv.Records()
	if len(otlptest.OfType(recs, "test/Secrets")) != 1 {
		t.Fatalf("the OTLP server did not receive the event: %d records", len(recs))
	}
	return out.String(), srv.RawBytes(), otlptest.Decoded(t, recs)
}

func TestSecretsNeverLeaveTheProcess(t *testing.T) {
	local, wire, got := runSecrets(t)
	// The outputs are real: pretty and JSON lines, and the OTLP payload,
	// all carry the event and the redaction marker.
	if !strings.Contains(local, `"progressEventType":"test/Secrets"`) && !strings.Contains(local, `test/Secrets`) {
		t.Fatalf("local output lacks the event:\n%s", local)
	}
	if strings.Count(local, "test/Secrets") < 2 {
		t.Fatalf("want the event in both the pretty and the JSON output:\n%s", local)
	}
	for _, want := range []string{"alice", "db-1", "[REDACTED]", "tx-secret-test"} {
		if !strings.Contains(local, want) {
			t.Errorf("local output lacks %q (the test would not see a leak):\n%s", want, local)
		}
		if !bytes.Contains(bytes.Join(wire, nil), []byte(want)) {
			t.Errorf("OTLP payload lacks %q", want)
		}
	}
	for _, s := range secrets {
		if strings.Contains(local, s) {
			t.Errorf("secret %q in the pretty/JSON output:\n%s", s, local)
		}
		for _, b := range wire {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("secret %q in the OTLP request bytes", s)
			}
		}
	}
	if len(got) != 1 {
		t.Fatalf("decoded %d progress records from OTLP, want 1", len(got))
	}
	d := got[0].Details
	if v := d["db"].(map[string]any)["connection"].(map[string]any)["password"]; v != progresswire.Redacted {
		t.Errorf("nested password decoded as %v", v)
	}
	if v := got[0].TraceCtx["authtoken"]; v != progresswire.Redacted {
		t.Errorf("tracectx.authtoken = %q, want %q", v, progresswire.Redacted)
	}
}

// TestRedactionOffOnlyExplicitly is the control: with redaction turned off
// explicitly, the same secrets do appear, so the test above would catch a
// leak.
func TestRedactionOffOnlyExplicitly(t *testing.T) {
	local, wire, _ := runSecrets(t, otelbridge.WithRecorderOptions(progress.WithoutRedaction()))
	for _, s := range []string{secrets[0], secrets[1], secrets[2], secrets[3]} {
		if !strings.Contains(local, s) {
			t.Errorf("with WithoutRedaction, %q missing from the local output", s)
		}
		if !bytes.Contains(bytes.Join(wire, nil), []byte(s)) {
			t.Errorf("with WithoutRedaction, %q missing from the OTLP payload", s)
		}
	}
	// tracectx values go through Setup's Redactor, which is still the
	// default.
	if strings.Contains(local, secrets[4]) {
		t.Errorf("tracectx secret leaked although only the Recorder's redaction was turned off")
	}
}

// TestRecordBeforeSetupAndAfterShutdown runs in a fresh process, so that no
// other test has set the globals yet.
func TestRecordBeforeSetupAndAfterShutdown(t *testing.T) {
	if os.Getenv("PROGRESSOTEL_CHILD") == "lifecycle" {
		lifecycleChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecordBeforeSetupAndAfterShutdown$", "-test.v")
	cmd.Env = append(os.Environ(), "PROGRESSOTEL_CHILD=lifecycle")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func lifecycleChild(t *testing.T) {
	before := progress.Event{Type: "test/BeforeSetup", Details: map[string]any{"k": "v"}}
	if err := progress.Record(context.Background(), before); err != nil {
		t.Fatalf("Record before Setup = %v, want nil (global no-op)", err)
	}
	if err := progress.Record(context.Background(), progress.Event{}); !errors.Is(err, progress.ErrInvalidEvent) {
		t.Fatalf("zero Event before Setup = %v, want ErrInvalidEvent", err)
	}
	var out testutil.SyncBuffer
	tel, err := otelbridge.Setup(context.Background(), otelbridge.WithExporters(otelbridge.ExporterJSON),
		otelbridge.WithWriter(&out), otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator())
	if err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context // the bad input under test
	if err := progress.Record(nilCtx, progress.Event{Type: "test/NilContext"}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := progress.Record(cancelled, progress.Event{Type: "test/CancelledContext", Details: nil}); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := progress.Record(context.Background(), progress.Event{Type: "test/AfterShutdown"}); err != nil {
		t.Fatalf("Record after Shutdown = %v, want nil", err)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatalf("second shutdown = %v, want nil", err)
	}
	s := out.String()
	for _, want := range []string{"test/NilContext", "test/CancelledContext"} {
		if !strings.Contains(s, want) {
			t.Errorf("%s missing: a nil or cancelled context must not lose the event:\n%s", want, s)
		}
	}
	for _, not := range []string{"test/BeforeSetup", "test/AfterShutdown"} {
		if strings.Contains(s, not) {
			t.Errorf("%s was emitted:\n%s", not, s)
		}
	}
}

// TestFullRecordFitsTheSDKAttributeLimit: the biggest record the library
// makes (every envelope field, 32 tracectx values, details past
// MaxAttributes) stays within the SDK's default attribute count limit, so
// the SDK drops none of it, least of all the sequence, the truncation
// marker or the tenant.
func TestFullRecordFitsTheSDKAttributeLimit(t *testing.T) {
	sink := progresstest.NewSink(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor()))
	ctx := context.Background()
	for i := range propagation.MaxValues {
		var err error
		key := fmt.Sprintf("key%02d", i)
		if i == 0 {
			key = "tenantid"
		}
		if ctx, err = propagation.WithValue(ctx, key, "v"); err != nil {
			t.Fatal(err)
		}
	}
	d := map[string]any{}
	for i := range 500 {
		d[fmt.Sprint("d", i)] = i
	}
	evt := progress.Event{Type: "test/Full", Details: d, Envelope: progress.Envelope{
		Component: progress.Component{Name: "c", Version: "1"},
		Resource:  progress.Resource{Type: "T", ID: "i", Namespace: "n", UID: "u"},
		Scope:     map[string]string{"organization": "o", "project": "p"}, ObservedGeneration: 3,
	}}
	if err := sink.Recorder().Record(ctx, evt); err != nil {
		t.Fatal(err)
	}
	recs := sink.Records()
	if len(recs) != 1 {
		t.Fatal(len(recs))
	}
	if n := recs[0].DroppedAttributes(); n != 0 {
		t.Fatalf("the SDK dropped %d attributes of %d", n, recs[0].AttributesLen())
	}
	e := sink.Events()[0]
	if e.Sequence != 1 || !e.Truncated || e.TraceCtx["tenantid"] != "v" || len(e.TraceCtx) != propagation.MaxValues {
		t.Errorf("sequence %d, truncated %v, %d tracectx values", e.Sequence, e.Truncated, len(e.TraceCtx))
	}
}
