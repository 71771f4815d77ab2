# scripts/lib/gomodule.sh: what the scripts that build a tool from its Go
# module share (build-tofu.sh, build-otel-cli.sh, build-kube.sh). Sourced;
# uses $GO.
#
#   build_lock OUT CURRENT...   one build of OUT at a time (OUT.lock): waits
#                               for another build, then exits 0 when the
#                               command CURRENT... says OUT is current
#   work_dir                    a private directory in $work, removed on exit
#   module_source TAG MOD@VER   prints a writable copy of the module's source
#                               (go build wants to write go.sum; the module
#                               cache is read-only), downloaded outside any
#                               module and workspace, so the repo's go.mod is
#                               never touched

build_lock() {
	local out=$1
	shift
	mkdir -p "$(dirname "$out")"
	exec 9>"$out.lock"
	if command -v flock >/dev/null; then
		flock 9
		if "$@"; then
			exit 0
		fi
	fi
}

work_dir() {
	work=$(mktemp -d)
	trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
}

module_source() {
	local tag=$1 mod=$2 dir
	dir=$(cd "$work" && GOWORK=off GOFLAGS=-mod=mod "$GO" mod download -json "$mod" |
		sed -n 's/^[[:space:]]*"Dir": *"\([^"]*\)".*/\1/p')
	if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
		echo "$tag: go mod download gave no module directory for $mod" >&2
		return 1
	fi
	cp -R "$dir" "$work/src"
	chmod -R u+w "$work/src"
	echo "$work/src"
}
