package tncoprocessor

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"gopkg.in/yaml.v3"
)

var envRef = regexp.MustCompile(`\$\{env:[A-Z0-9_]+(?::-([^}]*))?\}`)

// shippedConfig is the tnco section of collector-config/progress.yaml,
// with every ${env:...} at its default.
func shippedConfig(t testing.TB) *Config {
	t.Helper()
	raw, err := os.ReadFile("../progress.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := envRef.ReplaceAllString(string(raw), "$1")
	var doc struct {
		Processors map[string]any `yaml:"processors"`
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	section, ok := doc.Processors["tnco"].(map[string]any)
	if !ok {
		t.Fatal("progress.yaml has no processors.tnco")
	}
	cfg := createDefaultConfig().(*Config)
	if err := confmap.NewFromStringMap(section).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newProcessor builds a started tnco processor with cfg; stockOnly turns
// the fast path off, so that every record takes the stock processors.
func newProcessor(t testing.TB, cfg *Config, stockOnly bool) *tnco {
	t.Helper()
	set := processortest.NewNopSettings(Type)
	p, err := newTNCO(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if stockOnly {
		p.rules = nil
	}
	if err := p.start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.shutdown(context.Background()) })
	return p
}

// run processes a copy of ld and returns it.
func run(t testing.TB, p *tnco, ld plog.Logs) plog.Logs {
	t.Helper()
	in := plog.NewLogs()
	ld.CopyTo(in)
	out, err := p.processLogs(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// message is a record's body as the kafka exporter's raw encoding writes
// it.
func message(t testing.TB, body pcommon.Value) []byte {
	t.Helper()
	switch body.Type() {
	case pcommon.ValueTypeBytes:
		return body.Bytes().AsRaw()
	case pcommon.ValueTypeMap:
		b, err := json.Marshal(body.Map().AsRaw())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b, err := json.Marshal(body.AsRaw())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unredacted is the shipped configuration without redaction rules: its
// stock path writes the message a driver builds (wire.AppendMessage).
func unredacted(t testing.TB) *Config {
	cfg := shippedConfig(t)
	cfg.Redaction.BlockedKeyPatterns = nil
	cfg.Redaction.BlockedValues = nil
	return cfg
}

// driverMessage is the message a driver on this library sends for r: the
// stock statements' message from a body that holds the details as JSON,
// unredacted.
func driverMessage(t testing.TB, gen *tnco, r plog.LogRecord, details pcommon.Map) []byte {
	t.Helper()
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	lr.Scope().SetName(scopeName)
	rec := lr.LogRecords().AppendEmpty()
	r.CopyTo(rec)
	b, err := json.Marshal(map[string]any{"details": details.AsRaw()})
	if err != nil {
		t.Fatal(err)
	}
	rec.Body().SetEmptyBytes().FromRaw(b)
	out := run(t, gen, ld)
	return message(t, out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body())
}
