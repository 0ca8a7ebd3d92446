"""Argument validation shared by every public entry point: each check returns the normalized value or raises
:class:`~hippo.base.errors.InvalidInput` naming the argument. (Checks of text *content*, whether it encodes
losslessly, live with the tokenizer: :func:`hippo.text.tokenizer.check_text`.)"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping

import numpy as np

from hippo.base.errors import InvalidInput

#: ids are SQLite / PostgreSQL BIGINTs
MAX_ID = 2**63 - 1


def check_namespace(ns: object, name: str = "namespace") -> str:
    if not isinstance(ns, str) or not ns.strip():
        raise InvalidInput(f"{name} must be a non-empty str, got {ns!r}")
    if len(ns) > 512 or any(ord(c) < 32 for c in ns):
        raise InvalidInput(f"{name} must be at most 512 printable characters")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in ns):
        raise InvalidInput(f"{name} contains a lone surrogate code point and cannot be stored")
    return str(ns)


def check_int(value: object, name: str, *, minimum: int = 0, maximum: int | None = MAX_ID) -> int:
    if isinstance(value, float) and math.isnan(value):
        raise InvalidInput(f"{name} must be an int, got NaN")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInput(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise InvalidInput(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InvalidInput(f"{name} must be <= {maximum}, got {value}")
    return int(value)


def check_optional_int(value: object, name: str, *, minimum: int = 0) -> int | None:
    return None if value is None else check_int(value, name, minimum=minimum)


def check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be a bool, got {type(value).__name__}")
    return value


def check_ids(ids: object, name: str = "ids") -> list[int]:
    """An id or an iterable of ids (ints >= 0) as a list. A 0-d numpy array is one value (iterating it raises)."""
    if isinstance(ids, np.ndarray) and ids.ndim == 0:
        ids = [ids[()]]
    elif isinstance(ids, (int, np.integer)) and not isinstance(ids, bool):
        ids = [ids]
    elif isinstance(ids, (str, bytes, Mapping)) or not isinstance(ids, Iterable):
        raise InvalidInput(f"{name} must be an int or an iterable of ints, got {type(ids).__name__}")
    return [check_int(i, name, maximum=MAX_ID) for i in ids]


MAX_METADATA_DEPTH = 100  # nesting levels of dicts and lists; deeper values are refused, not recursed into


def nesting_depth(value: object, limit: int) -> int:
    """Depth of nested dicts / lists / tuples in ``value``, without recursion; stops counting past ``limit``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, Mapping):
            children: Iterable[Any] = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            continue
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        stack.extend((c, d + 1) for c in children)
    return deepest


def _plain(v: object) -> bool:
    """A value JSON gives back as it was, equal and of the same type: None, a bool, an int, a finite float (its
    repr reads back exactly) or an ASCII str (no lone surrogate, no escape to undo)."""
    t = type(v)
    return (v is None or t is bool or (t is int and -(1 << 64) < v < (1 << 64)) or (t is str and v.isascii())
            or (t is float and math.isfinite(v)))


def check_metadata(value: object, name: str = "metadata") -> dict[str, Any]:
    """A JSON object without NaN or lone surrogates, nested at most :data:`MAX_METADATA_DEPTH` levels, returned as a
    fresh copy."""
    if value is None:
        return {}
    if type(value) is dict and all(type(k) is str and k.isascii() and _plain(v) for k, v in value.items()):
        return dict(value)  # what the JSON round trip below gives back for flat, plain values (most metadata)
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{name} must be a dict or None, got {type(value).__name__}")
    for k in value:
        if not isinstance(k, str):
            raise InvalidInput(f"{name} keys must be str, got {k!r}")
    if nesting_depth(value, MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH:
        raise InvalidInput(f"{name} is nested more than {MAX_METADATA_DEPTH} levels deep")
    try:
        text = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise InvalidInput(f"{name} must be JSON-serializable without NaN or lone surrogates: {exc}") from exc
    return json.loads(text)


def is_one_of(value: object, choices: Iterable[Any]) -> bool:
    """Whether ``value`` equals one of ``choices``; a value that compares element by element (a numpy array) equals
    none of them."""
    try:
        return bool(value in tuple(choices))
    except (TypeError, ValueError):  # numpy: "the truth value of an array with more than one element is ambiguous"
        return False


def check_iterable(value: object, name: str, what: str) -> Iterable[Any]:
    """``value`` if it is an iterable of items (not a str, bytes or a mapping, nor a 0-d numpy array, which claims
    to be iterable and raises TypeError when iterated), else :class:`InvalidInput` naming ``name``."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable) \
            or (isinstance(value, np.ndarray) and value.ndim == 0):
        raise InvalidInput(f"{name} must be {what}, got {type(value).__name__}")
    return value


def check_choice(value: object, name: str, choices: Iterable[Any], *, optional: bool = False) -> Any:
    choices = tuple(choices)
    if value is None and optional:
        return None
    if not is_one_of(value, choices):
        raise InvalidInput(f"{name} must be one of {choices}{' or None' if optional else ''}, got {value!r}")
    return value


def check_number(value: object, name: str, lo: float = 0.0, hi: float = 1.0) -> float:
    """A finite number in ``[lo, hi]``."""
    if isinstance(value, bool) or not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
        raise InvalidInput(f"{name} must be a number in [{lo}, {hi}], got {value!r}")
    return float(value)
