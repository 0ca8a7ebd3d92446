"""The part of an entry's content relevant to a cue (seed 004 §7: pattern completion from a partial cue).

Lines are scored by the distinct query terms they contain (case-insensitive), the best lines are taken with a few
lines of context on each side, overlapping windows merge, and the result is laid out in document order with line
numbers, within a token budget.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import groupby
from typing import Callable

from hippo.text import textnorm, tokenizer

_TERM = re.compile(r"[\w][\w.@:/#-]*[\w]|\w", re.U)
_STOP = frozenset("a an the of to in on at for and or is are was were be by with from what which who whom when "
                  "where why how did does do i me my we our you your it its this that these those value".split())


def query_terms(query: str) -> list[str]:
    """Distinct lower-cased terms of a cue, stopwords dropped (kept if nothing else is left). A term holding a script
    written without spaces is cut where the script changes, and its runs of that script into the character bigrams
    the search uses (:func:`hippo.text.textnorm.words`): a Chinese or Japanese cue ("ORD-0042的订单", "iPhone的价格是多少")
    is no string any line holds, its words and bigrams are."""
    raw = []
    for t in _TERM.findall(query.lower()):
        if t.isascii() or not any(textnorm.is_cjk(c) for c in t):
            raw.append(t)
            continue
        for spaceless, run in groupby(t, key=textnorm.is_cjk):
            part = "".join(run)
            raw.extend(textnorm.words(part) if spaceless else _TERM.findall(part))
    terms = [t for t in raw if t not in _STOP]
    return list(dict.fromkeys(terms or raw))


def relevant_lines(content: str, query: str, *, context_lines: int = 2, max_tokens: int = 2000
                   ) -> tuple[str, int]:
    """``(text, matched_lines)``: the lines of ``content`` around matches of ``query``'s terms, numbered
    ``L<n>: ...`` (1-based), windows separated by ``...``; ``("", 0)`` when no line matches."""
    terms = query_terms(query)
    if not terms:
        return "", 0
    lines = content.splitlines()
    low = [ln.lower() for ln in lines]
    phrase = " ".join(query.lower().split())
    scored = []
    for i, ln in enumerate(low):
        hits = sum(1 for t in terms if t in ln)
        if hits:
            bonus = len(terms) if len(phrase) > 3 and phrase in ln else 0
            scored.append((-(hits + bonus), i))
    if not scored:
        return "", 0
    scored.sort()
    chosen: set[int] = set()
    windows: list[list[int]] = []  # in the order taken (best first): the last is dropped first when over budget
    used = 0
    for _, i in scored:
        window = [j for j in range(max(0, i - context_lines), min(len(lines), i + context_lines + 1))
                  if j not in chosen]
        cost = sum(tokenizer.count_tokens(lines[j]) + 4 for j in window)
        if used + cost > max_tokens:
            if chosen:
                break
            window = [i]  # the best line alone, cut to the budget if it is huge
            cost = min(tokenizer.count_tokens(lines[i]) + 4, max_tokens)
        chosen.update(window)
        windows.append(window)
        used += cost

    def layout(rows: set[int], cap: int) -> str:
        out: list[str] = []
        prev = -2
        for j in sorted(rows):
            if j != prev + 1 and out:
                out.append("...")
            text = lines[j]
            if tokenizer.count_tokens(text) > cap:
                text = tokenizer.clip(text, cap) + " …"
            out.append(f"L{j + 1}: {text}")
            prev = j
        return "\n".join(out)

    # The costs above are estimates (line numbers, separators and the cut mark are counted roughly): the laid-out
    # text is counted exactly, and the windows taken last are dropped until it fits.
    text = layout(chosen, max_tokens)
    while len(windows) > 1 and tokenizer.count_tokens(text) > max_tokens:
        chosen.difference_update(windows.pop())
        text = layout(chosen, max_tokens)
    if tokenizer.count_tokens(text) > max_tokens:
        # one window left: its best line alone, cut shorter until its number, text and cut mark fit (the seams
        # may join tokens: a few steps at most); a budget too small for the number and a character of the line
        # gives no line at all
        best = scored[0][1]
        room = max_tokens - tokenizer.count_tokens(f"L{best + 1}: …")
        text = _first_within(lambda cap: layout({best}, cap) if tokenizer.clip(lines[best], cap) else None,
                             room, max_tokens) or ""
    return text, len(scored)


@lru_cache(maxsize=1)
def _longest_token() -> int:
    """Bytes of cl100k's longest token (128, a run of spaces): a text of more than ``n`` times as many characters
    holds more than ``n`` tokens, and need not be counted to know it does not fit."""
    return max(map(len, tokenizer.token_bytes()))


def _joined(rows: list[str]) -> str:
    """Lines kept with their own line breaks (:func:`head_within`), joined, the last one without its break."""
    last = rows[-1].splitlines()
    return "".join(rows[:-1]) + (last[0] if last else "")


def head_within(content: str, max_tokens: int) -> tuple[str, bool]:
    """The leading whole lines of ``content`` within ``max_tokens``; ``(text, complete)``. When not even the first
    line fits (minified JSON, a page of HTML on one line), the longest head of that line that does.

    The head is the content's own text, a prefix of it: its lines keep their breaks as written ("\\r\\n" of a
    Windows file or a CSV, a "\\r" that redraws a progress line, U+2028), only the last line's is left out.

    Only the text that may fit is counted (:func:`_longest_token`): the head of a tool output of megabytes on one line
    was its whole line counted some fifty times."""
    longest = _longest_token()
    if len(content) <= max_tokens * longest and tokenizer.count_tokens(content) <= max_tokens:
        return content, True
    lines = content.splitlines(keepends=True)
    out, used = [], 0
    for ln in lines:
        if len(ln) > (max_tokens - used) * longest:
            break
        cost = tokenizer.count_tokens(ln)
        if used + cost > max_tokens:
            break
        out.append(ln)
        used += cost
    if not out and lines:
        first = lines[0]
        # the longest prefix within the budget: token counts grow with the prefix
        lo, hi = 0, min(len(first), max_tokens * longest)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if tokenizer.count_tokens(first[:mid]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return _joined([textnorm.grapheme_head(first, lo, whole=True)]), False  # never half of what a reader sees
    text = _joined(out)
    # a line counted alone may take a token more once joined to its neighbours (spaces that open a line)
    while len(out) > 1 and tokenizer.count_tokens(text) > max_tokens:
        out.pop()
        text = _joined(out)
    return text, False


def head_with_note(content: str, note: str, max_tokens: int, *, note_first: bool) -> str:
    """The leading lines of ``content`` (:func:`head_within`) with ``note`` before or after them (the caller gives
    the separating newline), the whole within ``max_tokens``. The note says what the head leaves out, so it is
    worth nothing without content: when it leaves no room for any, the head alone comes back within the budget."""
    room = max_tokens - tokenizer.count_tokens(note)

    def with_note(cap: int) -> str | None:
        head, _ = head_within(content, cap)
        return (note + head if note_first else head + note) if head.strip() else None

    return _first_within(with_note, room, max_tokens) or head_within(content, max_tokens)[0]


def _first_within(build: Callable[[int], str | None], room: int, max_tokens: int) -> str | None:
    """``build(cap)`` for ``cap`` = ``room``, ``room - 1``, ...: the first text counted within ``max_tokens``. Parts
    counted apart may join into a token more or less at their seams, so a few steps down are tried at most; None
    when none fits (or ``build`` gives None for each)."""
    for cap in range(room, max(0, room - 8), -1):
        text = build(cap)
        if text is not None and tokenizer.count_tokens(text) <= max_tokens:
            return text
    return None
