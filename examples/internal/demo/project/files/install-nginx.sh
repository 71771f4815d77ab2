#!/bin/sh
# Stands in for a package install: on web-2 the first attempt finds the
# package manager locked, as a real install sometimes does.
# Usage: install-nginx.sh HOST STATE_DIR VERSION
host=$1 state=$2 version=$3
n=$(cat "$state/$host.attempts" 2>/dev/null || echo 0)
echo $((n + 1)) > "$state/$host.attempts"
if [ "$host" = web-2 ] && [ "$n" -lt 1 ]; then
	echo "Could not get lock /var/lib/dpkg/lock-frontend" >&2
	exit 100
fi
echo "nginx $version installed"
