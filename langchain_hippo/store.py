"""``HippoStore``: a LangGraph ``BaseStore`` kept in a ``hippo.Memory``.

Mapping
-------
* A LangGraph namespace ``("users", "42", "prefs")`` lives in the hippo namespace ``"lg.users.42.prefs"``:
  the labels joined with ``"."`` behind a prefix (``"lg"`` by default), which keeps store data apart from the
  conversation namespaces of the same memory file. LangGraph forbids ``"."`` inside labels, so the mapping
  is reversible; ``list_namespaces`` reads it back from ``Memory.namespaces()``.
* One item is one hippo message. Its text is what gets searched: the indexed fields of the value (the
  store's ``index={"fields": [...]}``, the put's ``index=[...]``, or the whole value as JSON by default),
  one per line. The value itself, the key, created / updated times and TTL live in the message metadata
  (``store_value``, ``store_key``, ``store_created_at``, ``store_updated_at``, ``store_ttl``, ``expires_at``).
  ``index=False`` stores the item unindexed: it is returned by ``get`` and by searches without a query, never
  by a query.
* ``put`` on an existing key adds the new version, then deletes the old one (so a crash in between leaves
  two versions, of which reads take the newest; the next ``put`` removes both). ``created_at`` is kept.
* A ``query`` is answered by ``Memory.search`` in every namespace under the prefix; results are merged by
  hippo's score, which is ``SearchItem.score``. Searches without a query list items in namespace order, then
  in the order their keys were created (an update keeps the item's place, as in ``InMemoryStore``).
  ``filter`` uses LangGraph's JSON semantics (``$eq $ne $gt $gte $lt $lte``, nested dicts, lists) on the
  stored value.
* TTL (minutes) sets ``expires_at`` in the metadata; expired items are never returned by ``get`` or
  ``search``, and ``sweep_ttl()`` deletes them. Refreshing the TTL on read needs the memory to
  expose ``update``; without it, the TTL counts from the last write.

``index["embed"]`` / ``index["dims"]`` are accepted for drop-in compatibility with other stores and ignored:
hippo ranks with its own lexical and signature channels (give ``hippo.Memory(embed=...)`` to add one).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Generator, Iterable, Mapping
from datetime import datetime, timezone
from os import PathLike
from typing import Any, NamedTuple

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base import validate_op_namespace
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from hippo import InvalidInput
from langchain_hippo._common import acall, check_non_negative_int

#: ``expires_at`` of items without TTL: 9999-12-31T23:59:59Z, so "not expired" is one range filter.
NO_EXPIRY = 253402300799.0
_UNINDEXED_TEXT = "(unindexed store item)"


class _Call(NamedTuple):
    """One hippo call an operation needs: ``namespace`` None means the memory itself."""

    namespace: str | None
    method: str
    args: tuple = ()
    kwargs: dict = {}


_Plan = Generator[_Call, Any, Any]


class HippoStore(BaseStore):
    """LangGraph store backed by hippo: drop-in for ``InMemoryStore`` / ``PostgresStore``.

    Args:
        memory: a ``hippo.Memory``, or a path (``None`` for an in-memory store) to open one that the store
            owns and closes in ``close()``.
        prefix: hippo namespace prefix for store data (no ``"."``).
        index: LangGraph index config; only ``fields`` is used (default ``["$"]``: the whole value).
        ttl: LangGraph TTL config: ``default_ttl`` (minutes), ``refresh_on_read``,
            ``sweep_interval_minutes`` (used by ``start_ttl_sweeper``).

    Example:
        >>> store = HippoStore(hippo.Memory("agent.db"))
        >>> store.put(("users", "42"), "prefs", {"food": "pizza"})
        >>> store.search(("users",), query="favourite food")
    """

    supports_ttl: bool = True

    def __init__(
        self,
        memory: Any = None,
        *,
        prefix: str = "lg",
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if memory is None or isinstance(memory, (str, PathLike)):
            from hippo import Memory

            memory = Memory(memory)
            self._owns_memory = True
        else:
            self._owns_memory = False
        if not all(callable(getattr(memory, a, None)) for a in ("using", "namespaces", "search", "list")):
            raise InvalidInput(f"memory must be a hippo.Memory, a path or None, got {type(memory).__name__}")
        if not isinstance(prefix, str) or not prefix or "." in prefix or not prefix.strip():
            raise InvalidInput(f"prefix must be a non-empty string without '.', got {prefix!r}")
        if index is not None and not isinstance(index, Mapping):
            raise InvalidInput(f"index must be a dict (LangGraph IndexConfig) or None, got {type(index).__name__}")
        if ttl is not None and not isinstance(ttl, Mapping):
            raise InvalidInput(f"ttl must be a dict (LangGraph TTLConfig) or None, got {type(ttl).__name__}")
        self.memory = memory
        self.prefix = prefix
        self.index_config: IndexConfig | None = dict(index) if index is not None else None  # type: ignore
        fields = (index or {}).get("fields") or ["$"]
        if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
            raise InvalidInput(f"index['fields'] must be a list of JSON paths, got {fields!r}")
        for path in fields:
            if path != "$":
                tokenize_path(path)
        self._fields: list[str] = list(fields)
        self.ttl_config = dict(ttl) if ttl is not None else None  # type: ignore[assignment]
        self._views: dict[str, Any] = {}
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()

    # -- lifecycle -----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the TTL sweeper; close the memory if the store opened it."""
        self.stop_ttl_sweeper()
        if self._owns_memory:
            self.memory.close()

    def __enter__(self) -> HippoStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- namespace mapping ---------------------------------------------------------------------------------

    def hippo_namespace(self, namespace: tuple[str, ...]) -> str:
        """The hippo namespace holding the LangGraph namespace ``namespace``."""
        return ".".join((self.prefix, *namespace))

    def langgraph_namespace(self, name: str) -> tuple[str, ...] | None:
        """Inverse of ``hippo_namespace``; ``None`` for hippo namespaces outside this store."""
        head = self.prefix + "."
        if not name.startswith(head) or len(name) == len(head):
            return None
        return tuple(name[len(head):].split("."))

    def _view(self, name: str | None) -> Any:
        if name is None:
            return self.memory
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = self.memory.using(name)
        return view

    # -- drivers: one plan per op, run against the sync API or the async twins --------------------------------

    def _invoke(self, call: _Call) -> Any:
        return getattr(self._view(call.namespace), call.method)(*call.args, **call.kwargs)

    def _run(self, plan: _Plan) -> Any:
        try:
            call = next(plan)
            while True:
                call = plan.send(self._invoke(call))
        except StopIteration as stop:
            return stop.value

    async def _arun(self, plan: _Plan) -> Any:
        try:
            call = next(plan)
            while True:
                result = await acall(self._view(call.namespace), call.method, *call.args, **call.kwargs)
                call = plan.send(result)
        except StopIteration as stop:
            return stop.value

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; each sees the effects of the ops before it."""
        return [self._run(plan) for plan in self._plans(ops)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async ``batch`` through hippo's async twins; calls without a twin run in a worker thread."""
        return [await self._arun(plan) for plan in self._plans(ops)]

    def _plans(self, ops: Iterable[Op]) -> list[_Plan]:
        ops = list(ops)
        for op in ops:  # validate everything before touching the store
            self._check_op(op)
        return [self._plan(op) for op in ops]

    def _plan(self, op: Op) -> _Plan:
        if isinstance(op, GetOp):
            return self._plan_get(op)
        if isinstance(op, PutOp):
            return self._plan_put(op)
        if isinstance(op, SearchOp):
            return self._plan_search(op)
        return self._plan_list_namespaces(op)

    def _check_op(self, op: Op) -> None:
        if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
            raise InvalidInput(f"ops: unknown operation type {type(op).__name__}")
        validate_op_namespace(op)
        if isinstance(op, (GetOp, PutOp)):
            if not op.namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
            if not isinstance(op.key, str):
                raise InvalidInput(f"key must be a string, got {type(op.key).__name__}")
        if isinstance(op, PutOp):
            if op.namespace[0] == "langgraph":
                raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {op.namespace}')
            if op.value is not None:
                if not isinstance(op.value, Mapping):
                    raise InvalidInput(f"value must be a mapping or None, got {type(op.value).__name__}")
                try:
                    json.dumps(dict(op.value))
                except (TypeError, ValueError) as exc:
                    raise InvalidInput(f"value must be JSON-serializable: {exc}") from None
            if op.index is not None and op.index is not False:
                if isinstance(op.index, str) or not all(isinstance(p, str) for p in op.index):
                    raise InvalidInput(f"index must be False, None or a list of JSON paths, got {op.index!r}")
            if op.ttl is not None:
                if isinstance(op.ttl, bool) or not isinstance(op.ttl, (int, float)) or not op.ttl > 0 \
                        or op.ttl == float("inf"):
                    raise InvalidInput(f"ttl must be a positive number of minutes or None, got {op.ttl!r}")
        if isinstance(op, SearchOp):
            check_non_negative_int(op.limit, "limit")
            check_non_negative_int(op.offset, "offset")
            if op.filter is not None and not isinstance(op.filter, Mapping):
                raise InvalidInput(f"filter must be a dict or None, got {type(op.filter).__name__}")
            _check_filter(op.filter or {}, "filter")
            if op.query is not None and not isinstance(op.query, str):
                raise InvalidInput(f"query must be a string or None, got {type(op.query).__name__}")
        if isinstance(op, ListNamespacesOp):
            check_non_negative_int(op.limit, "limit")
            check_non_negative_int(op.offset, "offset")
            if op.max_depth is not None:
                check_non_negative_int(op.max_depth, "max_depth")
            for cond in op.match_conditions or ():
                if cond.match_type not in ("prefix", "suffix"):
                    raise InvalidInput(f"match_type must be 'prefix' or 'suffix', got {cond.match_type!r}")

    # -- item <-> message ----------------------------------------------------------------------------------

    def _index_text(self, value: Mapping[str, Any], index: Any) -> str | None:
        if index is False:
            return None
        texts: list[str] = []
        for path in index if index is not None else self._fields:
            texts.extend(get_text_at_path(value, path))
        text = "\n".join(t for t in texts if t and t.strip())
        return text or None

    @staticmethod
    def _is_store_item(message: Any) -> bool:
        return isinstance(message.metadata, dict) and "store_key" in message.metadata

    @staticmethod
    def _latest_per_key(messages: Iterable[Any]) -> list[Any]:
        """Newest version of each key, ordered by the key's creation (updates keep an item's place)."""
        latest: dict[str, Any] = {}
        for m in messages:
            key = m.metadata["store_key"]
            if key not in latest or m.seq > latest[key].seq:
                latest[key] = m
        return sorted(latest.values(), key=lambda m: (_parse_time(m.metadata.get("store_created_at")), m.seq))

    def _to_item(self, namespace: tuple[str, ...], message: Any, score: float | None = None,
                 search: bool = False) -> Item:
        md = message.metadata
        kwargs = dict(
            namespace=namespace,
            key=md["store_key"],
            value=md["store_value"],
            created_at=_parse_time(md.get("store_created_at")),
            updated_at=_parse_time(md.get("store_updated_at")),
        )
        if search:
            return SearchItem(score=score, **kwargs)
        return Item(**kwargs)

    @staticmethod
    def _refresh_on_read(requested: Any) -> bool:
        # BaseStore.get/search already resolved None against ttl_config["refresh_on_read"]
        return bool(requested)

    def _refresh_plan(self, name: str, messages: list[Any]) -> _Plan:
        """Push back ``expires_at`` of items with a TTL, when the memory can update metadata in place."""
        if not hasattr(self._view(name), "update"):
            return
        now = time.time()
        for m in messages:
            ttl = m.metadata.get("store_ttl")
            if ttl:
                md = dict(m.metadata, expires_at=now + float(ttl) * 60.0)
                yield _Call(name, "update", (m.id,), {"metadata": md})

    # -- plans ---------------------------------------------------------------------------------------------

    def _plan_get(self, op: GetOp) -> _Plan:
        name = self.hippo_namespace(op.namespace)
        found = yield _Call(name, "list", (), {"filter": {"store_key": op.key, "expires_at": {"$gt": time.time()}}})
        found = [m for m in found if self._is_store_item(m)]
        if not found:
            return None
        latest = max(found, key=lambda m: m.seq)
        if self._refresh_on_read(op.refresh_ttl):
            yield from self._refresh_plan(name, [latest])
        return self._to_item(op.namespace, latest)

    def _plan_put(self, op: PutOp) -> _Plan:
        name = self.hippo_namespace(op.namespace)
        old = yield _Call(name, "list", (), {"filter": {"store_key": op.key}})
        old_ids = [m.id for m in old if self._is_store_item(m)]
        if op.value is not None:
            now = datetime.now(timezone.utc)
            created = now
            live = [m for m in old
                    if self._is_store_item(m) and m.metadata.get("expires_at", NO_EXPIRY) > now.timestamp()]
            if live:
                created = _parse_time(max(live, key=lambda m: m.seq).metadata.get("store_created_at"))
            ttl = op.ttl
            text = self._index_text(op.value, op.index)
            metadata = {
                "store_key": op.key,
                "store_value": dict(op.value),
                "store_created_at": created.isoformat(),
                "store_updated_at": now.isoformat(),
                "store_indexed": text is not None,
                "store_ttl": float(ttl) if ttl is not None else None,
                "expires_at": now.timestamp() + float(ttl) * 60.0 if ttl is not None else NO_EXPIRY,
            }
            yield _Call(name, "add", (text or _UNINDEXED_TEXT,), {"timestamp": now, "metadata": metadata})
        if old_ids:
            yield _Call(name, "delete", (old_ids,), {})
        return None

    def _matching_namespaces(self, names: Iterable[str], prefix: tuple[str, ...]) -> list[tuple[str, tuple]]:
        out = []
        for name in names:
            ns = self.langgraph_namespace(name)
            if ns is not None and ns[: len(prefix)] == tuple(prefix):
                out.append((name, ns))
        out.sort(key=lambda pair: pair[1])
        return out

    def _plan_search(self, op: SearchOp) -> _Plan:
        names = yield _Call(None, "namespaces")
        spaces = self._matching_namespaces(names, op.namespace_prefix)
        now = time.time()
        live = {"expires_at": {"$gt": now}}
        stop = op.offset + op.limit
        results: list[tuple[float | None, tuple, Any]] = []
        if op.query and op.query.strip():
            if stop == 0:
                return []
            for name, ns in spaces:
                if op.filter:
                    listed = yield _Call(name, "list", (), {"filter": {**live, "store_indexed": True}})
                    ids = [m.id for m in self._latest_per_key(filter(self._is_store_item, listed))
                           if _matches(m.metadata["store_value"], op.filter)]
                    if not ids:
                        continue
                    flt = {"id": {"$in": ids}}
                else:
                    flt = {**live, "store_indexed": True}
                hits = yield _Call(name, "search", (op.query,), {"k": stop, "filter": flt})
                results.extend((h.score, ns, h) for h in hits if self._is_store_item(h))
            results.sort(key=lambda r: -(r[0] or 0.0))
            seen: set = set()
            unique = []
            for r in results:  # one hit per key (a crash may leave two versions)
                ident = (r[1], r[2].metadata["store_key"])
                if ident not in seen:
                    seen.add(ident)
                    unique.append(r)
            results = unique
        else:
            for name, ns in spaces:
                listed = yield _Call(name, "list", (), {"filter": live})
                for m in self._latest_per_key(filter(self._is_store_item, listed)):
                    if not op.filter or _matches(m.metadata["store_value"], op.filter):
                        results.append((None, ns, m))
                if not op.filter and len(results) >= stop:
                    break
        page = results[op.offset: stop]
        if self._refresh_on_read(op.refresh_ttl):
            by_name: dict[str, list] = {}
            for _, ns, m in page:
                by_name.setdefault(self.hippo_namespace(ns), []).append(m)
            for name, messages in by_name.items():
                yield from self._refresh_plan(name, messages)
        return [self._to_item(ns, m, score=s, search=True) for s, ns, m in page]

    def _plan_list_namespaces(self, op: ListNamespacesOp) -> _Plan:
        names = yield _Call(None, "namespaces")
        spaces = [ns for ns in map(self.langgraph_namespace, names) if ns is not None]
        if op.match_conditions:
            spaces = [ns for ns in spaces if all(_namespace_matches(c, ns) for c in op.match_conditions)]
        if op.max_depth is not None:
            spaces = sorted({ns[: op.max_depth] for ns in spaces})
        else:
            spaces = sorted(set(spaces))
        return spaces[op.offset: op.offset + op.limit]

    # -- extras beyond BaseStore ---------------------------------------------------------------------------

    def _delete_namespace_plan(self, namespace: tuple[str, ...]) -> _Plan:
        validate_op_namespace(SearchOp(tuple(namespace)))
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        names = yield _Call(None, "namespaces")
        total = 0
        for name, _ in self._matching_namespaces(names, tuple(namespace)):
            total += yield _Call(None, "delete_namespace", (name,), {})
            self._views.pop(name, None)
        return total

    def delete_namespace(self, namespace: tuple[str, ...]) -> int:
        """Delete every item in ``namespace`` and in the namespaces below it; returns how many were deleted."""
        return self._run(self._delete_namespace_plan(namespace))

    async def adelete_namespace(self, namespace: tuple[str, ...]) -> int:
        return await self._arun(self._delete_namespace_plan(namespace))

    def _sweep_plan(self) -> _Plan:
        names = yield _Call(None, "namespaces")
        now = time.time()
        total = 0
        for name in names:
            if self.langgraph_namespace(name) is not None:
                total += yield _Call(name, "forget", ({"expires_at": {"$lte": now}},), {})
        return total

    def sweep_ttl(self) -> int:
        """Delete every expired item; returns how many were deleted."""
        return self._run(self._sweep_plan())

    async def asweep_ttl(self) -> int:
        return await self._arun(self._sweep_plan())

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> threading.Thread:
        """Run ``sweep_ttl`` every ``sweep_interval_minutes`` (default: the TTL config's, else 5) in a daemon
        thread until ``stop_ttl_sweeper`` or ``close``."""
        interval = sweep_interval_minutes
        if interval is None:
            interval = (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0:
            raise InvalidInput(f"sweep_interval_minutes must be a positive number, got {interval!r}")
        if self._sweeper is not None and self._sweeper.is_alive():
            return self._sweeper
        self._sweeper_stop.clear()

        def loop() -> None:
            while not self._sweeper_stop.wait(float(interval) * 60.0):
                self.sweep_ttl()

        self._sweeper = threading.Thread(target=loop, name="hippo-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return self._sweeper

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True if it is no longer running."""
        self._sweeper_stop.set()
        if self._sweeper is None:
            return True
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped


# -- LangGraph's JSON filter and namespace matching semantics (as InMemoryStore / PostgresStore) -------------

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _check_filter(flt: Mapping[str, Any], where: str) -> None:
    for key, cond in flt.items():
        if isinstance(cond, Mapping):
            ops = [k for k in cond if isinstance(k, str) and k.startswith("$")]
            for op in ops:
                if op not in _OPERATORS:
                    raise InvalidInput(f"{where}[{key!r}]: unsupported operator {op!r}; expected one of {_OPERATORS}")
            if not ops:
                _check_filter(cond, f"{where}[{key!r}]")


def _matches(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    return all(_compare(value.get(key), cond) for key, cond in flt.items())


def _compare(actual: Any, cond: Any) -> bool:
    if isinstance(cond, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in cond):
            return all(_apply(actual, op, arg) for op, arg in cond.items())
        return isinstance(actual, Mapping) and all(_compare(actual.get(k), v) for k, v in cond.items())
    if isinstance(cond, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(cond)
                and all(_compare(a, c) for a, c in zip(actual, cond, strict=True)))
    return actual == cond


def _apply(actual: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return actual == arg
    if op == "$ne":
        return actual != arg
    try:  # numeric comparison, as PostgreSQL's JSONB casts; an absent or non-numeric field never matches
        a, b = float(actual), float(arg)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _namespace_matches(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    # zip stops at the end of the (shorter) pattern: only its labels are compared
    pairs = (zip(ns, path, strict=False) if cond.match_type == "prefix"
             else zip(reversed(ns), reversed(path), strict=False))
    return all(p == "*" or k == p for k, p in pairs)


def _parse_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        return datetime.fromisoformat(value)
    return datetime.now(timezone.utc)


__all__ = ["HippoStore", "NO_EXPIRY"]
