package redact

import (
	"encoding/base64"
	"strings"
	"unsafe"

	"github.com/progressotel/progressotel/tncomessage"
)

// This file finds secrets in free text by their shape: a secret in a
// command line, a log line or a message has no key of its own. The
// shapes (Table in shapes.go lists them, with an example of each and the
// look-alikes they leave alone), all found in one pass over the text:
//
//   - "key=value", "key: value", "key = value", "key is value" and the
//     JSON pair "key": "value" (also escaped, \"key\":\"value\"), when
//     the key is one the Rules call secret (SecretKey), or a label of up
//     to three words that ends in one ("API Key: x", "db pass is x");
//     the value runs to its end: a quoted value past escaped quotes, a
//     YAML block scalar over its indented lines;
//   - secret-named flags and their value (--password X, --token=X), and
//     the flags that carry a password in a few commands: mysql -pX,
//     curl -u user:pw, sshpass -p X, htpasswd -b file user pw;
//   - .netrc entries (machine h login u password p);
//   - the password of a URL's user info (scheme://user:password@host);
//   - the credentials after "Bearer" and after "Basic" (base64 text that
//     decodes to user:password);
//   - JSON Web Tokens (eyJ....eyJ....);
//   - tokens with a well-known prefix (tokenPrefixes).
//
// Only the secret is replaced (by tncomessage.Redacted), so that the rest
// of the line still says what happened.
//
// The scan is linear in the text whatever the text: every loop below
// either moves the position forward for good or is bounded by a constant
// (maxKeyLen, maxAlign, maxWords, maxBasic), and the forward parses of a
// command's words (htpasswd, .netrc) never start inside text an earlier
// one read; steps counts the iterations, and the tests hold it to a
// constant times the length.

const (
	// maxKeyLen is the longest key read back from a separator: a longer
	// run of key bytes is not a key.
	maxKeyLen = 64
	// maxAlign is the most blanks read back between a key and its
	// separator (aligned pairs: terraform output, env | column -t).
	maxAlign = 64
	// maxSpaces is the most blanks between "Bearer" or "Basic" and the
	// credentials, and between a flag and its value.
	maxSpaces = 4
	// maxWords is the most words of a label ("Secret Access Key").
	maxWords = 3
	// maxReference is the longest template, variable reference or
	// placeholder read as the value that names a secret.
	maxReference = 128
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
	// CutMargin is how far past a string limit text is redacted before
	// it is cut: a secret that starts before the cut is known by its
	// shape within that many bytes (a token's tail, a URL's '@').
	CutMargin = 1024
)

// Shapes returns v with every secret found in it by shape replaced by
// tncomessage.Redacted, and whether it changed anything. Private-key
// material is SecretValue's: callers test it first, since it redacts the
// whole value.
func (r *Rules) Shapes(v string) (string, bool) {
	if !r.keyMaterial || len(v) < minShapeLen {
		return v, false
	}
	sc := scanner{r: r, s: v}
	return sc.run()
}

// Spans returns the byte ranges of v that Shapes replaces, in order.
func (r *Rules) Spans(v string) [][2]int {
	if !r.keyMaterial || len(v) < minShapeLen {
		return nil
	}
	sc := scanner{r: r, s: v, spans: [][2]int{}}
	sc.run()
	return sc.spans
}

// Commands whose flags carry a password: the scan notes the command when
// it meets its name and reads its flags until the line ends.
const (
	cmdNone byte = iota
	cmdMySQL
	cmdCurl
	cmdSSHPass
)

// scanner is one pass of Shapes.
type scanner struct {
	r        *Rules
	s        string
	out      []byte   // nil until the first secret
	spans    [][2]int // non-nil: the replaced ranges are recorded (Spans)
	last     int      // s[:last] is copied to out, or was replaced
	steps    int      // loop iterations, for the linearity tests
	lineAt   int      // where the current line starts
	cmd      byte     // the command of the current line (cmd*)
	parsedTo int      // a forward parse read s[:parsedTo]
	farClose [3]int   // near's searches for '}', ')' and '>' read s[:farClose[n]]
	noJWT    int      // no JSON Web Token starts before it
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
		case c == '\n':
			sc.lineAt, sc.cmd = i+1, cmdNone
		case c == '=' || c == ':':
			next = sc.pair(i, 1)
			if next < 0 && c == ':' && strings.HasPrefix(s[i+1:], "//") {
				next = sc.userInfo(i + 3)
			}
		case c == ' ':
			if strings.HasPrefix(s[i:], " is ") {
				next = sc.pair(i, len(" is "))
			}
		case c == '-':
			if i == 0 || opensWord(s[i-1]) {
				next = sc.flag(i)
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
	if from < sc.last {
		from = sc.last
	}
	if to <= from {
		return
	}
	if sc.spans != nil {
		sc.spans = append(sc.spans, [2]int{from, to})
	}
	if sc.out == nil {
		sc.out = make([]byte, 0, len(sc.s)+len(tncomessage.Redacted))
	}
	sc.out = append(sc.out, sc.s[sc.last:from]...)
	sc.out = append(sc.out, tncomessage.Redacted...)
	sc.last = to
}

// Kinds of secret key (keyKind).
const (
	keyNo     = iota
	keySecret // its value is secret
	keyAuth   // "auth": secret when the value is base64 of user:password (docker's config.json)
	keyPwd    // "pwd": secret unless the value is a path (ODBC's Pwd=, not the shell's PWD=/home/x)
)

// keyKind is what a key read back from a separator says of its value.
func (sc *scanner) keyKind(key string) int {
	kind, _ := sc.keyKindEnd(key)
	return kind
}

// keyKindEnd is keyKind, and whether key can end a label of several
// words (Rules.LabelEnd).
func (sc *scanner) keyKindEnd(key string) (int, bool) {
	secret, end := sc.r.keyWord(key)
	if secret {
		return keySecret, false
	}
	for len(key) > 3 && (key[0] == '_' || key[0] == '-') {
		key = key[1:]
	}
	switch {
	case len(key) == 4 && strings.EqualFold(key, "auth"):
		return keyAuth, false
	case len(key) == 3 && strings.EqualFold(key, "pwd"):
		return keyPwd, false
	}
	return keyNo, end
}

// pair looks at the separator s[j:j+n] ('=', ':' or " is "): when the key
// before it is secret, the value after it is replaced. It returns where
// the scan goes on, or -1.
func (sc *scanner) pair(j, n int) int {
	s := sc.s
	k := j
	if n == 1 {
		for b := 0; b < maxAlign && k > sc.last && (s[k-1] == ' ' || s[k-1] == '\t'); b++ {
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
	k = sc.keyStart(end)
	if k == end || k > sc.last && isKeyByte(s[k-1]) {
		return -1 // no key, or one too long to be a key
	}
	kind, labelEnd := sc.keyKindEnd(s[k:end])
	label := false // a key of more words than one
	if kind == keyNo && keyQuote == 0 && labelEnd {
		// A label of more words: "API Key: x", "Client Secret = x".
		w := k
		for words := 1; words < maxWords && w-1 > sc.last && s[w-1] == ' ' && isKeyByte(s[w-2]); words++ {
			w = sc.keyStart(w - 1)
			if w > sc.last && isKeyByte(s[w-1]) {
				break
			}
			if sc.r.SecretLabel(s[w:end]) {
				k, kind, label = w, keySecret, true
				break
			}
		}
	}
	if kind == keyNo {
		return -1
	}
	if k > sc.last && s[k-1] == '/' {
		return -1 // a path's last name: "open .../serviceaccount/token: no such file"
	}
	var context byte // the quote the whole pair sits in: "Authorization: Bearer x"
	switch {
	case keyQuote != 0:
		if k == sc.last || s[k-1] != keyQuote {
			return -1 // a quote after a bare word: not a key
		}
	case k > sc.last && isQuote(s[k-1]):
		context = s[k-1]
	case label:
		// The words of a label before the secret ones: "Secret Access Key".
		w := k
		for words := 1; words < maxWords && w-1 > sc.last && s[w-1] == ' ' && isKeyByte(s[w-2]); words++ {
			w = sc.keyStart(w - 1)
		}
		if w > sc.last && isQuote(s[w-1]) {
			context = s[w-1]
		}
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
	if strings.HasPrefix(s[v:], tncomessage.Redacted) {
		return v + len(tncomessage.Redacted) // redacted already: text redacted twice reads the same
	}
	if keep, e := sc.reference(v); keep {
		return e
	}
	if s[j] == ':' {
		v = sc.scheme(v) // a header's value
		if strings.HasPrefix(s[v:], tncomessage.Redacted) {
			return v + len(tncomessage.Redacted)
		}
	}
	if n == 1 && s[j] == ':' && keyQuote == 0 {
		if e, ok := sc.blockScalar(v, k); ok {
			return e
		}
	}
	esc := 0 // backslashes before an escaped opening quote
	for esc < maxEscapes && v+esc < len(s) && s[v+esc] == '\\' {
		sc.steps++
		esc++
	}
	var e int
	switch {
	case v+esc < len(s) && isQuote(s[v+esc]) && (esc == 0 || keyQuote != 0):
		q := s[v+esc]
		v += esc + 1
		e = sc.quoted(v, q, esc)
	case context != 0 && s[j] != '=':
		e = sc.until(v, context)
	case s[v] == '{':
		e = sc.until(v, '}') // ODBC's Pwd={p;w}
		if e < len(s) && s[e] == '}' {
			e++
		}
	case n > 1 || keyQuote != 0 || s[j] == '=':
		e = sc.word1(v)
	default:
		e = sc.until(v, '\n') // "key: value" runs to the end of the line
		for e > v && (s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
	}
	if e <= v {
		return -1
	}
	if !sc.secretValue(kind, s[k:end], s[v:e]) {
		return e
	}
	sc.replace(v, e)
	return e
}

// scheme returns where the credentials start in the value at v: past an
// HTTP authentication scheme ("Authorization: Basic x"), which says how
// the secret is sent, not what it is.
func (sc *scanner) scheme(v int) int {
	s := sc.s
	e := v
	for e < len(s) && e-v < 20 && (isWordByte(s[e]) || s[e] == '-') {
		sc.steps++
		e++
	}
	if e+1 >= len(s) || s[e] != ' ' {
		return v
	}
	switch s[v:e] {
	case "Basic", "Bearer", "bearer", "Token", "token", "Digest", "Negotiate", "NTLM", "AWS4-HMAC-SHA256", "OAuth", "Bot", "SSWS", "GenieKey", "Splunk":
		return e + 1
	}
	return v
}

// keyStart reads key bytes back from end and returns where they start.
func (sc *scanner) keyStart(end int) int {
	s := sc.s
	k := end
	for k > sc.last && end-k < maxKeyLen && isKeyByte(s[k-1]) {
		sc.steps++
		k--
	}
	return k
}

// secretValue reports whether value, under a key of kind, is a secret.
func (sc *scanner) secretValue(kind int, key, value string) bool {
	trimmed := strings.TrimRight(value, ").,;]}")
	switch {
	case notSecret(trimmed):
		return false // "no_log: true", "password_set=false": a flag, not a secret
	case kind == keyAuth:
		return basicAuth(strings.Trim(value, `\"'`))
	case kind == keyPwd:
		return value[0] != '/' && value[0] != '~'
	case allDigits(trimmed) && hasSuffixFold(key, "tokens"):
		return false // max_tokens=100: a count
	case pathError(value):
		return false // "secret: open /etc/secrets/x: no such file or directory"
	}
	return true
}

// pathError reports an error about a file (Go's os.PathError: "open
// /path: reason"): it names where a secret is, not what it is.
func pathError(v string) bool {
	op, rest, ok := strings.Cut(v, " ")
	if !ok || !strings.HasPrefix(rest, "/") {
		return false
	}
	switch op {
	case "open", "stat", "lstat", "read", "readlink", "mkdir", "remove", "chmod":
		return true
	}
	return false
}

// reference reports whether the value at v names a secret instead of
// holding it: a template ({{ db_password }}), a shell variable
// ($DB_PASS, ${DB_PASS}, $(cat file)) or a placeholder ((sensitive
// value), <sensitive>); it then returns its end, which the scan skips.
func (sc *scanner) reference(v int) (bool, int) {
	s := sc.s
	if v >= len(s) {
		return false, 0
	}
	switch {
	case strings.HasPrefix(s[v:], "{{"):
		e := sc.near(v, '}')
		if strings.HasPrefix(s[e:], "}}") {
			return true, e + 2
		}
	case s[v] == '$' && v+1 < len(s) && (s[v+1] == '{' || s[v+1] == '(' || s[v+1] == '_' || isLetter(s[v+1])):
		if s[v+1] == '{' || s[v+1] == '(' {
			close := byte('}')
			if s[v+1] == '(' {
				close = ')'
			}
			e := sc.near(v, close)
			if e < len(s) && s[e] == close {
				return true, e + 1
			}
			return false, 0
		}
		e := v + 1
		for e < len(s) && isWordByte(s[e]) {
			sc.steps++
			e++
		}
		return true, e
	case s[v] == '(' || s[v] == '<':
		close := byte(')')
		if s[v] == '<' {
			close = '>'
		}
		e := sc.near(v, close)
		if e < len(s) && s[e] == close && (strings.Contains(s[v:e], "sensitive") || close == '>' && strings.IndexByte(s[v:e], ' ') > 0) {
			return true, e + 1
		}
	}
	return false, 0
}

// near is until within maxReference bytes (a reference's closing
// bracket): a value that only looks like one is scanned once more as a
// value, and this bound keeps that constant.
func (sc *scanner) near(i int, q byte) int {
	s := sc.s
	end := min(len(s), i+maxReference)
	// s[:far] holds no q and no line end from where an earlier search
	// started, and every search starts later: each byte is read once.
	far := &sc.farClose[0]
	switch q {
	case ')':
		far = &sc.farClose[1]
	case '>':
		far = &sc.farClose[2]
	}
	i = max(i, *far)
	defer func() { *far = max(*far, i) }()
	for ; i < end; i++ {
		sc.steps++
		c := s[i]
		if c == q || c == '\n' || c == '\r' {
			return i
		}
	}
	return len(s) // not found: no reference
}

// blockScalar replaces the lines of a YAML block scalar ("password: |"
// then the value, indented, on the lines below) whose key starts at k; v
// is the indicator. It reports whether there was one.
func (sc *scanner) blockScalar(v, k int) (int, bool) {
	s := sc.s
	if s[v] != '|' && s[v] != '>' {
		return 0, false
	}
	e := v + 1
	for e < len(s) && (s[e] == '-' || s[e] == '+' || s[e] >= '1' && s[e] <= '9') {
		sc.steps++
		e++
	}
	for e < len(s) && (s[e] == ' ' || s[e] == '\t' || s[e] == '\r') {
		sc.steps++
		e++
	}
	if e < len(s) && s[e] != '\n' {
		return 0, false
	}
	// The key line's indentation (not the key's column: "- password: |",
	// "failed: password: |").
	indent := 0
	for at := sc.lineAt; at < k && indent < maxAlign && (s[at] == ' ' || s[at] == '\t'); at++ {
		sc.steps++
		indent++
	}
	// The value: every following line indented deeper than the key, and
	// the blank lines among them.
	from, to := -1, e
	for at := e + 1; at < len(s); {
		d := 0
		for at+d < len(s) && (s[at+d] == ' ' || s[at+d] == '\t') {
			sc.steps++
			d++
		}
		le := sc.until(at+d, '\n')
		if le > at+d && s[at+d] != '\r' && d <= indent {
			break // a line back at the key's level ends the value
		}
		if le > at+d && s[at+d] != '\r' {
			if from < 0 {
				from = at + d
			}
			to = le
		}
		at = le + 1
	}
	if from < 0 {
		return e, true
	}
	sc.replace(from, to)
	sc.lineAt, sc.cmd = to, cmdNone
	return to, true
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

// quoted returns the end of the value that starts at i after an opening
// quote q escaped esc times: the closing quote escaped as many times (a
// quote escaped once more is part of the value: {"password":"ab\"cd"}),
// or the line's end.
func (sc *scanner) quoted(i int, q byte, esc int) int {
	s := sc.s
	run := 0 // backslashes just before s[i]
	for ; i < len(s); i++ {
		sc.steps++
		c := s[i]
		switch {
		case c == q && run >= esc && (run-esc)%(2*(esc+1)) == 0:
			return i - esc
		case c == '\n' || c == '\r':
			return i
		case c == '\\':
			run++
			continue
		}
		run = 0
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

// arg returns the start and end of the command-line argument at i, its
// quotes left out: "a b", 'a b' or a word up to a blank.
func (sc *scanner) arg(i int) (int, int) {
	s := sc.s
	if i < len(s) && isQuote(s[i]) {
		e := sc.until(i+1, s[i])
		return i + 1, e
	}
	e := i
	for e < len(s) && !endsArg[s[e]] {
		sc.steps++
		e++
	}
	return i, e
}

// blanks returns the position after the blanks at i (at most maxSpaces).
func (sc *scanner) blanks(i int) int {
	s := sc.s
	for b := 0; b < maxSpaces && i < len(s) && (s[i] == ' ' || s[i] == '\t'); b++ {
		sc.steps++
		i++
	}
	return i
}

// flag looks at the flag that starts at i: a secret-named flag's value
// (--password X, --client-secret "X"), or a password that the line's
// command takes in a flag (mysql -pX, curl -u user:pw, sshpass -p X). It
// returns where the scan goes on, or -1.
func (sc *scanner) flag(i int) int {
	s := sc.s
	j := i + 1
	double := j < len(s) && s[j] == '-'
	if double {
		j++
	}
	e := j
	for e < len(s) && e-j < maxKeyLen && (isWordByte(s[e]) || s[e] == '-' || s[e] == '.') {
		sc.steps++
		e++
	}
	if e == j {
		return -1
	}
	name := s[j:e]
	switch sc.cmd {
	case cmdMySQL:
		if !double && name[0] == 'p' && len(name) > 1 {
			return sc.replaceArg(j+1, false)
		}
	case cmdSSHPass:
		if !double && name[0] == 'p' {
			sc.cmd = cmdNone // the command's own flags follow
			if len(name) > 1 {
				return sc.replaceArg(j+1, false)
			}
			return sc.replaceArg(sc.nextArg(e), false)
		}
	case cmdCurl:
		if !double && (name[0] == 'u' || name[0] == 'U') && (len(name) == 1 || e < len(s) && s[e] == ':') {
			if len(name) > 1 || e < len(s) && s[e] == ':' {
				return sc.replaceArg(j+1, true) // -uuser:pw
			}
			return sc.replaceArg(sc.nextArg(e), true)
		}
		if double && (name == "user" || name == "proxy-user") {
			if e < len(s) && s[e] == '=' {
				return sc.replaceArg(e+1, true)
			}
			return sc.replaceArg(sc.nextArg(e), true)
		}
	}
	v := sc.nextArg(e)
	if v == e || v == len(s) || s[v] == '-' || s[v] == '\n' {
		return -1 // no value, or the next flag
	}
	pv := v
	if isQuote(s[pv]) {
		pv++
	}
	// openssl's -passin pass:X, whatever the flag.
	openssl := strings.HasPrefix(s[pv:], "pass:")
	if !openssl && (sc.keyKind(s[i:e]) != keySecret || takesNoValue(name)) {
		return -1
	}
	from, to := sc.arg(v)
	if openssl {
		from += len("pass:")
	}
	if keep, end := sc.reference(from); keep {
		return end
	}
	if to <= from || notSecret(s[from:to]) || strings.HasPrefix(s[from:], tncomessage.Redacted) {
		return -1
	}
	sc.replace(from, to)
	return to
}

// nextArg returns where the argument after a flag that ends at e starts:
// after blanks, or after the '", "' of a JSON array of arguments
// (["sshpass", "-p", "x"]); e when nothing follows the flag.
func (sc *scanner) nextArg(e int) int {
	s := sc.s
	if e < len(s) && isQuote(s[e]) {
		i := e + 1
		if i < len(s) && s[i] == ',' {
			i++
		}
		i = sc.blanks(i)
		if i > e+1 && i < len(s) && s[i] == s[e] {
			return i
		}
		return e
	}
	return sc.blanks(e)
}

// replaceArg replaces the argument at i (after its first colon when
// userPass: curl's user:password) and returns its end, or -1.
func (sc *scanner) replaceArg(i int, userPass bool) int {
	s := sc.s
	if i >= len(s) || s[i] == '\n' {
		return -1
	}
	from, to := sc.arg(i)
	if userPass {
		c := strings.IndexByte(s[from:to], ':')
		if c < 0 {
			return -1 // curl asks for the password
		}
		from += c + 1
	}
	if to <= from || strings.HasPrefix(s[from:], tncomessage.Redacted) {
		return -1
	}
	sc.replace(from, to)
	return to
}

// takesNoValue reports a secret-named flag whose argument is not the
// secret: --password-stdin, --token-file.
func takesNoValue(name string) bool {
	for _, suffix := range [...]string{"stdin", "file", "path", "dir", "env", "name"} {
		if hasSuffixFold(name, suffix) {
			return true
		}
	}
	return false
}

// userInfo replaces the password of the URL whose authority starts at a:
// scheme://user:password@host. The password may hold any byte but a
// blank, a quote or the URL's own delimiters. It returns where the scan
// goes on (past the user info when it replaced the password), or -1.
func (sc *scanner) userInfo(a int) int {
	s := sc.s
	colon, at := -1, -1
	i := a
	for ; i < len(s); i++ {
		sc.steps++
		c := s[i]
		if endsAuthority[c] || colon < 0 && endsValue[c] {
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
	if strings.Trim(s[colon+1:at], "*") == "" {
		return at // masked already: https://__token__:****@host
	}
	sc.replace(colon+1, at)
	return at
}

// word looks at the word that starts at i for a command whose flags hold
// a password, a bearer or basic credential, a JWT or a well-known token.
// It returns the end of what it replaced, or -1.
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
	case 'c', 'm', 's', 'h', 'p', 'd':
		if (i == 0 || opensWord(s[i-1]) || s[i-1] == '/') && i+2 < len(s) && commandStart(s[i], s[i+1]) {
			if next, ok := sc.command(i); ok {
				return next
			}
		}
	}
	for _, p := range prefixesBy[s[i]] {
		if strings.HasPrefix(s[i:], p.prefix) {
			return sc.token(i, p)
		}
	}
	return -1
}

// command notes a command whose flags carry a password (the rest of the
// line is read as its flags), or parses the arguments of htpasswd and a
// .netrc entry. It reports whether the word at i was one.
func (sc *scanner) command(i int) (int, bool) {
	s := sc.s
	e := i
	for e < len(s) && e-i < 16 && (s[e] >= 'a' && s[e] <= 'z' || s[e] == '-') {
		sc.steps++
		e++
	}
	if e < len(s) && !opensWord(s[e]) && s[e] != ',' {
		return -1, false
	}
	switch name := s[i:e]; name {
	case "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mariadb", "mariadb-dump", "mariadb-admin":
		sc.cmd = cmdMySQL
	case "curl":
		sc.cmd = cmdCurl
	case "sshpass":
		sc.cmd = cmdSSHPass
	case "htpasswd":
		if i >= sc.parsedTo {
			return sc.htpasswd(e), true
		}
	case "machine", "default":
		if i >= sc.parsedTo {
			return sc.netrc(i), true
		}
	case "password":
		// An indented .netrc line of its own: "  password p".
		if d := i - sc.lineAt; d > 0 && d <= maxAlign && strings.TrimLeft(s[sc.lineAt:i], " \t") == "" && e < len(s) && s[e] == ' ' {
			from, to := sc.arg(e + 1)
			if to > from && (to == len(s) || s[to] == '\n' || s[to] == '\r') {
				sc.replace(from, to)
				return to, true
			}
		}
	default:
		return -1, false
	}
	return e, true
}

// commandStart reports whether a word that starts with a, b may be one of
// command's names.
func commandStart(a, b byte) bool {
	switch string([]byte{a, b}) {
	case "my", "ma", "cu", "ss", "ht", "pa", "de":
		return true
	}
	return false
}

// htpasswd replaces the password of "htpasswd -b[c] file user password"
// (or -nb user password) whose arguments start at i.
func (sc *scanner) htpasswd(i int) int {
	s := sc.s
	batch, noFile := false, false
	pos := 0
	for i < len(s) {
		sc.steps++
		switch s[i] {
		case ' ', '\t', ',', '"', '\'', '[':
			i++ // blanks, and the quotes and commas of a JSON array
			continue
		}
		to := i
		for to < len(s) && !endsArg[s[to]] && s[to] != ',' && s[to] != ']' {
			sc.steps++
			to++
		}
		if to == i {
			break // the command's end
		}
		if s[i] == '-' && pos == 0 {
			batch = batch || strings.IndexByte(s[i:to], 'b') > 0
			noFile = noFile || strings.IndexByte(s[i:to], 'n') > 0
		} else if pos++; batch && (pos == 3 || noFile && pos == 2) {
			sc.parsedTo = to
			sc.replace(i, to)
			return to
		}
		i = to
	}
	sc.parsedTo = i
	return i
}

// netrc replaces the passwords of the .netrc entries that start at i
// (machine h login u password p, on one line or several).
func (sc *scanner) netrc(i int) int {
	s := sc.s
	end := -1
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			sc.steps++
			i++
		}
		from, to := sc.arg(i)
		if to <= from {
			break
		}
		kw := s[from:to]
		if kw == "default" {
			i = to
			continue
		}
		if kw != "machine" && kw != "login" && kw != "password" && kw != "account" && kw != "port" {
			break
		}
		v := to
		for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
			sc.steps++
			v++
		}
		vf, vt := sc.arg(v)
		if vt <= vf {
			break
		}
		if kw == "password" {
			sc.replace(vf, vt)
			end = vt
		}
		i = vt
		if i < len(s) && isQuote(s[i]) {
			i++
		}
	}
	sc.parsedTo = i
	if end < 0 {
		return -1
	}
	return end
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
	if i < sc.noJWT {
		return -1 // inside the header of one that was no token: so is this
	}
	e := i
	for seg := 0; seg < 3; seg++ {
		start := e
		for e < len(s) && isTokenByte(s[e], setWord) {
			sc.steps++
			e++
		}
		if seg == 0 {
			// A start later in this run reads the same segments from its
			// end on: it fails as this one does.
			sc.noJWT = e
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
	for e < len(s) && isTokenByte(s[e], p.set) && !(p.exact && e-i-len(p.prefix) > p.min) {
		sc.steps++
		e++
	}
	n := e - i - len(p.prefix)
	if n < p.min || p.exact && n != p.min || e < len(s) && (isWordByte(s[e]) || p.set == setAlnum && s[e] == '-') {
		return -1
	}
	sc.replace(i, e)
	return e
}

// Token alphabets.
const (
	setWord   byte = iota // letters, digits, '_' and '-'
	setAlnum              // letters and digits
	setUpper              // upper-case letters and digits
	setDotted             // setWord and '.'
)

// tokenPrefix is a kind of token a secret scanner knows by its prefix:
// min characters of its alphabet (set) follow it (exactly min when
// exact).
type tokenPrefix struct {
	prefix string
	min    int
	exact  bool
	set    byte
}

// tokenPrefixes are the prefixes of well-known tokens, after the rules of
// the gitleaks secret scanner; the tail lengths are lower bounds that keep
// words such as "ghp_" in prose apart from tokens, and the alphabets keep
// identifiers (hf_hub_download, npm_package_name) apart from them.
var tokenPrefixes = []tokenPrefix{
	// GitHub: personal, OAuth, user-to-server, server-to-server, refresh,
	// fine-grained personal.
	{prefix: "ghp_", min: 30, set: setAlnum}, {prefix: "gho_", min: 30, set: setAlnum}, {prefix: "ghu_", min: 30, set: setAlnum},
	{prefix: "ghs_", min: 30, set: setAlnum}, {prefix: "ghr_", min: 30, set: setAlnum}, {prefix: "github_pat_", min: 40},
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
	{prefix: "AKIA", min: 16, exact: true, set: setUpper}, {prefix: "ASIA", min: 16, exact: true, set: setUpper},
	{prefix: "ABIA", min: 16, exact: true, set: setUpper}, {prefix: "ACCA", min: 16, exact: true, set: setUpper},
	{prefix: "AGPA", min: 16, exact: true, set: setUpper}, {prefix: "AIDA", min: 16, exact: true, set: setUpper},
	{prefix: "AROA", min: 16, exact: true, set: setUpper}, {prefix: "AIPA", min: 16, exact: true, set: setUpper},
	{prefix: "ANPA", min: 16, exact: true, set: setUpper}, {prefix: "ANVA", min: 16, exact: true, set: setUpper},
	// Google API key; age secret key.
	{prefix: "AIza", min: 35}, {prefix: "AGE-SECRET-KEY-1", min: 58, set: setUpper},
	// Stripe live and test secret and restricted keys.
	{prefix: "sk_live_", min: 20}, {prefix: "sk_test_", min: 20}, {prefix: "rk_live_", min: 20}, {prefix: "rk_test_", min: 20},
	// Anthropic and OpenAI API keys.
	{prefix: "sk-ant-", min: 30}, {prefix: "sk-proj-", min: 30},
	// npm, PyPI, Docker Hub, DigitalOcean, Hugging Face, Shopify,
	// Square, Grafana, SendGrid (SG.<22>.<43>).
	{prefix: "npm_", min: 36, exact: true, set: setAlnum}, {prefix: "pypi-AgEIcHlwaS5vcmc", min: 50},
	{prefix: "dckr_pat_", min: 20}, {prefix: "dop_v1_", min: 60}, {prefix: "doo_v1_", min: 60},
	{prefix: "hf_", min: 30, set: setAlnum}, {prefix: "shpat_", min: 32}, {prefix: "shpss_", min: 32},
	{prefix: "shpca_", min: 32}, {prefix: "shppa_", min: 32},
	{prefix: "sq0atp-", min: 22}, {prefix: "sq0csp-", min: 40},
	{prefix: "glc_", min: 32}, {prefix: "glsa_", min: 32},
	{prefix: "SG.", min: 60, set: setDotted},
	// HashiCorp Vault service and batch tokens.
	{prefix: "hvs.", min: 24}, {prefix: "hvb.", min: 24},
}

// prefixesBy are the token prefixes by their first byte; interesting
// marks the bytes the scan stops at.
var (
	prefixesBy    [256][]tokenPrefix
	interesting   [256]bool
	endsValue     [256]bool
	endsArg       [256]bool
	endsAuthority [256]bool
)

func init() {
	for _, p := range tokenPrefixes {
		prefixesBy[p.prefix[0]] = append(prefixesBy[p.prefix[0]], p)
		interesting[p.prefix[0]] = true
	}
	for _, c := range "=: Bbe-\ncmshpd" {
		interesting[c] = true
	}
	for _, c := range " \t\r\n;,&|)}]'\"`<>" {
		endsValue[c] = true
	}
	for _, c := range " \t\r\n;&|'\"`<>" {
		endsArg[c] = true
	}
	for _, c := range " \t\r\n/?#\"`<>\\" {
		endsAuthority[c] = true
	}
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// isWordByte: a byte that continues a word, so that a prefix in the middle
// of one ("xghp_") is not a token's start.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// opensWord: a byte after which a command-line word starts.
func opensWord(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '"', '\'', '(', '`', ';', '|', '&', '[':
		return true
	}
	return false
}

func isTokenByte(c byte, set byte) bool {
	switch set {
	case setUpper:
		return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	case setAlnum:
		return isLetter(c) || c >= '0' && c <= '9'
	case setDotted:
		return isWordByte(c) || c == '-' || c == '.'
	}
	return isWordByte(c) || c == '-'
}

func isCredentialByte(c byte) bool {
	return isWordByte(c) || c == '-' || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return v != ""
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}
