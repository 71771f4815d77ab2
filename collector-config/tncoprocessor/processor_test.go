package tncoprocessor

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// gen makes records of every shape the message has, with the values the
// redaction rules and the encoding care about.
type gen struct{ r *rand.Rand }

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
		// Integers a double holds exactly: the stock path reads the
		// driver's message with ParseJSON (doubles). Larger ones: the
		// corpus's numbers-and-times case in TestGoldenCorpus.
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
	case depth < 3 && g.chance(4):
		g.fill(v.SetEmptyMap(), depth+1)
	case depth < 3 && g.chance(6):
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

// record fills lr as a driver's record and returns its details.
func (g gen) record(lr plog.LogRecord) pcommon.Map {
	a := lr.Attributes()
	details := pcommon.NewMap()
	if g.chance(5) {
		lr.SetEventName("provisioning")
		a.PutStr(attrEventType, transitionEventType)
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
		a.PutStr(attrEventType, eventType)
		g.fill(details, 0)
		for k, v := range details.All() { // some of them flattened, as the library writes them
			if g.chance(2) {
				v.CopyTo(a.PutEmpty("progress.details." + k))
			}
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
		a.PutStr(attrTenant, "tenant-a")
	case 1:
		a.PutStr(attrTenant, g.text())
	case 2:
		a.PutInt(attrTenant, 7)
	}
	if g.chance(2) {
		a.PutInt(attrSequence, int64(g.r.IntN(1000)))
	}
	if g.chance(4) {
		a.PutBool(attrTruncated, true)
	}
	if g.chance(4) {
		a.PutInt(attrGeneration, 3)
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
	return details
}

// tamper changes a driver's message the ways a driver not built on this
// library (or a hostile one) might.
func (g gen) tamper(msg []byte) ([]byte, string) {
	if !g.chance(3) {
		return msg, "as sent"
	}
	s := string(msg)
	switch g.r.IntN(12) {
	case 10:
		return []byte(strings.Replace(s, `"eventType":"`, `"eventType":tru,"x":"`, 1)), "invalid outside the details"
	case 0:
		return []byte(strings.Replace(s, `"tenant":`, `"tenant":"evil","x":`, 1)), "tenant changed"
	case 1:
		return []byte("{ " + s[1:]), "whitespace"
	case 2:
		return []byte(strings.Replace(s, "ok", `\u006fk`, 1)), "escape not canonical"
	case 3:
		return []byte(s[:len(s)-1] + `,"zzz":1}`), "extra member"
	case 4:
		return []byte(s[:len(s)/2]), "cut"
	case 5:
		return []byte(strings.Replace(s, `"details":{`, `"details":{"password":"hunter2",`, 1)), "secret added, maybe out of order"
	case 6:
		return []byte(strings.Replace(s, `"details":{`, `"details":{"  ":"first","pass\u0077ord":"hunter2",`, 1)), "escaped secret key"
	case 7:
		return []byte(strings.Replace(s, `"details":`, `"details":[1],"x":`, 1)), "details not an object"
	case 8:
		return []byte(strings.Replace(s, `"eventType"`, `"details":{},"eventType"`, 1)), "details twice"
	case 9:
		return []byte(strings.Replace(s, `"level":"INFO"`, `"level":"ERROR"`, 1)), "level changed"
	default:
		return []byte(strings.Replace(s, "0.5", "0.50", 1)), "number not canonical"
	}
}

// The fast path gives every record exactly what the stock processors give
// it: the same message bytes, the same attributes, the same resource and
// scope attributes; and it takes the records a driver on this library
// sends.
func TestFastPathMatchesStock(t *testing.T) {
	cfg := shippedConfig(t)
	fast := newProcessor(t, cfg, false)
	stock := newProcessor(t, cfg, true)
	driver := newProcessor(t, unredacted(t), true)
	g := gen{rand.New(rand.NewPCG(1, 2))}
	var sent, asSent int
	for i := range 1500 {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", "driver")
		if g.chance(4) {
			rl.Resource().Attributes().PutStr("api_token", "tok")
		}
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(scopeName)
		var how []string
		for range 1 + g.r.IntN(3) {
			lr := sl.LogRecords().AppendEmpty()
			details := g.record(lr)
			msg, what := g.tamper(driverMessage(t, driver, lr, details))
			switch {
			case g.chance(20):
				what = "map body"
				details.CopyTo(lr.Body().SetEmptyMap().PutEmptyMap("details"))
			case g.chance(20):
				what = "no body"
			default:
				lr.Body().SetEmptyBytes().FromRaw(msg)
			}
			how = append(how, what)
			sent++
			if what == "as sent" {
				asSent++
			}
		}
		got, want := run(t, fast, ld), run(t, stock, ld)
		if !reflect.DeepEqual(got.ResourceLogs().At(0).Resource().Attributes().AsRaw(),
			want.ResourceLogs().At(0).Resource().Attributes().AsRaw()) {
			t.Fatalf("request %d: resource attributes differ", i)
		}
		gr, wr := got.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords(), want.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for j := range gr.Len() {
			g, w := message(t, gr.At(j).Body()), message(t, wr.At(j).Body())
			if !bytes.Equal(g, w) {
				t.Fatalf("request %d, record %d (%s):\n fast  %s\n stock %s", i, j, how[j], g, w)
			}
			if !reflect.DeepEqual(gr.At(j).Attributes().AsRaw(), wr.At(j).Attributes().AsRaw()) {
				t.Fatalf("request %d, record %d (%s): attributes\n fast  %v\n stock %v", i, j, how[j],
					gr.At(j).Attributes().AsRaw(), wr.At(j).Attributes().AsRaw())
			}
		}
	}
	if n := fast.fastRecords.Load(); n < int64(asSent)*9/10 {
		t.Errorf("the fast path took %d of %d records, %d of them as a driver sends them", n, sent, asSent)
	}
	t.Logf("%d records, %d as sent; the fast path took %d", sent, asSent, fast.fastRecords.Load())
}

// A driver's message that is already what the collector writes is
// forwarded as it is: same bytes, no copy of the body.
func TestFastPathForwardsTheDriversMessage(t *testing.T) {
	cfg := shippedConfig(t)
	fast := newProcessor(t, cfg, false)
	driver := newProcessor(t, unredacted(t), true)
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetEventName("ansible/TaskStarted")
	lr.Attributes().PutStr(attrEventType, eventType)
	lr.Attributes().PutStr(attrTenant, "tenant-a")
	lr.Attributes().PutStr("tracectx.transactionid", "tx-1")
	details := pcommon.NewMap()
	details.PutStr("taskName", "install")
	details.PutEmptyMap("args").PutStr("password", "hunter2")
	msg := driverMessage(t, driver, lr, details)
	lr.Body().SetEmptyBytes().FromRaw(msg)
	out := run(t, fast, ld)
	got := message(t, out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
	want := strings.Replace(string(msg), `"hunter2"`, `"****"`, 1)
	if string(got) != want {
		t.Errorf("message\n got %s\nwant %s", got, want)
	}
	if fast.fastRecords.Load() != 1 {
		t.Errorf("the fast path did not take the record")
	}
}

// Whatever bytes a body holds, the fast path either leaves the record to
// the stock processors or gives it exactly what they give it.
func FuzzFastPathMatchesStock(f *testing.F) {
	cfg := shippedConfig(f)
	fast := newProcessor(f, cfg, false)
	stock := newProcessor(f, cfg, true)
	driver := newProcessor(f, unredacted(f), true)
	g := gen{rand.New(rand.NewPCG(3, 4))}
	for range 20 {
		lr := plog.NewLogRecord()
		details := g.record(lr)
		f.Add(driverMessage(f, driver, lr, details), uint64(g.r.Uint32()))
	}
	f.Fuzz(func(t *testing.T, msg []byte, seed uint64) {
		g := gen{rand.New(rand.NewPCG(seed, 5))}
		ld := plog.NewLogs()
		sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
		sl.Scope().SetName(scopeName)
		lr := sl.LogRecords().AppendEmpty()
		g.record(lr)
		lr.Body().SetEmptyBytes().FromRaw(msg)
		got, want := run(t, fast, ld), run(t, stock, ld)
		gm := message(t, got.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
		wm := message(t, want.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
		if !bytes.Equal(gm, wm) {
			t.Fatalf("message\n fast  %s\n stock %s", gm, wm)
		}
	})
}

// Repeated attribute keys, which OTLP allows and the SDKs do not send: a
// repeated detail key is the fast path's (the details come from the
// message); a repeated envelope key is the stock path's, and either way
// the result is the stock processors'.
func TestRepeatedAttributeKeys(t *testing.T) {
	cfg := shippedConfig(t)
	fast := newProcessor(t, cfg, false)
	stock := newProcessor(t, cfg, true)
	driver := newProcessor(t, unredacted(t), true)
	for _, c := range []struct {
		name     string
		repeated string
		fast     bool
	}{
		{"detail", `{"key":"progress.details.x","value":{"stringValue":"2"}}`, true},
		{"tenant", `{"key":"progress.tenant","value":{"stringValue":"tenant-b"}}`, false},
		{"tracectx", `{"key":"tracectx.x","value":{"stringValue":"2"}}`, false},
		{"scope", `{"key":"progress.scope.s","value":{"stringValue":"2"}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := `{"resourceLogs":[{"scopeLogs":[{"scope":{"name":"` + scopeName + `"},"logRecords":[{"eventName":"a/B","attributes":[` +
				`{"key":"progress.event_type","value":{"stringValue":"` + eventType + `"}},` +
				`{"key":"progress.tenant","value":{"stringValue":"tenant-a"}},` +
				`{"key":"progress.details.x","value":{"stringValue":"1"}},` +
				`{"key":"tracectx.x","value":{"stringValue":"1"}},` +
				`{"key":"progress.scope.s","value":{"stringValue":"1"}},` + c.repeated + `]}]}]}]}`
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			details := pcommon.NewMap()
			details.PutStr("x", "1")
			lr.Body().SetEmptyBytes().FromRaw(driverMessage(t, driver, lr, details))
			before := fast.fastRecords.Load()
			got, want := run(t, fast, ld), run(t, stock, ld)
			gm := message(t, got.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
			wm := message(t, want.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
			if !bytes.Equal(gm, wm) {
				t.Errorf("message\n fast  %s\n stock %s", gm, wm)
			}
			if took := fast.fastRecords.Load() > before; took != c.fast {
				t.Errorf("fast path took it: %v, want %v", took, c.fast)
			}
		})
	}
}
