package terraform

import (
	"cmp"
	"slices"
	"strings"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// MinSensitiveValueLen is the shortest sensitive value that is searched for
// and replaced (see WithSensitiveValues). Shorter values ("1", "yes") occur
// everywhere by chance: replacing them would garble every address and line
// while protecting nothing a guess would not find.
const MinSensitiveValueLen = 4

// scrubber redacts free text before it becomes an event, a span attribute,
// a Result field or an error: provisioner output, diagnostics, log lines,
// stderr. The Recorder redacts details by key and PEM shape afterwards;
// free text needs more, because a secret in it has no key of its own:
//   - the exact sensitive values the driver knows (WithSensitiveValues,
//     Command.SensitiveVars);
//   - "key=value" and "key: value" pairs whose key the Redactor calls
//     secret (TOKEN=…, "password": "…", Authorization: Bearer …), and
//     passwords in URLs (scheme://user:password@host);
//   - PEM private keys, which a provisioner prints one line at a time: from
//     the BEGIN line to the END line, every line is redacted.
//
// text and value are safe for concurrent use; line is used by the decoder
// goroutine only.
type scrubber struct {
	redactor *progress.Redactor
	values   *strings.Replacer // nil without sensitive values
	inKey    map[string]bool   // provisioner streams inside a private key block
}

func newScrubber(r *progress.Redactor, sensitive []string) *scrubber {
	s := &scrubber{redactor: r, inKey: map[string]bool{}}
	var vals []string
	for _, v := range sensitive {
		if len(v) >= MinSensitiveValueLen && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	if len(vals) > 0 {
		// Longest first, so that a value containing another is replaced
		// whole: strings.Replacer tries the old strings in argument order.
		slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, v, wire.Redacted)
		}
		s.values = strings.NewReplacer(pairs...)
	}
	return s
}

// value replaces the sensitive values in v; for identifiers and values
// that are not free text.
func (s *scrubber) value(v string) string {
	if s.values == nil || v == "" {
		return v
	}
	return s.values.Replace(v)
}

// text redacts free text of one or more lines.
func (s *scrubber) text(v string) string {
	v = s.value(v)
	if !mayHoldSecret(v) {
		return v
	}
	if !strings.Contains(v, "\n") {
		inKey := false
		return s.redactLine(v, &inKey)
	}
	lines := strings.Split(v, "\n")
	inKey := false
	for i, l := range lines {
		lines[i] = s.redactLine(l, &inKey)
	}
	return strings.Join(lines, "\n")
}

// line redacts one line of a provisioner's output; stream names the
// provisioner run, so that a private key block is followed across its
// lines.
func (s *scrubber) line(stream, v string) string {
	v = s.value(v)
	inKey := s.inKey[stream]
	if !inKey && !mayHoldSecret(v) {
		return v
	}
	out := s.redactLine(v, &inKey)
	if inKey {
		s.inKey[stream] = true
	} else {
		delete(s.inKey, stream)
	}
	return out
}

// endStream forgets the state of a provisioner run.
func (s *scrubber) endStream(stream string) { delete(s.inKey, stream) }

// mayHoldSecret is the fast path: a line without a separator or a PEM
// boundary has nothing for redactLine to find.
func mayHoldSecret(v string) bool {
	return strings.ContainsAny(v, "=:") || strings.Contains(v, "-----")
}

// redactLine redacts one line; inKey carries "inside a private key block"
// from line to line.
func (s *scrubber) redactLine(v string, inKey *bool) string {
	if s.redactor == nil {
		return v
	}
	if *inKey {
		if isPEMEnd(v) {
			*inKey = false
		}
		return wire.Redacted
	}
	if s.redactor.SecretValue(v) {
		*inKey = !isPEMEnd(v)
		return wire.Redacted
	}
	return redactURLPasswords(redactPairs(v, s.redactor))
}

// isPEMEnd reports a line holding the END boundary of a private key.
func isPEMEnd(v string) bool {
	i := strings.Index(v, "-----END ")
	return i >= 0 && strings.Contains(v[i:], "PRIVATE KEY-----")
}

// redactPairs replaces the value of every "key=value" or "key: value" pair
// of line whose key r calls secret. The value ends at its closing quote
// when quoted, at the quote that opened the key when the key sits inside
// quotes ("Authorization: Bearer x"), at a space or shell separator after
// '=', and at the end of the line after ':'.
func redactPairs(line string, r *progress.Redactor) string {
	var b strings.Builder
	last := 0 // line[:last] is decided
	for j := 0; j < len(line); j++ {
		sep := line[j]
		if sep != '=' && sep != ':' {
			continue
		}
		// The key: before the separator, past spaces and a closing quote.
		k := j
		for k > last && line[k-1] == ' ' {
			k--
		}
		var keyQuote byte
		if k > last && isQuote(line[k-1]) {
			keyQuote = line[k-1]
			k--
		}
		end := k
		for k > last && isKeyByte(line[k-1]) {
			k--
		}
		if k == end {
			continue
		}
		var context byte // the quote the pair sits in
		if keyQuote != 0 {
			if k == last || line[k-1] != keyQuote {
				continue // a quote after a bare word: not a key
			}
		} else if k > last && isQuote(line[k-1]) {
			context = line[k-1]
		}
		if !r.SecretKey(line[k:end]) {
			continue
		}
		if sep == ':' && strings.HasPrefix(line[j+1:], "//") {
			continue // a URL's scheme; redactURLPasswords handles it
		}
		// The value.
		v := j + 1
		for v < len(line) && (line[v] == ' ' || line[v] == '\t') {
			v++
		}
		if v == len(line) {
			break
		}
		var e int
		switch {
		case isQuote(line[v]):
			q := line[v]
			v++
			e = v + strings.IndexByte(line[v:], q)
			if e < v {
				e = len(line)
			}
		case context != 0:
			e = v + strings.IndexByte(line[v:], context)
			if e < v {
				e = len(line)
			}
		case keyQuote != 0 || sep == '=':
			e = v + strings.IndexAny(line[v:], " \t;,&|)}]'\"")
			if e < v {
				e = len(line)
			}
		default:
			e = len(line)
		}
		if e == v {
			continue
		}
		b.WriteString(line[last:v])
		b.WriteString(wire.Redacted)
		last = e
		j = e - 1
	}
	if last == 0 {
		return line
	}
	b.WriteString(line[last:])
	return b.String()
}

// redactURLPasswords replaces the password of every scheme://user:password@
// in line.
func redactURLPasswords(line string) string {
	if !strings.Contains(line, "://") {
		return line
	}
	var b strings.Builder
	last, pos := 0, 0
	for {
		i := strings.Index(line[pos:], "://")
		if i < 0 {
			break
		}
		start := pos + i + 3
		// The authority ends at the first '/', space or quote.
		auth := line[start:]
		if n := strings.IndexAny(auth, "/ \t\"'"); n >= 0 {
			auth = auth[:n]
		}
		if at := strings.LastIndexByte(auth, '@'); at > 0 {
			if c := strings.IndexByte(auth[:at], ':'); c >= 0 && c+1 < at {
				b.WriteString(line[last : start+c+1])
				b.WriteString(wire.Redacted)
				last = start + at
			}
		}
		pos = start + len(auth)
	}
	if last == 0 {
		return line
	}
	b.WriteString(line[last:])
	return b.String()
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
