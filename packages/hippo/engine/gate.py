"""Encoding gate (seed 002 §4.1, stage 1), off by default (``config.gate.enabled``).

Three independent signals per incoming message e_t:

* novelty n_t = (|gz(M || e_t)| - |gz(M)|) / |gz(e_t)|, with M the nearest stored messages (found by the engine's
  own channels) and gz raw DEFLATE at level 6; 1.0 against an empty memory, 0.05 for trivially short messages
  (compressed size below 10 bytes);
* salience s_t by rules: short messages (<= 50 characters) by speech act (commitment 0.8, correction 0.6,
  question 0.2, phatic noise 0.02), longer ones by length, numbers, dates, names and emotional markers;
* prediction error pi_t = 1 - cos(code(e_t || m_1), code(m_1)), m_1 the nearest stored message, from the binary
  codes of the hierarchy (signature divergence); 0 for noise or when m_1 is off-topic (code similarity below
  ``relevance_min``).

Admit iff s_t >= ``salience_floor`` and (w_n n_t + w_s s_t + w_pi pi_t) / (w_n + w_s + w_pi) >= threshold +
offset(category) (Eq. 1; corrections -0.06, decisions and relationships -0.04). The three scores, the category and
the verdict go into ``metadata["gate"]`` of admitted messages; rejected ones come back to the caller as
:class:`RejectedItem` (``id == -1``), never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hippo.base.timeutil import to_datetime
from hippo.base.types import MemoryItem
from hippo.engine.hierarchy.codes import Coder
from hippo.engine.lifecycle import Life
from hippo.engine.state import NamespaceState
from hippo.index import channels
from hippo.store.base import NewMessage
from hippo.text import tokenizer
from hippo.text.query import analyze
from hippo.text.salience import novelty, salience
from hippo.text.vocab import text_stems


@dataclass(frozen=True)
class RejectedItem(MemoryItem):
    """A message the encoding gate did not admit (nothing was stored; ``id`` is -1)."""

    admitted: bool = False
    gate: dict[str, Any] = field(default_factory=dict)


def prediction_error(code_of, text: str, nearest: str | None, category: str, relevance_min: float) -> float:
    """``code_of(stem ids) -> code``; 1 - cos(code(e || m1), code(m1)), gated by noise and topical relevance."""
    if nearest is None or category == "noise":
        return 0.0
    te, tm = text_stems(text), text_stems(nearest)
    if te.size == 0 or tm.size == 0:
        return 0.0
    ce, cm = code_of(te), code_of(tm)
    bits = ce.size * 64
    sim = 1.0 - 2.0 * float(np.bitwise_count(ce ^ cm).sum()) / bits
    if sim < relevance_min:
        return 0.0  # the nearest memory is about something else
    cross = code_of(np.concatenate([te, tm]))
    cos = 1.0 - 2.0 * float(np.bitwise_count(cross ^ cm).sum()) / bits
    return float(min(1.0, max(0.0, 1.0 - cos)))


def evaluate(state: NamespaceState, life: Life | None, prepared: list[NewMessage],
             leaving: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """The gate's verdict for each prepared message (batch members see the ones admitted before them). ``leaving``:
    ids of stored messages the write deletes (those it replaces), which are no neighbour of its messages: an edited
    version is not redundant with the version it replaces. Caller holds the read lock."""
    g = state.config.gate
    idx = state.index
    h = life.hier if life is not None else None
    if h is not None:
        code_of = h.code_of_stems
    else:
        coder = Coder(256)
        code_of = lambda st: coder.code_ids(np.unique(st), np.ones(np.unique(st).size))  # noqa: E731
    wsum = g.w_novelty + g.w_salience + g.w_prediction
    out = []
    batch: list[str] = []
    for p in prepared:
        text = tokenizer.decode(p.tokens)
        near: list[str] = []
        if len(idx):  # the engine's lexical channel, offline: the gate never calls an LLM
            lex = channels.lexical(idx, analyze(text[:2000], self_reference=False), state.config)
            rows = channels.top(lex, g.neighbors + len(leaving)).tolist()
            if leaving:
                ids = idx.ids.view
                rows = [r for r in rows if int(ids[r]) not in leaving]
            near = [idx.text_of(r) for r in rows[:g.neighbors]]
        memory = near + batch[-g.neighbors:]
        n = novelty(text, memory)
        s, category = salience(text)
        pi = prediction_error(code_of, text, memory[0] if memory else None, category, g.relevance_min)
        score = (g.w_novelty * n + g.w_salience * s + g.w_prediction * pi) / wsum
        bar = g.threshold + g.category_offsets.get(category, 0.0)
        ok = bool(s >= g.salience_floor and score >= bar)
        out.append({"novelty": round(n, 4), "salience": round(s, 4), "prediction_error": round(pi, 4),
                    "score": round(score, 4), "threshold": round(bar, 4), "category": category, "admitted": ok})
        if ok:
            batch.append(text)
    return out


def rejected(p: NewMessage, verdict: dict[str, Any], namespace: str) -> RejectedItem:
    return RejectedItem(id=-1, text=tokenizer.decode(p.tokens), speaker=p.speaker, role=p.role,
                        timestamp=to_datetime(p.ts), session_id=p.session_id, metadata=dict(p.metadata),
                        namespace=namespace, n_tokens=int(len(p.tokens)), admitted=False, gate=verdict)
