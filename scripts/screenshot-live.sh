#!/usr/bin/env bash
# Makes docs/img/live-view.png, the README's screenshot of the live view:
# `make demo` (a real Ansible run where Ansible is installed) in a real
# terminal, a tmux pane, captured with its colours in the middle of the
# run (while the last task runs, the earlier ones collapsed above), turned into
# HTML by aha and into a PNG by headless Chromium.
#
#   scripts/screenshot-live.sh              # docs/img/live-view.png
#   OUT=/tmp/shot.png scripts/screenshot-live.sh
#
# Needs tmux, aha and chromium (Debian: apt-get install tmux aha chromium
# fonts-dejavu-core). Not part of CI: the PNG is committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/docs/img/live-view.png}
cols=${COLS:-104}
rows=${ROWS:-24}
for tool in tmux aha chromium; do
	command -v "$tool" >/dev/null || { echo "$0: $tool is missing (apt-get install tmux aha chromium fonts-dejavu-core)" >&2; exit 1; }
done

work=$(mktemp -d)
sock="$work/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT

(cd "$root" && go build -o /dev/null ./examples/ansible-driver) # compiled now, so that make demo starts at once
tmux -S "$sock" -f /dev/null new-session -d -x "$cols" -y "$rows" -c "$root" -s shot \
	"printf '\$ make demo\n'; TERM=xterm-256color make --no-print-directory demo; echo __EXIT=\$?; sleep 600"

# The moment to show: the live area is drawn (a running operation), the
# earlier tasks have collapsed above it, the last task runs. Else the end
# of the run.
shot=""
for _ in $(seq 1 600); do
	screen=$(tmux -S "$sock" capture-pane -p -t shot)
	if grep -q '  running [0-9]' <<<"$screen" && grep -q '▸ task Start nginx' <<<"$screen"; then
		shot=$(tmux -S "$sock" capture-pane -p -e -t shot)
		break
	fi
	if grep -q '^__EXIT=' <<<"$screen"; then
		echo "$0: the run ended before the moment to show; capturing its end" >&2
		shot=$(tmux -S "$sock" capture-pane -p -e -t shot | grep -v '^__EXIT=')
		break
	fi
	sleep 0.05
done
[ -n "$shot" ] || { echo "$0: nothing to capture" >&2; exit 1; }

# Trailing empty rows off; aha turns the SGR colours into HTML.
printf '%s\n' "$shot" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' | aha --black --title "progressotel live view" >"$work/shot.html"
lines=$(printf '%s\n' "$shot" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' | wc -l)
# A terminal's look: one monospace font, its cell size, a margin.
sed -i 's#</head>#<style>body{margin:0;background:\#000}pre{margin:0;padding:14px 18px;font-family:"DejaVu Sans Mono",monospace;font-size:15px;line-height:19px;color:\#ddd}</style></head>#' "$work/shot.html"
width=$((cols * 9 + 36))
height=$((lines * 19 + 28))
mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--disable-background-networking --disable-component-update --disable-sync --no-first-run \
	--user-data-dir="$work/profile" --window-size="$width,$height" \
	--screenshot="$out" "file://$work/shot.html" 2>/dev/null
echo "$out: ${width}x${height}, $lines rows of the pane"
