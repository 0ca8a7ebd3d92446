"""Search and recall over one namespace: the ranked hits of a question, and a prompt-ready context within a
token budget, either packed from the flat ranking or selected top-down through the hierarchy
(:mod:`hippo.engine.topdown`). Every function here only reads (the caller holds the read lock); recall's
reinforcement of what it returned is the one best-effort change, made under the lifecycle's own lock."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from hippo.base.types import Hit, Recall
from hippo.engine import pack, topdown
from hippo.engine.candidates import copy_times, newest_copy, pieces, stand_ins
from hippo.engine.items import make_item
from hippo.engine.lifecycle import Life
from hippo.engine.rank import exact_first, hits, rank
from hippo.engine.scope import Ask, respell
from hippo.engine.state import NamespaceState


def search(state: NamespaceState, ask: Ask, k: int, pred) -> list[Hit]:
    """The ``k`` best messages for the question (filter ``pred`` and the time scope applied)."""
    ask = respell(state, ask)  # a question's own slips (hippo.engine.scope.spelled)
    wide = pred is not None or ask.scope.filters
    limit = max(k, 20) if not wide else max(k * 20, state.config.retrieval.candidate_limit)
    rows, scores, per, _ = rank(state, ask, limit)
    rows, scores = exact_first(state, ask.text, rows, scores)
    return hits(state, rows, scores, per, pred, k, ask)


def uses_lifecycle(config: Any) -> bool:
    """Whether recall goes through the hierarchy / decay path instead of the flat packer."""
    hc = config.hierarchy
    return hc.recall == "evidence" or (hc.enabled and hc.recall != "flat") or config.decay.enabled


def recall(state: NamespaceState, life: Life | None, ask: Ask, budget: int, pred, include_dormant: bool,
           llm: Any = None, excluded: frozenset[int] = frozenset()) -> Recall:
    """A context of at most ``budget`` tokens: packed by expected evidence per token, or top-down through
    ``life`` (the hierarchy and decay), or from the flat ranking. The messages of ``excluded`` (ids) rank as any
    other and are skipped where the context is filled (:func:`hippo.engine.topdown.recall`)."""
    ask = respell(state, ask)  # a question's own slips (hippo.engine.scope.spelled)
    if life is not None or state.config.hierarchy.recall == "evidence":
        return topdown.recall(state, life, ask, budget, pred, include_dormant, llm, excluded)
    t0 = time.perf_counter()
    repeated: set[int] = set()
    rows, scores, _per, timings = rank(state, ask, state.config.retrieval.candidate_limit, context=True,
                                       repeated=repeated, left_out=topdown.excluded_rows(state.index, excluded))
    rows, _scores = stand_ins(state, rows, scores, repeated, pred, ask.scope)
    t = time.perf_counter()
    out = pack_rows(state, ask.text, rows, budget, pred, ask, excluded, repeated)
    timings["pack_ms"] = (time.perf_counter() - t) * 1e3
    timings["total_ms"] = (time.perf_counter() - t0) * 1e3
    out.timings = timings
    return out


def pack_rows(state: NamespaceState, query: str, rows: np.ndarray, budget: int, pred, ask: Ask | None,
              excluded: frozenset[int] = frozenset(), repeated: set[int] | frozenset[int] = frozenset(),
              newest: bool = True) -> Recall:
    """Rows packed in the given order into at most ``budget`` tokens, laid out by session and time; the messages of
    ``excluded`` (ids) are skipped, and those of ``repeated`` (rows) stand for the copies of their text. With
    ``newest``, a machine output's line shows its newest near-duplicate (:func:`hippo.engine.candidates.newest_copy`);
    without, the message given."""
    idx = state.index
    scope = ask.scope if ask else None
    ranked = [p for p in pieces(state, rows, pred, scope, repeated) if p.key not in excluded]
    chosen, text, tokens = pack.pack(ranked, budget,
                                     lambda ps: idx.texts_of([idx.row_of[p.key] for p in ps]),
                                     copy_times(state, pred, scope, excluded),
                                     newest_copy(state, pred, scope, excluded, query) if newest else None)
    meta = state.rows([p.key for p in chosen])
    messages = [make_item(meta[p.key], p.text) for p in pack.ordered(chosen) if p.key in meta]
    return Recall(query=query, text=text, tokens=tokens, budget_tokens=budget, messages=messages,
                  repeats=pack.repeats(chosen))
