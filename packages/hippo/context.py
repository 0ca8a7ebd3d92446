"""Packing ranked messages into a prompt-ready context under a token budget.

Included messages are kept whole and verbatim, grouped by session, sessions in time order, each message with its
speaker; every session header carries its date so a reader can place events in time.
"""

from __future__ import annotations

from dataclasses import dataclass

from hippo import tokenizer
from hippo.timeutil import fmt_date, fmt_day


@dataclass
class Piece:
    key: int               # message id
    text: str
    speaker: str | None
    role: str
    ts: float | None
    session: str | None
    seq: int


def _header(p: Piece) -> str:
    # The session's date, compact and human-readable ("[8 May 2023]"): every header costs budget.
    return f"[{fmt_day(p.ts)}]"


def _group_key(p: Piece) -> str:
    return p.session if p.session else fmt_date(p.ts)


def _line(p: Piece) -> str:
    who = p.speaker or p.role
    return f"{who}: {p.text}"


def render(pieces: list[Piece]) -> str:
    groups: dict[str, list[Piece]] = {}
    for p in pieces:
        groups.setdefault(_group_key(p), []).append(p)

    def first(ps: list[Piece]) -> tuple:
        times = [q.ts for q in ps if q.ts is not None]
        return (min(times) if times else float("inf"), min(q.seq for q in ps))

    blocks = []
    for ps in sorted(groups.values(), key=first):
        ps.sort(key=lambda q: q.seq)
        blocks.append("\n".join([_header(ps[0])] + [_line(q) for q in ps]))
    return "\n".join(blocks)


def pack(ranked: list[Piece], budget: int) -> tuple[list[Piece], str, int]:
    """Greedy packing of whole messages in rank order; a message that does not fit is skipped, not cut."""
    chosen: list[Piece] = []
    groups: set[str] = set()
    used = 0
    for p in ranked:
        cost = tokenizer.count_tokens(_line(p)) + 1
        g = _group_key(p)
        if g not in groups:
            cost += tokenizer.count_tokens(_header(p)) + 1
        if used + cost > budget:
            continue
        chosen.append(p)
        groups.add(g)
        used += cost
    text = render(chosen)
    tokens = tokenizer.count_tokens(text) if text else 0
    # Token counts of lines are not exactly additive across joins; drop the lowest-ranked until it fits.
    while tokens > budget and chosen:
        chosen.pop()
        text = render(chosen)
        tokens = tokenizer.count_tokens(text) if text else 0
    return chosen, text, tokens
