#!/bin/sh
# scripts/bench-live.sh: the live view's benchmarks (prettyexporter):
# BenchmarkLiveFrame, one frame of a model of 1,000 nodes, and
# BenchmarkLiveExport, Export's cost per record next to the pretty
# exporter's on the same records, in BENCH_COUNT interleaved rounds
# (default 8) of BENCH_TIME each (default 300ms), then benchstat's
# medians. Interleaving spreads a burst of load from other processes over
# every variant.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
count=${BENCH_COUNT:-8}
benchtime=${BENCH_TIME:-300ms}
out=${BENCH_OUT:-${TMPDIR:-/tmp}/progressotel-bench-live}
mkdir -p "$out"
raw="$out/raw.txt"
cd "$root"
go test -c -o "$out/prettyexporter.test" ./prettyexporter
{
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go env GOVERSION), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	i=1
	while [ "$i" -le "$count" ]; do
		(cd prettyexporter && "$out/prettyexporter.test" -test.run '^$' -test.bench '^BenchmarkLive(Frame|Export)$' \
			-test.benchmem -test.benchtime "$benchtime" -test.count 1) | grep -E '^(goos|goarch|pkg|cpu|Benchmark)'
		i=$((i + 1))
	done
} | tee "$raw"
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$raw"
