package redact

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
)

var update = flag.Bool("update", false, "rewrite the collector's rules in collector-config/progress.yaml and the shape table in docs/reliability.md from Table")

const (
	collectorConfig = "../../../collector-config/progress.yaml"
	reliabilityDoc  = "../../../docs/reliability.md"
)

// marked splits a text with «secret» marks into the text and the spans.
func marked(s string) (string, [][2]int) {
	var b strings.Builder
	var spans [][2]int
	for {
		i := strings.Index(s, "«")
		if i < 0 {
			b.WriteString(s)
			return b.String(), spans
		}
		j := strings.Index(s[i:], "»") + i
		b.WriteString(s[:i])
		start := b.Len()
		b.WriteString(s[i+len("«") : j])
		spans = append(spans, [2]int{start, b.Len()})
		s = s[j+len("»"):]
	}
}

// TestTableExamples: the library replaces exactly the marked secret of
// each shape's example, and leaves each look-alike as it is.
func TestTableExamples(t *testing.T) {
	r := New(true, DefaultKeys...)
	for _, sh := range Table {
		text, want := marked(sh.Example)
		got := r.Spans(text)
		if r.SecretValue(text) {
			got = [][2]int{{0, len(text)}}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q: replaced %v, want %v", sh.Name, text, got, want)
		}
		for _, a := range sh.Avoids {
			if r.SecretValue(a) {
				t.Errorf("%s: %q is taken for a private key", sh.Name, a)
			} else if out, _ := r.Shapes(a); out != a {
				t.Errorf("%s: %q became %q", sh.Name, a, out)
			}
		}
	}
}

// collectorList reads the list under "    name:" in the redaction
// section of progress.yaml: its items, unquoted.
func collectorList(t *testing.T, yaml, name string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(yaml, "\n  redaction: &redaction\n")
	if !ok {
		t.Fatal("progress.yaml has no redaction section")
	}
	_, rest, ok = strings.Cut(rest, "\n    "+name+":\n")
	if !ok {
		t.Fatalf("progress.yaml's redaction has no %s", name)
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "#"):
		case strings.HasPrefix(line, "      - '") && strings.HasSuffix(line, "'"):
			out = append(out, strings.ReplaceAll(line[len("      - '"):len(line)-1], "''", "'"))
		case strings.HasPrefix(line, "      - "):
			t.Fatalf("progress.yaml: %s: an item not in single quotes: %s", name, line)
		default:
			return out
		}
	}
	return out
}

// collectorSection is the generated part of progress.yaml's redaction
// section: its key patterns and blocked values, from Table.
func collectorSection() string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	var b strings.Builder
	b.WriteString("    blocked_key_patterns:\n      - " + q(KeyPattern()) + "\n")
	b.WriteString("    blocked_values:\n")
	b.WriteString("      # Generated from the shape table, progress/internal/redact.Table:\n")
	b.WriteString("      # go test ./progress/internal/redact -run TestCollectorRulesAgree -update\n")
	for _, sh := range Table {
		if len(sh.Collector) == 0 {
			continue
		}
		b.WriteString("      # " + sh.Name + ".\n")
		for _, rule := range sh.Collector {
			b.WriteString("      - " + q(rule) + "\n")
		}
	}
	return b.String()
}

// TestCollectorRulesAgree: the collector's redaction rules are the
// table's (a key pattern from DefaultKeys, every shape's blocked values,
// in order), and they take out, from every shape's example and every
// text of the labelled corpus, every secret byte the library takes out.
func TestCollectorRulesAgree(t *testing.T) {
	raw, err := os.ReadFile(collectorConfig)
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(raw)
	if *update {
		begin := strings.Index(yaml, "    blocked_key_patterns:\n")
		end := strings.Index(yaml, "    summary: silent\n")
		if begin < 0 || end < begin {
			t.Fatal("progress.yaml: no blocked_key_patterns ... summary section to rewrite")
		}
		yaml = yaml[:begin] + collectorSection() + yaml[end:]
		if err := os.WriteFile(collectorConfig, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := collectorList(t, yaml, "blocked_key_patterns"), []string{KeyPattern()}; !slices.Equal(got, want) {
		t.Errorf("progress.yaml's blocked_key_patterns are not the table's (-update rewrites them):\n got %q\nwant %q", got, want)
	}
	if got, want := collectorList(t, yaml, "blocked_values"), CollectorRules(); !slices.Equal(got, want) {
		for i := range max(len(got), len(want)) {
			g, w := "", ""
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("progress.yaml's blocked_values differ from the table's from item %d (-update rewrites them):\n got %q\nwant %q", i, g, w)
				break
			}
		}
	}

	var rules []*regexp.Regexp
	for _, rule := range CollectorRules() {
		rules = append(rules, regexp.MustCompile(rule))
	}
	keys := regexp.MustCompile(KeyPattern())
	collector := func(s string) string {
		for _, re := range rules {
			s = re.ReplaceAllString(s, "****")
		}
		return s
	}
	type text struct {
		where string
		text  string
		spans [][2]int
	}
	var texts []text
	for _, sh := range Table {
		s, spans := marked(sh.Example)
		texts = append(texts, text{"Table: " + sh.Name, s, spans})
	}
	for _, l := range redactcorpus.Corpus {
		texts = append(texts, text{fmt.Sprintf("corpus.txt:%d", l.Line), l.Text, l.Spans})
	}
	for _, tx := range texts {
		if leaked := leftOf(tx.text, tx.spans, collector(tx.text)); leaked != "" {
			t.Errorf("%s: the collector's rules leave %q of a secret in %q:\n%q", tx.where, leaked, tx.text, collector(tx.text))
		}
	}
	// Keys: every key the library calls secret, the collector masks.
	r := New(true, DefaultKeys...)
	for _, k := range append(slices.Clone(DefaultKeys), "DB_PASS", "MYSQL_PWD", "smtp.pass", "x-api-key", "Api-Key", "SharedAccessKey",
		"AWS_SECRET_ACCESS_KEY", "client_secret", "no_log", "Private Key", "pass_word") {
		if r.SecretKey(k) && !keys.MatchString(k) {
			t.Errorf("key %q: secret to the library, not to the collector's blocked_key_patterns", k)
		}
	}
}

// leftOf returns a piece (8 bytes) of a secret of text (its spans) that
// is still in out and is not also in text's other bytes, or "".
func leftOf(text string, spans [][2]int, out string) string {
	const w = 8
	last := 0
	var plain strings.Builder
	for _, sp := range spans {
		plain.WriteString(text[last:sp[0]] + "\x00")
		last = sp[1]
	}
	plain.WriteString(text[last:])
	for _, sp := range spans {
		secret := text[sp[0]:sp[1]]
		if len(secret) < w && strings.Contains(out, secret) {
			return secret
		}
		for i := 0; i+w <= len(secret); i++ {
			piece := secret[i : i+w]
			if strings.Contains(out, piece) && !strings.Contains(plain.String(), piece) && !strings.Contains(piece, "\n") {
				return piece
			}
		}
	}
	return ""
}

// shapeTable is the table of docs/reliability.md, from Table.
func shapeTable() string {
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "\n", "⏎")
		s = strings.ReplaceAll(s, "|", `\|`)
		if strings.Contains(s, "`") {
			return "``" + s + "``"
		}
		return "`" + s + "`"
	}
	var b strings.Builder
	b.WriteString("| Shape | Example (the secret between « and ») | Kept as it is |\n|---|---|---|\n")
	for _, sh := range Table {
		var avoids []string
		for _, a := range sh.Avoids {
			avoids = append(avoids, cell(a))
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.ReplaceAll(sh.Name, "|", `\|`), cell(sh.Example), strings.Join(avoids, ", "))
	}
	return b.String()
}

const (
	tableBegin = "<!-- shapes: generated from progress/internal/redact.Table by go test ./progress/internal/redact -run TestDocsShapeTable -update -->\n"
	tableEnd   = "<!-- shapes: end -->\n"
)

// TestDocsShapeTable: docs/reliability.md shows the table as it is.
func TestDocsShapeTable(t *testing.T) {
	raw, err := os.ReadFile(reliabilityDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin, end := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("docs/reliability.md has no %q ... %q", tableBegin, tableEnd)
	}
	got := doc[begin+len(tableBegin) : end]
	if want := shapeTable(); got != want {
		if !*update {
			t.Fatalf("docs/reliability.md's shape table is not Table's (-update rewrites it):\n%s", want)
		}
		doc = doc[:begin+len(tableBegin)] + want + doc[end:]
		if err := os.WriteFile(reliabilityDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
