"""The Python sender of bench/e2e (-sender python): the medium event of the
Go driver's steps (bench/e2e/step.go, event), added at a paced rate through
python/progressotel's ProgressEventLogWriterService, which sends OTLP/JSON
to OTEL_EXPORTER_OTLP_ENDPOINT. Runs of 1000 events, each in a trace of its
own (TRACEPARENT per run, as a driver per request). Prints one JSON line at
the end: {"sent": n, "dropped": d, "failed": f}.

    python3 pysend.py RATE SECONDS TENANT[,TENANT...]
"""

import json
import os
import sys
import time

from progressotel import ProgressEventLogWriterService, ResourceTransitionProgressEvent, TraceContext


def run_context():
    return TraceContext("00-%s-%s-01" % (os.urandom(16).hex(), os.urandom(8).hex()), {})


def main():
    rate, seconds = int(sys.argv[1]), float(sys.argv[2])
    tenants = sys.argv[3].split(",")
    services = [ProgressEventLogWriterService(
        component={"name": "ansible-driver", "version": "3.2.1"},
        resource={"type": "AssemblyInstance", "id": "asm-e2e-0"},
        scope={"organization": t}) for t in tenants]
    start = time.monotonic()
    n = 0
    ctx = None
    while True:
        el = time.monotonic() - start
        if el >= seconds:
            break
        due = int(rate * el)
        while n < due:
            if n % 1000 == 0:
                ctx = run_context()
            details = {
                "taskName": "Install packages", "itemLabel": "nginx", "hostName": "web-0",
                "delegatedHostName": "bastion-01",
                "taskResult": {"msg": "All items completed", "changed": True, "failed": False, "rc": 0,
                               "timing": {"startMs": 1764432000123, "durationMs": n % 5000}},
            }
            services[n % len(services)].add(ResourceTransitionProgressEvent("ansible/TaskCompletedOnHost", details), ctx)
            n += 1
        time.sleep(0.005)
    dropped = failed = 0
    for s in services:
        s.shutdown(timeout=60.0)
        st = s.stats()
        dropped += st["dropped"]
        failed += st["failed"]
    print(json.dumps({"sent": n, "dropped": dropped, "failed": failed}))


if __name__ == "__main__":
    main()
