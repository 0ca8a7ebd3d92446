"""The lifecycle follower of one namespace: the hierarchy (seed 001 §3.2), strength records (seed 004 §8) and
lifecycle policies (seed 004 §10).

:class:`Life` follows the namespace's co-index: rows the engine appends are applied (:meth:`Life.sync` with the
rows), rows deleted are removed, and complete batches of the CURRENT buffer are consolidated as they are applied,
so reads never consolidate. Its complete state (every strength record, the whole hierarchy) is saved with the
namespace's derived snapshot (:mod:`hippo.engine.persist`), so a reopened store answers from the structure as it
was; strength records hold the only state messages cannot rebuild (accesses).
"""

from __future__ import annotations

import copy
import logging
import math
import threading
import time
import uuid
from typing import Any, Callable, Iterable

import numpy as np

from hippo.base.arrays import GrowArray
from hippo.base.errors import CorruptData
from hippo.base.policies import Entry, Outcome, compile_policies
from hippo.engine import persist
from hippo.engine.hierarchy import decay as decay_mod
from hippo.engine.hierarchy import persist as hier_persist
from hippo.engine.hierarchy.decay import F_ASSOC, F_PERSIST, DecayTable
from hippo.engine.hierarchy.lazy import get_many
from hippo.engine.hierarchy.state import Hierarchy, Msg, fingerprint
from hippo.index.coindex import ROLES, NamespaceIndex
from hippo.store import snapshot
from hippo.store.base import Store
from hippo.text import query, textnorm, tokenizer
from hippo.text import vocab as V

log = logging.getLogger("hippo.lifecycle")

UNIT_LEVELS = ("episode", "semantic", "theme")
_PRIORITY_ORDER = {"critical": 0, "high": 1, "normal": 2, "low": 3}

#: Entries a term table adds before it merges them into its sorted ids (a sort of all of them: amortized O(log n) an
#: entry, and the dict of the recent ones stays small)
_TERMS_MERGED = 4096


class TermTable:
    """The content stem ids of messages recall has looked at (what :func:`message_terms` returns), kept in flat
    arrays and saved with the lifecycle: a message's terms are computed from its tokens the first time it is a
    candidate, never again (nor after a restart). Filled on demand, not on write: stem ids are created for every
    distinct word they hold, and only candidates' words need one (the process vocabulary stays as it would be)."""

    def __init__(self) -> None:
        self.ids = GrowArray(np.int64)
        self.ptr = GrowArray(np.int64)
        self.ptr.extend([0])
        self.val = GrowArray(np.int32)
        # where each message's entry is: the ids in order with their entries (16 bytes a message), and the entries
        # added since those were last merged. A dict of every message held about 100 bytes a message (11 MB at
        # 114,680 messages) for a lookup a few microseconds faster.
        self._sorted = np.zeros(0, dtype=np.int64)
        self._at = np.zeros(0, dtype=np.int64)
        self._recent: dict[int, int] = {}

    def __len__(self) -> int:
        return self.ids.n

    def _find(self, mid: int) -> int | None:
        p = self._recent.get(mid)
        if p is not None:
            return p
        k = int(np.searchsorted(self._sorted, mid))
        if k < self._sorted.size and int(self._sorted[k]) == mid:
            return int(self._at[k])
        return None

    def _merge(self) -> None:
        ids = np.concatenate([self._sorted, np.fromiter(self._recent, dtype=np.int64, count=len(self._recent))])
        at = np.concatenate([self._at, np.fromiter(self._recent.values(), dtype=np.int64, count=len(self._recent))])
        order = np.argsort(ids, kind="stable")
        self._sorted, self._at = ids[order], at[order]
        self._recent = {}

    def add(self, ids: list[int], terms: list[np.ndarray]) -> None:
        fresh = [(i, t) for i, t in zip(ids, terms) if self._find(int(i)) is None]
        if not fresh:
            return
        first = self.ids.n
        self.ids.extend([i for i, _ in fresh])
        self.val.extend(np.concatenate([t for _, t in fresh]))
        self.ptr.extend(self.ptr.a[self.ptr.n - 1] + np.cumsum([t.size for _, t in fresh]))
        for k, (i, _) in enumerate(fresh):
            self._recent[int(i)] = first + k
        if len(self._recent) >= _TERMS_MERGED:
            self._merge()

    def get(self, mid: int) -> np.ndarray | None:
        p = self._find(mid)
        if p is None:
            return None
        return self.val.a[self.ptr.a[p]: self.ptr.a[p + 1]]

    def arrays(self, keep: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The table (of the messages whose ids are in ``keep`` only, when given), stem ids as in this process."""
        ids = self.ids.view
        lens = np.diff(self.ptr.view)
        sel = np.ones(ids.size, dtype=bool) if keep is None else np.isin(ids, np.asarray(keep, dtype=np.int64))
        vals = self.val.view[np.repeat(sel, lens)]
        ptr = np.zeros(int(sel.sum()) + 1, dtype=np.int64)
        np.cumsum(lens[sel], out=ptr[1:])
        return {"ids": ids[sel], "ptr": ptr, "val": vals}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], remap: np.ndarray) -> "TermTable":
        t = cls()
        ids, ptr, val = arrays["ids"], arrays["ptr"].astype(np.int64), arrays["val"].astype(np.int64)
        if ptr.shape != (ids.size + 1,) or ptr[0] != 0 or ptr[-1] != val.size or (np.diff(ptr) < 0).any():
            raise ValueError("term table offsets are inconsistent")
        if val.size and (val.min() < 0 or val.max() >= remap.size):
            raise ValueError("term table stem out of range")
        t.ids.extend(ids)
        t.ptr = GrowArray(np.int64, max(64, ptr.size))
        t.ptr.extend(ptr)
        t.val.extend(remap[val].astype(np.int32))
        order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")
        t._sorted, t._at = np.asarray(ids, dtype=np.int64)[order], order.astype(np.int64)
        if t._sorted.size > 1 and not (np.diff(t._sorted) > 0).all():
            raise ValueError("term table holds a message twice")
        return t


def _terms_out(terms: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A term table's arrays with its stem ids replaced by a table of the stems' names (ids are process-local)."""
    used = np.unique(terms["val"]).astype(np.int64)
    stems = snapshot.Strings()
    index = np.full(int(used.max()) + 1 if used.size else 0, -1, dtype=np.int64)
    index[used] = np.arange(used.size)
    vocab = V.vocab()
    out = dict(terms, val=index[terms["val"]])
    out["stems"] = np.asarray([stems(vocab.stems[i]) for i in used.tolist()], dtype=np.int32)
    out.update(stems.arrays())
    return out


def _terms_in(terms: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The arrays of :func:`_terms_out` and the map from their stem numbers to this process's stem ids."""
    names = snapshot.StringTable(terms)
    names.check(terms["stems"])
    remap = np.asarray(V.vocab().stem_ids([names(int(k)) for k in terms["stems"].tolist()]), dtype=np.int64)
    return terms, remap


#: The longest stem a question can ask for: its words are at most :data:`hippo.text.query.MAX_WORD_CHARS`
#: characters, and lower-casing at most doubles a word ("İ" is "i" and a combining dot).
QUERY_STEM_CHARS = 2 * query.MAX_WORD_CHARS


def terms_of(tokens: np.ndarray, text: str) -> np.ndarray:
    """Content stem ids of a message: its tokens' stems and its whole words' stems (a word split into several
    tokens, "Somusumi", keeps its own stem so query-term coverage sees it), sorted, distinct. A whole word longer
    than any question's stem (:data:`QUERY_STEM_CHARS`: a pasted key, a base64 blob) is left out: no question
    matches it, and its stem would be kept by the process's vocabulary for good (200 messages holding a 20,000-
    character key each: 4 MB of stems)."""
    st = V.content_stems(tokens)
    words = V.vocab().stem_ids(sorted({t for t in textnorm.terms(text) if len(t) <= QUERY_STEM_CHARS}))
    return np.unique(np.concatenate([st[st >= 0], np.asarray(words, dtype=np.int64)])).astype(np.int32)


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
        self.version = -1             # store version (change feed) this state reflects, kept by NamespaceState
        self.turn = 0                 # next seq of the namespace: one added message is one turn
        self.last_add_time = 0.0
        self.dirty = 0
        # unit records stamped with the time of a call (a removal, an LLM refresh, maintenance) since the lifecycle
        # was last saved or loaded: a replay of the same messages would not make them (a consolidation's units are
        # dated by their messages, and replay alike)
        self.stamped = 0
        self.prunable: set[int] = set()
        # a read-only store keeps everything derived in memory (seed 004's strengths included) and writes nothing
        self.persistable = store.path is not None and not store.read_only
        self.llm_fallbacks = 0
        self.terms = TermTable()
        self.terms_saved = 0          # term table entries in the last full snapshot (later ones go with the delta)
        self.accessed = False         # strength records touched since the last full snapshot
        self.save_id = ""             # identity of the full snapshot this state was last saved as or loaded from
        # the heads (snapshot.head) of the saved lifecycle and accesses this state last matched, by kind (None: none
        # stored): a save writes only over them, else it first merges what another handle saved (merge_saved).
        # None: not known (a lifecycle rebuilt from the messages), merged before the first save
        self.stored: dict[str, bytes | None] | None = None
        # a save whose outcome is not known yet: (the heads it wrote, own accesses it carried); see saved_as
        self.pending: tuple[dict[str, bytes | None], list[np.ndarray]] | None = None
        self.consolidation_s = 0.0    # time spent turning the CURRENT buffer into units
        self.closed_episodes: list[int] = []  # episodes built since the engine last looked (LLM refresh on write)

    # what a consolidation may change besides the hierarchy and the strength records
    _KEPT = ("turn", "last_add_time", "dirty", "stamped", "prunable", "consolidation_s", "llm_fallbacks",
             "closed_episodes", "accessed")

    def checkpoint(self, hierarchy: bool = True) -> dict[str, Any]:
        """A copy of what a consolidation changes (the hierarchy unless ``hierarchy`` is False, every strength
        record, the counters), for :meth:`restore`. Caller holds :attr:`lock`."""
        out = {name: copy.copy(getattr(self, name)) for name in self._KEPT}
        out["decay"], out["units"] = copy.deepcopy(self.decay), copy.deepcopy(self.units)
        if hierarchy:
            out["hier"] = None if self.hier is None else self.hier.copy()
        return out

    def restore(self, saved: dict[str, Any]) -> None:
        """Put back what :meth:`checkpoint` copied: a consolidation that raised half-way leaves this state as it was
        before the call (it would otherwise write its half-done units at the next save). Caller holds :attr:`lock`."""
        for name, value in saved.items():
            setattr(self, name, value)

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
        p = metadata.get("priority")
        explicit = p if isinstance(p, str) and p in _PRIORITY_ORDER else None  # any other JSON value is the caller's
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
        if at is not None:
            self.stamped += 1
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
            # a theme has no text of its own (its summary follows its members): rules on its type, its priority and
            # no words apply to it, as to the other units
            out = self._policy(Entry(level, text, priority=prio)) if len(self.policies) else Outcome()
            self.units[level].add(
                uid, type=level, priority=out.priority or prio,
                base_rate=out.decay_rate if out.decay_rate is not None else self.dcfg.rates[level],
                floor=out.floor or 0.0, manual=bool(out.manual), persist=bool(out.persist), turn=turn, at=when,
                expires_turn=turn + out.expires_after_turns if out.expires_after_turns is not None else -1,
                expires_time=when + out.expires_after_seconds if out.expires_after_seconds is not None else math.nan)

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

    def remove_messages(self, ids: Iterable[int], idx: NamespaceIndex | None = None) -> None:
        """Forget messages; ``idx`` (still holding the surviving messages) lets an episode summary that quoted a
        forgotten one be rewritten from what remains rather than cleared."""
        ids = [int(i) for i in ids]
        self.decay.drop(ids)
        self.prunable.difference_update(ids)
        if self.hier is not None:
            before = (set(self.hier.episodes), set(self.hier.semantics), set(self.hier.themes.live().tolist()))
            self.hier.remove_messages(ids, None if idx is None else lambda mid: _text_of(idx, mid),
                                      None if idx is None else lambda mid: _row_of(idx, mid))
            after = (set(self.hier.episodes), set(self.hier.semantics), set(self.hier.themes.live().tolist()))
            for level, b, a in zip(UNIT_LEVELS, before, after):
                self.units[level].drop(b - a)
            self._record_units(decay_mod.now())
        if not len(self.decay):
            # no message is left: the lifecycle is the one a reopen builds from the empty namespace, without the
            # counters of units that are gone (splits, merges, reassignments) nor the document frequencies of
            # deleted text, which would give later messages other codes and themes than a new store gives them
            self.hier = self._new_hierarchy()
            self.units = {level: DecayTable() for level in UNIT_LEVELS}
            self.terms, self.terms_saved = TermTable(), 0
            self.consolidation_s = 0.0
            self.closed_episodes = []
        self.dirty += len(ids)

    def known(self) -> int:
        return len(self.decay)

    def sync(self, idx: NamespaceIndex, rows: list | None = None) -> None:
        """Make this state cover exactly the messages of ``idx``; ``rows`` are rows just applied to it (their
        metadata is at hand, so nothing is read back)."""
        if not self.loaded:
            self._load(idx)
        fresh = [r for r in rows or () if r.id not in self.decay]
        if fresh and self.known() + len(fresh) == len(idx):
            msgs, meta, created = [], {}, {}
            for r in fresh:
                msgs.append(Msg(r.id, r.seq, r.ts, r.session_id, r.speaker, r.role,
                                r.tokens if r.tokens is not None else idx.tokens_of(idx.row_of[r.id]), r.n_tokens))
                meta[r.id] = r.metadata
                created[r.id] = r.created_at
            self.add_messages(msgs, meta, created)
        if self.known() != len(idx):
            self._reconcile(idx)
        # after a load, what the snapshot did not cover waits in the CURRENT buffer: consolidate it now, here on
        # the follow path, never on a read
        self.consolidate_ready(partial=self.hcfg.consolidate_on_add)

    def update_messages(self, rows: list, idx: NamespaceIndex) -> None:
        """New metadata of known messages: their type, priority and policy outcome again; accesses are kept."""
        for r in rows:
            slot = self.decay.find(r.id)
            row = idx.row_of.get(r.id)
            if slot < 0 or row is None:
                continue
            keep = {c: getattr(self.decay, c)[slot].copy() for c in ("s0", "last_turn", "last_time", "accesses",
                                                                       "created_turn", "created_time")}
            assoc = self.decay.flags[slot] & F_ASSOC
            # long-term memory earned by use (deep consolidation marks records accessed ``persist_accesses`` times and
            # lowers their rate to the ``memory`` rate): the accesses are kept, so is what they earned
            d = self.dcfg
            promoted = bool(self.decay.flags[slot] & F_PERSIST) and int(keep["accesses"]) >= d.persist_accesses \
                and float(self.decay.base_rate[slot]) <= d.rates["memory"]
            turn, last = self.turn, self.last_add_time
            self.prunable.discard(r.id)
            self._record_message(Msg(r.id, r.seq, r.ts, r.session_id, r.speaker, r.role, idx.tokens_of(row),
                                     r.n_tokens), r.metadata, float(keep["created_time"]))
            self.turn, self.last_add_time = turn, last
            for c, v in keep.items():
                getattr(self.decay, c)[slot] = v
            self.decay.flags[slot] |= assoc
            if promoted:
                self.decay.flags[slot] |= F_PERSIST
                self.decay.base_rate[slot] = min(float(self.decay.base_rate[slot]), d.rates["memory"])
            self.dirty += 1

    def save_due(self) -> bool:
        return self.persistable and self.dirty >= self.hcfg.persist_every

    def _reconcile(self, idx: NamespaceIndex) -> None:
        live = idx.ids.view
        known = self.decay.live_keys()
        gone = np.setdiff1d(known, live, assume_unique=True)
        if gone.size:
            self.remove_messages(gone.tolist(), idx)
        new_rows = np.flatnonzero(~np.isin(live, known)).tolist()
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
    def _load(self, idx: NamespaceIndex | None, msgs: tuple | None = None) -> None:
        """Start from the messages: strength records are derived from them (plus the accesses a snapshot of the
        legacy format saved), the hierarchy from a legacy snapshot (codes replayed from the token ids) or from the
        messages. ``msgs`` may pass ``_msgs`` of every row, read beforehand."""
        self.loaded = True
        if msgs is None:
            if not len(idx):
                return
            msgs = self._msgs(idx, list(range(len(idx))))
        msgs, meta_rows, created = msgs
        if not msgs:
            return
        store = self.store
        for m in msgs:
            self._record_message(m, meta_rows.get(m.id, {}), created.get(m.id, 0.0))
        saved: tuple | None = None
        try:
            legacy = store.path is not None  # snapshots of stores written before the derived snapshots
            blob = store.get_units(self.namespace, "decay") if legacy else None
            if blob is not None:
                saved = snapshot.load(blob)
            blob = store.get_units(self.namespace, "hierarchy") if self.hier is not None and legacy else None
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

    # -- snapshots (hippo.engine.persist) --------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """The settings a saved lifecycle must have been built under to be loaded as it is."""
        return {"hierarchy": fingerprint(self.hcfg) if self.hcfg.enabled else None,
                "decay": persist.settings(self.dcfg)}

    def to_snapshot(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Every strength record and the whole hierarchy (see :mod:`hippo.engine.hierarchy.persist`)."""
        self._record_units()  # nothing may wait in the hierarchy's list of new units
        arrays: dict[str, np.ndarray] = {}
        for name, table in [("msg", self.decay), *self.units.items()]:
            arrays.update(persist.join(**{name: table.arrays()}))
        arrays.update(persist.join(terms=_terms_out(self.terms.arrays(self.decay.live_keys()))))
        self.terms_saved = len(self.terms)
        self.save_id = uuid.uuid4().hex
        for table in (self.decay, *self.units.values()):
            table.touched[:] = False
        self.accessed = False
        meta: dict[str, Any] = {"save_id": self.save_id, "turn": self.turn, "last_add_time": self.last_add_time,
                                "prunable": sorted(self.prunable), "consolidation_s": self.consolidation_s,
                                "llm_fallbacks": self.llm_fallbacks, "hierarchy": None}
        if self.hier is not None:
            meta["hierarchy"], harrays = hier_persist.dump(self.hier)
            arrays.update(persist.join(h=harrays))
        return meta, arrays

    def to_access_snapshot(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The strength records accessed since the full snapshot ``save_id``: all that changed when recall was the
        only thing that happened (a few kilobytes instead of the whole lifecycle)."""
        arrays: dict[str, np.ndarray] = {}
        for name, table in [("msg", self.decay), *self.units.items()]:
            arrays.update(persist.join(**{name: table.access_arrays(identity=name != "msg")}))
        new_ids = self.terms.ids.view[self.terms_saved:]
        fresh = self.terms.arrays(new_ids[self.decay.slots(new_ids) >= 0])  # the new rows of live messages
        arrays.update(persist.join(terms=_terms_out(fresh)))
        # ``id`` tells this delta from any other saved over the same lifecycle (see ``stored``)
        return {"life": self.save_id, "turn": self.turn, "id": uuid.uuid4().hex}, arrays

    # -- several handles saving one namespace's lifecycle ---------------------------------------------------
    def _tables(self) -> list[tuple[str, DecayTable]]:
        return [("msg", self.decay), *self.units.items()]

    def own_accesses(self) -> list[np.ndarray]:
        """The accesses made here since the saved records were last matched (what a save about to be written
        carries; :meth:`saved_as` takes them off once it is written)."""
        return [table.own[: table.n].copy() for _, table in self._tables()]

    def saved_as(self, heads: dict[str, bytes | None], sent: list[np.ndarray]) -> None:
        """A save carrying the accesses ``sent`` (:meth:`own_accesses`) is stored, its blobs' heads ``heads``: they
        are the saved records this state matches now; accesses made while it was written stay this state's own."""
        for (_, table), k in zip(self._tables(), sent):
            table.own[: k.size] -= k
        self.stored, self.pending = dict(heads), None

    def merge_saved(self, saved: tuple | None, access: tuple | None, heads: dict[str, bytes | None],
                    version: int) -> None:
        """Fold in the lifecycle another handle saved, so that this state's next save keeps that handle's accesses
        (:meth:`DecayTable.merge`) instead of replacing them. ``saved``: the stored ``(covers, meta, arrays)`` of
        :data:`persist.LIFE` (None when none is stored or it cannot be used here), ``access``: the stored
        ``(meta, arrays)`` of :data:`persist.ACCESS` (None likewise), ``heads``: the heads of both blobs as stored,
        ``version``: the store version this state reflects.

        The next save writes a delta over the stored lifecycle when this state has nothing but accesses to save and
        that lifecycle covers the same messages (``version``), so its hierarchy (another handle's consolidation)
        stays; otherwise the whole lifecycle, with the merged records."""
        if self.pending is not None and self.pending[0] == heads:
            self.saved_as(*self.pending)  # the save whose outcome was not known did commit: nothing to merge
            return
        their_id = ""
        for part in (saved, access):
            if part is None or (part is access and (saved is None or access[0].get("life") != their_id)):
                continue  # accesses saved over another lifecycle than the stored one are read by nobody
            meta, arrays = part[-2], part[-1]
            for name, table in self._tables():
                columns = persist.split(arrays, name)
                if "key" not in columns:
                    continue
                slots = table.merge(columns, identity=name != "msg")
                if part is access:
                    table.touched[slots] = True  # the delta this state writes next replaces that one
            self.turn = max(self.turn, int(meta.get("turn", 0)))
            if part is saved:
                self.last_add_time = max(self.last_add_time, float(meta.get("last_add_time", 0.0)))
                their_id = str(meta.get("save_id", ""))
        if saved is None or saved[0].version != version:
            self.save_id = ""  # no stored lifecycle to save a delta over: the whole lifecycle is saved
        elif not self.dirty:
            self.save_id = their_id
        self.stored, self.pending = dict(heads), None

    def take_own(self, older: "Life") -> int:
        """Keep what ``older``, this process's lifecycle before this one was loaded in its place from a snapshot
        another handle saved later, held that no saved lifecycle holds: the accesses made here and not saved yet
        (:meth:`DecayTable.take_own`, units compared by identity). They stay this state's own: its next save writes
        them, as ``older``'s would have. Returns how many records were merged."""
        n = 0
        for (name, table), (_, old) in zip(self._tables(), older._tables()):
            n += int(table.take_own(old, identity=name != "msg").size)
        if any(k.any() for k in self.own_accesses()):
            self.accessed = True
        self.turn = max(self.turn, older.turn)
        self.last_add_time = max(self.last_add_time, older.last_add_time)
        return n

    def carry_uses(self, saved: tuple, access: tuple | None) -> int:
        """Keep the uses of messages that a lifecycle this one was rebuilt in place of recorded (one saved under other
        settings, or too old for the change feed): accesses are the one thing the messages cannot rebuild. ``saved``:
        its ``(covers, meta, arrays)``; ``access``: the ``(meta, arrays)`` of the accesses saved over it, or None.
        Message records only (ids name one message for good; the hierarchy may have been built otherwise): the later
        last access, the access counts and what they earned (:meth:`DecayTable.carry`); what the settings decide is
        this state's. Returns how many records were carried."""
        meta, arrays = saved[1], saved[2]
        parts = [persist.split(arrays, "msg")]
        if access is not None and meta.get("save_id") and access[0].get("life") == meta.get("save_id"):
            parts.append(persist.split(access[1], "msg"))  # later than the lifecycle: its counts include the first
        carried = np.zeros(0, dtype=np.int64)
        d = self.dcfg
        for columns in parts:
            if "key" in columns:
                carried = np.union1d(carried, self.decay.carry(columns, d.persist_accesses, d.rates["memory"]))
        self.turn = max(self.turn, int(meta.get("turn", 0)))
        return int(carried.size)

    def apply_access_snapshot(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bool:
        """Apply :meth:`to_access_snapshot` when it was saved over this state's snapshot; False otherwise."""
        if meta.get("life") != self.save_id or not self.save_id:
            return False
        for name, table in [("msg", self.decay), *self.units.items()]:
            table.apply_access(persist.split(arrays, name))
        more = TermTable.from_arrays(*_terms_in(persist.split(arrays, "terms")))
        self.terms.add(more.ids.view.tolist(), [more.get(int(i)) for i in more.ids.view.tolist()])
        self.turn = max(self.turn, int(meta["turn"]))
        self.accessed = True
        return True

    @classmethod
    def from_snapshot(cls, config: Any, store: Store, namespace: str, meta: dict[str, Any],
                      arrays: dict[str, np.ndarray], idx: NamespaceIndex,
                      external_codes: Callable[[list[int]], np.ndarray | None] | None = None,
                      ready: Callable[[], None] | None = None) -> "Life":
        """The lifecycle of a snapshot; messages of its CURRENT buffer are read back from ``idx`` (after ``ready()``
        when given: its Content DWM may still be filling). Raises ``ValueError`` / ``KeyError`` when the snapshot
        is inconsistent."""
        life = cls(config, store, namespace, external_codes)
        life.decay = DecayTable.from_arrays(persist.split(arrays, "msg"))
        life.units = {level: DecayTable.from_arrays(persist.split(arrays, level)) for level in UNIT_LEVELS}
        life.turn, life.last_add_time = int(meta["turn"]), float(meta["last_add_time"])
        life.save_id = str(meta["save_id"])
        life.prunable = {int(i) for i in meta["prunable"]}
        life.consolidation_s, life.llm_fallbacks = float(meta["consolidation_s"]), int(meta["llm_fallbacks"])
        life.terms = TermTable.from_arrays(*_terms_in(persist.split(arrays, "terms")))
        life.terms_saved = len(life.terms)
        if (meta["hierarchy"] is None) != (life.hier is None):
            raise ValueError("the lifecycle snapshot was saved with the hierarchy switched the other way")
        if life.hier is not None:
            waited = []

            def tokens_of(mid: int):
                if ready is not None and not waited:
                    ready()
                    waited.append(True)
                row = idx.row_of.get(mid)
                if row is None:
                    return None
                return idx.tokens_of(row), _BufferedRow(int(idx.seqs.a[row]), idx.ts.a[row],
                                                        idx.sessions[int(idx.session.a[row])],
                                                        idx.speakers[int(idx.speaker.a[row])],
                                                        ROLES[int(idx.role.a[row])])

            life.hier = hier_persist.load(life.hcfg, meta["hierarchy"], persist.split(arrays, "h"), tokens_of,
                                          external_codes)
        life.loaded = True
        life.dirty = life.stamped = 0
        return life

    # -- strengths ------------------------------------------------------------------------------------------
    def clock(self) -> tuple[int, float]:
        return self.turn, decay_mod.now()

    def reference(self, at: float) -> float:
        return decay_mod.reference_strength(self.dcfg, self.last_add_time or at, at)

    def moment(self, idx: NamespaceIndex, as_of: float | None = None) -> tuple[int, float, float]:
        """``(turn, time, reference)`` strengths and dormancy are read at: now, or for a question about the memory as
        it stood at ``as_of`` (an ingestion time before now), that moment, with the turn and the latest add of the
        messages ingested by then. Only an entry's latest access is kept: one used after ``as_of`` reads as used
        then."""
        turn, at = self.clock()
        if as_of is None or not as_of < at:
            return turn, at, self.reference(at)
        created = idx.created.view
        then = created <= as_of
        if then.any():
            turn = min(turn, int(idx.seqs.view[then].max()) + 1)
            last = float(created[then].max())
        else:
            turn, last = 0, as_of
        return turn, as_of, decay_mod.reference_strength(self.dcfg, last, as_of)

    def strengths(self, table: DecayTable, slots: np.ndarray, turn: int, at: float) -> np.ndarray:
        """Strengths of ``slots`` of ``table`` (one of this state's): all 1 while decay is switched off
        (``config.decay.enabled``), when nothing is dormant or expired."""
        if not self.dcfg.enabled:
            return np.ones(np.asarray(slots).size, dtype=np.float64)
        return table.strength(slots, self.dcfg, turn, at)

    def expired(self, table: DecayTable, slots: np.ndarray, turn: int, at: float) -> np.ndarray:
        """Which of ``slots`` of ``table`` a policy's expiry has passed (none while decay is switched off)."""
        if not self.dcfg.enabled:
            return np.zeros(np.asarray(slots).size, dtype=bool)
        return table.expired(slots, turn, at)

    def message_strength(self, ids: Iterable[int], moment: tuple[int, float] | None = None) -> np.ndarray:
        """Strengths now, or at ``moment`` (``(turn, time)``, see :meth:`moment`)."""
        turn, at = moment or self.clock()
        return self.strengths(self.decay, self.decay.slots(ids), turn, at)

    def unit_strength(self, level: str, ids: Iterable[int], moment: tuple[int, float] | None = None) -> np.ndarray:
        turn, at = moment or self.clock()
        table = self.units[level]
        return self.strengths(table, table.slots(ids), turn, at)

    def reinforce(self, message_ids: Iterable[int], units: dict[str, Iterable[int]] | None = None) -> None:
        turn, at = self.clock()
        with self.lock:
            mids = list(message_ids)
            self.decay.reinforce(self.decay.slots(mids), turn, at)
            if self.hier is not None:
                # entries connected to a just-used one decay more slowly (seed 004 §8.2, association x0.7)
                sib = [m for eid in get_many(self.hier.msg_episode, mids, -1)
                       for m in self.hier.episodes.get(eid, _NO_EPISODE).message_ids]
                self.decay.set_flag(self.decay.slots(sib), F_ASSOC)
            for level, ids in (units or {}).items():
                table = self.units[level]
                table.reinforce(table.slots(ids), turn, at)
            self.accessed = True  # saved as a small delta while nothing else changes (see to_access_snapshot)


def _text_of(idx: NamespaceIndex, mid: int) -> tuple[str | None, np.ndarray] | None:
    """(speaker, token ids) of a message of ``idx``, None when it holds no such message."""
    row = idx.row_of.get(mid)
    if row is None:
        return None
    return idx.speakers[int(idx.speaker.a[row])], idx.tokens_of(row)


def _row_of(idx: NamespaceIndex, mid: int) -> tuple[int, float | None, str | None, int] | None:
    """(seq, timestamp, speaker, token count) of a message of ``idx``, None when it holds no such message."""
    row = idx.row_of.get(mid)
    if row is None:
        return None
    ts = float(idx.ts.a[row])
    return (int(idx.seqs.a[row]), None if ts != ts else ts, idx.speakers[int(idx.speaker.a[row])],
            int(idx.doc_lengths()[row]))


class _BufferedRow:
    __slots__ = ("seq", "ts", "session", "speaker", "role")

    def __init__(self, seq: int, ts: float, session: str | None, speaker: str | None, role: str) -> None:
        self.seq, self.ts, self.session, self.speaker, self.role = seq, None if ts != ts else float(ts), session, \
            speaker, role


class _NoEpisode:
    message_ids: list[int] = []


_NO_EPISODE = _NoEpisode()


def message_terms(life: Life, idx: NamespaceIndex, mid: int) -> frozenset[int]:
    """Content stem ids of a stored message (see :func:`terms_of`): from the lifecycle's term table, computed from
    the message's token ids and added to it the first time it is asked for. The set is made from the table's array
    at each call and not kept: a cache of the sets by message held about 1 KB per message of ten words (20,000
    messages, 20 MB for one namespace, several times that for long messages), for a saving of a few microseconds a
    candidate."""
    row = idx.row_of.get(mid)
    if row is None:
        return frozenset()
    with life.lock:
        known = life.terms.get(mid)
    if known is None:
        known = terms_of(idx.tokens_of(row), idx.text_of(row))
        with life.lock:
            life.terms.add([mid], [known])
            life.accessed = True  # saved with the accesses' delta
    return frozenset(known.tolist())
