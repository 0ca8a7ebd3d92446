"""Type translation shared by the LangChain adapters: argument checks, hippo items to plain metadata, and
calls that prefer hippo's async twins.

Nothing here ranks, filters or selects memories; that is hippo's job.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from hippo import MAX_QUERY_CHARS, InvalidInput, jsonable, storable


class MissingKey(InvalidInput, KeyError):
    """A named key is absent from a mapping: ``hippo.InvalidInput`` and the ``KeyError`` LangChain's own classes
    raise there, so code written for either catches it."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


#: hippo ``Memory.recall`` default budget, used when a caller gives none.
DEFAULT_BUDGET_TOKENS = 2000
#: the largest int hippo takes (a SQLite / PostgreSQL integer): a count past it is refused here, naming the
#: adapter's own argument, rather than by the Memory call it becomes
MAX_INT = 2**63 - 1


def check_positive_int(value: Any, name: str, *, allow_none: bool = False) -> int | None:
    """Return ``value`` if it is an int >= 1 (``None`` allowed when ``allow_none``); else raise InvalidInput."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be a positive int, got {type(value).__name__} {value!r}")
    if not 1 <= value <= MAX_INT:
        raise InvalidInput(f"{name} must be a positive int (at most {MAX_INT}), got {value!r}")
    return value


def check_non_negative_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{name} must be an int >= 0, got {value!r}")
    if value > MAX_INT:
        raise InvalidInput(f"{name} must be at most {MAX_INT}, got {value!r}")
    return value


def check_bool(value: Any, name: str) -> bool:
    """``value`` if it is True or False: a switch given as "no", 0 or an array is refused rather than read by its
    truth value."""
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def check_filter(value: Any, name: str = "filter") -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInput(f"{name} must be a dict or None, got {type(value).__name__}")
    return value


def check_namespace(value: Any, name: str = "namespace") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} must be a non-empty string or None, got {value!r}")
    return value


def check_messages(value: Any, name: str = "messages") -> list[Any]:
    """``value`` as a list of LangChain ``BaseMessage`` objects, else InvalidInput naming it (or the element)."""
    from langchain_core.messages import BaseMessage

    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{name} must be a list of LangChain BaseMessage objects, got {type(value).__name__}")
    for i, message in enumerate(value):
        if not isinstance(message, BaseMessage):
            raise InvalidInput(f"{name}[{i}] must be a LangChain BaseMessage, got {type(message).__name__}")
    return list(value)


def check_memory(value: Any, name: str = "memory") -> Any:
    """Duck-typed check: anything with hippo.Memory's ``search``/``recall``/``add`` methods is accepted."""
    if not all(callable(getattr(value, attr, None)) for attr in ("search", "recall", "add", "using")):
        raise InvalidInput(f"{name} must be a hippo.Memory, got {type(value).__name__}")
    return value


def index_text(text: str, limit: int | None = None) -> str:
    """Text hippo can index for ``text`` (:func:`hippo.storable`): control characters and lone surrogates (which
    hippo refuses in message text) become spaces, and text past ``limit`` characters is left out. Only search sees
    this text; callers keep the original (message content, store value) exactly, in the metadata."""
    return storable(text, limit)


def message_chars(memory: Any) -> int:
    """The longest message text ``memory`` stores (``Config.max_message_chars``; 1,000,000 for a config without
    it)."""
    return int(getattr(memory.config, "max_message_chars", 1_000_000) or 1_000_000)


def query_text(text: str) -> str:
    """A question hippo can ask for ``text`` taken from a conversation (an agent's latest message, a chain's
    input): :func:`hippo.storable`, its last :data:`hippo.MAX_QUERY_CHARS` characters (the end of a long paste,
    where the question usually is). Blank when nothing is left to ask."""
    return storable(text, -MAX_QUERY_CHARS)


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def item_metadata(item: Any, *, score: float | None = None, level: str | None = None) -> dict[str, Any]:
    """Metadata of a hippo ``MemoryItem`` / ``Hit`` as a flat JSON-safe dict.

    The item's own metadata comes first; hippo's fields (``id``, ``speaker``, ``role``, ``timestamp``,
    ``session_id``, ``namespace``, ``seq``, ``level``, ``score``) are written over it so they are always present.
    """
    md: dict[str, Any] = {str(k): jsonable(v) for k, v in (item.metadata or {}).items()}
    md.update(
        id=item.id,
        speaker=item.speaker,
        role=item.role,
        timestamp=iso(item.timestamp),
        session_id=item.session_id,
        namespace=item.namespace,
        seq=item.seq,
        level=level or getattr(item, "level", "message"),
    )
    hit_score = getattr(item, "score", None) if score is None else score
    if hit_score is not None:
        md["score"] = jsonable(float(hit_score))
    return md


def unit_metadata(unit: dict[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
    """Metadata of a hierarchical recall unit (episode, semantic, theme) as returned in ``Recall.units``."""
    md = {str(k): jsonable(v) for k, v in unit.items() if k != "text"}
    md.setdefault("level", "unit")
    if namespace is not None:
        md.setdefault("namespace", namespace)
    return md


def render_item(item: Any) -> str:
    """One line per message for tool output: ``[id] date speaker: text``."""
    # the speaker's wall clock, the year in four digits (strftime writes the year 64 as "64")
    when = item.timestamp.isoformat(sep=" ", timespec="minutes")[:16] if item.timestamp is not None else "undated"
    who = item.speaker or item.role
    return f"[{item.id}] {when} {who}: {item.text}"


async def acall(target: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
    """Call hippo's async twin ``a<name>`` when it exists; otherwise run ``<name>`` in a worker thread."""
    twin = getattr(target, "a" + name, None)
    if twin is not None:
        return await twin(*args, **kwargs)
    return await asyncio.to_thread(getattr(target, name), *args, **kwargs)


def raise_invalid_from_validation(owner: str, exc: Exception) -> None:
    """Turn a pydantic ValidationError raised while constructing an adapter into hippo's InvalidInput."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for err in errors():
            loc = ".".join(str(p) for p in err.get("loc", ())) or "argument"
            parts.append(f"{loc}: {err.get('msg', 'invalid value')}")
        raise InvalidInput(f"{owner}: " + "; ".join(parts)) from None
    raise InvalidInput(f"{owner}: {exc}") from None


#: where LangGraph keeps a run's ``Runtime`` (its ``context``) in ``configurable``, as ``langgraph.runtime.get_runtime``
#: reads it
_RUNTIME_KEY = "__pregel_runtime"


def run_time_zone(config: Any, key: str, context: Any = None) -> tuple[Any, str] | None:
    """The time zone a run gives under ``key`` and where it came from: its LangGraph runtime context's (``context``,
    else the runtime's in the config), else its ``configurable``'s; None when it gives none. ``config`` is merged with
    the config of the run the call is in (a retriever tool hands its retriever only callbacks; a tool runs in its own
    run's config). The value is not read here: ``hippo.time_zone(value, where)`` reads it."""
    from langchain_core.runnables import ensure_config

    configurable = ensure_config(config).get("configurable") or {}
    if context is None:
        context = getattr(configurable.get(_RUNTIME_KEY), "context", None)
    given = context.get(key) if isinstance(context, Mapping) else getattr(context, key, None)
    if given is not None:
        return given, f"context[{key!r}]"
    given = configurable.get(key)
    if given is not None:
        return given, f"config['configurable'][{key!r}]"
    return None


def check_key(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{name} must be a non-empty string, got {value!r}")
    return value


def custom_namespace(fn: Any, user_id: str | None, thread_id: str | None) -> str | None:
    """The namespace a user-supplied ``namespace_fn(user_id, thread_id)`` chooses, or None to use the default."""
    if fn is None:
        return None
    return fn(user_id, thread_id)


def store_key(memory: Any) -> Any:
    """What names the store ``memory`` is a handle on, for the turns every handle on it takes (two ``hippo.Memory``
    objects opened on one file in one process store into the same messages): its file (the real path) or its URL,
    else the handle itself (a store kept in RAM is its handle's own)."""
    path = getattr(memory, "path", None)
    if not isinstance(path, str):
        return memory
    return ("url", path) if "://" in path else ("file", os.path.realpath(path))
