"""Where records go: OTLP/JSON over HTTP to /v1/logs, or the socket of an
enclosing `progressotel run` (its hand-off protocol)."""

import ipaddress
import json
import logging
import os
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

from .events import SCOPE_NAME, SCOPE_VERSION

log = logging.getLogger("progressotel")

# The environment variable `progressotel run` sets for its child: the path
# of the run's socket (cmd/progressotel/internal/handoff.EnvSocket).
ENV_SOCKET = "PROGRESSOTEL_SOCKET"
HANDOFF_VERSION = 1
HANDOFF_TIMEOUT = 10.0  # the Go emit's wait for the run's answer

RETRYABLE = (429, 502, 503, 504)


class ExportError(Exception):
    """A batch that was not delivered; retryable tells whether trying again
    may help."""

    def __init__(self, message, retryable=False, retry_after=None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


def _env(environ, *names, default=None):
    for n in names:
        v = environ.get(n, "").strip()
        if v:
            return v
    return default


def parse_pairs(s, what):
    """A k=v,k2=v2 list of the OTel environment variables, values
    percent-decoded; a malformed entry is skipped with a warning."""
    out = {}
    for item in (s or "").split(","):
        if not item.strip():
            continue
        k, sep, v = item.partition("=")
        k = k.strip()
        if not sep or not k:
            log.warning("progressotel: %s: ignoring %r: want key=value", what, item.strip())
            continue
        out[urllib.parse.unquote(k)] = urllib.parse.unquote(v.strip())
    return out


def logs_endpoint(environ):
    """The URL logs are posted to: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT as it
    is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/logs appended; None when
    neither is set."""
    url = _env(environ, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
    if url:
        return url
    base = _env(environ, "OTEL_EXPORTER_OTLP_ENDPOINT")
    if base:
        return base.rstrip("/") + "/v1/logs"
    return None


def resource_attributes(environ):
    """The resource: OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME as
    service.name (it wins), unknown_service:python when neither names one."""
    attrs = parse_pairs(environ.get("OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES")
    name = _env(environ, "OTEL_SERVICE_NAME")
    if name:
        attrs["service.name"] = name
    attrs.setdefault("service.name", "unknown_service:python")
    attrs.setdefault("telemetry.sdk.language", "python")
    return attrs


def _loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OTLPExporter:
    """Posts batches of log records as OTLP/JSON. Configured from the
    standard OTEL_EXPORTER_OTLP_* variables (the LOGS_ ones win)."""

    def __init__(self, endpoint, headers=None, timeout=10.0, resource=None, cafile=None):
        parsed = urllib.parse.urlsplit(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError("progressotel: OTLP endpoint %r: want http://host:port or https://host:port" % endpoint)
        self.endpoint = endpoint
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.resource = [{"key": k, "value": {"stringValue": v}} for k, v in sorted((resource or {}).items())]
        handlers = []
        if parsed.scheme == "https":
            handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=cafile)))
        if _loopback(parsed.hostname):
            # A proxy of the environment (HTTP_PROXY) is never the way to a
            # collector on this machine.
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    @classmethod
    def from_env(cls, environ):
        """The exporter the environment configures, or None (no endpoint,
        or OTEL_LOGS_EXPORTER=none)."""
        which = _env(environ, "OTEL_LOGS_EXPORTER", default="otlp").lower()
        if which == "none":
            return None
        url = logs_endpoint(environ)
        if url is None:
            return None
        if which != "otlp":
            log.warning("progressotel: OTEL_LOGS_EXPORTER=%s: this module exports OTLP only", which)
        proto = _env(environ, "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL", default="http/json")
        if proto != "http/json":
            log.warning("progressotel: OTLP protocol %s: this module sends http/json", proto)
        headers = parse_pairs(environ.get("OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS")
        headers.update(parse_pairs(environ.get("OTEL_EXPORTER_OTLP_LOGS_HEADERS"), "OTEL_EXPORTER_OTLP_LOGS_HEADERS"))
        timeout_ms = _env(environ, "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT", default="10000")
        try:
            timeout = max(int(timeout_ms), 1) / 1000.0
        except ValueError:
            log.warning("progressotel: OTLP timeout %r is not milliseconds: 10 s", timeout_ms)
            timeout = 10.0
        cafile = _env(environ, "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE")
        return cls(url, headers, timeout, resource_attributes(environ), cafile)

    def body(self, records):
        """The OTLP/JSON request of records (lowerCamelCase, hex ids)."""
        return json.dumps({"resourceLogs": [{
            "resource": {"attributes": self.resource},
            "scopeLogs": [{"scope": {"name": SCOPE_NAME, "version": SCOPE_VERSION}, "logRecords": records}],
        }]}, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")

    def export(self, records, deadline):
        """Posts one batch; returns how many records the endpoint rejected
        (its partial success), raises ExportError when none was taken."""
        timeout = min(self.timeout, deadline - time.monotonic())
        if timeout <= 0:
            raise ExportError("no time left to export", retryable=False)
        headers = {"Content-Type": "application/json"}
        headers.update(self.headers)
        req = urllib.request.Request(self.endpoint, data=self.body(records), headers=headers, method="POST")
        try:
            with self._opener.open(req, timeout=timeout) as resp:
                answer = resp.read(1 << 20)
        except urllib.error.HTTPError as e:
            detail = e.read(512).decode("utf-8", "replace").strip()
            retry_after = None
            try:
                retry_after = float(e.headers.get("Retry-After", ""))
            except (TypeError, ValueError):
                pass
            raise ExportError("%s answered %d %s%s" % (self.endpoint, e.code, e.reason, ": " + detail if detail else ""),
                              retryable=e.code in RETRYABLE, retry_after=retry_after) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ExportError("%s unreachable: %s" % (self.endpoint, reason), retryable=True) from None
        try:
            partial = json.loads(answer or b"{}").get("partialSuccess") or {}
            return int(partial.get("rejectedLogRecords") or 0)
        except (ValueError, AttributeError):
            return 0


class HandoffError(Exception):
    """The run did not take an event: invalid tells the run found it
    invalid; unreachable that it was not sent (the run has ended)."""

    def __init__(self, message, invalid=False, unreachable=False):
        super().__init__(message)
        self.invalid = invalid
        self.unreachable = unreachable


class HandoffSender:
    """Hands events to the enclosing `progressotel run`: one connection
    per event, one JSON line each way, as `progressotel emit` does, so
    that the run records them in its own sequence."""

    def __init__(self, path, timeout=HANDOFF_TIMEOUT):
        self.path = path
        self.timeout = timeout

    def send(self, line):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            try:
                s.connect(self.path)
            except OSError as e:
                raise HandoffError("the run is not reachable at %s: %s" % (self.path, e), unreachable=True) from None
            try:
                s.sendall(line + b"\n")
                answer = b""
                while b"\n" not in answer and len(answer) < 64 << 10:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
                a = json.loads(answer.decode("utf-8"))
            except (OSError, ValueError) as e:
                raise HandoffError("no answer from the run: %s" % e) from None
        finally:
            s.close()
        if not a.get("ok"):
            raise HandoffError("the run refused the event: %s" % a.get("error", "no reason"), invalid=bool(a.get("invalid")))

    @classmethod
    def from_env(cls, environ):
        path = environ.get(ENV_SOCKET, "")
        return cls(path) if path else None


def environ_or(environ):
    return os.environ if environ is None else environ
