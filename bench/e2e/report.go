package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

func printHeader() {
	fmt.Println("| phase | round/try | target | offered/s | sent | achieved/s | lost | driver drops | drained after | driver CPU/event | collector CPU/event | sink CPU/event | other load | driver RSS | collector RSS |")
	fmt.Println("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
}

func printRow(phase string, n int, r stepResult) {
	drained, lost, col, sink, colRSS := "n/a", "n/a", "n/a", "n/a", "n/a"
	if r.target != RecordAlone {
		drained = "not drained"
		if r.drained >= 0 {
			drained = r.drained.Round(10 * time.Millisecond).String()
		}
		lost = fmt.Sprint(r.lost)
		col, sink, colRSS = us(perEvent(r.collectorCPU, r.sent)), us(perEvent(r.sinkCPU, r.sent)), mib(r.collectorRSS)
	}
	fmt.Printf("| %s | %d | %s | %d | %d | %.0f | %s | %d | %s | %s | %s | %s | %.2f cores | %s | %s |\n",
		phase, n, r.target, r.offered, r.sent, r.achieved(), lost, r.dropped, drained,
		us(perEvent(r.driverCPU, r.sent)), col, sink, r.otherCPU.Seconds()/r.span.Seconds(), mib(r.driverRSS), colRSS)
}

type summary struct {
	rounds        []map[string]stepResult
	sustained     map[string]stepResult
	soak          *stepResult
	soakSustained bool
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratio(v float64) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", v)
}

// per returns, over the rounds, f of the target's step and f of the
// reference's step, paired within each round.
func (s *summary) per(target, ref string, f func(stepResult) float64) (vals, ratios []float64) {
	for _, r := range s.rounds {
		t, ok := r[target]
		if !ok {
			continue
		}
		v := f(t)
		vals = append(vals, v)
		if b, ok := r[ref]; ok && f(b) > 0 && v > 0 {
			ratios = append(ratios, v/f(b))
		}
	}
	return vals, ratios
}

func (s *summary) print(cfg config) {
	collector := func(r stepResult) float64 { return perEvent(r.collectorCPU, r.sent) }
	driver := func(r stepResult) float64 { return perEvent(r.driverCPU, r.sent) }
	var other []float64
	for _, r := range s.rounds {
		for _, st := range r {
			other = append(other, st.otherCPU.Seconds()/st.span.Seconds())
		}
	}

	fmt.Println("| | events/s sustained, zero loss | collector CPU/event | × pass-through | driver CPU/event | × progress.Record alone |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	targets := append([]string{RecordAlone}, cfg.pipelines...)
	for _, name := range targets {
		sustained := "—"
		if name != RecordAlone && slices.Contains(cfg.phases, "ramp") {
			sustained = "none"
			if r, ok := s.sustained[name]; ok {
				sustained = fmt.Sprintf("%d (achieved %.0f)", r.offered, r.achieved())
			}
		}
		colVals, colRatios := s.per(name, PassThrough, collector)
		drvVals, drvRatios := s.per(name, RecordAlone, driver)
		col, colX := "—", "—"
		if name != RecordAlone && len(colVals) > 0 {
			col, colX = us(median(colVals)), ratio(median(colRatios))
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", name, sustained, col, colX, us(median(drvVals)), ratio(median(drvRatios)))
	}
	fmt.Println()
	if len(s.rounds) > 0 {
		fmt.Printf("CPU per event at %d events/s offered, %s steps: medians of %d rounds; the ratios are taken within each round, then their median.\n",
			cfg.rate, cfg.costStep, len(s.rounds))
		_, colRatios := s.per(Progress, PassThrough, collector)
		_, drvRatios := s.per(Progress, RecordAlone, driver)
		fmt.Printf("Per round: collector progress.yaml × pass-through %s; driver × progress.Record alone %s.\n",
			ratios(colRatios), ratios(drvRatios))
		fmt.Printf("Other load on the machine during the cost steps: median %.2f cores, max %.2f (of %d).\n",
			median(other), slices.Max(other), runtime.NumCPU())
	}
	if s.soak != nil {
		r := s.soak
		verdict := "zero loss"
		if !s.soakSustained {
			drained := "not drained"
			if r.drained >= 0 {
				drained = "drained after " + r.drained.Round(10*time.Millisecond).String()
			}
			verdict = fmt.Sprintf("NOT sustained (lost %d, driver drops %d, %s)", r.lost, r.dropped, drained)
		}
		fmt.Printf("Soak: %s at %d events/s for %s: %s. RSS every 10 s (driver / collector):", r.target, r.offered, r.elapsed.Round(time.Second), verdict)
		for _, sm := range r.samples {
			fmt.Printf(" %s %s/%s;", sm.at.Round(time.Second), strings.TrimSuffix(mib(sm.driver), " MiB"), mib(sm.collector))
		}
		fmt.Println()
		d1, d2, c1, c2 := halves(r.samples)
		fmt.Printf("Highest RSS in the first and second half: driver %s → %s, collector %s → %s.\n", mib(d1), mib(d2), mib(c1), mib(c2))
	}
}

func ratios(v []float64) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%.2f×", x))
	}
	return strings.Join(parts, ", ")
}

// halves returns the highest driver and collector RSS of the first and the
// second half of the samples.
func halves(s []rssSample) (d1, d2, c1, c2 int64) {
	for i, sm := range s {
		if i < len(s)/2 {
			d1, c1 = max(d1, sm.driver), max(c1, sm.collector)
		} else {
			d2, c2 = max(d2, sm.driver), max(c2, sm.collector)
		}
	}
	return d1, d2, c1, c2
}
