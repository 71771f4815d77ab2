//go:build unix

package redact

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
)

// BenchmarkPolicyVsRegexp prices the policy per KiB of text: the
// library's scan (Shapes, after SecretValue, as Record runs them) beside
// Go's regexp running the same table's rules (CollectorRules, every match
// replaced, as the collector's stock redaction does), on the same 1 KiB,
// the two timed alternately in every iteration so that the machine's load
// falls on both. It reports CPU ns per KiB for each and their ratio.
func BenchmarkPolicyVsRegexp(b *testing.B) {
	r := New(true, DefaultKeys...)
	var rules []*regexp.Regexp
	for _, rule := range CollectorRules() {
		rules = append(rules, regexp.MustCompile(rule))
	}
	var corpus strings.Builder
	var texts []string
	for _, l := range redactcorpus.Corpus {
		corpus.WriteString(l.Text + "\n")
		texts = append(texts, l.Text)
	}
	line := "TASK [deploy : render config] changed: [web-1] => (item=nginx.conf) rc=0 https://repo.example/x ok\n"
	for _, tc := range []struct {
		name  string
		texts []string // each a string value of its own, as Record sees them
	}{
		{"tool-output-1KiB", []string{strings.Repeat(line, 1024/len(line)+1)[:1024]}},
		{"labelled-corpus-1KiB", []string{corpus.String()[:1024]}},
		{"labelled-corpus-by-text", texts},
	} {
		size := 0
		for _, t := range tc.texts {
			size += len(t)
		}
		b.Run(tc.name, func(b *testing.B) {
			// Batches timed in process CPU time: wall time on a shared
			// machine counts other processes' turns too.
			const batch = 16
			var scan, re time.Duration
			n := 0
			b.SetBytes(int64(size))
			for b.Loop() {
				t0 := cpuNow()
				for range batch {
					for _, t := range tc.texts {
						if !r.SecretValue(t) {
							r.Shapes(t)
						}
					}
				}
				t1 := cpuNow()
				for range batch {
					for _, t := range tc.texts {
						for _, x := range rules {
							t = x.ReplaceAllString(t, "****")
						}
					}
				}
				re += cpuNow() - t1
				scan += t1 - t0
				n += batch
			}
			kib := float64(n) * float64(size) / 1024
			b.ReportMetric(float64(scan.Nanoseconds())/kib, "scan-cpu-ns/KiB")
			b.ReportMetric(float64(re.Nanoseconds())/kib, "regexp-cpu-ns/KiB")
			b.ReportMetric(float64(re)/float64(scan), "regexp/scan")
		})
	}
}

// cpuNow is the process's CPU time (user and system, all threads).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
