#!/usr/bin/env bash
# Prints the tables of docs/licenses.md: the licence of every module in the
# root module's build graph (every module a package of ours, or of its
# tests, compiles against) and of the nested modules' direct requirements,
# recognised from the licence files in the module cache. Modules missing
# from the cache are downloaded through the Go module proxy.
#
#   scripts/licenses.sh           # the tables
#   scripts/licenses.sh --check   # fail when docs/licenses.md differs (make licenses)
#   scripts/licenses.sh --binary bin/otelcol-progress
#                                 # count the licences of every module linked
#                                 # into a built binary, naming the ones that
#                                 # are not Apache-2.0, MIT or BSD
#
# A licence it cannot recognise is printed as UNKNOWN and makes it exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --check ]; then
	diff -u <(sed -n '/^### The root/,$p' docs/licenses.md) <("$0") && echo "docs/licenses.md is up to date"
	exit
fi
GO=${GO:-go}
NESTED=(kube tncomessage collector-config/otelcol collector-config/e2e bench/e2e deploy)

# classify DIR: the SPDX ids of the licence files at the module's root.
classify() {
	local dir=$1 ids=() f text
	for f in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING* "$dir"/license* ; do
		[ -f "$f" ] || continue
		text=$(tr -s '[:space:]' ' ' <"$f")
		local before=${#ids[@]}
		# A file may hold several licences (gopkg.in/yaml.v3: MIT and Apache-2.0).
		[[ $text == *"Apache License"*"Version 2.0"* ]] && ids+=(Apache-2.0)
		# A licence-header template (sigs.k8s.io/cli-utils: LICENSE_TEMPLATE).
		[[ $text == *"SPDX-License-Identifier: Apache-2.0"* ]] && ids+=(Apache-2.0)
		[[ $text == *"Mozilla Public License"*"2.0"* ]] && ids+=(MPL-2.0)
		[[ $text == *"Permission is hereby granted, free of charge"* ]] && ids+=(MIT)
		[[ $text == *"Permission to use, copy, modify, and"*"distribute this software for any purpose"* ]] && ids+=(ISC)
		if [[ $text == *"Redistribution and use in source and binary forms"* ]]; then
			if [[ $text == *"Neither the name"* || $text == *"names of its contributors"* ]]; then
				ids+=(BSD-3-Clause)
			else
				ids+=(BSD-2-Clause)
			fi
		fi
		[ ${#ids[@]} -gt "$before" ] || ids+=("UNKNOWN($(basename "$f"))")
	done
	[ ${#ids[@]} -gt 0 ] || ids=(UNKNOWN)
	printf '%s\n' "${ids[@]}" | sort -u | paste -sd+ -
}

unknown=0
# row MODULE VERSION DIR
row() {
	local lic
	lic=$(classify "$3")
	case "$lic" in *UNKNOWN*) unknown=1 ;; esac
	printf '| `%s` | %s | %s |\n' "$1" "$2" "$lic"
}

# dir MODULE@VERSION: its directory in the module cache, downloading it if need be.
dir() {
	$GO mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

if [ "${1:-}" = --binary ]; then
	# A replaced module counts as its replacement; one replaced by a local
	# directory is this repository's own (the collector's components).
	list=$($GO version -m "$2" | awk '
		$1 == "dep" { if (m != "") print m; m = $2 " " $3 }
		$1 == "=>" { m = ($2 ~ /^[.\/]/) ? "" : $2 " " $3 }
		END { if (m != "") print m }' | sort -u |
		while read -r mod ver; do
			printf '%s %s %s\n' "$(classify "$(dir "$mod@$ver")")" "$mod" "$ver"
		done)
	awk '{print $1}' <<<"$list" | sort | uniq -c
	echo "not Apache-2.0, MIT or BSD:"
	grep -Ev '^(Apache-2.0|MIT|BSD-[23]-Clause)(\+(Apache-2.0|MIT|BSD-[23]-Clause))* ' <<<"$list" | sed 's/^/  /' || true
	exit
fi

echo "### The root module's build graph"
echo
echo "| Module | Version | Licence |"
echo "|---|---|---|"
$GO list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./... | sort -u |
	while read -r mod ver; do
		case $mod in github.com/progressotel/progressotel/*) continue ;; esac # this repository's (replace ./)
		row "$mod" "$ver" "$(dir "$mod@$ver")"
	done

for m in "${NESTED[@]}"; do
	echo
	echo "### \`$m\`: direct requirements"
	echo
	echo "| Module | Version | Licence |"
	echo "|---|---|---|"
	# From go.mod itself: the collector's module graph cannot be listed whole
	# (some test-only modules of its dependencies are not served).
	(cd "$m" && $GO mod edit -json) | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Require") or []:
    if not r.get("Indirect"):
        print(r["Path"], r["Version"])' | sort -u |
		while read -r mod ver; do
			[ -n "$mod" ] || continue
			case $mod in github.com/progressotel/progressotel | github.com/progressotel/progressotel/*)
				continue ;; # this repository's (replace ../)
			esac
			row "$mod" "$ver" "$(cd "$m" && dir "$mod@$ver")"
		done
done
exit $unknown
