#!/usr/bin/env bash
# Installs the real tools the tests run, from Debian's packages, when any is
# missing (Debian/Ubuntu, as root or through sudo):
#   ansible-core, python3-ansible-runner  the ansible adapter's integration
#                                         tests, the CLI's Ansible tests and
#                                         the live demo (make demo)
#   openssh-client                        the unreachable-host test
#   python3                               examples/python-driver (Debian's
#                                         /usr/bin/python3)
#   tmux                                  the live view's terminal tests
#                                         (make test-tmux)
#   prometheus (with promtool)            the collector's alert rules:
#                                         promtool check/test rules, and the
#                                         real server in make test-scale
#   umoci                                 unpacks the collector image
#                                         (make test-image)
# The collector, the Kafka test broker and OpenTofu are built from their Go
# modules by the Makefile instead. Used by .ci/run; `make tools` runs it.
set -euo pipefail

have() { command -v "$1" >/dev/null; }
if have ansible-playbook && have ansible-runner && have ssh && [ -x /usr/bin/python3 ] && have tmux && have prometheus && have promtool && have umoci; then
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends \
	ansible-core python3-ansible-runner openssh-client python3 tmux prometheus umoci
