"""Per-namespace lifecycle state behind :class:`hippo.Memory`: the hierarchy, strength records, policies.

:class:`hippo.Memory` calls the hook functions of this module (``on_add``, ``on_delete``, ``on_access``,
``recall``, ``on_close``...). State is process-local and rebuildable: it follows the namespace's co-index (new rows
are replayed, rows gone elsewhere are dropped) and is snapshotted into the store's ``units`` table so a reopened
store does not replay everything. Strength records hold the only state messages cannot rebuild (accesses).
"""

from __future__ import annotations

import logging
import math
import threading
import time
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from hippo import tokenizer
from hippo.errors import CorruptData, HippoError, LLMError
from hippo.hierarchy import decay as decay_mod
from hippo.hierarchy import snapshot
from hippo.hierarchy.decay import F_ASSOC, F_PERSIST, DecayTable
from hippo.hierarchy.policies import Entry, Outcome, compile_policies
from hippo.hierarchy.state import Hierarchy, Msg, fingerprint
from hippo.nsstate import NamespaceStates

if TYPE_CHECKING:  # pragma: no cover
    from hippo.coindex import NamespaceIndex
    from hippo.memory import Memory

log = logging.getLogger("hippo.lifecycle")

UNIT_LEVELS = ("episode", "semantic", "theme")
_PRIORITY_ORDER = {"critical": 0, "high": 1, "normal": 2, "low": 3}

_lives: NamespaceStates[Life] = NamespaceStates()


class Life:
    """Lifecycle state of one namespace of one store."""

    def __init__(self, shared: Any, namespace: str) -> None:
        cfg = shared.config
        self.namespace = namespace
        self.hcfg = cfg.hierarchy
        self.dcfg = cfg.decay
        self.gcfg = cfg.gate
        self.lock = threading.RLock()
        self.shared = weakref.ref(shared)
        self._ext_pos: dict[int, int] = {}
        self.hier: Hierarchy | None = self._new_hierarchy()
        self.decay = DecayTable()
        self.units = {level: DecayTable() for level in UNIT_LEVELS}
        self.policies = compile_policies(self.dcfg.policies)
        self.loaded = False
        self.generation: int | None = None
        self.turn = 0                 # next seq of the namespace: one added message is one turn
        self.last_add_time = 0.0
        self.dirty = 0
        self.prunable: set[int] = set()
        self.persistable = shared.store.path is not None
        self.keyword_cache: OrderedDict[str, list[str] | None] = OrderedDict()
        self.llm_fallbacks = 0
        self.term_cache: dict[int, frozenset[str]] = {}
        self.consolidation_s = 0.0    # time spent turning the CURRENT buffer into units

    def _new_hierarchy(self) -> Hierarchy | None:
        if not self.hcfg.enabled:
            return None
        h = Hierarchy(self.hcfg)
        shared = self.shared()
        if shared is not None and shared.embed is not None and shared.config.embed_bits == self.hcfg.code_bits:
            h.external_codes = self._embedding_codes
        return h

    def _embedding_codes(self, ids: list[int]) -> np.ndarray | None:
        """SimHash codes of the user embeddings of these messages (as the engine stored them), or None."""
        shared = self.shared()
        entry = shared.codes.get(self.namespace) if shared is not None else None
        if entry is None:
            return None
        index, owners = entry
        if len(self._ext_pos) != len(owners):
            self._ext_pos = {int(i): k for k, i in enumerate(owners)}
        pos = [self._ext_pos.get(int(i)) for i in ids]
        if not ids or any(p is None for p in pos):
            return None
        raw = np.ascontiguousarray(index.get(np.asarray(pos, dtype=np.int64)))
        return raw.view(np.uint64).reshape(len(ids), -1)

    # -- message records ------------------------------------------------------------------------------------
    def _policy(self, entry: Entry) -> Outcome:
        return self.policies.evaluate(entry) if len(self.policies) else Outcome()

    def _record_message(self, m: Msg, metadata: dict, created_at: float) -> None:
        d = self.dcfg
        mtype = decay_mod.message_type(m.role, metadata)
        explicit = metadata.get("priority") if metadata.get("priority") in _PRIORITY_ORDER else None
        out = (self._policy(Entry(mtype, tokenizer.decode(np.asarray(m.tokens, dtype=np.uint32)), m.role, m.speaker,
                                  m.session, explicit, metadata, len(m.tokens))) if len(self.policies) else Outcome())
        priority = explicit or out.priority or "normal"
        manual = out.manual if out.manual is not None else metadata.get("encoding") == "manual"
        self.decay.add(
            m.id, type=mtype, priority=priority,
            base_rate=out.decay_rate if out.decay_rate is not None else d.rates[mtype],
            floor=out.floor or 0.0, manual=bool(manual), persist=bool(out.persist), turn=m.seq, at=created_at,
            expires_turn=m.seq + out.expires_after_turns if out.expires_after_turns is not None else -1,
            expires_time=created_at + out.expires_after_seconds if out.expires_after_seconds is not None
            else math.nan,
        )
        if out.prune:
            self.prunable.add(m.id)
        assoc = metadata.get("associations")
        if isinstance(assoc, list) and assoc:
            slots = self.decay.slots(a for a in assoc if isinstance(a, int) and not isinstance(a, bool))
            slots = slots[slots >= 0]
            if slots.size and (self.decay.strength(slots, d, self.turn, created_at) >= 0.5).any():
                self.decay.set_flag(self.decay.slots([m.id]), F_ASSOC)
        self.turn = max(self.turn, m.seq + 1)
        self.last_add_time = max(self.last_add_time, created_at)

    def _record_units(self, at: float | None = None, units: list[tuple[str, int]] | None = None) -> None:
        """Strength records of new units: created when their newest message was (so a reload derives the same
        record), priority of their most important message, policies matched on their text."""
        if self.hier is None:
            return
        h = self.hier
        for level, uid in (h.drain_created() if units is None else units):
            if level == "episode":
                e = h.episodes.get(uid)
                mids, text = (e.message_ids, e.summary) if e else ([], "")
            elif level == "semantic":
                s = h.semantics.get(uid)
                mids, text = (s.message_ids, s.text) if s else ([], "")
            else:
                alive = uid < h.themes.codes.n and h.themes.codes.alive[uid]
                mids, text = (h.theme_messages(uid) if alive else []), ""
            slots = self.decay.slots(mids)
            slots = slots[slots >= 0]
            prio, turn, when = "normal", self.turn, at if at is not None else self.last_add_time
            if slots.size:
                prio = decay_mod.PRIORITIES[int(self.decay.priority[slots].min())]
                turn = int(self.decay.created_turn[slots].max())
                when = float(self.decay.created_time[slots].max())
            out = self._policy(Entry(level, text, priority=prio)) if text and len(self.policies) else Outcome()
            self.units[level].add(
                uid, type=level, priority=out.priority or prio,
                base_rate=out.decay_rate if out.decay_rate is not None else self.dcfg.rates[level],
                floor=out.floor or 0.0, manual=bool(out.manual), persist=bool(out.persist), turn=turn, at=when)

    # -- following the co-index -----------------------------------------------------------------------------
    def add_messages(self, msgs: list[Msg], metadata: dict[int, dict], created: dict[int, float]) -> None:
        for m in msgs:
            self._record_message(m, metadata.get(m.id, {}), created.get(m.id, decay_mod.now()))
        if self.hier is not None:
            self.hier.add(msgs)
            if self.hcfg.consolidate_on_add or self.hier.ready_messages >= self.hcfg.max_pending:
                self.consolidate_ready()
        self.dirty += len(msgs)

    def consolidate_ready(self, final: bool = False, partial: bool = False, max_batches: int | None = None
                          ) -> list:
        """Build units from the complete flush units of the CURRENT buffer (see :meth:`Hierarchy.consolidate`)."""
        h = self.hier
        if h is None or not ((h.ready and (partial or h.ready_batches)) or (final and h.buffer)):
            return []
        t0 = time.perf_counter()
        closed = self.hier.consolidate(final=final, partial=partial, max_batches=max_batches)
        self._record_units()
        self.dirty += 1
        self.consolidation_s += time.perf_counter() - t0
        shared = self.shared()
        if closed and self.hcfg.llm_on_write and shared is not None and shared.llm is not None:
            from hippo import llm as llm_mod
            from hippo.hierarchy import consolidate as cons

            cons._llm_refresh(self, _View(shared, self.namespace), llm_mod.as_llm(shared.llm),
                              [e.id for e in closed])
        return closed

    def remove_messages(self, ids: Iterable[int]) -> None:
        ids = [int(i) for i in ids]
        for i in ids:
            self.term_cache.pop(i, None)
        self.decay.drop(ids)
        self.prunable.difference_update(ids)
        if self.hier is not None:
            before = (set(self.hier.episodes), set(self.hier.semantics), set(self.hier.themes.live().tolist()))
            self.hier.remove_messages(ids)
            after = (set(self.hier.episodes), set(self.hier.semantics), set(self.hier.themes.live().tolist()))
            for level, b, a in zip(UNIT_LEVELS, before, after):
                self.units[level].drop(b - a)
            self._record_units(decay_mod.now())
        self.dirty += len(ids)

    def known(self) -> int:
        return len(self.decay)

    def sync(self, mem: "Memory", idx: "NamespaceIndex", rows: list | None = None) -> None:
        """Make this state cover exactly the messages of ``idx``; ``rows`` are rows just appended (fast path)."""
        state = idx.state
        if not self.loaded:
            self._load(mem, idx)
        if rows is not None and self.generation == state.generation and self.known() + len(rows) == len(idx):
            msgs, meta, created = [], {}, {}
            for r in rows:
                if r.id in self.decay:
                    continue
                msgs.append(Msg(r.id, r.seq, r.ts, r.session_id, r.speaker, r.role,
                                r.tokens if r.tokens is not None else idx.tokens_of(idx.row_of[r.id]), r.n_tokens))
                meta[r.id] = r.metadata
                created[r.id] = r.created_at
            self.add_messages(msgs, meta, created)
        elif self.generation != state.generation or self.known() != len(idx):
            self._reconcile(mem, idx)
        self.generation = state.generation
        if self.persistable and self.dirty >= self.hcfg.persist_every:
            self.save(mem)

    def _reconcile(self, mem: "Memory", idx: "NamespaceIndex") -> None:
        live = set(idx.row_of)
        known = set(self.decay.slot_of)
        gone = known - live
        if gone:
            self.remove_messages(gone)
        new_rows = [r for r in range(len(idx)) if int(idx.ids.a[r]) not in known]
        if new_rows:
            self._replay(mem, idx, new_rows)

    def _msgs(self, mem: "Memory", idx: "NamespaceIndex", positions: list[int]) -> tuple[list[Msg], dict, dict]:
        ids = [int(idx.ids.a[r]) for r in positions]
        meta_rows = mem._s.store.rows(mem.namespace, ids)
        msgs, meta, created = [], {}, {}
        for r, i in zip(positions, ids):
            row = meta_rows.get(i)
            if row is None:
                continue
            msgs.append(Msg(i, row.seq, row.ts, row.session_id, row.speaker, row.role, idx.tokens_of(r), row.n_tokens))
            meta[i] = row.metadata
            created[i] = row.created_at
        msgs.sort(key=lambda m: m.seq)
        return msgs, meta, created

    def _replay(self, mem: "Memory", idx: "NamespaceIndex", positions: list[int], chunk: int = 2048) -> None:
        for k in range(0, len(positions), chunk):
            msgs, meta, created = self._msgs(mem, idx, positions[k : k + chunk])
            self.add_messages(msgs, meta, created)

    # -- snapshots ------------------------------------------------------------------------------------------
    def _load(self, mem: "Memory", idx: "NamespaceIndex") -> None:
        """Start from the store: strength records are derived from the messages (plus the saved accesses), the
        hierarchy from its snapshot (codes replayed from the token ids) or, failing that, from the messages."""
        self.loaded = True
        self.generation = idx.state.generation
        if not self.persistable or not len(idx):
            return
        store = mem._s.store
        msgs, meta_rows, created = self._msgs(mem, idx, list(range(len(idx))))
        for m in msgs:
            self._record_message(m, meta_rows.get(m.id, {}), created.get(m.id, 0.0))
        saved: tuple | None = None
        try:
            blob = store.get_units(self.namespace, "decay")
            if blob is not None:
                saved = snapshot.load(blob)
            blob = store.get_units(self.namespace, "hierarchy") if self.hier is not None else None
            if blob is not None:
                hmeta, harrays = snapshot.load(blob)
                if hmeta.get("fingerprint") != fingerprint(self.hcfg):
                    raise CorruptData("hierarchy snapshot was built with other settings")
                fresh = self._new_hierarchy()
                self.hier = Hierarchy.from_snapshot(self.hcfg, hmeta, harrays, msgs, fresh.external_codes)
                self._record_units(units=[("episode", e) for e in self.hier.episodes]
                                   + [("semantic", x) for x in self.hier.semantics]
                                   + [("theme", t) for t in self.hier.themes.live().tolist()])
        except (CorruptData, KeyError, ValueError, TypeError, IndexError) as exc:
            log.warning("rebuilding the hierarchy of namespace %r from its messages: %s", self.namespace, exc)
            self.hier = self._new_hierarchy()
            self.units = {level: DecayTable() for level in UNIT_LEVELS}
        if self.hier is not None and self.hier.last_seq < 0:
            self.hier.add(msgs)  # no snapshot: everything waits in the CURRENT buffer, consolidated on demand
        elif self.hier is not None:
            self.hier.add([m for m in msgs if m.seq > self.hier.last_seq])
        if saved is not None:
            self._apply_saved(*saved)
        self.dirty = 0

    def _apply_saved(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        """Accesses, reinforcements and promotions recorded in the strength snapshot."""
        for name, table in [("msg", self.decay), *self.units.items()]:
            keys = arrays.get(f"{name}.key")
            if keys is None:
                continue
            slots = table.slots(keys.tolist())
            ok = slots >= 0
            s = slots[ok]
            for col in ("s0", "last_turn", "last_time", "accesses", "flags", "base_rate"):
                getattr(table, col)[s] = arrays[f"{name}.{col}"][ok]
        self.turn = max(self.turn, int(meta.get("turn", 0)))
        self.last_add_time = max(self.last_add_time, float(meta.get("last_add_time", 0.0)))

    def _reset(self) -> None:
        self.hier = self._new_hierarchy()
        self.decay = DecayTable()
        self.units = {level: DecayTable() for level in UNIT_LEVELS}
        self.prunable = set()
        self.turn = 0
        self.dirty = 0

    def save(self, mem: "Memory") -> None:
        """Persist what messages cannot rebuild cheaply: accessed strength records (sparse) and the hierarchy's
        structure (see :meth:`Hierarchy.to_snapshot`)."""
        if not self.persistable:
            return
        store = mem._s.store
        arrays: dict[str, np.ndarray] = {}
        for name, table in [("msg", self.decay), *self.units.items()]:
            live = table.live_slots()
            touched = live[(table.accesses[live] > 0) | (table.flags[live] != 0) | (table.s0[live] != 1.0)]
            arrays[f"{name}.key"] = table.key[touched]
            for col in ("s0", "last_turn", "last_time", "accesses", "flags", "base_rate"):
                arrays[f"{name}.{col}"] = getattr(table, col)[touched]
        meta = {"turn": self.turn, "last_add_time": self.last_add_time}
        store.put_units(self.namespace, "decay", snapshot.dump(meta, arrays))
        if self.hier is not None:
            hmeta, harrays = self.hier.to_snapshot()
            store.put_units(self.namespace, "hierarchy", snapshot.dump(hmeta, harrays))
        self.dirty = 0

    # -- strengths ------------------------------------------------------------------------------------------
    def clock(self) -> tuple[int, float]:
        return self.turn, decay_mod.now()

    def reference(self, at: float) -> float:
        return decay_mod.reference_strength(self.dcfg, self.last_add_time or at, at)

    def message_strength(self, ids: Iterable[int]) -> np.ndarray:
        turn, at = self.clock()
        return self.decay.strength(self.decay.slots(ids), self.dcfg, turn, at)

    def unit_strength(self, level: str, ids: Iterable[int]) -> np.ndarray:
        turn, at = self.clock()
        table = self.units[level]
        return table.strength(table.slots(ids), self.dcfg, turn, at)

    def reinforce(self, message_ids: Iterable[int], units: dict[str, Iterable[int]] | None = None) -> None:
        turn, at = self.clock()
        with self.lock:
            mids = list(message_ids)
            self.decay.reinforce(self.decay.slots(mids), turn, at)
            if self.hier is not None:
                # entries connected to a just-used one decay more slowly (seed 004 §8.2, association x0.7)
                sib = [m for mid in mids for m in self.hier.episodes.get(self.hier.msg_episode.get(mid, -1),
                                                                          _NO_EPISODE).message_ids]
                self.decay.set_flag(self.decay.slots(sib), F_ASSOC)
            for level, ids in (units or {}).items():
                table = self.units[level]
                table.reinforce(table.slots(ids), turn, at)
            self.dirty += 1


class _NoEpisode:
    message_ids: list[int] = []


_NO_EPISODE = _NoEpisode()


def life_of(mem: "Memory") -> Life:
    shared = mem._s
    return _lives.get(shared, mem.namespace, lambda: Life(shared, mem.namespace))


def _active(mem: "Memory") -> bool:
    cfg = mem._s.config
    return cfg.hierarchy.enabled or cfg.decay.enabled


# -- hooks called by hippo.Memory ---------------------------------------------------------------------------
def on_add(mem: "Memory", idx: "NamespaceIndex", rows: list) -> None:
    """After rows were appended to the co-index (inside the store's write lock)."""
    if not _active(mem) or not rows:
        return
    life = life_of(mem)
    with life.lock:
        life.sync(mem, idx, rows)


def ensure(mem: "Memory", consolidated: bool = False, partial: bool = False, max_batches: int | None = None
           ) -> Life:
    """The namespace's lifecycle state, synchronized with its co-index (lock order: store lock, then state);
    with ``consolidated``, complete batches of flush units in the CURRENT buffer are turned into units first
    (with ``partial`` every complete flush unit: reads that show the structure itself)."""
    idx = mem._index()
    life = life_of(mem)
    h = life.hier
    if (life.loaded and life.generation == idx.state.generation and life.known() == len(idx)
            and not (consolidated and h is not None and h.ready and (partial or h.ready_batches))):
        return life
    with mem._s.lock.write():
        idx = mem._s.indexes.get(mem.namespace) or idx
        with life.lock:
            life.sync(mem, idx)
            if consolidated:
                life.consolidate_ready(partial=partial, max_batches=max_batches)
    return life


def on_delete(mem: "Memory", ids: list[int]) -> None:
    if not _active(mem) or not ids:
        return
    life = life_of(mem)
    with life.lock:
        if life.loaded:
            life.remove_messages(ids)


def on_drop_namespace(shared: Any, namespace: str) -> None:
    _lives.drop(shared, namespace)


def on_access(mem: "Memory", ids: list[int]) -> None:
    if not mem._s.config.decay.enabled or not ids:
        return
    life = life_of(mem)
    if life.loaded:
        life.reinforce(ids)


def on_close(shared: Any) -> None:
    """Save every namespace's state (called by ``Memory.close`` before the store closes)."""
    for ns, life in _lives.all(shared).items():
        if life.loaded and life.persistable and life.dirty:
            try:
                with life.lock:
                    life.save(_View(shared, ns))
            except HippoError as exc:  # derived state: it will be rebuilt from the messages
                log.warning("could not save lifecycle state of %r: %s", ns, exc)


class _View:
    """Enough of a Memory for :meth:`Life.save`."""

    def __init__(self, shared: Any, namespace: str) -> None:
        self._s = shared
        self.namespace = namespace


def wants_recall(mem: "Memory") -> bool:
    """Whether ``Memory.recall`` goes through the hierarchy / decay path instead of the flat packer."""
    cfg = mem._s.config
    return cfg.hierarchy.recall == "evidence" or (cfg.hierarchy.enabled and cfg.hierarchy.recall != "flat") \
        or cfg.decay.enabled


def recall(mem: "Memory", query: str, budget: int, pred, include_dormant: bool = False):
    from hippo.hierarchy import topdown

    cfg = mem._s.config.hierarchy
    # the evidence packer reads the engine's candidates only: no consolidation on the read path
    life = ensure(mem, consolidated=cfg.enabled and cfg.recall not in ("flat", "evidence"),
                  max_batches=cfg.read_batches)
    return topdown.recall(mem, life, query, budget, pred, include_dormant)


def keywords(mem: "Memory", query: str) -> list[str] | None:
    """Query keywords from the configured LLM (issue 3, item 3), or None to use the offline extractor."""
    s = mem._s
    if s.llm is None or not s.config.hierarchy.llm_keywords:
        return None
    from hippo import llm as llm_mod

    client = llm_mod.as_llm(s.llm)
    life = life_of(mem)
    with life.lock:
        if query in life.keyword_cache:
            life.keyword_cache.move_to_end(query)
            return life.keyword_cache[query]
    try:
        words = client.keywords(query)
    except LLMError as exc:
        log.warning("LLM keyword extraction failed, using the offline extractor: %s", exc)
        words = None
        life.llm_fallbacks += 1
    with life.lock:
        life.keyword_cache[query] = words
        while len(life.keyword_cache) > 256:
            life.keyword_cache.popitem(last=False)
    return words


def stats(mem: "Memory") -> dict[str, Any]:
    life = ensure(mem, consolidated=True, partial=True)
    turn, at = life.clock()
    with life.lock:
        out: dict[str, Any] = {}
        if life.hier is not None:
            out.update(life.hier.stats())
        slots = life.decay.live_slots()
        if slots.size:
            s = life.decay.strength(slots, life.dcfg, turn, at)
            out["dormant_messages"] = int((s < life.dcfg.dormant_threshold * life.reference(at)).sum())
            out["mean_strength"] = float(s.mean())
        out["llm_fallbacks"] = life.llm_fallbacks
        out["consolidation_seconds"] = round(life.consolidation_s, 4)
    return out


def persist_flag(table: DecayTable, slots: np.ndarray) -> np.ndarray:
    return (table.flags[slots] & F_PERSIST) != 0


def gated_write(mem: "Memory", prepared: list) -> list:
    """``Memory._write`` behind the encoding gate (seed 002 §4.1 stage 1) when ``config.gate.enabled``: admitted
    messages carry the gate's scores in ``metadata["gate"]``; rejected ones come back as ``RejectedItem``."""
    if not mem._s.config.gate.enabled or not prepared:
        return mem._write(prepared)
    from hippo.hierarchy import gate

    mem._live()
    verdicts = gate.evaluate(mem, prepared)
    for p, v in zip(prepared, verdicts):
        p.metadata["gate"] = v
    written = iter(mem._write([p for p, v in zip(prepared, verdicts) if v["admitted"]]))
    return [next(written) if v["admitted"] else gate.rejected(p, v, mem.namespace) for p, v in zip(prepared, verdicts)]


def message_terms(life: Life, idx: "NamespaceIndex", mid: int) -> frozenset[str]:
    """Content stem ids of a stored message, read from its token ids (small cache: recall needs them for a few
    hundred candidates)."""
    from hippo import textnorm
    from hippo.hierarchy.vocab import content_stems, vocab

    cache = life.term_cache
    got = cache.get(mid)
    if got is not None:
        return got
    row = idx.row_of.get(mid)
    if row is None:
        got = frozenset()
    else:
        # whole-word stems, as the query's are: a word split into several tokens ("Somusumi") keeps its own stem
        # instead of its first piece's, so query-term coverage (Stage II, the dormant-cue test) sees it
        st = content_stems(idx.tokens_of(row))
        words = vocab().query_stem_ids(sorted(set(textnorm.terms(idx.text_of(row)))))
        got = frozenset(st[st >= 0].tolist()) | frozenset(words)
    with life.lock:
        cache[mid] = got
        if len(cache) > 20_000:
            for k in list(cache)[:5_000]:
                cache.pop(k, None)
    return got


# -- public operations behind Memory.topics / topic / consolidate / strength / reinforce ---------------------
def _check_ids(ids: Any) -> list[int]:
    from hippo.errors import InvalidInput

    if isinstance(ids, (int, np.integer)) and not isinstance(ids, bool):
        ids = [int(ids)]
    elif isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise InvalidInput(f"ids must be an int or an iterable of ints, got {type(ids).__name__}")
    out = []
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or i < 0:
            raise InvalidInput(f"ids must hold ints >= 0, got {i!r}")
        out.append(int(i))
    return out


def topics(mem: "Memory") -> list[dict[str, Any]]:
    from hippo.hierarchy import topics as topics_mod

    life = ensure(mem, consolidated=True, partial=True)
    with mem._s.lock.read():
        return topics_mod.topics(life)


def topic(mem: "Memory", topic_id: Any) -> str:
    from hippo.hierarchy import topics as topics_mod

    life = ensure(mem, consolidated=True, partial=True)
    with mem._s.lock.read():
        return topics_mod.topic(life, mem, topic_id)


def consolidate(mem: "Memory", level: str) -> dict[str, Any]:
    from hippo.errors import InvalidInput
    from hippo.hierarchy import consolidate as cons

    if level not in cons.LEVELS:
        raise InvalidInput(f"level must be one of {cons.LEVELS}, got {level!r}")
    life = ensure(mem, consolidated=True, partial=True)
    with mem._s.lock.write():
        with life.lock:
            if level == "light":
                return cons.light(life)
            if level == "deep":
                return cons.deep(life, mem)
            return cons.archival(life, mem)


def strength(mem: "Memory", ids: Any) -> dict[int, float]:
    ids = _check_ids(ids)
    if not mem._s.config.decay.enabled:
        idx = mem._index()
        return {i: 1.0 for i in ids if i in idx.row_of}
    life = ensure(mem)
    with life.lock:
        values = life.message_strength(ids)
        return {i: float(v) for i, v, sl in zip(ids, values.tolist(), life.decay.slots(ids).tolist()) if sl >= 0}


def reinforce(mem: "Memory", ids: Any) -> int:
    ids = _check_ids(ids)
    life = ensure(mem)
    known = [i for i in ids if i in life.decay]
    if known:
        life.reinforce(known)
    return len(known)
