import http.server
import json
import os
import socket
import tempfile
import threading
import unittest

from progressotel import ProgressEventLogWriterService, ResourceTransitionProgressEvent, TraceContext
from progressotel.export import logs_endpoint

TP1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TP2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class OTLPServer:
    """An OTLP/HTTP endpoint on 127.0.0.1 that records each request and
    answers with the statuses given, then 200."""

    def __init__(self, statuses=()):
        self.requests = []
        self.statuses = list(statuses)
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with outer.lock:
                    outer.requests.append((self.path, self.headers, json.loads(body)))
                    status = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(status)
                if status == 503:
                    self.send_header("Retry-After", "0")
                payload = b"{}" if status == 200 else b"bad request: no"
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def records(self):
        out = []
        for _, _, body in self.requests:
            for rl in body["resourceLogs"]:
                for sl in rl["scopeLogs"]:
                    out.extend(sl["logRecords"])
        return out


def attrs(rec):
    def raw(v):
        if "intValue" in v:
            return int(v["intValue"])
        return next(iter(v.values())) if v else None
    return {a["key"]: raw(a["value"]) for a in rec["attributes"]}


def event(typ="test/Event", details=None, **kw):
    return ResourceTransitionProgressEvent(typ, {"n": 1} if details is None else details, **kw)


class OTLPTest(unittest.TestCase):
    def setUp(self):
        self.srv = OTLPServer()
        self.addCleanup(self.srv.close)

    def service(self, env=None, **kw):
        environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": self.srv.url + "/", "OTEL_SERVICE_NAME": "drv",
                   "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test,service.name=ignored,team=a%2Cb",
                   "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20t0k,x-extra = 1"}
        environ.update(env or {})
        s = ProgressEventLogWriterService(environ=environ, retry_initial=0.01, retry_max=0.05, **kw)
        self.addCleanup(s.shutdown, 1)
        return s

    def test_records_follow_the_wire_contract(self):
        s = self.service(component={"name": "drv", "version": "1.0"}, resource={"type": "Assembly", "id": "a-1"},
                         scope={"project": "p.1", "region.eu": "x"}, observed_generation=3)
        self.assertEqual(s.mode, "otlp")
        ctx1 = TraceContext.from_headers({"traceparent": TP1, "x-tracectx-TenantId": "tenant-a", "x-tracectx-TransactionId": "tx"})
        ctx2 = TraceContext.from_headers({"traceparent": TP2})
        s.add(event("ansible/A", {"a.b": {"c": 1}}), ctx1)
        s.add(event("ansible/B"), ctx2)
        s.add(event("ansible/C", severity="ERROR"), ctx1)
        s.add(event("ansible/D"))  # no trace: numbered per resource
        self.assertTrue(s.flush(30))
        path, headers, body = self.srv.requests[0]
        self.assertEqual(path, "/v1/logs")
        self.assertEqual(headers["Content-Type"], "application/json")
        self.assertEqual(headers["authorization"], "Bearer t0k")
        self.assertEqual(headers["x-extra"], "1")
        res = {a["key"]: a["value"]["stringValue"] for a in body["resourceLogs"][0]["resource"]["attributes"]}
        self.assertEqual(res["service.name"], "drv")
        self.assertEqual(res["team"], "a,b")
        self.assertEqual(body["resourceLogs"][0]["scopeLogs"][0]["scope"]["name"],
                         "github.com/progressotel/progressotel/progress")
        recs = {r["eventName"]: r for r in self.srv.records()}
        a = recs["ansible/A"]
        self.assertEqual(a["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736")
        self.assertEqual(a["spanId"], "00f067aa0ba902b7")
        self.assertEqual(a["severityNumber"], 9)
        self.assertEqual(a["severityText"], "INFO")
        self.assertNotIn("body", a)  # the collector builds the message from the attributes
        self.assertEqual(attrs(a), {
            "progress.event_type": "ResourceTransitionProgressEvent", "progress.details.a%2Eb.c": 1,
            "progress.component.name": "drv", "progress.component.version": "1.0",
            "progress.resource.type": "Assembly", "progress.resource.id": "a-1",
            "progress.scope.project": "p.1", "progress.scope.region%2Eeu": "x", "progress.observed_generation": 3,
            "progress.tenant": "tenant-a", "progress.sequence": 1,
            "tracectx.tenantid": "tenant-a", "tracectx.transactionid": "tx"})
        self.assertEqual(attrs(recs["ansible/B"])["progress.sequence"], 1)  # another trace
        self.assertNotIn("progress.tenant", attrs(recs["ansible/B"]))
        self.assertEqual(attrs(recs["ansible/C"])["progress.sequence"], 2)
        self.assertEqual(recs["ansible/C"]["severityNumber"], 17)
        self.assertEqual(attrs(recs["ansible/D"])["progress.sequence"], 1)
        self.assertNotIn("traceId", recs["ansible/D"])
        self.assertEqual(s.stats()["exported"], 4)

    def test_concurrent_adds_share_one_contiguous_sequence(self):
        s = self.service(max_queue_size=1000)
        ctx = TraceContext.from_headers({"traceparent": TP1})

        def adder():
            for _ in range(50):
                s.add(event(), ctx)

        threads = [threading.Thread(target=adder) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(s.flush(60))
        self.assertEqual(s.dropped, 0)
        seqs = sorted(attrs(r)["progress.sequence"] for r in self.srv.records())
        self.assertEqual(seqs, list(range(1, 401)))

    def test_scope_tenant_wins(self):
        s = self.service(scope={"organization": "acme", "tenant": "t-1"})
        s.add(event(), TraceContext.from_headers({"x-tracectx-tenantid": "other"}))
        s.flush(30)
        self.assertEqual(attrs(self.srv.records()[0])["progress.tenant"], "t-1")

    def test_add_rejects_other_events(self):
        s = self.service()
        for bad in ({"eventType": "ResourceTransitionProgressEvent"}, "x", None):
            with self.assertRaises(ValueError):
                s.add(bad)

    def test_retries_503_then_delivers(self):
        self.srv.statuses = [503, 503]
        s = self.service()
        s.add(event())
        self.assertTrue(s.flush(30))
        self.assertEqual(len(self.srv.requests), 3)
        self.assertEqual(s.stats()["exported"], 1)
        self.assertEqual(s.stats()["failed"], 0)

    def test_400_is_not_retried(self):
        self.srv.statuses = [400]
        s = self.service()
        with self.assertLogs("progressotel", "WARNING") as logs:
            s.add(event())
            self.assertTrue(s.flush(30))
        self.assertEqual(len(self.srv.requests), 1)
        self.assertEqual(s.stats()["failed"], 1)
        self.assertIn("400", logs.output[0])
        self.assertIn("bad request: no", logs.output[0])

    def test_logs_endpoint_is_taken_as_is(self):
        self.assertEqual(logs_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/base/"}), "http://h:4318/base/v1/logs")
        self.assertEqual(logs_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318",
                                        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://l:1/custom"}), "http://l:1/custom")
        self.assertIsNone(logs_endpoint({}))

    def test_a_bad_endpoint_is_a_clear_error(self):
        with self.assertRaisesRegex(ValueError, "want http://host:port"):
            ProgressEventLogWriterService(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"})

    def test_nothing_configured(self):
        with self.assertLogs("progressotel", "WARNING") as logs:
            s = ProgressEventLogWriterService(environ={})
        self.assertEqual(s.mode, "disabled")
        self.assertIn("go nowhere", logs.output[0])
        s.add(event())
        self.assertEqual(s.dropped, 1)


class DropsTest(unittest.TestCase):
    def test_dead_endpoint_and_a_queue_of_4(self):
        # Nothing listens: every export fails and is retried until shutdown,
        # so the queue fills and add() drops, counts, and never blocks.
        environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:%d" % free_port()}
        s = ProgressEventLogWriterService(environ=environ, max_queue_size=4, retry_initial=0.05, retry_max=0.2,
                                          retry_max_elapsed=300)
        for i in range(20):
            s.add(event(details={"i": i}))
        # At most 4 in the thread's batch and 4 in the queue.
        self.assertGreaterEqual(s.dropped, 12)
        self.assertLessEqual(s.dropped, 16)
        self.assertEqual(s.stats()["accepted"], 20)
        with self.assertLogs("progressotel", "WARNING") as logs:
            self.assertFalse(s.shutdown(timeout=0.5))
        st = s.stats()
        self.assertEqual(st["exported"], 0)
        self.assertEqual(st["dropped"] + st["failed"], 20, st)
        self.assertIn("%d progress events dropped (queue full)" % st["dropped"], logs.output[-1])
        s.add(event())
        self.assertEqual(s.dropped, st["dropped"] + 1)


class HandoffTest(unittest.TestCase):
    """The hand-off protocol against a socket that answers as a run does;
    examples/python-driver runs it under a real `progressotel run`."""

    def serve(self, answer):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "emit.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(8)
        lines = []

        def loop():
            while True:
                try:
                    c, _ = srv.accept()
                except OSError:
                    return
                with c:
                    buf = b""
                    while not buf.endswith(b"\n"):
                        chunk = c.recv(4096)
                        if not chunk:
                            break
                        buf += chunk
                    lines.append(json.loads(buf))
                    c.sendall(json.dumps(answer).encode() + b"\n")

        threading.Thread(target=loop, daemon=True).start()
        self.addCleanup(lambda: (srv.close(), os.unlink(path), os.rmdir(d)))
        return path, lines

    def test_events_go_to_the_run(self):
        path, lines = self.serve({"ok": True})
        s = ProgressEventLogWriterService(environ={"PROGRESSOTEL_SOCKET": path, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:1"},
                                          component={"name": "drv", "version": "2"}, resource={"type": "T", "id": "i"},
                                          scope={"tenant": "t"})
        self.assertEqual(s.mode, "handoff")
        ctx = TraceContext.from_headers({"traceparent": TP1, "x-tracectx-transactionid": "tx"})
        s.add(event("a/One", {"x": [1, float("inf")], "b": b"\x00", "big": 1 << 64, 7: "k"}, severity="WARN"), ctx)
        s.add(event("a/Two", "scalar"))
        self.assertTrue(s.shutdown(30))
        self.assertEqual(s.stats()["exported"], 2)
        one, two = lines
        self.assertEqual(one["v"], 1)
        self.assertEqual(one["kind"], "event")
        self.assertEqual(one["type"], "a/One")
        self.assertEqual(one["details"], {"x": [1, "+Inf"], "b": "AA==", "big": str(1 << 64), "7": "k"})
        self.assertEqual(one["severity"], 13)
        self.assertTrue(one["time"].endswith("Z"))
        self.assertEqual(one["envelope"], {"component": {"Name": "drv", "Version": "2"},
                                           "resource": {"Type": "T", "ID": "i"}, "scope": {"tenant": "t"}})
        self.assertEqual(one["carrier"], {"traceparent": TP1, "x-tracectx-TransactionId": "tx"})
        self.assertEqual(two["details"], {"value": "scalar"})
        self.assertNotIn("carrier", two)  # the service's context: this test's environ has none

    def test_a_refusal_is_counted(self):
        path, _ = self.serve({"error": "invalid request: bad", "invalid": True})
        s = ProgressEventLogWriterService(environ={"PROGRESSOTEL_SOCKET": path})
        with self.assertLogs("progressotel", "WARNING") as logs:
            s.add(event())
            self.assertTrue(s.flush(30))
        self.assertEqual(s.stats()["failed"], 1)
        self.assertIn("invalid request: bad", logs.output[0])
        s.shutdown(5)


if __name__ == "__main__":
    unittest.main()
