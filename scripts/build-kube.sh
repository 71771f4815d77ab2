#!/usr/bin/env bash
# Builds kube-apiserver and etcd from their Go modules into bin/, once.
#
#   scripts/build-kube.sh                          # bin/kube-apiserver and bin/etcd at the versions below
#   KUBE_BIN_DIR=/tmp/kb scripts/build-kube.sh     # another output directory
#
# The kube module's tests run a real API server through controller-runtime's
# envtest, with KUBEBUILDER_ASSETS pointing at this directory; nothing is
# downloaded but Go modules.
#
# kube-apiserver: the k8s.io/kubernetes module zip holds no staging/ tree,
# and its go.mod replaces each staging module (k8s.io/api, apimachinery,
# apiserver, client-go, ...) with a path inside it. The staging modules are
# published at v0.X.Y for Kubernetes v1.X.Y, so a throw-away go.mod that
# requires k8s.io/kubernetes and replaces each staging module (the list is
# read from k8s.io/kubernetes' own go.mod) with its published version builds
# cmd/kube-apiserver. The version strings are set the way Kubernetes' release
# build sets them, so that `kube-apiserver --version` says the pinned one.
#
# etcd: go.etcd.io/etcd/server/v3 also has replace directives (its sibling
# modules), so it is built the same way, from a throw-away go.mod.
#
# Cached: when both binaries already report the pinned versions, nothing
# happens. Only the Go module proxy is used.
set -euo pipefail
. "$(dirname "$0")/lib/gomodule.sh"

# The pinned versions: the one place that says them.
KUBE_VERSION=v1.34.4
ETCD_VERSION=v3.6.16

GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${KUBE_BIN_DIR:-$root/bin}
apiserver=$dir/kube-apiserver
etcd=$dir/etcd

# staging_version is the published version of the staging modules for KUBE_VERSION.
staging_version=v0.${KUBE_VERSION#v1.}

apiserver_version() {
	[ -x "$apiserver" ] || return 0
	"$apiserver" --version 2>/dev/null | sed -n 's/^Kubernetes \(v[^ ]*\).*/\1/p' || true
}
etcd_version() {
	[ -x "$etcd" ] || return 0
	"$etcd" --version 2>/dev/null | sed -n 's/^etcd Version: *\([^ ]*\).*/v\1/p' || true
}
fresh() {
	[ "$(apiserver_version)" = "$KUBE_VERSION" ] && [ "$(etcd_version)" = "$ETCD_VERSION" ]
}

if fresh; then
	exit 0
fi

# One build at a time: `make test` and `make demo-k8s` may start together.
build_lock "$dir/kube-bins" fresh
work_dir
start=$(date +%s)

# gobuild runs go outside the repo's modules and workspace, in $1.
gobuild() {
	local in=$1
	shift
	(cd "$in" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" "$@")
}

if [ "$(etcd_version)" != "$ETCD_VERSION" ]; then
	echo "build-kube: building etcd $ETCD_VERSION into $etcd" >&2
	mkdir -p "$work/etcd"
	cat >"$work/etcd/go.mod" <<MOD
module progressotel.invalid/build-etcd

go 1.24

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
	gobuild "$work/etcd" mod download go.etcd.io/etcd/server/v3
	gobuild "$work/etcd" build -trimpath -ldflags "-s -w" -o "$etcd.tmp" go.etcd.io/etcd/server/v3
	mv -f "$etcd.tmp" "$etcd"
fi

if [ "$(apiserver_version)" != "$KUBE_VERSION" ]; then
	echo "build-kube: building kube-apiserver $KUBE_VERSION into $apiserver (staging modules at $staging_version)" >&2
	mkdir -p "$work/kube"
	gomod=$(cd "$work/kube" && GOWORK=off GOFLAGS=-mod=mod "$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": *"\([^"]*\)".*/\1/p')
	if [ -z "$gomod" ] || [ ! -f "$gomod" ]; then
		echo "build-kube: go mod download gave no go.mod for k8s.io/kubernetes@$KUBE_VERSION" >&2
		exit 1
	fi
	staging=$(sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/src/.*#\1#p' "$gomod")
	if [ -z "$staging" ]; then
		echo "build-kube: found no staging replace directives in $gomod" >&2
		exit 1
	fi
	{
		printf 'module progressotel.invalid/build-kube\n\ngo 1.24\n\nrequire k8s.io/kubernetes %s\n\n' "$KUBE_VERSION"
		for m in $staging; do
			printf 'replace %s => %s %s\n' "$m" "$m" "$staging_version"
		done
	} >"$work/kube/go.mod"
	minor=${KUBE_VERSION#v1.}
	minor=${minor%%.*}
	v=k8s.io/component-base/version
	ldflags="-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
	gobuild "$work/kube" build -trimpath -ldflags "$ldflags" -o "$apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
	mv -f "$apiserver.tmp" "$apiserver"
fi

if ! fresh; then
	echo "build-kube: $apiserver reports '$(apiserver_version)' (want $KUBE_VERSION), $etcd reports '$(etcd_version)' (want $ETCD_VERSION)" >&2
	exit 1
fi
echo "build-kube: $apiserver is $KUBE_VERSION, $etcd is $ETCD_VERSION ($(($(date +%s) - start)) s)" >&2
