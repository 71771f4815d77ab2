package progress

import (
	"slices"

	"github.com/progressotel/progressotel/progress/internal/redact"
	"github.com/progressotel/progressotel/tncomessage"
)

// DefaultSecretKeys returns the key fragments redacted by default, a new
// slice on each call (the defaults themselves cannot change). A detail key
// is secret when any segment of its path, lower-cased with '_', '-', '.' and
// ' ' removed, contains one of them.
//
// A key that ends in the word "pass" or "pwd" (DB_PASS, MYSQL_PWD) is
// secret too, and one whose fragment is followed by a word that names a
// fact about the secret (secret_name, token_file, password_path,
// secretKeyRef) is not.
func DefaultSecretKeys() []string { return slices.Clone(redact.DefaultKeys) }

// Redactor decides which details never leave the process. The zero value
// redacts nothing; use NewRedactor or DefaultRedactor. A Redactor is
// immutable and safe for concurrent use. Record applies it to every string
// value of an event (details at any depth, a transition's status, reason
// and message), so adapters and drivers need no redaction of their own.
// It redacts:
//   - the value, whole subtree included, of every key (at any depth, also
//     in maps inside slices) whose name contains a secret fragment;
//   - every string or []byte value (before a []byte is base64-encoded)
//     that holds private-key material anywhere: a PEM or PGP armor header
//     naming a private key, also after other blocks or cut short; a PuTTY
//     key file; the base64 encoding of such a PEM text;
//   - in a slice of strings (a key file's lines, Ansible's stdout_lines),
//     every line from a private key's header to its end line;
//   - in every other string, only the secrets free text shows by their
//     shape: the value of "key=value", "key: value", "key is value" and
//     JSON pairs whose key (or label of up to three words) is secret by
//     the same fragments, to the value's end (past escaped quotes, over a
//     YAML block scalar); secret-named flags' values and the password
//     flags of mysql, curl, sshpass, htpasswd and openssl; .netrc
//     entries; a URL's password; the credentials after "Bearer" and
//     "Basic"; JSON Web Tokens; tokens with a well-known prefix (GitHub,
//     GitLab, Slack, AWS access key ids, Google, Stripe, npm, PyPI, Docker
//     Hub, Hugging Face, Shopify, SendGrid, Vault and others). Templates,
//     variables and placeholders that only name a secret are kept.
//
// docs/reliability.md lists what is found and what is not. The scan of a
// string is linear in its length.
type Redactor struct {
	rules redact.Rules
}

// NewRedactor returns a Redactor for the given key fragments that also
// redacts private-key material in values and the secrets free text shows
// by their shape (pairs whose key holds a fragment, URL passwords,
// credentials, tokens). Fragments are matched case-insensitively,
// ignoring '_', '-', '.' and ' '.
func NewRedactor(keys ...string) *Redactor {
	return &Redactor{rules: redact.New(true, keys...)}
}

// DefaultRedactor redacts DefaultSecretKeys, private-key material and the
// secrets of free text (see Redactor).
func DefaultRedactor() *Redactor { return NewRedactor(redact.DefaultKeys...) }

// With returns a copy of r that also redacts the given key fragments.
func (r *Redactor) With(keys ...string) *Redactor {
	if r == nil {
		return NewRedactor(keys...)
	}
	return &Redactor{rules: r.rules.With(keys...)}
}

// SecretKey reports whether a key (one path segment) names a secret.
func (r *Redactor) SecretKey(key string) bool {
	return r != nil && r.rules.SecretKey(key)
}

// SecretValue reports whether a string value holds private-key material.
func (r *Redactor) SecretValue(v string) bool {
	return r != nil && r.rules.SecretValue(v)
}

// Value returns v with its secrets replaced by the redaction marker
// "[REDACTED]": the whole of v when it holds private-key material, else
// each secret its shape shows (see Redactor). It is what Record does to
// every string value of an event.
func (r *Redactor) Value(v string) string { return r.redact(v, r != nil && r.rules.SecretValue(v)) }

// Line is Value for one line of a sequence (a provisioner's output, one
// line per event): in carries "inside a private key" from one line to the
// next, so that every line from a key's header to its end line is
// redacted whole.
func (r *Redactor) Line(in *bool, v string) string {
	return r.redact(v, r != nil && r.rules.SecretLine(in, v))
}

// redact returns v whole when secret, else with the secrets its shape shows
// replaced.
func (r *Redactor) redact(v string, secret bool) string {
	switch {
	case r == nil:
		return v
	case secret:
		return tncomessage.Redacted
	}
	out, _ := r.rules.Shapes(v)
	return out
}
