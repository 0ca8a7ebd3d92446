"""Topic documents (seed 003 §3.2): every theme rendered as a small markdown document.

A document has a metadata header (id, summary, entry count, time span, strength) and a body with one heading per
episode the theme's semantics come from, in time order; each entry is one semantic, prefixed with the parsable
signature ``<seq=…, time=…, source=…>`` (seq of its first source message, that message's time, and its speaker,
or ``AI`` for assistant turns, as in seed 003 §3.2). Messages not yet consolidated form the ``current`` topic
(the CURRENT buffer, seed 003 §3.3): they are listed verbatim and are always retrievable.
"""

from __future__ import annotations

from typing import Any

from hippo.base.errors import InvalidInput, NotFound
from hippo.base.timeutil import fmt_date, fmt_datetime
from hippo.engine.lifecycle import Life
from hippo.engine.state import NamespaceState

CURRENT = "current"


def _source(speaker: str | None, role: str | None) -> str:
    if role == "assistant":
        return "AI"
    return speaker or role or "unknown"


def _sig(seq: int, ts: float | None, source: str) -> str:
    return f"<seq={seq}, time={fmt_datetime(ts) if ts is not None else 'unknown'}, source={source}>"


def _title(h, t: int, n: int = 3) -> str:
    summary = h.theme_summary(t)
    head = summary.split(" — ", 1)[0] if " — " in summary else ""
    return ", ".join(head.split(", ")[:n]) if head else summary[:60]


def _when(epoch: float | None) -> str | None:
    """A topic's first or last time as the catalog gives it: "YYYY-MM-DD HH:MM" (UTC), None when undated."""
    return fmt_datetime(epoch) if epoch is not None else None


def _span(state: NamespaceState, h, t: int, sems: list) -> tuple[float, float] | None:
    """The first and last time of theme ``t``'s messages (None when all are undated). A semantic keeps the time of
    its first source message only, and one fact read from many messages (a status reported every hour) is one
    semantic: the theme spans the times of all the messages its semantics were read from."""
    idx = state.index
    times = [s.ts for s in sems if s.ts is not None]
    if idx is not None:
        row_of, ts = idx.row_of, idx.ts.view
        for m in h.theme_messages(t):
            row = row_of.get(m)
            if row is not None and ts[row] == ts[row]:  # NaN: undated
                times.append(float(ts[row]))
    return (min(times), max(times)) if times else None


def topics(state: NamespaceState, life: Life) -> list[dict[str, Any]]:
    """Themes with summaries, most recently active first; the CURRENT buffer first when it holds messages."""
    h = life.hier
    if h is None:
        return []
    out: list[dict[str, Any]] = []
    if h.buffer:
        last = h.buffer[-1]
        out.append({"id": CURRENT, "title": "not yet consolidated", "size": len(h.buffer),
                    "summary": f"{len(h.buffer)} recent message(s), latest from {last.speaker or last.role}: "
                               f"{last.text[:120]}",
                    # None for an undated message, as a theme's span reads: "undated" is how text shows it
                    "n_messages": len(h.buffer), "first_time": _when(h.buffer[0].ts), "last_time": _when(last.ts)})
    rows = []
    for t in h.themes.live().tolist():
        sems = [h.semantics[s] for s in h.themes.members[t] if s in h.semantics]
        if not sems:
            continue
        span = _span(state, h, t, sems)
        seqs = [s.seq for s in sems]
        strength = float(life.unit_strength("theme", [t])[0])
        rows.append((max(seqs), {
            "id": int(t), "title": _title(h, t), "summary": h.theme_summary(t), "size": len(sems),
            "n_messages": len(h.theme_messages(t)),
            "first_time": _when(span[0]) if span else None,
            "last_time": _when(span[1]) if span else None, "strength": round(strength, 4),
        }))
    out.extend(d for _, d in sorted(rows, key=lambda x: -x[0]))
    return out


def _check_id(topic_id: Any) -> int | str:
    if isinstance(topic_id, str) and topic_id == CURRENT:
        return CURRENT
    # isdecimal, not isdigit: int() reads exactly the decimal digits (any script's); superscripts and circled
    # digits ('²', '①') are digits it cannot read
    if isinstance(topic_id, str) and topic_id.strip().isdecimal() and len(topic_id.strip()) <= 18:
        return int(topic_id.strip())
    if isinstance(topic_id, bool) or not isinstance(topic_id, int):
        raise InvalidInput(f"topic_id must be an int or {CURRENT!r}, got {topic_id!r}")
    return topic_id


def topic(state: NamespaceState, life: Life, topic_id: Any) -> str:
    """One topic document as markdown."""
    h = life.hier
    tid = _check_id(topic_id)
    if h is None:
        raise NotFound("the hierarchy is disabled (config.hierarchy.enabled=False): there are no topics")
    store = state.host.store
    if tid == CURRENT:
        if not h.buffer:
            raise NotFound("the CURRENT buffer is empty")
        meta = store.rows(state.name, [b.id for b in h.buffer])
        lines = [f"# Topic {CURRENT}: not yet consolidated", "",
                 f"entries: {len(h.buffer)} · first: {fmt_datetime(h.buffer[0].ts)} · "
                 f"last: {fmt_datetime(h.buffer[-1].ts)}", "", f"## {h.buffer[0].session or 'recent'}"]
        for b in h.buffer:
            role = meta[b.id].role if b.id in meta else b.role
            lines.append(f"- {_sig(b.seq, b.ts, _source(b.speaker, role))} {b.text}")
        return "\n".join(lines) + "\n"
    if not (0 <= tid < h.themes.codes.n) or not h.themes.codes.alive[tid]:
        raise NotFound(f"topic {tid} does not exist in namespace {state.name!r}")
    sems = [h.semantics[s] for s in h.themes.members[tid] if s in h.semantics]
    first_ids = [s.message_ids[0] for s in sems if s.message_ids]
    meta = store.rows(state.name, first_ids)
    by_episode: dict[int, list] = {}
    for s in sems:
        by_episode.setdefault(s.episode_ids[0] if s.episode_ids else -1, []).append(s)
    span = _span(state, h, tid, sems)
    strength = float(life.unit_strength("theme", [tid])[0])
    lines = [f"# Topic {tid}: {_title(h, tid)}", "",
             f"summary: {h.theme_summary(tid)}",
             f"id: {tid} · entries: {len(sems)} · messages: {len(h.theme_messages(tid))} · "
             f"span: {fmt_date(span[0]) if span else 'undated'} – {fmt_date(span[1]) if span else 'undated'}"
             f" · strength: {strength:.2f}", ""]

    def ep_key(item):
        eid, group = item
        e = h.episodes.get(eid)
        return (e.first_seq if e else min(s.seq for s in group))

    for eid, group in sorted(by_episode.items(), key=ep_key):
        e = h.episodes.get(eid)
        when = fmt_date(e.t0) if e is not None and e.t0 is not None else "undated"
        head = f"## {e.session or 'episode'} · {when} · {e.summary}" if e is not None else "## other"
        lines.append(head)
        for s in sorted(group, key=lambda s: s.seq):
            row = meta.get(s.message_ids[0]) if s.message_ids else None
            src = _source(s.speaker, row.role if row else None)
            body = s.text.split(": ", 1)[1] if s.speaker and s.text.startswith(f"{s.speaker}: ") else s.text
            lines.append(f"- {_sig(s.seq, s.ts, src)} {body}")
        lines.append("")
    return "\n".join(lines)
