import math
import unittest

from mustard_sidecar import HOLE, MAX_DEPTH, UNDEFINED, from_structured, to_structured


class ValuesTest(unittest.TestCase):
    def test_each_kind_has_its_wire_form(self):
        cases = [
            (UNDEFINED, "Undefined"),
            (None, "Null"),
            (True, {"Bool": True}),
            ("hé", {"String": "hé"}),
            (1.5, {"Number": {"Finite": 1.5}}),
            (3, {"Number": {"Finite": 3.0}}),
            (math.nan, {"Number": "NaN"}),
            (math.inf, {"Number": "Infinity"}),
            (-math.inf, {"Number": "NegInfinity"}),
            (-0.0, {"Number": "NegZero"}),
            ([1, HOLE, "x"], {"Array": [{"Number": {"Finite": 1.0}}, "Hole", {"String": "x"}]}),
            ({"b": 1, "a": None}, {"Object": {"b": {"Number": {"Finite": 1.0}}, "a": "Null"}}),
        ]
        for py, wire in cases:
            with self.subTest(py=py):
                self.assertEqual(to_structured(py), wire)
                back = from_structured(wire)
                if isinstance(py, float) and math.isnan(py):
                    self.assertTrue(math.isnan(back))
                else:
                    self.assertEqual(back, py)

    def test_negative_zero_and_key_order_survive(self):
        self.assertEqual(math.copysign(1, from_structured(to_structured(-0.0))), -1)
        self.assertEqual(list(from_structured(to_structured({"z": 1, "a": 2, "m": 3}))), ["z", "a", "m"])
        self.assertEqual(from_structured({"Undefined": None}), UNDEFINED)

    def test_what_cannot_cross_is_refused(self):
        shared = [1]
        deep = []
        cur = deep
        for _ in range(MAX_DEPTH + 1):
            cur.append([])
            cur = cur[0]
        refused = [2**53 + 1, 10**400, b"x", {1, 2}, {1: "x"}, object(), [shared, shared], HOLE, deep]
        for v in refused:
            with self.subTest(v=type(v).__name__):
                with self.assertRaises(TypeError):
                    to_structured(v)
        self.assertEqual(to_structured(2**53), {"Number": {"Finite": float(2**53)}})

    def test_malformed_wire_values_are_refused(self):
        for sv in ["Nope", {"Number": {"Finite": True}}, {"String": 1}, {"Bool": True, "String": "x"}, 1, None]:
            with self.subTest(sv=sv):
                with self.assertRaises(ValueError):
                    from_structured(sv)


if __name__ == "__main__":
    unittest.main()
