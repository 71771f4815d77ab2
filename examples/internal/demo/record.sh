#!/usr/bin/env bash
# Records testdata/install.jsonl: a real run of project/install.yml by
# ansible-runner, as `ansible-runner run --json` prints it, with the
# environment Run gives it. Local paths are replaced (project → /project,
# state → /state, inventory → /inventory/hosts). Needs Ansible:
#   apt-get install --no-install-recommends ansible-core python3-ansible-runner
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/private/env" "$tmp/state"
cp -r "$here/project" "$tmp/project"
local="ansible_connection=local ansible_python_interpreter=/usr/bin/python3"
printf '[web]\nweb-1 %s\nweb-2 %s\n' "$local" "$local" > "$tmp/hosts"
printf '{"state_dir": "%s"}' "$tmp/state" > "$tmp/private/env/extravars"
ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True ANSIBLE_NOCOLOR=True \
	ansible-runner run "$tmp/private" --json --ident run --project-dir "$tmp/project" \
	--playbook install.yml --inventory "$tmp/hosts" > "$tmp/out.jsonl"
sed -e "s#$tmp/project#/project#g" -e "s#$tmp/state#/state#g" -e "s#$tmp/hosts#/inventory/hosts#g" \
	-e "s#$tmp/private#/private#g" "$tmp/out.jsonl" > "$here/testdata/install.jsonl"
echo "recorded $(wc -l < "$here/testdata/install.jsonl") events into testdata/install.jsonl"
