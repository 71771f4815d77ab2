#!/usr/bin/env bash
# Builds otel-cli (github.com/equinix-labs/otel-cli) from its Go module into
# bin/otel-cli, once. The progressotel command's tests run it as a real peer
# of the environment-variable carrier (TRACEPARENT, TRACESTATE, BAGGAGE):
# otel-cli as the child of `progressotel run`, and `progressotel` under
# `otel-cli exec`.
#
#   scripts/build-otel-cli.sh                          # bin/otel-cli at OTEL_CLI_VERSION
#   OTEL_CLI_VERSION=v0.4.5 scripts/build-otel-cli.sh  # another release
#   OTEL_CLI_BIN=/tmp/otel-cli scripts/build-otel-cli.sh
#
# v0.4.5 is the newest release the Go module proxy serves here (it lists no
# versions; @latest is refused). Cached: when the binary at OTEL_CLI_BIN
# reports OTEL_CLI_VERSION, nothing
# happens. Only the Go module proxy is used.
set -euo pipefail
. "$(dirname "$0")/lib/gomodule.sh"

OTEL_CLI_VERSION=${OTEL_CLI_VERSION:-v0.4.5}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OTEL_CLI_BIN:-$root/bin/otel-cli}

# built_version prints the version the binary at $out was built from, kept
# beside it in $out.version (otel-cli has no version command; its build info
# names no version when it is built from the module's own directory).
built_version() {
	[ -x "$out" ] && [ -f "$out.version" ] || return 0
	cat "$out.version"
}

current() { [ "$(built_version)" = "$OTEL_CLI_VERSION" ]; }
if current; then
	exit 0
fi

build_lock "$out" current

echo "build-otel-cli: building otel-cli $OTEL_CLI_VERSION into $out (once)" >&2
work_dir
# `go install pkg@version` asks the proxy for the module's version list
# (for deprecations), which it refuses; so the module is downloaded and
# built in a copy of its own.
src=$(module_source build-otel-cli "github.com/equinix-labs/otel-cli@$OTEL_CLI_VERSION")
(
	cd "$src"
	GOWORK=off GOFLAGS= CGO_ENABLED=0 "$GO" build -mod=readonly -trimpath \
		-ldflags "-X main.version=${OTEL_CLI_VERSION#v}" -o "$out.tmp" .
)
mv -f "$out.tmp" "$out"
echo "$OTEL_CLI_VERSION" >"$out.version"

got=$(built_version)
if [ "$got" != "$OTEL_CLI_VERSION" ]; then
	echo "build-otel-cli: $out was built from '$got', want '$OTEL_CLI_VERSION'" >&2
	exit 1
fi
echo "build-otel-cli: $out is otel-cli $got" >&2
