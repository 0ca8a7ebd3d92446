"""Metadata filters, one grammar for ``search``, ``recall``, ``list``, ``forget`` and the agentic tools.

::

    filter     := { clause, ... }                       every clause must hold (an implicit $and)
    clause     := "$and": [filter, ...]                 all of the filters hold (non-empty list)
                | "$or":  [filter, ...]                 at least one holds (non-empty list)
                | "$not": filter                        the filter does not hold
                | field: condition
    field      := "id" | "speaker" | "role" | "session_id" | "timestamp" | "created_at"
                | any metadata key (a key that does not start with "$")
    condition  := value                                 same as {"$eq": value}
                | { operator: operand, ... }            every operator must hold
    operator   := "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte"    compare with one value
                | "$in" | "$nin"                        membership in a list
                | "$exists"                             true / false: the field is present
                | "$not": condition                     the condition does not hold

``timestamp`` / ``created_at`` operands accept a datetime, epoch seconds or ISO-8601 text. A field that a message
does not have satisfies only ``$ne``, ``$nin``, ``{"$exists": false}`` and negations. Comparisons between values that
do not order (a number and a string, a boolean and a number) are false, and a boolean equals no number. Any other
key that starts with ``$``, an empty ``$and`` / ``$or`` list, an empty condition, or nesting deeper than
:data:`MAX_DEPTH` raises ``InvalidInput`` naming the place in the filter: a filter never silently matches nothing
because a key was misread as a metadata field.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from hippo.base.errors import InvalidInput
from hippo.base.timeutil import to_epoch
from hippo.store.base import MessageRow

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$not")
LOGICAL = ("$and", "$or", "$not")
FIELDS = ("id", "speaker", "role", "session_id", "timestamp", "created_at")
MAX_DEPTH = 32

Predicate = Callable[[MessageRow], bool]


def _field(row: MessageRow, key: str) -> tuple[bool, Any]:
    if key == "id":
        return True, row.id
    if key == "speaker":
        return True, row.speaker
    if key == "role":
        return True, row.role
    if key == "session_id":
        return True, row.session_id
    if key == "timestamp":
        return True, row.ts
    if key == "created_at":
        return True, row.created_at
    if key in row.metadata:
        return True, row.metadata[key]
    return False, None


def _equal(a: Any, b: Any) -> bool:
    """JSON equality of two values: a boolean is no number (Python holds ``True == 1``)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _key(value: Any) -> tuple | None:
    """A hashable key for ``value`` under JSON equality (:func:`_equal`): a boolean, a number, a string and null
    each in a kind of their own (``True`` is no ``1``; ``1`` is ``1.0``); None for a list or a dict."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float, np.integer, np.floating)):  # numpy's numbers hash and compare as Python's
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    return None


class _Members:
    """The list operand of ``$in`` / ``$nin``: membership by JSON equality (:func:`_equal`), looked up in a set for
    the values that have a :func:`_key` and scanned for the others (lists, dicts). A scan of the whole list per
    message made ``{"id": {"$in": [20,000 ids]}}`` over 20,000 messages 400 million comparisons."""

    __slots__ = ("keys", "rest")

    def __init__(self, values: list[Any]) -> None:
        self.keys: set[tuple] = set()
        self.rest: list[Any] = []
        for w in values:
            k = _key(w)
            if k is None:
                self.rest.append(w)
            else:
                self.keys.add(k)

    def __contains__(self, have: Any) -> bool:
        k = _key(have)
        if k is not None:
            return k in self.keys  # a value with a key equals no list or dict
        return any(_equal(have, w) for w in self.rest)


def _cmp(op: str, have: Any, want: Any) -> bool:
    try:
        if op == "$eq":
            return _equal(have, want)
        if op == "$ne":
            return not _equal(have, want)
        if op == "$in":  # a null value is a value: {"$in": [null]} holds it, {"$nin": ["Bo"]} too
            return have in want
        if op == "$nin":
            return have not in want
        if have is None or isinstance(have, bool) != isinstance(want, bool):
            return False  # a boolean orders only against a boolean
        if op == "$gt":
            return have > want
        if op == "$gte":
            return have >= want
        if op == "$lt":
            return have < want
        if op == "$lte":
            return have <= want
    except TypeError:
        return op == "$nin"  # an unhashable or unorderable value is in no list and compares with nothing
    raise AssertionError(op)


def _no_array(value: Any, where: str) -> None:
    """Refuse a numpy array as an operand: it compares element by element, so a row's test would raise numpy's
    ValueError ("the truth value of an array ... is ambiguous") instead of answering."""
    if isinstance(value, np.ndarray):
        raise InvalidInput(f"{where} must be a JSON value (None, a bool, a number, a string, a list or a dict), "
                           f"got a numpy array (write array.tolist())")


def _operand(key: str, op: str, want: Any, where: str) -> Any:
    if op in ("$in", "$nin"):
        if not isinstance(want, (list, tuple, set, frozenset)):
            raise InvalidInput(f"{where}[{op!r}] must be a list")
        want = list(want)
        for w in want:
            _no_array(w, f"{where}[{op!r}]")
        if any(isinstance(w, float) and math.isnan(w) for w in want):
            raise InvalidInput(f"{where}[{op!r}] must not hold NaN")
    else:
        _no_array(want, where if op == "$eq" else f"{where}[{op!r}]")
    if op == "$exists" and not isinstance(want, bool):
        raise InvalidInput(f"{where}[{op!r}] must be true or false, got {want!r}")
    if isinstance(want, float) and math.isnan(want):
        raise InvalidInput(f"{where}[{op!r}] must not be NaN")
    if key in ("timestamp", "created_at") and op != "$exists" and want is not None:
        # a bound is compared with stored times, never stored: any year of the calendar is one (a store whose
        # Config.timestamp_min_year..timestamp_max_year admits the year 1500 must be able to forget what is before 1600)
        want = ([to_epoch(w, where, min_year=1, max_year=9999) for w in want] if op in ("$in", "$nin")
                else to_epoch(want, where, min_year=1, max_year=9999))
    return _Members(want) if op in ("$in", "$nin") else want


def _condition(key: str, cond: Any, where: str, depth: int) -> Predicate:
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{where}: filter is nested more than {MAX_DEPTH} levels deep")
    if not isinstance(cond, dict):
        cond = {"$eq": cond}
    if not cond:
        raise InvalidInput(f"{where}: empty condition")
    tests: list[Predicate] = []
    for op, want in cond.items():
        if op not in OPERATORS:
            raise InvalidInput(f"{where}: unknown operator {op!r}; expected one of {OPERATORS} (to match a dict "
                               "value, write {\"$eq\": {...}})")
        if op == "$not":
            inner = _condition(key, want, f"{where}['$not']", depth + 1)
            tests.append(lambda row, inner=inner: not inner(row))
            continue
        want = _operand(key, op, want, where)
        if op == "$exists":
            tests.append(lambda row, want=want: _field(row, key)[0] == want)
            continue

        def test(row: MessageRow, op: str = op, want: Any = want) -> bool:
            present, have = _field(row, key)
            if not present:
                return op in ("$ne", "$nin")
            return _cmp(op, have, want)

        tests.append(test)
    return tests[0] if len(tests) == 1 else (lambda row: all(t(row) for t in tests))


def _filter(spec: Any, where: str, depth: int) -> Predicate:
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{where}: filter is nested more than {MAX_DEPTH} levels deep")
    if not isinstance(spec, dict):
        raise InvalidInput(f"{where} must be a dict, got {type(spec).__name__}")
    if not spec:
        raise InvalidInput(f"{where}: empty filter")
    parts: list[Predicate] = []
    for key, cond in spec.items():
        if not isinstance(key, str) or not key:
            raise InvalidInput(f"{where}: keys must be non-empty strings, got {key!r}")
        here = f"{where}[{key!r}]"
        if key in ("$and", "$or"):
            if not isinstance(cond, (list, tuple)) or not cond:
                raise InvalidInput(f"{here} must be a non-empty list of filters")
            subs = [_filter(c, f"{here}[{k}]", depth + 1) for k, c in enumerate(cond)]
            parts.append((lambda row, subs=subs: all(p(row) for p in subs)) if key == "$and"
                         else (lambda row, subs=subs: any(p(row) for p in subs)))
        elif key == "$not":
            inner = _filter(cond, here, depth + 1)
            parts.append(lambda row, inner=inner: not inner(row))
        elif key.startswith("$"):
            raise InvalidInput(f"{where}: unknown operator {key!r} at filter level; expected {LOGICAL} or a field "
                               "name (fields never start with '$')")
        else:
            parts.append(_condition(key, cond, here, depth + 1))
    return parts[0] if len(parts) == 1 else (lambda row: all(p(row) for p in parts))


def compile_filter(spec: dict[str, Any] | None, name: str = "filter") -> Predicate | None:
    """Validate a filter (grammar above) and turn it into a predicate over message rows; ``None`` and ``{}`` match
    everything (``forget`` refuses them)."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise InvalidInput(f"{name} must be a dict or None, got {type(spec).__name__}")
    if not spec:
        return lambda row: True
    return _filter(spec, name, 0)
