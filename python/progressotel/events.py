"""The event of Ignition's seed and its flattening by the wire contract
(docs/wire.md): the same attributes the Go library writes."""

import base64
import datetime
import math
import time as _time

EVENT_TYPE = "ResourceTransitionProgressEvent"
# The instrumentation scope of every progress record: the collector takes
# only records of this scope as progress records.
SCOPE_NAME = "github.com/progressotel/progressotel/progress"
SCOPE_VERSION = "0.1.0"
DETAILS_PREFIX = "progress.details."
VALUE_KEY = "value"

# Severity numbers of OpenTelemetry, by the names the Go library writes.
SEVERITIES = {"TRACE": 1, "DEBUG": 5, "INFO": 9, "WARN": 13, "ERROR": 17, "FATAL": 21}

MAX_TYPE_LEN = 128
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGITS = "0123456789"
_GROUP_START = frozenset(_LOWER)
_GROUP = frozenset(_LOWER + _DIGITS + "_-")
_NAME_START = frozenset(_LOWER + _UPPER)
_NAME = frozenset(_LOWER + _UPPER + _DIGITS + "_-.")

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def check_type(progress_event_type):
    """Raises ValueError unless progress_event_type is "<group>/<name>" as
    the Go library accepts it (progress/validate.go): exactly one '/'; the
    group of lower-case ASCII letters, digits, '_' and '-', starting with a
    letter; the name of ASCII letters, digits, '_', '-' and '.', starting
    with a letter; at most 128 bytes in all."""
    s = progress_event_type
    if not isinstance(s, str):
        raise ValueError("invalid progressEventType %r: not a string" % (s,))

    def bad(rule):
        return ValueError(
            "invalid progressEventType %r: %s (want \"<group>/<name>\": group [a-z][a-z0-9_-]*, "
            "name [A-Za-z][A-Za-z0-9_.-]*, at most %d bytes)" % (s[:64], rule, MAX_TYPE_LEN))

    if s == "":
        raise bad("empty")
    if len(s.encode("utf-8")) > MAX_TYPE_LEN:
        raise bad("longer than %d bytes" % MAX_TYPE_LEN)
    if "/" not in s:
        raise bad("missing '/' between group and name")
    group, _, name = s.partition("/")
    if "/" in name:
        raise bad("more than one '/'")
    if group == "":
        raise bad("empty group")
    if name == "":
        raise bad("empty name")
    if group[0] not in _GROUP_START:
        raise bad("group must start with a lower-case letter")
    for c in group[1:]:
        if c not in _GROUP:
            raise bad("character %r not allowed in group" % c)
    if name[0] not in _NAME_START:
        raise bad("name must start with a letter")
    for c in name[1:]:
        if c not in _NAME:
            raise bad("character %r not allowed in name" % c)


class ResourceTransitionProgressEvent:
    """One progress event: a progressEventType, "<group>/<name>", and
    schema-less details (a dict), as in Ignition's model. time (a datetime,
    or seconds since the epoch) defaults to the time of add(); severity is
    one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL."""

    event_type = EVENT_TYPE

    def __init__(self, progress_event_type, details=None, time=None, severity="INFO"):
        check_type(progress_event_type)
        if severity not in SEVERITIES:
            raise ValueError("invalid severity %r: want one of %s" % (severity, ", ".join(SEVERITIES)))
        self.progress_event_type = progress_event_type
        self.details = {} if details is None else details
        self.time = time
        self.severity = severity

    def to_dict(self):
        return {"eventType": self.event_type, "progressEventType": self.progress_event_type,
                "details": self.details}

    def __repr__(self):
        return "ResourceTransitionProgressEvent(%r, %r)" % (self.progress_event_type, self.details)


def time_unix_nano(t):
    """The event's time in nanoseconds since the epoch (now when t is None)."""
    if t is None:
        return _time.time_ns()
    if isinstance(t, datetime.datetime):
        if t.tzinfo is None:
            t = t.astimezone()
        delta = t - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    return int(round(float(t) * 1e9))


def rfc3339(t_ns):
    """An RFC 3339 time in UTC with nanoseconds, as Go's time.RFC3339Nano
    writes it (trailing zeros of the fraction dropped)."""
    secs, ns = divmod(t_ns, 10**9)
    s = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if ns:
        s += ("." + "%09d" % ns).rstrip("0")
    return s + "Z"


def escape_segment(key):
    """A detail key made safe to join into a path: '%' becomes "%25" and
    '.' "%2E" (Go: wireformat.EscapeSegment)."""
    if "%" not in key and "." not in key:
        return key
    return key.replace("%", "%25").replace(".", "%2E")


class _Flattener:
    def __init__(self):
        self.attrs = []
        self.truncated = False

    def key(self, k):
        if isinstance(k, str):
            return k
        if isinstance(k, bool) or not isinstance(k, int):
            self.truncated = True
            return "[unsupported: %s]" % type(k).__name__
        return str(k)

    def value(self, v):
        """The OTLP/JSON AnyValue of v (a slice's maps stay MAP values)."""
        if v is None:
            return {}
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, str):
            return {"stringValue": v}
        if isinstance(v, int):
            if _INT64_MIN <= v <= _INT64_MAX:
                return {"intValue": str(v)}
            return {"stringValue": str(v)}
        if isinstance(v, float):
            if math.isnan(v):
                self.truncated = True
                return {"stringValue": "NaN"}
            if math.isinf(v):
                self.truncated = True
                return {"stringValue": "+Inf" if v > 0 else "-Inf"}
            return {"doubleValue": v}
        if isinstance(v, dict):
            return {"kvlistValue": {"values": [{"key": k, "value": self.value(v[orig])}
                                               for k, orig in self.sorted_keys(v)]}}
        if isinstance(v, (list, tuple)):
            return {"arrayValue": {"values": [self.value(e) for e in v]}}
        if isinstance(v, (bytes, bytearray)):
            return {"stringValue": base64.b64encode(bytes(v)).decode("ascii")}
        if isinstance(v, datetime.datetime):
            return {"stringValue": rfc3339(time_unix_nano(v))}
        if isinstance(v, BaseException):
            return {"stringValue": str(v)}
        self.truncated = True
        return {"stringValue": "[unsupported: %s]" % type(v).__name__}

    def sorted_keys(self, d):
        # Sorted as Go sorts strings, by their UTF-8 bytes.
        return sorted(((self.key(k), k) for k in d), key=lambda p: p[0].encode("utf-8", "surrogatepass"))

    def walk(self, path, d):
        for k, orig in self.sorted_keys(d):
            v = d[orig]
            p = path + escape_segment(k)
            if isinstance(v, dict) and v:
                self.walk(p + ".", v)
            else:
                self.attrs.append({"key": p, "value": self.value(v)})


def flatten(details):
    """The detail attributes of details, as OTLP/JSON KeyValues in the
    order the Go library writes them, and whether a value had to be
    replaced (NaN, infinities, unsupported types). A dict is flattened
    below progress.details., '%' and '.' escaped in each key; any other
    value but None is kept whole under progress.details.value."""
    f = _Flattener()
    if isinstance(details, dict):
        f.walk(DETAILS_PREFIX, details)
    elif details is not None:
        f.attrs.append({"key": DETAILS_PREFIX + VALUE_KEY, "value": f.value(details)})
    return f.attrs, f.truncated
