package prettyexporter_test

import (
	"bytes"
	"context"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/testkit/wiretest"
	"github.com/progressotel/progressotel/prettyexporter"
)

func exportOne(t *testing.T, exp sdklog.Exporter, buf *bytes.Buffer, r *sdklog.Record) string {
	t.Helper()
	buf.Reset()
	if err := exp.Export(context.Background(), []sdklog.Record{*r}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestGoldenJSON: the JSON line of every record of the wire corpus.
func TestGoldenJSON(t *testing.T) {
	var buf bytes.Buffer
	exp, _ := prettyexporter.NewJSON(prettyexporter.WithWriter(&buf), prettyexporter.WithoutTime())
	wiretest.Check(t, "json", func(t *testing.T, r *sdklog.Record) string { return exportOne(t, exp, &buf, r) })
}

// TestGoldenPretty: the pretty line of every record of the wire corpus.
func TestGoldenPretty(t *testing.T) {
	var buf bytes.Buffer
	exp, _ := prettyexporter.New(prettyexporter.WithWriter(&buf), prettyexporter.WithoutTime(), prettyexporter.WithColor(prettyexporter.ColorNever))
	wiretest.Check(t, "pretty", func(t *testing.T, r *sdklog.Record) string { return exportOne(t, exp, &buf, r) })
}
