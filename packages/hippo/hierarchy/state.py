"""The hierarchy of one namespace: messages -> episodes -> semantics -> themes (seed 001 §3.2).

Maintained incrementally on every add with zero LLM calls: a message gets a binary code and joins the CURRENT
buffer (seed 003 §3.3); a flush cuts the buffer into episodes, distils each episode's salient sentences into
semantics (near-duplicates merge), and attaches every new semantic to a theme (split / merge under f(P)). Every
unit keeps provenance down to message ids. The whole structure is a deterministic function of the message
sequence, so it can always be rebuilt from the store; snapshots only save the replay.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Iterable

import numpy as np

from hippo import textnorm
from hippo.hierarchy import episodes as ep_mod
from hippo.hierarchy import semantics as sem_mod
from hippo.hierarchy.codes import CodeSet, Coder, content_terms, idf, similarity, term_weights
from hippo.hierarchy.config import HierarchyConfig
from hippo.hierarchy.episodes import Buffered, Episode
from hippo.hierarchy.knn import KnnGraph
from hippo.hierarchy.semantics import Semantic
from hippo.hierarchy.themes import ThemeSet


@dataclass
class Msg:
    """What the hierarchy needs of a stored message."""

    id: int
    seq: int
    ts: float | None
    session: str | None
    speaker: str | None
    role: str
    text: str
    n_tokens: int


def fingerprint(cfg: HierarchyConfig) -> dict[str, Any]:
    """The settings that shape the structure (a snapshot built under others is rebuilt)."""
    keep = ("code_bits", "flush_tokens", "flush_gap_s", "episode_min_messages", "episode_max_messages",
            "episode_window", "episode_depth", "summary_tokens", "semantic_min_terms", "semantics_per_message",
            "semantic_dedup", "theme_cap", "theme_attach", "theme_tiny", "merge_candidates", "split_trials", "knn_k")
    d = asdict(cfg)
    return {k: d[k] for k in keep}


class Hierarchy:
    def __init__(self, cfg: HierarchyConfig) -> None:
        self.cfg = cfg
        self.coder = Coder(cfg.code_bits)
        self.bits = cfg.code_bits
        self.words = cfg.code_bits // 64
        self.df: Counter[str] = Counter()
        self.n_docs = 0
        self.msg_codes = CodeSet(self.words)
        self.msg_slot: dict[int, int] = {}
        self.msg_episode: dict[int, int] = {}
        self.msg_semantics: dict[int, list[int]] = {}
        self.buffer: list[Buffered] = []
        self.buffer_tokens = 0
        self.episodes: dict[int, Episode] = {}
        self.ep_codes = CodeSet(self.words)
        self.semantics: dict[int, Semantic] = {}
        self.sem_codes = CodeSet(self.words)
        self.sem_graph = KnnGraph(self.sem_codes, self.bits, cfg.knn_k)
        self.themes = ThemeSet(self.bits, self.words, self.coder.tie, lambda s: self.sem_codes.codes[s],
                               cap=cfg.theme_cap, attach=cfg.theme_attach, tiny=cfg.theme_tiny,
                               merge_candidates=cfg.merge_candidates, split_trials=cfg.split_trials, knn_k=cfg.knn_k)
        self.pending_tiny: list[int] = []
        self.last_seq = -1
        self.flushes = 0
        self.dedup_merges = 0
        self._theme_summary: dict[int, str] = {}
        self.created: list[tuple[str, int]] = []  # ("episode" | "semantic" | "theme", id) since last drained

    # -- statistics -----------------------------------------------------------------------------------------
    @property
    def n_messages(self) -> int:
        return len(self.msg_slot)

    def stats(self) -> dict[str, Any]:
        n_sem = len(self.semantics)
        return {
            "messages": self.n_messages,
            "current_buffer": len(self.buffer),
            "episodes": len(self.episodes),
            "semantics": n_sem,
            "themes": len(self.themes),
            "reassignments": self.themes.reassignments,
            "reassigned_semantics": len(self.themes.moved),
            "reassignment_ratio": (len(self.themes.moved) / n_sem) if n_sem else 0.0,
            "splits": self.themes.splits,
            "merges": self.themes.merges,
            "dedup_merges": self.dedup_merges,
            "f_score": self.themes.score(),
            "semantics_per_theme": (n_sem / len(self.themes)) if len(self.themes) else 0.0,
        }

    # -- codes ----------------------------------------------------------------------------------------------
    def weights(self, terms: list[str]) -> dict[str, float]:
        return term_weights(terms, self.df, max(1, self.n_docs))

    def query_code(self, stems: list[str]) -> np.ndarray:
        return self.coder.code(self.weights(stems))

    def idf(self, term: str) -> float:
        return idf(max(1, self.n_docs), self.df.get(term, 0))

    def message_code(self, mid: int) -> np.ndarray | None:
        slot = self.msg_slot.get(mid)
        return None if slot is None else self.msg_codes.codes[slot]

    # -- adding ---------------------------------------------------------------------------------------------
    def _flush_due_before(self, m: Msg) -> bool:
        last = self.buffer[-1]
        if m.session != last.session:
            return True
        return m.ts is not None and last.ts is not None and m.ts - last.ts > self.cfg.flush_gap_s

    def add(self, msgs: Iterable[Msg]) -> list[Episode]:
        """Append messages in seq order; returns the episodes closed on the way."""
        closed: list[Episode] = []
        for m in msgs:
            if m.seq <= self.last_seq or m.id in self.msg_slot:
                continue
            if self.buffer and self._flush_due_before(m):
                closed += self.flush(final=True)
            terms = content_terms(m.text)
            for t in set(terms):
                self.df[t] += 1
            self.n_docs += 1
            acc = self.coder.accumulate(self.weights(terms))
            self.msg_slot[m.id] = self.msg_codes.append(self.coder.sign(acc))
            self.buffer.append(Buffered(m.id, m.seq, m.ts, m.session, m.speaker, m.role, m.text, m.n_tokens,
                                        terms, acc))
            self.buffer_tokens += m.n_tokens
            self.last_seq = m.seq
            if self.buffer_tokens >= self.cfg.flush_tokens:
                closed += self.flush(final=False)
        return closed

    def flush(self, final: bool = True) -> list[Episode]:
        """Cut the CURRENT buffer into episodes. With ``final=False`` the last block stays buffered (it may go on)."""
        if not self.buffer:
            return []
        cfg = self.cfg
        blocks = ep_mod.segment([b.acc for b in self.buffer], min_messages=cfg.episode_min_messages,
                                max_messages=cfg.episode_max_messages, window=cfg.episode_window,
                                depth=cfg.episode_depth)
        if not final and len(blocks) > 1:
            emit, keep_from = blocks[:-1], blocks[-1][0]
        else:
            emit, keep_from = blocks, len(self.buffer)
        closed = [self._close_episode(self.buffer[lo:hi]) for lo, hi in emit]
        self.buffer = self.buffer[keep_from:]
        self.buffer_tokens = sum(b.n_tokens for b in self.buffer)
        self.flushes += 1
        # tiny themes from earlier flushes had their chance to grow: consider merging them now
        for t in self.pending_tiny:
            if self.themes.codes.alive[t]:
                self.themes.consider_merge(t)
        self.pending_tiny = sorted({self.themes.theme_of[s] for e in closed for s in e.semantic_ids
                                    if s in self.themes.theme_of
                                    and len(self.themes.members[self.themes.theme_of[s]]) <= self.themes.tiny})
        self._theme_summary.clear()
        return closed

    def _close_episode(self, block: list[Buffered]) -> Episode:
        acc = np.sum([b.acc for b in block], axis=0)
        eid = self.ep_codes.append(self.coder.sign(acc))
        items = [(b.id, b.speaker, b.text) for b in block]
        cands = sem_mod.candidates(items, self.df, self.n_docs, self.cfg.semantic_min_terms)
        summary = ep_mod.summarize(items, cands, self.cfg.summary_tokens)
        speakers = list(dict.fromkeys(b.speaker for b in block if b.speaker))
        times = [b.ts for b in block if b.ts is not None]
        ep = Episode(eid, [b.id for b in block], block[0].seq, block[-1].seq, min(times) if times else None,
                     max(times) if times else None, block[0].session, speakers, sum(b.n_tokens for b in block),
                     summary)
        self.episodes[eid] = ep
        self.created.append(("episode", eid))
        for b in block:
            self.msg_episode[b.id] = eid
        by_id = {b.id: b for b in block}
        picked = sem_mod.select(cands, len(block), self.cfg.semantics_per_message)
        for mid, sentence, terms, sal in picked:
            b = by_id[mid]
            self.add_semantic(sem_mod.render(b.speaker, sentence), b.speaker, [mid], eid, terms, b.seq, b.ts, sal)
        return ep

    def add_semantic(self, text: str, speaker: str | None, mids: list[int], eid: int, terms: list[str], seq: int,
                     ts: float | None, salience: float, llm: bool = False) -> int:
        """Add a fact or merge it into a near-duplicate; returns its semantic id."""
        code = self.coder.code(self.weights(terms))
        top, dist = self.sem_codes.top(code, 1)
        ep = self.episodes.get(eid)
        if top.size and 1.0 - 2.0 * float(dist[0]) / self.bits >= self.cfg.semantic_dedup:
            sid = int(top[0])
            s = self.semantics[sid]
            for mid in mids:
                if mid not in s.message_ids:
                    s.message_ids.append(mid)
            if eid not in s.episode_ids:
                s.episode_ids.append(eid)
            self.dedup_merges += 1
        else:
            sid = self.sem_codes.append(code)
            key_terms = list(dict.fromkeys(terms + ([textnorm.stem(speaker.lower())] if speaker else [])))
            self.semantics[sid] = Semantic(sid, text, speaker, list(dict.fromkeys(mids)), [eid], tuple(key_terms),
                                           seq, ts, salience, llm)
            self.sem_graph.update(sid)
            self.created.append(("semantic", sid))
            self.themes.attach(sid)
        for mid in mids:
            lst = self.msg_semantics.setdefault(mid, [])
            if sid not in lst:
                lst.append(sid)
        if ep is not None and sid not in ep.semantic_ids:
            ep.semantic_ids.append(sid)
        return sid

    def drain_created(self) -> list[tuple[str, int]]:
        """Units created since the last call (themes included), for the lifecycle's strength records."""
        out = self.created + [("theme", t) for t in self.themes.drain_created()]
        self.created = []
        return out

    def drop_semantic(self, sid: int) -> None:
        s = self.semantics.pop(sid, None)
        if s is None:
            return
        for mid in s.message_ids:
            lst = self.msg_semantics.get(mid)
            if lst and sid in lst:
                lst.remove(sid)
        for eid in s.episode_ids:
            e = self.episodes.get(eid)
            if e is not None and sid in e.semantic_ids:
                e.semantic_ids.remove(sid)
        self.sem_codes.kill(sid)
        self.sem_graph.remove(sid)
        self.themes.remove_semantic(sid)
        self._theme_summary.clear()

    def drop_episode(self, eid: int) -> None:
        e = self.episodes.pop(eid, None)
        if e is None:
            return
        for mid in e.message_ids:
            if self.msg_episode.get(mid) == eid:
                del self.msg_episode[mid]
        for sid in list(e.semantic_ids):
            s = self.semantics.get(sid)
            if s is not None and eid in s.episode_ids:
                s.episode_ids.remove(eid)
        self.ep_codes.kill(eid)

    # -- deleting -------------------------------------------------------------------------------------------
    def remove_messages(self, ids: Iterable[int]) -> None:
        """Forget messages everywhere; units left without provenance disappear."""
        dead = {int(i) for i in ids if int(i) in self.msg_slot}
        if not dead:
            return
        if any(b.id in dead for b in self.buffer):
            self.buffer = [b for b in self.buffer if b.id not in dead]
            self.buffer_tokens = sum(b.n_tokens for b in self.buffer)
        touched_eps: set[int] = set()
        touched_sems: set[int] = set()
        for mid in dead:
            self.msg_codes.kill(self.msg_slot.pop(mid))
            eid = self.msg_episode.pop(mid, None)
            if eid is not None:
                touched_eps.add(eid)
            touched_sems.update(self.msg_semantics.pop(mid, []))
        for eid in touched_eps:
            e = self.episodes.get(eid)
            if e is None:
                continue
            e.message_ids = [m for m in e.message_ids if m not in dead]
            if not e.message_ids:
                self.drop_episode(eid)
        for sid in touched_sems:
            s = self.semantics.get(sid)
            if s is None:
                continue
            s.message_ids = [m for m in s.message_ids if m not in dead]
            if not s.message_ids:
                self.drop_semantic(sid)
        self._theme_summary.clear()

    # -- reading --------------------------------------------------------------------------------------------
    def theme_summary(self, t: int, max_terms: int = 6) -> str:
        """Offline theme summary: its most characteristic terms and its most central semantic."""
        got = self._theme_summary.get(t)
        if got is not None:
            return got
        members = [s for s in self.themes.members[t] if s in self.semantics]
        if not members:
            return ""
        weight: Counter[str] = Counter()
        speakers = {textnorm.stem(self.semantics[s].speaker.lower()) for s in members if self.semantics[s].speaker}
        for s in members:
            for term in self.semantics[s].terms:
                if term not in speakers:
                    weight[term] += self.idf(term)
        top = [t_ for t_, _ in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))[:max_terms]]
        codes = self.sem_codes.codes[members]
        central = members[int(np.argmax(similarity(self.themes.codes.codes[t], codes, self.bits)))]
        text = f"{', '.join(top)} — {self.semantics[central].text}" if top else self.semantics[central].text
        self._theme_summary[t] = text
        return text

    def theme_messages(self, t: int) -> list[int]:
        out: dict[int, None] = {}
        for s in self.themes.members[t]:
            sem = self.semantics.get(s)
            if sem is not None:
                for m in sem.message_ids:
                    out[m] = None
        return list(out)

    # -- snapshots ------------------------------------------------------------------------------------------
    def to_snapshot(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        th = self.themes
        n_msg = self.msg_codes.n
        slot_ids = np.full(n_msg, -1, dtype=np.int64)
        for mid, slot in self.msg_slot.items():
            slot_ids[slot] = mid
        meta = {
            "fingerprint": fingerprint(self.cfg),
            "last_seq": self.last_seq,
            "n_docs": self.n_docs,
            "df": dict(self.df),
            "buffer": [b.id for b in self.buffer],
            "episodes": [asdict(e) for e in self.episodes.values()],
            "semantics": [asdict(s) for s in self.semantics.values()],
            "theme_members": [list(m) for m in th.members],
            "theme_moved": sorted(th.moved),
            "counters": {"reassignments": th.reassignments, "splits": th.splits, "merges": th.merges,
                         "flushes": self.flushes, "dedup_merges": self.dedup_merges},
            "pending_tiny": self.pending_tiny,
        }
        arrays = {
            "msg_codes": self.msg_codes.codes[:n_msg], "msg_alive": self.msg_codes.alive[:n_msg],
            "msg_ids": slot_ids,
            "ep_codes": self.ep_codes.codes[: self.ep_codes.n], "ep_alive": self.ep_codes.alive[: self.ep_codes.n],
            "sem_codes": self.sem_codes.codes[: self.sem_codes.n],
            "sem_alive": self.sem_codes.alive[: self.sem_codes.n],
            "sem_knn_ids": self.sem_graph.ids[: self.sem_codes.n], "sem_knn_dist": self.sem_graph.dist[: self.sem_codes.n],
            "theme_codes": th.codes.codes[: th.codes.n], "theme_alive": th.codes.alive[: th.codes.n],
            "theme_cohesion": th.cohesion[: th.codes.n], "theme_nn_sim": th.nn_sim[: th.codes.n],
            "theme_nn_id": th.nn_id[: th.codes.n],
            "theme_knn_ids": th.graph.ids[: th.codes.n], "theme_knn_dist": th.graph.dist[: th.codes.n],
        }
        return meta, arrays

    @classmethod
    def from_snapshot(cls, cfg: HierarchyConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray],
                      buffered: list[Msg]) -> "Hierarchy":
        """Restore a snapshot; ``buffered`` are the messages of the CURRENT buffer, re-read from the store."""
        h = cls(cfg)
        words = h.words

        def codes_into(cs: CodeSet, codes: np.ndarray, alive: np.ndarray) -> None:
            codes = np.asarray(codes, dtype=np.uint64).reshape(-1, words)
            cs._grow(max(1, codes.shape[0]))
            cs.codes[: codes.shape[0]] = codes
            cs.alive[: codes.shape[0]] = alive
            cs.n = codes.shape[0]

        h.last_seq = int(meta["last_seq"])
        h.n_docs = int(meta["n_docs"])
        h.df = Counter({str(k): int(v) for k, v in meta["df"].items()})
        codes_into(h.msg_codes, arrays["msg_codes"], arrays["msg_alive"])
        h.msg_slot = {int(mid): slot for slot, mid in enumerate(arrays["msg_ids"].tolist()) if mid >= 0}
        codes_into(h.ep_codes, arrays["ep_codes"], arrays["ep_alive"])
        for d in meta["episodes"]:
            e = Episode(**d)
            h.episodes[e.id] = e
            for mid in e.message_ids:
                h.msg_episode[mid] = e.id
        codes_into(h.sem_codes, arrays["sem_codes"], arrays["sem_alive"])
        for d in meta["semantics"]:
            d = dict(d)
            d["terms"] = tuple(d["terms"])
            s = Semantic(**d)
            h.semantics[s.id] = s
            for mid in s.message_ids:
                h.msg_semantics.setdefault(mid, []).append(s.id)
        g = h.sem_graph
        g._fit()
        n = h.sem_codes.n
        g.ids[:n] = arrays["sem_knn_ids"].reshape(n, -1)[:, : g.k]
        g.dist[:n] = arrays["sem_knn_dist"].reshape(n, -1)[:, : g.k]
        th = h.themes
        codes_into(th.codes, arrays["theme_codes"], arrays["theme_alive"])
        th.members = [list(map(int, m)) for m in meta["theme_members"]]
        th._grow()
        k = th.codes.n
        th.cohesion[:k] = arrays["theme_cohesion"]
        th.nn_sim[:k] = arrays["theme_nn_sim"]
        th.nn_id[:k] = arrays["theme_nn_id"]
        th.graph._fit()
        th.graph.ids[:k] = arrays["theme_knn_ids"].reshape(k, -1)[:, : th.graph.k]
        th.graph.dist[:k] = arrays["theme_knn_dist"].reshape(k, -1)[:, : th.graph.k]
        th.theme_of = {s: t for t, mem in enumerate(th.members) for s in mem}
        th.moved = set(map(int, meta["theme_moved"]))
        c = meta["counters"]
        th.reassignments, th.splits, th.merges = int(c["reassignments"]), int(c["splits"]), int(c["merges"])
        h.flushes, h.dedup_merges = int(c["flushes"]), int(c["dedup_merges"])
        h.pending_tiny = [int(t) for t in meta["pending_tiny"]]
        by_id = {m.id: m for m in buffered}
        for mid in meta["buffer"]:
            m = by_id.get(int(mid))
            if m is None:
                continue
            terms = content_terms(m.text)
            acc = h.coder.accumulate(h.weights(terms))
            h.buffer.append(Buffered(m.id, m.seq, m.ts, m.session, m.speaker, m.role, m.text, m.n_tokens, terms, acc))
            h.buffer_tokens += m.n_tokens
        return h
