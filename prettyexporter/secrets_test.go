package prettyexporter_test

import (
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// TestSecretsNeverPrinted runs secrets through the real pipeline in every
// place details can hold them: a secret key at the top, a secret key in a
// nested map, a map inside a slice, and a PEM private key as a plain
// value and as a slice element. Neither format prints any of them.
func TestSecretsNeverPrinted(t *testing.T) {
	const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA75secret\n-----END RSA PRIVATE KEY-----"
	secrets := []string{"hunter2", "s3cr3t-token", "nested-pass", "in-slice-key", "MIIEpAIBAAKCAQEA75secret"}
	details := map[string]any{
		"password": "hunter2",
		"args":     map[string]any{"name": "db", "api_token": "s3cr3t-token", "login": map[string]any{"Passwd": "nested-pass"}},
		"items":    []any{map[string]any{"secret": "in-slice-key"}, pem},
		"cert":     pem,
	}
	for name, mk := range exporters() {
		t.Run(name, func(t *testing.T) {
			var buf testutil.SyncBuffer
			h := newHarness(t, mk(&buf))
			ctx, _ := h.span(t)
			if err := h.rec.Record(ctx, progress.Event{Type: "ansible/TaskStarted", Details: details}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.Contains(out, wire.Redacted) || !strings.Contains(out, "db") {
				t.Fatalf("expected the redaction marker and the plain values in %s", out)
			}
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret %q printed: %s", s, out)
				}
			}
		})
	}
}
