#!/bin/sh
# run.sh [collector flags...]: start otelcol-progress with progress.yaml and
# the overlays that the environment switches on:
#
#   PROGRESS_TENANTS_FILE        an overlay made by gen-tenants.sh
#   PROGRESS_TENANTS             "a b c": generate that overlay now, into
#                                $PROGRESS_STORAGE_DIR/tenants.generated.yaml
#   PROGRESS_OTLP_TLS_CERT_FILE  set: tls.yaml (OTLP over TLS)
#   PROGRESS_OTLP_BEARER_TOKEN   set: auth.yaml (bearer-token auth)
#   PROGRESS_LOCAL_FILE          set: local.yaml (file route for local runs)
#   PROGRESS_TRACES_ENDPOINT     set: traces.yaml, or traces-grpc.yaml with
#                                PROGRESS_TRACES_PROTOCOL=grpc (spans to a
#                                tracing backend instead of dropped)
#   PROGRESS_METRICS_BACKEND_ENDPOINT  set: metrics.yaml (the drivers'
#                                metrics to an OTLP/HTTP backend)
#   PROGRESS_OTELCOL_BIN         the binary (default: bin/otelcol-progress)
#   PROGRESS_TIER                single (default): progress.yaml, one tier;
#                                gateway: progress.yaml and gateway.yaml, the
#                                second tier, behind agents;
#                                agent: agent.yaml instead of progress.yaml: the
#                                first tier, load-balancing to the gateways
#                                in PROGRESS_GATEWAYS (only the tls.yaml and
#                                auth.yaml overlays apply to it)
#   PROGRESS_GATEWAYS_DNS        set (agent): agent-dns.yaml, the gateways
#                                from DNS (a headless Service) instead
#   PROGRESS_GATEWAY_BEARER_TOKEN  set (agent): agent-auth.yaml, the token
#                                the agent presents to its gateways (theirs
#                                is PROGRESS_OTLP_BEARER_TOKEN)
#
# The collector replaces this shell (exec), so signals reach it directly.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

# The Go runtime's memory policy (docs/collector.md, "Garbage collection"),
# each kept when already set: a collection once the heap has grown by twice
# the live data (GOGC=200; Go's default, 100, spent a fifth of the
# collector's CPU on collections), and a soft limit at the memory_limiter's
# (GOMEMLIMIT: PROGRESS_MEMORY_LIMIT_MIB, or its default in agent.yaml or
# progress.yaml), which makes collections more frequent again near it. A
# limit that is not a whole number is left to the collector to refuse.
case "${PROGRESS_TIER:-single}" in
agent) limit=${PROGRESS_MEMORY_LIMIT_MIB:-256} ;;
*) limit=${PROGRESS_MEMORY_LIMIT_MIB:-512} ;;
esac
export GOGC="${GOGC:-200}"
case $limit in
'' | *[!0-9]*) ;;
*) export GOMEMLIMIT="${GOMEMLIMIT:-${limit}MiB}" ;;
esac
bin=${PROGRESS_OTELCOL_BIN:-$here/../bin/otelcol-progress}

if [ -n "${PROGRESS_GATEWAY_BEARER_TOKEN:-}" ] && [ "${PROGRESS_TIER:-single}" != agent ]; then
	echo "$0: PROGRESS_GATEWAY_BEARER_TOKEN is the token an agent presents to its gateways (PROGRESS_TIER=agent); a gateway requires its token with PROGRESS_OTLP_BEARER_TOKEN" >&2
	exit 2
fi
# An agent that asks a token of its drivers (auth.yaml) and presents one
# to its gateways (agent-auth.yaml): each overlay lists the extensions it
# needs, and a later list replaces an earlier one, so the list with both
# goes last (the first one prepended here).
if [ "${PROGRESS_TIER:-single}" = agent ] && [ -n "${PROGRESS_OTLP_BEARER_TOKEN:-}" ] && [ -n "${PROGRESS_GATEWAY_BEARER_TOKEN:-}" ]; then
	set -- --config "yaml:service::extensions: [file_storage, health_check, admission, bearertokenauth/otlp, bearertokenauth/gateway]" "$@"
fi

if [ -n "${PROGRESS_TRACES_ENDPOINT:-}" ]; then
	case "${PROGRESS_TRACES_PROTOCOL:-http/protobuf}" in
	http/protobuf) set -- --config "$here/traces.yaml" "$@" ;;
	grpc) set -- --config "$here/traces-grpc.yaml" "$@" ;;
	*)
		echo "$0: PROGRESS_TRACES_PROTOCOL=$PROGRESS_TRACES_PROTOCOL: want http/protobuf or grpc" >&2
		exit 2
		;;
	esac
fi
if [ -n "${PROGRESS_METRICS_BACKEND_ENDPOINT:-}" ]; then set -- --config "$here/metrics.yaml" "$@"; fi
if [ -n "${PROGRESS_LOCAL_FILE:-}" ]; then set -- --config "$here/local.yaml" "$@"; fi
if [ -n "${PROGRESS_OTLP_BEARER_TOKEN:-}" ]; then set -- --config "$here/auth.yaml" "$@"; fi
if [ -n "${PROGRESS_OTLP_TLS_CERT_FILE:-}" ]; then set -- --config "$here/tls.yaml" "$@"; fi
if [ -n "${PROGRESS_TENANTS_FILE:-}" ]; then
	set -- --config "$PROGRESS_TENANTS_FILE" "$@"
elif [ -n "${PROGRESS_TENANTS:-}" ]; then
	# The collector replaces this shell, so nothing could delete a temporary
	# file afterwards: the overlay goes to the collector's own state
	# directory instead, one file replaced on every start.
	dir=${PROGRESS_STORAGE_DIR:-/var/lib/otelcol-progress}
	mkdir -p "$dir"
	gen=$dir/tenants.generated.yaml
	# shellcheck disable=SC2086 # the list is split on purpose
	"$here/gen-tenants.sh" $PROGRESS_TENANTS >"$gen.new" || {
		rm -f "$gen.new"
		exit 2
	}
	mv -f "$gen.new" "$gen"
	set -- --config "$gen" "$@"
fi
case "${PROGRESS_TIER:-single}" in
single) set -- --config "$here/progress.yaml" "$@" ;;
gateway) set -- --config "$here/progress.yaml" --config "$here/gateway.yaml" "$@" ;;
agent)
	if [ -n "${PROGRESS_TENANTS_FILE:-}${PROGRESS_TENANTS:-}${PROGRESS_LOCAL_FILE:-}${PROGRESS_TRACES_ENDPOINT:-}${PROGRESS_METRICS_BACKEND_ENDPOINT:-}" ]; then
		echo "$0: PROGRESS_TIER=agent: tenants, the local file, a traces backend and a metrics backend are the gateway's (unset PROGRESS_TENANTS*, PROGRESS_LOCAL_FILE, PROGRESS_TRACES_ENDPOINT, PROGRESS_METRICS_BACKEND_ENDPOINT)" >&2
		exit 2
	fi
	if [ -n "${PROGRESS_GATEWAY_BEARER_TOKEN:-}" ]; then
		# The bearertokenauth extension sends a token over TLS only; in
		# plain text every send would fail (and be retried for ever).
		if [ "${PROGRESS_GATEWAY_TLS_INSECURE:-true}" != false ]; then
			echo "$0: PROGRESS_GATEWAY_BEARER_TOKEN is sent over TLS only: set PROGRESS_GATEWAY_TLS_INSECURE=false (and PROGRESS_GATEWAY_TLS_CA_FILE)" >&2
			exit 2
		fi
		set -- --config "$here/agent-auth.yaml" "$@"
	fi
	if [ -n "${PROGRESS_GATEWAYS_DNS:-}" ]; then set -- --config "$here/agent-dns.yaml" "$@"; fi
	set -- --config "$here/agent.yaml" "$@"
	;;
*)
	echo "$0: PROGRESS_TIER=$PROGRESS_TIER: want single, gateway or agent" >&2
	exit 2
	;;
esac
exec "$bin" "$@"
