#!/usr/bin/env bash
# Runs every fuzz target of the repository for a bounded time each.
#
#   scripts/fuzz.sh              # FUZZTIME=15s per target
#   FUZZTIME=2m scripts/fuzz.sh  # longer
#   FUZZ_ONLY=FuzzPretty scripts/fuzz.sh
#
# go test -fuzz accepts one package and one target at a time, so targets run
# one after another, each from the module that holds it (nested modules
# included). New inputs that fail are written by go test under the
# package's testdata/fuzz/<Target>/; commit them as regression seeds.
set -euo pipefail

FUZZTIME=${FUZZTIME:-15s}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# module_of DIR prints the nearest directory at or above DIR with a go.mod.
module_of() {
	local d=$1
	while [ ! -f "$d/go.mod" ]; do d=$(dirname "$d"); done
	printf '%s\n' "$d"
}

failed=()
count=0
while IFS= read -r file; do
	pkgdir=$(dirname "$file")
	mod=$(module_of "$pkgdir")
	rel=${pkgdir#"$mod"}
	for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
		if [ -n "${FUZZ_ONLY:-}" ] && [ "$target" != "$FUZZ_ONLY" ]; then
			continue
		fi
		count=$((count + 1))
		modname=${mod#"$root"}
		echo "== $target in .${rel:-/} (module .${modname:-/}) for $FUZZTIME"
		if ! (cd "$mod" && $GO test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" ".${rel:-/}"); then
			failed+=("$target")
		fi
	done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | sed 's|^\./|'"$root"'/|' | sort)

if [ "$count" -eq 0 ]; then
	echo "no fuzz targets found" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz failures: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz: $count targets, $FUZZTIME each, no failure"
