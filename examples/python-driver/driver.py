#!/usr/bin/python3
"""An Ignition-style lifecycle driver in Python that reports live progress
with the progressotel command, and no Go code.

A lifecycle request arrives with its x-tracectx-* headers (and, from a
traced caller, traceparent). The driver:

  1. puts the request's context in the environment of everything it starts:
     TRACEPARENT, and each tracectx value as X_TRACECTX_<KEY>; a request
     without traceparent gets a new trace, so that every record of the
     request shares one trace id;
  2. records its own events with `progressotel emit`;
  3. runs the lifecycle's playbook with `progressotel run -- ansible-playbook`,
     which records the run as an operation in a span of that trace (and,
     with the Ansible adapter, each Ansible event live); a task of the
     playbook records an event with `progressotel emit` too, and another
     with the progressotel Python module (report.py, python/progressotel),
     both of which the run takes over its socket.

Exporters are configured as for any OpenTelemetry SDK: OTEL_LOGS_EXPORTER,
OTEL_EXPORTER_OTLP_ENDPOINT, ... Only the standard library is used.

    driver.py REQUEST.json     # prints the lifecycle result as JSON
"""

import json
import os
import secrets
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The progressotel Python module of this repository (python/progressotel):
# env_name spells a tracectx key's variable as progressotel does.
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from progressotel import env_name  # noqa: E402

PROGRESSOTEL = os.environ.get("PROGRESSOTEL", "progressotel")
TRACECTX_HEADER = "x-tracectx-"


def new_traceparent():
    """A W3C traceparent for a request that came without one."""
    return "00-%s-%s-01" % (secrets.token_hex(16), secrets.token_hex(8))


def request_env(headers):
    """The environment that carries the request's trace context and
    tracectx to progressotel and everything it runs."""
    env = dict(os.environ)
    # Nothing of an enclosing request leaks into this one.
    for name in list(env):
        if name.startswith("X_TRACECTX_") or name in ("TRACEPARENT", "TRACESTATE", "BAGGAGE"):
            del env[name]
    for name, value in headers.items():
        lower = name.lower()
        if lower.startswith(TRACECTX_HEADER):
            env[env_name(lower[len(TRACECTX_HEADER):])] = value
        elif lower in ("traceparent", "tracestate", "baggage"):
            env[lower.upper()] = value
    env.setdefault("TRACEPARENT", new_traceparent())
    return env


def envelope_flags(request):
    """The envelope of every event: the driver and the resource."""
    resource = request["resource"]
    return [
        "--component", "python-lifecycle-driver", "--component-version", "1.0.0",
        "--resource-type", resource["type"], "--resource-id", resource["id"],
    ]


def emit(env, request, event_type, details, severity="info"):
    """Records one progress event. It never fails the request: progressotel
    exits 0 whatever happens to telemetry, and 2 only for invalid input,
    which is a bug of the driver."""
    rc = subprocess.run(
        [PROGRESSOTEL, "emit", "--type", event_type, "--details", json.dumps(details),
         "--severity", severity, *envelope_flags(request)],
        env=env, check=False).returncode
    if rc == 2:
        raise ValueError("progressotel emit rejected %s" % event_type)


def execute_lifecycle(request):
    """Runs the lifecycle's playbook and returns Ignition's lifecycle
    execution result."""
    env = request_env(request.get("headers", {}))
    lifecycle = request["lifecycleName"]
    playbook = os.path.join(HERE, "playbooks", lifecycle + ".yaml")
    emit(env, request, "driver/RequestAccepted", {"lifecycleName": lifecycle, "requestId": request["requestId"]})

    rc = subprocess.run(
        [PROGRESSOTEL, "run", "--operation", lifecycle, *envelope_flags(request), "--",
         "ansible-playbook", "-i", os.path.join(HERE, "inventory"), playbook],
        env=env, stdout=subprocess.DEVNULL, check=False).returncode

    result = {"requestId": request["requestId"], "status": "COMPLETE" if rc == 0 else "FAILED"}
    if rc != 0:
        result["failureDetails"] = {
            "failureCode": "INTERNAL_ERROR",
            "description": "the %s playbook failed (exit status %d)" % (lifecycle, rc),
        }
    emit(env, request, "driver/RequestCompleted", {"requestId": request["requestId"], "status": result["status"]},
         severity="info" if rc == 0 else "error")
    return result


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        request = json.load(f)
    result = execute_lifecycle(request)
    print(json.dumps(result))
    return 0 if result["status"] == "COMPLETE" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
