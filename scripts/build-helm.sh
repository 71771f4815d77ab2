#!/usr/bin/env bash
# Builds the Helm CLI (helm v4) from its Go module into bin/helm, once. The
# chart's lint (make lint-chart) and its tests (deploy/chart, rendered with
# `helm template` and applied to a real API server) run it.
#
#   scripts/build-helm.sh                        # bin/helm at HELM_VERSION
#   HELM_VERSION=v4.3.1 scripts/build-helm.sh    # another release
#   HELM_BIN=/tmp/helm scripts/build-helm.sh     # another output path
#
# Cached: when the binary at HELM_BIN reports HELM_VERSION, nothing happens.
# A cold build takes a few minutes on 2 cores. Only the Go module proxy is
# used.
set -euo pipefail
. "$(dirname "$0")/lib/gomodule.sh"

HELM_VERSION=${HELM_VERSION:-v4.3.2}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${HELM_BIN:-$root/bin/helm}

installed_version() {
	[ -x "$out" ] || return 0
	"$out" version --template '{{.Version}}' 2>/dev/null || true
}

current() { [ "$(installed_version)" = "$HELM_VERSION" ]; }
if current; then
	exit 0
fi

build_lock "$out" current

echo "build-helm: building helm $HELM_VERSION into $out (once)" >&2
work_dir
src=$(module_source build-helm "helm.sh/helm/v4@$HELM_VERSION")
(
	cd "$src"
	GOWORK=off GOFLAGS= CGO_ENABLED=0 "$GO" build -mod=readonly -trimpath \
		-ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
		-o "$out.tmp" ./cmd/helm
)
mv -f "$out.tmp" "$out"

got=$(installed_version)
if [ "$got" != "$HELM_VERSION" ]; then
	echo "build-helm: $out reports version '$got', want '$HELM_VERSION'" >&2
	exit 1
fi
echo "build-helm: $out is helm $got" >&2
