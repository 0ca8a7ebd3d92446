"""Maps words to the token-id patterns under which they occur in the Content DWM.

The lexical channel never keeps an inverted index: it asks the Content DWM where a word's tokens occur. A query
word is spelled in its usual surface forms (case variants, with and without a leading space, and the inflections
that fold back to the same stem: "paint" -> " paints", " painted", "Painting"...). Each form is tokenized: a
form that is one token is matched by that token's occurrences, a form of several tokens (" LGBTQ" -> " LGB",
"TQ") as a phrase. The only table over the vocabulary is which tokens start a word (a leading space or
punctuation) and which continue one, filled once per process from the tokenizer's byte table (~15 ms).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hippo.text import textnorm, tokenizer

_lock = threading.Lock()
_word_start: np.ndarray | None = None  # per token id: -1 unknown, 0 continues a word, 1 starts one


def _starts_word(tid: int) -> bool:
    try:
        b = tokenizer.encoding().decode_single_token_bytes(tid)
    except KeyError:
        return True
    return _bytes_start_word(b)


def _bytes_start_word(b: bytes) -> bool:
    if not b:
        return True
    first = b[:1]
    # A leading space, punctuation, or a partial UTF-8 piece after a space (" \xf0\x9f" of an emoji) all mean
    # the previous word has ended; a letter or digit glues onto it.
    return not (first.isalnum() or first[0] >= 0x80 and not b[:1].isspace() and not b.startswith(b" "))


def _ranked_bytes() -> tuple[np.ndarray, list[bytes]]:
    """The encoding's byte table as (token ids, their bytes), when tiktoken exposes it."""
    ranks = getattr(tokenizer.encoding(), "_mergeable_ranks", None)
    if not isinstance(ranks, dict) or not ranks:
        return np.zeros(0, dtype=np.int64), []
    keys = [b for b, t in ranks.items() if isinstance(b, bytes) and b and isinstance(t, int)]
    return np.fromiter((ranks[b] for b in keys), dtype=np.int64, count=len(keys)), keys


# Per first / last byte value: a letter or digit (ASCII), or a byte of a multi-byte UTF-8 character.
_WORD_BYTE = np.array([bytes([v]).isalnum() or v >= 0x80 for v in range(256)], dtype=bool)


def _word_start_table() -> np.ndarray:
    """Per token id: 1 starts a word, 0 continues one, -1 not known yet (then decoded on first sight). Filled at
    once from the encoding's byte table when tiktoken exposes it (the first byte of every token, classified in one
    vectorised step, instead of a decode per token); the ids it does not list (special tokens) start a word, as
    decoding them says. Equal to :func:`_bytes_start_word` of every token's bytes."""
    table = np.full(tokenizer.vocab_size() + 1, -1, dtype=np.int8)
    ids, keys = _ranked_bytes()
    if keys:
        first = np.frombuffer(b"".join(b[:1] for b in keys), dtype=np.uint8)
        ok = (ids >= 0) & (ids < table.size)
        table[ids[ok]] = np.where(_WORD_BYTE[first[ok]], 0, 1)
        for tid in np.flatnonzero(table < 0).tolist():
            table[tid] = 1 if _starts_word(tid) else 0
    return table


_BLOCK = 1 << 16  # ids looked up per step: the lookup's temporaries stay in cache
_word_end: np.ndarray | None = None  # per token id: 1 ends in a word character (a following piece may glue on)


def _bytes_end_in_word(b: bytes) -> bool:
    # a letter or a digit, or a piece of a multi-byte character (letters of other scripts)
    return bool(b) and (b[-1:].isalnum() or b[-1] >= 0x80)


def _word_end_table() -> np.ndarray:
    """Per token id: 1 if its last byte is a word character (:func:`_bytes_end_in_word`), in one vectorised step
    over the encoding's byte table; the ids it does not list are decoded."""
    table = np.zeros(tokenizer.vocab_size() + 1, dtype=np.int8)
    listed = np.zeros(table.size, dtype=bool)
    ids, keys = _ranked_bytes()
    if keys:
        last = np.frombuffer(b"".join(b[-1:] for b in keys), dtype=np.uint8)
        ok = (ids >= 0) & (ids < table.size)
        table[ids[ok]] = _WORD_BYTE[last[ok]]
        listed[ids[ok]] = True
    enc = tokenizer.encoding()
    for tid in np.flatnonzero(~listed).tolist():
        try:
            table[tid] = _bytes_end_in_word(enc.decode_single_token_bytes(tid))
        except KeyError:
            table[tid] = 0
    return table


def ends_in_word(token_ids: np.ndarray) -> np.ndarray:
    """True where a token ends in a word character: a following piece without a leading space (``"i"`` after
    ``" Moch"``) continues that word instead of starting one."""
    global _word_end
    ids = np.asarray(token_ids)
    if ids.dtype.kind not in "iu":
        ids = ids.astype(np.int64)
    if _word_end is None:
        with _lock:
            if _word_end is None:
                _word_end = _word_end_table()
    table = _word_end
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= table.size):
        ids = np.clip(ids.astype(np.int64), 0, table.size - 1)
    return _lookup(table, ids) == 1


def continues_word(token_ids: np.ndarray) -> np.ndarray:
    """True where a token glues onto the previous one (no leading space or punctuation): a word continues."""
    global _word_start
    ids = np.asarray(token_ids)
    if ids.dtype.kind not in "iu":
        ids = ids.astype(np.int64)
    if _word_start is None:
        with _lock:
            if _word_start is None:
                _word_start = _word_start_table()
    table = _word_start
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= table.size):
        ids = np.clip(ids.astype(np.int64), 0, table.size - 1)
    known = _lookup(table, ids)
    if (known < 0).any():
        for tid in np.unique(ids[known < 0]).tolist():
            table[tid] = 1 if _starts_word(tid) else 0
        known = _lookup(table, ids)
    return known == 0


def _lookup(table: np.ndarray, ids: np.ndarray) -> np.ndarray:
    out = np.empty(ids.size, dtype=table.dtype)
    for lo in range(0, ids.size, _BLOCK):
        np.take(table, ids[lo:lo + _BLOCK], out=out[lo:lo + _BLOCK])
    return out


_INVERSE_IRREGULAR: dict[str, set[str]] = {}
for _w, _s in textnorm._IRREGULAR.items():
    _INVERSE_IRREGULAR.setdefault(_s, set()).add(_w)


@dataclass(frozen=True)
class TermPattern:
    """How one query term is matched: any of ``singles``, or any of the multi-token ``phrases``."""

    term: str
    singles: np.ndarray
    phrases: tuple[tuple[int, ...], ...]


def surface_forms(word: str) -> set[str]:
    """Spellings of ``word`` to look for: case variants and the inflections that share its stem."""
    stem = textnorm.stem
    st = stem(word)
    low = word.lower()
    forms = {low, st}
    for suffix in ("s", "es", "e", "ed", "ing", "d", "er", "ers", "ings"):
        forms.add(st + suffix)
        forms.add(low + suffix)
    if st.endswith("y"):
        forms.update({st[:-1] + "ies", st[:-1] + "ied"})
    if len(st) >= 3 and st[-1] not in "aeiouywx":  # doubled consonant: "run" -> "running"
        forms.update({st + st[-1] + "ing", st + st[-1] + "ed"})
    forms |= _INVERSE_IRREGULAR.get(st, set())
    forms = {f for f in forms if f and stem(f) == st}
    out = set()
    for f in forms:
        out.update({f, f.capitalize(), f.upper()})
    out.add(word)
    return out


@lru_cache(maxsize=20_000)
def pattern(word: str) -> TermPattern:
    enc = tokenizer.encoding()
    singles: set[int] = set()
    phrases: set[tuple[int, ...]] = set()
    for v in surface_forms(word):
        for form in (" " + v, v):
            ids = tuple(enc.encode_ordinary(form))
            if len(ids) == 1:
                singles.add(ids[0])
            elif ids:
                phrases.add(ids)
    return TermPattern(textnorm.stem(word), np.asarray(sorted(singles), dtype=np.uint32), tuple(sorted(phrases)))
