"""The context of a request: its W3C trace context and its tracectx values,
read as the Go propagation package reads them (propagation/)."""

import os
import re

HEADER_PREFIX = "x-tracectx-"
ENV_PREFIX = "X_TRACECTX_"
MAX_VALUES = 32
MAX_KEY_LEN = 64
MAX_VALUE_LEN = 256
# The keys Ignition knows, kept first when there are too many values.
WELL_KNOWN = ("transactionid", "processid", "taskid", "tenantid", "driverrequestid", "externalrequestid")
# Ignition's spelling of the well-known keys in header names.
_SPELLING = {"transactionid": "TransactionId", "processid": "ProcessId", "taskid": "TaskId",
             "tenantid": "TenantId", "driverrequestid": "DriverRequestId",
             "externalrequestid": "ExternalRequestId"}

_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def normalize_key(key):
    """key lower-cased, or None when the Go package rejects it: empty,
    longer than 64 bytes, or a byte other than ASCII letters, digits and
    '-', '_', '.' (which may not start it)."""
    if not key or len(key) > MAX_KEY_LEN:
        return None
    for i, c in enumerate(key):
        if c in _KEY_CHARS or (c in "-_." and i > 0):
            continue
        return None
    return key.lower()


def normalize_value(value):
    """value without the spaces and tabs around it, or None when the Go
    package rejects it: empty, longer than 256 bytes, or holding a control
    character or U+2028/U+2029."""
    value = value.strip(" \t")
    if not value or len(value.encode("utf-8", "surrogatepass")) > MAX_VALUE_LEN:
        return None
    for c in value:
        o = ord(c)
        if o < 0x20 or 0x7F <= o <= 0x9F or c in "\u2028\u2029" or 0xD800 <= o <= 0xDFFF:
            return None
    return value


def env_name(key):
    """The environment variable that carries a tracectx key (Go:
    propagation.EnvName): X_TRACECTX_ then the key upper-cased, with '-',
    '.' and '_' written _2D, _2E and _5F."""
    k = normalize_key(key)
    if k is None:
        raise ValueError("invalid tracectx key %r" % (key,))
    return ENV_PREFIX + k.replace("_", "_5F").replace("-", "_2D").replace(".", "_2E").upper()


def env_key(name):
    """The tracectx key an environment variable carries (Go:
    propagation.EnvKey), or None."""
    if not name.startswith(ENV_PREFIX):
        return None
    rest = name[len(ENV_PREFIX):]
    if any(not (c.isascii() and (c.isupper() or c.isdigit() or c == "_")) for c in rest):
        return None
    # The three escapes, in one pass, as strings.NewReplacer does.
    rest = re.sub(r"_(2D|2E|5F)", lambda m: {"2D": "-", "2E": ".", "5F": "_"}[m.group(1)], rest)
    return normalize_key(rest)


def _capped(values):
    """At most MAX_VALUES values: the well-known keys first, then the
    others in byte order of their names (the Go package's cap)."""
    if len(values) <= MAX_VALUES:
        return values
    rank = {k: i for i, k in enumerate(WELL_KNOWN)}
    keys = sorted(values, key=lambda k: (rank.get(k, len(WELL_KNOWN)), k.encode()))
    return {k: values[k] for k in keys[:MAX_VALUES]}


class TraceContext:
    """The trace id, span id and flags of a W3C traceparent, and the
    tracectx values (keys lower-cased), that every record of a request
    carries. Build one per request with from_headers, or once per process
    with from_env."""

    def __init__(self, traceparent=None, tracectx=None):
        self.trace_id = self.span_id = None
        self.flags = 0
        self.traceparent = None
        if traceparent:
            m = _TRACEPARENT.match(traceparent.strip())
            if m and m.group(1) != "ff" and m.group(2) != "0" * 32 and m.group(3) != "0" * 16 \
                    and not (m.group(1) == "00" and m.group(5)):
                self.trace_id, self.span_id, self.flags = m.group(2), m.group(3), int(m.group(4), 16)
                self.traceparent = "00-%s-%s-%s" % (self.trace_id, self.span_id, m.group(4))
        values = {}
        for k, v in (tracectx or {}).items():
            k, v = normalize_key(k), normalize_value(v) if isinstance(v, str) else None
            if k is not None and v is not None:
                values[k] = v
        self.tracectx = _capped(values)

    @classmethod
    def from_headers(cls, headers):
        """The context of a request's headers (a dict, or any mapping or
        list of (name, value) pairs, names in any case): traceparent, and
        each x-tracectx-<key> header."""
        items = headers.items() if hasattr(headers, "items") else headers
        traceparent, values = None, {}
        for name, value in items:
            n = name.lower()
            if n == "traceparent":
                traceparent = value
            elif n.startswith(HEADER_PREFIX):
                values[n[len(HEADER_PREFIX):]] = value
        return cls(traceparent, values)

    @classmethod
    def from_env(cls, environ=None):
        """The context of the process's environment: TRACEPARENT and each
        X_TRACECTX_<KEY> variable, as progressotel run sets them."""
        environ = os.environ if environ is None else environ
        values = {}
        for name, value in environ.items():
            k = env_key(name)
            if k is not None:
                values[k] = value
        return cls(environ.get("TRACEPARENT"), values)

    def headers(self):
        """The context as request headers (traceparent, x-tracectx-*), with
        Ignition's spelling of the well-known keys, as the Go propagator
        injects it."""
        out = {}
        if self.traceparent:
            out["traceparent"] = self.traceparent
        for k, v in self.tracectx.items():
            out[HEADER_PREFIX + _SPELLING.get(k, k)] = v
        return out
