#!/usr/bin/env bash
# Redraws docs/img/live-view.svg, the README's picture of the live view:
# `make demo`'s real final screen (a real Ansible run) in a tmux pane of
# 104×30, with its colours. TestREADMEScreenshot (examples/ansible-driver)
# draws it and, in make test, checks that the committed picture still says
# what the view prints (its numbers aside), so that it cannot drift.
#
#   scripts/screenshot-live.sh
#
# Needs tmux, Ansible and ansible-runner (make tools).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
go test -count=1 -run '^TestREADMEScreenshot$' ./examples/ansible-driver -args -screenshot.update
echo "docs/img/live-view.svg redrawn"
