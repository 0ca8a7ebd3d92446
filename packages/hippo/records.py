"""JSON-ready shapes of what :class:`hippo.Memory` returns: the one machine-readable form shared by the command
line's ``--json`` output and the MCP server's structured tool results.

The shape is the return value's own: a ``MemoryItem`` / ``Hit`` / ``Recall`` becomes a dict of its dataclass
fields, and dicts and lists (``stats``, ``topics``, ``timeline``, consolidation reports) keep their keys. Only the
leaves change: datetimes become ISO-8601 strings with their UTC offset (``"2025-04-13T10:15:00+00:00"``), numpy
scalars plain numbers, non-finite floats ``null``, tuples and sets lists, a pydantic model the dict of its fields
(``model_dump(mode="json")``: a framework's tool call in a message's extra fields), any other object its text.
``json.loads`` of the output therefore gives back every field a caller of the Python API sees, under the same name.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import re
from collections.abc import Mapping
from datetime import date, datetime, timezone
from typing import Any

import numpy as np

from hippo.base.checks import MAX_METADATA_DEPTH
from hippo.base.config import Config
from hippo.base.errors import InvalidInput
from hippo.base.timeutil import on_calendar, time_zone, to_epoch
from hippo.base.types import Hit, MemoryItem, Recall
from hippo.text.tokenizer import count_tokens

__all__ = ["jsonable", "storable_metadata", "fitting_units", "message_time", "epoch_of", "time_zone", "message", "hit",
           "recall"]


def jsonable(value: Any) -> Any:
    """``value`` with every leaf replaced by a JSON type (see the module docstring for the rules)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):  # a pydantic model (a framework's tool call): its fields
        try:
            fields = dump(mode="json")
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is shown as its text, as any other object
            fields = None
        if isinstance(fields, dict):
            return jsonable(fields)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return str(value)


def fitting_units(recall: Recall) -> list[dict[str, Any]]:
    """The units of ``recall`` whose texts fit, in their order, into what its context leaves of its budget
    (``budget_tokens - tokens``; a unit too large for what is left is skipped).

    ``Recall.units`` say what the context's messages belong to (or, top-down, what guided their choice); their texts
    are no part of ``Recall.text``, which the messages fill up to the budget. A retriever that hands units to a model
    beside the messages takes these, so that its documents stay within the budget it was given."""
    if not isinstance(recall, Recall):
        raise InvalidInput(f"recall must be a hippo.Recall, got {type(recall).__name__}")
    room = recall.budget_tokens - recall.tokens
    out: list[dict[str, Any]] = []
    for unit in recall.units or []:
        size = count_tokens(str(unit.get("text", "")))
        if size <= room:
            out.append(unit)
            room -= size
    return out


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a pair is one code point in a str: any left is lone


def storable_metadata(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """``value`` as hippo can store it as a message's metadata (``add`` accepts the result): leaves as
    :func:`jsonable` makes them, each lone surrogate in a key or a string as U+FFFD, and what is nested deeper than
    ``MAX_METADATA_DEPTH`` levels as its JSON text. For adapters that store a framework's extra fields with a
    message (LlamaIndex's ``additional_kwargs``) and must not lose the message, or the others flushed with it, over
    one field hippo refuses as it is."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(f"metadata must be a dict or None, got {type(value).__name__}")

    def clean(v: Any, depth: int) -> Any:
        if isinstance(v, str):
            return _LONE_SURROGATE.sub("\ufffd", v)
        if isinstance(v, Mapping) or (isinstance(v, (list, tuple, set, frozenset)) and not isinstance(v, str)):
            if depth >= MAX_METADATA_DEPTH:
                try:
                    return clean(json.dumps(jsonable(v), ensure_ascii=False), depth)
                except (RecursionError, ValueError):
                    return "(nested too deep to store)"
            if isinstance(v, Mapping):
                return {clean(str(k), depth): clean(x, depth + 1) for k, x in v.items()}
            return [clean(x, depth + 1) for x in v]
        leaf = jsonable(v)
        return clean(leaf, depth) if isinstance(leaf, (str, list, dict)) else leaf

    return clean(dict(value), 0)


def message_time(value: Any, name: str, config: Any = None, zone: Any = None) -> Any:
    """``value`` if ``add(timestamp=value)`` takes it (a datetime, naive read as UTC; epoch seconds; ISO-8601 text,
    its offset from UTC kept), within ``config``'s ``timestamp_min_year..timestamp_max_year`` (1900..2200 without
    one); ``InvalidInput`` naming ``name`` otherwise. For adapters that read a message's time from a framework's
    message and must name the field it came from, not ``add``'s argument. With ``zone`` (a ``tzinfo``, or what
    :func:`time_zone` reads: an IANA name, an offset from UTC), a time that carries no calendar but UTC's (epoch
    seconds, naive, "Z", +00:00) comes back as the same instant on ``zone``'s; one with another offset keeps it.
    A ``config`` that is no ``hippo.Config`` (or dict of settings) and a ``zone`` that names no time zone raise
    ``InvalidInput`` naming them."""
    cfg = Config if config is None else Config.from_value(config)  # a dict of settings is read, not ignored
    zone = time_zone(zone, "zone")
    to_epoch(value, name, min_year=cfg.timestamp_min_year, max_year=cfg.timestamp_max_year)
    return on_calendar(value, zone)


def epoch_of(when: Any) -> float | None:
    """Epoch seconds of a message time as hippo stores or :func:`message_time` gives it: a datetime (naive read as
    UTC), epoch seconds, or ISO-8601 text this Python's ``datetime.fromisoformat`` reads; None for another form or
    value. For adapters that compare a framework message's time with a stored one's."""
    if isinstance(when, numbers.Real) and not isinstance(when, bool):
        return float(when)
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when)
        except ValueError:
            return None
    if not isinstance(when, datetime):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def message(item: MemoryItem) -> dict[str, Any]:
    """A stored message: ``id``, ``text``, ``speaker``, ``role``, ``timestamp``, ``session_id``, ``metadata``,
    ``namespace``, ``seq``, ``n_tokens``, ``created_at``."""
    return jsonable(item)


def hit(h: Hit) -> dict[str, Any]:
    """A search result: the message fields plus ``score``, ``channels``, ``level``, ``event_time``,
    ``superseded_by``, ``surprise`` and ``salience``."""
    return jsonable(h)


def recall(r: Recall) -> dict[str, Any]:
    """A recalled context: ``query``, ``text``, ``tokens``, ``budget_tokens``, ``messages`` (message dicts),
    ``units``, ``timings`` and ``trace``."""
    return jsonable(r)
