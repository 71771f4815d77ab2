#!/usr/bin/env bash
# Builds the OpenTofu CLI from its Go module into bin/tofu, once.
#
#   scripts/build-tofu.sh                      # bin/tofu at TOFU_VERSION (default below)
#   TOFU_VERSION=v1.10.6 scripts/build-tofu.sh # another release
#   TOFU_BIN=/tmp/tofu scripts/build-tofu.sh   # another output path
#
# The terraform package's tests and `make demo-terraform` run the real tool.
# `go install github.com/opentofu/opentofu/cmd/tofu@v…` refuses the module
# (its go.mod has a replace directive), so this script downloads the module
# with `go mod download`, copies it to a writable directory and runs
# `go build ./cmd/tofu` there, with the flags of OpenTofu's own release build
# (-trimpath, CGO off, version.dev=no so that `tofu version` says 1.10.10,
# not 1.10.10-dev).
#
# Cached: when the binary at TOFU_BIN already reports TOFU_VERSION, nothing
# happens. A cold build takes about 2 minutes on 2 cores and about 1 GB of
# module and build cache. Only the Go module proxy is used.
set -euo pipefail
. "$(dirname "$0")/lib/gomodule.sh"

TOFU_VERSION=${TOFU_VERSION:-v1.10.10}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${TOFU_BIN:-$root/bin/tofu}
want=${TOFU_VERSION#v}

# installed_version prints the version the binary at $out reports, or nothing.
# CHECKPOINT_DISABLE and an empty CLI config keep it off the network.
installed_version() {
	[ -x "$out" ] || return 0
	local empty
	empty=$(mktemp)
	CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE="$empty" "$out" version -json 2>/dev/null |
		sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p' || true
	rm -f "$empty"
}

current() { [ "$(installed_version)" = "$want" ]; }
if current; then
	exit 0
fi

# One build at a time: `make test` and `make demo-terraform` may start together.
build_lock "$out" current

work_dir
echo "build-tofu: building OpenTofu $TOFU_VERSION into $out (about 2 minutes, once)" >&2
src=$(module_source build-tofu "github.com/opentofu/opentofu@$TOFU_VERSION")
(
	cd "$src"
	GOWORK=off GOFLAGS= CGO_ENABLED=0 "$GO" build -mod=readonly -trimpath \
		-ldflags "-s -w -X 'github.com/opentofu/opentofu/version.dev=no'" \
		-o "$out.tmp" ./cmd/tofu
)
mv -f "$out.tmp" "$out"

got=$(installed_version)
if [ "$got" != "$want" ]; then
	echo "build-tofu: $out reports version '$got', want '$want'" >&2
	exit 1
fi
echo "build-tofu: $out is OpenTofu $got" >&2
