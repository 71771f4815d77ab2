package tncoprocessor

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/redactionprocessor"
)

// rules are the redaction processor's rules, applied with the same result
// and a cheaper test: every regular expression has a prefilter (matcher).
// They cover the options the shipped configuration uses; rulesFor refuses
// a configuration that needs more, so that the collector does not start
// with a redaction it would not apply.
type rules struct {
	keys   []*matcher // blocked_key_patterns
	values []*matcher // blocked_values
	// anyValue: one pass over a string tells whether any blocked value
	// may match (the common answer is no), instead of a search per literal.
	anyValue literalIndex
	// numbersClean and boolsClean: no blocked value's literal can be in
	// the text of a number (digits, "-", "+", ".", "e") or of a bool
	// ("true", "false"), so no blocked value can match one.
	numbersClean, boolsClean bool
}

// inNumberText reports whether literal l could be in the text of a
// number; inBoolText, of a bool.
func inNumberText(l literal) bool {
	return strings.Trim(l.s, "0123456789-+.e") == ""
}

func inBoolText(l literal) bool {
	return strings.Contains("true", l.s) || strings.Contains("false", l.s)
}

// literalIndex finds, in one pass over a text, whether it contains any of
// a set of literals, held by their first byte (exact and folded apart).
type literalIndex struct {
	exact, folded [256][]string
	hasFolded     bool
}

func (x *literalIndex) add(l literal) {
	if l.fold {
		x.folded[l.s[0]] = append(x.folded[l.s[0]], l.s)
		x.hasFolded = true
		return
	}
	x.exact[l.s[0]] = append(x.exact[l.s[0]], l.s)
}

// any reports whether s (or, for the folded literals, s folded) contains
// one of the literals.
func (x *literalIndex) any(s string, fold *folder) bool {
	if containsAny(s, &x.exact) {
		return true
	}
	return x.hasFolded && containsAny(fold.of(s), &x.folded)
}

func containsAny(s string, by *[256][]string) bool {
	for i := 0; i < len(s); i++ {
		for _, l := range by[s[i]] {
			if strings.HasPrefix(s[i:], l) {
				return true
			}
		}
	}
	return false
}

// rulesFor returns the rules of cfg, or the option it does not implement.
func rulesFor(cfg *redactionprocessor.Config) (*rules, error) {
	switch {
	case !cfg.AllowAllKeys:
		return nil, fmt.Errorf("allow_all_keys is false")
	case len(cfg.IgnoredKeys) > 0 || len(cfg.IgnoredKeyPatterns) > 0:
		return nil, fmt.Errorf("ignored keys are set")
	case len(cfg.AllowedValues) > 0:
		return nil, fmt.Errorf("allowed_values are set")
	case cfg.RedactAllTypes:
		return nil, fmt.Errorf("redact_all_types is set")
	case cfg.HashFunction != "" && cfg.HashFunction != redactionprocessor.None:
		return nil, fmt.Errorf("hash_function is %s", cfg.HashFunction)
	case cfg.Summary != "silent":
		return nil, fmt.Errorf("summary is %q, not silent", cfg.Summary)
	case cfg.URLSanitization.Enabled:
		return nil, fmt.Errorf("url_sanitizer is enabled")
	case cfg.DBSanitizer.SQLConfig.Enabled || cfg.DBSanitizer.RedisConfig.Enabled || cfg.DBSanitizer.ValkeyConfig.Enabled ||
		cfg.DBSanitizer.MemcachedConfig.Enabled || cfg.DBSanitizer.MongoConfig.Enabled ||
		cfg.DBSanitizer.OpenSearchConfig.Enabled || cfg.DBSanitizer.ESConfig.Enabled:
		return nil, fmt.Errorf("db_sanitizer is enabled")
	}
	r := &rules{numbersClean: true, boolsClean: true}
	for i, p := range append(slices.Clone(cfg.BlockedKeyPatterns), cfg.BlockedValues...) {
		m, err := newMatcher(p)
		if err != nil {
			return nil, err
		}
		if i < len(cfg.BlockedKeyPatterns) {
			r.keys = append(r.keys, m)
			continue
		}
		if m.lits == nil {
			// Every scalar is tested through its text (AsString):
			// without a literal that text cannot be ruled out cheaply.
			return nil, fmt.Errorf("blocked value %q has no literal every match contains", p)
		}
		for _, l := range m.lits {
			r.anyValue.add(l)
			r.numbersClean = r.numbersClean && !inNumberText(l)
			r.boolsClean = r.boolsClean && !inBoolText(l)
		}
		r.values = append(r.values, m)
	}
	return r, nil
}

// check is the rules with the answers for the keys seen so far: the same
// keys come in every record, and a map lookup is a fraction of a test.
// Each work has its own, so no lock.
type check struct {
	*rules
	keys map[string]bool
	// clean holds short texts in which no blocked value matched: the same
	// task names, hosts and messages come in record after record.
	clean map[string]struct{}
	fold  folder
	text  []byte // a scalar's text (redactBody)
}

// maxCachedKeys and maxCachedKeyLen bound what a check remembers: a driver
// inventing keys cannot grow it without limit.
const (
	maxCachedKeys   = 4096
	maxCachedKeyLen = 256
)

// keyBlocked reports whether a key's value is masked.
func (c *check) keyBlocked(k string) bool {
	if b, ok := c.keys[k]; ok {
		return b
	}
	c.fold.reset()
	b := slices.ContainsFunc(c.rules.keys, func(m *matcher) bool { return m.mayMatch(k, &c.fold) && m.re.MatchString(k) })
	if len(c.keys) < maxCachedKeys && len(k) <= maxCachedKeyLen {
		c.keys[strings.Clone(k)] = b
	}
	return b
}

// mask is the value of a blocked key: every run of characters other than
// a newline becomes "****" (the processor's ".*" replacement), so
// "a\nb" becomes "****\n****" and "" becomes "****".
func mask(s string) string {
	return strings.Repeat("****\n", strings.Count(s, "\n")) + "****"
}

// maskValues replaces the matches of every blocked value in s by "****".
func (c *check) maskValues(s string) string {
	if _, ok := c.clean[s]; ok {
		return s
	}
	c.fold.reset()
	if !c.anyValue.any(s, &c.fold) {
		c.remember(s)
		return s // no matcher's literal: none can match
	}
	in := s
	for _, m := range c.values {
		if m.mayMatch(s, &c.fold) && m.re.MatchString(s) {
			s = m.re.ReplaceAllString(s, "****")
			c.fold.reset()
		}
	}
	if s == in {
		c.remember(s) // a literal, and yet no match ("globex" holds "log")
	}
	return s
}

// A matcher is one regular expression with a prefilter: literals of which
// every match contains one. Go's regexp tries every start position (with
// case folding under (?i): about 8 µs an attribute key in the stock
// processor). No literal in the text means no match, the common answer;
// otherwise the regexp decides.
type matcher struct {
	re   *regexp.Regexp
	lits []literal // nil: no prefilter, the regexp always runs
}

// literal is a string a match contains: as it is, or, when fold, in the
// text folded to lower-case ASCII (foldASCII).
type literal struct {
	s    string
	fold bool
}

func newMatcher(pattern string) (*matcher, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	m := &matcher{re: re}
	if lits, ok := required(tree); ok && minLen(lits) > 0 {
		m.lits = lits
	}
	return m, nil
}

func (m *matcher) mayMatch(s string, fold *folder) bool {
	if m.lits == nil {
		return true
	}
	for _, l := range m.lits {
		if l.fold {
			if strings.Contains(fold.of(s), l.s) {
				return true
			}
		} else if strings.Contains(s, l.s) {
			return true
		}
	}
	return false
}

// required returns literals of which every match of re contains one, or
// false when it cannot tell.
func required(re *syntax.Regexp) ([]literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		var b strings.Builder
		for _, r := range re.Rune {
			switch {
			case !fold:
				b.WriteRune(r)
			case r < utf8.RuneSelf:
				b.WriteByte(lowerASCII(byte(r)))
			default:
				return nil, false // folded non-ASCII: not worth the tables
			}
		}
		return []literal{{b.String(), fold}}, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []literal
		found := false
		for _, sub := range re.Sub {
			if lits, ok := required(sub); ok && (!found || minLen(lits) > minLen(best)) {
				best, found = lits, true
			}
		}
		return best, found
	case syntax.OpAlternate:
		var all []literal
		for _, sub := range re.Sub {
			lits, ok := required(sub)
			if !ok {
				return nil, false
			}
			all = append(all, lits...)
		}
		return all, true
	}
	return nil, false
}

func minLen(lits []literal) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return max(n, 0)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// folder holds a text folded once for all the matchers that need it.
type folder struct {
	done bool
	s    string
	buf  []byte
}

func (f *folder) reset() { f.done = false }

// of returns s folded: ASCII letters in lower case, and the two non-ASCII
// runes whose case folding reaches ASCII (ſ U+017F to s, the Kelvin sign
// U+212A to k) as those letters; every other non-ASCII rune becomes one
// byte 0x80, which no ASCII literal contains. A folded literal is in the
// folded text exactly when (?i) could match it in the text.
func (f *folder) of(s string) string {
	if f.done {
		return f.s
	}
	b := f.buf[:0]
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, lowerASCII(c))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case 'ſ':
			b = append(b, 's')
		case 'K':
			b = append(b, 'k')
		default:
			b = append(b, 0x80)
		}
		i += size
	}
	f.buf = b
	// A view of f.buf, read only until the next reset.
	f.s, f.done = unsafe.String(unsafe.SliceData(b), len(b)), true
	return f.s
}

// remember records that no blocked value matches s, when s is short and
// the cache has room.
func (c *check) remember(s string) {
	if len(c.clean) < maxCachedKeys && len(s) <= maxCachedKeyLen {
		if c.clean == nil {
			c.clean = map[string]struct{}{}
		}
		c.clean[strings.Clone(s)] = struct{}{}
	}
}
