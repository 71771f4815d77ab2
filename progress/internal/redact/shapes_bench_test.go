package redact

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
)

// BenchmarkPolicyVsRegexp prices the policy per KiB of text: the
// library's scan (Shapes, after SecretValue, as Record runs them) beside
// Go's regexp running the same table's rules (CollectorRules, every match
// replaced, as the collector's stock redaction does), on the same 1 KiB,
// the two timed alternately in every iteration so that the machine's load
// falls on both. It reports ns per KiB for each and their ratio.
func BenchmarkPolicyVsRegexp(b *testing.B) {
	r := New(true, DefaultKeys...)
	var rules []*regexp.Regexp
	for _, rule := range CollectorRules() {
		rules = append(rules, regexp.MustCompile(rule))
	}
	var corpus strings.Builder
	for _, l := range redactcorpus.Corpus {
		corpus.WriteString(l.Text + "\n")
	}
	line := "TASK [deploy : render config] changed: [web-1] => (item=nginx.conf) rc=0 https://repo.example/x ok\n"
	for _, tc := range []struct{ name, text string }{
		{"tool-output", strings.Repeat(line, 1024/len(line)+1)[:1024]},
		{"labelled-corpus", corpus.String()[:1024]},
		{"labelled-corpus-all", corpus.String()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var scan, re time.Duration
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				t0 := time.Now()
				if !r.SecretValue(tc.text) {
					r.Shapes(tc.text)
				}
				t1 := time.Now()
				s := tc.text
				for _, x := range rules {
					s = x.ReplaceAllString(s, "****")
				}
				re += time.Since(t1)
				scan += t1.Sub(t0)
			}
			kib := float64(b.N) * float64(len(tc.text)) / 1024
			b.ReportMetric(float64(scan.Nanoseconds())/kib, "scan-ns/KiB")
			b.ReportMetric(float64(re.Nanoseconds())/kib, "regexp-ns/KiB")
			b.ReportMetric(float64(re)/float64(scan), "regexp/scan")
		})
	}
}
