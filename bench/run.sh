#!/bin/sh
# bench/run.sh: run the benchmarks behind BENCHMARKS.md and print one table
# of ratios to the hand-built baseline (bench/ratios, statistics by
# benchstat).
#
# The rounds are interleaved: each round runs every benchmark once
# (-count=1), BENCH_COUNT rounds in all, so that a burst of load from other
# processes on the machine spreads over all variants instead of skewing the
# one that happened to run during it.
#
#   BENCH_COUNT  rounds (default 16: many short rounds average out bursts
#                of load better than a few long ones; benchstat needs 6)
#   BENCH_TIME   -benchtime per benchmark and round (default 250ms)
#   BENCH_OUT    directory for the test binaries and raw output
#                (default ${TMPDIR:-/tmp}/progressotel-bench)
#
# About 3 minutes on a 2-core machine with the defaults.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
count=${BENCH_COUNT:-16}
benchtime=${BENCH_TIME:-250ms}
out=${BENCH_OUT:-${TMPDIR:-/tmp}/progressotel-bench}
mkdir -p "$out"
raw="$out/raw.txt"
: >"$raw"

# Benchmarks written in other packages join the table once they exist.
suites="progress"
if grep -qs '^func BenchmarkExporter' prettyexporter/*_test.go; then
	suites="$suites prettyexporter"
fi
built=""
for s in $suites; do
	if go test -c -o "$out/$s.test" "./$s"; then
		built="$built $s"
	elif [ "$s" = progress ]; then
		exit 1
	else
		# Another area's package that does not build right now must not
		# cost the Record table.
		echo "warning: ./$s does not build; its benchmarks are left out" >&2
	fi
done
suites=$built

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go env GOVERSION), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ "$i" -le "$count" ]; do
	for s in $suites; do
		case $s in
		progress) pattern='^(BenchmarkRecord|BenchmarkRecordNoProvider|BenchmarkRecordOverhead|BenchmarkTransitionUnchanged)$' ;;
		prettyexporter) pattern='^BenchmarkExporter$' ;;
		esac
		# -test.run='^$': no test may install a global LoggerProvider
		# before BenchmarkRecordNoProvider.
		(cd "$s" && "$out/$s.test" -test.run='^$' -test.bench="$pattern" -test.benchmem \
			-test.count=1 -test.benchtime="$benchtime") >>"$raw"
	done
	echo "round $i/$count done" >&2
	i=$((i + 1))
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw results: $raw"
echo
go run ./bench/ratios "$raw"
