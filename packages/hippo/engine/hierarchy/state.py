"""The hierarchy of one namespace: messages -> episodes -> semantics -> themes (seed 001 §3.2).

Maintained incrementally on every add with zero LLM calls: a message gets a binary code and joins the CURRENT
buffer (seed 003 §3.3); a flush cuts the buffer into episodes, distils each episode's salient sentences into
semantics (near-duplicates merge), and attaches every new semantic to a theme (split / merge under f(P)). Every
unit keeps provenance down to message ids. The whole structure is a deterministic function of the message
sequence, so it can always be rebuilt from the store; snapshots only save the replay.
"""

from __future__ import annotations

import copy
import functools
import json
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Callable, Collection, Iterable

import numpy as np

from hippo.base.config import HierarchyConfig
from hippo.engine.hierarchy import episodes as ep_mod
from hippo.engine.hierarchy import semantics as sem_mod
from hippo.engine.hierarchy.codes import (
    Coder,
    CodeSet,
    DocFreq,
    bag_pairs,
    bag_vectors,
    exact_sum,
    hamming,
    idf,
    idf_array,
    sign_many,
    similarity,
    unpack,
    weigh_ids,
)
from hippo.engine.hierarchy.episodes import Buffered, Episode
from hippo.engine.hierarchy.knn import KnnGraph
from hippo.engine.hierarchy.lazy import IntMap, ListMap
from hippo.engine.hierarchy.semantics import Semantic
from hippo.engine.hierarchy.themes import ThemeSet
from hippo.text import textnorm, tokenizer
from hippo.text import vocab as V

MERGE_EVERY = 2  # consolidation batches between rounds of tiny-theme merges


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
    keep = ("code_bits", "flush_tokens", "flush_gap_s", "batch_messages", "episode_min_messages", "episode_max_messages",
            "episode_window", "episode_depth", "summary_tokens", "semantic_min_terms", "semantics_per_message",
            "semantic_dedup", "theme_cap", "theme_attach", "theme_tiny", "merge_candidates", "split_trials", "knn_k")
    d = asdict(cfg)
    return {k: d[k] for k in keep}


def _code_at(codes: CodeSet, slot: int) -> np.ndarray:
    return codes.codes[slot]


class Hierarchy:
    def __init__(self, cfg: HierarchyConfig) -> None:
        self.cfg = cfg
        self.coder = Coder(cfg.code_bits)
        self.bits = cfg.code_bits
        self.words = cfg.code_bits // 64
        self.df = DocFreq()   # messages containing each stem
        self.n_docs = 0
        self.msg_codes = CodeSet(self.words)
        self.msg_slot: dict[int, int] | IntMap = IntMap()
        self.msg_episode: dict[int, int] | IntMap = IntMap()
        self.msg_semantics: ListMap = ListMap()
        self.buffer: list[Buffered] = []   # the CURRENT buffer: messages not yet consolidated, in order
        self.buffer_tokens = 0
        self.open_tokens = 0                # tokens of the open (last, unfinished) flush unit
        self.ready = 0                      # complete flush units waiting in the buffer
        self.episodes: dict[int, Episode] = {}
        self.ep_codes = CodeSet(self.words)
        self.semantics: dict[int, Semantic] = {}
        self.sem_codes = CodeSet(self.words)
        self.sem_codes.enable_index()  # append-only: the native XOR-popcount scan answers its neighbour queries
        self.sem_graph = KnnGraph(self.sem_codes, self.bits, cfg.knn_k)
        # the semantics' codes through their code set, not a method of this hierarchy: a hierarchy holding itself
        # through its themes is freed only by the cycle collector, and a consolidation's copy of it (as large as it
        # is) then outlived the call by as long
        self.themes = ThemeSet(self.bits, self.words, self.coder.tie, functools.partial(_code_at, self.sem_codes),
                               cap=cfg.theme_cap, attach=cfg.theme_attach, tiny=cfg.theme_tiny,
                               merge_candidates=cfg.merge_candidates, split_trials=cfg.split_trials, knn_k=cfg.knn_k)
        self.pending_tiny: list[int] = []
        self.last_seq = -1
        self.flushes = 0
        self.dedup_merges = 0
        self._theme_summary: dict[int, str] = {}
        self.created: list[tuple[str, int]] = []  # ("episode" | "semantic" | "theme", id) since last drained
        self.unit_end_seqs: list[int] = []        # seq of the last message of every consolidated flush unit
        # message ids -> their SimHash codes of user embeddings (``Memory(embed=...)``), or None: random indexing
        self.external_codes: Any = None
        self._unit = -1                           # flush unit being consolidated
        self._speaker_stems: dict[str, list[int]] = {}

    def copy(self) -> "Hierarchy":
        """An independent copy of the whole structure (a consolidation works on the original and puts this one back
        if it raises half-way). The settings, the coder and the embedding codes' source are shared, not copied."""
        memo: dict[int, Any] = {id(self.cfg): self.cfg, id(self.coder): self.coder}
        if self.external_codes is not None:
            memo[id(self.external_codes)] = self.external_codes
        # the per-message maps, copied directly (a generic deep copy visits every int of them)
        for name in ("msg_slot", "msg_episode"):
            value = getattr(self, name)
            if type(value) is dict:
                memo[id(value)] = dict(value)
        for units in (self.episodes, self.semantics):
            if type(units) is dict:
                memo[id(units)] = {k: copy.deepcopy(v, memo) for k, v in units.items()}
        return copy.deepcopy(self, memo)

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
        """idf of stem ids (read-only: readers call it concurrently; unseen stems, and negative ids, which stand
        for stems without an id, have df 0)."""
        return idf_array(max(1, self.n_docs), self.df.get(ids))

    def idf(self, term: str) -> float:
        sid = V.vocab().stem_id(term)
        return idf(max(1, self.n_docs), int(self.df.get([sid])[0]))

    def code_of_stems(self, stems: np.ndarray) -> np.ndarray:
        u, w = weigh_ids(stems, self.df, max(1, self.n_docs))
        return self.coder.code_ids(u, w)

    def query_code(self, stem_ids: list[int], new: list[str] = ()) -> np.ndarray:
        """The code of a question's distinct stems: ``stem_ids`` those the vocabulary holds, ``new`` (as text) those
        no text read so far holds (df 0; their index vectors computed from their text, the vectors an id would
        give them). Summed exactly, as :meth:`code_of_stems` sums, so it is the code those stems would have with
        ids."""
        n = max(1, self.n_docs)
        u, w = weigh_ids(np.asarray(stem_ids, dtype=np.int64), self.df, n)
        rows = self.coder.rows(u)
        if new:
            w = np.concatenate([w, idf_array(n, np.zeros(len(new)))])
            rows = np.concatenate([rows, self.coder.stem_rows(list(new))])
        return self.coder.sign(exact_sum(w, rows))

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
                self.ready += 1
                self.open_tokens = 0
            self.buffer.append(Buffered(m.id, m.seq, m.ts, m.session, m.speaker, m.role,
                                        np.asarray(m.tokens, dtype=np.uint32), m.n_tokens))
            self.buffer_tokens += m.n_tokens
            self.open_tokens += m.n_tokens
            self.last_seq = m.seq
            if self.open_tokens >= self.cfg.flush_tokens:
                self.buffer[-1].closes = True
                self.ready += 1
                self.open_tokens = 0

    @property
    def ready_messages(self) -> int:
        """Buffered messages that belong to complete flush units."""
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
        self.df.add(ps)
        self.n_docs += len(todo)
        weights = idf_array(self.n_docs, self.df.get(ps)) * (1.0 + np.log(cnt))
        acc = bag_vectors(self.coder, pg, ps, weights, len(todo))
        codes = sign_many(self.coder, acc)
        ext = self.external_codes([b.id for b in todo]) if self.external_codes is not None else None
        if ext is not None and ext.shape == codes.shape:
            # the embeddings' SimHash codes stand in for random indexing; their +-1 vectors drive segmentation
            codes = ext
            acc = np.where(unpack(ext), 1.0, -1.0).astype(np.float32)
        slots = self.msg_codes.append_many(codes)
        for b, a, slot in zip(todo, acc, slots.tolist()):
            b.acc = a
            self.msg_slot[b.id] = slot

    def _next_batch(self, final: bool, partial: bool = False) -> int:
        """Length of the buffer prefix to consolidate next: whole flush units adding up to at least
        ``batch_messages`` messages (the batch boundaries depend on the message sequence only, so lazy and eager
        consolidation build the same units); with ``partial`` every complete unit even in a smaller batch; with
        ``final`` everything, the open unit included. 0: nothing yet."""
        ends = [k + 1 for k, b in enumerate(self.buffer) if b.closes]
        for e in ends:
            if e >= self.cfg.batch_messages:
                return e
        if final:
            return len(self.buffer)
        return ends[-1] if partial and ends else 0

    def consolidate(self, final: bool = False, partial: bool = False, max_batches: int | None = None
                    ) -> list[Episode]:
        """Turn complete flush units of the CURRENT buffer into episodes, semantics and themes, batch by batch;
        ``partial``: also a last batch smaller than ``batch_messages``; ``final``: the open unit too (deep
        consolidation, session end); ``max_batches``: stop after that many batches (bounded work per read)."""
        closed: list[Episode] = []
        done = 0
        while self.buffer and (max_batches is None or done < max_batches):
            done += 1
            end = self._next_batch(final, partial)
            if end == 0:
                break
            if end == len(self.buffer):
                self.open_tokens = 0
            closed += self._consolidate_batch(self.buffer[:end])
            self.buffer = self.buffer[end:]
            self.buffer_tokens = sum(b.n_tokens for b in self.buffer)
            self.ready = sum(1 for b in self.buffer if b.closes)
        return closed

    @property
    def ready_batches(self) -> bool:
        return self._next_batch(False) > 0

    flush = consolidate  # seed 003's name for it

    def _consolidate_batch(self, batch: list[Buffered]) -> list[Episode]:
        cfg = self.cfg
        self._unit = len(self.unit_end_seqs)
        self.unit_end_seqs.append(batch[-1].seq)
        self._encode(batch)
        norm = max(1.0, float(np.log(2.0 + self.n_docs)))
        cands = sem_mod.batch_candidates([b.id for b in batch], [b.tokens for b in batch], [b.stems for b in batch],
                                         self.idf_of, norm, cfg.semantic_min_terms)
        facts: list[tuple] = []
        closed: list[Episode] = []
        lo = 0
        for k, b in enumerate(batch):  # episodes never cross a flush unit
            if b.closes or k == len(batch) - 1:
                unit = batch[lo : k + 1]
                blocks = ep_mod.segment([x.acc for x in unit], min_messages=cfg.episode_min_messages,
                                        max_messages=cfg.episode_max_messages, window=cfg.episode_window,
                                        depth=cfg.episode_depth)
                closed += [self._close_episode(unit[a:z], cands, facts) for a, z in blocks]
                lo = k + 1
        self._insert_semantics(facts)
        self._unit = -1
        self.flushes += 1
        # tiny themes had a few batches to grow: consider merging them now (f(P) decides)
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
        spans = ep_mod.choose_summary(cands, self.cfg.summary_tokens)
        if not spans:  # nothing fact-like: the episode's opening words
            spans = [(block[0].id, 0, int(block[0].tokens.size))]
        summary = ep_mod.render_summary(spans, texts, self.cfg.summary_tokens)
        speakers = list(dict.fromkeys(b.speaker for b in block if b.speaker))
        times = [b.ts for b in block if b.ts is not None]
        ep = Episode(eid, [b.id for b in block], block[0].seq, block[-1].seq, min(times) if times else None,
                     max(times) if times else None, block[0].session, speakers, sum(b.n_tokens for b in block),
                     summary, unit=self._unit, summary_spans=ep_mod.flat_spans(spans))
        self.episodes[eid] = ep
        self.created.append(("episode", eid))
        for b in block:
            self.msg_episode[b.id] = eid
        by_id = {b.id: b for b in block}
        for c in sem_mod.select(cands, len(block), self.cfg.semantics_per_message):
            b = by_id[c.message_id]
            text = sem_mod.render(b.speaker, sem_mod.span_text(b.tokens, c))
            facts.append((text, b.speaker, [b.id], eid, c.stems, b.seq, b.ts, c.salience, False, (c.start, c.end)))
        return ep

    def add_semantic(self, text: str, speaker: str | None, mids: list[int], eid: int, stems, seq: int,
                     ts: float | None, salience: float, llm: bool = False) -> int:
        """Add one fact (stems: content stem ids, or its text's stems when None) or merge it into a
        near-duplicate; returns its semantic id."""
        if stems is None:
            stems = V.text_stems(text.split(": ", 1)[1] if speaker and text.startswith(f"{speaker}: ") else text)
        return self._insert_semantics([(text, speaker, mids, eid, np.asarray(stems, dtype=np.int64), seq, ts,
                                        salience, llm, None)])[0]

    def _speaker_stem(self, speaker: str | None) -> list[int]:
        if not speaker:
            return []
        got = self._speaker_stems.get(speaker)
        if got is None:  # a few speakers, asked about for every candidate of every recall
            got = self._speaker_stems[speaker] = [i for i in V.vocab().stem_ids(
                [textnorm.stem(speaker.lower())]) if i >= 0]
        return list(got)

    def _terms(self, stems: np.ndarray, speaker: str | None) -> tuple[int, ...]:
        """A semantic's terms: the distinct stems of its words, then its speaker's (:func:`semantics.stem_terms`)."""
        return sem_mod.stem_terms(dict.fromkeys(np.unique(stems).tolist() + self._speaker_stem(speaker)))

    def _insert_semantics(self, facts: list[tuple]) -> list[int]:
        """Dedup against existing semantics, then add the rest to the kNN graph and the themes in one batch."""
        if not facts:
            return []
        group = np.repeat(np.arange(len(facts)), [np.asarray(f[4]).size for f in facts])
        pg, ps, cnt = bag_pairs(group, np.concatenate([np.asarray(f[4], dtype=np.int64) for f in facts]))
        weights = idf_array(max(1, self.n_docs), self.df.get(ps)) * (1.0 + np.log(cnt))
        codes = sign_many(self.coder, bag_vectors(self.coder, pg, ps, weights, len(facts)))
        if self.external_codes is not None:  # a fact takes the embedding code of the message it comes from
            for j, f in enumerate(facts):
                own = self.message_code(f[2][0]) if f[2] else None
                if own is not None:
                    codes[j] = own
        near_d, near_i = self.sem_codes.nearest(codes, 1)
        limit = (1.0 - self.cfg.semantic_dedup) * self.bits / 2.0  # similarity >= dedup <=> distance <= limit
        out: list[int] = []
        new: list[int] = []
        new_at: list[int] = []  # the fact each of ``new`` was made from: its code is that fact's
        # near-duplicates inside the batch: every pair's distance in one call instead of one call per pair
        pair = hamming(codes[:, None, :], codes[None, :, :]) if len(facts) > 1 else None
        for j, (text, speaker, mids, eid, stems, seq, ts, sal, llm, span) in enumerate(facts):
            sid = -1
            if near_i[j, 0] >= 0 and near_d[j, 0] <= limit:
                sid = int(near_i[j, 0])
            if sid < 0 and new_at:
                close = pair[j, new_at] <= limit
                if close.any():
                    sid = new[int(np.argmax(close))]
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
                new_at.append(j)
                terms = self._terms(stems, speaker)
                self.semantics[sid] = Semantic(sid, text, speaker, list(dict.fromkeys(mids)), [eid], terms, seq, ts,
                                               float(sal), llm, span=span, unit=self._unit)
                self.created.append(("semantic", sid))
                new.append(sid)
            for mid in mids:
                self.msg_semantics.add(mid, sid)
            if ep is not None and sid not in ep.semantic_ids:
                ep.semantic_ids.append(sid)
            out.append(sid)
        if new:
            self.sem_graph.insert_many(new)
            self.themes.attach_batch(new)
        return out

    def drain_created(self) -> list[tuple[str, int]]:
        """Units created since the last call (themes included), for the lifecycle's strength records."""
        out = self.created + [("theme", t) for t in self.themes.drain_created()]
        self.created = []
        return out

    def drop_semantic(self, sid: int) -> None:
        self.drop_semantics([sid])

    def drop_semantics(self, sids: Iterable[int]) -> None:
        """Drop semantics; the semantic kNN graph is relinked once for all of them."""
        gone = [sid for sid in sids if self._drop_semantic(sid)]
        self.sem_graph.remove_many(gone)

    def _drop_semantic(self, sid: int) -> bool:
        """Drop one semantic everywhere but from the semantic kNN graph's lists; False when it is not held."""
        s = self.semantics.pop(sid, None)
        if s is None:
            return False
        for mid in s.message_ids:
            self.msg_semantics.discard(mid, sid)
        for eid in s.episode_ids:
            e = self.episodes.get(eid)
            if e is not None and sid in e.semantic_ids:
                e.semantic_ids.remove(sid)
        self.sem_codes.kill(sid)
        self.themes.remove_semantic(sid)
        self._theme_summary.clear()
        return True

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
    def remove_messages(self, ids: Iterable[int],
                        texts: Callable[[int], tuple[str | None, np.ndarray] | None] | None = None,
                        rows: Callable[[int], tuple[int, float | None, str | None, int] | None] | None = None) -> None:
        """Forget messages everywhere; units left without provenance disappear, and no unit keeps text read from a
        forgotten message. ``texts(mid)`` gives a surviving message's (speaker, token ids), to rewrite an extractive
        episode summary from the spans that remain; without it (or without the message) such a summary is cleared.
        ``rows(mid)`` gives a surviving message's (seq, timestamp, speaker, token count), to describe an episode by
        the messages left in it (its span, time, speakers and size), as :meth:`_close_episode` did."""
        ids = {int(i) for i in ids}
        buffered = {b.id for b in self.buffer}
        dead = {i for i in ids if i in self.msg_slot or i in buffered or i in self.msg_episode
                or i in self.msg_semantics}
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
                continue
            if rows is not None:
                _describe(e, rows)
            if e.llm_summary:
                # an LLM summary was written from every message of the episode, the forgotten ones included: it
                # goes (a later deep consolidation with an LLM writes a new one)
                e.summary, e.llm_summary, e.summary_spans = "", False, ()
            elif any(int(mid) in dead for mid in e.summary_spans[0::3]):
                self._resummarize(e, dead, texts)
        dropped: list[int] = []
        for sid in touched_sems:
            s = self.semantics.get(sid)
            if s is None:
                continue
            # a fact whose text shows a forgotten message goes with it (:meth:`quotes`: an offline fact is the
            # verbatim sentence of its first source message, even if near-duplicates of other messages merged into
            # it; an LLM-written one may restate any of its messages)
            gone = self.quotes(sid, dead)
            s.message_ids = [m for m in s.message_ids if m not in dead]
            if not s.message_ids or gone:
                dropped.append(sid)
        self.drop_semantics(dropped)
        self._theme_summary.clear()

    def _resummarize(self, e: Episode, dead: set[int],
                     texts: Callable[[int], tuple[str | None, np.ndarray] | None] | None) -> None:
        """Rewrite the extractive summary of ``e`` without the spans of forgotten messages (the opening words of its
        first message when none is left, as :meth:`_close_episode` does); cleared when the texts are not at hand."""
        spans = [sp for sp in ep_mod.span_triples(e.summary_spans) if int(sp[0]) not in dead]
        got: dict[int, tuple[str | None, np.ndarray]] = {}
        if texts is not None:
            for mid in dict.fromkeys([int(sp[0]) for sp in spans] or e.message_ids[:1]):
                t = texts(mid)
                if t is not None:
                    got[mid] = t
        if not spans and got:
            first = e.message_ids[0]
            spans = [(first, 0, int(np.asarray(got[first][1]).size))]
        spans = [sp for sp in spans if int(sp[0]) in got]
        e.summary = ep_mod.render_summary(spans, got, self.cfg.summary_tokens) if spans else ""
        e.summary_spans = ep_mod.flat_spans(spans)

    # -- reading --------------------------------------------------------------------------------------------
    def quotes(self, sid: int, ids: Collection[int]) -> bool:
        """Whether semantic ``sid``'s text shows any message of ``ids``: an offline fact is the verbatim sentence of
        its first source message, an LLM-written one may restate any of its messages (as when they are deleted)."""
        if not ids:  # answered without reading the semantic: a reopened store builds a unit when first read
            if sid not in self.semantics:
                raise KeyError(sid)
            return False
        s = self.semantics[sid]
        if not s.message_ids:
            return False
        return any(m in ids for m in s.message_ids) if s.llm else s.message_ids[0] in ids

    def theme_summary(self, t: int, max_terms: int = 6, without: Collection[int] = frozenset()) -> str:
        """Offline theme summary: its most characteristic terms and its most central semantic; with ``without``
        (message ids), of the member semantics whose text shows none of them ("" when none is left)."""
        got = self._theme_summary.get(t) if not without else None
        if got is not None:
            return got
        members = [s for s in self.themes.members[t] if s in self.semantics and not self.quotes(s, without)]
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
        if not without:
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
    # A snapshot keeps the structure only (which messages form which episode, which sentence each semantic is,
    # theme memberships, kNN edges); codes and document frequencies are replayed from the stored token ids unit
    # by unit, exactly as consolidation computed them, so a snapshot costs a few bytes per stored token.
    def to_snapshot(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        th = self.themes
        eps = sorted(self.episodes.values(), key=lambda e: e.id)
        sems = sorted(self.semantics.values(), key=lambda x: x.id)
        offline = [x for x in sems if x.span is not None and not x.llm]
        extra_prov = {str(x.id): [x.message_ids, x.episode_ids] for x in sems
                      if len(x.message_ids) > 1 or len(x.episode_ids) > 1}
        llm = {str(x.id): [x.text, x.speaker, x.message_ids, x.episode_ids, x.seq, x.ts] for x in sems
               if x.llm or x.span is None}
        members = [list(m) if th.codes.alive[t] else [] for t, m in enumerate(th.members)]
        meta = {
            "fingerprint": fingerprint(self.cfg),
            "last_seq": self.last_seq,
            "open_tokens": self.open_tokens,
            "counters": {"reassignments": th.reassignments, "splits": th.splits, "merges": th.merges,
                         "flushes": self.flushes, "dedup_merges": self.dedup_merges, "n_docs": self.n_docs},
            "pending_tiny": self.pending_tiny,
            "slots": {"episodes": self.ep_codes.n, "semantics": self.sem_codes.n, "themes": th.codes.n},
        }
        sem_ids = np.array([x.id for x in offline], dtype=np.int64)
        bulk = {"llm_summaries": {str(e.id): e.summary for e in eps if e.llm_summary},
                "extra_provenance": extra_prov, "llm_semantics": llm}
        spans = [(k, *x) for k, e in enumerate(eps) if not e.llm_summary
                 for x in ep_mod.span_triples(e.summary_spans)]
        arrays = {
            "bulk": np.frombuffer(json.dumps(bulk, ensure_ascii=False, separators=(",", ":")).encode(), np.uint8),
            "summary_spans": np.array(spans, dtype=np.int64).reshape(-1, 4),
            "unit_end_seqs": np.array(self.unit_end_seqs, dtype=np.int64),
            "buffer_ids": np.array([b.id for b in self.buffer], dtype=np.int64),
            "buffer_closes": np.array([b.closes for b in self.buffer], dtype=bool),
            "ep_ids": np.array([e.id for e in eps], dtype=np.int64),
            "ep_first": np.array([e.message_ids[0] for e in eps], dtype=np.int64),
            "ep_count": np.array([len(e.message_ids) for e in eps], dtype=np.int32),
            "ep_unit": np.array([e.unit for e in eps], dtype=np.int32),
            "sem_ids": sem_ids,
            "sem_src": np.array([x.message_ids[0] for x in offline], dtype=np.int64),
            "sem_span": np.array([x.span for x in offline], dtype=np.int32).reshape(-1, 2),
            "sem_unit": np.array([x.unit for x in offline], dtype=np.int32),
            "sem_moved": np.array(sorted(th.moved), dtype=np.int64),
            "llm_codes": (self.sem_codes.codes[[int(k) for k in llm]] if llm
                          else np.zeros((0, self.words), dtype=np.uint64)),
            "theme_members": np.array([x for m in members for x in m], dtype=np.int64),
            "theme_sizes": np.array([len(m) for m in members], dtype=np.int32),
            "theme_nn": th.nn_id[: th.codes.n].astype(np.int32),
            "theme_knn": th.graph.lists(th.codes.n)[0].astype(np.int32),
            "sem_knn": self.sem_graph.lists(self.sem_codes.n)[0].astype(np.int32),
        }
        return meta, arrays

    @classmethod
    def from_snapshot(cls, cfg: HierarchyConfig, meta: dict[str, Any], arrays: dict[str, np.ndarray],
                      messages: list[Msg], external_codes: Any = None) -> "Hierarchy":
        """Restore a snapshot given every live message of the namespace in seq order (with its tokens)."""
        h = cls(cfg)
        h.external_codes = external_codes
        by_id = {m.id: m for m in messages}
        bulk = json.loads(bytes(arrays["bulk"]).decode("utf-8"))
        llm_summaries = {int(k): v for k, v in bulk["llm_summaries"].items()}
        spans_of: dict[int, list] = {}
        for k, mid, a, b in arrays["summary_spans"].tolist():
            spans_of.setdefault(k, []).append((mid, a, b))
        h.last_seq = int(meta["last_seq"])
        h.unit_end_seqs = [int(x) for x in arrays["unit_end_seqs"].tolist()]
        slots = meta["slots"]
        h.ep_codes._grow(max(1, int(slots["episodes"])))
        h.ep_codes.n = int(slots["episodes"])
        h.sem_codes._grow(max(1, int(slots["semantics"])))
        h.sem_codes.n = int(slots["semantics"])
        # replay encoding unit by unit: document frequencies, message codes, episode and semantic codes
        buffer_ids = set(arrays["buffer_ids"].tolist())
        done = [m for m in messages if m.seq <= h.last_seq and m.id not in buffer_ids]
        bounds = np.searchsorted(np.array([m.seq for m in done], dtype=np.int64), h.unit_end_seqs, side="right")
        eps_by_unit: dict[int, list[int]] = {}
        for k, u in enumerate(arrays["ep_unit"].tolist()):
            eps_by_unit.setdefault(u, []).append(k)
        sems_by_unit: dict[int, list[int]] = {}
        for k, u in enumerate(arrays["sem_unit"].tolist()):
            sems_by_unit.setdefault(u, []).append(k)
        order = {m.id: k for k, m in enumerate(done)}
        acc_of: dict[int, np.ndarray] = {}
        lo = 0
        for unit, hi in enumerate(bounds.tolist()):
            block = [Buffered(m.id, m.seq, m.ts, m.session, m.speaker, m.role, np.asarray(m.tokens, np.uint32),
                              m.n_tokens) for m in done[lo:hi]]
            lo = hi
            h._encode(block)
            for b in block:
                acc_of[b.id] = b.acc
            for k in eps_by_unit.get(unit, ()):
                eid, first, count = int(arrays["ep_ids"][k]), int(arrays["ep_first"][k]), int(arrays["ep_count"][k])
                start = order[first]
                mids = [m.id for m in done[start : start + count]]
                ms = [by_id[i] for i in mids]
                times = [m.ts for m in ms if m.ts is not None]
                sp = spans_of.get(k, [])
                summary = llm_summaries.get(eid) or ep_mod.render_summary(
                    sp, {i: (by_id[i].speaker, by_id[i].tokens) for i, _, _ in sp if i in by_id}, cfg.summary_tokens)
                e = Episode(eid, mids, ms[0].seq, ms[-1].seq, min(times) if times else None,
                            max(times) if times else None, ms[0].session,
                            list(dict.fromkeys(m.speaker for m in ms if m.speaker)), sum(m.n_tokens for m in ms),
                            summary, llm_summary=eid in llm_summaries, unit=unit,
                            summary_spans=ep_mod.flat_spans(sp))
                h.episodes[eid] = e
                h.ep_codes.set(eid, h.coder.sign(np.sum([acc_of[i] for i in mids], axis=0)))
                for i in mids:
                    h.msg_episode[i] = eid
            facts = []
            for k in sems_by_unit.get(unit, ()):
                src = by_id[int(arrays["sem_src"][k])]
                a, b = (int(x) for x in arrays["sem_span"][k])
                stems = V.content_stems(src.tokens)[a:b]
                facts.append((int(arrays["sem_ids"][k]), src, (a, b), stems[stems >= 0], 0.0))
            if facts:
                group = np.repeat(np.arange(len(facts)), [f[3].size for f in facts])
                pg, ps, cnt = bag_pairs(group, np.concatenate([f[3] for f in facts]))
                weights = idf_array(max(1, h.n_docs), h.df.get(ps)) * (1.0 + np.log(cnt))
                codes = sign_many(h.coder, bag_vectors(h.coder, pg, ps, weights, len(facts)))
                if h.external_codes is not None:
                    for j, f in enumerate(facts):
                        own = h.message_code(f[1].id)
                        if own is not None:
                            codes[j] = own
                for (sid, src, span, stems, sal), c in zip(facts, codes):
                    text = sem_mod.render(src.speaker, tokenizer.decode_span(
                        np.asarray(src.tokens[span[0] : span[1]], dtype=np.uint32)).strip())
                    terms = h._terms(stems, src.speaker)
                    h.semantics[sid] = Semantic(sid, text, src.speaker, [src.id], [h.msg_episode.get(src.id, -1)],
                                                terms, src.seq, src.ts, sal, False, span=span, unit=unit)
                    h.sem_codes.set(sid, c)
        for key, (text, speaker, mids, eids, seq, ts) in bulk["llm_semantics"].items():
            sid = int(key)
            stems = V.text_stems(text)
            terms = h._terms(stems, speaker)
            h.semantics[sid] = Semantic(sid, text, speaker, list(mids), list(eids), terms, seq, ts, 1.0, True)
        for sid, code in zip(bulk["llm_semantics"], arrays["llm_codes"]):
            h.sem_codes.set(int(sid), code)
        for key, (mids, eids) in bulk["extra_provenance"].items():
            x = h.semantics[int(key)]
            x.message_ids, x.episode_ids = list(mids), list(eids)
        for x in h.semantics.values():
            for i in x.message_ids:
                h.msg_semantics.add(i, x.id)
            for eid in x.episode_ids:
                e = h.episodes.get(eid)
                if e is not None:
                    e.semantic_ids.append(x.id)
        alive = np.zeros(h.sem_codes.n, dtype=bool)
        alive[list(h.semantics)] = True
        h.sem_codes.alive[: h.sem_codes.n] = alive
        h.sem_codes.enable_index()
        ep_alive = np.zeros(h.ep_codes.n, dtype=bool)
        ep_alive[list(h.episodes)] = True
        h.ep_codes.alive[: h.ep_codes.n] = ep_alive
        # themes: centroids and cohesion from the member codes, neighbour edges as stored
        th = h.themes
        n_th = int(slots["themes"])
        sizes = arrays["theme_sizes"].tolist()
        flat = arrays["theme_members"].tolist()
        th.codes._grow(max(1, n_th))
        th.codes.n = n_th
        th.members = []
        pos = 0
        for t in range(n_th):
            mem = [int(x) for x in flat[pos : pos + sizes[t]]]
            pos += sizes[t]
            th.members.append(mem)
        th._grow()
        for t, mem in enumerate(th.members):
            if mem:
                th._set_members(t, mem)
                th.codes.alive[t] = True
            else:
                th.codes.alive[t] = False
        th.moved = set(arrays["sem_moved"].tolist())
        nn = arrays["theme_nn"].astype(np.int64)
        th.nn_id[:n_th] = nn
        for t in np.flatnonzero(th.codes.alive[:n_th] & (nn >= 0)).tolist():
            th.nn_sim[t] = float(similarity(th.codes.codes[t], th.codes.codes[nn[t]][None], h.bits)[0])
        for graph, ids, n in ((th.graph, arrays["theme_knn"], n_th), (h.sem_graph, arrays["sem_knn"], h.sem_codes.n)):
            graph._fit()
            if n == 0:
                continue  # an empty level (nothing consolidated yet) has no graph rows
            ids = ids.astype(np.int64).reshape(n, -1)[:, : graph.k]
            graph.ids[:n, : ids.shape[1]] = ids
            rows = np.repeat(np.arange(n), ids.shape[1]).reshape(n, -1)
            d = hamming(graph.codes.codes[rows], graph.codes.codes[np.maximum(ids, 0)])
            graph.dist[:n, : ids.shape[1]] = np.where(ids >= 0, d, graph.dist[:n, : ids.shape[1]])
        c = meta["counters"]
        th.reassignments, th.splits, th.merges = int(c["reassignments"]), int(c["splits"]), int(c["merges"])
        h.flushes, h.dedup_merges = int(c["flushes"]), int(c["dedup_merges"])
        h.n_docs = int(c["n_docs"])  # counts messages deleted since, as the live structure did
        h.pending_tiny = [int(t) for t in meta["pending_tiny"]]
        h.open_tokens = int(meta["open_tokens"])
        closes = dict(zip(arrays["buffer_ids"].tolist(), arrays["buffer_closes"].tolist()))
        for i in arrays["buffer_ids"].tolist():
            m = by_id.get(int(i))
            if m is None:
                continue
            h.buffer.append(Buffered(m.id, m.seq, m.ts, m.session, m.speaker, m.role,
                                     np.asarray(m.tokens, dtype=np.uint32), m.n_tokens, closes=bool(closes[i])))
            h.buffer_tokens += m.n_tokens
            h.ready += h.buffer[-1].closes
        h.created = []
        th.created = []
        return h


def _describe(e: Episode, rows: Callable[[int], tuple[int, float | None, str | None, int] | None]) -> None:
    """An episode's first and last seq, time span, speakers and size from the messages it holds (``rows(mid)``:
    seq, timestamp, speaker, token count), as :meth:`Hierarchy._close_episode` sets them; left as they are when a
    message is not at hand."""
    got = [rows(m) for m in e.message_ids]
    if any(g is None for g in got):
        return
    seqs = [g[0] for g in got]
    times = [g[1] for g in got if g[1] is not None]
    e.first_seq, e.last_seq = min(seqs), max(seqs)
    e.t0, e.t1 = (min(times), max(times)) if times else (None, None)
    e.speakers = list(dict.fromkeys(g[2] for g in got if g[2]))
    e.n_tokens = sum(g[3] for g in got)
