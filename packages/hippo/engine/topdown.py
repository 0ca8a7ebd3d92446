"""Top-down recall over the hierarchy (seed 001 §3.3), with decay-aware ranking (seed 004 §8.3).

1. Candidates. The engine's lexical and signature channels rank messages (fused by RRF); the semantics those
   messages support, plus the semantics whose codes are nearest the query's code, are the candidate semantics
   S_q, and their themes the candidate themes T_q. A unit's normalized query similarity s~(q, i) in [0, 1] mixes
   the best relevance of its source messages with the idf share of the query terms it covers.
2. Stage I (representative selection, Eq. 4). On the theme kNN graph restricted to T_q, greedily pick
       i* = argmax_{i in V \\ R}  alpha * sum_{u in Delta(i;R)} w_iu / Z + (1 - alpha) * s~(q, i)
   where Delta(i;R) are the nodes of {i} + N(i) not yet covered (w_ii = 1) and Z the largest such sum at the
   start, until the covered share of V reaches ``stage1_coverage`` or ``stage1_themes`` are chosen; then the same
   on the semantic kNN graph restricted to the chosen themes' candidate semantics.
3. Stage II (uncertainty-gated expansion). The selected semantics vouch for their source messages and episodes.
   Messages are considered best first (own relevance plus semantic support) and admitted only while they reduce
   the reader's uncertainty, measured offline as the idf mass of query terms not yet covered by the context plus
   relevance discounted by redundancy (Hamming similarity to what is already included); the conversational
   neighbours of an admitted message inside its episode become candidates (prerequisite turns). After
   ``stage2_patience`` candidates in a row add nothing, expansion stops early: unused budget stays unused.

Without Stage I the units are the ``stage1_*`` most similar ones; without Stage II every linked episode is
included whole, best first, while the budget lasts (the "memory-only" setting of seed 001 Fig. 3).

Decay changes ranking only: relevance is scaled by ``(1 - rank_weight) + rank_weight * relative strength``;
dormant messages and units are left out unless ``include_dormant`` or their relevance is within ``cue_ratio`` of
the best (a strong exact cue completes the pattern, seed 004 §7). Messages still in the CURRENT buffer are
ordinary candidates of the engine's channels, so they are always retrievable.
"""

from __future__ import annotations

import logging
import math
import time
from functools import cached_property
from typing import Any

import numpy as np

from hippo.base.timeutil import to_datetime
from hippo.base.types import Recall
from hippo.engine import evidence
from hippo.engine import pack as context
from hippo.engine.candidates import copy_times, newest_copy, stand_ins
from hippo.engine.candidates import pieces as describe
from hippo.engine.hierarchy.codes import similarity
from hippo.engine.hierarchy.lazy import get_many
from hippo.engine.items import make_item
from hippo.engine.lifecycle import Life, message_terms
from hippo.engine.rank import embedding_code, rank
from hippo.engine.scope import Ask
from hippo.engine.state import NamespaceState
from hippo.index import channels
from hippo.text.vocab import vocab

log = logging.getLogger("hippo.engine")
W_THEME = 0.15            # bonus for a message of a Stage I theme not yet represented in the context
_FLAT_POOL = 120          # flat candidates that seed the hierarchy's candidate units


def greedy_representatives(nodes: list[int], rel: dict[int, float], neighbors: dict[int, list[tuple[int, float]]],
                           alpha: float, max_selected: int, coverage: float) -> list[int]:
    """Stage I, Eq. 4 of seed 001: coverage gain vs. relevance on a kNN graph restricted to ``nodes``."""
    if not nodes:
        return []
    vset = set(nodes)
    nbr = {i: [(u, w) for u, w in neighbors.get(i, []) if u in vset and u != i and w > 0] for i in nodes}
    z = max(1.0 + sum(w for _, w in nbr[i]) for i in nodes)
    covered: set[int] = set()
    chosen: list[int] = []
    rest = list(nodes)
    while rest and len(chosen) < max_selected:
        best, best_score = None, -math.inf
        for i in rest:
            gain = (0.0 if i in covered else 1.0) + sum(w for u, w in nbr[i] if u not in covered)
            score = alpha * gain / z + (1.0 - alpha) * rel.get(i, 0.0)
            if score > best_score + 1e-12:
                best, best_score = i, score
        chosen.append(best)
        rest.remove(best)
        covered.add(best)
        covered.update(u for u, _ in nbr[best])
        if len(covered) / len(vset) >= coverage:
            break
    return chosen


def _header_cost(p: context.Piece, cache: dict) -> int:
    """Tokens of the session header a piece would open (headers only vary with the day)."""
    day = None if p.ts is None else int(context._local(p) // 86400)
    got = cache.get(day)
    if got is None:
        got = cache[day] = context._cached_count(context._header(p)) + 1
    return got


def _piece_cost(p: context.Piece, groups: set[str]) -> int:
    cost = p.n_tokens + context._cached_count(context._prefix(p)) + 2
    if context._group_key(p) not in groups:
        cost += context._cached_count(context._header(p)) + 1
    return cost


class _Scorer:
    """Query-side quantities shared by every stage.

    The query's stems are keyed by their stem ids; a stem no text read so far holds has no id (a question's new
    word gets none: :meth:`hippo.text.vocab.Vocab.known_ids`) and is keyed by a negative number of its own. Such a
    stem may get an id during the recall, when the terms of a candidate message holding it are first computed
    (a word cl100k splits into pieces, "Somusumi", is stemmed whole only then): :meth:`holds` looks it up again."""

    def __init__(self, life: Life | None, stems: list[str]) -> None:
        h = life.hier if life is not None else None
        self.h = h
        known = vocab().known_ids(stems)
        ids = [i if i >= 0 else -1 - j for j, i in enumerate(known)]
        self.stems = ids
        self.new = {k: st for k, st in zip(ids, stems) if k < 0}   # key -> stem of the stems without an id
        weights = h.idf_of(ids).tolist() if h is not None and ids else [1.0] * len(ids)
        self.idf = dict(zip(ids, weights))
        self.total = sum(self.idf.values()) or 1.0

    @cached_property
    def qcode(self) -> np.ndarray | None:
        """The query's code for the unit stages (Stage I compares it with the semantics' codes), computed when first
        asked for: evidence mode never does. Assigning replaces it (units built from user embeddings)."""
        if self.h is None or not self.stems:
            return None
        return self.h.query_code([k for k in self.stems if k >= 0], list(self.new.values()))

    def holds(self, key: int, terms) -> bool:
        """Whether the stem ids ``terms`` hold the query stem ``key``."""
        if key >= 0:
            return key in terms
        sid = vocab().stem_id(self.new[key])
        return sid >= 0 and sid in terms

    def coverage(self, terms) -> float:
        terms = set(terms)
        return sum(w for t, w in self.idf.items() if self.holds(t, terms)) / self.total


def recall(state: NamespaceState, life: Life | None, ask: Ask, budget: int, pred, include_dormant: bool,
           llm: Any = None, excluded: frozenset[int] = frozenset()) -> Recall:
    """The recall context for ``ask`` within ``budget`` tokens. Caller holds the read lock; the only change made
    here is reinforcement of what was recalled, under the lifecycle's own lock (seed 004 §4.1). ``life`` is None
    when neither the hierarchy nor decay is enabled (then only the evidence and flat modes apply).

    The messages of ``excluded`` (ids) are ranked as any other and only left out where the context is filled: the
    selection skips them and the budget goes to the next candidates, so a recall excluding nothing is the recall
    it was, and one excluding messages is that recall without them, refilled. Stage II's semantics are chosen
    through the messages the context can include (:func:`_stage1`), since they direct its budget."""
    cfg = state.config
    hc, dc = cfg.hierarchy, cfg.decay
    hier = life.hier if life is not None else None
    mode = hc.recall if (hc.enabled and hier is not None) or hc.recall == "evidence" else "flat"
    idx = state.index
    t0 = time.perf_counter()
    repeated: set[int] = set()  # rows standing for the copies of their text (collapsed in the candidate lists)
    rows, scores, per, timings = rank(state, ask, cfg.retrieval.candidate_limit, context=True,
                                      magnitudes=mode == "evidence", repeated=repeated,
                                      left_out=excluded_rows(idx, excluded))
    rows, scores = stand_ins(state, rows, scores, repeated, pred, ask.scope)
    t = time.perf_counter()
    exponent = None
    if mode == "evidence":
        lexical = per.get("lexical")
        rc = cfg.retrieval
        by_session = channels.sessions(idx, ask.terms, cfg, lexical) \
            if rc.session_weight > 0 or rc.standing_share > 0 else None
        rows, scores = evidence.with_sessions(state, rows, scores, budget, by_session)
        rows, scores = evidence.with_standing(state, rows, scores, budget, lexical, by_session)
    if mode == "evidence" and pred is None:
        # only the candidates that can reach the context are described and annotated
        rows, scores, exponent = evidence.shortlist(state, rows, scores, budget, excluded_rows(idx, excluded))
    pieces = describe(state, rows, pred, ask.scope, repeated)
    rel_raw = {p.key: float(sc) for p, sc in zip(pieces, _aligned_scores(idx, rows, scores, pieces))}
    top = max(rel_raw.values(), default=0.0) or 1.0
    rel = {k: v / top for k, v in rel_raw.items()}
    by_id = {p.key: p for p in pieces}
    sc = _Scorer(life, ask.terms.stems)
    moment = life.moment(idx, ask.scope.as_of) if life is not None else None  # when strengths are read
    if dc.enabled and life is not None and rel:
        rel = _decay_adjust(life, rel, include_dormant,
                            lambda m: sc.coverage(message_terms(life, idx, m)) if sc.stems else 0.0, moment)
    timings["decay_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    units: list[dict[str, Any]] = []
    if mode == "evidence":
        chosen_ids = evidence.order(state, list(rel), rel, by_id, exponent)
    elif mode == "flat":
        chosen_ids = sorted(rel, key=lambda k: (-rel[k], by_id[k].seq))
    else:
        if life.hier.external_codes is not None and state.host.embed is not None:
            # units carry embedding codes: compare them with the query's embedding code, not its terms'
            sc.qcode = embedding_code(state, ask)
        # Stage II spends the budget on what the selected units support: they are chosen through the messages the
        # context can include; without it, the episodes of the units chosen as without ``excluded`` fill it
        sem_sel, theme_sel, sem_top = _stage1(life, sc, rel, mode, include_dormant,
                                              excluded if mode in ("stage2", "full") else frozenset(), moment)
        rep_themes: set[int] = set()
        if mode == "full":
            # Stage I's representatives steer Stage II towards uncovered themes; support stays relevance-led
            rep_themes = {t for t, _ in theme_sel}
            rep_themes.update(life.hier.themes.theme_of[sid] for sid, _ in sem_sel
                              if sid in life.hier.themes.theme_of)
            sem_sel = sem_top
        units = _unit_records(life, sem_sel, theme_sel, rel, excluded)
        _event_spans(state, units)  # derived units carry the event time span of their messages
        by_id.update(_linked_pieces(state, life, sem_sel, by_id, pred, ask))
        for k in excluded:  # Stage II and the episodes fill the budget with the others
            by_id.pop(k, None)
        if mode in ("stage2", "full"):
            chosen_ids = _stage2(life, sc, rel, sem_sel, by_id, budget, hc,
                                 lambda m: message_terms(life, idx, m), rep_themes)
            if hc.llm_uncertainty and llm is not None and len(chosen_ids) > 1:
                chosen_ids = _llm_gate(state, llm, ask.text, chosen_ids, timings)
        else:
            chosen_ids = _expand_episodes(life, rel, sem_sel, by_id, budget)
    timings["select_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    ranked = [by_id[k] for k in chosen_ids if k in by_id and k not in excluded]
    chosen, text, tokens = context.pack(ranked, budget, lambda ps: idx.texts_of([idx.row_of[p.key] for p in ps]),
                                        copy_times(state, pred, ask.scope, excluded),
                                        newest_copy(state, pred, ask.scope, excluded, ask.text))
    meta = state.rows([p.key for p in chosen])
    messages = [make_item(meta[p.key], p.text) for p in context.ordered(chosen) if p.key in meta]
    if mode == "evidence" and hier is not None and messages:
        units = _units_of(state, life, [m.id for m in messages], rel, excluded)
    if units and (pred is not None or ask.scope.filters):
        units = _admitted_units(state, units, pred, ask)
    if units and excluded:
        units = _units_without(state, units, excluded)
    timings["pack_ms"] = (time.perf_counter() - t) * 1e3
    if dc.enabled and life is not None and dc.reinforce_on_recall and messages:
        included = {m.id for m in messages}
        used = {"semantic": [u["id"] for u in units if u["level"] == "semantic"
                             and included.intersection(u["message_ids"])],
                "theme": [u["id"] for u in units if u["level"] == "theme"
                          and included.intersection(u["message_ids"])]}
        if life.hier is not None:
            used["episode"] = sorted({e for e in get_many(life.hier.msg_episode, list(included)) if e is not None})
        life.reinforce(included, used)
    timings["total_ms"] = (time.perf_counter() - t0) * 1e3
    return Recall(query=ask.text, text=text, tokens=tokens, budget_tokens=budget, messages=messages, units=units,
                  timings=timings, repeats=context.repeats(chosen))


def excluded_rows(idx: Any, excluded: frozenset[int]) -> np.ndarray | None:
    """The rows (ascending) of the ``excluded`` message ids this namespace holds, or None for none."""
    rows = [idx.row_of[k] for k in excluded if k in idx.row_of]
    return np.sort(np.asarray(rows, dtype=np.int64)) if rows else None


def _units_of(state: NamespaceState, life: Life, included: list[int], rel: dict[int, float],
              excluded: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """The units already built over the messages a context includes (the evidence packer selects messages; the
    hierarchy still says what they belong to), but those whose text shows a message of ``excluded``. Nothing is
    consolidated for this: CURRENT messages have no units."""
    h = life.hier
    score: dict[int, float] = {}
    quoted = get_many(h.msg_semantics, included)
    lacking = [m for m, sids in zip(included, quoted) if not sids]
    episode_of = dict(zip(lacking, get_many(h.msg_episode, lacking, -1)))
    for m, sids in zip(included, quoted):
        if not sids:  # a message no semantic quotes still belongs to its episode, and so to the episode's semantics
            e = h.episodes.get(episode_of[m])
            sids = e.semantic_ids if e is not None else ()
        for sid in sids:
            if sid in h.semantics and not h.quotes(sid, excluded):
                score[sid] = max(score.get(sid, 0.0), rel.get(m, 0.0))
    sems = sorted(score.items(), key=lambda x: (-x[1], x[0]))[: life.hcfg.stage1_semantics]
    themes: dict[int, float] = {}
    for sid, sc in sems:
        t = h.themes.theme_of.get(sid)
        if t is not None:
            themes[t] = max(themes.get(t, 0.0), sc)
    units = _unit_records(life, sems, sorted(themes.items(), key=lambda x: (-x[1], x[0])), rel, excluded)
    _event_spans(state, units)
    return units


def _admitted_units(state: NamespaceState, units: list[dict[str, Any]], pred, ask: Ask) -> list[dict[str, Any]]:
    """The units built only over messages ``pred`` and the time scope admit. Units were built over the whole
    namespace: a semantic's text is the sentence of its first source message, a theme's summary holds the terms and
    the central sentence of all its semantics, so a unit reaching a message the call left out would hand its text
    (and id) to the caller as if the filter had admitted it."""
    idx = state.index
    wanted = list(dict.fromkeys(m for u in units for m in u["message_ids"] if m in idx.row_of))
    rows = np.asarray([idx.row_of[m] for m in wanted], dtype=np.int64)
    admitted = {p.key for p in describe(state, rows, pred, ask.scope)}
    return [u for u in units if u["message_ids"] and all(m in admitted for m in u["message_ids"])]


def _units_without(state: NamespaceState, units: list[dict[str, Any]], excluded: frozenset[int]
                   ) -> list[dict[str, Any]]:
    """The units as they stand without the messages of ``excluded``: a unit holding only excluded messages is not
    listed, one holding some lists the others (its event span theirs). The caller shows its model the excluded
    messages already; a unit listing them would hand them over again."""
    out, trimmed = [], []
    for u in units:
        kept = [m for m in u["message_ids"] if m not in excluded]
        if not kept:
            continue
        if len(kept) < len(u["message_ids"]):
            u = dict(u, message_ids=kept)
            trimmed.append(u)
        out.append(u)
    _event_spans(state, trimmed)
    return out


def _event_spans(state: NamespaceState, units: list[dict[str, Any]]) -> None:
    """Each unit's ``event_start`` / ``event_end``: the event time span of its messages (hippo.engine.truth)."""
    spans = state.truth.spans(state.index, [u["message_ids"] for u in units])
    for u, span in zip(units, spans):
        u["event_start"], u["event_end"] = (to_datetime(span[0]), to_datetime(span[1])) if span else (None, None)


def _aligned_scores(idx, rows: np.ndarray, scores: np.ndarray, pieces: list[context.Piece]) -> list[float]:
    by_id = {int(idx.ids.a[r]): float(sc) for r, sc in zip(rows.tolist(), scores.tolist())}
    return [by_id[p.key] for p in pieces]


LLM_CHECKPOINTS = (0.25, 0.5, 0.75, 1.0)
LLM_MIN_DROP = 0.05  # relative entropy drop that justifies the next slice of evidence


def _llm_gate(state: NamespaceState, llm: Any, query: str, chosen: list[int], timings: dict) -> list[int]:
    """Stage II with a reader (seed 001 §3.3): grow the context slice by slice, in Stage II's order, while the
    reader's mean token entropy on the question keeps falling by ``LLM_MIN_DROP``; on any LLM failure the
    offline selection stands."""
    from hippo.base.errors import LLMError
    from hippo.engine import llm as llm_mod

    client = llm_mod.as_llm(llm)
    idx = state.index
    t = time.perf_counter()
    cuts = sorted({max(1, round(f * len(chosen))) for f in LLM_CHECKPOINTS})
    keep = cuts[-1]
    try:
        prev, prev_cut = None, cuts[0]
        for cut in cuts:
            ctx = "\n".join(idx.text_of(idx.row_of[m]) for m in chosen[:cut] if m in idx.row_of)
            u = client.uncertainty(query, ctx)
            if prev is not None and prev - u < LLM_MIN_DROP * max(prev, 1e-9):
                keep = prev_cut
                break
            prev, prev_cut = u, cut
    except LLMError as exc:
        log.warning("LLM uncertainty failed, keeping the offline Stage II selection: %s", exc)
        state.llm_fallbacks += 1
        keep = len(chosen)
    timings["llm_ms"] = (time.perf_counter() - t) * 1e3
    return chosen[:keep]


def _decay_adjust(life: Life, rel: dict[int, float], include_dormant: bool, cue,
                  moment: tuple[int, float, float]) -> dict[int, float]:
    """Scale relevance by relative strength (fresh entries untouched) and leave dormant entries out unless
    ``include_dormant`` or ``cue(message id)`` (the share of the query's term weight the message holds) reaches
    ``cue_ratio``: a strong exact cue completes the pattern (seed 004 §7, §8.3). Strengths are read at ``moment``
    (:meth:`Life.moment`: now, or the ``as_of`` of a question about the memory as it stood then)."""
    dc = life.dcfg
    ids = list(rel)
    turn, at, ref = moment
    strength = life.message_strength(ids, (turn, at))
    relative = np.minimum(1.0, strength / max(ref, 1e-12))
    out = {}
    for i, r, rs in zip(ids, (rel[i] for i in ids), relative.tolist()):
        if not include_dormant and rs < dc.dormant_threshold and cue(i) < dc.cue_ratio:
            continue  # dormant, and not a strong enough cue to complete the pattern
        fresh = min(1.0, rs / dc.fresh_level) if dc.fresh_level > 0 else 1.0
        out[i] = r * ((1.0 - dc.rank_weight) + dc.rank_weight * fresh)
    return out


def _stage1(life: Life, sc: _Scorer, rel: dict[int, float], mode: str, include_dormant: bool,
            excluded: frozenset[int] = frozenset(), moment: tuple[int, float, float] | None = None
            ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """Candidate semantics and themes, then representative selection (Stage I) or plain top-k. A semantic whose
    text shows a message of ``excluded`` is no candidate, and the others are supported by the messages not
    excluded: a unit covers the question through what the context can include."""
    h = life.hier
    hc = life.hcfg
    flat = sorted(rel, key=lambda k: -rel[k])[:_FLAT_POOL]
    cand: dict[int, float] = {}
    for sids in get_many(h.msg_semantics, flat, ()):
        for sid in sids:
            cand[sid] = 0.0
    if sc.qcode is not None and len(h.semantics):
        slots, dist = h.sem_codes.top(sc.qcode, hc.candidate_semantics)
        for sid in slots.tolist():
            cand.setdefault(sid, 0.0)
    if excluded:
        cand = {sid: v for sid, v in cand.items()
                if not h.quotes(sid, excluded) and any(m not in excluded for m in h.semantics[sid].message_ids)}
    if not cand:
        return [], [], []
    sids = list(cand)
    codesim = (similarity(sc.qcode, h.sem_codes.codes[sids], h.bits) if sc.qcode is not None
               else np.zeros(len(sids)))
    for sid, cs in zip(sids, codesim.tolist()):
        sem = h.semantics[sid]
        support = max((rel.get(m, 0.0) for m in sem.message_ids if m not in excluded), default=0.0)
        cand[sid] = 0.55 * support + 0.35 * sc.coverage(sem.terms) + 0.10 * max(0.0, cs)
    if life.dcfg.enabled and not include_dormant:
        turn, at, ref = moment or life.moment(None)
        st = life.unit_strength("semantic", sids, (turn, at))
        cand = {sid: v for (sid, v), s in zip(cand.items(), st.tolist())
                if s >= life.dcfg.dormant_threshold * ref or v >= life.dcfg.cue_ratio}
    top = max(cand.values(), default=0.0) or 1.0
    cand = {k: v / top for k, v in cand.items() if v > 0}
    sem_order = sorted(cand, key=lambda k: (-cand[k], k))[: hc.candidate_semantics]
    themes: dict[int, float] = {}
    for sid in sem_order:
        t = h.themes.theme_of.get(sid)
        if t is not None:
            themes[t] = max(themes.get(t, 0.0), cand[sid])
    theme_order = sorted(themes, key=lambda k: (-themes[k], k))[: hc.candidate_themes]
    if mode in ("stage1", "full"):
        tn = {t: list(zip(*h.themes.graph.neighbors(t))) for t in theme_order}
        tn = {t: [(int(u), float(w)) for u, w in v] for t, v in tn.items()}
        chosen_t = greedy_representatives(theme_order, themes, tn, hc.alpha, hc.stage1_themes, hc.stage1_coverage)
        allowed = set(chosen_t)
        pool = [sid for sid in sem_order if h.themes.theme_of.get(sid) in allowed]
        sn = {}
        for sid in pool:
            ids, w = h.sem_graph.neighbors(sid)
            sn[sid] = [(int(u), float(x)) for u, x in zip(ids.tolist(), w.tolist())]
        chosen_s = greedy_representatives(pool, cand, sn, hc.alpha, hc.stage1_semantics, hc.stage1_coverage)
    else:
        chosen_t = theme_order[: hc.stage1_themes]
        chosen_s = sem_order[: hc.stage1_semantics]
    top_s = sem_order[: hc.stage1_semantics]
    return ([(sid, cand[sid]) for sid in chosen_s], [(t, themes[t]) for t in chosen_t],
            [(sid, cand[sid]) for sid in top_s])


def _unit_records(life: Life, sems: list[tuple[int, float]], themes: list[tuple[int, float]],
                  rel: dict[int, float], excluded: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """The units' records. Their texts show no message of ``excluded``: a theme's summary is made of its other
    semantics, a semantic whose text shows one (:meth:`Hierarchy.quotes`) is not listed, nor a theme none
    of whose semantics is left."""
    h = life.hier
    out = []
    for t, score in themes:
        text = h.theme_summary(t, without=excluded)
        if excluded and not text:
            continue
        out.append({"id": int(t), "level": "theme", "text": text, "score": score,
                    "message_ids": h.theme_messages(t)})
    for sid, score in sems:
        sem = h.semantics[sid]
        if h.quotes(sid, excluded):
            continue
        out.append({"id": int(sid), "level": "semantic", "text": sem.text, "score": score,
                    "message_ids": list(sem.message_ids), "episode_ids": list(sem.episode_ids)})
    return out


def _linked_pieces(state: NamespaceState, life: Life, sems: list[tuple[int, float]], have: dict[int, Any],
                   pred, ask: Ask) -> dict[int, context.Piece]:
    """Pieces for messages reached through selected units that the engine's channels did not rank."""
    h = life.hier
    idx = state.index
    want: list[int] = []
    for sid, _ in sems:
        sem = h.semantics[sid]
        want.extend(sem.message_ids)
        for eid in sem.episode_ids:
            e = h.episodes.get(eid)
            if e is not None:
                want.extend(e.message_ids)
    want = [m for m in dict.fromkeys(want) if m not in have and m in idx.row_of]
    if not want:
        return {}
    rows = np.asarray([idx.row_of[m] for m in want], dtype=np.int64)
    return {p.key: p for p in describe(state, rows, pred, ask.scope)}


def _expand_episodes(life: Life, rel: dict[int, float], sems: list[tuple[int, float]],
                     by_id: dict[int, context.Piece], budget: int) -> list[int]:
    """No Stage II: every episode linked to a selected semantic, whole and best first, then the flat ranking."""
    h = life.hier
    order: list[int] = []
    for sid, _ in sems:
        for eid in h.semantics[sid].episode_ids:
            e = h.episodes.get(eid)
            if e is not None:
                order.extend(m for m in e.message_ids if m in by_id)
    order.extend(sorted(rel, key=lambda k: -rel[k]))
    return list(dict.fromkeys(order))


# Stage II weights (tuned on LoCoMo dev with ``hippo bench locomo --ablation``)
W_SUPPORT = 0.5        # relevance a selected semantic lends to its source messages
W_EPISODE = 0.25       # ... and to the other messages of its episodes
W_COVER = 0.5          # value of covering query terms not yet in the context (uncertainty reduction)
W_REDUNDANCY = 0.5     # discount for similarity to messages already included
LOOKAHEAD = 24         # candidates re-scored at each greedy step
POOL_LIMIT = 240       # best candidates Stage II considers at all
HEAD_SHARE = 0.3       # share of the budget filled in the engine's own order before the greedy takes over


def _stage2(life: Life, sc: _Scorer, rel: dict[int, float], sems: list[tuple[int, float]],
            by_id: dict[int, context.Piece], budget: int, hc, terms_of, rep_themes: set[int] = frozenset()
            ) -> list[int]:
    """Stage II: greedily admit the message with the best marginal gain (relevance and semantic support,
    discounted by redundancy, plus the uncovered query mass it covers); neighbours of admitted messages inside
    their episode become candidates; stop when ``stage2_patience`` candidates in a row add nothing."""
    h = life.hier
    support: dict[int, float] = {}
    for sid, score in sems:
        sem = h.semantics[sid]
        for eid in sem.episode_ids:
            e = h.episodes.get(eid)
            if e is None:
                continue
            for m in e.message_ids:
                support[m] = max(support.get(m, 0.0), W_EPISODE * score)
        for m in sem.message_ids:
            support[m] = max(support.get(m, 0.0), W_SUPPORT * score)

    prio = {m: rel.get(m, 0.0) + support.get(m, 0.0) for m in set(rel) | set(support) if m in by_id}
    pool = sorted(prio, key=lambda m: (-prio[m], by_id[m].seq))
    pool = pool[:POOL_LIMIT]
    if not pool:
        return []
    n = len(pool)
    base = np.array([prio[m] for m in pool])
    best = float(base[0]) or 1.0
    codes = np.zeros((n, h.words), dtype=np.uint64)
    has_code = np.zeros(n, dtype=bool)
    for k, m in enumerate(pool):
        c = h.message_code(m)
        if c is not None:
            codes[k] = c
            has_code[k] = True
    pieces = [by_id[m] for m in pool]
    line_cost = np.array([p.n_tokens + context._cached_count(context._prefix(p)) + 2 for p in pieces])
    head_cache: dict = {}
    head_cost = np.array([_header_cost(p, head_cache) for p in pieces])
    group_ids: dict[str, int] = {}
    group_of = np.array([group_ids.setdefault(context._group_key(p), len(group_ids)) for p in pieces])
    group_open = np.zeros(len(group_ids), dtype=bool)
    active = np.ones(n, dtype=bool)
    redundancy = np.zeros(n)
    uncovered = dict(sc.idf)
    chosen: list[int] = []
    used = 0
    misses = 0
    terms_cache: dict[int, set[str]] = {}
    open_themes = set(rep_themes)
    quoted = get_many(h.msg_semantics, pool, ())

    def themes_of(k: int) -> set[int]:
        return {h.themes.theme_of[sid] for sid in quoted[k] if sid in h.themes.theme_of}

    def terms(k: int) -> set[str]:
        got = terms_cache.get(k)
        if got is None:
            got = set(terms_of(pool[k]))
            sp = pieces[k].speaker
            if sp:
                got.update(h._speaker_stem(sp))
            terms_cache[k] = got
        return got

    head = HEAD_SHARE * budget
    by_rel = sorted(range(n), key=lambda k: (-rel.get(pool[k], 0.0), pieces[k].seq))
    qterms = list(uncovered)
    weight = np.array([uncovered[t] for t in qterms]) / sc.total
    present = np.array([[sc.holds(t, tk) for t in qterms] for tk in (terms(k) for k in range(n))],
                       dtype=bool).reshape(n, len(qterms))
    open_terms = np.ones(len(qterms), dtype=bool)
    while budget - used >= 3:
        left = budget - used
        cost = line_cost + np.where(group_open[group_of], 0, head_cost)
        active &= cost <= left
        cand = np.flatnonzero(active)
        if cand.size == 0:
            break
        if used < head:  # the engine's best candidates first: their order is already the most reliable
            k_head = next((k for k in by_rel if active[k]), None)
            window = np.array([k_head]) if k_head is not None else cand[:LOOKAHEAD]
        else:
            window = cand[:LOOKAHEAD]
        cov = present[window] @ (weight * open_terms) if qterms else np.zeros(window.size)
        gain = (base[window] / best) * (1.0 - W_REDUNDANCY * redundancy[window]) + W_COVER * cov
        if open_themes:
            gain = gain + W_THEME * np.array([bool(themes_of(k) & open_themes) for k in window.tolist()])
        j = int(np.argmax(gain))
        k = int(window[j])
        active[k] = False
        if (base[k] < hc.stage2_floor * best and cov[j] == 0.0) or gain[j] < hc.stage2_min_gain:
            misses += 1
            if misses >= hc.stage2_patience:
                break
            continue
        misses = 0
        chosen.append(pool[k])
        group_open[group_of[k]] = True
        used += int(cost[k])
        open_terms &= ~present[k]
        open_themes.difference_update(themes_of(k))
        if has_code[k]:
            sims = similarity(codes[k], codes, h.bits)
            sims[~has_code] = 0.0
            np.maximum(redundancy, np.maximum(sims, 0.0), out=redundancy)
    return chosen
