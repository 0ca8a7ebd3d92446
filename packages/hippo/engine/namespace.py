"""The operations of the engine over one namespace: the write path, deletions, reads, search and recall, and the
lifecycle's maintenance. The public facade (:class:`hippo.Memory`) validates arguments and delegates here.

Write path (as in a log-structured store): append to the store in one transaction, then every follower of the
namespace applies the new rows (:meth:`NamespaceState.apply`). Work after the commit never raises: sealing, saving
derived snapshots and LLM refreshes are best effort and retried by later writes.

Reads take the read lock once the namespace state is current; catching up with rows another process appended
takes the write lock briefly, like a replica applying a log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Callable, Iterator

import numpy as np

from hippo.base.errors import CorruptData, HippoError, InvalidInput, NotFound
from hippo.base.types import Hit, MemoryItem, Recall
from hippo.engine import gate as gate_mod
from hippo.engine import maintenance
from hippo.engine import recall as recall_mod
from hippo.engine import topics as topics_mod
from hippo.engine.hierarchy.lazy import get_many
from hippo.engine.items import items as items_of
from hippo.engine.items import make_item
from hippo.engine.lifecycle import Life
from hippo.engine.profiles import ProfileIndex
from hippo.engine.runtime import Runtime
from hippo.engine.scope import Ask, Scope
from hippo.engine.scope import ask as analyze
from hippo.engine.state import NamespaceState
from hippo.index.embedding import encode, line
from hippo.store.base import MessageRow, NewMessage, Replace
from hippo.text import tokenizer

log = logging.getLogger("hippo.engine")

Predicate = Callable[[MessageRow], bool]


def _same_session(sess: np.ndarray, pos: int, count: int, step: int) -> list[int]:
    """Up to ``count`` rows nearest ``pos`` whose session code is that of ``pos``, nearest first: before it for
    ``step`` -1, after it for +1. Scans windows of doubling width, so a session written in one run costs what its
    neighbours cost and a sparse one at most one pass over the namespace."""
    out: list[int] = []
    width = 4 * min(count, len(sess)) + 4
    edge = pos if step < 0 else pos + 1
    while len(out) < count and (edge > 0 if step < 0 else edge < len(sess)):
        lo, hi = (max(0, edge - width), edge) if step < 0 else (edge, min(len(sess), edge + width))
        hits = np.flatnonzero(sess[lo:hi] == sess[pos]) + lo
        out.extend((hits[::-1] if step < 0 else hits)[: count - len(out)].tolist())
        edge = lo if step < 0 else hi
        width *= 2
    return out


def _after_the_latest(state: NamespaceState, prepared: list[NewMessage]) -> None:
    """Ingestion times that follow the order of the adds: each message's ``created_at`` a microsecond after the
    namespace's latest one at the least. The system clock can step back between two adds (an NTP correction, a
    machine whose clock was set by hand); a message added after it would otherwise read as added before the messages
    that preceded it, and ``as_of`` (the memory as it stood then) and the order of statements without a timestamp
    (which statement supersedes which) would follow the clock instead of the adds. Caller holds the write lock."""
    idx = state.index
    n = len(idx) if idx is not None else 0
    last = float(idx.created.view[n - 1]) if n else None
    for p in prepared:
        if last is not None and not p.created_at > last:
            p.created_at = round(last + 1e-6, 6)
        last = p.created_at


def stored_rows(state: NamespaceState, store: Any) -> Iterator[MessageRow]:
    """The namespace's stored rows in seq order (:meth:`Store.scan`), checked against the co-index once read to the
    end (caller holds the read lock, so no thread of this process applies a change meanwhile). When the store has
    not changed since the state caught up with it and the scan still left out messages the co-index holds, the
    store's own index of the messages is damaged: SQLite walks it without noticing, and a list, an export or a
    forget of everything would answer for part of the namespace as if it were all of it. The same damage can also
    misplace a message: read in another order than the co-index holds them (which is their order)."""
    row_of = state.index.row_of
    found = 0
    last = -1
    for r in store.scan(state.name):
        pos = row_of.get(r.id)
        if pos is not None:
            if pos <= last:
                raise CorruptData(f"namespace {state.name!r}: message {r.id} was read out of its order: the store's "
                                  "index of messages is damaged; `hippo check --repair` rebuilds it")
            last = pos
            found += 1
        yield r
    missing = len(state.index) - found
    if missing > 0 and store.state(state.name) == state.seen:
        raise CorruptData(f"namespace {state.name!r}: reading its messages in order left out {missing} of "
                          f"{len(state.index)}: the store's index of messages is damaged; `hippo check --repair` "
                          "rebuilds it")


class Replacing:
    """The messages a write deletes in its own transaction (:meth:`Namespace.write`): ``ids`` and, when
    ``by_filter``, every message ``pred`` admits instead (read before the write; those another handle adds
    meanwhile judged in its transaction). With ``pred``, a message is deleted only if its row, read in the write's
    transaction, still satisfies it."""

    def __init__(self, ids: list[int] | None = None, pred: Predicate | None = None) -> None:
        self.ids = list(ids or [])
        self.pred = pred
        self.by_filter = ids is None


class Namespace:
    """One namespace of one store, as the engine sees it."""

    def __init__(self, rt: Runtime, name: str) -> None:
        self.rt = rt
        self.name = name

    @property
    def config(self) -> Any:
        return self.rt.config

    def sibling(self, name: str) -> "Namespace":
        return Namespace(self.rt, name)

    def state(self) -> NamespaceState:
        """The namespace's state, caught up with the store."""
        self.rt.live()
        return self.rt.state(self.name).current()

    def ask(self, state: NamespaceState, query: str, scope: Scope, vector: np.ndarray | None = None) -> Ask:
        return analyze(state, self.rt.llm, query, scope, vector)

    # -- writing --------------------------------------------------------------------------------------------
    def version(self) -> int:
        """The number of the namespace's latest change in the store (every append, deletion and metadata update
        takes the next one)."""
        self.rt.live()
        return int(self.rt.store.state(self.name).version)

    def write(self, prepared: list[NewMessage], expect: int | None = None,
              replacing: "Replacing | None" = None) -> list[MemoryItem]:
        """Store messages (all or none), behind the encoding gate when ``config.gate.enabled``: admitted messages
        carry the gate's scores in ``metadata["gate"]``; rejected ones come back as ``RejectedItem``. ``expect``:
        only while the namespace's latest change is still that one (:meth:`version`), else ``Changed`` and
        nothing stored. ``replacing``: messages deleted in the same transaction (:class:`Replacing`). The gate
        judges the new messages without the ones they replace (a new version is not redundant with its old one),
        and when it rejects any of them none is deleted: a message goes only with its new version stored."""
        if not prepared and replacing is None:
            self.rt.live()
            return []
        verdicts = self._gate(prepared, replacing)
        if verdicts is None:
            return self._write(prepared, expect, replacing)
        return self._with_rejected(prepared, verdicts, self._write(
            [p for p, v in zip(prepared, verdicts) if v["admitted"]], expect, _unless_rejected(verdicts, replacing)))

    def _gate(self, prepared: list[NewMessage], replacing: "Replacing | None" = None
              ) -> list[dict[str, Any]] | None:
        """The encoding gate's verdict on each message (also kept in its ``metadata["gate"]``), or None when the
        gate is off or there is nothing to judge. The messages ``replacing`` deletes are not judged against: a new
        version is not redundant with its old one."""
        if not self.config.gate.enabled or not prepared:
            return None
        state = self.state()
        life = state.life() if state.lifecycle_active else None
        with self.rt.lock.read():
            leaving: frozenset[int] = frozenset()
            if replacing is not None:
                leaving = frozenset(r.id for r in stored_rows(state, self.rt.store) if replacing.pred(r)) \
                    if replacing.by_filter else frozenset(replacing.ids)
            verdicts = gate_mod.evaluate(state, life, prepared, leaving)
        for p, v in zip(prepared, verdicts):
            p.metadata["gate"] = v
        return verdicts

    def _with_rejected(self, prepared: list[NewMessage], verdicts: list[dict[str, Any]] | None,
                       stored: list[MemoryItem]) -> list[MemoryItem]:
        """The items of a write in the order of ``prepared``: those stored, and a ``RejectedItem`` for each the gate
        refused."""
        if verdicts is None:
            return stored
        written = iter(stored)
        return [next(written) if v["admitted"] else gate_mod.rejected(p, v, self.name)
                for p, v in zip(prepared, verdicts)]

    def _write(self, prepared: list[NewMessage], expect: int | None = None,
               replacing: "Replacing | None" = None) -> list[MemoryItem]:
        if not prepared and replacing is None:
            return []
        rt = self.rt
        w = self._pending(prepared, expect, replacing)
        with rt.lock.write():
            _after_the_latest(w.state, prepared)
            gone: list[int] = []
            if replacing is not None:
                rows, gone = rt.store.replace(self.name, prepared, w.ids, where=replacing.pred, after_seq=w.after,
                                              codes=w.codes, expect=expect)
            elif expect is None:
                rows = rt.store.append(self.name, prepared, codes=w.codes)
            else:
                rows = rt.store.append(self.name, prepared, codes=w.codes, expect=expect)
            out = self._committed(w, rows, gone)
            if gone:
                rt.store.scrub()
        return out

    def _pending(self, prepared: list[NewMessage], expect: int | None, replacing: "Replacing | None"
                 ) -> "_Pending":
        """What a write of this namespace needs before its transaction: the state caught up, the texts, the
        embedding codes and, for ``replacing``, the ids it deletes (read now, from a filter)."""
        rt = self.rt
        state = self.state()
        texts = [tokenizer.decode(p.tokens) for p in prepared]
        codes = None
        if rt.embed is not None and prepared:
            # Embedded before the append and stored in its transaction: a failing embedding function stores
            # nothing, and no write is left to do once the messages committed.
            lines = [line(p.speaker, p.role, t) for p, t in zip(prepared, texts)]
            codes = encode(rt.hasher, rt.embed(lines), len(lines))
        ids, after = ([], None) if replacing is None else (replacing.ids, None)
        if replacing is not None and replacing.by_filter:
            # the matches among the messages read now; those another handle adds after this read (at seqs from the
            # state's next one) are judged in the write's transaction, as these are again
            with rt.lock.read():
                after = state.seen.next_seq
                ids = [r.id for r in stored_rows(state, rt.store) if replacing.pred(r)]
        return _Pending(self, state, prepared, texts, codes, ids, after, expect, replacing)

    def _committed(self, w: "_Pending", rows: list[MessageRow], gone: list[int]) -> list[MemoryItem]:
        """Bring this namespace's followers up to a write that committed (``rows`` appended, ``gone`` deleted);
        returns the items stored. Caller holds the write lock, and scrubs the store's files when ``gone``."""
        state = w.state
        # From here on the messages are committed: what follows maintains derived, process-local state and must
        # not raise, or a caller that retries would store them twice. A failure invalidates the state, which
        # the next use rebuilds from the store (its snapshots and the change feed).
        try:
            fp = self.rt.store.state(self.name)
            if rows and not gone and state.expects(fp, len(rows)):
                state.apply(rows, w.texts, fp, w.codes)
            else:  # a deletion too, or another process changed the namespace in between: from the feed
                state.catch_up()
            if gone:
                # Derived snapshots may hold text of the deleted messages: rewritten now (see delete)
                state.scrub()
            self._after_write(state)
        except Exception:  # noqa: BLE001 - see above; logged with its traceback
            log.exception("namespace %r: derived state after an add failed; it is rebuilt on next use", self.name)
            state.invalidate()
            if gone:
                state.drop_snapshots()
            self._seal(state, self.config.seal_tokens)
        return [make_item(r, t) for r, t in zip(rows, w.texts)]

    def _after_write(self, state: NamespaceState) -> None:
        """Best-effort work after a committed append: LLM refresh of new episodes, derived snapshots, sealing."""
        life = state.current_life()
        if life is not None:
            closed, life.closed_episodes = life.closed_episodes, []
            if closed and self.config.hierarchy.llm_on_write and self.rt.llm is not None:
                with life.lock:
                    maintenance.llm_refresh(state, life, self.rt.llm, closed)
                    life.dirty += len(closed)
        if state.save_due():
            state.save_derived()
        self._seal(state, self.config.seal_tokens)

    def _seal(self, state: NamespaceState, min_tokens: int) -> None:
        try:
            self.rt.store.seal(self.name, min_tokens)
        except HippoError as exc:
            # The append has committed: a seal that cannot get the lock or the disk space now (or finds damage) is
            # retried by a later write, and the tail stays readable in its rows. Failing here would make callers
            # retry an add that already happened.
            log.warning("namespace %r: sealing the tail is deferred: %s", self.name, exc)

    def update_metadata(self, id: int, metadata: dict[str, Any]) -> MemoryItem:
        state = self.state()
        with self.rt.lock.write():
            if not self.save_metadata(state, id, metadata):
                raise NotFound(f"id {id} is not a message of namespace {self.name!r}")
            self.rt.store.scrub()  # the replaced metadata must not stay behind in the log
        return self.get(id, reinforce=False)

    def save_metadata(self, state: NamespaceState, id: int, metadata: dict[str, Any]) -> bool:
        """Replace a message's metadata in the store and let every follower re-derive what depends on it; False
        when ``id`` is not a message of this namespace. Caller holds the write lock."""
        rt = self.rt
        if not rt.store.update_metadata(self.name, id, metadata):
            return False
        try:  # committed: what follows updates derived state and must not raise (see _write)
            fp = rt.store.state(self.name)
            if fp.version == state.seen.version + 1 and fp.next_seq == state.seen.next_seq \
                    and fp.generation == state.seen.generation and fp.follows(state.seen):
                state.update(list(rt.store.rows(self.name, [id]).values()))
                state.saw(fp)
            else:
                state.catch_up()
        except Exception:  # noqa: BLE001
            log.exception("namespace %r: derived state after a metadata update failed; it is rebuilt on next use",
                          self.name)
            state.invalidate()
        return True

    def delete(self, ids: list[int], pred: Predicate | None = None,
               choose: Callable[[list[MemoryItem]], Any] | None = None) -> int:
        """Delete messages from the store and every follower; unknown ids are ignored, and with ``pred`` so are
        those whose row no longer matches it when the deletion commits. With ``choose``, only the ids it returns
        when given the messages of ``ids`` as they are in the deleting transaction (:meth:`chooser`). Returns how
        many."""
        rt = self.rt
        state = self.state()
        with rt.lock.write():
            before = state.seen
            gone = rt.store.delete(self.name, ids, where=pred,
                                   choose=None if choose is None else self.chooser(state, choose))
            if gone:
                # committed: what follows updates derived state and must not raise (see _write)
                try:
                    fp = rt.store.state(self.name)
                    if fp.generation == before.generation + 1 and fp.next_seq == before.next_seq \
                            and fp.version == before.version + 1 and fp.follows(before):
                        state.remove(gone)
                        state.saw(fp)
                    else:
                        state.catch_up()
                    # Derived snapshots may hold text of the deleted messages (facts, summaries, profiles):
                    # rewritten now, so nothing of them outlives the delete in the store.
                    state.scrub()
                except Exception:  # noqa: BLE001
                    log.exception("namespace %r: derived state after a delete failed; it is rebuilt on next use",
                                  self.name)
                    state.invalidate()
                    state.drop_snapshots()
                rt.store.scrub()  # rewritten snapshots replaced pages too
        return len(gone)

    def chooser(self, state: NamespaceState, choose: Callable[[list[MemoryItem]], Any]
                ) -> Callable[[list[MessageRow]], list[int]]:
        """``choose`` (given messages, returning the ids of those to delete) as the store's deletion calls it: on the
        rows read in the deleting transaction, as messages (their metadata as stored then; the text of one this
        handle has not loaded, added by another process since, is empty). Caller holds the write lock."""

        def on_rows(rows: list[MessageRow]) -> list[int]:
            idx = state.index
            known = [r for r in rows if r.id in idx.row_of]
            texts = dict(zip((r.id for r in known), idx.texts_of([idx.row_of[r.id] for r in known]), strict=True))
            picked = choose([make_item(r, texts.get(r.id, "")) for r in rows])
            if isinstance(picked, (str, bytes, dict)) or not isinstance(picked, Iterable):
                raise InvalidInput(f"choose must return an iterable of message ids, got {type(picked).__name__}")
            picked = list(picked)
            bad = [i for i in picked if isinstance(i, bool) or not isinstance(i, (int, np.integer))]
            if bad:
                raise InvalidInput(f"choose must return message ids (ints), got {bad[0]!r}")
            return [int(i) for i in picked]

        return on_rows

    def forget(self, pred: Predicate | None) -> int:
        """Delete every message that matches ``pred`` (every message when None). The matches are judged again in
        the deleting transaction: a message another process changed after the scan so that it no longer matches
        (its metadata updated) stays."""
        state = self.state()
        with self.rt.lock.read():
            ids = [r.id for r in stored_rows(state, self.rt.store) if pred is None or pred(r)]
        return self.delete(ids, pred)

    def flush(self) -> None:
        self.state()
        with self.rt.lock.write():
            self.rt.store.seal(self.name, 1)

    # -- reading --------------------------------------------------------------------------------------------
    def get(self, id: int, *, reinforce: bool = True) -> MemoryItem:
        state = self.state()
        with self.rt.lock.read():
            got = items_of(state, [id])
        if not got:
            raise NotFound(f"id {id} is not a message of namespace {self.name!r}")
        if reinforce:
            self._reinforce(state, [id])  # explicit retrieval reinforces (seed 004 §4.1)
        return got[0]

    def count(self) -> int:
        return len(self.state().index)

    def list(self, pred: Predicate | None, limit: int | None, offset: int,
             session: tuple[str | None, bool] | None = None) -> list[MemoryItem]:
        """The messages ``pred`` admits, in seq order, from ``offset``, at most ``limit``. ``session`` (the session id
        the filter requires, and whether the filter is that alone): only that session's rows are read, found in the
        co-index; of a filter naming the session alone, only the rows from ``offset`` to ``limit``."""
        state = self.state()
        out: list[MemoryItem] = []
        skipped = 0
        with self.rt.lock.read():
            idx = state.index
            if session is not None:
                found = idx.rows_of_session(session[0])
                ids = idx.ids.view[found[np.argsort(idx.seqs.view[found], kind="stable")]].tolist()
                if session[1]:  # every row of the session is admitted: the page is known before reading
                    ids = ids[offset:None if limit is None else offset + limit]
                    offset = 0
                got = self.rt.store.rows(self.name, ids)
                rows = [got[i] for i in ids if i in got]
            else:
                rows = stored_rows(state, self.rt.store)
            for r in rows:
                if pred is not None and not pred(r):
                    continue
                if skipped < offset:
                    skipped += 1
                    continue
                if limit is not None and len(out) >= limit:
                    break
                pos = idx.row_of.get(r.id)
                if pos is not None:
                    out.append(make_item(r, idx.text_of(pos)))
        return out

    def read(self, message_id: int, before: int, after: int) -> list[MemoryItem]:
        """A message with up to ``before`` / ``after`` neighbours from the same session, in order."""
        state = self.state()
        with self.rt.lock.read():
            idx = state.index
            pos = idx.row_of.get(message_id)
            if pos is None:
                raise NotFound(f"id {message_id} is not a message of namespace {self.name!r}")
            sess = idx.session.view
            # The session's own previous and next messages, skipping other sessions' written between them (two
            # threads of one user kept in turns): stopping at the first foreign message would show none.
            rows = _same_session(sess, pos, before, -1)[::-1] + [pos] + _same_session(sess, pos, after, 1)
            return items_of(state, idx.ids.view[rows].tolist())

    def episode(self, message_id: int) -> list[MemoryItem]:
        """The messages of the episode that holds ``message_id``, in order: the episode the hierarchy cut it into
        (seed 004 §3, level 1), or, while the message waits in the CURRENT buffer, the open one: the buffered
        messages of its session in its flush unit (what the next consolidation cuts its episode from)."""
        state, life = self._life()
        with self.rt.lock.read():
            if message_id not in state.index.row_of:
                raise NotFound(f"id {message_id} is not a message of namespace {self.name!r}")
        if life is None or life.hier is None:
            raise NotFound("the hierarchy is disabled (config.hierarchy.enabled=False): messages have no episodes")
        with self.rt.lock.read(), life.lock:
            h = life.hier
            e = h.episodes.get(get_many(h.msg_episode, [message_id], -1)[0])
            if e is not None:
                ids = list(e.message_ids)
            else:
                buf = h.buffer
                k = next((j for j, b in enumerate(buf) if b.id == message_id), None)
                if k is None:
                    ids = [message_id]
                else:
                    start = max((j for j in range(k) if buf[j].closes), default=-1) + 1
                    end = next((j + 1 for j in range(k, len(buf)) if buf[j].closes), len(buf))
                    ids = [b.id for b in buf[start:end] if b.session == buf[k].session]
            row_of = state.index.row_of
            return items_of(state, sorted((i for i in ids if i in row_of), key=row_of.__getitem__))

    def records(self) -> Iterator[dict[str, Any]]:
        """Every message as an export record, in insertion order (the read lock is held while iterating); the texts
        are read from the Content DWM :data:`_RECORD_BATCH` messages at a time."""
        state = self.state()
        with self.rt.lock.read():
            idx = state.index
            batch: list[tuple[Any, int]] = []
            for r in stored_rows(state, self.rt.store):
                pos = idx.row_of.get(r.id)
                if pos is not None:
                    batch.append((r, pos))
                if len(batch) >= _RECORD_BATCH:
                    yield from _records(idx, batch)
                    batch = []
            yield from _records(idx, batch)

    # -- search and recall ----------------------------------------------------------------------------------
    def search(self, query: str, k: int, pred: Predicate | None, scope: Scope, vector: np.ndarray | None = None
               ) -> list[Hit]:
        state = self.state()
        a = self.ask(state, query, scope, vector)
        with self.rt.lock.read():
            return recall_mod.search(state, a, k, pred)

    def recall(self, query: str, budget: int, pred: Predicate | None, scope: Scope, include_dormant: bool,
               vector: np.ndarray | None = None, excluded: frozenset[int] = frozenset()) -> Recall:
        self.rt.live()
        state = self.rt.state(self.name).current(with_life=recall_mod.uses_lifecycle(self.config))
        a = self.ask(state, query, scope, vector)
        # while the lifecycle is rebuilt in the background, the flat engine answers
        life = state.life(wait=False) if recall_mod.uses_lifecycle(self.config) else None
        with self.rt.lock.read():
            return recall_mod.recall(state, life, a, budget, pred, include_dormant, self.rt.llm, excluded)

    def pack_ids(self, query: str, ids: list[int], budget: int, pred: Predicate | None) -> Recall:
        """The given messages packed in the given order into ``budget`` tokens, laid out like :meth:`recall`; a line
        shows the message given, not a newer near-duplicate of it (the caller chose it)."""
        state = self.state()
        with self.rt.lock.read():
            idx = state.index
            rows = np.asarray([idx.row_of[i] for i in ids if i in idx.row_of], dtype=np.int64)
            return recall_mod.pack_rows(state, query, rows, budget, pred, None, newest=False)

    # -- lifecycle ------------------------------------------------------------------------------------------
    def _life(self) -> tuple[NamespaceState, Life | None]:
        state = self.state()
        return state, (state.life() if state.lifecycle_active else None)

    def _reinforce(self, state: NamespaceState, ids: list[int]) -> None:
        if not self.config.decay.enabled or not ids:
            return
        # loaded when not yet (the first call after an open): an access made before is an access all the same; None
        # only while a rebuild runs in the background, as for recall
        life = state.life(wait=False)
        if life is not None:
            life.reinforce(ids)

    def topics(self) -> list[dict[str, Any]]:
        state, life = self._life()
        if life is None:
            return []
        with self.rt.lock.read():
            return topics_mod.topics(state, life)

    def topic(self, topic_id: Any) -> str:
        state, life = self._life()
        if life is None or life.hier is None:
            raise NotFound("the hierarchy is disabled (config.hierarchy.enabled=False): there are no topics")
        with self.rt.lock.read():
            return topics_mod.topic(state, life, topic_id)

    def consolidate(self, level: str) -> dict[str, Any]:
        """A consolidation cycle (seed 004 §9): the explicit maintenance call that changes derived state."""
        state, life = self._life()
        if life is None:
            return {"level": level}
        doomed: list[int] = []
        with self.rt.lock.write():
            with life.lock:
                # a call that raised half-way (an interrupt, memory running out, an LLM client's error) leaves the
                # lifecycle as it was: the units are rebuilt on a copy of the state the call started from
                changes = level != "light" or (life.hier is not None and life.hier.ready > 0)
                undo = life.checkpoint() if changes else None
                fallbacks = state.llm_fallbacks
                try:
                    life.consolidate_ready(partial=True)  # every complete flush unit, not only whole batches
                    if level == "light":
                        return maintenance.light(life)
                    if level == "deep":
                        out = maintenance.deep(state, life, self.rt.llm)
                    else:
                        out, doomed = maintenance.archival(life)
                except BaseException:
                    if undo is not None:
                        life.restore(undo)
                        state.llm_fallbacks = fallbacks
                    raise
            if doomed:
                before = self.rt.store.state(self.name)
                try:
                    out["deleted_messages"] = self.delete(doomed)
                except BaseException:
                    try:
                        kept = self.rt.store.state(self.name) == before  # the deletion did not commit
                    except Exception:  # noqa: BLE001
                        kept = False
                    if kept:
                        with life.lock:
                            life.restore(undo)
                    raise
        undo = None  # the copy is as large as the lifecycle: not held through the save
        with self.rt.lock.write():
            life.dirty += 1  # consolidation rewrote units: the next save writes the whole lifecycle
            state.save_derived()
        return out

    def strength(self, ids: list[int]) -> dict[int, float]:
        if not self.config.decay.enabled:
            idx = self.state().index
            return {i: 1.0 for i in ids if i in idx.row_of}
        state, life = self._life()
        with life.lock:
            values = life.message_strength(ids)
            return {i: float(v) for i, v, sl in zip(ids, values.tolist(), life.decay.slots(ids).tolist()) if sl >= 0}

    def reinforce(self, ids: list[int]) -> int:
        state, life = self._life()
        if life is None:  # neither decay nor the hierarchy: nothing records a use, but the messages are known
            with self.rt.lock.read():
                row_of = state.index.row_of
                return len({i for i in ids if i in row_of})
        known = list(dict.fromkeys(i for i in ids if i in life.decay))  # how many messages, not how many ids
        if known:
            life.reinforce(known)
        return len(known)

    def lifecycle_stats(self) -> dict[str, Any]:
        state, life = self._life()
        out: dict[str, Any] = {}
        if life is None:
            return out
        turn, at = life.clock()
        with life.lock:
            if life.hier is not None:
                out.update(life.hier.stats())
            slots = life.decay.live_slots()
            if slots.size:
                s = life.strengths(life.decay, slots, turn, at)
                out["dormant_messages"] = int((s < life.dcfg.dormant_threshold * life.reference(at)).sum())
                out["mean_strength"] = float(s.mean())
            out["llm_fallbacks"] = state.llm_fallbacks
            out["consolidation_seconds"] = round(life.consolidation_s, 4)
        return out

    # -- profiles -------------------------------------------------------------------------------------------
    def profiles(self) -> tuple[NamespaceState, ProfileIndex]:
        """The speaker profiles of every message, for a question about the speakers themselves (never the empty
        stand-in the ranker uses while a long history's profiles are rebuilt in the background)."""
        state = self.state()
        with self.rt.lock.read():
            return state, state.profiles(complete=True)

    # -- statistics -----------------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        state = self.state()
        rt = self.rt
        sizes = rt.store.sizes()
        with rt.lock.read():
            idx = state.index
            out: dict[str, Any] = {
                "namespace": self.name,
                "messages": len(idx),
                "tokens": idx.n_tokens,
                "content_dwm_bytes": idx.content.nbytes,
                "signature_dwm_bytes": idx.signature_bytes,
                "span_table_bytes": int(idx.ends.view.nbytes + idx.ids.view.nbytes),
                "store": sizes,
            }
        # the file holds every namespace: its bytes per token are over all of them, loaded in this process or not
        if sizes.get("tokens") and rt.store.path is not None:
            out["store_bytes_per_token"] = sizes["file_bytes"] / sizes["tokens"]
        if self.config.hierarchy.enabled or self.config.decay.enabled:
            out["hierarchy"] = self.lifecycle_stats()  # units, reassignments, dormancy
        return out


class _Pending:
    """One namespace's write, ready for its transaction (:meth:`Namespace._pending`)."""

    def __init__(self, ns: Namespace, state: NamespaceState, prepared: list[NewMessage], texts: list[str],
                 codes: Any, ids: list[int], after: int | None, expect: int | None,
                 replacing: Replacing | None) -> None:
        self.ns, self.state, self.prepared, self.texts, self.codes = ns, state, prepared, texts, codes
        self.ids, self.after, self.expect, self.replacing = ids, after, expect, replacing

    def part(self, updates: dict[int, dict[str, Any]] | None = None) -> Replace:
        pred = None if self.replacing is None else self.replacing.pred
        return Replace(self.ns.name, self.prepared, self.ids, where=pred, after_seq=self.after, codes=self.codes,
                       expect=self.expect, updates=updates)


def _unless_rejected(verdicts: list[dict[str, Any]] | None, replacing: Replacing | None) -> Replacing | None:
    """``replacing``, or None when the gate rejected any of the new messages: which of the old ones a rejected message
    was to replace is not known, so every one stays (a message is deleted only with its new version stored)."""
    if verdicts is None or all(v["admitted"] for v in verdicts):
        return replacing
    return None


def write_many(rt: Runtime, writes: list[tuple[Namespace, list[NewMessage], int | None, Replacing | None]],
               updates: dict[str, dict[int, dict[str, Any]]] | None = None) -> list[list[MemoryItem]]:
    """:meth:`Namespace.write` of several namespaces (each once) in one transaction of the store: every namespace's
    messages stored and the messages they replace deleted, or (it raised) nothing of any. ``updates``: per
    namespace of ``writes``, messages whose metadata is replaced in the same transaction (message id -> metadata).
    Returns each namespace's items, in the order of ``writes``. A failure before the commit changes no namespace's
    followers; after it, each namespace's followers are brought up to it as a write of that namespace alone brings
    them."""
    rt.live()
    gated = [(ns, ns._gate(prepared, replacing), prepared, expect, replacing)
             for ns, prepared, expect, replacing in writes]
    pending = [ns._pending(prepared if verdicts is None else [p for p, v in zip(prepared, verdicts) if v["admitted"]],
                           expect, _unless_rejected(verdicts, replacing))
               for ns, verdicts, prepared, expect, replacing in gated]
    with rt.lock.write():
        for w in pending:
            _after_the_latest(w.state, w.prepared)
        done = rt.store.replace_many([w.part((updates or {}).get(w.ns.name)) for w in pending])
        out = [ns._with_rejected(prepared, verdicts, w.ns._committed(w, rows, gone))
               for (ns, verdicts, prepared, _, _), w, (rows, gone) in zip(gated, pending, done)]
        if any(gone for _, gone in done):
            rt.store.scrub()
    return out


def delete_namespace(rt: Runtime, name: str) -> int:
    """Remove a whole namespace (messages, chunks, codes, units) and its process-local followers."""
    return delete_namespaces(rt, [name])


def delete_namespaces(rt: Runtime, names: list[str]) -> int:
    """Remove several whole namespaces in one transaction of the store (all or none) and their process-local
    followers; returns how many messages they held."""
    with rt.lock.write():
        n = rt.store.delete_namespaces(names)
        for name in names:
            rt.drop(name)
    return n


_RECORD_BATCH = 256  # export records whose texts are read in one call


def _records(idx: Any, batch: list[tuple[Any, int]]) -> Iterator[dict[str, Any]]:
    """The export records of ``batch`` (store rows with their co-index rows), their texts read in one call."""
    for (r, _), text in zip(batch, idx.texts_of([pos for _, pos in batch])):
        rec = {"id": r.id, "text": text, "speaker": r.speaker, "role": r.role, "timestamp": r.ts,
               "session_id": r.session_id, "metadata": r.metadata, "created_at": r.created_at}
        if r.utc_offset is not None:  # the timestamp's offset from UTC, kept when it was given
            rec["utc_offset"] = r.utc_offset
        yield rec
