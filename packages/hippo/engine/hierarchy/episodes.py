"""Episodes: contiguous blocks of messages (seed 001 §3.2: "an episode summarises a contiguous block of original
messages"), cut from the CURRENT buffer of unconsolidated messages (seed 003 §3.3).

The buffer is flushed at a session change, after a wall-clock gap, or when it holds ``flush_tokens`` tokens
(seed 003 Eq. 1). A flush segments the buffer TextTiling-style: the cohesion at every gap is the cosine between
the random-indexing vectors of the ``window`` messages on either side, a topic shift is a valley of that curve
whose depth reaches ``episode_depth``, and blocks longer than ``episode_max_messages`` are cut at their weakest gap.
Those vectors live only while the buffer does; episodes keep binary codes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hippo.engine.hierarchy import semantics
from hippo.text import tokenizer


@dataclass
class Buffered:
    """A message waiting in the CURRENT buffer (its token ids, as stored)."""

    id: int
    seq: int
    ts: float | None
    session: str | None
    speaker: str | None
    role: str
    tokens: np.ndarray
    n_tokens: int
    closes: bool = False             # a flush unit ends after this message
    stems: np.ndarray | None = None  # per-token content stem ids, computed at flush
    acc: np.ndarray | None = None    # random-indexing vector (float32, transient)

    @property
    def text(self) -> str:
        return tokenizer.decode(np.asarray(self.tokens, dtype=np.uint32))

    def __deepcopy__(self, memo: dict[int, Any]) -> "Buffered":
        out = Buffered.__new__(Buffered)
        out.__dict__.update(self.__dict__)  # its arrays are replaced, never written in place
        return out


@dataclass(slots=True)  # no __dict__: about 110 bytes less an episode, a few thousand of them a 20,000-message chat
class Episode:
    id: int
    message_ids: list[int]
    first_seq: int
    last_seq: int
    t0: float | None
    t1: float | None
    session: str | None
    speakers: list[str]
    n_tokens: int
    summary: str
    semantic_ids: list[int] = field(default_factory=list)
    llm_summary: bool = False
    unit: int = -1                   # index of the flush unit it was cut from
    # the spans of an extractive summary, (message id, start, end) of each one after another in one tuple (a list
    # of lists took two objects a span): see :func:`span_triples` and :func:`flat_spans`
    summary_spans: tuple = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> "Episode":
        out = Episode.__new__(Episode)  # a generic deep copy costs about 100 us an episode
        for name in Episode.__slots__:
            setattr(out, name, getattr(self, name))
        out.message_ids, out.speakers, out.semantic_ids = list(self.message_ids), list(self.speakers), \
            list(self.semantic_ids)
        return out


def flat_spans(spans) -> tuple[int, ...]:
    """``(message id, start, end)`` triples as an episode keeps them: one flat tuple of ints."""
    return tuple([int(v) for sp in spans for v in sp])


def span_triples(flat) -> list[tuple[int, int, int]]:
    """An episode's summary spans as ``(message id, start, end)`` triples, in order."""
    return list(zip(flat[0::3], flat[1::3], flat[2::3]))


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(a @ b) / (na * nb)


def cohesion(accs: list[np.ndarray], window: int) -> np.ndarray:
    """Cohesion at each of the ``len(accs) - 1`` gaps: cosine of the summed vectors of ``window`` messages on
    each side."""
    n = len(accs)
    if n < 2:
        return np.zeros(0)
    mat = np.stack(accs)
    csum = np.vstack([np.zeros((1, mat.shape[1]), dtype=np.float64), np.cumsum(mat, axis=0, dtype=np.float64)])
    out = np.empty(n - 1)
    for g in range(1, n):
        left = csum[g] - csum[max(0, g - window)]
        right = csum[min(n, g + window)] - csum[g]
        out[g - 1] = _cos(left, right)
    return out


def depth_scores(c: np.ndarray) -> np.ndarray:
    """TextTiling depth of every gap: the climb to the nearest peak on the left plus the one on the right."""
    d = np.zeros_like(c)
    for i in range(c.size):
        lp = c[i]
        j = i
        while j > 0 and c[j - 1] >= lp:
            j -= 1
            lp = c[j]
        rp = c[i]
        j = i
        while j + 1 < c.size and c[j + 1] >= rp:
            j += 1
            rp = c[j]
        d[i] = (lp - c[i]) + (rp - c[i])
    return d


def segment(accs: list[np.ndarray], *, min_messages: int, max_messages: int, window: int,
            depth: float) -> list[tuple[int, int]]:
    """Half-open ``[start, end)`` blocks covering ``range(len(accs))``."""
    n = len(accs)
    if n == 0:
        return []
    c = cohesion(accs, window)
    d = depth_scores(c)
    cuts: list[int] = []  # a cut g separates messages g-1 and g
    for gi in np.argsort(-d, kind="stable").tolist():
        if d[gi] < depth:
            break
        g = gi + 1
        bounds = sorted(cuts + [g])
        k = bounds.index(g)
        lo = bounds[k - 1] if k > 0 else 0
        hi = bounds[k + 1] if k + 1 < len(bounds) else n
        if g - lo >= min_messages and hi - g >= min_messages:
            cuts.append(g)
    bounds = [0] + sorted(cuts) + [n]
    blocks = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    out: list[tuple[int, int]] = []
    while blocks:
        lo, hi = blocks.pop(0)
        if hi - lo <= max_messages:
            out.append((lo, hi))
            continue
        # cut an overlong block at its weakest gap, keeping both parts at least min_messages long when possible
        m = min(min_messages, (hi - lo) // 2)
        gaps = list(range(lo + m, hi - m + 1))
        g = min(gaps, key=lambda x: (c[x - 1], abs((x - lo) - (hi - x))))
        blocks[:0] = [(lo, g), (g, hi)]
    return out


def choose_summary(cands: list, max_tokens: int) -> list[tuple[int, int, int]]:
    """Extractive summary: the most salient candidate spans (:class:`semantics.Candidate`) that fit in about
    ``max_tokens`` tokens, as (message id, start, end) in message order."""
    order = sorted(range(len(cands)), key=lambda i: (-cands[i].salience, i))
    chosen: list[int] = []
    used = 0
    for i in order:
        c = cands[i]
        cost = c.end - c.start + 4
        if used + cost > max_tokens and chosen:
            if used >= max_tokens - 4:
                break
            continue
        chosen.append(i)
        used += cost
        if used >= max_tokens:
            break
    return [(cands[i].message_id, cands[i].start, cands[i].end) for i in sorted(chosen)]


def render_summary(spans: list, texts: dict[int, tuple[str | None, np.ndarray]], max_tokens: int) -> str:
    """The text of a summary given as spans; ``texts`` maps message id -> (speaker, tokens)."""
    parts = []
    for mid, a, b in spans:
        if mid not in texts:
            continue
        speaker, toks = texts[mid]
        text = tokenizer.decode_span(np.asarray(toks[a : min(b, a + max_tokens)], dtype=np.uint32)).strip()
        if b - a > max_tokens:  # one long sentence: cut at a word boundary
            text = text.rsplit(" ", 1)[0].strip() + " …"
        parts.append(semantics.render(speaker, text))
    return " / ".join(parts)
