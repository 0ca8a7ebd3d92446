"""``HippoStore``: a LangGraph ``BaseStore`` kept in a ``hippo.Memory``.

LangGraph's ``InMemoryStore`` is the specification (``langgraph/store/memory/__init__.py``); every difference
that remains is listed, with its reason, in ``docs/compatibility.md``.

Mapping
-------
* A LangGraph namespace ``("users", "42", "prefs")`` lives in the hippo namespace ``"lg.users.42.prefs"``: the
  labels joined with ``"."`` behind a prefix (``"lg"`` by default), which keeps store data apart from the
  conversation namespaces of the same memory file. LangGraph forbids ``"."`` in labels, so the mapping is
  reversible; ``%`` and control characters in a label are %-escaped.
* One put of a value is one *version* of the item: one hippo message per indexed text (the store's
  ``index={"fields": [...]}`` or the put's ``index=[...]``, each text of each path, as ``InMemoryStore`` embeds
  them; the whole value as JSON by default), or a single unindexed message. The first message (the head) holds
  the value, the key, the times and the TTL in its metadata (``store_value``, ``store_key``, ...); every message
  of a version carries ``store_key`` and ``store_ver``. A query ranks the messages and an item scores by its best
  message: the max pooling over fields that ``InMemoryStore`` applies to its vectors.
* ``index["embed"]`` (a LangChain ``Embeddings``, a sync or async function, or a ``"provider:model"`` string,
  resolved by LangGraph's own ``ensure_embeddings``) becomes hippo's embedding channel (``hippo.Memory(embed=)``),
  fused with the lexical and signature channels.
* ``batch`` follows ``InMemoryStore``: reads see the store as it was before the batch, then the puts are applied,
  the last put of a key winning. Puts are validated before anything is written; every hippo namespace the puts
  touch is written in one transaction (``Memory.write_many``: in each, the new versions stored and the older ones
  of those keys deleted), so a batch that raises changed nothing.
* A search returns every live item under the prefix that passes ``filter`` (with or without ``index``, as
  ``InMemoryStore``): with a ``query``, items hippo ranks come first with their score, then the others, score
  ``None``. A query over several namespaces is ranked on one scale (``Memory.search_many``).
* TTL (minutes) sets ``expires_at`` in the head's metadata; expired items are never returned and their namespaces
  are not listed; ``sweep_ttl()`` deletes them.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import math
import re
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Generator, Iterable, Mapping
from datetime import datetime, timezone
from os import PathLike
from typing import Any, NamedTuple

from langchain_core.embeddings import Embeddings
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
    ensure_embeddings,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from hippo import ClosedError, HippoError, InvalidInput, NotFound
from langchain_hippo._common import acall, check_non_negative_int, index_text, message_chars, query_text

try:
    from langgraph.store.base import validate_op_namespace
except ImportError:  # langgraph-checkpoint before 4.3 (langgraph 1.0): the same check of every label an op carries
    def _check_labels(namespace: tuple[str, ...]) -> None:
        for label in namespace:
            if not isinstance(label, str):
                raise InvalidNamespaceError(f"Invalid namespace label '{label}' found in {namespace}. Namespace labels"
                                            f" must be strings, but got {type(label).__name__}.")
            if "." in label or "\x00" in label or not label:
                raise InvalidNamespaceError(f"Invalid namespace label {label!r} found in {namespace}. Namespace "
                                            f"labels cannot be empty or contain periods ('.') or NUL bytes.")

    def validate_op_namespace(op: Op) -> None:
        if isinstance(op, (GetOp, PutOp)):
            _check_labels(op.namespace)
        elif isinstance(op, SearchOp):
            _check_labels(op.namespace_prefix)
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                _check_labels(condition.path)


log = logging.getLogger(__name__)

#: ``expires_at`` of items without TTL: 9999-12-31T23:59:59Z, so "not expired" is one range filter.
NO_EXPIRY = 253402300799.0
_UNINDEXED_TEXT = "(unindexed store item)"
_INDEX_KEYS = {"dims", "embed", "fields"}
#: keys of other stores' index configs (PostgresStore) that mean nothing to hippo's channels
_FOREIGN_INDEX_KEYS = {"distance_type", "ann_index_config"}
_MAX_NAMESPACE_CHARS = 512
_VIEWS_KEPT = 256  # views of hippo namespaces a store keeps (see HippoStore._view)
MAX_VALUE_DEPTH = 99  # nesting levels of a value: it sits one level down in a message's metadata (100 at most)
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_LONGEST_WAIT = 365.0 * 86400.0 * 100  # seconds: a sweeper's wait, at most a century


#: memory -> event loop -> the lock the async operations of every HippoStore over that memory take turns with
_TURNS: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]] = \
    weakref.WeakKeyDictionary()
_TURNS_LOCK = threading.Lock()


def _now() -> float:
    """The store's clock (seconds since the epoch); one function so that tests can move time."""
    return time.time()


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether the JSON ``value`` nests dicts and lists more than ``limit`` levels (iteratively: any depth)."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth + 1 > limit:
                return True
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return False


def _expires(now: float, ttl_minutes: float | None) -> float:
    """When an item put or read at ``now`` expires: ``ttl_minutes`` later, or never (:data:`NO_EXPIRY`, the end of
    9999) for no TTL or one past it (``ttl=1e307`` is a valid number of minutes that no time can hold)."""
    if ttl_minutes is None:
        return NO_EXPIRY
    return min(now + ttl_minutes * 60.0, NO_EXPIRY)


class InvalidStoreNamespace(InvalidInput, InvalidNamespaceError):
    """A namespace LangGraph or hippo cannot take: both ``hippo.InvalidInput`` and LangGraph's
    ``InvalidNamespaceError`` (so code written for either catches it)."""


_NAMESPACE_ARGS = ("namespace", "namespace_prefix", "prefix", "suffix")


def _check_namespace_type(value: Any, name: str, *, allow_none: bool = False) -> None:
    """``value`` must be a namespace: a tuple (or a list) of labels. A string is refused: iterated as a tuple, its
    characters became the labels (``"users"`` the namespace ``("u", "s", "e", "r", "s")``)."""
    if value is None and allow_none:
        return
    if not isinstance(value, (tuple, list)):
        raise InvalidStoreNamespace(f"{name} must be a tuple of strings, got {type(value).__name__} {value!r}")


def _hippo_namespace_errors(method: Any) -> Any:
    """``BaseStore``'s ``method`` (``put``, ``get``, ``search``, ``delete``, ``list_namespaces`` and their async
    twins), whose namespace check runs before the batch and raises LangGraph's ``InvalidNamespaceError``: raised as
    :class:`InvalidStoreNamespace` instead, as the batch raises it, so that ``except hippo.InvalidInput`` catches
    a bad namespace whichever method was given it. A namespace that is no tuple (a string, None) is refused by
    name first."""
    signature = inspect.signature(method)

    def check(self: Any, args: tuple, kwargs: dict) -> None:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return  # a call Python itself refuses, as it would the method's
        for name in _NAMESPACE_ARGS:
            if name in bound.arguments:
                _check_namespace_type(bound.arguments[name], name, allow_none=name in ("prefix", "suffix"))

    if asyncio.iscoroutinefunction(method):
        @functools.wraps(method)
        async def twin(self: Any, *args: Any, **kwargs: Any) -> Any:
            check(self, args, kwargs)
            try:
                return await method(self, *args, **kwargs)
            except InvalidNamespaceError as exc:
                if isinstance(exc, HippoError):
                    raise
                raise InvalidStoreNamespace(str(exc)) from None

        return twin

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        check(self, args, kwargs)
        try:
            return method(self, *args, **kwargs)
        except InvalidNamespaceError as exc:
            if isinstance(exc, HippoError):
                raise
            raise InvalidStoreNamespace(str(exc)) from None

    return call


class _Call(NamedTuple):
    """One hippo call an operation needs: ``namespace`` None means the memory itself."""

    namespace: str | None
    method: str
    args: tuple = ()
    kwargs: dict = {}


_Plan = Generator[_Call, Any, Any]


class _SyncEmbeddings(Embeddings):
    """An ``Embeddings`` built from an async-only function: hippo embeds while it writes and searches, in sync
    code, so each call runs the coroutine to completion on a private event loop in a worker thread."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    @staticmethod
    def _wait(coro: Any) -> Any:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = asyncio.run(coro)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=run, name="hippo-embed")
        worker.start()
        worker.join()
        if "error" in box:
            raise box["error"]
        return box["value"]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._wait(self.inner.aembed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._wait(self.inner.aembed_query(text))

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await self.inner.aembed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await self.inner.aembed_query(text)


def resolve_embeddings(embed: Any) -> Embeddings:
    """``index["embed"]`` as LangGraph resolves it (``ensure_embeddings``: an ``Embeddings`` as is, a function
    wrapped, a ``"provider:model"`` string through ``langchain.embeddings.init_embeddings``), made usable from
    sync code when it is an async-only function."""
    if not (isinstance(embed, (str, Embeddings)) or callable(embed)):
        raise InvalidInput("index['embed'] must be a LangChain Embeddings, an embedding function or a "
                           f"'provider:model' string, got {type(embed).__name__}")
    try:
        embeddings = ensure_embeddings(embed)
    except (ValueError, ImportError) as exc:
        raise InvalidInput(f"index['embed']: {exc}") from None
    if getattr(embeddings, "func", None) is None and getattr(embeddings, "afunc", None) is not None:
        return _SyncEmbeddings(embeddings)
    return embeddings


def _escape_label(label: str) -> str:
    return "".join(f"%{ord(c):02X}" if c == "%" or ord(c) < 32 or ord(c) == 127 else c for c in label)


def _unescape_label(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "%" and _is_hex(text[i + 1: i + 3]):
            out.append(chr(int(text[i + 1: i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 2 and all(c in "0123456789abcdefABCDEF" for c in text)


class HippoStore(BaseStore):
    """LangGraph store backed by hippo: drop-in for ``InMemoryStore`` / ``PostgresStore``.

    Args:
        memory: a ``hippo.Memory``, or a path (``None`` for an in-memory store) to open one that the store owns
            and closes in ``close()``.
        prefix: hippo namespace prefix for store data (no ``"."``).
        index: LangGraph index config: ``fields`` (JSON paths whose text is indexed; default ``["$"]``, the whole
            value), ``embed`` (embeddings for hippo's embedding channel), ``dims`` (accepted; hippo keeps
            binary codes of any dimension). With an ``embed`` and a ``memory`` that has no embedding of its
            own, a file-backed memory is opened a second time with it (the store's namespaces get the
            embedding channel; the caller's object is left as it is); an in-memory one cannot be, and raises.
        ttl: LangGraph TTL config: ``default_ttl`` (minutes), ``refresh_on_read``, ``sweep_interval_minutes``
            (used by ``start_ttl_sweeper``).

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
        self._owned: list[Any] = []
        if not isinstance(prefix, str) or not prefix.strip() or "." in prefix or "%" in prefix \
                or any(ord(c) < 32 for c in prefix):
            raise InvalidInput(f"prefix must be a non-empty string without '.', '%' or control characters, "
                               f"got {prefix!r}")
        if index is not None and not isinstance(index, Mapping):
            raise InvalidInput(f"index must be a dict (LangGraph IndexConfig) or None, got {type(index).__name__}")
        if ttl is not None and not isinstance(ttl, Mapping):
            raise InvalidInput(f"ttl must be a dict (LangGraph TTLConfig) or None, got {type(ttl).__name__}")
        index = dict(index) if index is not None else None
        embeddings = self._check_index(index) if index is not None else None
        self._check_ttl(ttl)
        if memory is None or isinstance(memory, (str, PathLike)):
            from hippo import Memory

            memory = Memory(memory, embed=embeddings)
            self._owned.append(memory)
        elif not all(callable(getattr(memory, a, None))
                     for a in ("using", "namespaces", "search_many", "list", "with_embedding", "write_many",
                          "delete_namespaces")):
            raise InvalidInput(f"memory must be a hippo.Memory, a path or None, got {type(memory).__name__}")
        elif embeddings is not None:
            memory = self._embedding_memory(memory, index["embed"], embeddings)
        gate = getattr(getattr(memory.config, "gate", None), "enabled", False)
        if gate:
            raise InvalidInput("memory has the encoding gate on (config.gate.enabled), which may refuse a put; "
                               "a store must keep every item: give HippoStore a memory without the gate")
        self.memory = memory
        self.prefix = prefix
        self.index_config: IndexConfig | None = index  # type: ignore[assignment]
        self.embeddings: Embeddings | None = embeddings
        self._fields: list[str] = list((index or {}).get("fields") or ["$"])
        self.ttl_config = dict(ttl) if ttl is not None else None  # type: ignore[assignment]
        # hippo namespace -> its view, the least recently used dropped past _VIEWS_KEPT: a server reads and writes
        # the namespaces of users who come and go (and looks up some that hold nothing), and a view is cheap to make
        self._views: OrderedDict[str, Any] = OrderedDict()
        self._views_lock = threading.Lock()
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()

    @staticmethod
    def _check_index(index: dict[str, Any]) -> Embeddings | None:
        unknown = set(index) - _INDEX_KEYS - _FOREIGN_INDEX_KEYS
        if unknown:
            raise InvalidInput(f"index: unknown key(s) {sorted(unknown)}; expected {sorted(_INDEX_KEYS)}")
        dims = index.get("dims")
        if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
            raise InvalidInput(f"index['dims'] must be a positive int, got {dims!r}")
        fields = index.get("fields")
        if fields is not None:
            if isinstance(fields, str) or not isinstance(fields, (list, tuple)) \
                    or not all(isinstance(f, str) and f for f in fields):
                raise InvalidInput(f"index['fields'] must be a list of JSON paths, got {fields!r}")
            _check_paths(fields, "index['fields']")
        embed = index.get("embed")
        return resolve_embeddings(embed) if embed is not None else None

    @staticmethod
    def _check_ttl(ttl: Mapping[str, Any] | None) -> None:
        unknown = set(ttl or {}) - {"default_ttl", "sweep_interval_minutes", "refresh_on_read", "omit_expired"}
        if unknown:
            raise InvalidInput(f"ttl: unknown key(s) {sorted(unknown)}")
        for name in ("refresh_on_read", "omit_expired"):
            if name in (ttl or {}) and not isinstance(ttl[name], bool):
                raise InvalidInput(f"ttl[{name!r}] must be a bool, got {ttl[name]!r}")
        for name in ("default_ttl", "sweep_interval_minutes"):
            value = (ttl or {}).get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not value > 0 or not math.isfinite(value)):
                raise InvalidInput(f"ttl[{name!r}] must be a positive number of minutes, got {value!r}")

    def _embedding_memory(self, memory: Any, given: Any, embeddings: Embeddings) -> Any:
        """``memory`` when it already embeds with ``given``; else a second handle on its file with ``embeddings``
        (``Memory.with_embedding``), which the store closes."""
        twin = memory.with_embedding(given if getattr(memory, "embedding", None) is given else embeddings)
        if twin is not memory:
            self._owned.append(twin)
        return twin

    # -- lifecycle -----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the TTL sweeper; close the memory handles the store opened."""
        self.stop_ttl_sweeper()
        for memory in self._owned:
            memory.close()
        self._owned = []

    def __enter__(self) -> HippoStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- namespace mapping ---------------------------------------------------------------------------------

    def hippo_namespace(self, namespace: tuple[str, ...]) -> str:
        """The hippo namespace holding the LangGraph namespace ``namespace``."""
        return ".".join((self.prefix, *map(_escape_label, namespace)))

    def langgraph_namespace(self, name: str) -> tuple[str, ...] | None:
        """Inverse of ``hippo_namespace``; ``None`` for hippo namespaces outside this store."""
        head = self.prefix + "."
        if not name.startswith(head) or len(name) == len(head):
            return None
        return tuple(_unescape_label(label) for label in name[len(head):].split("."))

    def _view(self, name: str | None) -> Any:
        if name is None:
            return self.memory
        with self._views_lock:
            view = self._views.get(name)
            if view is not None:
                self._views.move_to_end(name)
                return view
        view = self.memory.using(name)
        with self._views_lock:
            self._views[name] = view
            while len(self._views) > _VIEWS_KEPT:
                self._views.popitem(last=False)
        return view

    # -- drivers: one plan per batch, run against the sync API or the async twins ---------------------------

    def _invoke(self, call: _Call) -> Any:
        return getattr(self._view(call.namespace), call.method)(*call.args, **call.kwargs)

    def _run(self, plan: _Plan) -> Any:
        try:
            call = next(plan)
            while True:
                try:
                    result = self._invoke(call)
                except Exception as exc:  # the plan may take back what it wrote, then re-raises
                    call = plan.throw(exc)
                else:
                    call = plan.send(result)
        except StopIteration as stop:
            return stop.value

    def _turns(self) -> asyncio.Lock:
        """The running event loop's queue of the async operations on this store's memory (``asyncio.Lock`` wakes
        its waiters first come, first served): shared by every ``HippoStore`` over the same ``hippo.Memory`` (one
        made per request sees the items of the others), one per loop since a lock belongs to one loop."""
        loop = asyncio.get_running_loop()
        with _TURNS_LOCK:
            per_loop = _TURNS.get(self.memory)
            if per_loop is None:
                per_loop = _TURNS[self.memory] = weakref.WeakKeyDictionary()
            lock = per_loop.get(loop)
            if lock is None:
                lock = per_loop[loop] = asyncio.Lock()
        return lock

    async def _arun(self, plan: _Plan) -> Any:
        """Run ``plan`` through hippo's async twins, after the plans of the async operations called before it.

        A plan reads, then writes, in several hippo calls: run side by side, two puts of one key both read the key
        before either wrote, and the one whose write landed last won whatever the order they were called in (a
        gather of ``aput(k, 0) .. aput(k, 199)`` kept any of them; ``InMemoryStore`` and LangGraph's batched async
        stores keep the last). Taking turns in call order, the async operations behave as the same sync calls one
        after the other; an operation cancelled before its turn does nothing."""
        async with self._turns():
            return await self._arun_now(plan)

    async def _arun_now(self, plan: _Plan) -> Any:
        """Run ``plan`` through hippo's async twins. A call already handed to a worker thread finishes whatever its
        caller does: a cancelled task therefore lets the plan run to its end (a batch's reads, then its one write),
        then raises ``CancelledError``, so that what the store holds is what the plan did."""
        cancelled = False
        try:
            call = next(plan)
            while True:
                pending = asyncio.ensure_future(acall(self._view(call.namespace), call.method, *call.args,
                                                      **call.kwargs))
                while not pending.done():
                    try:
                        await asyncio.shield(pending)
                    except asyncio.CancelledError:
                        if pending.cancelled():
                            raise
                        cancelled = True
                    except Exception:  # noqa: BLE001 - read from the future below
                        pass
                try:
                    result = pending.result()
                except Exception as exc:
                    call = plan.throw(exc)
                else:
                    call = plan.send(result)
        except StopIteration as stop:
            if cancelled:
                raise asyncio.CancelledError
            return stop.value

    get = _hippo_namespace_errors(BaseStore.get)
    search = _hippo_namespace_errors(BaseStore.search)
    put = _hippo_namespace_errors(BaseStore.put)
    delete = _hippo_namespace_errors(BaseStore.delete)
    list_namespaces = _hippo_namespace_errors(BaseStore.list_namespaces)
    aget = _hippo_namespace_errors(BaseStore.aget)
    asearch = _hippo_namespace_errors(BaseStore.asearch)
    aput = _hippo_namespace_errors(BaseStore.aput)
    adelete = _hippo_namespace_errors(BaseStore.adelete)
    alist_namespaces = _hippo_namespace_errors(BaseStore.alist_namespaces)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``: reads see the store as it was before the batch, then the puts are applied (the last put
        of a key wins), all or none."""
        return self._run(self._batch_plan(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async ``batch`` through hippo's async twins; calls without a twin run in a worker thread. Cancelled, it
        applies the whole batch first (a write already in a worker thread cannot be stopped), then raises
        ``CancelledError``."""
        return await self._arun(self._batch_plan(ops))

    def _batch_plan(self, ops: Iterable[Op]) -> _Plan:
        if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
            raise InvalidInput(f"ops must be an iterable of LangGraph operations, got {type(ops).__name__}")
        ops = list(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:  # validate everything before touching the store
            self._check_op(op)
            if isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
        versions = {ident: self._version(op) for ident, op in puts.items()}
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append((yield from self._plan_get(op)))
            elif isinstance(op, SearchOp):
                results.append((yield from self._plan_search(op)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._plan_list_namespaces(op)))
            else:
                results.append(None)
        if puts:
            yield from self._plan_puts(versions)
        return results

    def _check_op(self, op: Op) -> None:
        if not isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
            raise InvalidInput(f"ops: unknown operation type {type(op).__name__}")
        if isinstance(op, (GetOp, PutOp)):
            _check_namespace_type(op.namespace, "namespace")
        elif isinstance(op, SearchOp):
            _check_namespace_type(op.namespace_prefix, "namespace_prefix")
        if isinstance(op, (GetOp, SearchOp)) and op.refresh_ttl is not None and not isinstance(op.refresh_ttl, bool):
            # a truthy "no" would push the expiry back
            raise InvalidInput(f"refresh_ttl must be a bool or None, got {op.refresh_ttl!r}")
        if isinstance(op, ListNamespacesOp):
            if op.match_conditions is not None and not isinstance(op.match_conditions, (tuple, list)):
                raise InvalidInput(f"match_conditions must be a tuple of MatchCondition or None, got "
                                   f"{type(op.match_conditions).__name__}")
            for cond in op.match_conditions or ():  # checked before LangGraph's label check reads cond.path
                if not isinstance(cond, MatchCondition) or cond.match_type not in ("prefix", "suffix"):
                    raise InvalidInput(f"match_conditions: expected MatchCondition('prefix' or 'suffix', path), "
                                       f"got {cond!r}")
                _check_namespace_type(cond.path, cond.match_type)
        try:
            validate_op_namespace(op)
        except InvalidNamespaceError as exc:
            raise InvalidStoreNamespace(str(exc)) from None
        if isinstance(op, (GetOp, PutOp)):
            if not op.namespace:
                raise InvalidStoreNamespace("Namespace cannot be empty.")
            if not isinstance(op.key, str):
                raise InvalidInput(f"key must be a string, got {type(op.key).__name__}")
            self._check_length(op.namespace)
        if isinstance(op, PutOp):
            if _SURROGATE.search(op.key):
                raise InvalidInput(f"key {op.key!r} holds a lone surrogate, which hippo cannot store losslessly")
            for label in op.namespace:
                if _SURROGATE.search(label):
                    raise InvalidStoreNamespace(f"namespace label {label!r} holds a lone surrogate, which hippo "
                                                "cannot store losslessly")
            if op.namespace[0] == "langgraph":
                raise InvalidStoreNamespace(f'Root label for namespace cannot be "langgraph". Got: {op.namespace}')
            if op.value is not None and not isinstance(op.value, Mapping):
                raise InvalidInput(f"value must be a mapping or None, got {type(op.value).__name__}")
            if op.index is not None and op.index is not False:
                if isinstance(op.index, str) or not isinstance(op.index, (list, tuple)) \
                        or not all(isinstance(p, str) and p for p in op.index):
                    raise InvalidInput(f"index must be False, None or a list of JSON paths, got {op.index!r}")
                _check_paths(op.index, "index")
            if op.ttl is not None:
                if isinstance(op.ttl, bool) or not isinstance(op.ttl, (int, float)) or not op.ttl > 0 \
                        or not math.isfinite(op.ttl):
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
                if not isinstance(cond, MatchCondition) or cond.match_type not in ("prefix", "suffix"):
                    raise InvalidInput(f"match_conditions: expected MatchCondition('prefix' or 'suffix', path), "
                                       f"got {cond!r}")
                try:
                    validate_op_namespace(SearchOp(tuple(p for p in cond.path if p != "*")))
                except InvalidNamespaceError as exc:
                    raise InvalidStoreNamespace(str(exc)) from None

    def _check_length(self, namespace: tuple[str, ...]) -> None:
        if len(self.hippo_namespace(namespace)) > _MAX_NAMESPACE_CHARS:
            raise InvalidStoreNamespace(f"namespace {namespace!r} is too long: its labels may take at most "
                                        f"{_MAX_NAMESPACE_CHARS - len(self.prefix) - 1} characters together")

    # -- versions: the hippo messages of one put -------------------------------------------------------------

    def _version(self, op: PutOp) -> list[dict[str, Any]] | None:
        """The messages of a put (validated: a value hippo cannot keep raises here, before any write)."""
        if op.value is None:
            return None
        value = dict(op.value)
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
            text.encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
            raise InvalidInput(f"value of {op.namespace!r}/{op.key!r} must be JSON-serializable, without NaN, "
                               f"infinity or lone surrogates: {type(exc).__name__}: {exc}") from None
        stored = json.loads(text)
        if _deeper_than(stored, MAX_VALUE_DEPTH):
            raise InvalidInput(f"value of {op.namespace!r}/{op.key!r} is nested more than {MAX_VALUE_DEPTH} levels "
                               "deep (it is kept in a message's metadata, which holds 100)")
        limit = message_chars(self.memory)
        texts: list[tuple[str, str]] = []
        if op.index is not False:
            for path in (self._fields if op.index is None else op.index):
                found = get_text_at_path(value, path if path == "$" else tokenize_path(path))
                for i, t in enumerate(found):
                    clean = index_text(t, limit)
                    if clean.strip():
                        texts.append((f"{path}.{i}" if len(found) > 1 else path, clean))
        ver = uuid.uuid4().hex
        parts = texts or [("", _UNINDEXED_TEXT)]
        messages = []
        for i, (field, t) in enumerate(parts):
            md: dict[str, Any] = {"store_key": op.key, "store_ver": ver, "store_part": i,
                                  "store_indexed": bool(texts)}
            if field:
                md["store_field"] = field
            if i == 0:
                md.update(store_value=stored, store_parts=len(parts),
                          store_ttl=float(op.ttl) if op.ttl is not None else None)
            messages.append({"text": t, "metadata": md})
        return messages

    @staticmethod
    def _is_head(message: Any) -> bool:
        md = message.metadata
        return isinstance(md, dict) and "store_key" in md and "store_value" in md

    @staticmethod
    def _order(head: Any) -> int:
        return int(head.metadata.get("store_order", head.seq))

    def _live_after(self, now: float) -> float:
        """Items whose ``expires_at`` is past this are live: ``now``, or forever with ``omit_expired=False``
        (expired items then stay visible until a sweep deletes them, as LangGraph's option says)."""
        return now if (self.ttl_config or {}).get("omit_expired", True) else float("-inf")

    def _heads(self, messages: Iterable[Any], now: float) -> list[Any]:
        """The live newest version of each key, in the order keys were first put (an overwrite keeps the place,
        as a dict does)."""
        now = self._live_after(now)
        live = [m for m in self._newest(messages).values() if float(m.metadata.get("expires_at", NO_EXPIRY)) > now]
        return sorted(live, key=self._order)

    def _newest(self, messages: Iterable[Any]) -> dict[str, Any]:
        """The newest version (the head message of the highest seq) of each key among ``messages``."""
        latest: dict[str, Any] = {}
        for m in messages:
            if self._is_head(m):
                key = m.metadata["store_key"]
                if key not in latest or m.seq > latest[key].seq:
                    latest[key] = m
        return latest

    def _to_item(self, namespace: tuple[str, ...], head: Any, *, score: float | None = None,
                 search: bool = False) -> Item:
        md = head.metadata
        kwargs = dict(namespace=namespace, key=md["store_key"], value=md["store_value"],
                      created_at=_parse_time(md.get("store_created_at")),
                      updated_at=_parse_time(md.get("store_updated_at")))
        if search:
            return SearchItem(score=score, **kwargs)
        return Item(**kwargs)

    def _refresh_plan(self, name: str, heads: list[Any], requested: bool | None) -> _Plan:
        """Push back ``expires_at`` of the items read (``BaseStore`` resolved ``refresh_ttl`` against the
        TTL config already)."""
        if not requested:
            return
        now = _now()
        for m in heads:
            ttl = m.metadata.get("store_ttl")
            if ttl:
                try:
                    yield _Call(name, "update", (m.id,), {"metadata": dict(m.metadata, expires_at=_expires(now, ttl))})
                except NotFound:
                    # a put or a delete of the key by another writer took this version away after it was read:
                    # the read still answers with what it saw (it came first), and there is nothing left to refresh
                    pass

    # -- reads ---------------------------------------------------------------------------------------------

    def _plan_get(self, op: GetOp) -> _Plan:
        name = self.hippo_namespace(op.namespace)
        found = yield _Call(name, "list", (), {"filter": {"store_key": op.key}})
        heads = self._heads(found, _now())
        if not heads:
            return None
        yield from self._refresh_plan(name, heads, op.refresh_ttl)
        return self._to_item(op.namespace, heads[0])

    def _spaces(self, names: Iterable[str], prefix: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
        out = []
        for name in names:
            ns = self.langgraph_namespace(name)
            if ns is not None and ns[: len(prefix)] == tuple(prefix):
                out.append((name, ns))
        out.sort(key=lambda pair: pair[1])
        return out

    def _plan_search(self, op: SearchOp) -> _Plan:
        names = yield _Call(None, "namespaces")
        now = _now()
        stop = op.offset + op.limit
        listed: list[tuple[str, tuple[str, ...], list[Any]]] = []
        for name, ns in self._spaces(names, op.namespace_prefix):
            messages = yield _Call(name, "list", (), {})
            heads = [m for m in self._heads(messages, now)
                     if not op.filter or _matches(m.metadata["store_value"], op.filter)]
            if heads:
                listed.append((name, ns, heads))
            if not op.query and sum(len(h) for _, _, h in listed) >= stop:
                break
        ranked: list[tuple[float | None, tuple[str, ...], Any]] = []
        # any text is a query, as in InMemoryStore: asked as hippo can take it (an escape code or a NUL as a space,
        # a paste past hippo's question length by its end); nothing left to ask ranks nothing
        asked = query_text(op.query) if op.query else ""
        if asked.strip() and stop > 0:
            ranked = yield from self._ranked(asked, listed, stop)
        seen = {(ns, m.metadata["store_key"]) for _, ns, m in ranked}
        rest = [(None, ns, m) for _, ns, heads in listed for m in heads if (ns, m.metadata["store_key"]) not in seen]
        page = (ranked + rest)[op.offset: stop]
        by_name: dict[str, list[Any]] = {}
        for _, ns, m in page:
            by_name.setdefault(self.hippo_namespace(ns), []).append(m)
        for name, heads in by_name.items():
            yield from self._refresh_plan(name, heads, op.refresh_ttl)
        return [self._to_item(ns, m, score=s, search=True) for s, ns, m in page]

    def _ranked(self, query: str, listed: list[tuple[str, tuple[str, ...], list[Any]]],
                stop: int) -> _Plan:
        """Items whose messages hippo ranks for ``query``, best first, each scored by its best message."""
        heads = {(name, m.metadata["store_ver"]): (ns, m) for name, ns, hs in listed for m in hs
                 if m.metadata.get("store_indexed", True) and "store_ver" in m.metadata}
        if not heads:
            return []
        parts = sum(int(m.metadata.get("store_parts", 1)) for _, m in heads.values())
        widest = max(int(m.metadata.get("store_parts", 1)) for _, m in heads.values())
        flt = {"store_ver": {"$in": sorted({ver for _, ver in heads})}}
        names = sorted({name for name, _ in heads}, key=lambda n: self.langgraph_namespace(n) or ())
        # store items are documents, not dialogue turns: ranked by the channels alone, without hippo's
        # conversational priors (surprise, salience, time cues), as InMemoryStore ranks by similarity alone
        hits = yield _Call(None, "search_many", (names, query),
                           {"k": min(parts, stop * widest), "filter": flt, "priors": False})
        out: list[tuple[float | None, tuple[str, ...], Any]] = []
        seen: set = set()
        for h in hits:
            ident = (h.namespace, (h.metadata or {}).get("store_ver"))
            found = heads.get(ident)
            if found is None or ident in seen:
                continue
            seen.add(ident)
            out.append((float(h.score), found[0], found[1]))
        return out

    def _plan_list_namespaces(self, op: ListNamespacesOp) -> _Plan:
        names = yield _Call(None, "namespaces")
        now = _now()
        spaces = []
        for name in names:
            ns = self.langgraph_namespace(name)
            if ns is None or (op.match_conditions and
                              not all(_namespace_matches(c, ns) for c in op.match_conditions)):
                continue
            live = yield _Call(name, "list", (), {"filter": {"expires_at": {"$gt": self._live_after(now)}},
                                                  "limit": 1})
            if any(self._is_head(m) for m in live):
                spaces.append(ns)
        if op.max_depth is not None:
            spaces = sorted({ns[: op.max_depth] for ns in spaces})
        else:
            spaces = sorted(set(spaces))
        return spaces[op.offset: op.offset + op.limit]

    # -- writes --------------------------------------------------------------------------------------------

    def _plan_puts(self, versions: dict[tuple[tuple[str, ...], str], list[dict[str, Any]] | None]) -> _Plan:
        by_name: dict[str, dict[str, list[dict[str, Any]] | None]] = {}
        for (ns, key), messages in versions.items():
            by_name.setdefault(self.hippo_namespace(ns), {})[key] = messages
        now = datetime.fromtimestamp(_now(), timezone.utc)
        stamp = now.isoformat()
        adds: dict[str, list[dict[str, Any]]] = {}
        for name, keyed in by_name.items():
            found = yield _Call(name, "list", (), {"filter": {"store_key": {"$in": sorted(keyed)}}})
            previous = {m.metadata["store_key"]: m for m in self._heads(found, now.timestamp())}
            for key, messages in keyed.items():
                if messages is None:
                    continue
                head = messages[0]["metadata"]
                ttl = head["store_ttl"]
                head.update(store_created_at=stamp, store_updated_at=stamp)
                if key in previous:  # an overwrite keeps the item's place in listings
                    head["store_order"] = self._order(previous[key])
                for m in messages:
                    m["timestamp"] = now
                    if m is messages[0]:
                        m["metadata"]["expires_at"] = _expires(now.timestamp(), ttl)
                adds.setdefault(name, []).extend(messages)
        # One transaction for the whole batch (``Memory.write_many``): in each hippo namespace the batch's new
        # versions stored and every older version of its keys (and the keys it deletes) gone. The older versions
        # are judged in it: a version of one of these keys that another writer (task, thread or process) put after
        # the list above goes too, so each key keeps one version, the newest (the one reads show). A batch that
        # raises changed nothing in any namespace.
        yield _Call(None, "write_many", ({name: {"items": adds.get(name, []),
                                                 "replacing": {"store_key": {"$in": sorted(keyed)}}}
                                          for name, keyed in by_name.items()},), {})

    # -- extras beyond BaseStore ---------------------------------------------------------------------------

    def _delete_namespace_plan(self, namespace: tuple[str, ...]) -> _Plan:
        _check_namespace_type(namespace, "namespace")
        namespace = tuple(namespace)
        try:
            validate_op_namespace(SearchOp(namespace))
        except InvalidNamespaceError as exc:
            raise InvalidStoreNamespace(str(exc)) from None
        if not namespace:
            raise InvalidStoreNamespace("Namespace cannot be empty.")
        names = yield _Call(None, "namespaces")
        below = [name for name, _ in self._spaces(names, namespace)]
        # every namespace of the subtree in one transaction: all of them gone, or (it raised) none
        total = (yield _Call(None, "delete_namespaces", (below,), {})) if below else 0
        with self._views_lock:
            for name in below:
                self._views.pop(name, None)
        return total

    def delete_namespace(self, namespace: tuple[str, ...]) -> int:
        """Delete every item in ``namespace`` and in the namespaces below it; returns how many hippo messages
        were deleted."""
        return self._run(self._delete_namespace_plan(namespace))

    async def adelete_namespace(self, namespace: tuple[str, ...]) -> int:
        return await self._arun(self._delete_namespace_plan(namespace))

    def _sweep_plan(self) -> _Plan:
        names = yield _Call(None, "namespaces")
        now = _now()
        total = 0
        for name in names:
            if self.langgraph_namespace(name) is None:
                continue
            found = yield _Call(name, "list", (), {"filter": {"expires_at": {"$lte": now}}})
            keys = sorted({m.metadata["store_key"] for m in found if self._is_head(m)})
            if not keys:
                continue
            # every version of those keys: an item is expired when its newest version is, and then all its
            # versions go; an older version left behind by a put of an earlier hippo that stopped between its
            # write and its deletion of the old ones (a crash, a cancelled task) would otherwise come back
            every = yield _Call(name, "list", (), {"filter": {"store_key": {"$in": keys}}})
            gone: set[str] = set()

            def choose(stored: list[Any], gone: set[str] = gone) -> list[int]:
                # Judged in the deleting transaction, on the versions as they are when they are deleted: an item
                # another handle or process read and refreshed since the listing is no longer expired, and stays
                # with its parts. One deletion takes the expired items with every part and older version, or
                # nothing: stopped half way, the parts of an item indexed on several fields were left behind.
                newest = self._newest(stored)
                gone.clear()
                gone.update(key for key, m in newest.items()
                            if float(m.metadata.get("expires_at", NO_EXPIRY)) <= now)
                out = []
                for m in stored:
                    key = m.metadata.get("store_key") if isinstance(m.metadata, dict) else None
                    if key in newest and (m.seq < newest[key].seq or key in gone
                                          and m.metadata.get("store_ver") == newest[key].metadata.get("store_ver")):
                        out.append(m.id)
                return out

            wanted = set(keys)
            ids = [m.id for m in every if isinstance(m.metadata, dict) and m.metadata.get("store_key") in wanted]
            if ids:
                yield _Call(name, "delete", (ids,), {"choose": choose})
            total += len(gone)
        return total

    def sweep_ttl(self) -> int:
        """Delete every expired item; returns how many items were deleted."""
        return self._run(self._sweep_plan())

    async def asweep_ttl(self) -> int:
        return await self._arun(self._sweep_plan())

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> threading.Thread:
        """Run ``sweep_ttl`` every ``sweep_interval_minutes`` (default: the TTL config's, else 5) in a daemon
        thread until ``stop_ttl_sweeper`` or ``close``."""
        interval = sweep_interval_minutes
        if interval is None:
            interval = (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0 \
                or not math.isfinite(interval):
            raise InvalidInput(f"sweep_interval_minutes must be a positive number, got {interval!r}")
        # a wait longer than the platform's clock can count (1e300 minutes) raised OverflowError in the thread,
        # which ended before its first sweep: such an interval waits as long as a wait can
        wait = min(float(interval) * 60.0, _LONGEST_WAIT)
        if self._sweeper is not None and self._sweeper.is_alive():
            return self._sweeper
        self._sweeper_stop.clear()

        def loop() -> None:
            while not self._sweeper_stop.wait(wait):
                try:
                    self.sweep_ttl()
                except ClosedError:
                    return  # the memory was closed under the sweeper: there is nothing left to sweep
                except Exception:  # noqa: BLE001 - one failed sweep (a busy store) must not end the sweeping
                    # as LangGraph's PostgresStore sweeper does: log it and sweep again at the next interval
                    log.exception("HippoStore: TTL sweep failed; retrying in %s minutes", interval)

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


# -- LangGraph's JSON filter and namespace matching semantics (InMemoryStore's, with the extensions in
#    docs/compatibility.md) -----------------------------------------------------------------------------------

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_RANGE = ("$gt", "$gte", "$lt", "$lte")


def _check_paths(paths: Iterable[str], where: str) -> None:
    for path in paths:
        if path != "$":
            try:
                tokenize_path(path)
            except Exception as exc:  # LangGraph's tokenizer raises plain errors on malformed paths
                raise InvalidInput(f"{where}: bad JSON path {path!r}: {exc}") from None


def _check_filter(flt: Mapping[str, Any], where: str) -> None:
    for key, cond in flt.items():
        if not isinstance(key, str):
            raise InvalidInput(f"{where}: keys must be strings, got {key!r}")
        if isinstance(cond, Mapping):
            ops = [k for k in cond if isinstance(k, str) and k.startswith("$")]
            if ops:
                for op, arg in cond.items():
                    if op not in _OPERATORS:
                        raise InvalidInput(f"{where}[{key!r}]: unsupported operator {op!r}; "
                                           f"expected one of {_OPERATORS}")
                    if op in _RANGE and (not isinstance(arg, (int, float, str)) or
                                         isinstance(arg, float) and math.isnan(arg)):
                        raise InvalidInput(f"{where}[{key!r}][{op!r}] must be a number or a string, got {arg!r}")
            else:
                _check_filter(cond, f"{where}[{key!r}]")


def _matches(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    return all(_compare(value.get(key), cond, key) for key, cond in flt.items())


def _compare(actual: Any, cond: Any, key: str) -> bool:
    if isinstance(cond, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in cond):
            return all(_apply(actual, op, arg, key) for op, arg in cond.items())
        return isinstance(actual, Mapping) and all(_compare(actual.get(k), v, f"{key}.{k}") for k, v in cond.items())
    if isinstance(cond, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(cond)
                and all(_compare(a, c, key) for a, c in zip(actual, cond, strict=True)))
    return actual == cond


def _apply(actual: Any, op: str, arg: Any, key: str) -> bool:
    if op == "$eq":
        return actual == arg
    if op == "$ne":
        return actual != arg
    try:  # numbers (and numeric text) compare as numbers, as InMemoryStore's float() and PostgreSQL's casts do
        a, b = float(actual), float(arg)
    except (TypeError, ValueError):
        if isinstance(actual, str) and isinstance(arg, str):
            a, b = actual, arg  # text compares as text: ISO-8601 dates order correctly
        elif actual is None:
            return False  # an absent field matches no range, as in the SQL stores
        else:
            raise InvalidInput(f"filter[{key!r}][{op!r}]: cannot compare the stored {type(actual).__name__} "
                               f"{actual!r} with {arg!r}") from None
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


__all__ = ["HippoStore", "InvalidStoreNamespace", "NO_EXPIRY", "resolve_embeddings"]
