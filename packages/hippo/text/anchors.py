"""Where a case-insensitive pattern's matches can start, and its matches found from those places only.

Python's regular expression engine tries a case-insensitive pattern that begins with a word boundary or a word at
every position of the text: a long message costs each pattern about 0.1 us a character, whether or not it holds a
match. Most of the time-expression patterns begin with one of a few words ("between", "this", "early", a month's
first letters) or with a number. :func:`starts` reads from a pattern's parse which texts every match of it begins
with (in the text folded as case-insensitive matching folds it: :func:`hippo.text.textnorm.regex_folded`), and
:func:`matches` then tries the pattern only where one of them stands, as ``finditer`` would: the same matches, in
the same order, each the match ``finditer`` returns there.

A pattern whose start is not known well enough (a class of many characters, a backreference, a start shorter than
two characters) is left to ``finditer``."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator

try:  # the parser behind re.compile: Python 3.11 moved it
    from re import _constants as _c
    from re import _parser as _p
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

# In a start, these stand for a word boundary and for a decimal digit (never characters of a folded start).
_BOUNDARY = "\x02"
_DIGIT = "\x01"
LONGEST = 3        # a start is read up to this many characters (each start is one pass over the text)
_MOST = 256        # more alternative starts than this: the pattern is left to finditer
_SHORTEST = 2      # a start of one letter or digit is found nearly everywhere
_DENSE = 4         # places at more than one character in this many: one pass of the engine is cheaper
LONG = 160         # a shorter text: one pass of the engine is as cheap as finding the places

_DIGIT_RUN = re.compile(r"\d+")
_DIGIT_ONE = re.compile(r"\d")


class _Unknown(Exception):
    """The pattern's starts are not read (too many, or a construct this reading does not follow)."""


def _fold(cp: int) -> str | None:
    """The character of the folded text that every character a case-insensitive literal ``cp`` matches folds to,
    or None when that is not one character known here: only an ASCII character (re.I's other characters for "i",
    "s" and "k" fold onto it, :func:`~hippo.text.textnorm.regex_folded`) and a character without case (matched as
    itself) are."""
    ch = chr(cp)
    if cp < 128:
        return ch.lower()
    if ch.lower() == ch and ch.upper() == ch and ch.casefold() == ch:
        return ch
    return None


def _join(a: tuple[set[str], set[str]], b: tuple[set[str], set[str]], longest: int) -> tuple[set[str], set[str]]:
    """The starts of ``a`` followed by ``b``: (whole texts, starts cut short), each read up to ``longest``
    characters."""
    whole_a, cut_a = a
    whole_b, cut_b = b
    whole, cut = set(), set(cut_a)
    for x in whole_a:
        for y in whole_b:
            (cut if _length(x + y) >= longest else whole).add(x + y)
        for y in cut_b:
            cut.add(x + y)
    if len(whole) + len(cut) > _MOST:
        raise _Unknown
    return whole, {_clip(s, longest) for s in cut}


def _length(s: str) -> int:
    return len(s) - s.count(_BOUNDARY)


def _clip(s: str, longest: int) -> str:
    """``s`` cut to ``longest`` characters (a boundary mark takes none)."""
    n = 0
    for i, ch in enumerate(s):
        if ch != _BOUNDARY:
            n += 1
            if n > longest:
                return s[:i]
    return s


def _read(items, longest: int) -> tuple[set[str], set[str]]:
    """(whole, cut) of a sequence of parsed items: every text the sequence matches, folded, is a text of ``whole``
    (matched to its end) or begins with one of ``cut``."""
    out: tuple[set[str], set[str]] = ({""}, set())
    for op, av in items:
        if not out[0]:
            break
        out = _join(out, _item(op, av, longest), longest)
    return out


_NOTHING: tuple[set[str], set[str]] = ({""}, set())


def _item(op, av, longest: int) -> tuple[set[str], set[str]]:
    if op is _c.AT:
        return ({_BOUNDARY}, set()) if av is _c.AT_BOUNDARY else _NOTHING
    if op is _c.ASSERT or op is _c.ASSERT_NOT:
        return _NOTHING  # takes no character: what it asks only narrows the matches
    if op is _c.LITERAL:
        ch = _fold(av)
        return ({ch}, set()) if ch is not None else (set(), {""})
    if op is _c.IN:
        return _chars(av)
    if op is _c.SUBPATTERN:
        return _read(av[-1], longest)
    if op is _c.BRANCH:
        whole: set[str] = set()
        cut: set[str] = set()
        for alt in av[1]:
            w, c = _read(alt, longest)
            whole |= w
            cut |= c
        if len(whole) + len(cut) > _MOST:
            raise _Unknown
        return whole, cut
    if op is _c.MAX_REPEAT or op is _c.MIN_REPEAT:
        lo, hi, sub = av
        w, c = _read(sub, longest)
        if lo == 0 and hi == 1:
            return w | {""}, c
        # one or more times (or none): a match begins with one of the body's texts, what follows is not read
        return ({""} if lo == 0 else set()), c | w
    return set(), {""}  # anything else (any character, a negated class, a backreference): no start known


def _chars(av) -> tuple[set[str], set[str]]:
    """A character class: its characters when a few, folded; a decimal digit's mark for ``\\d``."""
    if av == [(_c.CATEGORY, _c.CATEGORY_DIGIT)]:
        return {_DIGIT}, set()
    out: set[str] = set()
    for op, a in av:
        if op is _c.LITERAL:
            cps = [a]
        elif op is _c.RANGE and a[1] - a[0] < 16:
            cps = list(range(a[0], a[1] + 1))
        else:
            return set(), {""}
        for cp in cps:
            ch = _fold(cp)
            if ch is None:
                return set(), {""}
            out.add(ch)
    return out, set()


def starts(rx: re.Pattern, longest: int = LONGEST) -> tuple[tuple[str, ...], int] | None:
    """``(texts, digits)`` such that every match of ``rx`` (a pattern of ``str``) begins where the folded text
    holds one of ``texts`` (lowercase), or a decimal digit: ``digits`` is 0 when no match begins with one, 1 when
    one begins with a digit after a word boundary (the first digit of a number), 2 when it may begin at any digit;
    each text up to ``longest`` characters (a longer start is found at fewer places, and each start costs a pass
    over the text). None when that is not known, or when a start is too short to help."""
    try:
        parsed = _p.parse(rx.pattern, rx.flags)
        if parsed.getwidth()[0] == 0:
            return None  # an empty match: finditer's rule for those is not repeated here
        whole, cut = _read(list(parsed), longest)
    except (_Unknown, RecursionError, re.error, TypeError):
        return None
    texts: set[str] = set()
    digits = 0
    for s in whole | cut:
        k = s.find(_DIGIT)
        if k >= 0:
            if s[:k].replace(_BOUNDARY, ""):
                s = s[:k]  # letters before the digit: the letters
            else:
                digits = max(digits, 1 if _BOUNDARY in s[:k] else 2)
                continue
        s = s.replace(_BOUNDARY, "")
        if len(s) < _SHORTEST and (not s or s.isalnum()):
            return None  # a sign ("!") is a start of its own
        texts.add(s)
    # a text that begins with another one adds no place
    kept = tuple(sorted(s for s in texts if not any(t != s and s.startswith(t) for t in texts)))
    return kept, digits


class Places:
    """The places of texts in one folded text, each found once for every pattern that asks."""

    __slots__ = ("low", "text", "_of", "_union")

    def __init__(self, text: str, low: str):
        self.text = text
        self.low = low
        self._of: dict[str, list[int]] = {}
        self._union: dict[tuple[tuple[str, ...], int], list[int]] = {}

    def _one(self, s: str) -> list[int]:
        got = self._of.get(s)
        if got is None:
            got = []
            find = self.low.find
            i = find(s)
            while i >= 0:
                got.append(i)
                i = find(s, i + 1)
            self._of[s] = got
        return got

    def _digits(self, digits: int) -> list[int]:
        """The places of the numbers' first digits (``digits`` 1) or of every digit (2)."""
        got = self._of.get(_DIGIT * digits)
        if got is None:
            rx = _DIGIT_RUN if digits == 1 else _DIGIT_ONE
            got = self._of[_DIGIT * digits] = [m.start() for m in rx.finditer(self.text)]
        return got

    def of(self, key: tuple[tuple[str, ...], int]) -> list[int]:
        """The sorted places where a match of a pattern whose :func:`starts` are ``key`` can begin."""
        got = self._union.get(key)
        if got is None:
            texts, digits = key
            places: set[int] = set()
            for s in texts:
                places.update(self._one(s))
            if digits:
                places.update(self._digits(digits))
            got = sorted(places)
            self._union[key] = got
        return got


def search(rx: re.Pattern, key: tuple[tuple[str, ...], int] | None, places: Places) -> bool:
    """Whether ``rx.search(places.text)`` finds a match, tried only where :func:`starts` (``key``) says one can
    begin."""
    if key is None or len(places.text) < LONG:
        return rx.search(places.text) is not None
    return next(matches(rx, key, places), None) is not None


def matches(rx: re.Pattern, key: tuple[tuple[str, ...], int] | None, places: Places, text: str | None = None
            ) -> Iterator[re.Match]:
    """``rx.finditer(text)``'s matches, found by trying ``rx`` only where :func:`starts` (``key``) says one can
    begin: from the left, each match the leftmost one at or after the end of the one before. ``text`` (by default
    ``places.text``) folds to ``places.low`` and holds the same digits as ``places.text``."""
    if text is None:
        text = places.text
    if key is None or len(text) < LONG:
        yield from rx.finditer(text)
        return
    at = places.of(key)
    if len(at) * _DENSE > len(text):
        yield from rx.finditer(text)
        return
    match = rx.match
    pos = 0
    k = 0
    n = len(at)
    while k < n:
        p = at[k]
        k += 1
        if p < pos:
            k = bisect_left(at, pos, k)
            continue
        m = match(text, p)
        if m is not None:
            yield m
            pos = m.end()
