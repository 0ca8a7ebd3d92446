"""Metadata filters: ``{"speaker": "Ann", "timestamp": {"$gte": ...}, "<metadata key>": {"$ne": 3}}``."""

from __future__ import annotations

import math
from typing import Any, Callable

from hippo.base.errors import InvalidInput
from hippo.base.timeutil import to_epoch
from hippo.store.base import MessageRow

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists")
FIELDS = ("id", "speaker", "role", "session_id", "timestamp", "created_at")

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


def _cmp(op: str, have: Any, want: Any) -> bool:
    try:
        if op == "$eq":
            return have == want
        if op == "$ne":
            return have != want
        if have is None:
            return False
        if op == "$gt":
            return have > want
        if op == "$gte":
            return have >= want
        if op == "$lt":
            return have < want
        if op == "$lte":
            return have <= want
    except TypeError:
        return False
    if op == "$in":
        return have in want
    if op == "$nin":
        return have not in want
    raise AssertionError(op)


def compile_filter(spec: dict[str, Any] | None, name: str = "filter") -> Predicate | None:
    """Validate a filter and turn it into a predicate over message rows (None means "match everything")."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise InvalidInput(f"{name} must be a dict or None, got {type(spec).__name__}")
    clauses: list[tuple[str, str, Any]] = []
    for key, cond in spec.items():
        if not isinstance(key, str) or not key:
            raise InvalidInput(f"{name}: keys must be non-empty strings, got {key!r}")
        conds = cond if isinstance(cond, dict) else {"$eq": cond}
        if not conds:
            raise InvalidInput(f"{name}[{key!r}]: empty condition")
        for op, want in conds.items():
            if op not in OPERATORS:
                raise InvalidInput(f"{name}[{key!r}]: unknown operator {op!r}; expected one of {OPERATORS}")
            if op in ("$in", "$nin"):
                if not isinstance(want, (list, tuple, set, frozenset)):
                    raise InvalidInput(f"{name}[{key!r}][{op!r}] must be a list")
                want = list(want)
            if isinstance(want, float) and math.isnan(want):
                raise InvalidInput(f"{name}[{key!r}][{op!r}] must not be NaN")
            if key in ("timestamp", "created_at") and op not in ("$exists",) and want is not None:
                want = ([to_epoch(w, f"{name}[{key!r}]") for w in want] if op in ("$in", "$nin")
                        else to_epoch(want, f"{name}[{key!r}]"))
            clauses.append((key, op, want))

    def predicate(row: MessageRow) -> bool:
        for key, op, want in clauses:
            present, have = _field(row, key)
            if op == "$exists":
                if present != bool(want):
                    return False
                continue
            if not present and op not in ("$ne", "$nin"):
                return False
            if not _cmp(op, have, want):
                return False
        return True

    return predicate
