"""Offline distillation of semantics (seed 001 §3.2: "semantic nodes distil reusable long-term facts from
episodes"): salient sentences or clauses of an episode's messages, kept verbatim with their source message ids.

Everything works on the token ids the store holds (see :mod:`hippo.text.vocab`): sentences are token spans
cut after sentence-final punctuation, and salience is rule-based and cheap: the idf mass of a span's distinct
content stems, plus bonuses for the marks of a fact (numbers, dates, names, first-person statements) and a
penalty for questions and phatic talk. Near-duplicates (code similarity at or above ``semantic_dedup``) merge into
the existing semantic, which gains the new provenance instead of a second copy.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from hippo.engine.hierarchy.codes import GRID, bag_pairs, on_grid
from hippo.text import tokenizer
from hippo.text import vocab as V


# stem id -> the one int object every semantic's terms hold for it (process-wide, as the stem ids are: at most one
# entry a stem of the vocabulary). Past the small ints Python shares (0-256), each occurrence of a stem id in a tuple
# of terms was an int object of its own, 32 bytes.
_STEM_INTS: dict[int, int] = {}


def stem_terms(ids: Iterable[int]) -> tuple[int, ...]:
    """``tuple(ids)`` (stem ids), its ints shared with every other semantic's terms."""
    get = _STEM_INTS.setdefault
    return tuple([get(i, i) for i in ids])


@dataclass(slots=True)  # no __dict__: about 110 bytes less a semantic
class Semantic:
    id: int
    text: str                   # "<speaker>: <sentence>" (the sentence verbatim)
    speaker: str | None
    message_ids: list[int]      # provenance: every message this fact was read from
    episode_ids: list[int]
    terms: tuple[int, ...]      # distinct content stem ids (the speaker's included), for query coverage
    seq: int                    # seq of the first source message
    ts: float | None
    salience: float = 0.0
    llm: bool = False           # extracted by an LLM rather than the offline rules
    extra: dict | None = None   # further fields of the fact, None when it has none (an empty dict a fact: 64 bytes)
    span: tuple[int, int] | None = None  # token span of the sentence in its first source message (offline facts)
    unit: int = -1              # flush unit whose consolidation created it (-1: deep consolidation)

    def __deepcopy__(self, memo: dict[int, Any]) -> "Semantic":
        out = Semantic.__new__(Semantic)
        for name in Semantic.__slots__:
            setattr(out, name, getattr(self, name))
        out.message_ids, out.episode_ids = list(self.message_ids), list(self.episode_ids)
        out.extra = copy.deepcopy(self.extra, memo) if self.extra else None
        return out


@dataclass
class Candidate:
    salience: float
    message_id: int
    start: int                  # token span [start, end) inside the message
    end: int
    stems: np.ndarray           # content stem ids of the span (with repeats)


def select(cands: list[Candidate], n_messages: int, per_message: float) -> list[Candidate]:
    """The most salient of an episode's candidate spans: at most ``ceil(per_message * n_messages)``, at least one
    when any qualifies, in message order."""
    if not cands:
        return []
    limit = max(1, math.ceil(per_message * n_messages))
    ranked = sorted(range(len(cands)), key=lambda i: (-cands[i].salience, i))[:limit]
    keep = sorted(i for i in ranked if cands[i].salience > 0 or i == ranked[0])
    return [cands[i] for i in keep]


def span_text(tokens: np.ndarray, c: Candidate) -> str:
    return tokenizer.decode_span(np.asarray(tokens[c.start : c.end], dtype=np.uint32)).strip()


def render(speaker: str | None, sentence: str) -> str:
    return f"{speaker}: {sentence}" if speaker else sentence


def batch_candidates(ids: list[int], tokens: list[np.ndarray], stems: list[np.ndarray],
                     idf: Callable[[np.ndarray], np.ndarray], norm: float,
                     min_terms: int) -> dict[int, list[Candidate]]:
    """The fact-like spans of each message, vectorized over all their spans: its sentences and clauses (cut after
    every token that ends one), each holding at least ``min_terms`` distinct content stems, scored by their stems'
    idf mass over ``norm`` (``idf`` gives the idf of stem ids; summed exactly, so the same whatever order ids are
    in), plus 0.6 for a digit, 0.5 for a time word, 0.4 for a capitalised word after the first and 0.4 for the first
    person, less 1.0 for a question and 0.8 for a phatic opener of fewer than five stems."""
    out: dict[int, list[Candidate]] = {i: [] for i in ids}
    lens = np.array([t.size for t in tokens], dtype=np.int64)
    n = int(lens.sum())
    if n == 0:
        return out
    voc = V.vocab()
    toks = np.concatenate(tokens).astype(np.int64)
    st = np.concatenate(stems).astype(np.int64)
    fl = voc.flags_of(toks)
    offs = np.r_[0, np.cumsum(lens)[:-1]]
    start = np.zeros(n, dtype=bool)
    start[offs[lens > 0]] = True
    start[1:] |= (fl[:-1] & V.SENT_END) != 0
    span = np.cumsum(start) - 1
    n_spans = int(span[-1]) + 1
    first = np.flatnonzero(start)
    end = np.r_[first[1:], n]
    msg = np.searchsorted(offs, first, side="right") - 1
    sg, ss, _ = bag_pairs(span, st)
    distinct = np.bincount(sg, minlength=n_spans)
    idf_sum = np.bincount(sg, weights=on_grid(idf(ss)), minlength=n_spans) / GRID

    def anyf(flag: int, skip_first: bool = False) -> np.ndarray:
        f = (fl & flag) != 0
        if skip_first:
            f &= ~start
        return np.bincount(span, weights=f, minlength=n_spans) > 0

    sal = idf_sum / norm + 0.6 * anyf(V.DIGIT) + 0.5 * anyf(V.TIME) + 0.4 * anyf(V.CAPWORD, True)
    sal += 0.4 * anyf(V.FIRST_PERSON)
    q = (fl[end - 1] & V.QUESTION) != 0
    two = end - 2 >= first
    q |= two & ((fl[np.maximum(end - 2, 0)] & V.QUESTION) != 0)
    sal -= 1.0 * q
    sal -= 0.8 * (((fl[first] & V.PHATIC) != 0) & (distinct < 5))
    for k in np.flatnonzero(distinct >= min_terms).tolist():
        mi = int(msg[k])
        a, b = int(first[k]), int(end[k])
        seg = st[a:b]
        out[ids[mi]].append(Candidate(float(sal[k]), ids[mi], a - int(offs[mi]), b - int(offs[mi]), seg[seg >= 0]))
    return out
