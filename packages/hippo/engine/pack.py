"""Packing ranked messages into a prompt-ready context under a token budget.

Included messages are kept whole and verbatim, grouped by session, sessions in time order, each message with its
speaker; every session header carries its date so a reader can place events in time.

Packing estimates each line's cost from the span table (the message's token count plus its speaker prefix), so
only the messages that are actually included are reconstructed from the Content DWM; the assembled text is then
counted exactly and trimmed from the lowest-ranked end if the estimate was short.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from hippo.base.timeutil import fmt_date, fmt_day
from hippo.text import tokenizer


@dataclass
class Piece:
    key: int               # message id
    n_tokens: int
    speaker: str | None
    role: str
    ts: float | None
    session: str | None
    seq: int
    text: str = ""
    note: str = ""         # e.g. "7 May 2023" (a resolved relative date) or "superseded 12 June 2023"


@lru_cache(maxsize=4096)
def _cached_count(s: str) -> int:
    return tokenizer.count_tokens(s)


def _header(p: Piece) -> str:
    # The session's date, compact and human-readable ("[8 May 2023]"): every header costs budget.
    return f"[{fmt_day(p.ts)}]"


def _group_key(p: Piece) -> str:
    return p.session if p.session else fmt_date(p.ts)


def _prefix(p: Piece) -> str:
    return f"{p.speaker or p.role} ({p.note}):" if p.note else f"{p.speaker or p.role}:"


def line_cost(p: Piece) -> int:
    """Tokens a piece adds to a context: its text, its speaker prefix and the newline (session headers apart)."""
    return p.n_tokens + _cached_count(_prefix(p)) + 1


def _line(p: Piece) -> str:
    return f"{_prefix(p)} {p.text}"


def _lines(pieces: list[Piece]) -> list[str]:
    """The context's lines: per session (sessions in time order) its date header, then its messages in order."""
    groups: dict[str, list[Piece]] = {}
    for p in pieces:
        groups.setdefault(_group_key(p), []).append(p)

    def first(ps: list[Piece]) -> tuple:
        times = [q.ts for q in ps if q.ts is not None]
        return (min(times) if times else float("inf"), min(q.seq for q in ps))

    lines: list[str] = []
    for ps in sorted(groups.values(), key=first):
        ps.sort(key=lambda q: q.seq)
        lines.append(_header(ps[0]))
        lines.extend(_line(q) for q in ps)
    return lines


def render(pieces: list[Piece]) -> str:
    return "\n".join(_lines(pieces))


_CACHED_LINE = 4096  # characters: longer lines (whole documents, tool dumps) are counted, not kept


@lru_cache(maxsize=1024)  # at most 4M characters kept
def _cached_line(line: str) -> int:
    return tokenizer.count_tokens(line)


def _line_count(line: str) -> int:
    return _cached_line(line) if len(line) <= _CACHED_LINE else tokenizer.count_tokens(line)


def count_lines(lines: list[str]) -> int:
    """cl100k tokens of ``"\n".join(lines)``, from per-line counts (cached: consecutive contexts share most lines).

    Exact: cl100k's pre-tokenizer has no look-behind, and no pre-token runs past a newline into a following
    non-space character (a newline ends the punctuation, newline or space run it belongs to), so tokens never span
    the end of ``line + "\n"`` when the next line starts with a non-space character. Otherwise the joined text is
    counted whole."""
    if not lines:
        return 0
    if any(not line or line[0].isspace() for line in lines[1:]):
        return tokenizer.count_tokens("\n".join(lines))
    return sum(_line_count(line + "\n") for line in lines[:-1]) + _line_count(lines[-1])


def ordered(pieces: list[Piece]) -> list[Piece]:
    """Pieces in the order :func:`render` lays them out."""
    groups: dict[str, list[Piece]] = {}
    for p in pieces:
        groups.setdefault(_group_key(p), []).append(p)
    out: list[Piece] = []
    for ps in sorted(groups.values(), key=lambda ps: (min((q.ts for q in ps if q.ts is not None),
                                                           default=float("inf")), min(q.seq for q in ps))):
        out.extend(sorted(ps, key=lambda q: q.seq))
    return out


def pack(ranked: list[Piece], budget: int, load_texts: Callable[[list[Piece]], list[str]]
         ) -> tuple[list[Piece], str, int]:
    """Greedy packing of whole messages in rank order; a message that does not fit is skipped, not cut. The texts of
    the chosen pieces are read at the end, all in one ``load_texts`` call."""
    chosen: list[Piece] = []
    groups: set[str] = set()
    used = 0
    for p in ranked:
        if budget - used < 3:
            break
        cost = line_cost(p)
        g = _group_key(p)
        if g not in groups:
            cost += _cached_count(_header(p)) + 1
        if used + cost > budget:
            continue
        chosen.append(p)
        groups.add(g)
        used += cost
    for p, text in zip(chosen, load_texts(chosen)):
        p.text = text
    lines = _lines(chosen)
    tokens = count_lines(lines)
    # The estimate above leaves out how a line's first token joins its prefix; drop the lowest-ranked until it fits.
    while tokens > budget and chosen:
        chosen.pop()
        lines = _lines(chosen)
        tokens = count_lines(lines)
    return chosen, "\n".join(lines), tokens
