"""Consolidation cycles (seed 004 §9, §14.3; seed 003 §3.3).

* light (every add, and on demand): strengths are closed-form, so a light pass only evaluates them to report
  dormancy and hard expiries; the hierarchy itself is maintained by every add (CURRENT buffer flushes).
* deep (``consolidate("deep")``, e.g. at a session end): flush the CURRENT buffer into episodes, re-cluster the
  themes (split the overcrowded, move semantics whose nearest theme changed when f(P) rises, merge the tiny), make
  the kNN graphs exact, refresh summaries (with the LLM when one is configured: episode summaries and facts with
  provenance), and mark persist-worthy units (policy ``persist`` or accessed at least ``persist_accesses`` times),
  which then decay at the rate of long-term ``memory``.
* archival (``consolidate("archival")``): prune units that are dormant and older than ``retention_s``; messages
  stay unless a policy marked them ``prune``, in which case dormant or expired ones are deleted.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from hippo.base.errors import LLMError
from hippo.engine.hierarchy import decay as decay_mod
from hippo.engine.hierarchy.decay import F_PERSIST
from hippo.engine.lifecycle import Life
from hippo.engine.state import NamespaceState

log = logging.getLogger("hippo.consolidate")
LEVELS = ("light", "deep", "archival")


def light(life: Life) -> dict[str, Any]:
    turn, at = life.clock()
    slots = life.decay.live_slots()
    out: dict[str, Any] = {"level": "light", "messages": int(slots.size)}
    if slots.size:
        s = life.strengths(life.decay, slots, turn, at)
        out["dormant"] = int((s < life.dcfg.dormant_threshold * life.reference(at)).sum())
        out["expired"] = int(life.expired(life.decay, slots, turn, at).sum())
        out["mean_strength"] = float(s.mean())
    if life.hier is not None:
        out["current_buffer"] = len(life.hier.buffer)
    return out


def _refine_themes(life: Life) -> int:
    """One pass moving each semantic to a neighbouring theme whose centroid is closer, when f(P) rises."""
    h = life.hier
    th = h.themes
    moved = 0
    for sid in sorted(h.semantics):
        t = th.theme_of.get(sid)
        if t is None or len(th.members[t]) <= 1:
            continue
        code = h.sem_codes.codes[sid]
        nbrs, _ = th.graph.neighbors(t)
        options = [int(u) for u in nbrs.tolist() if th.codes.alive[u] and len(th.members[u]) < th.cap]
        if not options:
            continue
        own = 1.0 - 2.0 * float(np.bitwise_count(code ^ th.codes.codes[t]).sum()) / h.bits
        sims = 1.0 - 2.0 * np.bitwise_count(code ^ th.codes.codes[options]).sum(axis=1) / h.bits
        j = int(np.argmax(sims))
        if sims[j] <= own:
            continue
        if th.consider_move(sid, options[j]):
            moved += 1
    return moved


def deep(state: NamespaceState, life: Life, llm: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"level": "deep"}
    h = life.hier
    if h is not None:
        closed = life.consolidate_ready(final=True)
        th = h.themes
        splits0, merges0, moves0 = th.splits, th.merges, th.reassignments
        for t in th.live().tolist():
            if len(th.members[t]) > th.cap:
                th.split(t)
        moved = _refine_themes(life)
        for t in th.live().tolist():
            if th.codes.alive[t] and len(th.members[t]) <= th.tiny:
                th.consider_merge(t)
        th.graph.rebuild()
        h.sem_graph.rebuild()
        h._theme_summary.clear()
        life._record_units(decay_mod.now())
        out.update({"episodes_closed": len(closed), "splits": th.splits - splits0, "merges": th.merges - merges0,
                    "moved": moved, "reassignments": th.reassignments - moves0, "f_score": th.score()})
        if llm is not None:
            out.update(llm_refresh(state, life, llm))
    out["persist_marked"] = _mark_persist(life)
    out.update({k: v for k, v in light(life).items() if k != "level"})
    return out


def llm_refresh(state: NamespaceState, life: Life, llm: Any, episode_ids: list[int] | None = None
                ) -> dict[str, Any]:
    """Episode summaries and facts from the LLM; any failure keeps the offline units (and is counted)."""
    from hippo.engine import llm as llm_mod

    llm = llm_mod.as_llm(llm)
    h = life.hier
    idx = state.index
    done = failed = facts = 0
    for eid in sorted(episode_ids if episode_ids is not None else h.episodes):
        e = h.episodes.get(eid)
        if e is None or e.llm_summary:
            continue
        rows = [(m, idx.row_of[m]) for m in e.message_ids if m in idx.row_of]
        meta = state.host.store.rows(state.name, [m for m, _ in rows])
        items = [(m, meta[m].speaker if m in meta else None, idx.text_of(r)) for m, r in rows]
        if not items:
            continue
        try:
            summary = llm.summarize([f"{sp or 'unknown'}: {t}" for _, sp, t in items])
            extracted = llm.facts(items)
        except LLMError as exc:
            log.warning("LLM refresh of episode %d failed, keeping the offline units: %s", eid, exc)
            state.llm_fallbacks += 1
            failed += 1
            continue
        e.summary = summary
        e.llm_summary = True
        e.summary_spans = ()
        if extracted:
            offline = [sid for sid in list(e.semantic_ids)
                       if sid in h.semantics and not h.semantics[sid].llm and h.semantics[sid].episode_ids == [eid]]
            for sid in offline:
                h.drop_semantic(sid)
            life.units["semantic"].drop(offline)
            by_id = {m: (sp, t) for m, sp, t in items}
            for fact, sources in extracted:
                first = min(sources, key=lambda m: e.message_ids.index(m) if m in e.message_ids else 0)
                sp = by_id[first][0]
                row = meta.get(first)
                h.add_semantic(fact, sp, sources, eid, None, row.seq if row else e.first_seq,
                               row.ts if row else e.t0, 1.0, llm=True)
                facts += 1
        done += 1
    life._record_units(decay_mod.now())
    return {"llm_episodes": done, "llm_failures": failed, "llm_facts": facts}


def _mark_persist(life: Life) -> int:
    """Units and messages accessed often enough, or marked by a policy, become long-term memory."""
    d = life.dcfg
    marked = 0
    for table in [life.decay, *life.units.values()]:
        slots = table.live_slots()
        if not slots.size:
            continue
        hot = slots[(table.accesses[slots] >= d.persist_accesses) | ((table.flags[slots] & F_PERSIST) != 0)]
        if hot.size:
            table.flags[hot] |= F_PERSIST
            table.base_rate[hot] = np.minimum(table.base_rate[hot], d.rates["memory"])
            marked += int(hot.size)
    return marked


def archival(life: Life) -> tuple[dict[str, Any], list[int]]:
    """Prune dormant units past the retention age; returns the report and the messages a ``prune`` policy
    dooms (the caller deletes them)."""
    d = life.dcfg
    turn, at = life.clock()
    ref = life.reference(at)
    out: dict[str, Any] = {"level": "archival", "pruned_units": 0, "deleted_messages": 0}
    h = life.hier
    if h is not None:
        for level in ("semantic", "episode"):
            table = life.units[level]
            slots = table.live_slots()
            if not slots.size:
                continue
            s = life.strengths(table, slots, turn, at)
            old = (at - table.created_time[slots]) >= d.retention_s
            keep_flag = (table.flags[slots] & F_PERSIST) != 0
            doomed = [int(k) for k in table.key[slots][(s < d.dormant_threshold * ref) & old & ~keep_flag]]
            if level == "semantic":
                h.drop_semantics(doomed)
            else:
                for uid in doomed:
                    h.drop_episode(uid)
            table.drop(doomed)
            out["pruned_units"] += len(doomed)
        live_themes = set(h.themes.live().tolist())
        gone = [int(k) for k in life.units["theme"].key[life.units["theme"].live_slots()] if int(k) not in live_themes]
        life.units["theme"].drop(gone)
    doomed_messages: list[int] = []
    if life.prunable:
        ids = sorted(life.prunable)
        slots = life.decay.slots(ids)
        s = life.strengths(life.decay, slots, turn, at)
        exp = life.expired(life.decay, np.maximum(slots, 0), turn, at)
        doomed = [i for i, sl, v, e in zip(ids, slots.tolist(), s.tolist(), exp.tolist())
                  if sl >= 0 and (v < d.dormant_threshold * ref or e)]
        doomed_messages = doomed
    return out, doomed_messages
