// Package redact decides which details never leave the process: values
// under secret-sounding keys, and private-key material wherever it sits in
// a value. progress.Redactor is its public face; the encoder calls it for
// every key and every string or byte value it writes.
package redact

import (
	"encoding/base64"
	"strings"
	"unsafe"
)

// Rules are the redaction rules: normalised key fragments, and whether
// values are searched for private keys. The zero Rules redact nothing.
// Rules are immutable once built.
type Rules struct {
	keys        []string
	byFirst     *[256][]string // keys by their first byte
	minKey      int            // the shortest fragment: a shorter key holds none
	ends        *[256][]string // the words a label of several words can end with, by first byte
	keyMaterial bool
}

// New returns Rules for the key fragments; keyMaterial turns on the search
// for private keys in values.
func New(keyMaterial bool, fragments ...string) Rules {
	r := Rules{keyMaterial: keyMaterial}
	return r.With(fragments...)
}

// With returns a copy of r that also redacts the key fragments.
func (r Rules) With(fragments ...string) Rules {
	out := Rules{keyMaterial: r.keyMaterial, keys: append([]string(nil), r.keys...)}
	for _, k := range fragments {
		if n := normaliseKey(k); n != "" {
			out.keys = append(out.keys, n)
		}
	}
	out.byFirst = new([256][]string)
	out.ends = new([256][]string)
	for _, w := range [...]string{"pass", "pwd"} {
		out.ends[w[0]] = append(out.ends[w[0]], w)
	}
	for i, k := range out.keys {
		if i == 0 || len(k) < out.minKey {
			out.minKey = len(k)
		}
		out.byFirst[k[0]] = append(out.byFirst[k[0]], k)
		for j := 1; j+2 <= len(k); j++ {
			out.ends[k[j]] = append(out.ends[k[j]], k[j:])
		}
	}
	return out
}

// LabelEnd reports whether word can end a label of several words that
// names a secret: it is the end of a fragment ("Key" of "API Key"), or
// pass or pwd. The scan asks it of every word before a separator whose
// key is not secret, before it reads the words before it.
func (r *Rules) LabelEnd(word string) bool {
	if r.ends == nil || len(word) < 2 || len(word) > 32 {
		return false
	}
	var buf [32]byte
	n := normaliseInto(buf[:0], word)
	if n == "" {
		return false
	}
	for _, e := range r.ends[n[0]] {
		if e == n {
			return true
		}
	}
	return false
}

// Active reports whether r redacts anything.
func (r *Rules) Active() bool { return r.keyMaterial || len(r.keys) > 0 }

// SecretKey reports whether a key (one path segment) names a secret: its
// lower-cased form without '_', '-', '.' and ' ' contains a fragment that
// is not followed by a word that makes the key name something about the
// secret rather than the secret (secret_name, token_file, passwordPath:
// see describes); or, when r has fragments, it ends in a word "pass" or
// "pwd" (DB_PASS, MYSQL_PWD, dbPass). It allocates nothing for keys of up
// to 128 bytes.
func (r *Rules) SecretKey(key string) bool {
	if len(r.keys) == 0 {
		return false
	}
	if len(key) >= r.minKey && r.fragmentIn(key, false) {
		return true
	}
	return passWord(key)
}

// SecretLabel reports whether a label of several words ("API Key",
// "Client Secret", "db pass") names a secret: its normalised form ends
// with a fragment, or its last word is "pass" or "pwd".
func (r *Rules) SecretLabel(label string) bool {
	if len(r.keys) == 0 {
		return false
	}
	return len(label) >= r.minKey && r.fragmentIn(label, true) || passWord(label)
}

// fragmentIn reports whether the normalised key holds a fragment (at its
// end only, when atEnd) followed by nothing that describes it.
func (r *Rules) fragmentIn(key string, atEnd bool) bool {
	var buf [128]byte
	return r.fragmentInNormal(normaliseInto(buf[:0], key), atEnd)
}

// keyWord is SecretKey and LabelEnd of one key, normalised once: the
// scan asks both of most words before a separator.
func (r *Rules) keyWord(key string) (secret, labelEnd bool) {
	if len(r.keys) == 0 {
		return false, false
	}
	var buf [128]byte
	n := normaliseInto(buf[:0], key)
	if len(n) >= r.minKey && r.fragmentInNormal(n, false) || passWord(key) {
		return true, false
	}
	if n != "" && len(n) <= 32 {
		for _, e := range r.ends[n[0]] {
			if e == n {
				return false, true
			}
		}
	}
	return false, false
}

func (r *Rules) fragmentInNormal(n string, atEnd bool) bool {
	// One pass over the key, trying at each byte the fragments that
	// start with it: cheaper than one search per fragment, and the scan of
	// free text asks this of every word before a '=' or ':'.
	for i := 0; i+r.minKey <= len(n); i++ {
		for _, k := range r.byFirst[n[i]] {
			if !strings.HasPrefix(n[i:], k) {
				continue
			}
			rest := n[i+len(k):]
			if atEnd && rest != "" {
				continue
			}
			if !describes(rest) {
				return true
			}
		}
	}
	return false
}

// describes reports whether the rest of a key after a secret fragment
// makes it name a fact about the secret (where it is, what it is called,
// how long it lives), not the secret: token_file, secretName,
// secretKeyRef, credentials_path, token_url.
func describes(rest string) bool {
	rest = strings.TrimPrefix(rest, "s")
	switch rest {
	case "file", "path", "dir", "name", "ref", "keyref", "url", "uri", "endpoint",
		"length", "len", "type", "stdin", "env", "ttl", "expiry", "expires", "expiresat", "expiration":
		return true
	}
	return false
}

// passWord reports whether key ends in the word "pass" or "pwd", after
// '_', '-', '.' or ' ', or in camel case (dbPass).
func passWord(key string) bool {
	for _, w := range [...]string{"pass", "pwd"} {
		n := len(key) - len(w)
		if n < 1 || !strings.EqualFold(key[n:], w) {
			continue
		}
		switch c := key[n-1]; {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			return true
		case c >= 'a' && c <= 'z' && key[n] == 'P':
			return true
		}
	}
	return false
}

// SecretValue reports whether v holds private-key material anywhere: a
// PEM or PGP armor header naming a private key ("-----BEGIN ... PRIVATE
// KEY-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----", OpenSSH's), at any
// position and after any other block (a certificate, EC PARAMETERS, a
// public key), also when the header was cut short; a PuTTY key file; or
// the base64 encoding of such a PEM text (a Kubernetes Secret's data).
func (r *Rules) SecretValue(v string) bool {
	return r.keyMaterial && len(v) >= minKeyLen && hasKeyMaterial(v)
}

// SecretBytes is SecretValue for bytes, checked before they are
// base64-encoded for the wire.
func (r *Rules) SecretBytes(b []byte) bool {
	return r.keyMaterial && len(b) >= minKeyLen && hasKeyMaterial(unsafe.String(unsafe.SliceData(b), len(b)))
}

// SecretLine is SecretValue for one element of a sequence of strings, such
// as a key file's lines in a slice (Ansible's stdout_lines): in carries
// the state from one element to the next. An element that opens a private
// key without closing it, every element after it, and the element that
// closes it are secret.
func (r *Rules) SecretLine(in *bool, v string) bool {
	if !r.keyMaterial {
		return false
	}
	if *in {
		switch {
		case strings.Contains(v, pemEnd) || strings.Contains(v, puttyEnd):
			*in = false
			return true
		case v == "" || v[0] == ' ' || v[0] == '\t' || !endsBlock(v):
			return true
		}
		*in = false // the line after a YAML block scalar's value
	}
	// A PuTTY file's header line alone is shorter than what SecretValue
	// searches for armour: as a line it opens the key.
	if !r.SecretValue(v) && !strings.Contains(v, puttyHeader) {
		*in = r.opensScalar(v)
		return false
	}
	*in = opensBlock(v)
	return true
}

// opensScalar reports whether line v opens a YAML block scalar under a
// secret key ("  password: |"): the lines below it, indented, hold the
// value.
func (r *Rules) opensScalar(v string) bool {
	v = strings.TrimRight(v, " \t\r")
	v = strings.TrimRight(v, "-+123456789")
	if len(v) < 3 || v[len(v)-1] != '|' && v[len(v)-1] != '>' {
		return false
	}
	v = strings.TrimRight(v[:len(v)-1], " \t")
	if !strings.HasSuffix(v, ":") {
		return false
	}
	v = strings.TrimLeft(strings.TrimSuffix(v, ":"), " \t-")
	v = strings.Trim(v, `"'`)
	return r.SecretKey(v) || r.SecretLabel(v)
}

// endsBlock reports whether a line that is not indented ends a block
// that SecretLine follows: a YAML key or list item, a document marker or
// a tool's status line, none of which a key file's body ever holds (its
// own headers, Proc-Type: and the like, aside).
func endsBlock(v string) bool {
	if strings.HasPrefix(v, "- ") || v == "---" || v == "..." {
		return true
	}
	i := 0
	for i < len(v) && i < maxKeyLen && (isKeyByte(v[i]) || v[i] == ' ') {
		i++
	}
	if i == 0 || i == len(v) {
		return false
	}
	switch v[:i] {
	case "Proc-Type", "DEK-Info", "Comment", "Version", "Hash", "Charset", "Encryption", "Public-Lines", "Private-Lines":
		return false
	}
	return v[i] == ':' || v[i] == '['
}

const (
	pemBegin    = "-----BEGIN "
	pemEnd      = "-----END "
	privateKey  = "PRIVATE KEY"
	puttyHeader = "PuTTY-User-Key-File-"
	puttyEnd    = "Private-MAC:"
	// minKeyLen is the shortest string that can hold a marker: a PEM
	// header cut right after "PRIVATE KEY".
	minKeyLen = len(pemBegin + privateKey)
	// minArmoredLen is the shortest string that can hold the base64 text
	// of a private key's header (the 22 bytes "-----BEGIN PRIVATE KEY"
	// take 32 characters) or a PuTTY key file (its header line and a key
	// line): shorter strings, the common case, are searched once only.
	minArmoredLen = (len(pemBegin+privateKey) + 2) / 3 * 4
	// maxLabel bounds how far past "-----BEGIN " a label is read, so
	// that the search stays linear in the string.
	maxLabel = 128
)

// base64Begin are the base64 texts of "-----BEGIN" at the three byte
// offsets modulo 3 (the first quartet of offsets 1 and 2 depends on the
// byte before, so it is left out); they all start "LS0t".
var base64Begin = [...]string{
	"LS0tLS1CRUdJTi", // -----BEGIN
	"LS0tQkVHSU4g",   // (x)---BEGIN_
	"LS0tLUJFR0lO",   // (xy)----BEGIN
}

func hasKeyMaterial(v string) bool {
	if privateHeader(v) >= 0 {
		return true
	}
	if len(v) < minArmoredLen {
		return false // too short for a PuTTY file or a base64 key: the common case stops here
	}
	if strings.Contains(v, puttyHeader) {
		return true
	}
	for s := v; ; {
		i := strings.Index(s, "LS0t")
		if i < 0 {
			return false
		}
		s = s[i:]
		for _, n := range base64Begin {
			if strings.HasPrefix(s, n) && base64Private(s) {
				return true
			}
		}
		s = s[4:]
	}
}

// privateHeader returns the index of the first "-----BEGIN " whose label
// names a private key, or -1. The label ends at "-----" or at a line end;
// a header cut short (no end within maxLabel bytes) counts when what is
// there names a private key.
func privateHeader(v string) int {
	off := 0
	for {
		i := strings.Index(v[off:], pemBegin)
		if i < 0 {
			return -1
		}
		at := off + i
		if rest := v[at+len(pemBegin):]; namesPrivateKey(rest[:min(len(rest), maxLabel)]) {
			return at
		}
		off = at + len(pemBegin)
	}
}

// opensBlock reports whether a private-key block that starts in v does not
// end in it.
func opensBlock(v string) bool {
	if i := privateHeader(v); i >= 0 {
		return !strings.Contains(v[i:], pemEnd)
	}
	if i := strings.Index(v, puttyHeader); i >= 0 {
		return !strings.Contains(v[i:], puttyEnd)
	}
	return false
}

// base64Private decodes the start of s, a base64 text that begins at a
// quartet boundary with the encoding of "-----BEGIN", and looks for a
// private-key label in it.
func base64Private(s string) bool {
	var src [maxLabel + 16]byte
	n := 0
	for i := 0; i < len(s) && n < len(src); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			continue // line-wrapped base64
		}
		src[n] = c
		n++
	}
	n -= n % 4
	var dst [(maxLabel + 16) / 4 * 3]byte
	// On a byte outside the alphabet Decode stops; what it wrote before
	// is still there and counted in m.
	m, _ := base64.StdEncoding.Decode(dst[:], src[:n])
	text := unsafe.String(&dst[0], m)
	i := strings.Index(text, "BEGIN ")
	if i < 0 {
		return false
	}
	return namesPrivateKey(text[i+len("BEGIN "):])
}

// namesPrivateKey reports whether the armor label that starts s, up to
// "-----" or a line end, names a private key.
func namesPrivateKey(s string) bool {
	if j := strings.Index(s, "-----"); j >= 0 {
		s = s[:j]
	}
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		s = s[:j]
	}
	return strings.Contains(s, privateKey)
}

func normaliseKey(k string) string { return normaliseInto(nil, k) }

// normaliseInto returns k lower-cased without '_', '-', '.' and ' ': k
// itself when it has none of them, else built in buf (the result aliases
// buf when it fits: use it before buf is reused).
func normaliseInto(buf []byte, k string) string {
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
	b := buf[:0]
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c == '_' || c == '-' || c == '.' || c == ' ':
		default:
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return ""
	}
	if len(b) <= cap(buf) {
		return unsafe.String(&b[0], len(b)) // never grown: still in buf
	}
	return string(b)
}
