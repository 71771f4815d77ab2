package cli

import (
	"slices"
	"testing"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
)

// TestNestedExporters: inside a run, the live view inherited from the
// enclosing run is left out and every other exporter stays; outside a
// run, or with --output, the exporters are as configured.
func TestNestedExporters(t *testing.T) {
	for _, c := range []struct {
		socket, env, output string
		want                []string // nil: unchanged
	}{
		{socket: "/run/po.sock", env: "live", want: []string{"none"}},
		{socket: "/run/po.sock", env: " Live , otlp", want: []string{"otlp"}},
		{socket: "/run/po.sock", env: "otlp,live,json", want: []string{"otlp", "json"}},
		{socket: "/run/po.sock", env: "ci,otlp", want: []string{"otlp"}},
		{socket: "/run/po.sock", env: "pretty"},
		{socket: "/run/po.sock", env: ""},
		{socket: "/run/po.sock", env: "live", output: "/tmp/po.log"},
		{env: "live"},
	} {
		t.Setenv(handoff.EnvSocket, c.socket)
		t.Setenv("OTEL_LOGS_EXPORTER", c.env)
		got, ok := nestedExporters(&commonOptions{output: c.output})
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("socket %q, OTEL_LOGS_EXPORTER=%q, --output %q: %q, %v; want %q", c.socket, c.env, c.output, got, ok, c.want)
		}
	}
}

// TestSingleEventExporters: an emit outside a run shows its one event as a
// pretty line where a tree's drawing (live, ci) was asked for, and keeps
// every other exporter.
func TestSingleEventExporters(t *testing.T) {
	for _, c := range []struct {
		env  string
		want []string
		ok   bool
	}{
		{env: "live", want: []string{"pretty"}, ok: true},
		{env: "CI,otlp", want: []string{"pretty", "otlp"}, ok: true},
		{env: "live,pretty", want: []string{"pretty"}, ok: true},
		{env: "otlp", want: []string{"otlp"}},
		{env: ""},
	} {
		t.Setenv("OTEL_LOGS_EXPORTER", c.env)
		got, ok := singleEventExporters()
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("OTEL_LOGS_EXPORTER=%q: %q, %v; want %q, %v", c.env, got, ok, c.want, c.ok)
		}
	}
}
