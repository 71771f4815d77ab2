"""Sends events with progressotel, for the Go tests that check what reaches
Kafka (collector-config/e2e/python_test.go).

    send_events.py CASES.json

CASES.json: {"services": [{"component": {...}, "resource": {...}, "scope":
{...}, "observedGeneration": 4, "events": [{"type": "group/Name",
"details": {...}, "time": "RFC 3339", "severity": "INFO", "traceparent":
"...", "headers": {"x-tracectx-...": "..."}}]}]}. Each service is shut down
before the next starts. The exporter comes from the environment
(OTEL_EXPORTER_OTLP_*). Prints each service's stats as a JSON line; exits 1
when an event was dropped or not delivered.
"""

import datetime
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from progressotel import ProgressEventLogWriterService, ResourceTransitionProgressEvent, TraceContext  # noqa: E402


def main(path):
    with open(path) as f:
        cases = json.load(f)
    ok = True
    for svc in cases["services"]:
        service = ProgressEventLogWriterService(component=svc.get("component"), resource=svc.get("resource"),
                                                scope=svc.get("scope"),
                                                observed_generation=svc.get("observedGeneration", 0))
        for e in svc["events"]:
            when = None
            if e.get("time"):
                when = datetime.datetime.fromisoformat(e["time"].replace("Z", "+00:00"))
            headers = dict(e.get("headers") or {})
            if e.get("traceparent"):
                headers["traceparent"] = e["traceparent"]
            ctx = TraceContext.from_headers(headers) if headers else None
            service.add(ResourceTransitionProgressEvent(e["type"], e.get("details"), time=when,
                                                        severity=e.get("severity", "INFO")), ctx)
        done = service.shutdown(timeout=60)
        stats = service.stats()
        print(json.dumps(stats), flush=True)
        ok = ok and done and not stats["dropped"] and not stats["failed"] and stats["exported"] == len(svc["events"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
