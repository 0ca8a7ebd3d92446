"""Packing ranked messages into a prompt-ready context under a token budget.

Included messages are kept whole and verbatim, grouped by session, sessions in time order, each message with its
speaker; every session header carries its date so a reader can place events in time.

Packing estimates each line's cost from the span table (the message's token count plus its speaker prefix), so
only the messages that are actually included are reconstructed from the Content DWM; the assembled text is then
counted exactly and trimmed from the lowest-ranked end if the estimate was short.

A context holds each text once. An agent's history repeats itself: the same tool output after every call, the same
question asked each morning, a status line polled all day. Every copy ranks alike, and copies of one text would fill
a context with one line. A copy is the same text in the same voice (role and speaker): the assistant quoting the
user's words is a line of its own. The first copy packed stands for the others, with a note saying how many times
the text was written and over which days ("user (22 times, 3 May 2023 to 9 June 2023): ..."; the count is of the
whole history, as far as the recall's filter admits, the messages it excludes left out); the budget goes to the next
distinct message. Copies are found among the candidates, where they compete for the context (a piece marked
``repeated`` stands for the copies the candidate lists dropped: :func:`hippo.index.channels.top_texts`): a line whose
copies all rank far below it carries no count. A text that differs in one character (a later temperature, another
count) may be the answer, and is a line of its own; only a machine output's near-duplicates (the same text once its
times, counters and ids are masked: :mod:`hippo.text.masking`, a health check polled all day) are its copies too.
Their line shows the newest of them the recall admits (the state the output reports now), unless the question names
a value the copy packed holds and the newest does not (a request id, a time): then the copy packed is shown.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from hippo.base.timeutil import fmt_date, fmt_day
from hippo.text import masking, tokenizer


@dataclass
class Piece:
    key: int               # message id
    n_tokens: int          # cl100k tokens of the message's text (encode_ordinary), which the context count relies on
    speaker: str | None
    role: str
    ts: float | None
    session: str | None
    seq: int
    text: str = ""
    note: str = ""         # e.g. "7 May 2023" (a resolved relative date) or "superseded 12 June 2023"
    digest: int | None = None  # the copies of its text share it (NamespaceIndex.near_keys: its digest, or masked)
    copies: list[float | None] = field(default_factory=list)  # when the other copies this line stands for were said
    offset: float | None = None  # seconds east of UTC the timestamp was given with: its day is that calendar's
    repeated: bool = False  # it stands for copies of its text the candidate lists collapsed into it


@lru_cache(maxsize=4096)
def _cached_count(s: str) -> int:
    return tokenizer.count_tokens(s)


def _local(p: Piece) -> float | None:
    """The piece's timestamp moved by its offset from UTC: its UTC day is the day the speaker's calendar showed."""
    return p.ts if p.ts is None or p.offset is None else p.ts + p.offset


def day_of(p: Piece) -> str:
    """The day a piece was said on, as a header shows it ("8 May 2023"): the speaker's, UTC's without an offset."""
    return fmt_day(_local(p))


def _header(p: Piece) -> str:
    # The session's date, compact and human-readable ("[8 May 2023]"): every header costs budget.
    return f"[{day_of(p)}]"


def _group_key(p: Piece) -> str:
    return p.session if p.session else fmt_date(_local(p))


def _repeats(p: Piece) -> str:
    """``"3 times"``, or ``"3 times, 8 May 2023 to 9 June 2023"`` when the copies were written on different days."""
    if not p.copies:
        return ""
    times = [t for t in (p.ts, *p.copies) if t is not None]
    first, last = (fmt_day(min(times)), fmt_day(max(times))) if times else ("", "")
    span = f", {first} to {last}" if first != last else ""
    return f"{len(p.copies) + 1} times{span}"


def voice(name: str) -> str:
    """A speaker's name as a context line shows it: tabs and line breaks (which a name may hold) as single spaces,
    so a name never starts a line of its own ("Ann\\nSystem: ..." would read as another speaker's line)."""
    if _BREAKS.search(name) is None:
        return name
    return " ".join(w for w in _BREAKS.sub(" ", name).split(" ") if w)


_BREAKS = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")  # what str.splitlines breaks at, and tab


def _prefix(p: Piece) -> str:
    if not p.note and not p.copies:  # most lines: the voice alone (a packed context asks for it a few times a line)
        return f"{voice(p.speaker or p.role)}:"
    note = "; ".join(n for n in (p.note, _repeats(p)) if n)
    who = voice(p.speaker or p.role)
    return f"{who} ({note}):" if note else f"{who}:"


def line_cost(p: Piece) -> int:
    """Tokens a piece adds to a context: its text, its speaker prefix and the newline (session headers apart)."""
    return p.n_tokens + _cached_count(_prefix(p)) + 1


def _line(p: Piece) -> str:
    return f"{_prefix(p)} {p.text}"


def _sessions(pieces: list[Piece]) -> list[list[Piece]]:
    """The pieces grouped by session (by day without one), sessions in time order, each in message order."""
    groups: dict[str, list[Piece]] = {}
    for p in pieces:
        groups.setdefault(_group_key(p), []).append(p)

    def first(ps: list[Piece]) -> tuple:
        times = [q.ts for q in ps if q.ts is not None]
        return (min(times) if times else float("inf"), min(q.seq for q in ps))

    out = sorted(groups.values(), key=first)
    for ps in out:
        ps.sort(key=lambda q: q.seq)
    return out


def _layout(pieces: list[Piece]) -> list[tuple[str, Piece | None]]:
    """The context's lines, each with its piece (None for a header): per session its date header, then its
    messages (:func:`_sessions`)."""
    out: list[tuple[str, Piece | None]] = []
    for ps in _sessions(pieces):
        out.append((_header(ps[0]), None))
        out.extend((_line(q), q) for q in ps)
    return out


def _lines(pieces: list[Piece]) -> list[str]:
    return [line for line, _ in _layout(pieces)]


def render(pieces: list[Piece]) -> str:
    return "\n".join(_lines(pieces))


def _kept_up_to(longest: int, maxsize: int) -> Callable[[Callable[[str], int]], Callable[[str], int]]:
    """Keep a count of one string for strings of at most ``longest`` characters (``maxsize`` of them, the most
    recently used); a longer one is counted each time, since a cache keyed by it would hold it whole. The cache is
    the wrapper's ``kept``."""
    def wrap(fn: Callable[[str], int]) -> Callable[[str], int]:
        kept = lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def call(s: str) -> int:
            return kept(s) if len(s) <= longest else fn(s)
        call.kept = kept  # type: ignore[attr-defined]
        return call
    return wrap


_CACHED_LINE = 4096  # characters: longer lines (whole documents, tool dumps) are counted, not kept


@_kept_up_to(_CACHED_LINE, 1024)  # at most 4M characters kept
def _line_count(line: str) -> int:
    return tokenizer.count_tokens(line)


def count_lines(lines: list[str]) -> int:
    """cl100k tokens of ``"\n".join(lines)``, from per-line counts (cached: consecutive contexts share most lines).

    Exact: cl100k's pre-tokenizer has no look-behind, and no pre-token runs past a newline into a following
    non-space character (a newline ends the punctuation, newline or space run it belongs to), so tokens never span
    the end of ``line + "\n"`` when the next line starts with a non-space character. Otherwise the joined text is
    counted whole."""
    return _count([(line, None) for line in lines])


_ASCII_WORD = re.compile(r"[A-Za-z]+")
_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)
_ASCII_PUNCT = frozenset(string.punctuation)


#: the longest letter or punctuation run whose count is kept: a message may open with a run of any length (a pasted
#: blob, "aaaa..."), and a cache of thousands of entries keyed by such runs would hold all of them
_CACHED_RUN = 64


@_kept_up_to(_CACHED_RUN, 8192)
def _space_joins(word: str) -> int:
    """Tokens a leading space adds to an ASCII letter run: cl100k reads ``" " + word`` as one piece."""
    return tokenizer.count_tokens(" " + word) - tokenizer.count_tokens(word)


@_kept_up_to(_CACHED_RUN, 4096)
def _newline_joins(run: str) -> int:
    """Tokens a newline adds to a final punctuation piece: cl100k reads ``run + "\n"`` as one piece."""
    return tokenizer.count_tokens(run + "\n") - tokenizer.count_tokens(run)


def _tail(text: str) -> int | None:
    """Tokens ``"\n"`` adds after ``text``, or None where the rule does not apply. After an ASCII letter or digit
    the newline is a piece of its own (one token); after a final run of ASCII punctuation it joins that run's piece,
    which also holds one space right before the run (and nothing before that); a non-ASCII character before the
    run may belong to it, so it is not decided here."""
    last = text[-1]
    if last in _ASCII_ALNUM:
        return 1
    if last not in _ASCII_PUNCT:
        return None
    k = len(text) - 1
    while k > 0 and text[k - 1] in _ASCII_PUNCT:
        k -= 1
    if k > 0 and not text[k - 1].isascii():
        return None
    return _newline_joins(text[k - 1:] if k > 0 and text[k - 1] == " " else text[k:])


def _message_line_count(p: Piece, newline: bool) -> int | None:
    """Tokens of ``_line(p)`` (plus ``"\n"`` when ``newline``) from the message's own count, without encoding its
    text; None when the rules below do not apply. cl100k's pre-tokenizer has no look-behind and its pieces are
    encoded one by one, so the line's count is the sum over stretches cut where both the line and the bare text have
    a piece boundary, and only the edges differ from the text's own pieces:
    - the prefix ends in ``":"`` before a space, a punctuation run that the space ends: its count is its own;
    - an ASCII letter run that starts the text becomes one piece with the space before it (``" Hello"``), ending
      where the text's first piece ends (the next character is ASCII and not a letter, else it may be one);
      before an ASCII digit the space is a piece of its own (one token: digits never take a space);
    - the newline after the text: :func:`_tail`."""
    text = p.text
    if not text:
        return None
    tail = _tail(text) if newline else 0
    if tail is None:
        return None
    if "0" <= text[0] <= "9":
        head = 1
    else:
        m = _ASCII_WORD.match(text)
        if m is None or (m.end() < len(text) and not text[m.end()].isascii()):
            return None
        head = _space_joins(m.group())
    return _cached_count(_prefix(p)) + p.n_tokens + head + tail


def count_context(pieces: list[Piece]) -> int:
    """cl100k tokens of ``render(pieces)``."""
    return _count(_layout(pieces))


def _count(layout: list[tuple[str, Piece | None]]) -> int:
    """:func:`count_lines` of the layout's lines, each message line counted from the message's own token count
    where :func:`_message_line_count` applies (a context's lines are mostly new to the line cache: encoding them
    was a sixth of a large recall)."""
    if not layout:
        return 0
    if any(not line or line[0].isspace() for line, _ in layout[1:]):
        return tokenizer.count_tokens("\n".join(line for line, _ in layout))
    total = 0
    last = len(layout) - 1
    for k, (line, p) in enumerate(layout):
        got = _message_line_count(p, k < last) if p is not None else None
        if got is None:
            got = _line_count(line + "\n") if k < last else _line_count(line)
        total += got
    return total


def repeats(pieces: list[Piece]) -> dict[int, int]:
    """Message id -> how many times its text was written, for the pieces that stand for copies (:func:`pack`)."""
    return {p.key: len(p.copies) + 1 for p in pieces if p.copies}


def ordered(pieces: list[Piece]) -> list[Piece]:
    """Pieces in the order :func:`render` lays them out."""
    return [p for ps in _sessions(pieces) for p in ps]


def same_text(a: str, b: str) -> bool:
    """Whether two texts of one voice that share a copy key are copies: the same text, or the same once masked (the
    key says the form is a machine output's: :attr:`hippo.index.coindex.NamespaceIndex.near_keys`; ``req=07923986``,
    a request id drawn without a letter, beside ``req=9f1c2ab3``)."""
    if a == b:
        return True
    m = masking.form(a)
    if m is None:
        return False
    n = masking.form(b)
    return n is not None and m[0] == n[0]


def pack(ranked: list[Piece], budget: int, load_texts: Callable[[list[Piece]], list[str]],
         copies: Callable[[Piece], list[float | None]] | None = None,
         newest: Callable[[Piece], Piece | None] | None = None) -> tuple[list[Piece], str, int]:
    """Greedy packing of whole messages in rank order; a message that does not fit is skipped, not cut, and a copy
    of a text already packed is not packed again: the packed line stands for it (:func:`_repeats`). ``copies``
    gives, for a packed piece found to have a copy among the candidates or marked ``repeated`` (its copies were
    collapsed into it where the candidates were listed), the times of all its other copies the caller admits (else
    those among the candidates are counted). Texts are read where two pieces share a copy key
    (to confirm the copy: :func:`same_text`), and the rest at the end, in one ``load_texts`` call. ``newest`` gives,
    for a packed piece standing for the near-duplicates of a machine output, the piece (its text read) to show in
    its place, or None to keep it: the line then shows that one, when the budget has room for it."""
    chosen: list[Piece] = []
    groups: set[str] = set()
    by_digest: dict[tuple, Piece] = {}  # (copy key, role, speaker): a copy is the same text in the same voice
    counted: set[int] = set()  # id() of the chosen pieces whose copies ``copies`` gave
    loaded: set[int] = set()
    used = 0
    for p in ranked:
        full = budget - used < 3
        if full and not by_digest:
            break
        kept = by_digest.get((p.digest, p.role, p.speaker)) if p.digest is not None else None
        if full and kept is None:
            continue  # a full context still learns of the copies of what it holds
        if kept is not None:
            todo = [q for q in (kept, p) if id(q) not in loaded]
            for q, text in zip(todo, load_texts(todo)):
                q.text = text
                loaded.add(id(q))
            if same_text(kept.text, p.text):
                if id(kept) not in counted:
                    before = line_cost(kept)
                    if copies is not None:
                        kept.copies = list(copies(kept))
                        counted.add(id(kept))
                    else:
                        kept.copies.append(p.ts)
                    used += line_cost(kept) - before
                continue
        if used + p.n_tokens + 2 > budget:
            continue  # a line costs at least its text, one token of prefix and the newline: no need to count it
        if p.repeated and copies is not None and id(p) not in counted:  # its copies were collapsed into it
            if id(p) not in loaded:
                p.text = load_texts([p])[0]
                loaded.add(id(p))
            p.copies = list(copies(p))
            counted.add(id(p))
        cost = line_cost(p)
        g = _group_key(p)
        if g not in groups:
            cost += _cached_count(_header(p)) + 1
        if used + cost > budget:
            continue
        chosen.append(p)
        if p.digest is not None:
            by_digest.setdefault((p.digest, p.role, p.speaker), p)
        groups.add(g)
        used += cost
    if newest is not None:
        for k, p in enumerate(chosen):
            if id(p) not in counted or not p.copies:
                continue
            q = newest(p)
            if q is None:
                continue
            q.copies = list(p.copies)
            if q.ts in q.copies:  # the copies of q are p's others, q's own time out and p's in
                q.copies.remove(q.ts)
            q.copies.append(p.ts)
            cost = line_cost(q) - line_cost(p)
            g, was = _group_key(q), _group_key(p)
            # in another session (day), q brings its header unless one is there, and p's goes with p if p was alone
            alone = g != was and all(_group_key(o) != was for o in chosen if o is not p)
            if alone:
                cost -= _cached_count(_header(p)) + 1
            if g not in groups:
                cost += _cached_count(_header(q)) + 1
            if used + cost > budget:
                continue
            chosen[k] = q
            loaded.add(id(q))
            if alone:
                groups.discard(was)
            groups.add(g)
            used += cost
    todo = [p for p in chosen if id(p) not in loaded]
    for p, text in zip(todo, load_texts(todo)):
        p.text = text
    layout = _layout(chosen)
    tokens = _count(layout)
    # The estimate above leaves out how a line's first token joins its prefix; drop the lowest-ranked until it fits.
    while tokens > budget and chosen:
        chosen.pop()
        layout = _layout(chosen)
        tokens = _count(layout)
    return chosen, "\n".join(line for line, _ in layout), tokens
