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
from hippo.engine.hierarchy.lazy import IntMap, LazyUnits
from hippo.engine.hierarchy.semantics import Semantic
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


def _df_of(df: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Document frequencies of stem ids (0 for ids past the table: stems only semantics use, never counted)."""
    out = np.zeros(ids.size, dtype=np.int64)
    inside = ids < df.size
    out[inside] = df[ids[inside]]
    return out


def dump(h: Hierarchy) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The state of ``h`` (which must have no units waiting in ``created``: they are drained by the lifecycle)."""
    th = h.themes
    eps = [h.episodes[k] for k in sorted(h.episodes)]
    sems = [h.semantics[k] for k in sorted(h.semantics)]
    stems_used = set(np.flatnonzero(h.df).tolist())
    for x in sems:
        stems_used.update(x.terms)
    vocab = V.vocab()
    stem_ids = sorted(i for i in stems_used if 0 <= i < vocab.n_stems)
    strings = snapshot.Strings()
    arrays: dict[str, np.ndarray] = {
        "stems": np.asarray([strings(vocab.stems[i]) for i in stem_ids], dtype=np.int64),
        "stem_ids": np.asarray(stem_ids, dtype=np.int64),
        "df": _df_of(h.df, np.asarray(stem_ids, dtype=np.int64)),
        "unit_end_seqs": np.asarray(h.unit_end_seqs, dtype=np.int64),
        "pending_tiny": np.asarray(h.pending_tiny, dtype=np.int64),
        "buffer.ids": np.asarray([b.id for b in h.buffer], dtype=np.int64),
        "buffer.closes": np.asarray([b.closes for b in h.buffer], dtype=bool),
        **_int_map("msg_slot", h.msg_slot),
        **_int_map("msg_episode", h.msg_episode),
        # episodes
        "ep.id": np.asarray([e.id for e in eps], dtype=np.int64),
        "ep.first_seq": np.asarray([e.first_seq for e in eps], dtype=np.int64),
        "ep.last_seq": np.asarray([e.last_seq for e in eps], dtype=np.int64),
        "ep.t0": np.asarray([_opt(e.t0) for e in eps], dtype=np.float64),
        "ep.t1": np.asarray([_opt(e.t1) for e in eps], dtype=np.float64),
        "ep.n_tokens": np.asarray([e.n_tokens for e in eps], dtype=np.int64),
        "ep.llm_summary": np.asarray([e.llm_summary for e in eps], dtype=bool),
        "ep.unit": np.asarray([e.unit for e in eps], dtype=np.int32),
        "ep.session": np.asarray([strings(e.session) for e in eps], dtype=np.int32),
        "ep.summary": np.asarray([strings(e.summary) for e in eps], dtype=np.int32),
        # semantics
        "sem.id": np.asarray([x.id for x in sems], dtype=np.int64),
        "sem.seq": np.asarray([x.seq for x in sems], dtype=np.int64),
        "sem.ts": np.asarray([_opt(x.ts) for x in sems], dtype=np.float64),
        "sem.salience": np.asarray([x.salience for x in sems], dtype=np.float64),
        "sem.llm": np.asarray([x.llm for x in sems], dtype=bool),
        "sem.span": np.asarray([x.span if x.span is not None else (-1, -1) for x in sems],
                               dtype=np.int32).reshape(-1, 2),
        "sem.unit": np.asarray([x.unit for x in sems], dtype=np.int32),
        "sem.text": np.asarray([strings(x.text) for x in sems], dtype=np.int32),
        "sem.speaker": np.asarray([strings(x.speaker) for x in sems], dtype=np.int32),
        "sem_knn.ids": h.sem_graph.ids[: h.sem_codes.n].astype(np.int32),
        "sem_knn.dist": h.sem_graph.dist[: h.sem_codes.n].astype(np.int32),
        # themes
        "theme.cohesion": th.cohesion[: th.codes.n],
        "theme.sizes": th.sizes[: th.codes.n],
        "theme.nn_sim": th.nn_sim[: th.codes.n],
        "theme.nn_id": th.nn_id[: th.codes.n],
        "theme_knn.ids": th.graph.ids[: th.codes.n].astype(np.int32),
        "theme_knn.dist": th.graph.dist[: th.codes.n].astype(np.int32),
        "theme_of.keys": np.fromiter(th.theme_of.keys(), dtype=np.int64, count=len(th.theme_of)),
        "theme_of.vals": np.fromiter(th.theme_of.values(), dtype=np.int64, count=len(th.theme_of)),
        "theme.moved": np.asarray(sorted(th.moved), dtype=np.int64),
    }
    ms_keys = list(h.msg_semantics.keys())
    arrays["msg_semantics.keys"] = np.asarray(ms_keys, dtype=np.int64)
    _put_csr(arrays, "msg_semantics", (h.msg_semantics[k] for k in ms_keys))
    _put_csr(arrays, "ep.messages", (e.message_ids for e in eps))
    _put_csr(arrays, "ep.semantics", (e.semantic_ids for e in eps))
    _put_csr(arrays, "ep.speakers", ([strings(x) for x in e.speakers] for e in eps), np.int32)
    _put_csr(arrays, "ep.spans", ([v for span in e.summary_spans for v in span] for e in eps))
    _put_csr(arrays, "sem.messages", (x.message_ids for x in sems))
    _put_csr(arrays, "sem.episodes", (x.episode_ids for x in sems))
    _put_csr(arrays, "sem.terms", (x.terms for x in sems), np.int32)
    _put_csr(arrays, "theme.members", th.members)
    _codeset(arrays, "msg_codes", h.msg_codes)
    _codeset(arrays, "ep_codes", h.ep_codes)
    _codeset(arrays, "sem_codes", h.sem_codes)
    _codeset(arrays, "theme_codes", th.codes)
    arrays.update(strings.arrays())
    extra = [[x.id, x.extra] for x in sems if x.extra]
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
    local = np.asarray(V.vocab().query_stem_ids([text(int(k)) for k in arrays["stems"].tolist()]), dtype=np.int64)
    h._fit_df(int(local.max()) + 1 if local.size else 0)
    h.df[local] = np.asarray(arrays["df"], dtype=np.int64)
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
    keys = arrays["msg_semantics.keys"].tolist()
    ms = _Csr(arrays, "msg_semantics", len(keys))
    h.msg_semantics = LazyUnits(dict(zip(keys, range(len(keys)))), ms)
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
                       llm_summary=bool(llm), unit=unit, summary_spans=[spans[j: j + 3] for j in range(0, len(spans), 3)])

    h.episodes = LazyUnits(dict(zip(ep_ids, range(n_ep))), episode)
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
                        tuple(remap[np.asarray(sem_terms(k), dtype=np.int64)].tolist()), seq, _unopt(ts), sal,
                        bool(llm), extra=extra.get(sid, {}), span=(a, b) if a >= 0 else None, unit=unit)

    h.semantics = LazyUnits(dict(zip(sem_ids, range(n_sem))), semantic)
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
    th.moved = set(arrays["theme.moved"].tolist())
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
