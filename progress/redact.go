package progress

import (
	"strings"
)

// DefaultSecretKeys are the key fragments redacted by default. A detail key
// is secret when any segment of its path, lower-cased with '_', '-', '.' and
// ' ' removed, contains one of them.
var DefaultSecretKeys = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"privatekey", "authorization", "credential", "accesskey", "cookie",
	"clientsecret", "sessionkey", "nolog",
}

// Redactor decides which details never leave the process. The zero value
// redacts nothing; use NewRedactor for the defaults. A Redactor is immutable
// and safe for concurrent use.
type Redactor struct {
	keys []string // normalised fragments
	pem  bool
}

// NewRedactor returns a Redactor for the given key fragments that also
// replaces PEM private keys found in string values. Fragments are matched
// case-insensitively, ignoring '_', '-', '.' and ' '.
func NewRedactor(keys ...string) *Redactor {
	r := &Redactor{pem: true}
	for _, k := range keys {
		if n := normaliseKey(k); n != "" {
			r.keys = append(r.keys, n)
		}
	}
	return r
}

// DefaultRedactor redacts DefaultSecretKeys and PEM private keys.
func DefaultRedactor() *Redactor { return NewRedactor(DefaultSecretKeys...) }

// With returns a copy of r that also redacts the given key fragments.
func (r *Redactor) With(keys ...string) *Redactor {
	if r == nil {
		return NewRedactor(keys...)
	}
	out := &Redactor{pem: r.pem, keys: append([]string(nil), r.keys...)}
	for _, k := range keys {
		if n := normaliseKey(k); n != "" {
			out.keys = append(out.keys, n)
		}
	}
	return out
}

// SecretKey reports whether a key (one path segment) names a secret.
func (r *Redactor) SecretKey(key string) bool {
	if r == nil || len(r.keys) == 0 {
		return false
	}
	n := normaliseKey(key)
	for _, k := range r.keys {
		if strings.Contains(n, k) {
			return true
		}
	}
	return false
}

// SecretValue reports whether a string value is secret by its shape: a PEM
// private key ("-----BEGIN ... PRIVATE KEY-----").
func (r *Redactor) SecretValue(v string) bool {
	return r != nil && r.pem && len(v) >= 27 && looksLikePEMPrivateKey(v)
}

// Value returns Redacted when v is secret by its shape, else v.
func (r *Redactor) Value(v string) string {
	if r.SecretValue(v) {
		return Redacted
	}
	return v
}

func looksLikePEMPrivateKey(v string) bool {
	i := strings.Index(v, "-----BEGIN ")
	if i < 0 {
		return false
	}
	rest := v[i+len("-----BEGIN "):]
	end := strings.Index(rest, "-----")
	if end < 0 {
		// A truncated key still leaks: treat a dangling header as secret
		// when it names a private key.
		return strings.Contains(rest, "PRIVATE KEY")
	}
	return strings.HasSuffix(rest[:end], "PRIVATE KEY")
}

func normaliseKey(k string) string {
	clean := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.' || c == ' ' {
			clean = false
			break
		}
	}
	if clean {
		return k
	}
	var b strings.Builder
	b.Grow(len(k))
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c == '_' || c == '-' || c == '.' || c == ' ':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
