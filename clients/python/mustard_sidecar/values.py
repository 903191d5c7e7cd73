"""StructuredValue, the one value format crossing the boundary, to and from
Python (docs/protocol.md, "StructuredValue").

| guest        | Python                                   |
| ------------ | ---------------------------------------- |
| undefined    | UNDEFINED                                |
| null         | None                                     |
| array hole   | HOLE (only inside a list)                |
| boolean      | bool                                     |
| number       | float (NaN, ±inf and -0.0 included); an int going in |
| string       | str                                      |
| array        | list (a tuple going in)                  |
| plain object | dict with str keys, in their order       |

Anything else is refused with TypeError, never converted: an int a double
cannot hold exactly, bytes, sets, objects of other classes, a dict key
that is not a str, a list or dict reached twice in one value (trees, not
graphs), and nesting deeper than MAX_DEPTH.
"""

import math

__all__ = ["UNDEFINED", "HOLE", "MAX_DEPTH", "to_structured", "from_structured"]

# The sidecar refuses a value nested deeper than this (128 levels).
MAX_DEPTH = 128


class _Singleton:
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name

    def __reduce__(self):  # pickling keeps the identity
        return self._name

    def __bool__(self):
        return False


UNDEFINED = _Singleton("UNDEFINED")
"""The guest's undefined (None is null)."""

HOLE = _Singleton("HOLE")
"""A hole in a guest array, as in [1, , 3]."""


def _number(x):
    if math.isnan(x):
        return {"Number": "NaN"}
    if math.isinf(x):
        return {"Number": "Infinity" if x > 0 else "NegInfinity"}
    if x == 0 and math.copysign(1.0, x) < 0:
        return {"Number": "NegZero"}
    return {"Number": {"Finite": x}}


def to_structured(value):
    """Returns the StructuredValue (JSON-ready dicts, lists and strings) of a
    Python value."""
    return _to(value, 0, set())


def _to(v, depth, seen):
    if depth > MAX_DEPTH:
        raise TypeError(f"value nested deeper than {MAX_DEPTH} levels")
    if v is UNDEFINED:
        return "Undefined"
    if v is None:
        return "Null"
    if v is HOLE:
        raise TypeError("HOLE is only allowed as an element of a list")
    if isinstance(v, bool):
        return {"Bool": v}
    if isinstance(v, int):
        f = float(v) if -(1 << 1024) < v < (1 << 1024) else math.inf
        if math.isinf(f) or int(f) != v:
            raise TypeError(f"integer {v} is not exactly a double")
        return _number(f)
    if isinstance(v, float):
        return _number(v)
    if isinstance(v, str):
        return {"String": v}
    if isinstance(v, (list, tuple, dict)):
        if id(v) in seen:
            raise TypeError("a list or dict reached twice in one value (values are trees)")
        seen.add(id(v))
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if not isinstance(k, str):
                    raise TypeError(f"object key {k!r} is not a str")
                out[k] = _to(x, depth + 1, seen)
            return {"Object": out}
        return {"Array": ["Hole" if x is HOLE else _to(x, depth + 1, seen) for x in v]}
    raise TypeError(f"a {type(v).__name__} cannot cross the boundary")


_NUMBERS = {"NaN": math.nan, "Infinity": math.inf, "NegInfinity": -math.inf, "NegZero": -0.0}
_UNITS = {"Undefined": UNDEFINED, "Null": None, "Hole": HOLE}


def from_structured(sv):
    """Returns the Python value of a StructuredValue (as json.loads gives it).
    A guest number is always a float."""
    return _from(sv, 0)


def _from(sv, depth):
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(sv, str):
        if sv in _UNITS:
            return _UNITS[sv]
        raise ValueError(f"unknown StructuredValue {sv!r}")
    if not isinstance(sv, dict) or len(sv) != 1:
        raise ValueError(f"malformed StructuredValue {sv!r:.80}")
    (tag, body), = sv.items()
    if tag in _UNITS and body is None:
        return _UNITS[tag]
    if tag == "Bool" and isinstance(body, bool):
        return body
    if tag == "String" and isinstance(body, str):
        return body
    if tag == "Number":
        if isinstance(body, str) and body in _NUMBERS:
            return _NUMBERS[body]
        if isinstance(body, dict) and len(body) == 1 and isinstance(body.get("Finite"), (int, float)) \
                and not isinstance(body.get("Finite"), bool):
            return float(body["Finite"])
    if tag == "Array" and isinstance(body, list):
        return [_from(x, depth + 1) for x in body]
    if tag == "Object" and isinstance(body, dict):
        return {k: _from(x, depth + 1) for k, x in body.items()}
    raise ValueError(f"malformed StructuredValue {sv!r:.80}")
