import datetime
import unittest

from progressotel import ResourceTransitionProgressEvent, check_type, escape_segment, flatten
from progressotel.events import rfc3339, time_unix_nano


class EventTest(unittest.TestCase):
    def test_to_dict_is_ignitions(self):
        e = ResourceTransitionProgressEvent("ansible/TaskStarted", {"taskName": "x"})
        self.assertEqual(e.to_dict(), {"eventType": "ResourceTransitionProgressEvent",
                                       "progressEventType": "ansible/TaskStarted", "details": {"taskName": "x"}})
        self.assertEqual(ResourceTransitionProgressEvent("common/X").to_dict()["details"], {})

    def test_type_rule_is_the_go_librarys(self):
        for ok in ("ansible/TaskStarted", "a/B", "k8s-x_y/Obj.Created-2", "a" + "/b" + "c" * 125):
            check_type(ok)
        bad = {"": "empty", "ansible": "missing '/'", "a/b/c": "more than one", "/x": "empty group",
               "a/": "empty name", "Ansible/X": "lower-case letter", "1a/X": "lower-case letter",
               "a.b/X": "not allowed in group", "a/1X": "must start with a letter", "a/X Y": "not allowed in name",
               "a/" + "x" * 127: "longer than 128"}
        for typ, why in bad.items():
            with self.assertRaises(ValueError) as cm:
                ResourceTransitionProgressEvent(typ, {})
            self.assertIn(why, str(cm.exception), typ)

    def test_severity_names(self):
        with self.assertRaises(ValueError):
            ResourceTransitionProgressEvent("a/b", {}, severity="LOUD")


class FlattenTest(unittest.TestCase):
    def test_paths_are_escaped_and_sorted(self):
        attrs, cut = flatten({"b": {"x.y": 1, "100%": {"z": True}}, "a.b": "s", "e": {}, "n": None})
        self.assertFalse(cut)
        self.assertEqual([a["key"] for a in attrs], [
            "progress.details.a%2Eb", "progress.details.b.100%25.z", "progress.details.b.x%2Ey",
            "progress.details.e", "progress.details.n"])
        self.assertEqual(attrs[3]["value"], {"kvlistValue": {"values": []}})
        self.assertEqual(attrs[4]["value"], {})
        self.assertEqual(escape_segment("a%2E.b"), "a%252E%2Eb")

    def test_values(self):
        attrs, cut = flatten({"i": 7, "big": 1 << 64, "f": 0.5, "s": [1, "x", None, {"k.k": False}],
                              "raw": b"bytes", "nan": float("nan"), "obj": object()})
        got = {a["key"][len("progress.details."):]: a["value"] for a in attrs}
        self.assertTrue(cut)
        self.assertEqual(got["i"], {"intValue": "7"})
        self.assertEqual(got["big"], {"stringValue": str(1 << 64)})
        self.assertEqual(got["f"], {"doubleValue": 0.5})
        self.assertEqual(got["s"], {"arrayValue": {"values": [
            {"intValue": "1"}, {"stringValue": "x"}, {}, {"kvlistValue": {"values": [
                {"key": "k.k", "value": {"boolValue": False}}]}}]}})
        self.assertEqual(got["raw"], {"stringValue": "Ynl0ZXM="})
        self.assertEqual(got["nan"], {"stringValue": "NaN"})
        self.assertEqual(got["obj"], {"stringValue": "[unsupported: object]"})

    def test_scalar_and_no_details(self):
        self.assertEqual(flatten("just text")[0], [{"key": "progress.details.value", "value": {"stringValue": "just text"}}])
        self.assertEqual(flatten(None)[0], [])
        self.assertEqual(flatten({})[0], [])


class TimeTest(unittest.TestCase):
    def test_times(self):
        t = datetime.datetime(2026, 11, 29, 14, 3, 7, 412000, tzinfo=datetime.timezone.utc)
        self.assertEqual(time_unix_nano(t), 1795960987412000000)
        self.assertEqual(rfc3339(1795960987412000000), "2026-11-29T14:03:07.412Z")
        self.assertEqual(rfc3339(1795960987000000000), "2026-11-29T14:03:07Z")


if __name__ == "__main__":
    unittest.main()
