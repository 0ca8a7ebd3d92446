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

from hippo import textnorm, tokenizer
from hippo.hierarchy import episodes as ep_mod
from hippo.hierarchy import semantics as sem_mod
from hippo.hierarchy import vocab as V
from hippo.hierarchy.codes import (CodeSet, Coder, bag_pairs, bag_vectors, hamming, idf, idf_array, sign_many,
                                   similarity, weigh_ids)
from hippo.hierarchy.config import HierarchyConfig
from hippo.hierarchy.episodes import Buffered, Episode
from hippo.hierarchy.knn import KnnGraph
from hippo.hierarchy.semantics import Semantic
from hippo.hierarchy.themes import ThemeSet


MERGE_EVERY = 4  # flushes between rounds of tiny-theme merges


@dataclass
class Msg:
    """What the hierarchy needs of a stored message: its metadata and its token ids."""

    id: int
    seq: int
    ts: float | None
    session: str | None
    speaker: str | None
    role: str
    tokens: np.ndarray
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
        self.df = np.zeros(1024, dtype=np.int64)   # messages containing each stem id
        self.n_docs = 0
        self.msg_codes = CodeSet(self.words)
        self.msg_slot: dict[int, int] = {}
        self.msg_episode: dict[int, int] = {}
        self.msg_semantics: dict[int, list[int]] = {}
        self.buffer: list[Buffered] = []   # the CURRENT buffer: messages not yet consolidated, in order
        self.buffer_tokens = 0
        self.open_tokens = 0                # tokens of the open (last, unfinished) flush unit
        self.ready = 0                      # complete flush units waiting in the buffer
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
        return len(self.msg_slot) + sum(1 for b in self.buffer if b.acc is None)

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
    def idf_of(self, ids) -> np.ndarray:
        """idf of stem ids (read-only: readers call it concurrently; unseen stems have df 0)."""
        ids = np.asarray(ids, dtype=np.int64)
        df = self.df
        known = np.where(ids < df.size, df[np.minimum(ids, df.size - 1)], 0) if ids.size else ids
        return idf_array(max(1, self.n_docs), known)

    def idf(self, term: str) -> float:
        sid = V.vocab().stem_id(term)
        if sid < 0 or sid >= self.df.size:
            return idf(max(1, self.n_docs), 0)
        return idf(max(1, self.n_docs), int(self.df[sid]))

    def _fit_df(self, need: int) -> None:
        if need > self.df.size:
            df = np.zeros(max(need, 2 * self.df.size), dtype=np.int64)
            df[: self.df.size] = self.df
            self.df = df

    def code_of_stems(self, stems: np.ndarray) -> np.ndarray:
        u, w = weigh_ids(stems, self.df, max(1, self.n_docs))
        return self.coder.code_ids(u, w)

    def query_code(self, stem_ids: list[int]) -> np.ndarray:
        return self.code_of_stems(np.asarray(stem_ids, dtype=np.int64))

    def message_code(self, mid: int) -> np.ndarray | None:
        slot = self.msg_slot.get(mid)
        return None if slot is None else self.msg_codes.codes[slot]

    # -- adding ---------------------------------------------------------------------------------------------
    def _flush_due_before(self, m: Msg) -> bool:
        last = self.buffer[-1]
        if m.session != last.session:
            return True
        return m.ts is not None and last.ts is not None and m.ts - last.ts > self.cfg.flush_gap_s

    def add(self, msgs: Iterable[Msg]) -> None:
        """Append messages in seq order to the CURRENT buffer and mark where flush units end (seed 003 Eq. 1: a
        session change, a wall-clock gap, or ``flush_tokens`` tokens). Cheap: no unit is built here; complete
        units are consolidated by :meth:`consolidate`, in order, so the result does not depend on when."""
        for m in msgs:
            if m.seq <= self.last_seq or m.id in self.msg_slot:
                continue
            if self.buffer and not self.buffer[-1].closes and self._flush_due_before(m):
                self.buffer[-1].closes = True
                self.open_tokens = 0
            self.buffer.append(Buffered(m.id, m.seq, m.ts, m.session, m.speaker, m.role,
                                        np.asarray(m.tokens, dtype=np.uint32), m.n_tokens))
            self.buffer_tokens += m.n_tokens
            self.open_tokens += m.n_tokens
            self.last_seq = m.seq
            if self.open_tokens >= self.cfg.flush_tokens:
                self.buffer[-1].closes = True
                self.open_tokens = 0
            if self.buffer[-1].closes:
                self.ready += 1

    @property
    def ready_messages(self) -> int:
        """Buffered messages that belong to complete flush units (consolidated by the next :meth:`consolidate`)."""
        last = max((k for k, b in enumerate(self.buffer) if b.closes), default=-1)
        return last + 1

    def _encode(self, todo: list[Buffered]) -> None:
        """Stems, document frequencies, vectors and codes of messages (one vectorized batch)."""
        todo = [b for b in todo if b.acc is None]
        if not todo:
            return
        for b in todo:
            b.stems = V.content_stems(b.tokens)
        group = np.repeat(np.arange(len(todo)), [b.stems.size for b in todo])
        pg, ps, cnt = bag_pairs(group, np.concatenate([b.stems for b in todo]))
        self._fit_df(int(ps.max()) + 1 if ps.size else 0)
        self.df += np.bincount(ps, minlength=self.df.size)[: self.df.size]
        self.n_docs += len(todo)
        weights = idf_array(self.n_docs, self.df[ps]) * (1.0 + np.log(cnt))
        acc = bag_vectors(self.coder, pg, ps, weights, len(todo))
        slots = self.msg_codes.append_many(sign_many(self.coder, acc))
        for b, a, slot in zip(todo, acc, slots.tolist()):
            b.acc = a
            self.msg_slot[b.id] = slot

    def consolidate(self, final: bool = False) -> list[Episode]:
        """Turn complete flush units of the CURRENT buffer into episodes, semantics and themes, unit by unit;
        with ``final=True`` the open unit too (deep consolidation, session end)."""
        closed: list[Episode] = []
        while self.buffer:
            end = next((k + 1 for k, b in enumerate(self.buffer) if b.closes), None)
            if end is None:
                if not final:
                    break
                end = len(self.buffer)
                self.open_tokens = 0
            closed += self._consolidate_unit(self.buffer[:end])
            self.buffer = self.buffer[end:]
            self.buffer_tokens = sum(b.n_tokens for b in self.buffer)
            self.ready = sum(1 for b in self.buffer if b.closes)
        return closed

    flush = consolidate  # seed 003's name for it

    def _consolidate_unit(self, unit: list[Buffered]) -> list[Episode]:
        cfg = self.cfg
        self._encode(unit)
        blocks = ep_mod.segment([b.acc for b in unit], min_messages=cfg.episode_min_messages,
                                max_messages=cfg.episode_max_messages, window=cfg.episode_window,
                                depth=cfg.episode_depth)
        idf_all = idf_array(max(1, self.n_docs), self.df)
        norm = max(1.0, float(np.log(2.0 + self.n_docs)))
        cands = sem_mod.batch_candidates([b.id for b in unit], [b.tokens for b in unit], [b.stems for b in unit],
                                         idf_all, norm, cfg.semantic_min_terms)
        facts: list[tuple] = []
        closed = [self._close_episode(unit[lo:hi], cands, facts) for lo, hi in blocks]
        self._insert_semantics(facts)
        self.flushes += 1
        # tiny themes had a few flushes to grow: consider merging them now (in batches, f(P) decides)
        tiny = {self.themes.theme_of[s] for e in closed for s in e.semantic_ids if s in self.themes.theme_of
                and len(self.themes.members[self.themes.theme_of[s]]) <= self.themes.tiny}
        self.pending_tiny = sorted(set(self.pending_tiny) | tiny)
        if self.flushes % MERGE_EVERY == 0:
            due, self.pending_tiny = self.pending_tiny, sorted(tiny)
            for t in due:
                if t not in tiny and self.themes.codes.alive[t]:
                    self.themes.consider_merge(t)
        self._theme_summary.clear()
        return closed

    def _close_episode(self, block: list[Buffered], cands_of: dict[int, list], facts: list) -> Episode:
        acc = np.sum([b.acc for b in block], axis=0)
        eid = self.ep_codes.append(self.coder.sign(acc))
        cands = [c for b in block for c in cands_of.get(b.id, ())]
        texts = {b.id: (b.speaker, b.tokens) for b in block}
        summary = ep_mod.summarize(cands, texts, self.cfg.summary_tokens)
        if not summary:
            first = block[0]
            summary = sem_mod.render(first.speaker, first.text[:200].strip())
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
        for c in sem_mod.select(cands, len(block), self.cfg.semantics_per_message):
            b = by_id[c.message_id]
            text = sem_mod.render(b.speaker, sem_mod.span_text(b.tokens, c))
            facts.append((text, b.speaker, [b.id], eid, c.stems, b.seq, b.ts, c.salience, False))
        return ep

    def add_semantic(self, text: str, speaker: str | None, mids: list[int], eid: int, stems, seq: int,
                     ts: float | None, salience: float, llm: bool = False) -> int:
        """Add one fact (stems: content stem ids, or its text's stems when None) or merge it into a
        near-duplicate; returns its semantic id."""
        if stems is None:
            stems = V.text_stems(text.split(": ", 1)[1] if speaker and text.startswith(f"{speaker}: ") else text)
        return self._insert_semantics([(text, speaker, mids, eid, np.asarray(stems, dtype=np.int64), seq, ts,
                                        salience, llm)])[0]

    def _speaker_stem(self, speaker: str | None) -> list[int]:
        if not speaker:
            return []
        return [i for i in V.vocab().query_stem_ids([textnorm.stem(speaker.lower())]) if i >= 0]

    def _insert_semantics(self, facts: list[tuple]) -> list[int]:
        """Dedup against existing semantics, then add the rest to the kNN graph and the themes in one batch."""
        if not facts:
            return []
        group = np.repeat(np.arange(len(facts)), [np.asarray(f[4]).size for f in facts])
        pg, ps, cnt = bag_pairs(group, np.concatenate([np.asarray(f[4], dtype=np.int64) for f in facts]))
        self._fit_df(int(ps.max()) + 1 if ps.size else 0)
        weights = idf_array(max(1, self.n_docs), self.df[ps]) * (1.0 + np.log(cnt))
        codes = sign_many(self.coder, bag_vectors(self.coder, pg, ps, weights, len(facts)))
        n = self.sem_codes.n
        dist = (hamming(codes[:, None, :], self.sem_codes.codes[:n][None, :, :]) if n
                else np.zeros((len(facts), 0), dtype=np.int64))
        if n:
            dist[:, ~self.sem_codes.alive[:n]] = 1 << 30
        limit = (1.0 - self.cfg.semantic_dedup) * self.bits / 2.0  # similarity >= dedup <=> distance <= limit
        out: list[int] = []
        new: list[int] = []
        for j, (text, speaker, mids, eid, stems, seq, ts, sal, llm) in enumerate(facts):
            sid = -1
            if n and dist[j].min() <= limit:
                sid = int(np.argmin(dist[j]))
            for other in new:  # near-duplicates inside the batch
                if sid < 0 and int(hamming(codes[j], self.sem_codes.codes[other])) <= limit:
                    sid = other
            ep = self.episodes.get(eid)
            if sid >= 0:
                s = self.semantics[sid]
                for mid in mids:
                    if mid not in s.message_ids:
                        s.message_ids.append(mid)
                if eid not in s.episode_ids:
                    s.episode_ids.append(eid)
                self.dedup_merges += 1
            else:
                sid = self.sem_codes.append(codes[j])
                terms = tuple(dict.fromkeys(np.unique(stems).tolist() + self._speaker_stem(speaker)))
                self.semantics[sid] = Semantic(sid, text, speaker, list(dict.fromkeys(mids)), [eid], terms, seq, ts,
                                               float(sal), llm)
                self.created.append(("semantic", sid))
                new.append(sid)
            for mid in mids:
                lst = self.msg_semantics.setdefault(mid, [])
                if sid not in lst:
                    lst.append(sid)
            if ep is not None and sid not in ep.semantic_ids:
                ep.semantic_ids.append(sid)
            out.append(sid)
        if new:
            self.sem_graph.refresh(new)
            self.themes.attach_batch(new)
        return out

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
        ids = {int(i) for i in ids}
        buffered = {b.id for b in self.buffer}
        dead = {i for i in ids if i in self.msg_slot or i in buffered}
        if not dead:
            return
        if buffered & dead:
            kept: list[Buffered] = []
            for b in self.buffer:
                if b.id in dead:
                    if b.closes and kept and not kept[-1].closes:
                        kept[-1].closes = True  # the unit still ends here
                    continue
                kept.append(b)
            self.buffer = kept
            self.buffer_tokens = sum(b.n_tokens for b in kept)
            self.ready = sum(1 for b in kept if b.closes)
            last = max((k for k, b in enumerate(kept) if b.closes), default=-1)
            self.open_tokens = sum(b.n_tokens for b in kept[last + 1 :])
        touched_eps: set[int] = set()
        touched_sems: set[int] = set()
        for mid in dead:
            if mid in self.msg_slot:
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
        weight: Counter[int] = Counter()
        speakers = {i for s in members for i in self._speaker_stem(self.semantics[s].speaker)}
        for s in members:
            terms = [t_ for t_ in self.semantics[s].terms if t_ not in speakers]
            for term, w in zip(terms, self.idf_of(terms).tolist()):
                weight[term] += w
        stems = V.vocab().stems
        top = [stems[t_] for t_, _ in sorted(weight.items(), key=lambda kv: (-kv[1], stems[kv[0]]))[:max_terms]]
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
        stems = V.vocab().stems
        n_msg = self.msg_codes.n
        slot_ids = np.full(n_msg, -1, dtype=np.int64)
        for mid, slot in self.msg_slot.items():
            slot_ids[slot] = mid
        meta = {
            "fingerprint": fingerprint(self.cfg),
            "last_seq": self.last_seq,
            "n_docs": self.n_docs,
            "df": {stems[i]: int(self.df[i]) for i in np.flatnonzero(self.df).tolist()},
            "buffer": [b.id for b in self.buffer],
            "buffer_encoded": [b.id for b in self.buffer if b.acc is not None],
            "buffer_closes": [b.id for b in self.buffer if b.closes],
            "open_tokens": self.open_tokens,
            "episodes": [asdict(e) for e in self.episodes.values()],
            "semantics": [dict(asdict(s), terms=[stems[t] for t in s.terms]) for s in self.semantics.values()],
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
        voc = V.vocab()
        df = {voc.query_stem_ids([str(k)])[0]: int(v) for k, v in meta["df"].items()}
        h._fit_df(max(df, default=0) + 1)
        for i, v in df.items():
            h.df[i] = v
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
            d["terms"] = tuple(voc.query_stem_ids([str(t) for t in d["terms"]]))
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
        encoded = set(map(int, meta.get("buffer_encoded", [])))
        closes = set(map(int, meta.get("buffer_closes", [])))
        h.open_tokens = int(meta.get("open_tokens", 0))
        for mid in meta["buffer"]:
            m = by_id.get(int(mid))
            if m is None:
                continue
            b = Buffered(m.id, m.seq, m.ts, m.session, m.speaker, m.role, np.asarray(m.tokens, dtype=np.uint32),
                         m.n_tokens, closes=m.id in closes)
            h.ready += b.closes
            if m.id in encoded and m.id in h.msg_slot:  # counted in df already: only its transient vector
                b.stems = V.content_stems(b.tokens)
                u, w = weigh_ids(b.stems[b.stems >= 0], h.df, max(1, h.n_docs))
                b.acc = h.coder.accumulate_ids(u, w)
            h.buffer.append(b)
            h.buffer_tokens += m.n_tokens
        return h
