package tncoprocessor

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/redactionprocessor"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/progressotel/progressotel/tncomessage"
)

// gen makes records of every shape the message has, with the values the
// redaction rules and the encoding care about.
type gen struct {
	r *rand.Rand
	// flat: scalars only, no maps or slices. The redaction processor
	// applies blocked_values to no value inside a slice attribute (a
	// private key in a list of strings passes it); tnco does.
	flat bool
}

var (
	genKeys = []string{"taskName", "hostName", "rc", "msg", "a.b", "100%", "password", "db_password", "apiToken",
		"Authorisation", "ſecret", "ACCESS KEY", "noLog", "sessionKey", "<&>", "é", "", "key\nline", "x\"y",
		"cookie", "Token", "passwd", "results", "timing", "K"}
	genStrings = []string{"", "ok", "web-1", "hunter2", "<b>&amp;</b>", "line1\nline2", "\n", "tab\there",
		"\u2028\u2029", "\x00\x1f\x7f", "é 日本", "\xff\xfe", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n",
		"prefix -----BEGIN OPENSSH PRIVATE KEY----- cut short", "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----",
		`quote " backslash \ slash /`, "[REDACTED]", "****"}
)

func (g gen) key() string       { return genKeys[g.r.IntN(len(genKeys))] }
func (g gen) text() string      { return genStrings[g.r.IntN(len(genStrings))] }
func (g gen) chance(n int) bool { return g.r.IntN(n) == 0 }

func (g gen) scalar(v pcommon.Value) {
	switch g.r.IntN(8) {
	case 0, 1, 2:
		v.SetStr(g.text())
	case 3:
		v.SetInt([]int64{0, -1, 42, 1 << 53, -(1 << 53), 1764432000123}[g.r.IntN(6)])
	case 4:
		v.SetDouble([]float64{0.5, 3, math.Copysign(0, -1), 1e21, 1e-7, 123456.789, 1e20}[g.r.IntN(7)])
	case 5:
		v.SetBool(g.chance(2))
	case 6:
		v.SetEmptyBytes().FromRaw([]byte{0, 1, 254})
	default: // empty
	}
}

func (g gen) value(v pcommon.Value, depth int) {
	switch {
	case depth < 3 && !g.flat && g.chance(4):
		g.fill(v.SetEmptyMap(), depth+1)
	case depth < 3 && !g.flat && g.chance(6):
		s := v.SetEmptySlice()
		for range g.r.IntN(3) {
			g.value(s.AppendEmpty(), depth+1)
		}
	default:
		g.scalar(v)
	}
}

func (g gen) fill(m pcommon.Map, depth int) {
	for range g.r.IntN(5) {
		g.value(m.PutEmpty(g.key()), depth)
	}
}

// record fills lr as a driver's record, some details flattened and some
// not (as a driver in another language may send them).
func (g gen) record(lr plog.LogRecord) {
	a := lr.Attributes()
	details := pcommon.NewMap()
	if g.chance(5) {
		lr.SetEventName("provisioning")
		a.PutStr(tncomessage.AttrEventType, tncomessage.TransitionEventType)
		a.PutStr("progress.provisioning.status", "True")
		a.PutStr("progress.provisioning.reason", g.text())
		if g.chance(2) {
			a.PutStr("progress.provisioning.message", g.text())
		}
		if g.chance(2) {
			a.PutStr("progress.provisioning.previous.status", "False")
			a.PutStr("progress.provisioning.previous.reason", "Provisioning")
		}
	} else {
		lr.SetEventName("ansible/TaskCompletedOnHost")
		a.PutStr(tncomessage.AttrEventType, tncomessage.EventType)
		g.fill(details, 0)
		for k, v := range details.All() {
			v.CopyTo(a.PutEmpty("progress.details." + k))
		}
	}
	if g.chance(2) {
		a.PutStr("progress.component.name", "ansible-driver")
		a.PutStr("progress.component.version", "3.2.1")
	}
	if g.chance(2) {
		a.PutStr("progress.resource.type", "Assembly")
		a.PutStr("progress.resource.id", g.text())
	}
	if g.chance(2) {
		a.PutStr("progress.scope."+g.key(), g.text())
	}
	switch g.r.IntN(4) {
	case 0:
		a.PutStr(tncomessage.AttrTenant, "tenant-a")
	case 1:
		a.PutStr(tncomessage.AttrTenant, g.text())
	case 2:
		a.PutInt(tncomessage.AttrTenant, 7)
	}
	if g.chance(2) {
		a.PutInt(tncomessage.AttrSequence, int64(g.r.IntN(1000)))
	}
	if g.chance(4) {
		a.PutBool(tncomessage.AttrTruncated, true)
	}
	if g.chance(4) {
		a.PutInt(tncomessage.AttrObservedGeneration, 3)
	}
	for range g.r.IntN(3) {
		g.scalar(a.PutEmpty("tracectx." + strings.ToLower(g.key())))
	}
	if !g.chance(5) {
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 11, 29, 10, 0, 5, g.r.IntN(1e9), time.UTC)))
	}
	if !g.chance(4) {
		lr.SetSeverityText([]string{"INFO", "WARN", "<x>"}[g.r.IntN(3)])
	}
	if !g.chance(4) {
		lr.SetTraceID(pcommon.TraceID{1, 2, 3, byte(g.r.IntN(256))})
		lr.SetSpanID(pcommon.SpanID{9, byte(g.r.IntN(256))})
	}
}

// The collector redacts a record's attributes by the redaction
// processor's own rules: for flattened records of every shape a driver
// sends, the attributes after tnco are those the real redaction processor
// leaves (with the shipped configuration), and the message is built from
// them. In a slice or map value tnco masks more, where the redaction
// processor masks nothing: TestSecretsInAnyAttributeAreRedacted.
func TestRedactionIsTheRedactionProcessors(t *testing.T) {
	cfg := shippedConfig(t)
	all := *cfg
	all.KeepAttributes = []string{"*"}
	p := newProcessor(t, &all)
	build := unredacted(t)
	build.KeepAttributes = []string{"*"}
	plain := newProcessor(t, build)
	stock, err := redactionprocessor.NewFactory().CreateLogs(context.Background(),
		processortest.NewNopSettings(redactionprocessor.NewFactory().Type()), &cfg.Redaction, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	g := gen{r: rand.New(rand.NewPCG(1, 2)), flat: true}
	for i := range 1500 {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", "driver")
		if g.chance(4) {
			rl.Resource().Attributes().PutStr("api_token", "tok")
		}
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(scopeName)
		for range 1 + g.r.IntN(3) {
			g.record(sl.LogRecords().AppendEmpty())
		}
		// The stock processor's attributes, then the message built from
		// them without further redaction.
		want := plog.NewLogs()
		ld.CopyTo(want)
		if err := stock.ConsumeLogs(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		want = run(t, plain, want)
		got := run(t, p, ld)
		if !reflect.DeepEqual(got.ResourceLogs().At(0).Resource().Attributes().AsRaw(),
			want.ResourceLogs().At(0).Resource().Attributes().AsRaw()) {
			t.Fatalf("request %d: resource attributes differ", i)
		}
		gr, wr := got.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords(), want.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for j := range gr.Len() {
			if g, w := message(t, gr.At(j).Body()), message(t, wr.At(j).Body()); !bytes.Equal(g, w) {
				t.Fatalf("request %d, record %d:\n tnco                 %s\n redaction processor %s", i, j, g, w)
			}
			if !reflect.DeepEqual(gr.At(j).Attributes().AsRaw(), wr.At(j).Attributes().AsRaw()) {
				t.Fatalf("request %d, record %d: attributes\n tnco                 %v\n redaction processor %v", i, j,
					gr.At(j).Attributes().AsRaw(), wr.At(j).Attributes().AsRaw())
			}
		}
	}
}

// progressRecord is a progress event with the given attributes, as a
// sender without a body sends it.
func progressRecord(sl plog.ScopeLogs, attrs map[string]any) plog.LogRecord {
	lr := sl.LogRecords().AppendEmpty()
	lr.SetEventName("ansible/TaskStarted")
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 11, 29, 10, 0, 5, 0, time.UTC)))
	lr.Attributes().PutStr(tncomessage.AttrEventType, tncomessage.EventType)
	for k, v := range attrs {
		if err := lr.Attributes().PutEmpty(k).FromRaw(v); err != nil {
			panic(err)
		}
	}
	return lr
}

// A secret reaches no message, whatever attribute holds it and however
// deep: a secret-named key at any depth of a flattened path, a nested map
// or a slice, a private key inside a list's string.
func TestSecretsInAnyAttributeAreRedacted(t *testing.T) {
	p := newProcessor(t, shippedConfig(t))
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"
	progressRecord(sl, map[string]any{
		"progress.tenant":                    "tenant-a",
		"progress.details.args.password":     "hunter2",
		"progress.details.db":                map[string]any{"user": "app", "apiToken": "tok-123", "nested": map[string]any{"secret": 7}},
		"progress.details.lines":             []any{"ok", "key: " + pem, map[string]any{"Cookie": "c-1"}},
		"progress.details.cmd":               "mysql --password=hunter3 -e 1",
		"tracectx.authorization":             "Bearer xyz",
		"progress.details.taskResult.stdout": "done",
	})
	out := run(t, p, ld)
	lr := out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	msg := string(message(t, lr.Body()))
	for _, leak := range []string{"hunter2", "hunter3", "tok-123", "MIIE", "c-1", "xyz", `"secret":7`} {
		if strings.Contains(msg, leak) {
			t.Errorf("%q reached the message: %s", leak, msg)
		}
	}
	for _, kept := range []string{`"user":"app"`, `"stdout":"done"`, `"tenant":"tenant-a"`, `"password":"****"`} {
		if !strings.Contains(msg, kept) {
			t.Errorf("%s is not in the message: %s", kept, msg)
		}
	}
	if got := lr.Attributes().AsRaw(); len(got) != 1 || got["progress.tenant"] != "tenant-a" {
		t.Errorf("attributes kept: %v, want progress.tenant alone (keep_attributes)", got)
	}
}

// Repeated attribute keys, which OTLP allows and the SDKs do not send:
// the message takes the first of an envelope key, as routing/tenant does
// (pcommon.Map.Get), so that the route and the message's tenant agree.
func TestRepeatedAttributeKeys(t *testing.T) {
	p := newProcessor(t, unredacted(t))
	for _, c := range []struct {
		name, repeated, want string
	}{
		{"tenant", `{"key":"progress.tenant","value":{"stringValue":"tenant-b"}}`, `"tenant":"tenant-a"`},
		{"tracectx", `{"key":"tracectx.x","value":{"stringValue":"2"}}`, `"tracectx.x":"1"`},
		{"scope", `{"key":"progress.scope.s","value":{"stringValue":"2"}}`, `"scope":{"s":"1"}`},
		{"detail", `{"key":"progress.details.x","value":{"stringValue":"2"}}`, `"details":{"x":"2"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := `{"resourceLogs":[{"scopeLogs":[{"scope":{"name":"` + scopeName + `"},"logRecords":[{"eventName":"a/B","attributes":[` +
				`{"key":"progress.event_type","value":{"stringValue":"` + tncomessage.EventType + `"}},` +
				`{"key":"progress.tenant","value":{"stringValue":"tenant-a"}},` +
				`{"key":"progress.details.x","value":{"stringValue":"1"}},` +
				`{"key":"tracectx.x","value":{"stringValue":"1"}},` +
				`{"key":"progress.scope.s","value":{"stringValue":"1"}},` + c.repeated + `]}]}]}]}`
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			out := run(t, p, ld)
			lr := out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			msg := string(message(t, lr.Body()))
			if !strings.Contains(msg, c.want) || strings.Count(msg, `"`+strings.SplitN(c.want, `"`, 3)[1]+`"`) != 1 {
				t.Errorf("message %s, want %s once", msg, c.want)
			}
			if v, _ := lr.Attributes().Get(tncomessage.AttrTenant); v.Str() != "tenant-a" {
				t.Errorf("routing reads tenant %q", v.Str())
			}
		})
	}
}

// A message over max_message_bytes is cut, its details emptied, or
// replaced by a report, each step only while it is still too large; each
// is counted, and none is over the limit.
func TestOversizeMessages(t *testing.T) {
	cfg := unredacted(t)
	cfg.MaxMessageBytes = 5000
	p := newProcessor(t, cfg)
	long := strings.Repeat("é", 3000) // 6000 bytes
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	progressRecord(sl, map[string]any{"progress.tenant": "t", "progress.details.small": "x"})
	progressRecord(sl, map[string]any{"progress.tenant": "t", "progress.details.log": long})
	progressRecord(sl, map[string]any{"progress.tenant": "t", "progress.details.log": long, "progress.details.log2": long, "progress.sequence": 4})
	progressRecord(sl, map[string]any{"progress.tenant": "t", "tracectx.big": long, "progress.sequence": 5})
	out := run(t, p, ld)
	lrs := out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if lrs.Len() != 4 {
		t.Fatalf("%d records, want 4", lrs.Len())
	}
	cut := `"details":{"log":"` + strings.Repeat("é", 2048) + tncomessage.TruncatedSuffix + `"}`
	want := []string{`"details":{"small":"x"}`, cut, `"details":{},`, `"progressEventType":"common/EventsDropped"`}
	for i := range lrs.Len() {
		msg := message(t, lrs.At(i).Body())
		if len(msg) > cfg.MaxMessageBytes {
			t.Errorf("record %d: %d bytes, over the limit", i, len(msg))
		}
		if !strings.Contains(string(msg), want[i]) {
			t.Errorf("record %d: %.300s...\nwant %.300s", i, msg, want[i])
		}
		if truncated := strings.Contains(string(msg), `"truncated":true`); truncated != (i == 1 || i == 2) {
			t.Errorf("record %d: truncated %v", i, truncated)
		}
		if !json.Valid(msg) {
			t.Errorf("record %d: not JSON: %.300s", i, msg)
		}
	}
	report := string(message(t, lrs.At(3).Body()))
	for _, part := range []string{`"sequence":5`, `"tenant":"t"`, `"reason":"too_large"`, `"droppedType":"ansible/TaskStarted"`} {
		if !strings.Contains(report, part) {
			t.Errorf("the report has no %s: %s", part, report)
		}
	}
}

// A record that is not a progress record (routing/select sends none such)
// is dropped, not forwarded without a message, and counted.
func TestNotAProgressRecordIsDroppedAndCounted(t *testing.T) {
	p := newProcessor(t, unredacted(t))
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	progressRecord(sl, map[string]any{"progress.tenant": "t"})
	sl.LogRecords().AppendEmpty().Body().SetStr("an ordinary log")
	out := run(t, p, ld)
	if n := out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().Len(); n != 1 {
		t.Errorf("%d records forwarded, want the progress record alone", n)
	}
	if !p.refusedSeen.Load() || p.built.Load() != 1 {
		t.Errorf("refused seen %v, built %d", p.refusedSeen.Load(), p.built.Load())
	}
}

// A redaction configuration the processor does not apply exactly is
// refused when the collector loads it, never half applied.
func TestUnsupportedRedactionIsRefused(t *testing.T) {
	cfg := shippedConfig(t)
	cfg.Redaction.AllowedValues = []string{"x"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "allowed_values") {
		t.Errorf("Validate: %v", err)
	}
}

// A number's or a bool's text is tested only when a blocked value could be
// in it: with the shipped rules none can (and tnco skips the test); with
// rules that can, its text is masked (where the redaction processor,
// without redact_all_types, tests strings only).
func TestNumbersAndBoolsAreTestedWhenARuleCouldMatch(t *testing.T) {
	shipped := newProcessor(t, shippedConfig(t))
	if !shipped.rules.numbersClean || !shipped.rules.boolsClean {
		t.Errorf("shipped rules: numbersClean %v, boolsClean %v; want both", shipped.rules.numbersClean, shipped.rules.boolsClean)
	}
	cfg := shippedConfig(t)
	cfg.KeepAttributes = []string{"*"}
	cfg.Redaction.BlockedValues = []string{"1234", "ru", "5e"}
	p := newProcessor(t, cfg)
	if p.rules.numbersClean || p.rules.boolsClean {
		t.Fatalf("numbersClean %v, boolsClean %v; want neither", p.rules.numbersClean, p.rules.boolsClean)
	}
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	progressRecord(sl, map[string]any{"progress.details.n": 991234, "progress.details.f": 1.5e300,
		"progress.details.t": true, "progress.details.k": 42, "progress.details.no": false})
	got := run(t, p, ld).ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()
	want := map[string]any{"progress.event_type": tncomessage.EventType, "progress.details.n": "99****",
		"progress.details.f": "1.****+300", "progress.details.t": "t****e", "progress.details.k": int64(42), "progress.details.no": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("attributes\n got  %v\n want %v", got, want)
	}
}
