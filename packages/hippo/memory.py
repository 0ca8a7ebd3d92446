"""``hippo.Memory``: the public facade over the store, the co-index and retrieval."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import math
import os
import time
import zlib
from typing import Any, Iterable, Mapping

import numpy as np

from hippo import context, retrieval, tokenizer
from hippo import evidence_recall
from hippo._native import BinaryIndex, WaveletMatrix
from hippo.agentic import AgenticMixin
from hippo.coindex import ROLES, NamespaceIndex, Scored
from hippo.config import Config
from hippo.embedding import SimHasher, as_embed_fn
from hippo.entries import EntriesMixin
from hippo.errors import ClosedError, CorruptData, HippoError, InvalidInput, NotFound, StoreError
from hippo.filters import compile_filter
from hippo.hierarchy import lifecycle
from hippo.profiles import ProfilesMixin
from hippo.rwlock import RWLock
from hippo.store.base import MessageRow, NewMessage
from hippo.store.sqlite import SQLiteStore
from hippo.timeutil import fmt_day, to_datetime, to_epoch
from hippo.truth import rank as truth_rank
from hippo.truth.api import TruthMixin
from hippo.truth.state import GRANULARITIES
from hippo.truth import timeexpr
from hippo.types import Hit, MemoryItem, Recall

EXPORT_FORMAT = "hippo-export"
EXPORT_VERSION = 1
_ROLES = ROLES
_ADD_KEYS = ("text", "speaker", "role", "timestamp", "session_id", "metadata", "priority", "event_time")
_PRIORITIES = ("critical", "high", "normal", "low")


class _Scope:
    """The time scope of one search / recall call: filters and whether the query asks for an order."""

    __slots__ = ("since", "until", "as_of", "ordering", "current")

    def __init__(self, since: float | None, until: float | None, as_of: float | None, ordering: bool,
                 current: bool = False) -> None:
        self.since, self.until, self.as_of, self.ordering = since, until, as_of, ordering
        self.current = current

    @property
    def filters(self) -> bool:
        return self.since is not None or self.until is not None or self.as_of is not None


_DAY_GRANULARITIES = (GRANULARITIES.index("day"), GRANULARITIES.index("caller"))

# Set by search / recall for the duration of one call so that ranking and packing (also when reached through the
# hierarchy's top-down recall) see the same time scope; a ContextVar is per thread and per asyncio task.
_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("hippo_time_scope", default=None)


def _check_namespace(ns: object, name: str = "namespace") -> str:
    if not isinstance(ns, str) or not ns.strip():
        raise InvalidInput(f"{name} must be a non-empty str, got {ns!r}")
    if len(ns) > 512 or any(ord(c) < 32 for c in ns):
        raise InvalidInput(f"{name} must be at most 512 printable characters")
    return ns


def _check_int(value: object, name: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInput(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise InvalidInput(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _check_optional_str(value: object, name: str, limit: int = 1000) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a str or None, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidInput(f"{name} is longer than {limit} characters")
    tokenizer.check_text(value, name) if value.strip() else None
    return value


def _check_metadata(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(f"metadata must be a dict or None, got {type(value).__name__}")
    for k in value:
        if not isinstance(k, str):
            raise InvalidInput(f"metadata keys must be str, got {k!r}")
    try:
        text = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise InvalidInput(f"metadata must be JSON-serializable without NaN or lone surrogates: {exc}") from exc
    return json.loads(text)


class _Shared:
    """State shared by every namespace view of one store."""

    def __init__(self, path, config: Config, llm, embed) -> None:
        self.config = config
        self.store = SQLiteStore(path, busy_timeout_s=config.busy_timeout_s)
        self.lock = RWLock()
        self.indexes: dict[str, NamespaceIndex] = {}
        self.codes: dict[str, tuple[BinaryIndex, list[int]]] = {}
        self.llm = llm
        self.embed = as_embed_fn(embed)
        self.hasher = SimHasher(config.embed_bits) if self.embed else None
        self.dense: dict[str, Any] = {}  # int8 user embeddings per namespace, for re-scoring candidates
        self.closed = False
        self.bits = tokenizer.token_bits()

    # Chunk codec: a sealed chunk is a serialized static wavelet matrix (checksummed, validated on load),
    # deflated: its bit-packed symbols of natural text shrink by about a quarter (2.1 -> 1.6 bytes per token).
    def encode_chunk(self, tokens: np.ndarray) -> bytes:
        raw = WaveletMatrix(np.ascontiguousarray(tokens, dtype=np.uint32), self.bits).to_bytes()
        return zlib.compress(raw, 6)

    def decode_chunk(self, blob: bytes) -> np.ndarray:
        blob = bytes(blob)
        try:
            inflater = zlib.decompressobj()
            # A serialized matrix never compresses 64-fold; a blob that claims to is hostile or damaged.
            raw = inflater.decompress(blob, 64 * len(blob) + 4096)
        except zlib.error as exc:
            raise CorruptData(f"a sealed chunk is not valid deflate data: {exc}") from exc
        if inflater.unconsumed_tail or not inflater.eof:
            raise CorruptData("a sealed chunk is truncated or inflates beyond any valid size")
        wm = WaveletMatrix.from_bytes(raw)
        return wm.access_range(0, len(wm))


class Memory(TruthMixin, EntriesMixin, AgenticMixin, ProfilesMixin):
    """Long-term memory for an agent: add messages as they happen, recall a budgeted context later.

    ``path`` is a SQLite file (created with mode 0600; many namespaces per file) or ``None`` for a private
    in-memory store. All writes are transactional: a failed call leaves the stored content unchanged.
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        namespace: str = "default",
        config: Config | dict | None = None,
        llm: Any = None,
        embed: Any = None,
        _shared: _Shared | None = None,
    ) -> None:
        self._namespace = _check_namespace(namespace)
        if _shared is None:
            if path is not None and not isinstance(path, (str, os.PathLike)):
                raise InvalidInput(f"path must be a str, os.PathLike or None, got {type(path).__name__}")
            _shared = _Shared(path, Config.from_value(config), llm, embed)
        self._s = _shared

    # -- lifecycle ------------------------------------------------------------------------------------------
    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def config(self) -> Config:
        return self._s.config

    @property
    def path(self) -> str | None:
        return self._s.store.path

    def using(self, namespace: str) -> "Memory":
        """A view of another namespace of the same store (shares the connection and caches)."""
        self._live()
        return Memory(namespace=_check_namespace(namespace), _shared=self._s)

    def close(self) -> None:
        s = self._s
        if s.closed:
            return
        with s.lock.write():
            lifecycle.on_close(s)  # snapshot hierarchy and strengths (derived, rebuildable)
            for ns in list(s.indexes):
                try:
                    s.store.seal(ns, s.encode_chunk, s.decode_chunk, 1)
                except HippoError:
                    pass  # the tail stays in its rows; nothing is lost
            s.store.close()
            s.closed = True

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory(path={self.path!r}, namespace={self._namespace!r})"

    def _live(self) -> None:
        if self._s.closed:
            raise ClosedError("this Memory is closed")

    # -- index maintenance ----------------------------------------------------------------------------------
    def _index(self) -> NamespaceIndex:
        """The namespace's co-index, loaded on first use and refreshed when another writer changed the store."""
        s = self._s
        ns = self._namespace
        state = s.store.state(ns)
        idx = s.indexes.get(ns)
        if idx is not None and idx.state == state:
            return idx
        with s.lock.write():
            idx = s.indexes.get(ns)
            state = s.store.state(ns)
            if idx is not None and idx.state == state:
                return idx
            if idx is not None and idx.state.generation == state.generation:
                rows = s.store.load(ns, s.decode_chunk, after_seq=idx.last_seq)  # appended elsewhere
            else:
                idx = NamespaceIndex(ns, s.config)
                rows = s.store.load(ns, s.decode_chunk)
                s.codes.pop(ns, None)
            vocab = tokenizer.vocab_size()
            for r in rows:
                if r.tokens.size and int(r.tokens.max()) >= vocab:
                    s.indexes.pop(ns, None)
                    raise CorruptData(f"namespace {ns!r}: message {r.id} holds token ids outside the vocabulary")
            idx.append(rows)
            idx.truth.observe(rows)
            idx.state = state
            s.indexes[ns] = idx
            if s.embed is not None:
                self._sync_codes(idx, rows)
            return idx

    def _sync_codes(self, idx: NamespaceIndex, rows: list[MessageRow]) -> None:
        s = self._s
        ns = self._namespace
        entry = s.codes.get(ns)
        width = s.config.embed_bits // 8
        if entry is None:
            entry = s.codes[ns] = (BinaryIndex(s.config.embed_bits), [])
            dense = evidence_recall.DenseVectors()
            s.dense[ns] = dense
            stored = s.store.get_codes(ns)
            have = [i for i in idx.ids.view.tolist() if i in stored]
            if have:
                # a stored blob is the SimHash code, then (since dense re-scoring) the int8 vector
                arr = np.frombuffer(b"".join(stored[i][:width] for i in have), dtype=np.uint8).reshape(len(have), -1)
                entry[0].add(np.ascontiguousarray(arr))
                entry[1].extend(have)
                dense.add_blobs(have, [stored[i][width:] for i in have])
            rows = [r for r in rows if r.id not in stored]
        if rows:
            # embedded as the line a reader sees, "<speaker>: <text>": a question naming a person then matches
            # that person's messages in the embedding too
            texts = [f"{r.speaker or r.role}: {tokenizer.decode(r.tokens)}" for r in rows]
            vectors = s.embed(texts)
            codes = s.hasher.codes(vectors, len(texts))
            q8 = evidence_recall.quantize(vectors)
            s.store.put_codes(ns, [r.id for r in rows], np.hstack([codes, q8.view(np.uint8)]))
            entry[0].add(np.ascontiguousarray(codes))
            entry[1].extend(r.id for r in rows)
            s.dense[ns].add([r.id for r in rows], q8)

    # -- writing --------------------------------------------------------------------------------------------
    def _prepare(self, item: Mapping[str, Any] | MemoryItem, where: str) -> NewMessage:
        if isinstance(item, MemoryItem):
            item = {"text": item.text, "speaker": item.speaker, "role": item.role, "timestamp": item.timestamp,
                    "session_id": item.session_id, "metadata": item.metadata}
        if not isinstance(item, Mapping):
            raise InvalidInput(f"{where} must be a dict or MemoryItem, got {type(item).__name__}")
        unknown = set(item) - set(_ADD_KEYS)
        if unknown:
            raise InvalidInput(f"{where}: unknown field(s) {sorted(unknown)}; expected {list(_ADD_KEYS)}")
        cfg = self._s.config
        text = tokenizer.check_text(item.get("text"), f"{where}.text" if where != "add" else "text",
                                    max_chars=cfg.max_message_chars)
        role = item.get("role", "user") or "user"
        if role not in _ROLES:
            raise InvalidInput(f"role must be one of {_ROLES}, got {role!r}")
        speaker = _check_optional_str(item.get("speaker"), "speaker")
        session = _check_optional_str(item.get("session_id"), "session_id")
        ts = to_epoch(item.get("timestamp"), "timestamp", min_year=cfg.timestamp_min_year,
                      max_year=cfg.timestamp_max_year)
        metadata = _check_metadata(item.get("metadata"))
        event_time = to_epoch(item.get("event_time"), "event_time", min_year=cfg.timestamp_min_year,
                              max_year=cfg.timestamp_max_year)
        if event_time is not None:
            metadata["event_time"] = event_time
        priority = item.get("priority")
        if priority is not None:
            if priority not in _PRIORITIES:
                raise InvalidInput(f"priority must be one of {_PRIORITIES} or None, got {priority!r}")
            metadata["priority"] = priority
        tokens = tokenizer.encode(text)
        return NewMessage(tokens=tokens, speaker=speaker, role=role, ts=ts, session_id=session,
                          metadata=metadata, created_at=time.time())

    def add(
        self,
        text: str,
        *,
        speaker: str | None = None,
        role: str = "user",
        timestamp: Any = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        priority: str | None = None,
        event_time: Any = None,
    ) -> MemoryItem:
        """Store one message verbatim; it is retrievable as soon as this returns. Zero LLM calls.

        ``timestamp`` is when the message was said; ``event_time`` (optional) when what it reports happened.
        Without it, the event time is resolved from the text ("yesterday", "two weeks ago", "on May 3rd") against
        ``timestamp``. Both accept a datetime, epoch seconds or ISO-8601 text."""
        item = {"text": text, "speaker": speaker, "role": role, "timestamp": timestamp, "session_id": session_id,
                "metadata": metadata, "priority": priority, "event_time": event_time}
        return lifecycle.gated_write(self, [self._prepare(item, "add")])[0]

    def add_many(self, items: Iterable[Mapping[str, Any] | MemoryItem]) -> list[MemoryItem]:
        """Store many messages in one transaction: either all are stored or none."""
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
            raise InvalidInput(f"items must be an iterable of dicts, got {type(items).__name__}")
        prepared = [self._prepare(it, f"items[{k}]") for k, it in enumerate(items)]
        return lifecycle.gated_write(self, prepared)

    def _write(self, prepared: list[NewMessage]) -> list[MemoryItem]:
        self._live()
        if not prepared:
            return []
        s = self._s
        ns = self._namespace
        idx = self._index()
        with s.lock.write():
            rows = s.store.append(ns, prepared)
            idx = s.indexes.get(ns) or idx
            expected = idx.state
            idx.append(rows)
            idx.truth.observe(rows)
            texts = [tokenizer.decode(r.tokens) for r in rows]
            state = s.store.state(ns)
            # If another process appended in between, reload instead of trusting our incremental state.
            if state.generation == expected.generation and state.next_seq == expected.next_seq + len(rows):
                idx.state = state
            else:
                s.indexes.pop(ns, None)
            if s.embed is not None and ns in s.indexes:
                self._sync_codes(idx, rows)
            if ns in s.indexes:
                lifecycle.on_add(self, idx, rows)  # hierarchy, strengths (light consolidation)
            if ns in s.indexes:
                first = len(idx) - len(rows)
                idx.truth.sync(idx, {first + k: t for k, t in enumerate(texts)})
            self._maybe_seal(ns)
        return [self._item(r, t) for r, t in zip(rows, texts)]

    def _maybe_seal(self, ns: str) -> None:
        s = self._s
        try:
            sealed = s.store.seal(ns, s.encode_chunk, s.decode_chunk, s.config.seal_tokens)
        except StoreError:
            # The append has committed: a seal that cannot get the lock or the disk space now is retried by a
            # later write, and the tail stays readable in its rows. Failing here would make callers retry an
            # add that already happened.
            return
        if sealed:
            idx = s.indexes.get(ns)
            if idx is not None:
                idx.state = s.store.state(ns)

    def update(self, id: int, *, metadata: dict[str, Any]) -> MemoryItem:
        """Replace a message's metadata in place (id, seq and text are unchanged); ``NotFound`` if absent."""
        self._live()
        i = _check_int(id, "id")
        meta = _check_metadata(metadata)
        with self._s.lock.write():
            if not self._s.store.update_metadata(self._namespace, i, meta):
                raise NotFound(f"id {i} is not a message of namespace {self._namespace!r}")
        return self.get(i)

    def delete(self, ids: int | Iterable[int]) -> int:
        """Delete messages by id from the store and every structure; unknown ids are ignored. Returns count."""
        self._live()
        if isinstance(ids, (int, np.integer)) and not isinstance(ids, bool):
            ids = [int(ids)]
        elif isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise InvalidInput(f"ids must be an int or an iterable of ints, got {type(ids).__name__}")
        ids = [_check_int(i, "ids", minimum=0) for i in ids]
        return self._delete(ids)

    def _delete(self, ids: list[int]) -> int:
        s = self._s
        ns = self._namespace
        self._index()
        with s.lock.write():
            gone = s.store.delete(ns, ids, s.encode_chunk, s.decode_chunk)
            idx = s.indexes.get(ns)
            if gone and idx is not None:
                before = idx.state
                idx.rebuild_without(gone)
                if s.embed is not None:
                    s.codes.pop(ns, None)
                state = s.store.state(ns)
                if state.generation == before.generation + 1 and state.next_seq == before.next_seq:
                    idx.state = state
                else:
                    s.indexes.pop(ns, None)
            if gone:
                lifecycle.on_delete(self, gone)  # units left without provenance go too
        return len(gone)

    def forget(self, filter: dict[str, Any]) -> int:
        """Delete every message of this namespace that matches ``filter``."""
        if not isinstance(filter, dict) or not filter:
            raise InvalidInput("filter must be a non-empty dict (use clear() to delete everything)")
        pred = compile_filter(filter)
        self._live()
        ids = [r.id for r in self._s.store.scan(self._namespace) if pred(r)]
        return self._delete(ids)

    def clear(self) -> int:
        """Delete every message of this namespace."""
        self._live()
        ids = [r.id for r in self._s.store.scan(self._namespace)]
        return self._delete(ids)

    def delete_namespace(self, namespace: str) -> int:
        """Remove a whole namespace (messages, chunks, codes, units); returns the number of messages removed."""
        self._live()
        ns = _check_namespace(namespace)
        s = self._s
        with s.lock.write():
            n = s.store.delete_namespace(ns)
            s.indexes.pop(ns, None)
            s.codes.pop(ns, None)
            lifecycle.on_drop_namespace(s, ns)
        return n

    def namespaces(self) -> list[str]:
        self._live()
        return self._s.store.namespaces()

    def vacuum(self) -> None:
        """Reclaim space and scrub freed pages: deleted content leaves no bytes behind in the file."""
        self._live()
        with self._s.lock.write():
            self._s.store.vacuum()

    def flush(self) -> None:
        """Seal the unsealed tail of this namespace into a chunk now (normally done every ``seal_tokens``)."""
        self._live()
        s = self._s
        self._index()
        with s.lock.write():
            s.store.seal(self._namespace, s.encode_chunk, s.decode_chunk, 1)
            idx = s.indexes.get(self._namespace)
            if idx is not None:
                idx.state = s.store.state(self._namespace)

    # -- reading --------------------------------------------------------------------------------------------
    def _item(self, row: MessageRow, text: str, cls=MemoryItem, **extra) -> MemoryItem:
        return cls(
            id=row.id, text=text, speaker=row.speaker, role=row.role, timestamp=to_datetime(row.ts),
            session_id=row.session_id, metadata=dict(row.metadata), namespace=row.namespace, seq=row.seq,
            n_tokens=row.n_tokens, created_at=to_datetime(row.created_at), **extra,
        )

    def _items(self, idx: NamespaceIndex, ids: list[int], cls=MemoryItem, extras=None) -> list:
        rows = self._s.store.rows(self._namespace, ids)
        out = []
        for k, i in enumerate(ids):
            r = rows.get(i)
            pos = idx.row_of.get(i)
            if r is None or pos is None:
                continue
            out.append(self._item(r, idx.text_of(pos), cls, **(extras[k] if extras else {})))
        return out

    def get(self, id: int) -> MemoryItem:
        """The message with this id, reconstructed from the Content DWM; ``NotFound`` if it is not here."""
        self._live()
        i = _check_int(id, "id")
        idx = self._index()
        with self._s.lock.read():
            items = self._items(idx, [i])
        if not items:
            raise NotFound(f"id {i} is not a message of namespace {self._namespace!r}")
        lifecycle.on_access(self, [i])  # explicit retrieval reinforces (seed 004 §4.1)
        return items[0]

    def count(self) -> int:
        self._live()
        idx = self._index()
        return len(idx)

    def __len__(self) -> int:
        return self.count()

    def list(self, *, filter: dict[str, Any] | None = None, limit: int | None = None, offset: int = 0) -> list[MemoryItem]:
        """Messages in insertion order, optionally filtered and paginated."""
        self._live()
        pred = compile_filter(filter)
        if limit is not None:
            limit = _check_int(limit, "limit")
        offset = _check_int(offset, "offset")
        idx = self._index()
        out, skipped = [], 0
        with self._s.lock.read():
            for r in self._s.store.scan(self._namespace):
                if pred is not None and not pred(r):
                    continue
                if skipped < offset:
                    skipped += 1
                    continue
                if limit is not None and len(out) >= limit:
                    break
                pos = idx.row_of.get(r.id)
                if pos is not None:
                    out.append(self._item(r, idx.text_of(pos)))
        return out

    def read(self, message_id: int, *, before: int = 2, after: int = 2) -> list[MemoryItem]:
        """A message with up to ``before`` / ``after`` neighbours from the same session, in order."""
        self._live()
        i = _check_int(message_id, "message_id")
        before = _check_int(before, "before")
        after = _check_int(after, "after")
        idx = self._index()
        with self._s.lock.read():
            pos = idx.row_of.get(i)
            if pos is None:
                raise NotFound(f"id {i} is not a message of namespace {self._namespace!r}")
            sess = idx.session.view
            lo, hi = pos, pos
            while lo > 0 and pos - lo < before and sess[lo - 1] == sess[pos]:
                lo -= 1
            while hi + 1 < len(idx) and hi - pos < after and sess[hi + 1] == sess[pos]:
                hi += 1
            ids = idx.ids.view[lo : hi + 1].tolist()
            return self._items(idx, ids)

    # -- search and recall ----------------------------------------------------------------------------------
    def _rank(self, idx: NamespaceIndex, query: str, limit: int, *, context: bool = False, magnitudes: bool = False
              ) -> tuple[np.ndarray, np.ndarray, dict, dict]:
        cfg = self._s.config
        rc = cfg.retrieval
        t0 = time.perf_counter()
        q = retrieval.analyze(query, lifecycle.keywords(self, query))  # LLM keywords when configured
        timings = {"analyze_ms": (time.perf_counter() - t0) * 1e3}
        ranked: dict[str, np.ndarray] = {}
        raw: dict[str, Scored] = {}
        t = time.perf_counter()
        raw["lexical"] = retrieval.lexical(idx, q, cfg, smooth=context)
        ranked["lexical"] = retrieval.top(raw["lexical"], rc.candidate_limit)
        timings["lexical_ms"] = (time.perf_counter() - t) * 1e3
        if rc.weight_signature > 0:
            t = time.perf_counter()
            raw["signature"] = retrieval.signature(idx, q, cfg)
            ranked["signature"] = retrieval.top(raw["signature"], rc.candidate_limit)
            timings["signature_ms"] = (time.perf_counter() - t) * 1e3
        if self._s.embed is not None and rc.weight_embedding > 0:
            t = time.perf_counter()
            ranked["embedding"] = self._embedding_channel(idx, query, rc.candidate_limit)
            timings["embedding_ms"] = (time.perf_counter() - t) * 1e3
        weights = {"lexical": rc.weight_lexical, "signature": rc.weight_signature, "embedding": rc.weight_embedding}
        if magnitudes:
            # the evidence packer needs how far apart candidates are, which ranks alone (RRF) do not say
            rows, scores = evidence_recall.fused_scores(self, idx, query, raw, ranked, weights)
            per = {}
        else:
            rows, scores, per = retrieval.rrf(ranked, weights, rc.rrf_k)
        t = time.perf_counter()
        idx.truth.sync(idx)
        scope = _SCOPE.get()
        rows, scores, fired = truth_rank.adjust(
            idx, idx.truth, cfg.temporal, query, rows, scores,
            since=scope.since if scope else None, until=scope.until if scope else None,
            as_of=scope.as_of if scope else None)
        if rc.profile_prior and rows.size:
            # seed 002 stage 9 f_L0: questions about a person's preferences or identity favour that person's own
            # attribute statements (a bounded factor; the identity for every other query)
            factors = self._profile_factors(idx, query, rows)
            if (factors != 1.0).any():
                scores = scores * factors
                order = np.argsort(-scores, kind="stable")
                rows, scores = rows[order], scores[order]
        timings["truth_ms"] = (time.perf_counter() - t) * 1e3
        timings["rank_ms"] = (time.perf_counter() - t0) * 1e3
        return rows[:limit], scores[:limit], per, timings

    def _embedding_channel(self, idx: NamespaceIndex, query: str, limit: int) -> np.ndarray:
        s = self._s
        entry = s.codes.get(self._namespace)
        if entry is None or len(entry[0]) == 0:
            return np.zeros(0, np.int64)
        qcode = s.hasher.codes(evidence_recall.query_vector(s, query)[None, :], 1)
        k = min(limit, len(entry[0]))
        _, ids = entry[0].search(np.ascontiguousarray(qcode), k)
        rows = [idx.row_of.get(entry[1][j]) for j in ids[0].tolist() if j >= 0]
        return np.asarray([r for r in rows if r is not None], dtype=np.int64)

    def _check_query(self, query: object) -> str:
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise InvalidInput("query must not be empty or whitespace only")
        if len(query) > 100_000:
            raise InvalidInput("query is longer than 100000 characters")
        tokenizer.check_text(query, "query")
        return query

    def search(self, query: str, *, k: int = 10, filter: dict[str, Any] | None = None, since: Any = None,
               until: Any = None, as_of: Any = None) -> list[Hit]:
        """The ``k`` best messages for ``query`` (fused lexical, signature and optional embedding channels,
        reweighted by time and truth: seed 002 §4.1 stage 9).

        ``since`` / ``until`` keep messages whose event time overlaps ``[since, until)``; ``as_of`` answers as the
        memory stood at that moment (messages ingested later, and updates they made, are ignored). Each accepts a
        datetime, epoch seconds or ISO-8601 text."""
        self._live()
        query = self._check_query(query)
        k = _check_int(k, "k", minimum=1)
        pred = compile_filter(filter)
        scope = self._scope(query, since, until, as_of)
        idx = self._index()
        token = _SCOPE.set(scope)
        try:
            with self._s.lock.read():
                wide = pred is not None or scope.filters
                limit = max(k, 20) if not wide else max(k * 20, self._s.config.retrieval.candidate_limit)
                rows, scores, per, _ = self._rank(idx, query, limit)
                rows, scores = self._exact_first(idx, query, rows, scores)
                return self._hits(idx, rows, scores, per, pred, k, scope)
        finally:
            _SCOPE.reset(token)

    def _scope(self, query: str, since: Any, until: Any, as_of: Any) -> _Scope:
        cfg = self._s.config
        bounds = {}
        for name, value in (("since", since), ("until", until), ("as_of", as_of)):
            bounds[name] = to_epoch(value, name, min_year=cfg.timestamp_min_year, max_year=cfg.timestamp_max_year)
        if bounds["since"] is not None and bounds["until"] is not None and bounds["since"] >= bounds["until"]:
            raise InvalidInput(f"since ({since!r}) must be earlier than until ({until!r})")
        qt = timeexpr.analyze_query(query)
        ordering = cfg.temporal.enabled and cfg.temporal.chronological and qt.ordering
        return _Scope(bounds["since"], bounds["until"], bounds["as_of"], ordering, qt.current)

    @staticmethod
    def _exact_first(idx: NamespaceIndex, query: str, rows: np.ndarray, scores: np.ndarray):
        """A message that contains the whole query verbatim (case-insensitive) is the strongest cue there is:
        such messages move ahead of the rest among the top candidates, keeping their relative order."""
        needle = " ".join(query.split()).casefold()
        if len(needle) < 12 or rows.size < 2:
            return rows, scores
        head = min(rows.size, 20)
        exact = np.array([needle in " ".join(idx.text_of(r).split()).casefold() for r in rows[:head].tolist()])
        if not exact.any() or exact[0] and exact.sum() == 1:
            return rows, scores
        order = np.concatenate([np.flatnonzero(exact), np.flatnonzero(~exact), np.arange(head, rows.size)])
        return rows[order], np.maximum.accumulate(scores[order][::-1])[::-1]

    def _hits(self, idx, rows, scores, per, pred, k, scope: _Scope | None = None) -> list[Hit]:
        ids = idx.ids.view[rows].tolist() if rows.size else []
        meta = self._s.store.rows(self._namespace, ids)
        truth = idx.truth
        as_of = scope.as_of if scope else None
        out: list[Hit] = []
        for r, sc, i in zip(rows.tolist(), scores.tolist(), ids):
            row = meta.get(i)
            if row is None or (pred is not None and not pred(row)):
                continue
            nxt = truth.superseder(r, as_of, scope.until if scope else None, idx.ts.a)
            out.append(self._item(row, idx.text_of(r), Hit, score=float(sc), channels=dict(per.get(r, {})),
                                  event_time=to_datetime(float(truth.event_mid(np.asarray([r]))[0])),
                                  superseded_by=int(idx.ids.a[nxt]) if nxt >= 0 else None,
                                  surprise=round(float(truth.surprise.a[r]), 4),
                                  salience=round(float(truth.salience.a[r]), 4)))
            if len(out) >= k:
                break
        return out

    def recall(self, query: str, *, budget_tokens: int = 2000, filter: dict[str, Any] | None = None,
               include_dormant: bool = False, since: Any = None, until: Any = None, as_of: Any = None) -> Recall:
        """A prompt-ready context for ``query`` of at most ``budget_tokens`` cl100k tokens.

        Whole messages only, grouped by session in time order with speaker and date; a message that dates its
        event relatively ("yesterday") carries the resolved date, and one that a newer statement updated is marked
        "superseded". A query that asks for an order or a progression gets its context laid out by event time.
        ``Recall.messages`` lists what was included. With the hierarchy (``config.hierarchy.recall``), units are
        selected top-down and ``Recall.units`` lists them; dormant memories (seed 004 §8.3) come back only with
        ``include_dormant=True`` or a strong exact cue. ``since`` / ``until`` / ``as_of`` as in :meth:`search`.
        """
        self._live()
        query = self._check_query(query)
        if isinstance(budget_tokens, float) and math.isnan(budget_tokens):
            raise InvalidInput("budget_tokens must be an int, got NaN")
        budget = _check_int(budget_tokens, "budget_tokens", minimum=1)
        pred = compile_filter(filter)
        if not isinstance(include_dormant, bool):
            raise InvalidInput(f"include_dormant must be a bool, got {type(include_dormant).__name__}")
        token = _SCOPE.set(self._scope(query, since, until, as_of))
        try:
            if lifecycle.wants_recall(self):
                return lifecycle.recall(self, query, budget, pred, include_dormant)
            return self._flat_recall(query, budget, pred)
        finally:
            _SCOPE.reset(token)

    def _flat_recall(self, query: str, budget: int, pred) -> Recall:
        idx = self._index()
        t0 = time.perf_counter()
        with self._s.lock.read():
            rows, scores, per, timings = self._rank(idx, query, self._s.config.retrieval.candidate_limit,
                                                    context=True)
            t = time.perf_counter()
            pieces = self._pieces(idx, rows, pred)
            chosen, text, tokens = context.pack(pieces, budget, lambda p: idx.text_of(idx.row_of[p.key]))
            meta = self._s.store.rows(self._namespace, [p.key for p in chosen])
            messages = [self._item(meta[p.key], p.text) for p in context.ordered(chosen) if p.key in meta]
            timings["pack_ms"] = (time.perf_counter() - t) * 1e3
        timings["total_ms"] = (time.perf_counter() - t0) * 1e3
        return Recall(query=query, text=text, tokens=tokens, budget_tokens=budget, messages=messages,
                      timings=timings)

    def _pieces(self, idx: NamespaceIndex, rows: np.ndarray, pred) -> list[context.Piece]:
        """Candidates described from the span table alone; store rows are read only when a filter needs them.

        Within a search / recall call the time scope applies here too (``since`` / ``until`` / ``as_of``), and
        pieces carry their time-and-truth notes: the resolved date of a relatively dated event, and a
        "superseded" mark with the date of the newer statement. For order / progression queries a piece is dated
        by its event time, so the packer groups and orders the context chronologically."""
        scope = _SCOPE.get()
        truth = idx.truth
        tcfg = self._s.config.temporal
        rows = np.asarray(rows, dtype=np.int64)
        if scope is not None and scope.filters and rows.size:
            truth.sync(idx)
            rows = rows[truth_rank.time_filter(truth, rows, scope.since, scope.until, scope.as_of)]
        ids = idx.ids.view[rows].tolist() if rows.size else []
        lengths = idx.doc_lengths()
        meta = self._s.store.rows(self._namespace, ids) if pred is not None else None
        annotate = tcfg.enabled and tcfg.annotate and truth.done >= len(idx)
        chrono = annotate and scope is not None and scope.ordering
        as_of = scope.as_of if scope else None
        out = []
        cols = zip(ids, rows.tolist(), lengths[rows].astype(np.int64).tolist(), idx.speaker.a[rows].tolist(),
                   idx.role.a[rows].tolist(), idx.ts.a[rows].tolist(), idx.session.a[rows].tolist(),
                   idx.seqs.a[rows].tolist())
        speakers, sessions = idx.speakers, idx.sessions
        for i, r, n_tok, spk, role, ts, sess, seq in cols:
            if meta is not None and (i not in meta or not pred(meta[i])):
                continue
            p = context.Piece(key=i, n_tokens=n_tok, speaker=speakers[spk], role=ROLES[role],
                              ts=None if ts != ts else ts, session=sessions[sess], seq=seq)
            if annotate:
                notes = []
                label = truth.label(r)
                same_day = label is not None and ts == ts and label == fmt_day(ts)  # "today": the header says it
                if label is not None and not same_day and not (chrono and truth.gran.a[r] in _DAY_GRANULARITIES):
                    notes.append(label)
                nxt = truth.stale_mark(r, current=scope is not None and scope.current, as_of=as_of,
                                       until=scope.until if scope else None, said=idx.ts.a)
                if nxt >= 0:
                    notes.append("superseded " + fmt_day(float(idx.ts.a[nxt])) if idx.ts.a[nxt] == idx.ts.a[nxt]
                                 else "superseded")
                p.note = "; ".join(notes)
                if chrono:
                    ev = float(truth.event_mid(np.asarray([r]))[0])
                    if ev == ev:
                        p.ts, p.session = ev, None
            out.append(p)
        return out

    # -- statistics, export ---------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Sizes of this namespace's structures and of the whole store, with bytes per stored token."""
        self._live()
        idx = self._index()
        sizes = self._s.store.sizes()
        with self._s.lock.read():
            n_tok = idx.n_tokens
            out = {
                "namespace": self._namespace,
                "messages": len(idx),
                "tokens": n_tok,
                "content_dwm_bytes": idx.content.nbytes,
                "signature_dwm_bytes": idx.signatures.nbytes,
                "span_table_bytes": int(idx.ends.view.nbytes + idx.ids.view.nbytes),
                "store": sizes,
            }
        total_tokens = sum(len(i) and i.n_tokens for i in self._s.indexes.values())
        if total_tokens and self.path is not None:
            out["store_bytes_per_token"] = sizes["file_bytes"] / total_tokens
        if self._s.config.hierarchy.enabled or self._s.config.decay.enabled:
            out["hierarchy"] = lifecycle.stats(self)  # units, reassignments, dormancy
        return out

    def export(self, path: str | os.PathLike) -> int:
        """Write this namespace to a versioned JSONL file (header line, then one message per line)."""
        self._live()
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidInput(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if self.path is not None and os.path.abspath(os.fspath(path)) in {
                os.path.abspath(self.path + suffix) for suffix in ("", "-wal", "-shm", "-journal")}:
            raise InvalidInput(f"path {os.fspath(path)!r} is the store file itself; export to another file")
        idx = self._index()
        n = 0
        tmp = os.fspath(path) + ".tmp"
        with self._s.lock.read():
            try:
                # O_NOFOLLOW + fchmod: a planted symlink or a looser pre-existing file cannot widen access.
                fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
                os.fchmod(fd, 0o600)
            except OSError as exc:
                raise StoreError(f"cannot write the export file at path {os.fspath(path)!r}: "
                                 f"{exc.strerror or exc}") from exc
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps({"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
                                    "namespace": self._namespace}) + "\n")
                for r in self._s.store.scan(self._namespace):
                    pos = idx.row_of.get(r.id)
                    if pos is None:
                        continue
                    f.write(json.dumps({
                        "id": r.id, "text": idx.text_of(pos), "speaker": r.speaker, "role": r.role,
                        "timestamp": r.ts, "session_id": r.session_id, "metadata": r.metadata,
                        "created_at": r.created_at,
                    }, ensure_ascii=False) + "\n")
                    n += 1
        try:
            os.replace(tmp, path)
        except OSError as exc:
            os.unlink(tmp)
            raise StoreError(f"cannot write the export file at path {os.fspath(path)!r}: {exc.strerror or exc}") from exc
        return n

    def import_(self, path: str | os.PathLike) -> int:
        """Add every message of an export file to this namespace (new ids); all or nothing."""
        self._live()
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidInput(f"path must be a str or os.PathLike, got {type(path).__name__}")
        items = []
        try:
            with open(path, encoding="utf-8") as f:
                header = json.loads(f.readline() or "null")
                if not isinstance(header, dict) or header.get("format") != EXPORT_FORMAT:
                    raise CorruptData(f"path {os.fspath(path)!r} is not a hippo export file")
                if header.get("version") != EXPORT_VERSION:
                    raise CorruptData(f"export version {header.get('version')!r} is not supported")
                for lineno, line in enumerate(f, start=2):
                    if not line.strip():
                        continue
                    rec = json.loads(line)
                    if not isinstance(rec, dict):
                        raise CorruptData(f"line {lineno}: expected a JSON object")
                    items.append({k: rec.get(k) for k in ("text", "speaker", "role", "timestamp", "session_id",
                                                            "metadata")})
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            # RecursionError: json refuses nesting deeper than the interpreter's recursion limit
            raise CorruptData(f"path {os.fspath(path)!r} is not valid JSONL: {str(exc)[:200]}") from exc
        except FileNotFoundError as exc:
            raise NotFound(f"path {os.fspath(path)!r} does not exist") from exc
        except IsADirectoryError as exc:
            raise InvalidInput(f"path {os.fspath(path)!r} is a directory, expected an export file") from exc
        except OSError as exc:
            raise StoreError(f"cannot read the export file at path {os.fspath(path)!r}: {exc.strerror or exc}") from exc
        try:
            return len(self.add_many(items))
        except InvalidInput as exc:
            raise CorruptData(f"path {os.fspath(path)!r} holds an invalid message: {exc}") from exc

    # -- async twins ----------------------------------------------------------------------------------------
    async def _run(self, fn, *args, **kwargs):
        return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))

    async def aadd(self, text: str, **kwargs: Any) -> MemoryItem:
        return await self._run(self.add, text, **kwargs)

    async def aadd_many(self, items: Iterable[Mapping[str, Any]]) -> list[MemoryItem]:
        return await self._run(self.add_many, list(items) if not isinstance(items, (str, bytes)) else items)

    async def asearch(self, query: str, **kwargs: Any) -> list[Hit]:
        return await self._run(self.search, query, **kwargs)

    async def arecall(self, query: str, **kwargs: Any) -> Recall:
        return await self._run(self.recall, query, **kwargs)

    async def aget(self, id: int) -> MemoryItem:
        return await self._run(self.get, id)

    async def adelete(self, ids: int | Iterable[int]) -> int:
        return await self._run(self.delete, ids)

    async def aupdate(self, id: int, *, metadata: dict[str, Any]) -> MemoryItem:
        return await self._run(self.update, id, metadata=metadata)

    async def aforget(self, filter: dict[str, Any]) -> int:
        return await self._run(self.forget, filter)

    async def aclear(self) -> int:
        return await self._run(self.clear)

    async def anamespaces(self) -> list[str]:
        return await self._run(self.namespaces)

    async def alist(self, **kwargs: Any) -> list[MemoryItem]:
        return await self._run(self.list, **kwargs)

    async def aread(self, message_id: int, **kwargs: Any) -> list[MemoryItem]:
        return await self._run(self.read, message_id, **kwargs)

    # -- hierarchy, decay and consolidation (hippo.hierarchy) -----------------------------------------------
    def topics(self) -> list[dict[str, Any]]:
        """Topic documents' catalog (seed 003 §3.2): one entry per theme with ``id``, ``title``, ``summary``,
        ``size`` (entries), ``n_messages``, time span and strength; ``id="current"`` lists unconsolidated
        messages."""
        self._live()
        return lifecycle.topics(self)

    def topic(self, topic_id: int | str) -> str:
        """One topic as markdown whose entries carry ``<seq=…, time=…, source=…>``; ``NotFound`` if unknown."""
        self._live()
        return lifecycle.topic(self, topic_id)

    def consolidate(self, level: str = "light") -> dict[str, Any]:
        """Run a consolidation cycle (seed 004 §9): ``"light"`` (strengths, dormancy), ``"deep"`` (flush the
        CURRENT buffer, re-cluster themes, refresh summaries, mark persist-worthy units) or ``"archival"`` (prune
        dormant units past the retention age; messages only where a policy says ``prune``). Returns a report."""
        self._live()
        return lifecycle.consolidate(self, level)

    def strength(self, ids: int | Iterable[int]) -> dict[int, float]:
        """Current strength in [0, 1] of each given message (seed 004 §14.2); unknown ids are left out."""
        self._live()
        return lifecycle.strength(self, ids)

    def reinforce(self, ids: int | Iterable[int]) -> int:
        """Mark messages as used: strength back to 1, decay clock restarted. Returns how many were known."""
        self._live()
        return lifecycle.reinforce(self, ids)

    async def atopics(self) -> list[dict[str, Any]]:
        return await self._run(self.topics)

    async def atopic(self, topic_id: int | str) -> str:
        return await self._run(self.topic, topic_id)

    async def aconsolidate(self, level: str = "light") -> dict[str, Any]:
        return await self._run(self.consolidate, level)

    async def astrength(self, ids: int | Iterable[int]) -> dict[int, float]:
        return await self._run(self.strength, ids)

    async def areinforce(self, ids: int | Iterable[int]) -> int:
        return await self._run(self.reinforce, ids)
