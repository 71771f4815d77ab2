package prettyexporter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/log/logtest"

	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// fuzzRecords builds, from arbitrary strings, one record of each kind the
// exporters lay out differently: a progress event, a condition transition
// and an ordinary log, with the strings in every place a record can carry
// text (event name, body, keys, values, nested maps and slices).
func fuzzRecords(key, value, body, name string, n int64) []sdklog.Record {
	nested := attribute.MapValue(attribute.String(key, value), attribute.Int64("n", n))
	list := attribute.SliceValue(attribute.StringValue(value), nested, attribute.StringSliceValue([]string{key, value}))
	return []sdklog.Record{
		logtest.RecordFactory{EventName: name, Severity: log.Severity(n & 31), Attributes: []attribute.KeyValue{
			attribute.String(wire.AttrEventType, wire.EventType),
			attribute.String(wire.AttrResourceType, key),
			attribute.String(wire.AttrResourceID, value),
			attribute.String(wire.AttrResourceNamespace, value),
			attribute.String(wire.ScopePrefix+key, value),
			attribute.String(wire.DetailsPrefix+key, value),
			attribute.String(wire.DetailsPrefix+key+"."+value, body),
			{Key: attribute.Key(wire.DetailsPrefix + "list"), Value: list},
			{Key: attribute.Key(wire.DetailsPrefix + "map"), Value: nested},
			attribute.String(wire.TraceCtxPrefix+"transactionid", value),
			attribute.String(wire.TraceCtxPrefix+key, value),
			attribute.String(key, value),
		}}.NewRecord(),
		logtest.RecordFactory{EventName: name, Attributes: []attribute.KeyValue{
			attribute.String(wire.AttrEventType, wire.TransitionEventType),
			attribute.String("progress."+name+".status", value),
			attribute.String("progress."+name+".reason", key),
			attribute.String("progress."+name+".message", body),
			attribute.String("progress."+name+".previous.status", body),
			attribute.String(wire.AttrResourceID, key),
		}}.NewRecord(),
		logtest.RecordFactory{EventName: name, Body: attribute.StringValue(body), Attributes: []attribute.KeyValue{
			attribute.String(key, value),
			{Key: attribute.Key(key), Value: nested},
			{Key: "list", Value: list},
		}}.NewRecord(),
		logtest.RecordFactory{Body: nested}.NewRecord(),
	}
}

func fuzzSeeds(f *testing.F) {
	f.Add("taskName", "Install nginx", "hello", "ansible/TaskStarted", int64(9))
	f.Add("", "", "", "", int64(0))
	f.Add("k\x1b[31m", "v\x1b]0;t\x07", "line\nINF forged", "x/\x9bY", int64(17))
	f.Add("a.b%2E", "\u202e\xff\x7f", "\r", "provisioning", int64(-1))
	f.Add("key=val", `"quoted" \ back`, "tab\there", "name with space", int64(13))
}

// FuzzPretty proves that the pretty writer never emits a raw control
// character or escape sequence from a record: with colour off the output
// has no byte below 0x20 but the newline ending each line, and no DEL;
// with colour on it has in addition only the exporter's own SGR codes.
func FuzzPretty(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, key, value, body, name string, n int64) {
		recs := fuzzRecords(key, value, body, name, n)
		for _, color := range []prettyexporter.ColorMode{prettyexporter.ColorNever, prettyexporter.ColorAlways} {
			var buf bytes.Buffer
			exp, err := prettyexporter.New(prettyexporter.WithWriter(&buf), prettyexporter.WithColor(color))
			if err != nil {
				t.Fatal(err)
			}
			if color == prettyexporter.ColorAlways && !exp.Colored() {
				t.Skip("NO_COLOR is set in the environment")
			}
			if err := exp.Export(context.Background(), recs); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if got := strings.Count(out, "\n"); got != len(recs) || !strings.HasSuffix(out, "\n") {
				t.Fatalf("colour %v: %d lines for %d records: %q", color, got, len(recs), out)
			}
			if err := checkSafe(out, color == prettyexporter.ColorAlways); err != nil {
				t.Fatalf("colour %v: %v in %q", color, err, out)
			}
			if !utf8.ValidString(out) {
				t.Fatalf("colour %v: invalid UTF-8 in %q", color, out)
			}
		}
	})
}

// FuzzJSON proves that every JSON line is valid, one per record, with no
// raw control character or other non-printable rune, and that the details of a record built by
// progresstest.Flatten come out nested exactly as wire.Decode reads them.
func FuzzJSON(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, key, value, body, name string, n int64) {
		var buf bytes.Buffer
		exp, _ := prettyexporter.NewJSON(prettyexporter.WithWriter(&buf))
		recs := fuzzRecords(key, value, body, name, n)

		details := map[string]any{key: map[string]any{value: n, body: []any{key, map[string]any{name: value}}}, name: body}
		attrs, _ := progresstest.Flatten(details)
		attrs = append(attrs, attribute.String(wire.AttrEventType, wire.EventType))
		flat := logtest.RecordFactory{EventName: "fuzz/Event", Attributes: attrs}.NewRecord()
		recs = append(recs, flat)

		if err := exp.Export(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		ls := lines(out)
		if len(ls) != len(recs) {
			t.Fatalf("%d lines for %d records: %q", len(ls), len(recs), out)
		}
		for _, l := range ls {
			if !json.Valid([]byte(l)) {
				t.Fatalf("invalid JSON: %q", l)
			}
			// Two keys that differ only in invalid UTF-8 both become
			// U+FFFD, as in encoding/json: JSON cannot tell them apart.
			allValid := utf8.ValidString(key) && utf8.ValidString(value) && utf8.ValidString(body) && utf8.ValidString(name)
			if err := uniqueKeys(l); err != nil && allValid {
				t.Fatalf("%v in %q", err, l)
			}
		}
		if err := checkSafe(out, false); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		for _, r := range out { // bidi overrides and zero-width runes too, as in pretty
			if r != '\n' && !strconv.IsPrint(r) {
				t.Fatalf("non-printable %U raw in %q", r, out)
			}
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(ls[len(ls)-1]), &got); err != nil {
			t.Fatal(err)
		}
		d, err := wire.Decode(&flat)
		if err != nil {
			t.Fatal(err)
		}
		if want := jsonNormal(t, d.Details); !reflect.DeepEqual(got["details"], want) {
			t.Fatalf("details\n got %#v\nwant %#v", got["details"], want)
		}
	})
}
