package tncoprocessor

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"gopkg.in/yaml.v3"

	"github.com/progressotel/progressotel/tncomessage"
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

// newProcessor builds a tnco processor with cfg.
func newProcessor(t testing.TB, cfg *Config) *tnco {
	t.Helper()
	p, err := newTNCO(processortest.NewNopSettings(Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
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

// unredacted is the shipped configuration without redaction rules.
func unredacted(t testing.TB) *Config {
	cfg := shippedConfig(t)
	cfg.Redaction.BlockedKeyPatterns = nil
	cfg.Redaction.BlockedValues = nil
	return cfg
}

// scopeName is the instrumentation scope of progress records.
const scopeName = tncomessage.ScopeName
