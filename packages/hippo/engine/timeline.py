"""Timelines and contradiction records (seed 002 §4.1 stage 3): time-ordered assertions about a person or a topic,
and the supersedes links between statements, with provenance."""

from __future__ import annotations

from typing import Any

import numpy as np

from hippo.engine.candidates import pieces
from hippo.engine.items import event_datetime, said_datetime
from hippo.engine.namespace import Namespace
from hippo.engine.rank import rank
from hippo.engine.scope import Ask, Scope, respell
from hippo.engine.state import NamespaceState


def timeline(ns: Namespace, query: str, limit: int, scope: Scope) -> list[dict[str, Any]]:
    """See :meth:`hippo.Memory.timeline` (arguments validated by the caller)."""
    state = ns.state()
    state.wait_annotated()  # event times, facts and supersedes links of every message, not the neutral stand-in
    ask = ns.ask(state, query, scope)
    with ns.rt.lock.read():
        idx = state.index
        truth = state.truth
        truth.sync(idx)
        ask = respell(state, ask)
        rows = _timeline_rows(state, ask, limit)
        keep = {p.key for p in pieces(state, np.asarray(rows, dtype=np.int64), None, scope)}  # the time scope
        rows = [r for r in rows if int(idx.ids.a[r]) in keep]
        mids = truth.event_mid(np.asarray(rows, dtype=np.int64)) if rows else np.zeros(0)
        order = sorted(range(len(rows)), key=lambda k: (np.nan_to_num(mids[k], nan=np.inf), int(idx.seqs.a[rows[k]])))
        out = []
        texts = dict(zip(rows, idx.texts_of(rows)))  # one read of the Content DWM for all of them
        for k in order:
            r = rows[k]
            nxt = truth.superseder(r, scope.as_of)
            out.append({
                "id": int(idx.ids.a[r]),
                "event_time": event_datetime(idx, r, float(mids[k])),
                "event": truth.label(r, idx),
                "timestamp": said_datetime(idx, r),
                "text": texts[r],
                "speaker": idx.speakers[int(idx.speaker.a[r])],
                "session_id": idx.sessions[int(idx.session.a[r])],
                "superseded_by": int(idx.ids.a[nxt]) if nxt >= 0 else None,
                "facts": [{"attribute": f.attribute, "value": f.value} for f in truth.facts_of.get(r, [])],
            })
        return out


def _timeline_rows(state: NamespaceState, ask: Ask, limit: int) -> list[int]:
    idx = state.index
    truth = state.truth
    name = ask.text.strip().lower()
    speaker_rows: list[int] = []
    codes = [c for c, s in enumerate(idx.speakers) if s is not None and s.lower() == name]
    if codes:
        spk = idx.speaker.a[: len(idx)]
        own = np.flatnonzero(np.isin(spk, codes))
        # assertions: statements that date an event, state a fact or carry new fact fingerprints
        informative = truth.has_time.a[own] | (truth.surprise.a[own] >= 0.5)
        informative |= np.isin(own, np.fromiter(truth.facts_of.keys(), dtype=np.int64, count=len(truth.facts_of)))
        speaker_rows = own[informative].tolist()
    ranked, _scores, _, _ = rank(state, ask, max(limit, 50))
    if speaker_rows:
        # the person's own assertions first (most surprising first when over the limit), then mentions
        surprise = truth.surprise.a[np.asarray(speaker_rows)]
        speaker_rows = [speaker_rows[k] for k in np.argsort(-surprise, kind="stable")]
        seen = set(speaker_rows[:limit])
        mentions = [r for r in ranked.tolist() if r not in seen]
        return (speaker_rows[:limit] + mentions)[:limit]
    return ranked[:limit].tolist()


def contradictions(ns: Namespace, include_updates: bool) -> list[dict[str, Any]]:
    """See :meth:`hippo.Memory.contradictions`."""
    state = ns.state()
    state.wait_annotated()  # the links of every message, not the neutral stand-in's none
    with ns.rt.lock.read():
        idx = state.index
        truth = state.truth
        truth.sync(idx)
        out = []
        for link, (old_row, new_row) in zip(truth.links, truth.link_rows):
            if link.kind != "contradiction" and not include_updates:
                continue
            if link.kind == "contradiction" and not include_updates and truth.superseder(new_row) >= 0:
                continue  # a later statement settled it
            out.append({
                "old_id": link.old, "new_id": link.new, "entity": link.entity, "attribute": link.attribute,
                "old_value": link.old_value, "new_value": link.new_value, "kind": link.kind,
                "old_time": said_datetime(idx, old_row), "new_time": said_datetime(idx, new_row),
                "old_text": idx.text_of(old_row), "new_text": idx.text_of(new_row),
            })
        return out
