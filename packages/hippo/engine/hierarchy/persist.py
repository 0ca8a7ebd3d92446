"""The complete state of a :class:`~hippo.engine.hierarchy.state.Hierarchy` as arrays, and back.

Everything consolidation computed is kept (message, episode, semantic and theme codes, document frequencies, kNN
lists, theme statistics), so loading replays nothing: a reopened store answers from the structure as it was, not
from a recomputation. Stem ids are process-local (:mod:`hippo.text.vocab` numbers stems on first sight), so the
snapshot carries the stem strings it uses and loading maps them to this process's ids.

Variable-length fields are stored as CSR pairs (``<name>.ptr`` offsets, ``<name>.val`` values); strings go into one
JSON document. Loading validates shapes, offsets and id ranges and raises ``ValueError`` on any inconsistency (the
caller then rebuilds from the messages).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

import numpy as np

from hippo.base.config import HierarchyConfig
from hippo.engine.hierarchy.codes import CodeSet
from hippo.engine.hierarchy.episodes import Buffered, Episode
from hippo.engine.hierarchy.lazy import IntMap, LazyUnits, ListMap
from hippo.engine.hierarchy.lazy import ranges as _ranges
from hippo.engine.hierarchy.semantics import Semantic, stem_terms
from hippo.engine.hierarchy.state import Hierarchy, fingerprint
from hippo.store import snapshot
from hippo.text import vocab as V


def _csr(lists: Iterable[Iterable[int]], dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    lens, vals = [], []
    for xs in lists:
        xs = list(xs)
        lens.append(len(xs))
        vals.extend(xs)
    ptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    return ptr, np.asarray(vals, dtype=dtype)


def _put_csr(arrays: dict, name: str, lists, dtype=np.int64) -> None:
    arrays[f"{name}.ptr"], arrays[f"{name}.val"] = _csr(lists, dtype)


def _codeset(arrays: dict, name: str, cs: CodeSet) -> None:
    arrays[f"{name}.codes"] = cs.codes[: cs.n]
    arrays[f"{name}.alive"] = cs.alive[: cs.n]


def _restore_codeset(cs: CodeSet, arrays: dict, name: str) -> None:
    codes = np.asarray(arrays[f"{name}.codes"], dtype=np.uint64)
    alive = np.asarray(arrays[f"{name}.alive"], dtype=bool)
    n = alive.shape[0]
    if codes.shape != (n, cs.words):
        raise ValueError(f"hierarchy snapshot: {name} codes have the wrong shape")
    cs._grow(max(1, n))
    cs.codes[:n] = codes
    cs.alive[:n] = alive
    cs.n = n


def _opt(x: float | None) -> float:
    return np.nan if x is None else float(x)


def _unopt(x: float) -> float | None:
    return None if x != x else float(x)


class _Csr:
    """Read access to one CSR pair, slice by slice."""

    def __init__(self, arrays: dict[str, np.ndarray], name: str, n: int) -> None:
        ptr, self.val = arrays[f"{name}.ptr"].astype(np.int64), arrays[f"{name}.val"]
        if ptr.shape != (n + 1,) or ptr[0] != 0 or (np.diff(ptr) < 0).any() \
                or ptr[-1] != self.val.shape[0]:
            raise ValueError(f"hierarchy snapshot: {name} offsets are inconsistent")
        self.ptr = ptr.tolist()
        self.offsets = ptr

    def pair(self) -> tuple[np.ndarray, np.ndarray]:
        return self.offsets, self.val

    def __call__(self, k: int) -> list[int]:
        return self.val[self.ptr[k]: self.ptr[k + 1]].tolist()


def _int_map(name: str, m: dict[int, int] | IntMap) -> dict[str, np.ndarray]:
    """The ``<name>.keys`` / ``<name>.vals`` arrays of a message map."""
    if isinstance(m, IntMap):
        keys, vals = m.arrays()
    else:
        keys = np.fromiter(m.keys(), dtype=np.int64, count=len(m))
        vals = np.fromiter(m.values(), dtype=np.int64, count=len(m))
    return {f"{name}.keys": keys, f"{name}.vals": vals}


def _units(mapping: Any, keys: list[int]) -> tuple[np.ndarray, list[Any], Any]:
    """``(at, built, source)`` of ``keys`` in a unit mapping: the snapshot position of each unit not built yet (-1
    for the others), the built units in order, and the snapshot columns they come from (None for a plain dict)."""
    if isinstance(mapping, LazyUnits) and mapping.source is not None:
        at, built = mapping.split(keys)
        return at, built, mapping.source
    return np.full(len(keys), -1, dtype=np.int64), [mapping[k] for k in keys], None


def _column(at: np.ndarray, built: Iterable[Any], src: np.ndarray | None, dtype, width: int | None = None
            ) -> np.ndarray:
    """One value per unit (``width`` values with ``width``): row ``at[k]`` of ``src`` for a unit not built, else the
    next of ``built``."""
    out = np.empty(at.size if width is None else (at.size, width), dtype=dtype)
    pending = at >= 0
    out[~pending] = np.asarray(list(built), dtype=dtype).reshape((-1, *out.shape[1:]))
    if src is not None and pending.any():
        out[pending] = src[at[pending]]
    return out


def _mixed_csr(at: np.ndarray, built: Iterable[Iterable[int]], src: tuple[np.ndarray, np.ndarray] | None,
               dtype=np.int64, convert: Callable[[np.ndarray], np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The CSR pair of one list per unit: a unit not built takes its row ``at[k]`` of ``src`` (``(ptr, val)``, its
    values passed through ``convert``), the others the next list of ``built``."""
    pending = at >= 0
    lens = np.zeros(at.size, dtype=np.int64)
    b_lens: list[int] = []
    b_vals: list[int] = []
    for xs in built:
        xs = list(xs)
        b_lens.append(len(xs))
        b_vals.extend(xs)
    lens[~pending] = np.asarray(b_lens, dtype=np.int64)
    p = at[pending]
    if p.size:
        sptr, sval = src
        lens[pending] = sptr[p + 1] - sptr[p]
    ptr = np.zeros(at.size + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    val = np.empty(int(ptr[-1]), dtype=dtype)
    from_built = np.repeat(~pending, lens)
    val[from_built] = np.asarray(b_vals, dtype=dtype)
    if p.size:
        got = sval[_ranges(sptr[p], lens[pending])]
        val[~from_built] = convert(got) if convert is not None else got
    return ptr, val


class _OldStrings:
    """The strings of a loaded snapshot that units not built yet refer to, moved to the end of a new table: old
    index -> new index by :meth:`__call__` (-1 stays -1), once every reference is :meth:`use`-d."""

    def __init__(self) -> None:
        self.refs: list[np.ndarray] = []
        self.table: tuple[np.ndarray, np.ndarray] | None = None
        self.remap: np.ndarray | None = None

    def use(self, source: dict | None, refs: np.ndarray) -> None:
        if source is not None and refs.size:
            self.table = source["strings"]
            self.refs.append(np.asarray(refs, dtype=np.int64))

    def close(self, base: int) -> tuple[np.ndarray, np.ndarray]:
        """The old strings' bytes and lengths, in their new order (after the ``base`` strings of the new table)."""
        if self.table is None:
            return np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64)
        blob, ptr = self.table
        refs = np.concatenate(self.refs)
        used = np.unique(refs[refs >= 0])
        self.remap = np.full(ptr.size - 1, -1, dtype=np.int64)
        self.remap[used] = base + np.arange(used.size, dtype=np.int64)
        lens = ptr[used + 1] - ptr[used]
        # the bytes of the used strings, in order: a mask over the blob (the strings are disjoint and ascending)
        edge = np.zeros(blob.size + 1, dtype=np.int8)
        np.add.at(edge, ptr[used], 1)
        np.add.at(edge, ptr[used + 1], -1)
        return blob[np.cumsum(edge[:-1], dtype=np.int8).view(bool)], lens

    def __call__(self, refs: np.ndarray) -> np.ndarray:
        refs = np.asarray(refs, dtype=np.int64)
        if self.remap is None:
            return refs
        return np.where(refs >= 0, self.remap[np.maximum(refs, 0)], -1)


def dump(h: Hierarchy) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The state of ``h`` (which must have no units waiting in ``created``: they are drained by the lifecycle).
    Units a loaded snapshot holds that were never read are copied from its columns, not built."""
    th = h.themes
    ep_keys, sem_keys = sorted(h.episodes), sorted(h.semantics)
    ep_at, eps, ep_src = _units(h.episodes, ep_keys)
    sem_at, sems, sem_src = _units(h.semantics, sem_keys)
    ep_old, sem_old = ep_at[ep_at >= 0], sem_at[sem_at >= 0]
    sem_knn, theme_knn = h.sem_graph.lists(h.sem_codes.n), th.graph.lists(th.codes.n)
    stems_used = set(h.df.held().tolist())
    for x in sems:
        stems_used.update(x.terms)
    old_terms = None
    if sem_src is not None and sem_old.size:
        tptr, tval = sem_src["csr"]["terms"]
        old_terms = tval[_ranges(tptr[sem_old], tptr[sem_old + 1] - tptr[sem_old])]
        stems_used.update(np.unique(sem_src["remap"][old_terms]).tolist())
    vocab = V.vocab()
    stem_ids = sorted(i for i in stems_used if 0 <= i < vocab.n_stems)
    strings = snapshot.Strings()
    stems = np.asarray([strings(vocab.stems[i]) for i in stem_ids], dtype=np.int64)
    ep_session = [strings(e.session) for e in eps]
    ep_summary = [strings(e.summary) for e in eps]
    ep_speakers = [[strings(x) for x in e.speakers] for e in eps]
    sem_text = [strings(x.text) for x in sems]
    sem_speaker = [strings(x.speaker) for x in sems]
    # the strings of the units not built, as the snapshot they were loaded from holds them
    old = _OldStrings()
    if ep_src is not None and ep_old.size:
        sptr, sval = ep_src["csr"]["speakers"]
        old.use(ep_src, ep_src["cols"]["session"][ep_old])
        old.use(ep_src, ep_src["cols"]["summary"][ep_old])
        old.use(ep_src, sval[_ranges(sptr[ep_old], sptr[ep_old + 1] - sptr[ep_old])])
    if sem_src is not None and sem_old.size:
        old.use(sem_src, sem_src["cols"]["text"][sem_old])
        old.use(sem_src, sem_src["cols"]["speaker"][sem_old])
    table = strings.arrays()
    old_bytes, old_lens = old.close(len(strings.index))
    if old_lens.size:
        table["strings.blob"] = np.concatenate([table["strings.blob"], old_bytes])
        table["strings.ptr"] = np.concatenate([table["strings.ptr"], table["strings.ptr"][-1] + np.cumsum(old_lens)])

    def ep_col(name: str, built: Iterable[Any], dtype, strs: bool = False) -> np.ndarray:
        src = ep_src["cols"][name] if ep_src is not None else None
        if strs and src is not None:
            src = old(src)
        return _column(ep_at, built, src, dtype)

    def sem_col(name: str, built: Iterable[Any], dtype, strs: bool = False) -> np.ndarray:
        src = sem_src["cols"][name] if sem_src is not None else None
        if strs and src is not None:
            src = old(src)
        return _column(sem_at, built, src, dtype)

    def ep_csr(name: str, built: Iterable[Iterable[int]], dtype=np.int64, convert=None) -> tuple:
        return _mixed_csr(ep_at, built, ep_src["csr"][name] if ep_src is not None else None, dtype, convert)

    def sem_csr(name: str, built: Iterable[Iterable[int]], dtype=np.int64, convert=None) -> tuple:
        return _mixed_csr(sem_at, built, sem_src["csr"][name] if sem_src is not None else None, dtype, convert)

    arrays: dict[str, np.ndarray] = {
        "stems": stems,
        "stem_ids": np.asarray(stem_ids, dtype=np.int64),
        "df": h.df.get(np.asarray(stem_ids, dtype=np.int64)),   # 0 for stems only semantics use
        "unit_end_seqs": np.asarray(h.unit_end_seqs, dtype=np.int64),
        "pending_tiny": np.asarray(h.pending_tiny, dtype=np.int64),
        "buffer.ids": np.asarray([b.id for b in h.buffer], dtype=np.int64),
        "buffer.closes": np.asarray([b.closes for b in h.buffer], dtype=bool),
        **_int_map("msg_slot", h.msg_slot),
        **_int_map("msg_episode", h.msg_episode),
        # episodes
        "ep.id": np.asarray(ep_keys, dtype=np.int64),
        "ep.first_seq": ep_col("first_seq", (e.first_seq for e in eps), np.int64),
        "ep.last_seq": ep_col("last_seq", (e.last_seq for e in eps), np.int64),
        "ep.t0": ep_col("t0", (_opt(e.t0) for e in eps), np.float64),
        "ep.t1": ep_col("t1", (_opt(e.t1) for e in eps), np.float64),
        "ep.n_tokens": ep_col("n_tokens", (e.n_tokens for e in eps), np.int64),
        "ep.llm_summary": ep_col("llm_summary", (e.llm_summary for e in eps), bool),
        "ep.unit": ep_col("unit", (e.unit for e in eps), np.int32),
        "ep.session": ep_col("session", ep_session, np.int32, strs=True),
        "ep.summary": ep_col("summary", ep_summary, np.int32, strs=True),
        # semantics
        "sem.id": np.asarray(sem_keys, dtype=np.int64),
        "sem.seq": sem_col("seq", (x.seq for x in sems), np.int64),
        "sem.ts": sem_col("ts", (_opt(x.ts) for x in sems), np.float64),
        "sem.salience": sem_col("salience", (x.salience for x in sems), np.float64),
        "sem.llm": sem_col("llm", (x.llm for x in sems), bool),
        "sem.span": _column(sem_at, (x.span if x.span is not None else (-1, -1) for x in sems),
                            sem_src["span"] if sem_src is not None else None, np.int32, 2),
        "sem.unit": sem_col("unit", (x.unit for x in sems), np.int32),
        "sem.text": sem_col("text", sem_text, np.int32, strs=True),
        "sem.speaker": sem_col("speaker", sem_speaker, np.int32, strs=True),
        "sem_knn.ids": sem_knn[0].astype(np.int32),
        "sem_knn.dist": sem_knn[1].astype(np.int32),
        # themes
        "theme.cohesion": th.cohesion[: th.codes.n],
        "theme.sizes": th.sizes[: th.codes.n],
        "theme.nn_sim": th.nn_sim[: th.codes.n],
        "theme.nn_id": th.nn_id[: th.codes.n],
        "theme_knn.ids": theme_knn[0].astype(np.int32),
        "theme_knn.dist": theme_knn[1].astype(np.int32),
        "theme_of.keys": np.fromiter(th.theme_of.keys(), dtype=np.int64, count=len(th.theme_of)),
        "theme_of.vals": np.fromiter(th.theme_of.values(), dtype=np.int64, count=len(th.theme_of)),
        "theme.moved": np.asarray(sorted(th.moved), dtype=np.int64),
    }
    arrays["msg_semantics.keys"], arrays["msg_semantics.ptr"], arrays["msg_semantics.val"] = h.msg_semantics.csr()
    arrays["ep.messages.ptr"], arrays["ep.messages.val"] = ep_csr("messages", (e.message_ids for e in eps))
    arrays["ep.semantics.ptr"], arrays["ep.semantics.val"] = ep_csr("semantics", (e.semantic_ids for e in eps))
    arrays["ep.speakers.ptr"], arrays["ep.speakers.val"] = ep_csr("speakers", ep_speakers, np.int32, old)
    arrays["ep.spans.ptr"], arrays["ep.spans.val"] = ep_csr(
        "spans", (e.summary_spans for e in eps))
    arrays["sem.messages.ptr"], arrays["sem.messages.val"] = sem_csr("messages", (x.message_ids for x in sems))
    arrays["sem.episodes.ptr"], arrays["sem.episodes.val"] = sem_csr("episodes", (x.episode_ids for x in sems))
    remap = sem_src["remap"] if sem_src is not None else None
    arrays["sem.terms.ptr"], arrays["sem.terms.val"] = sem_csr(
        "terms", (x.terms for x in sems), np.int32, None if remap is None else (lambda v: remap[v]))
    _put_csr(arrays, "theme.members", th.members)
    _codeset(arrays, "msg_codes", h.msg_codes)
    _codeset(arrays, "ep_codes", h.ep_codes)
    _codeset(arrays, "sem_codes", h.sem_codes)
    _codeset(arrays, "theme_codes", th.codes)
    arrays.update(table)
    old_extra = sem_src["extra"] if sem_src is not None else {}
    built = iter(sems)
    extra = []
    for sid, p in zip(sem_keys, sem_at.tolist()):
        x = old_extra.get(sid) if p >= 0 else next(built).extra
        if x:
            extra.append([sid, x])
    arrays["sem.extra"] = np.frombuffer(json.dumps(extra, ensure_ascii=False).encode(), np.uint8)
    meta = {
        "fingerprint": fingerprint(h.cfg),
        "n_docs": h.n_docs, "last_seq": h.last_seq, "open_tokens": h.open_tokens, "flushes": h.flushes,
        "dedup_merges": h.dedup_merges, "reassignments": th.reassignments, "splits": th.splits, "merges": th.merges,
    }
    return meta, arrays


def load(cfg: HierarchyConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray],
         tokens_of: Callable[[int], tuple[np.ndarray, Any] | None], external_codes: Any = None) -> Hierarchy:
    """The hierarchy of a snapshot. ``tokens_of(message_id)`` gives ``(tokens, row)`` of a stored message with its
    ``seq``, ``ts``, ``session``, ``speaker``, ``role`` (for the CURRENT buffer), or None when it is gone.
    Episodes and semantics are built when first read (:class:`~hippo.engine.hierarchy.lazy.LazyUnits`)."""
    if meta.get("fingerprint") != fingerprint(cfg):
        raise ValueError("hierarchy snapshot was built with other settings")
    h = Hierarchy(cfg)
    h.external_codes = external_codes
    text = snapshot.StringTable(arrays)
    # stems: this process's ids for the snapshot's stems
    stem_ids = np.asarray(arrays["stem_ids"], dtype=np.int64)
    if arrays["stems"].shape != stem_ids.shape or arrays["df"].shape != stem_ids.shape:
        raise ValueError("hierarchy snapshot: stem table is inconsistent")
    text.check(arrays["stems"])
    local = np.asarray(V.vocab().stem_ids([text(int(k)) for k in arrays["stems"].tolist()]), dtype=np.int64)
    h.df.assign(local, np.asarray(arrays["df"], dtype=np.int64))
    h.n_docs = int(meta["n_docs"])
    h.last_seq = int(meta["last_seq"])
    h.open_tokens = int(meta["open_tokens"])
    h.flushes, h.dedup_merges = int(meta["flushes"]), int(meta["dedup_merges"])
    h.unit_end_seqs = [int(x) for x in arrays["unit_end_seqs"].tolist()]
    h.pending_tiny = [int(x) for x in arrays["pending_tiny"].tolist()]
    # codes
    _restore_codeset(h.msg_codes, arrays, "msg_codes")
    _restore_codeset(h.ep_codes, arrays, "ep_codes")
    _restore_codeset(h.sem_codes, arrays, "sem_codes")
    h.sem_codes.enable_index()
    h.msg_slot = IntMap(arrays["msg_slot.keys"], arrays["msg_slot.vals"])
    h.msg_episode = IntMap(arrays["msg_episode.keys"], arrays["msg_episode.vals"])
    slots = h.msg_slot.arrays()[1]
    if slots.size and (int(slots.min()) < 0 or int(slots.max()) >= h.msg_codes.n):
        raise ValueError("hierarchy snapshot: message code slot out of range")
    ms_keys = arrays["msg_semantics.keys"]
    ms = _Csr(arrays, "msg_semantics", ms_keys.shape[0])
    h.msg_semantics = ListMap.from_csr(ms_keys, *ms.pair())
    strings = (np.frombuffer(text.blob, dtype=np.uint8), np.asarray(arrays["strings.ptr"], dtype=np.int64))
    # episodes
    ep_ids = arrays["ep.id"].tolist()
    n_ep = len(ep_ids)
    if n_ep and (max(ep_ids) >= h.ep_codes.n or min(ep_ids) < 0):
        raise ValueError("hierarchy snapshot: episode ids out of range")
    ep_msgs, ep_sems = _Csr(arrays, "ep.messages", n_ep), _Csr(arrays, "ep.semantics", n_ep)
    ep_speakers, ep_spans = _Csr(arrays, "ep.speakers", n_ep), _Csr(arrays, "ep.spans", n_ep)
    ep_cols = [arrays[f"ep.{c}"] for c in ("first_seq", "last_seq", "t0", "t1", "n_tokens", "llm_summary", "unit",
                                           "session", "summary")]
    if any(c.shape != (n_ep,) for c in ep_cols):
        raise ValueError("hierarchy snapshot: episode columns disagree")
    text.check(ep_cols[7], optional=True)
    text.check(ep_cols[8])
    text.check(arrays["ep.speakers.val"])

    def episode(k: int) -> Episode:
        first, last, t0, t1, n_tok, llm, unit, session, summary = (c[k].item() for c in ep_cols)
        spans = ep_spans(k)
        return Episode(ep_ids[k], ep_msgs(k), first, last, _unopt(t0), _unopt(t1), text(session),
                       [text(x) for x in ep_speakers(k)], n_tok, text(summary), semantic_ids=ep_sems(k),
                       llm_summary=bool(llm), unit=unit, summary_spans=tuple(spans))

    h.episodes = LazyUnits(dict(zip(ep_ids, range(n_ep))), episode, {
        "cols": dict(zip(("first_seq", "last_seq", "t0", "t1", "n_tokens", "llm_summary", "unit", "session",
                          "summary"), ep_cols)),
        "csr": {"messages": ep_msgs.pair(), "semantics": ep_sems.pair(), "speakers": ep_speakers.pair(),
                "spans": ep_spans.pair()},
        "strings": strings})
    # semantics
    sem_ids = arrays["sem.id"].tolist()
    n_sem = len(sem_ids)
    if n_sem and (max(sem_ids) >= h.sem_codes.n or min(sem_ids) < 0):
        raise ValueError("hierarchy snapshot: semantic ids out of range")
    sem_msgs, sem_eps = _Csr(arrays, "sem.messages", n_sem), _Csr(arrays, "sem.episodes", n_sem)
    sem_terms = _Csr(arrays, "sem.terms", n_sem)
    sem_cols = [arrays[f"sem.{c}"] for c in ("seq", "ts", "salience", "llm", "unit", "text", "speaker")]
    spans = arrays["sem.span"]
    if any(c.shape != (n_sem,) for c in sem_cols) or spans.shape != (n_sem, 2):
        raise ValueError("hierarchy snapshot: semantic columns disagree")
    text.check(sem_cols[5])
    text.check(sem_cols[6], optional=True)
    extra = {int(sid): dict(x) for sid, x in json.loads(bytes(arrays["sem.extra"]).decode("utf-8"))}
    remap = np.full(int(stem_ids.max()) + 1 if stem_ids.size else 0, -1, dtype=np.int64)
    remap[stem_ids] = local
    if sem_terms.val.size and (sem_terms.val.min() < 0 or sem_terms.val.max() >= remap.size
                               or (remap[sem_terms.val] < 0).any()):
        raise ValueError("hierarchy snapshot: a semantic's term is not in the stem table")

    def semantic(k: int) -> Semantic:
        seq, ts, sal, llm, unit, txt, speaker = (c[k].item() for c in sem_cols)
        a, b = spans[k].tolist()
        sid = sem_ids[k]
        return Semantic(sid, text(txt), text(speaker), sem_msgs(k), sem_eps(k),
                        stem_terms(remap[np.asarray(sem_terms(k), dtype=np.int64)].tolist()), seq, _unopt(ts), sal,
                        bool(llm), extra=extra.get(sid) or None, span=(a, b) if a >= 0 else None, unit=unit)

    h.semantics = LazyUnits(dict(zip(sem_ids, range(n_sem))), semantic, {
        "cols": dict(zip(("seq", "ts", "salience", "llm", "unit", "text", "speaker"), sem_cols)), "span": spans,
        "csr": {"messages": sem_msgs.pair(), "episodes": sem_eps.pair(), "terms": sem_terms.pair()},
        "remap": remap, "extra": extra, "strings": strings})
    _restore_graph(h.sem_graph, arrays, "sem_knn", h.sem_codes.n)
    # themes
    th = h.themes
    _restore_codeset(th.codes, arrays, "theme_codes")
    n_th = th.codes.n
    members = _Csr(arrays, "theme.members", n_th)
    th.members = [members(t) for t in range(n_th)]
    th._grow()
    for name in ("cohesion", "sizes", "nn_sim", "nn_id"):
        values = arrays[f"theme.{name}"]
        if values.shape != (n_th,):
            raise ValueError(f"hierarchy snapshot: theme {name} has the wrong length")
        getattr(th, name)[:n_th] = values
    _restore_graph(th.graph, arrays, "theme_knn", n_th)
    th.theme_of = dict(zip(arrays["theme_of.keys"].tolist(), arrays["theme_of.vals"].tolist()))
    th.moved = set(arrays["theme.moved"].tolist()) & th.theme_of.keys()  # saved before gone ones were left out
    th.reassignments, th.splits, th.merges = int(meta["reassignments"]), int(meta["splits"]), int(meta["merges"])
    # the CURRENT buffer: messages waiting for consolidation, read back from the co-index
    gone = False
    for mid, closes in zip(arrays["buffer.ids"].tolist(), arrays["buffer.closes"].tolist()):
        got = tokens_of(mid)
        if got is None:
            # deleted since: replaying its deletion finds it in no unit, so it is taken out here as
            # Hierarchy.remove_messages takes a buffered message out (the flush unit it closed still ends there)
            gone = True
            if closes and h.buffer and not h.buffer[-1].closes:
                h.buffer[-1].closes = True
                h.ready += 1
            continue
        tokens, m = got
        h.buffer.append(Buffered(mid, m.seq, m.ts, m.session, m.speaker, m.role, tokens, int(tokens.size),
                                 closes=bool(closes)))
        h.buffer_tokens += int(tokens.size)
        h.ready += bool(closes)
    if gone:  # the open flush unit holds the tokens of the messages left in it only
        last = max((k for k, b in enumerate(h.buffer) if b.closes), default=-1)
        h.open_tokens = sum(b.n_tokens for b in h.buffer[last + 1:])
    return h


def _restore_graph(graph, arrays: dict, name: str, n: int) -> None:
    ids, dist = arrays[f"{name}.ids"], arrays[f"{name}.dist"]
    if ids.shape != (n, graph.k) or dist.shape != (n, graph.k):
        raise ValueError(f"hierarchy snapshot: {name} lists have the wrong shape")
    graph._fit()
    graph.ids[:n] = ids
    graph.dist[:n] = dist
