"""The event log service: started once with the driver, add(event) never
blocks, one daemon thread delivers."""

import atexit
import collections
import json
import logging
import queue
import threading
import time
import weakref

from .context import TraceContext
from .events import (EVENT_TYPE, SEVERITIES, ResourceTransitionProgressEvent, _Flattener, escape_segment, flatten,
                     rfc3339, time_unix_nano)
from .export import ExportError, HandoffError, HandoffSender, OTLPExporter, environ_or

log = logging.getLogger("progressotel")

DEFAULT_QUEUE_SIZE = 2048
DEFAULT_BATCH_SIZE = 512
MAX_SEQUENCE_KEYS = 4096  # as a Go Recorder: a key forgotten starts again at 1
_STOP = object()


def _int_env(environ, name, default):
    v = environ.get(name, "").strip()
    if not v:
        return default
    try:
        n = int(v)
        if n > 0:
            return n
    except ValueError:
        pass
    log.warning("progressotel: %s=%r is not a positive integer: %d", name, v, default)
    return default


def _jsonable(v, f=None):
    """v with what JSON cannot hold written as the OTLP path writes it, for
    the hand-off's JSON (the run flattens it): NaN and infinities, integers
    beyond int64, bytes, datetimes and other types become strings."""
    f = f or _Flattener()
    if isinstance(v, dict):
        return {k: _jsonable(v[orig], f) for k, orig in f.sorted_keys(v)}
    if isinstance(v, (list, tuple)):
        return [_jsonable(e, f) for e in v]
    if v is None or isinstance(v, (bool, str)):
        return v
    val = f.value(v)
    if "intValue" in val:
        return int(val["intValue"])
    if "doubleValue" in val:
        return val["doubleValue"]
    return val["stringValue"]


class ProgressEventLogWriterService:
    """The event log service of a driver: create it once at start-up and
    give it every ResourceTransitionProgressEvent with add().

    The envelope (component, resource, scope, observed_generation) is set
    once here and written on every record, as docs/wire.md lays it out.
    context is the TraceContext of events added without one; by default
    the process's (TRACEPARENT, X_TRACECTX_*).

    Where records go is read from the environment (environ, os.environ by
    default): the socket of an enclosing `progressotel run`
    (PROGRESSOTEL_SOCKET), else OTLP/JSON to the OTEL_EXPORTER_OTLP_*
    endpoint, else nowhere (a warning says so). The queue holds
    max_queue_size events (OTEL_BLRP_MAX_QUEUE_SIZE, 2048): add() drops
    what does not fit and counts it in dropped.
    """

    def __init__(self, component=None, resource=None, scope=None, observed_generation=0, context=None,
                 environ=None, max_queue_size=None, max_batch_size=None, retry_initial=0.5, retry_max=5.0,
                 retry_max_elapsed=30.0):
        environ = environ_or(environ)
        self.component = dict(component or {})
        self.resource = dict(resource or {})
        self.scope = {k: v for k, v in (scope or {}).items() if v}
        self.observed_generation = int(observed_generation or 0)
        self.context = context if context is not None else TraceContext.from_env(environ)
        self._envelope = self._envelope_attrs()
        self.retry_initial, self.retry_max, self.retry_max_elapsed = retry_initial, retry_max, retry_max_elapsed

        self._handoff = HandoffSender.from_env(environ)
        self._otlp = None if self._handoff else OTLPExporter.from_env(environ)
        if self._handoff:
            self.mode = "handoff"
        elif self._otlp:
            self.mode = "otlp"
        else:
            self.mode = "disabled"
            log.warning("progressotel: no OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) and no enclosing "
                        "progressotel run: progress events go nowhere")
        size = max_queue_size or _int_env(environ, "OTEL_BLRP_MAX_QUEUE_SIZE", DEFAULT_QUEUE_SIZE)
        self.max_batch_size = max_batch_size or _int_env(environ, "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE",
                                                         DEFAULT_BATCH_SIZE)
        self._queue = queue.Queue(maxsize=size)
        self._lock = threading.Lock()
        self._done_cond = threading.Condition(self._lock)
        self._sequences = collections.OrderedDict()
        self._enqueued = 0  # events put in the queue
        self._done = 0  # events the thread finished with, delivered or not
        self._accepted = self._dropped = self._exported = self._failed = 0
        self._closed = False
        self._abort = threading.Event()  # set when shutdown's deadline passed
        self._warned = set()
        self._thread = None
        if self.mode != "disabled":
            self._thread = threading.Thread(target=self._run, name="progressotel-exporter", daemon=True)
            self._thread.start()
            ref = weakref.ref(self)
            atexit.register(lambda: ref() is not None and ref().shutdown(timeout=5.0))

    # -- the envelope

    def _envelope_attrs(self):
        """The envelope attributes, in the Go library's order; present-only."""
        attrs = []

        def put(key, v):
            if v:
                attrs.append({"key": key, "value": {"stringValue": str(v)}})

        put("progress.component.name", self.component.get("name"))
        put("progress.component.version", self.component.get("version"))
        for k in ("type", "id", "namespace", "uid"):
            put("progress.resource." + k, self.resource.get(k))
        for k in sorted(self.scope):
            put("progress.scope." + escape_segment(k), self.scope[k])
        if self.observed_generation:
            attrs.append({"key": "progress.observed_generation", "value": {"intValue": str(self.observed_generation)}})
        return attrs

    def _tenant(self, ctx):
        # The routing key: scope tenant, else organization, else tracectx tenantid.
        return self.scope.get("tenant") or self.scope.get("organization") or ctx.tracectx.get("tenantid")

    def _next_sequence(self, ctx):
        if ctx.trace_id:
            key = ("trace", ctx.trace_id)
        elif self.resource.get("type") or self.resource.get("id"):
            key = ("resource", self.resource.get("type"), self.resource.get("id"))
        else:
            key = ("service",)
        n = self._sequences.pop(key, 0) + 1
        self._sequences[key] = n
        if len(self._sequences) > MAX_SEQUENCE_KEYS:
            self._sequences.popitem(last=False)
        return n

    # -- records

    def _record(self, event, ctx, t_ns, sequence):
        """The OTLP/JSON log record of event (docs/wire.md)."""
        details, truncated = flatten(event.details)
        attrs = [{"key": "progress.event_type", "value": {"stringValue": EVENT_TYPE}}]
        attrs.extend(details)
        attrs.extend(self._envelope)
        tenant = self._tenant(ctx)
        if tenant:
            attrs.append({"key": "progress.tenant", "value": {"stringValue": tenant}})
        attrs.append({"key": "progress.sequence", "value": {"intValue": str(sequence)}})
        if truncated:
            attrs.append({"key": "progress.truncated", "value": {"boolValue": True}})
        for k in sorted(ctx.tracectx):
            attrs.append({"key": "tracectx." + k, "value": {"stringValue": ctx.tracectx[k]}})
        # No body, as the Go library's events: the collector builds the
        # message from the attributes.
        rec = {"timeUnixNano": str(t_ns), "observedTimeUnixNano": str(time.time_ns()),
               "severityNumber": SEVERITIES[event.severity], "severityText": event.severity,
               "eventName": event.progress_event_type, "attributes": attrs}
        if ctx.trace_id:
            rec["traceId"], rec["spanId"], rec["flags"] = ctx.trace_id, ctx.span_id, ctx.flags
        return rec

    def _handoff_line(self, event, ctx, t_ns):
        """The hand-off request of event: the message `progressotel emit`
        sends (cmd/progressotel/internal/cli/message.go)."""
        details = event.details if isinstance(event.details, dict) else (
            {} if event.details is None else {"value": event.details})
        env = {}
        comp = {k.capitalize(): v for k, v in self.component.items() if k in ("name", "version") and v}
        if comp:
            env["component"] = comp
        names = {"type": "Type", "id": "ID", "namespace": "Namespace", "uid": "UID"}
        res = {names[k]: v for k, v in self.resource.items() if k in names and v}
        if res:
            env["resource"] = res
        if self.scope:
            env["scope"] = self.scope
        if self.observed_generation:
            env["observedGeneration"] = self.observed_generation
        m = {"v": 1, "kind": "event", "time": rfc3339(t_ns), "type": event.progress_event_type,
             "details": _jsonable(details), "severity": SEVERITIES[event.severity]}
        if env:
            m["envelope"] = env
        carrier = ctx.headers()
        if carrier:
            m["carrier"] = carrier
        return json.dumps(m, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    # -- the API

    def add(self, event, context=None):
        """Takes event for delivery and returns at once. context (a
        TraceContext, e.g. TraceContext.from_headers(request.headers))
        defaults to the service's. Raises ValueError for anything but a
        ResourceTransitionProgressEvent; a full queue drops the event and
        counts it (dropped)."""
        if not isinstance(event, ResourceTransitionProgressEvent):
            raise ValueError("progressotel: add takes a ResourceTransitionProgressEvent, not %s"
                             % type(event).__name__)
        ctx = context if context is not None else self.context
        t_ns = time_unix_nano(event.time)
        with self._lock:
            if self._closed or self.mode == "disabled":
                self._dropped += 1
                return
            if self.mode == "otlp":
                # Numbered in add order; an event dropped below leaves a gap,
                # which tells the consumer it was lost.
                seq = self._next_sequence(ctx)
            self._accepted += 1
        try:
            if self.mode == "otlp":
                item = self._record(event, ctx, t_ns, seq)
            else:
                item = self._handoff_line(event, ctx, t_ns)
        except Exception as e:  # a driver never fails because of its telemetry
            self._warn_once("encode", "progressotel: event %s not encoded: %s" % (event.progress_event_type, e))
            with self._lock:
                self._failed += 1
            return
        with self._lock:
            try:
                self._queue.put_nowait(item)
                self._enqueued += 1
            except queue.Full:
                self._dropped += 1

    @property
    def dropped(self):
        """Events add() dropped: a full queue, or after shutdown."""
        with self._lock:
            return self._dropped

    def stats(self):
        """Counts so far: accepted (queued or dropped by a full queue),
        dropped, exported, failed (not delivered: refused, or retries
        exhausted), queued."""
        with self._lock:
            return {"accepted": self._accepted, "dropped": self._dropped, "exported": self._exported,
                    "failed": self._failed, "queued": self._enqueued - self._done}

    def flush(self, timeout=5.0):
        """Waits until every event added before the call is delivered or
        given up; returns False when timeout (seconds) passed first."""
        deadline = time.monotonic() + timeout
        with self._done_cond:
            target = self._enqueued
            while self._done < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._done_cond.wait(left)
        return True

    def shutdown(self, timeout=5.0):
        """Delivers what is queued within timeout seconds, stops the thread
        and warns when events were dropped or not delivered. Later add()
        calls drop. Returns False when it had to give up events."""
        deadline = time.monotonic() + timeout
        with self._lock:
            if self._closed:
                return True
            self._closed = True
        ok = True
        if self._thread is not None:
            ok = self.flush(max(deadline - time.monotonic(), 0))
            if not ok:
                self._abort.set()  # stop retrying; what is left is given up
            try:
                self._queue.put(_STOP, timeout=max(deadline - time.monotonic(), 0.5))
            except queue.Full:
                pass
            self._thread.join(max(deadline - time.monotonic(), 0.5))
        s = self.stats()
        if s["dropped"] or s["failed"] or s["queued"]:
            log.warning("progressotel: %d progress events dropped (queue full), %d not delivered, %d still queued "
                        "at shutdown", s["dropped"], s["failed"], s["queued"])
        return ok and not s["queued"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    # -- the thread

    def _warn_once(self, kind, message):
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s", message)

    def _finish(self, n, exported=0, failed=0):
        with self._done_cond:
            self._done += n
            self._exported += exported
            self._failed += failed
            self._done_cond.notify_all()

    def _run(self):
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            batch = [item]
            stop = False
            while len(batch) < self.max_batch_size:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                batch.append(more)
            try:
                if self.mode == "handoff":
                    self._send_handoff(batch)
                else:
                    self._send_otlp(batch)
            except Exception as e:  # never let the thread die
                self._warn_once("thread", "progressotel: delivery failed: %r" % e)
                self._finish(len(batch), failed=len(batch))
            if stop:
                return

    def _send_otlp(self, batch):
        if self._abort.is_set():
            self._finish(len(batch), failed=len(batch))
            return
        start = time.monotonic()
        delay = self.retry_initial
        while True:
            try:
                rejected = self._otlp.export(batch, start + self.retry_max_elapsed)
                if rejected:
                    self._warn_once("partial", "progressotel: the collector rejected %d log records" % rejected)
                self._finish(len(batch), exported=len(batch) - rejected, failed=rejected)
                return
            except ExportError as e:
                wait = e.retry_after if e.retry_after is not None else delay
                wait = min(wait, self.retry_max)
                if not e.retryable or time.monotonic() + wait > start + self.retry_max_elapsed:
                    self._warn_once("export", "progressotel: %d progress events not delivered: %s" % (len(batch), e))
                    self._finish(len(batch), failed=len(batch))
                    return
                if self._abort.wait(wait):
                    self._finish(len(batch), failed=len(batch))
                    return
                delay = min(delay * 2, self.retry_max)

    def _send_handoff(self, batch):
        for i, line in enumerate(batch):
            if self._abort.is_set():
                self._finish(len(batch) - i, failed=len(batch) - i)
                return
            try:
                self._handoff.send(line)
                self._finish(1, exported=1)
            except HandoffError as e:
                self._warn_once("handoff-invalid" if e.invalid else "handoff", "progressotel: %s" % e)
                self._finish(1, failed=1)
