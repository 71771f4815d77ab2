import unittest

from progressotel import TraceContext, env_key, env_name

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class TraceContextTest(unittest.TestCase):
    def test_from_headers_lowercases_keys(self):
        ctx = TraceContext.from_headers({"TraceParent": TP, "X-TraceCtx-TransactionId": " tx-1 ",
                                         "x-tracectx-Driver.Req-Id": "d", "x-tracectx-": "no key",
                                         "x-tracectx-bad key": "v", "x-tracectx-ctl": "a\nb", "Other": "o"})
        self.assertEqual(ctx.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736")
        self.assertEqual(ctx.span_id, "00f067aa0ba902b7")
        self.assertEqual(ctx.flags, 1)
        self.assertEqual(ctx.tracectx, {"transactionid": "tx-1", "driver.req-id": "d"})
        self.assertEqual(ctx.headers(), {"traceparent": TP, "x-tracectx-TransactionId": "tx-1",
                                         "x-tracectx-driver.req-id": "d"})

    def test_pairs_as_headers(self):
        ctx = TraceContext.from_headers([("x-tracectx-TenantId", "t-1")])
        self.assertEqual(ctx.tracectx, {"tenantid": "t-1"})
        self.assertIsNone(ctx.trace_id)

    def test_from_env(self):
        ctx = TraceContext.from_env({"TRACEPARENT": TP, "X_TRACECTX_TRANSACTIONID": "tx",
                                     "X_TRACECTX_DRIVER_5FREQ_2EID": "d", "X_TRACECTX_lower": "no"})
        self.assertEqual(ctx.tracectx, {"transactionid": "tx", "driver_req.id": "d"})
        self.assertEqual(ctx.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736")

    def test_invalid_traceparents_are_ignored(self):
        for tp in ("", "garbage", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                   "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                   "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                   "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", TP + "-extra"):
            self.assertIsNone(TraceContext(tp).trace_id, tp)

    def test_at_most_32_values_well_known_first(self):
        values = {"k%02d" % i: "v" for i in range(40)}
        values["transactionid"] = "tx"
        ctx = TraceContext(None, values)
        self.assertEqual(len(ctx.tracectx), 32)
        self.assertIn("transactionid", ctx.tracectx)
        self.assertIn("k00", ctx.tracectx)
        self.assertNotIn("k39", ctx.tracectx)

    def test_env_names(self):
        # Go: propagation.EnvName and EnvKey (examples/python-driver checks
        # env_name against Go's directly).
        self.assertEqual(env_name("driver_req.id"), "X_TRACECTX_DRIVER_5FREQ_2EID")
        self.assertEqual(env_name("request-id"), "X_TRACECTX_REQUEST_2DID")
        self.assertEqual(env_key("X_TRACECTX_DRIVER_REQUEST_ID"), "driver_request_id")
        self.assertIsNone(env_key("X_TRACECTX_"))
        with self.assertRaises(ValueError):
            env_name("-x")


if __name__ == "__main__":
    unittest.main()
