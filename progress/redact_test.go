package progress_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/internal/redact"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

const redPEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7redtest\n-----END RSA PRIVATE KEY-----\n"

func redRecord(t *testing.T, details any, opts ...progress.Option) (map[string]any, string) {
	t.Helper()
	sink := progresstest.NewSink()
	if err := sink.Recorder(opts...).Record(context.Background(), progress.Event{Type: "test/Redact", Details: details}); err != nil {
		t.Fatal(err)
	}
	evs := sink.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	// Every attribute of every record, printed: a secret must be in none.
	var all strings.Builder
	for _, r := range sink.Records() {
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			fmt.Fprintf(&all, "%s=%s\n", kv.Key, kv.Value.String())
			return true
		})
	}
	return evs[0].Details, all.String()
}

func TestDefaultSecretKeys(t *testing.T) {
	secret := []string{
		"password", "PASSWORD", "db_password", "Passwd", "passphrase", "client_secret", "Client-Secret",
		"secret", "token", "accessToken", "refresh.token", "api_key", "API Key", "apiKey", "x-api-key",
		"private_key", "privateKey", "Private Key", "Authorization", "proxy-authorization", "credentials",
		"aws_access_key_id", "Cookie", "session_key", "no_log",
	}
	plain := []string{"user", "hostName", "author", "monkey", "args", "taskName", "state", "keyring"}
	red := progress.DefaultRedactor()
	for _, k := range secret {
		if !red.SecretKey(k) {
			t.Errorf("SecretKey(%q) = false, want true", k)
		}
	}
	for _, k := range plain {
		if red.SecretKey(k) {
			t.Errorf("SecretKey(%q) = true, want false", k)
		}
	}

	// Through Record: every secret key on every level, in every container.
	d := map[string]any{}
	for i, k := range secret {
		d[k] = fmt.Sprint("v", i)
	}
	for _, k := range plain {
		d[k] = "visible"
	}
	got, _ := redRecord(t, d)
	for _, k := range secret {
		if got[k] != wire.Redacted {
			t.Errorf("details[%q] = %v, want %s", k, got[k], wire.Redacted)
		}
	}
	for _, k := range plain {
		if got[k] != "visible" {
			t.Errorf("details[%q] = %v, want it untouched", k, got[k])
		}
	}
}

type redInner struct {
	Name   string `json:"name"`
	APIKey string `json:"apiKey"`
}

type redOuter struct {
	Inner  redInner            `json:"inner"`
	List   []redInner          `json:"list"`
	Map    map[string]redInner `json:"map"`
	Secret string              // untagged: key "Secret"
	Note   string              `json:"note"`
}

func TestSecretsAnywhereInTheTree(t *testing.T) {
	const s = "hunter2-anywhere"
	details := map[string]any{
		"a":       map[string]any{"b": map[string]any{"Password": s, "ok": "yes"}},
		"slice":   []any{map[string]any{"token": s}, []any{map[string]any{"deep": map[string]any{"Secret": s}}}},
		"strings": map[string]string{"authorization": "Bearer " + s},
		"struct":  redOuter{Inner: redInner{"n", s}, List: []redInner{{"m", s}}, Map: map[string]redInner{"k": {"o", s}}, Secret: s, Note: "fine"},
		"ptr":     &redInner{"p", s},
		// A secret key hides its whole subtree, whatever is inside.
		"credentials": map[string]any{"user": "u", "pass": s},
	}
	got, all := redRecord(t, details)
	if strings.Contains(all, s) {
		t.Fatalf("secret survived: %s", all)
	}
	if got["credentials"] != wire.Redacted {
		t.Errorf("credentials = %v, want the whole subtree redacted", got["credentials"])
	}
	if got["a"].(map[string]any)["b"].(map[string]any)["ok"] != "yes" || got["struct"].(map[string]any)["note"] != "fine" {
		t.Errorf("non-secret siblings changed: %s", all)
	}
	if n := strings.Count(all, wire.Redacted); n < 9 {
		t.Errorf("%d redaction markers, want at least 9: %s", n, all)
	}
}

func TestPEMPrivateKeyValues(t *testing.T) {
	red := progress.DefaultRedactor()
	for _, v := range []string{
		redPEM,
		"-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----",
		"-----BEGIN EC PRIVATE KEY-----abc",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----",
		"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMII\n",
		"config:\n  key: |\n    " + redPEM,         // embedded in other text
		"-----BEGIN RSA PRIVATE KEY\nMIIEow (cut)", // a cut header still leaks
	} {
		if !red.SecretValue(v) || red.Value(v) != wire.Redacted {
			t.Errorf("SecretValue(%q) = false", v)
		}
	}
	for _, v := range []string{
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
		"private key rotation scheduled", "",
	} {
		if red.SecretValue(v) {
			t.Errorf("SecretValue(%q) = true, want false", v)
		}
	}

	got, all := redRecord(t, map[string]any{
		"cert":  redPEM,
		"list":  []string{"ok", redPEM},
		"items": []any{map[string]any{"blob": redPEM}},
	})
	if strings.Contains(all, "MIIEow") {
		t.Fatalf("PEM key survived: %s", all)
	}
	if got["cert"] != wire.Redacted || got["list"].([]any)[0] != "ok" {
		t.Errorf("got %s", all)
	}

	// Transition messages pass the same value check.
	sink := progresstest.NewSink()
	if err := sink.Recorder().RecordTransition(context.Background(), progress.Transition{
		Stream: progress.StreamProvisioning, Condition: progress.Condition{Status: "False", Reason: "Errored", Message: redPEM},
	}); err != nil {
		t.Fatal(err)
	}
	if m := sink.Events()[0].Transition.Message; m != wire.Redacted {
		t.Errorf("transition message = %q", m)
	}
}

func TestRedactionOptions(t *testing.T) {
	d := map[string]any{"password": "p1", "buildId": "b1", "cert": redPEM}

	got, _ := redRecord(t, d, progress.WithSecretKeys("build_id"))
	if got["password"] != wire.Redacted || got["buildId"] != wire.Redacted {
		t.Errorf("WithSecretKeys must extend the defaults: %v", got)
	}

	got, _ = redRecord(t, d, progress.WithRedactor(progress.NewRedactor("buildid")))
	if got["password"] != "p1" || got["buildId"] != wire.Redacted || got["cert"] != wire.Redacted {
		t.Errorf("WithRedactor must replace the key list (PEM check kept): %v", got)
	}

	got, _ = redRecord(t, d, progress.WithRedactor(nil))
	if got["password"] != wire.Redacted {
		t.Errorf("WithRedactor(nil) must keep the default: %v", got)
	}

	got, _ = redRecord(t, d, progress.WithoutRedaction())
	if got["password"] != "p1" || got["cert"] != redPEM {
		t.Errorf("WithoutRedaction must turn redaction off: %v", got)
	}

	// Flatten, the public encoder, redacts by default too.
	attrs, _ := progresstest.Flatten(d)
	for _, kv := range attrs {
		if strings.HasSuffix(string(kv.Key), "password") && kv.Value.AsString() != wire.Redacted {
			t.Errorf("Flatten left %s = %v", kv.Key, kv.Value.String())
		}
	}
}

// TestRedactionBeforeTheCut: a string longer than MaxStringLen is
// redacted before it is cut, so that a secret that straddles the cut
// leaves none of its first bytes; the cut string is still marked.
func TestRedactionBeforeTheCut(t *testing.T) {
	const pw = "StraddlingPassword0123456789abcdefghijklmnopqrstuvwxyz"
	for name, text := range map[string]string{
		"URL password": strings.Repeat("x", 40) + " https://deploy:" + pw + "@git.example.com/x.git",
		"key=value":    strings.Repeat("x", 50) + " password=" + pw,
		"long tail":    strings.Repeat("x", 50) + " password=" + pw + strings.Repeat(" tail", 1000),
	} {
		got, _ := redRecord(t, map[string]any{"msg": text}, progress.WithLimits(progress.Limits{MaxStringLen: 64}))
		msg, _ := got["msg"].(string)
		if strings.Contains(msg, pw[:4]) {
			t.Errorf("%s: the secret's first bytes are before the cut: %q", name, msg)
		}
		if !strings.HasSuffix(msg, wire.TruncatedSuffix) || len(msg) > 64+len(wire.TruncatedSuffix) {
			t.Errorf("%s: not cut at the limit: %q", name, msg)
		}
	}
}

// TestRedactionLeavesNoDebris: a redaction ends where the secret's value
// ends, and what names a secret without holding it stays readable.
func TestRedactionLeavesNoDebris(t *testing.T) {
	r := progress.DefaultRedactor()
	for in, want := range map[string]string{
		`"password={{ db_password }}"`:                   `"password={{ db_password }}"`,
		`password=hunter2 db_password={{ vault_db }}`:    `password=[REDACTED] db_password={{ vault_db }}`,
		`token=${API_TOKEN} next`:                        `token=${API_TOKEN} next`,
		`{"password":"ab\"cd","user":"u"}`:               `{"password":"[REDACTED]","user":"u"}`,
		"  password: |\n    line1\n    line2\n  user: u": "  password: |\n    [REDACTED]\n  user: u",
		"db_password = (sensitive value)":                "db_password = (sensitive value)",
		"curl -u deploy:pw-1234 https://x":               "curl -u deploy:[REDACTED] https://x",
	} {
		if got := r.Value(in); got != want {
			t.Errorf("Value(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestDefaultSecretKeysAreTheTables: the collector's rules are generated
// from the list DefaultSecretKeys returns (redact.Table), and a caller
// that changes the slice it got changes neither the list nor the default
// redaction.
func TestDefaultSecretKeysAreTheTables(t *testing.T) {
	keys := progress.DefaultSecretKeys()
	if !slices.Equal(keys, redact.DefaultKeys) {
		t.Errorf("progress.DefaultSecretKeys() %q, redact.DefaultKeys %q", keys, redact.DefaultKeys)
	}
	for i := range keys {
		keys[i] = "x"
	}
	if got := progress.DefaultSecretKeys(); got[0] != "password" || !progress.DefaultRedactor().SecretKey("password") {
		t.Errorf("after changing a returned slice: DefaultSecretKeys() %q", got)
	}
}
