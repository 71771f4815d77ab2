#!/bin/sh
# scripts/bench-cli.sh: the cost of `progressotel emit` from a shell loop,
# inside a run and outside it (BenchmarkEmit in cmd/progressotel), in
# BENCH_COUNT interleaved rounds (default 6) of BENCH_N emits each (default
# 300), then benchstat's medians. Interleaving spreads a burst of load from
# other processes over every variant.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
count=${BENCH_COUNT:-6}
n=${BENCH_N:-300}
out=${BENCH_OUT:-${TMPDIR:-/tmp}/progressotel-bench-cli}
mkdir -p "$out"
raw="$out/raw.txt"
cd "$root"
go test -c -o "$out/cli.test" ./cmd/progressotel
{
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go env GOVERSION), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	i=1
	while [ "$i" -le "$count" ]; do
		# The test binary builds progressotel from its package directory.
		(cd cmd/progressotel && "$out/cli.test" -test.run '^$' -test.bench '^BenchmarkEmit$' -test.benchtime "${n}x" -test.count 1) | grep -E '^(goos|goarch|pkg|cpu|Benchmark)'
		i=$((i + 1))
	done
} | tee "$raw"
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$raw"
