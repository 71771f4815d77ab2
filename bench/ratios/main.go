// Command ratios turns `go test -bench` output into one Markdown table of
// ratios to the baseline, with the statistics computed by benchstat, and
// checks the performance goals of BENCHMARKS.md against that same run.
//
// Usage:
//
//	go run ./bench/ratios [-benchstat CMD] bench.txt...
//
// BenchmarkRecord/<size>/<variant> results are compared with
// BenchmarkRecord/<size>/baseline of the same run; BenchmarkExporter/<name>
// results with BenchmarkExporter/stdoutlog. Every other benchmark is listed
// with its absolute figures. The medians and 95% confidence intervals, and
// the p-values of the comparisons, are benchstat's; this program only
// divides medians and formats.
//
// It uses only the standard library, so it adds nothing to the module.
package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// defaultBenchstat is pinned so that every run computes the same statistics.
const defaultBenchstat = "go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

func main() {
	bs := flag.String("benchstat", defaultBenchstat, "benchstat command line")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ratios [-benchstat CMD] bench.txt...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, strings.Fields(*bs), flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "ratios:", err)
		os.Exit(1)
	}
}

// Sub-benchmark names are positional (size/variant); benchstat projects on
// key=value parts only, so they are rewritten before it reads them.
var (
	recordName   = regexp.MustCompile(`(?m)^BenchmarkRecord/([^/\s]+)/([^/\s]+?)(-\d+)?([ \t])`)
	exporterName = regexp.MustCompile(`(?m)^BenchmarkExporter/([^/\s]+?)(-\d+)?([ \t])`)
)

func rewrite(in []byte) []byte {
	out := recordName.ReplaceAll(in, []byte("BenchmarkRecord/size=$1/variant=$2$3$4"))
	out = exporterName.ReplaceAll(out, []byte("BenchmarkExporter/exporter=$1$2$3"))
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// stat is one benchstat cell: the median, its confidence interval, and for
// a compared column the change ("~" when not significant).
type stat struct {
	center float64
	ci     string
	delta  string
	ok     bool
}

// results[row][column][unit]
type results map[string]map[string]map[string]stat

func (r results) get(row, col, unit string) stat {
	return r[row][col][unit]
}

// benchstatCSV runs benchstat with args on file and parses its CSV tables.
func benchstatCSV(cmd []string, file string, args ...string) (results, error) {
	full := append(append(slices.Clone(cmd[1:]), "-format", "csv"), args...)
	full = append(full, file)
	c := exec.Command(cmd[0], full...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", strings.Join(cmd, " "), err, stderr.String())
	}
	return parseCSV(out)
}

// at is s[i], or "" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// parseCSV reads benchstat's CSV output: blocks separated by blank lines,
// each with a column-group header, a unit header and data rows.
func parseCSV(out []byte) (results, error) {
	res := results{}
	for _, block := range bytes.Split(out, []byte("\n\n")) {
		r := csv.NewReader(bytes.NewReader(block))
		r.FieldsPerRecord = -1
		recs, err := r.ReadAll()
		if err != nil {
			return nil, fmt.Errorf("benchstat csv: %w", err)
		}
		// Skip the "key: value" configuration lines.
		for len(recs) > 0 && (len(recs[0]) == 1 || recs[0][0] != "") {
			recs = recs[1:]
		}
		if len(recs) < 3 {
			continue
		}
		groups, labels := recs[0], recs[1]
		unit := at(labels, 1)
		for _, row := range recs[2:] {
			if len(row) == 0 || row[0] == "" || row[0] == "geomean" {
				continue
			}
			cols := res[row[0]]
			if cols == nil {
				cols = map[string]map[string]stat{}
				res[row[0]] = cols
			}
			group := ""
			for i := 1; i < len(row); i++ {
				if i < len(groups) && groups[i] != "" {
					group = groups[i]
				}
				if cols[group] == nil {
					cols[group] = map[string]stat{}
				}
				s := cols[group][unit]
				switch label := at(labels, i); label {
				case unit:
					if f, err := strconv.ParseFloat(row[i], 64); err == nil {
						s.center, s.ok = f, true
					}
				case "CI":
					s.ci = row[i]
				case "vs base":
					s.delta = row[i]
				}
				cols[group][unit] = s
			}
		}
	}
	return res, nil
}

// procsSuffix is the -GOMAXPROCS suffix of a benchmark name.
var procsSuffix = regexp.MustCompile(`-\d+$`)

var (
	sizes    = []string{"small", "medium", "large"}
	variants = []string{"baseline", "progress", "progress-struct", "otelslog", "otelslog-flat", "slog-json"}
)

func run(w io.Writer, bs []string, files []string) error {
	var raw []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		raw = append(raw, b...)
	}
	dir, err := os.MkdirTemp("", "ratios-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "bench.txt")
	if err := os.WriteFile(tmp, rewrite(raw), 0o600); err != nil {
		return err
	}

	rec, err := benchstatCSV(bs, tmp, "-filter", ".name:Record", "-col", "/variant", "-row", "/size")
	if err != nil {
		return err
	}
	if len(rec) == 0 {
		return errors.New("no BenchmarkRecord results in the input")
	}
	exp, err := benchstatCSV(bs, tmp, "-filter", ".name:Exporter", "-col", "/exporter", "-row", ".name")
	if err != nil {
		return err
	}
	other, err := benchstatCSV(bs, tmp, "-filter", "-.name:(Record OR Exporter)", "-row", ".fullname")
	if err != nil {
		return err
	}

	fmt.Fprintln(w, "BenchmarkRecord: medians (± 95% CI) by benchstat; ratios to the baseline of the same run.")
	fmt.Fprintln(w, "ns/op is wall time; cpu-ns/op is the process's CPU time per op (all threads: batch processor and GC included).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| size | variant | ns/op | × baseline | cpu-ns/op | × baseline | B/op | allocs/op | Δ allocs |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, size := range sizes {
		base := rec.get(size, "baseline", "sec/op")
		baseCPU := rec.get(size, "baseline", "cpu-sec/op")
		baseAllocs := rec.get(size, "baseline", "allocs/op")
		for _, v := range variants {
			t := rec.get(size, v, "sec/op")
			if !t.ok {
				continue
			}
			c := rec.get(size, v, "cpu-sec/op")
			a := rec.get(size, v, "allocs/op")
			ratio, cpuRatio, dAllocs := "1", "1", ""
			if v != "baseline" {
				ratio, cpuRatio = ratioOf(t, base), ratioOf(c, baseCPU)
				dAllocs = fmt.Sprintf("%+.0f", a.center-baseAllocs.center)
			}
			fmt.Fprintf(w, "| %s | %s | %s ± %s | %s | %s | %s | %.0f | %.0f | %s |\n",
				size, v, ns(t.center), t.ci, ratio, ns(c.center), cpuRatio, rec.get(size, v, "B/op").center, a.center, dAllocs)
		}
	}

	if len(exp) > 0 || len(other) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| benchmark | ns/op | cpu-ns/op | ops/s (records/s) | × stdoutlog | B/op | allocs/op |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
		for _, row := range sortedKeys(other) {
			for _, col := range sortedKeys(other[row]) {
				t := other[row][col]["sec/op"]
				fmt.Fprintf(w, "| %s | %s ± %s | %s | %s |  | %.0f | %.0f |\n", procsSuffix.ReplaceAllString(row, ""), ns(t.center), t.ci,
					nsIf(other[row][col]["cpu-sec/op"]), perSec(t.center),
					other[row][col]["B/op"].center, other[row][col]["allocs/op"].center)
			}
		}
		for _, row := range sortedKeys(exp) {
			base := exp[row]["stdoutlog"]["sec/op"]
			for _, col := range sortedKeys(exp[row]) {
				t := exp[row][col]["sec/op"]
				ratio := ""
				if base.ok && t.center > 0 {
					ratio = fmt.Sprintf("%.2f×", base.center/t.center)
				}
				// One op of BenchmarkExporter is a batch: show its own
				// records/s when it reports one.
				rate := perSec(t.center)
				if r := exp[row][col]["records/s"]; r.ok {
					rate = perSec(1 / r.center)
				}
				fmt.Fprintf(w, "| %s/%s | %s ± %s | %s | %s | %s | %.0f | %.0f |\n", row, col, ns(t.center), t.ci,
					nsIf(exp[row][col]["cpu-sec/op"]), rate, ratio,
					exp[row][col]["B/op"].center, exp[row][col]["allocs/op"].center)
			}
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Goals, checked on the medians of this run:")
	fmt.Fprintln(w)
	for _, g := range goals(rec, exp, other) {
		fmt.Fprintln(w, "- "+g)
	}
	return nil
}

func goals(rec, exp, other results) []string {
	var out []string
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	for _, size := range []string{"small", "medium"} {
		b, p := rec.get(size, "baseline", "sec/op"), rec.get(size, "progress", "sec/op")
		bc, pc := rec.get(size, "baseline", "cpu-sec/op"), rec.get(size, "progress", "cpu-sec/op")
		ba, pa := rec.get(size, "baseline", "allocs/op"), rec.get(size, "progress", "allocs/op")
		if !b.ok || !p.ok {
			continue
		}
		r, da := p.center/b.center, pa.center-ba.center
		rc := 0.0
		if bc.ok && bc.center > 0 {
			rc = pc.center / bc.center
		}
		out = append(out, fmt.Sprintf("progress ≤ 1.25× baseline, ≤ +1 alloc (%s): %.2f× wall, %.2f× CPU, %+.0f allocs: %s",
			size, r, rc, da, verdict(r <= 1.25 && da <= 1)))
	}
	for _, size := range sizes {
		b, s := rec.get(size, "baseline", "sec/op"), rec.get(size, "progress-struct", "sec/op")
		if b.ok && s.ok {
			r := s.center / b.center
			out = append(out, fmt.Sprintf("progress-struct ≤ 2× baseline (%s): %.2f×: %s", size, r, verdict(r <= 2)))
		}
	}
	for _, size := range sizes {
		p, o := rec.get(size, "progress", "sec/op"), rec.get(size, "otelslog", "sec/op")
		if p.ok && o.ok {
			r := o.center / p.center
			line := fmt.Sprintf("progress ≥ 2× faster than otelslog (%s): %.2f×", size, r)
			if f := rec.get(size, "otelslog-flat", "sec/op"); f.ok {
				line += fmt.Sprintf(" (%.2f× against otelslog-flat)", f.center/p.center)
			}
			out = append(out, line+": "+verdict(r >= 2))
		}
	}
	for _, row := range sortedKeys(other) {
		name := strings.SplitN(row, "-", 2)[0]
		limit := map[string]float64{"RecordNoProvider": 50e-9, "TransitionUnchanged": 100e-9}[name]
		if limit == 0 {
			continue
		}
		for _, col := range other[row] {
			t, a := col["sec/op"], col["allocs/op"]
			out = append(out, fmt.Sprintf("%s ≤ %s and 0 allocs/op: %s, %.0f allocs: %s",
				name, ns(limit), ns(t.center), a.center, verdict(t.center <= limit && a.center == 0)))
		}
	}
	for _, row := range sortedKeys(exp) {
		base := exp[row]["stdoutlog"]
		if !base["sec/op"].ok {
			continue
		}
		for _, name := range []string{"pretty", "json"} {
			e := exp[row][name]
			if !e["sec/op"].ok {
				continue
			}
			// Both export the same batch per op, so records/s compare as
			// the inverse of sec/op.
			ok := e["sec/op"].center <= base["sec/op"].center && e["allocs/op"].center < base["allocs/op"].center
			out = append(out, fmt.Sprintf("%s exporter ≥ stdoutlog records/s with fewer allocs: %.1f× the records/s, %.0f vs %.0f allocs per batch: %s",
				name, base["sec/op"].center/e["sec/op"].center, e["allocs/op"].center, base["allocs/op"].center, verdict(ok)))
		}
	}
	return out
}

// ratioOf is t/base, with benchstat's verdict: "~" when the difference is
// not significant at its alpha.
func ratioOf(t, base stat) string {
	if !t.ok || !base.ok || base.center == 0 {
		return ""
	}
	r := fmt.Sprintf("%.2f×", t.center/base.center)
	if t.delta == "~" {
		r += " ~"
	}
	return r
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// ns formats seconds as ns, µs or ms with three significant digits.
func ns(sec float64) string {
	switch n := sec * 1e9; {
	case n >= 1e6:
		return fmt.Sprintf("%.3gms", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.3gµs", n/1e3)
	default:
		return fmt.Sprintf("%.3gns", n)
	}
}

func nsIf(s stat) string {
	if !s.ok {
		return ""
	}
	return ns(s.center)
}

func perSec(sec float64) string {
	if sec <= 0 {
		return ""
	}
	r := 1 / sec
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.0fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
