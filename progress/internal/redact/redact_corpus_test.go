package redact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
)

// Floors of the labelled corpus's figures (docs/reliability.md).
const (
	minRecall    = 1.0
	minPrecision = 0.99
)

// corpusFigures are the labelled corpus's recall (secret bytes replaced)
// and precision (other bytes kept) under the default rules, and the
// texts that miss a secret byte or replace another.
func corpusFigures(r *Rules) (recall, precision float64, misses, over []string) {
	var secret, caught, plain, kept int
	for _, l := range redactcorpus.Corpus {
		var got [][2]int
		if r.SecretValue(l.Text) {
			got = [][2]int{{0, len(l.Text)}}
		} else {
			got = r.Spans(l.Text)
		}
		inSecret := mask(len(l.Text), l.Spans)
		replaced := mask(len(l.Text), got)
		var missed, lost strings.Builder
		for i := range l.Text {
			switch {
			case inSecret[i]:
				secret++
				if replaced[i] {
					caught++
				} else {
					missed.WriteByte(l.Text[i])
				}
			default:
				plain++
				if !replaced[i] {
					kept++
				} else {
					lost.WriteByte(l.Text[i])
				}
			}
		}
		if missed.Len() > 0 {
			misses = append(misses, fmt.Sprintf("corpus.txt:%d: %q kept %q", l.Line, l.Text, missed.String()))
		}
		if lost.Len() > 0 {
			over = append(over, fmt.Sprintf("corpus.txt:%d: %q lost %q", l.Line, l.Text, lost.String()))
		}
	}
	return float64(caught) / float64(secret), float64(kept) / float64(plain), misses, over
}

func mask(n int, spans [][2]int) []bool {
	m := make([]bool, n)
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			m[i] = true
		}
	}
	return m
}

// TestCorpusRecallPrecision: on the labelled corpus the default rules
// replace every secret byte and keep at least 99% of the others.
func TestCorpusRecallPrecision(t *testing.T) {
	r := New(true, DefaultKeys...)
	recall, precision, misses, over := corpusFigures(&r)
	t.Logf("labelled corpus: %d texts, recall %.2f%%, precision %.2f%%", len(redactcorpus.Corpus), 100*recall, 100*precision)
	for _, m := range misses {
		t.Log("miss:", m)
	}
	for _, o := range over {
		t.Log("over-redaction:", o)
	}
	if recall < minRecall || precision < minPrecision {
		t.Errorf("recall %.4f (floor %.2f), precision %.4f (floor %.2f)", recall, minRecall, precision, minPrecision)
	}
}

// TestCorpusIsWellFormed: the labelled corpus is big enough, and each
// secret is long and distinct enough that finding it in a reader's
// output (redactcorpus.Leaks) means it leaked: it appears nowhere in
// the corpus but in its spans.
func TestCorpusIsWellFormed(t *testing.T) {
	if n := len(redactcorpus.Corpus); n < 300 {
		t.Errorf("%d texts in the labelled corpus, want at least 300", n)
	}
	var plain strings.Builder
	for _, l := range redactcorpus.Corpus {
		last := 0
		for _, sp := range l.Spans {
			plain.WriteString(l.Text[last:sp[0]] + "\x00")
			last = sp[1]
		}
		plain.WriteString(l.Text[last:] + "\x00")
	}
	for _, l := range redactcorpus.Corpus {
		for _, s := range l.Secrets() {
			if len(s) < 6 {
				t.Errorf("corpus.txt:%d: secret %q is too short to be looked for", l.Line, s)
			}
			if strings.Contains(plain.String(), s) {
				t.Errorf("corpus.txt:%d: secret %q also appears outside a secret span", l.Line, s)
			}
		}
	}
}
