package redact

import (
	"encoding/base64"
	"strings"
	"unsafe"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// This file finds secrets in free text by their shape: a secret in a
// command line, a log line or a message has no key of its own. The
// shapes, all found in one pass over the text:
//
//   - "key=value", "key: value", "key = value", "key is value" and the
//     JSON pair "key": "value" (also escaped, \"key\":\"value\"), when
//     the key is one the Rules call secret (SecretKey);
//   - the password of a URL's user info (scheme://user:password@host);
//   - the credentials after "Bearer" and after "Basic" (base64 text that
//     decodes to user:password);
//   - JSON Web Tokens (eyJ....eyJ....);
//   - tokens with a well-known prefix (tokenPrefixes).
//
// Only the secret is replaced (by wireformat.Redacted), so that the rest
// of the line still says what happened.
//
// The scan is linear in the text whatever the text: every loop below
// either moves the position forward for good or is bounded by a constant
// (maxKeyLen, maxSpaces, maxBasic); steps counts the iterations, and the
// tests hold it to a constant times the length.

const (
	// maxKeyLen is the longest key read back from a separator: a longer
	// run of key bytes is not a key.
	maxKeyLen = 64
	// maxSpaces is the most blanks read back between a key and its
	// separator, and between "Bearer" or "Basic" and the credentials.
	maxSpaces = 4
	// maxEscapes is the most backslashes read before a quote: JSON text
	// inside a JSON string, escaped that many times over.
	maxEscapes = 8
	// maxBasic is how much of a Basic credential is decoded to look for
	// the user:password colon.
	maxBasic = 512
	// minShapeLen is the shortest text that can hold a shape ("k=v" with
	// a secret key of at least "token"'s length is longer): shorter text
	// is not scanned.
	minShapeLen = 6
)

// Shapes returns v with every secret found in it by shape replaced by
// wireformat.Redacted, and whether it changed anything. Private-key
// material is SecretValue's: callers test it first, since it redacts the
// whole value.
func (r *Rules) Shapes(v string) (string, bool) {
	if !r.keyMaterial || len(v) < minShapeLen {
		return v, false
	}
	sc := scanner{r: r, s: v}
	return sc.run()
}

// scanner is one pass of Shapes.
type scanner struct {
	r     *Rules
	s     string
	out   []byte // nil until the first secret
	last  int    // s[:last] is copied to out, or was replaced
	steps int    // loop iterations, for the linearity tests
}

func (sc *scanner) run() (string, bool) {
	s := sc.s
	for i := 0; i < len(s); {
		sc.steps++
		c := s[i]
		if !interesting[c] {
			i++
			continue
		}
		next := -1
		switch {
		case c == '=' || c == ':':
			next = sc.pair(i, 1)
			if next < 0 && c == ':' && strings.HasPrefix(s[i+1:], "//") {
				next = sc.userInfo(i + 3)
			}
		case c == ' ':
			if strings.HasPrefix(s[i:], " is ") {
				next = sc.pair(i, len(" is "))
			}
		case i == 0 || !isWordByte(s[i-1]):
			next = sc.word(i)
		}
		if next > i {
			i = next
		} else {
			i++
		}
	}
	if sc.out == nil {
		return s, false
	}
	sc.out = append(sc.out, s[sc.last:]...)
	return unsafe.String(unsafe.SliceData(sc.out), len(sc.out)), true
}

// replace writes s[last:from] and the marker in place of s[from:to].
func (sc *scanner) replace(from, to int) {
	if sc.out == nil {
		sc.out = make([]byte, 0, len(sc.s)+len(wireformat.Redacted))
	}
	sc.out = append(sc.out, sc.s[sc.last:from]...)
	sc.out = append(sc.out, wireformat.Redacted...)
	sc.last = to
}

// pair looks at the separator s[j:j+n] ('=', ':' or " is "): when the key
// before it is secret, the value after it is replaced. It returns where
// the scan goes on, or -1.
func (sc *scanner) pair(j, n int) int {
	s := sc.s
	k := j
	if n == 1 {
		for b := 0; b < maxSpaces && k > sc.last && s[k-1] == ' '; b++ {
			sc.steps++
			k--
		}
	}
	// A quoted key: "key": or \"key\": (JSON text inside a string,
	// escaped once or more).
	var keyQuote byte
	if n == 1 && k > sc.last && isQuote(s[k-1]) {
		keyQuote = s[k-1]
		k--
		for b := 0; b < maxEscapes && k > sc.last && s[k-1] == '\\'; b++ {
			sc.steps++
			k--
		}
	}
	end := k
	for k > sc.last && end-k < maxKeyLen && isKeyByte(s[k-1]) {
		sc.steps++
		k--
	}
	if k == end || k > sc.last && isKeyByte(s[k-1]) {
		return -1 // no key, or one too long to be a key
	}
	var context byte // the quote the whole pair sits in: "Authorization: Bearer x"
	switch {
	case keyQuote != 0:
		if k == sc.last || s[k-1] != keyQuote {
			return -1 // a quote after a bare word: not a key
		}
	case k > sc.last && isQuote(s[k-1]):
		context = s[k-1]
	}
	if !sc.r.SecretKey(s[k:end]) {
		return -1
	}
	if s[j] == ':' && strings.HasPrefix(s[j+1:], "//") {
		return -1 // a URL's scheme: userInfo's
	}
	v := j + n
	for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
		sc.steps++
		v++
	}
	if v == len(s) {
		return -1
	}
	if strings.HasPrefix(s[v:], wireformat.Redacted) {
		return v + len(wireformat.Redacted) // redacted already: text redacted twice reads the same
	}
	esc := 0 // backslashes before an escaped opening quote
	for esc < maxEscapes && v+esc < len(s) && s[v+esc] == '\\' {
		sc.steps++
		esc++
	}
	var e int
	switch {
	case v+esc < len(s) && isQuote(s[v+esc]) && (esc == 0 || keyQuote != 0):
		v += esc
		e = sc.until(v+1, s[v])
		v++
		for e > v && s[e-1] == '\\' {
			sc.steps++
			e-- // an escaped closing quote
		}
	case context != 0:
		e = sc.until(v, context)
	case n > 1 || keyQuote != 0 || s[j] == '=':
		e = sc.word1(v)
	default:
		e = sc.until(v, '\n') // "key: value" runs to the end of the line
	}
	if e <= v {
		return -1
	}
	if notSecret(s[v:e]) {
		return e // "no_log: true", "password_set=false": a flag, not a secret
	}
	sc.replace(v, e)
	return e
}

// notSecret reports a value no secret ever is: a boolean or a null, as
// YAML, JSON and Python write them.
func notSecret(v string) bool {
	if len(v) > 5 {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "null", "none", "nil":
		return true
	}
	return false
}

// until returns the first position from i that holds q or ends a line,
// or len(s).
func (sc *scanner) until(i int, q byte) int {
	s := sc.s
	for ; i < len(s); i++ {
		sc.steps++
		c := s[i]
		if c == q || c == '\n' || c == '\r' {
			return i
		}
	}
	return i
}

// word1 returns the end of the one word at i: up to a blank, a quote or
// any other byte that ends an unquoted value.
func (sc *scanner) word1(i int) int {
	s := sc.s
	for ; i < len(s) && !endsValue[s[i]]; i++ {
		sc.steps++
	}
	return i
}

// userInfo replaces the password of the URL whose authority starts at a:
// scheme://user:password@host. It returns where the scan goes on (past
// the user info when it replaced the password), or -1.
func (sc *scanner) userInfo(a int) int {
	s := sc.s
	colon, at := -1, -1
	i := a
	for ; i < len(s); i++ {
		sc.steps++
		c := s[i]
		if c == '/' || c == '?' || c == '#' || endsValue[c] {
			break
		}
		switch {
		case c == ':' && colon < 0 && at < 0:
			colon = i
		case c == '@':
			at = i
		}
	}
	if colon < 0 || at < colon+2 {
		return -1
	}
	sc.replace(colon+1, at)
	return at
}

// word looks at the word that starts at i for a bearer or basic
// credential, a JWT or a well-known token. It returns the end of what it
// replaced, or -1.
func (sc *scanner) word(i int) int {
	s := sc.s
	switch s[i] {
	case 'B', 'b':
		if len(s)-i > 7 && strings.EqualFold(s[i:i+6], "bearer") {
			return sc.credential(i+6, false)
		}
		if len(s)-i > 6 && s[i:i+5] == "Basic" {
			return sc.credential(i+5, true)
		}
	case 'e':
		if strings.HasPrefix(s[i:], "eyJ") {
			return sc.jwt(i)
		}
	}
	for _, p := range prefixesBy[s[i]] {
		if strings.HasPrefix(s[i:], p.prefix) {
			return sc.token(i, p)
		}
	}
	return -1
}

// credential replaces what follows "Bearer" (a token of at least 8
// characters) or "Basic" (base64 text of user:password) at i.
func (sc *scanner) credential(i int, basic bool) int {
	s := sc.s
	v := i
	for v < len(s) && v-i < maxSpaces && (s[v] == ' ' || s[v] == '\t') {
		sc.steps++
		v++
	}
	if v == i {
		return -1
	}
	e := v
	for e < len(s) && isCredentialByte(s[e]) {
		sc.steps++
		e++
	}
	if e-v < 8 || basic && !basicAuth(s[v:e]) {
		return -1
	}
	sc.replace(v, e)
	return e
}

// basicAuth reports whether b64 decodes to user:password.
func basicAuth(b64 string) bool {
	b64 = b64[:min(len(b64), maxBasic)]
	b64 = b64[:len(b64)/4*4]
	var dst [maxBasic / 4 * 3]byte
	n, _ := base64.StdEncoding.Decode(dst[:], unsafe.Slice(unsafe.StringData(b64), len(b64)))
	for _, c := range dst[:n] {
		if c == ':' {
			return true
		}
		if c < 0x20 || c >= 0x7f {
			return false // not text
		}
	}
	return false
}

// jwt replaces the JSON Web Token at i: three base64url segments (the
// header and payload each at least 10 characters, the signature possibly
// empty) joined by dots.
func (sc *scanner) jwt(i int) int {
	s := sc.s
	e := i
	for seg := 0; seg < 3; seg++ {
		start := e
		for e < len(s) && isTokenByte(s[e], false) {
			sc.steps++
			e++
		}
		if seg < 2 && e-start < 10 {
			return -1
		}
		if seg == 2 || e == len(s) || s[e] != '.' {
			if seg < 1 {
				return -1
			}
			break
		}
		e++ // the dot
	}
	sc.replace(i, e)
	return e
}

// token replaces a token with a well-known prefix at i, when its tail is
// long enough (and, for a fixed-length kind, exactly that long).
func (sc *scanner) token(i int, p tokenPrefix) int {
	s := sc.s
	e := i + len(p.prefix)
	// A fixed-length kind is read one byte past its length at most.
	for e < len(s) && isTokenByte(s[e], p.upper) && !(p.exact && e-i-len(p.prefix) > p.min) {
		sc.steps++
		e++
	}
	n := e - i - len(p.prefix)
	if n < p.min || p.exact && n != p.min || e < len(s) && isWordByte(s[e]) {
		return -1
	}
	sc.replace(i, e)
	return e
}

// tokenPrefix is a kind of token a secret scanner knows by its prefix:
// min characters of token alphabet follow it (exactly min when exact;
// only upper-case letters and digits when upper).
type tokenPrefix struct {
	prefix       string
	min          int
	exact, upper bool
}

// tokenPrefixes are the prefixes of well-known tokens, after the rules of
// the gitleaks secret scanner; the tail lengths are lower bounds that keep
// words such as "ghp_" in prose apart from tokens.
var tokenPrefixes = []tokenPrefix{
	// GitHub: personal, OAuth, user-to-server, server-to-server, refresh,
	// fine-grained personal.
	{prefix: "ghp_", min: 30}, {prefix: "gho_", min: 30}, {prefix: "ghu_", min: 30},
	{prefix: "ghs_", min: 30}, {prefix: "ghr_", min: 30}, {prefix: "github_pat_", min: 40},
	// GitLab: personal, pipeline trigger, deploy, runner, CI job, OAuth
	// app secret, feed, incoming mail, SCIM OAuth.
	{prefix: "glpat-", min: 20}, {prefix: "glptt-", min: 20}, {prefix: "gldt-", min: 20},
	{prefix: "glrt-", min: 20}, {prefix: "glcbt-", min: 20}, {prefix: "gloas-", min: 20},
	{prefix: "glft-", min: 20}, {prefix: "glimt-", min: 20}, {prefix: "glsoat-", min: 20},
	// Slack: bot, user, app, refresh, legacy, config tokens; app-level.
	{prefix: "xoxb-", min: 10}, {prefix: "xoxp-", min: 10}, {prefix: "xoxa-", min: 10},
	{prefix: "xoxr-", min: 10}, {prefix: "xoxs-", min: 10}, {prefix: "xoxe-", min: 10},
	{prefix: "xapp-", min: 10},
	// AWS access key ids: long-term, temporary (STS) and the other
	// unique-id kinds.
	{prefix: "AKIA", min: 16, exact: true, upper: true}, {prefix: "ASIA", min: 16, exact: true, upper: true},
	{prefix: "ABIA", min: 16, exact: true, upper: true}, {prefix: "ACCA", min: 16, exact: true, upper: true},
	{prefix: "AGPA", min: 16, exact: true, upper: true}, {prefix: "AIDA", min: 16, exact: true, upper: true},
	{prefix: "AROA", min: 16, exact: true, upper: true}, {prefix: "AIPA", min: 16, exact: true, upper: true},
	{prefix: "ANPA", min: 16, exact: true, upper: true}, {prefix: "ANVA", min: 16, exact: true, upper: true},
	// Google API key; age secret key.
	{prefix: "AIza", min: 35}, {prefix: "AGE-SECRET-KEY-1", min: 58, upper: true},
	// Stripe live and test secret and restricted keys.
	{prefix: "sk_live_", min: 20}, {prefix: "sk_test_", min: 20}, {prefix: "rk_live_", min: 20}, {prefix: "rk_test_", min: 20},
	// Anthropic and OpenAI API keys.
	{prefix: "sk-ant-", min: 30}, {prefix: "sk-proj-", min: 30},
	// npm, PyPI, Docker Hub, DigitalOcean, Hugging Face, Shopify,
	// Square, Grafana, SendGrid.
	{prefix: "npm_", min: 36}, {prefix: "pypi-AgEIcHlwaS5vcmc", min: 50},
	{prefix: "dckr_pat_", min: 20}, {prefix: "dop_v1_", min: 60}, {prefix: "doo_v1_", min: 60},
	{prefix: "hf_", min: 30}, {prefix: "shpat_", min: 32}, {prefix: "shpss_", min: 32},
	{prefix: "shpca_", min: 32}, {prefix: "shppa_", min: 32},
	{prefix: "sq0atp-", min: 22}, {prefix: "sq0csp-", min: 40},
	{prefix: "glc_", min: 32}, {prefix: "glsa_", min: 32},
	{prefix: "SG.", min: 60},
	// HashiCorp Vault service and batch tokens.
	{prefix: "hvs.", min: 24}, {prefix: "hvb.", min: 24},
}

// prefixesBy are the token prefixes by their first byte; interesting
// marks the bytes the scan stops at.
var (
	prefixesBy  [256][]tokenPrefix
	interesting [256]bool
	endsValue   [256]bool
)

func init() {
	for _, p := range tokenPrefixes {
		prefixesBy[p.prefix[0]] = append(prefixesBy[p.prefix[0]], p)
		interesting[p.prefix[0]] = true
	}
	for _, c := range "=: Bbe" {
		interesting[c] = true
	}
	for _, c := range " \t\r\n;,&|)}]'\"`<>" {
		endsValue[c] = true
	}
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// isWordByte: a byte that continues a word, so that a prefix in the middle
// of one ("xghp_") is not a token's start.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isTokenByte(c byte, upper bool) bool {
	if upper {
		return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return isWordByte(c) || c == '-'
}

func isCredentialByte(c byte) bool {
	return isWordByte(c) || c == '-' || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}
