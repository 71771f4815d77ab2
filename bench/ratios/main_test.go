package main

import (
	"strings"
	"testing"
)

func TestRewriteNamesForBenchstat(t *testing.T) {
	in := strings.Join([]string{
		"pkg: github.com/progressotel/progressotel/progress",
		"BenchmarkRecord/small/baseline-2         \t   85552\t      3514 ns/op",
		"BenchmarkRecord/large/progress-struct-2  \t   80106\t      3768 ns/op",
		"BenchmarkRecord/medium/otelslog-flat     \t   70449\t      4762 ns/op",
		"BenchmarkRecordNoProvider-2              \t38830000\t        25.8 ns/op",
		"BenchmarkExporter/stdoutlog-2            \t    2000\t    469000 ns/op",
		"BenchmarkExporter/json                   \t    2000\t     32700 ns/op",
	}, "\n")
	want := strings.Join([]string{
		"pkg: github.com/progressotel/progressotel/progress",
		"BenchmarkRecord/size=small/variant=baseline-2         \t   85552\t      3514 ns/op",
		"BenchmarkRecord/size=large/variant=progress-struct-2  \t   80106\t      3768 ns/op",
		"BenchmarkRecord/size=medium/variant=otelslog-flat     \t   70449\t      4762 ns/op",
		"BenchmarkRecordNoProvider-2              \t38830000\t        25.8 ns/op",
		"BenchmarkExporter/exporter=stdoutlog-2            \t    2000\t    469000 ns/op",
		"BenchmarkExporter/exporter=json                   \t    2000\t     32700 ns/op",
	}, "\n") + "\n"
	if got := string(rewrite([]byte(in))); got != want {
		t.Errorf("rewrite:\n%s\nwant:\n%s", got, want)
	}
}

// A block of benchstat's CSV output (-col /variant -row /size), as
// captured from a real run.
const sampleCSV = `goos: linux
goarch: amd64
pkg: github.com/progressotel/progressotel/progress
cpu: AMD EPYC
,baseline,,progress,,,,slog-json,,,
,sec/op,CI,sec/op,CI,vs base,P,sec/op,CI,vs base,P
small,3.422e-06,5%,3.826e-06,7%,+11.81%,p=0.000 n=16,1.294e-06,2%,-62.19%,p=0.000 n=16
medium,8.0155e-06,5%,8.92e-06,10%,~,p=0.120 n=16,1.7855e-06,1%,-77.72%,p=0.000 n=16
geomean,5.2e-06,,5.8e-06,,+11.5%,,1.5e-06,,-70%,

,baseline,,progress,,,,slog-json,,,
,allocs/op,CI,allocs/op,CI,vs base,P,allocs/op,CI,vs base,P
small,6,0%,6,0%,~,p=1.000 n=16,1,0%,-83.33%,p=0.000 n=16
`

func TestParseBenchstatCSV(t *testing.T) {
	res, err := parseCSV([]byte(sampleCSV))
	if err != nil {
		t.Fatal(err)
	}
	check := func(row, col, unit string, center float64, ci, delta string) {
		t.Helper()
		s := res.get(row, col, unit)
		if !s.ok || s.center != center || s.ci != ci || s.delta != delta {
			t.Errorf("%s/%s %s = %+v, want center %g ci %q delta %q", row, col, unit, s, center, ci, delta)
		}
	}
	check("small", "baseline", "sec/op", 3.422e-06, "5%", "")
	check("small", "progress", "sec/op", 3.826e-06, "7%", "+11.81%")
	check("medium", "progress", "sec/op", 8.92e-06, "10%", "~")
	check("medium", "slog-json", "sec/op", 1.7855e-06, "1%", "-77.72%")
	check("small", "progress", "allocs/op", 6, "0%", "~")
	if _, ok := res["geomean"]; ok {
		t.Error("the geomean row was kept")
	}

	if got := ratioOf(res.get("small", "progress", "sec/op"), res.get("small", "baseline", "sec/op")); got != "1.12×" {
		t.Errorf("small ratio = %q, want 1.12×", got)
	}
	if got := ratioOf(res.get("medium", "progress", "sec/op"), res.get("medium", "baseline", "sec/op")); got != "1.11× ~" {
		t.Errorf("medium ratio = %q, want 1.11× ~ (not significant)", got)
	}
}

func TestGoalsVerdicts(t *testing.T) {
	res, err := parseCSV([]byte(sampleCSV))
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Join(goals(res, results{}, results{}), "\n")
	for _, want := range []string{
		"progress ≤ 1.25× baseline, ≤ +1 alloc (small): 1.12× wall",
		"+0 allocs: met",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("goals lack %q:\n%s", want, out)
		}
	}
	// Make progress 1.5× the baseline: the goal must fail.
	slow := res["small"]["progress"]["sec/op"]
	slow.center = 1.5 * res["small"]["baseline"]["sec/op"].center
	res["small"]["progress"]["sec/op"] = slow
	if out := strings.Join(goals(res, results{}, results{}), "\n"); !strings.Contains(out, "(small): 1.50× wall, 0.00× CPU, +0 allocs: NOT met") {
		t.Errorf("a 1.5× progress passed:\n%s", out)
	}
}
