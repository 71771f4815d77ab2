#!/usr/bin/env bash
# stages.sh TARGET...: runs `make TARGET` for each target in order, prints
# each one's duration when it ends and, at the end (also on a failure), a
# table of them all. The first failure stops the run with its status. Used
# by `make test`, so that CI's log says where its time went.
set -uo pipefail
make=${MAKE:-make}
timings=()
total=$SECONDS
report() {
	echo
	echo "== make test stages"
	printf '%s\n' "${timings[@]}"
	echo "== make test: $(((SECONDS - total) / 60))m$(((SECONDS - total) % 60))s"
}
for t in "$@"; do
	start=$SECONDS
	echo "== stage $t"
	$make --no-print-directory "$t"
	rc=$?
	took=$((SECONDS - start))
	line=$(printf '%-16s %4dm%02ds' "$t" $((took / 60)) $((took % 60)))
	[ $rc -eq 0 ] || line="$line  FAILED ($rc)"
	timings+=("$line")
	echo "== stage $t: $((took / 60))m$((took % 60))s$([ $rc -eq 0 ] || echo ", FAILED ($rc)")"
	if [ $rc -ne 0 ]; then
		report
		exit $rc
	fi
done
report
