#!/usr/bin/env bash
# Soak: the real Setup and OTLP exporter under load while the collector is
# killed and restarted over and over (otelbridge TestSoak). Checks bounded
# memory and queue, no goroutine leak, and that every lost record is counted
# and reported in the stream.
#
#   scripts/soak.sh             # SOAK=2m
#   SOAK=30m scripts/soak.sh
#   RACE=1 scripts/soak.sh      # with the race detector (slower, more drops)
#
# make test runs the same test for 3 seconds.
set -euo pipefail

SOAK=${SOAK:-2m}
GO=${GO:-go}
cd "$(dirname "$0")/.."

flags=(-run '^TestSoak$' -count=1 -v)
if [ -n "${RACE:-}" ]; then
	flags+=(-race)
fi
# The test's own deadlines catch a hang; this only bounds a runaway run.
flags+=(-timeout "${SOAK_TIMEOUT:-3h}")

PROGRESSOTEL_SOAK=$SOAK $GO test "${flags[@]}" ./otelbridge/ 2>&1 |
	grep -v -e 'rpc error' -e 'export timeout' -e 'context deadline exceeded'
exit "${PIPESTATUS[0]}"
