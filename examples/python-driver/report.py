#!/usr/bin/python3
"""Records one progress event with the progressotel Python module
(python/progressotel in this repository), for a playbook task.

    report.py GROUP/Name '{"json": "details"}'

Run by `progressotel run`, the module hands the event to the run over its
socket (PROGRESSOTEL_SOCKET): the run records it in its trace and sequence.
Elsewhere it exports OTLP/JSON to OTEL_EXPORTER_OTLP_ENDPOINT.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from progressotel import ProgressEventLogWriterService, ResourceTransitionProgressEvent  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    events = ProgressEventLogWriterService(component={"name": "python-lifecycle-driver", "version": "1.0.0"})
    events.add(ResourceTransitionProgressEvent(argv[1], json.loads(argv[2])))
    events.shutdown(timeout=10)  # warns when the event was not delivered; the task goes on
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
