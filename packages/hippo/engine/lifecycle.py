"""The lifecycle follower of one namespace: the hierarchy (seed 001 §3.2), strength records (seed 004 §8) and
lifecycle policies (seed 004 §10).

:class:`Life` follows the namespace's co-index: rows the engine appends are applied (:meth:`Life.sync` with the
rows), rows gone or added elsewhere are reconciled, and complete batches of the CURRENT buffer are consolidated
as they are applied, so reads never consolidate. The structure is snapshotted into the store's ``units`` table
(by the write path and on close) so a reopened store does not replay everything; strength records hold the only
state messages cannot rebuild (accesses).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from typing import Any, Callable, Iterable

import numpy as np

from hippo.base.errors import CorruptData
from hippo.base.policies import Entry, Outcome, compile_policies
from hippo.engine.hierarchy import decay as decay_mod
from hippo.engine.hierarchy.decay import F_ASSOC, DecayTable
from hippo.engine.hierarchy.state import Hierarchy, Msg, fingerprint
from hippo.index.coindex import NamespaceIndex
from hippo.store import snapshot
from hippo.store.base import Store
from hippo.text import tokenizer

log = logging.getLogger("hippo.lifecycle")

UNIT_LEVELS = ("episode", "semantic", "theme")
_PRIORITY_ORDER = {"critical": 0, "high": 1, "normal": 2, "low": 3}

class Life:
    """Lifecycle state of one namespace of one store."""

    def __init__(self, config: Any, store: Store, namespace: str,
                 external_codes: Callable[[list[int]], np.ndarray | None] | None = None) -> None:
        cfg = config
        self.store = store
        self.namespace = namespace
        self.hcfg = cfg.hierarchy
        self.dcfg = cfg.decay
        self.gcfg = cfg.gate
        self.lock = threading.RLock()
        self._external_codes = external_codes
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
        # a read-only store keeps everything derived in memory (seed 004's strengths included) and writes nothing
        self.persistable = store.path is not None and not store.read_only
        self.llm_fallbacks = 0
        self.term_cache: dict[int, frozenset[str]] = {}
        self.consolidation_s = 0.0    # time spent turning the CURRENT buffer into units
        self.closed_episodes: list[int] = []  # episodes built since the engine last looked (LLM refresh on write)

    def _new_hierarchy(self) -> Hierarchy | None:
        if not self.hcfg.enabled:
            return None
        h = Hierarchy(self.hcfg)
        h.external_codes = self._external_codes
        return h

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
        self.closed_episodes.extend(e.id for e in closed)
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

    def sync(self, idx: NamespaceIndex, generation: int, rows: list | None = None) -> None:
        """Make this state cover exactly the messages of ``idx`` (at store ``generation``); ``rows`` are rows just
        appended (fast path)."""
        if not self.loaded:
            self._load(idx, generation)
        if rows is not None and self.generation == generation and self.known() + len(rows) == len(idx):
            msgs, meta, created = [], {}, {}
            for r in rows:
                if r.id in self.decay:
                    continue
                msgs.append(Msg(r.id, r.seq, r.ts, r.session_id, r.speaker, r.role,
                                r.tokens if r.tokens is not None else idx.tokens_of(idx.row_of[r.id]), r.n_tokens))
                meta[r.id] = r.metadata
                created[r.id] = r.created_at
            self.add_messages(msgs, meta, created)
        elif self.generation != generation or self.known() != len(idx):
            self._reconcile(idx)
        self.generation = generation
        # after a load, what the snapshot did not cover waits in the CURRENT buffer: consolidate it now, here on
        # the follow path, never on a read
        self.consolidate_ready(partial=self.hcfg.consolidate_on_add)

    def save_due(self) -> bool:
        return self.persistable and self.dirty >= self.hcfg.persist_every

    def _reconcile(self, idx: NamespaceIndex) -> None:
        live = set(idx.row_of)
        known = set(self.decay.slot_of)
        gone = known - live
        if gone:
            self.remove_messages(gone)
        new_rows = [r for r in range(len(idx)) if int(idx.ids.a[r]) not in known]
        if new_rows:
            self._replay(idx, new_rows)

    def _msgs(self, idx: NamespaceIndex, positions: list[int]) -> tuple[list[Msg], dict, dict]:
        ids = [int(idx.ids.a[r]) for r in positions]
        meta_rows = self.store.rows(self.namespace, ids)
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

    def _replay(self, idx: NamespaceIndex, positions: list[int], chunk: int = 2048) -> None:
        for k in range(0, len(positions), chunk):
            msgs, meta, created = self._msgs(idx, positions[k : k + chunk])
            self.add_messages(msgs, meta, created)

    # -- snapshots ------------------------------------------------------------------------------------------
    def _load(self, idx: NamespaceIndex, generation: int) -> None:
        """Start from the store: strength records are derived from the messages (plus the saved accesses), the
        hierarchy from its snapshot (codes replayed from the token ids) or, failing that, from the messages."""
        self.loaded = True
        self.generation = generation
        if not self.persistable or not len(idx):
            return
        store = self.store
        msgs, meta_rows, created = self._msgs(idx, list(range(len(idx))))
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
                self.hier = Hierarchy.from_snapshot(self.hcfg, hmeta, harrays, msgs, self._external_codes)
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

    def holds_llm_text(self) -> bool:
        """Whether units hold text an LLM wrote from messages (episode summaries, facts): unlike offline units,
        which are spans of the messages, such text is a copy of what it was written from."""
        h = self.hier
        return h is not None and (any(e.llm_summary for e in h.episodes.values())
                                  or any(x.llm for x in h.semantics.values()))

    def save(self) -> None:
        """Persist what messages cannot rebuild cheaply: accessed strength records (sparse) and the hierarchy's
        structure (see :meth:`Hierarchy.to_snapshot`)."""
        if not self.persistable:
            return
        store = self.store
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


def message_terms(life: Life, idx: NamespaceIndex, mid: int) -> frozenset[int]:
    """Content stem ids of a stored message, read from its token ids (small cache: recall needs them for a few
    hundred candidates)."""
    from hippo.text import textnorm
    from hippo.text.vocab import content_stems, vocab

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




def snapshot_holds_text(blob: bytes | None) -> bool:
    """Whether a saved hierarchy snapshot holds LLM-written text (see :meth:`Life.holds_llm_text`); an unreadable one
    counts as holding some, so that it gets replaced."""
    if blob is None:
        return False
    try:
        _, arrays = snapshot.load(blob)
        bulk = json.loads(bytes(arrays["bulk"]).decode("utf-8"))
        return bool(bulk.get("llm_summaries") or bulk.get("llm_semantics"))
    except (CorruptData, KeyError, ValueError, TypeError, AttributeError):
        return True
