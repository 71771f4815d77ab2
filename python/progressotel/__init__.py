"""progressotel for Python drivers: Ignition's ResourceTransitionProgressEvent
and an event log service that sends each event as an OpenTelemetry log
record, flattened by progressotel's wire contract (docs/wire.md), over
OTLP/JSON, or through the socket of an enclosing `progressotel run`.

Standard library only, Python 3.9 or later.

    from progressotel import ProgressEventLogWriterService, ResourceTransitionProgressEvent, TraceContext

    events = ProgressEventLogWriterService(component={"name": "ansible-driver", "version": "1.2.3"},
                                           scope={"tenant": "tenant-a"})
    ctx = TraceContext.from_headers(request.headers)
    events.add(ResourceTransitionProgressEvent("ansible/PlaybookStarted", {"playbook": "site.yml"}), ctx)
    events.shutdown()
"""

from .context import TraceContext, env_key, env_name
from .events import EVENT_TYPE, ResourceTransitionProgressEvent, check_type, escape_segment, flatten
from .service import ProgressEventLogWriterService

__version__ = "0.1.0"

__all__ = ["EVENT_TYPE", "ProgressEventLogWriterService", "ResourceTransitionProgressEvent", "TraceContext",
           "check_type", "env_key", "env_name", "escape_segment", "flatten"]
