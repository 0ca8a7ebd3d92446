"""Maps words to the token-id patterns under which they occur in the Content DWM.

The lexical channel never keeps an inverted index: it asks the Content DWM where a word's tokens occur. A word
occurs either as one whole-word token (" painting", "Painting"), found through the vocabulary table built here
(every cl100k token that is a complete word, keyed by its stem, so " paints" and " painted" are found for
"painting"), or as a run of several tokens (" LGBTQ" -> " LGB", "TQ"), found as a phrase.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from hippo import textnorm, tokenizer

_lock = threading.Lock()
_stem_table: dict[str, np.ndarray] | None = None
_word_start: np.ndarray | None = None


def _build() -> None:
    global _stem_table, _word_start
    strings = tokenizer.token_strings()
    table: dict[str, list[int]] = {}
    starts = np.zeros(len(strings), dtype=bool)
    enc = tokenizer.encoding()
    for tid, s in enumerate(strings):
        if not s:
            # A partial UTF-8 piece (" \xf0\x9f" of an emoji, " \xe6\x9d" of a CJK character) that starts
            # with a space still starts a new word: the word before it has ended.
            try:
                starts[tid] = enc.decode_single_token_bytes(tid)[:1].isspace()
            except KeyError:
                pass
            continue
        core = s[1:] if s[0] == " " else s
        if s[0] == " " or not s[0].isalnum():
            starts[tid] = True
        if not core or not core.isalpha():
            continue
        table.setdefault(textnorm.stem(core), []).append(tid)
    _stem_table = {k: np.asarray(v, dtype=np.uint32) for k, v in table.items()}
    _word_start = starts


def stem_tokens(stem: str) -> np.ndarray:
    """Token ids that are, on their own, a complete word with this stem (any case, with or without a space)."""
    if _stem_table is None:
        with _lock:
            if _stem_table is None:
                _build()
    return _stem_table.get(stem, np.zeros(0, dtype=np.uint32))  # type: ignore[union-attr]


def continues_word(token_ids: np.ndarray) -> np.ndarray:
    """True where a token glues onto the previous one (no leading space or punctuation): a word continues."""
    if _word_start is None:
        with _lock:
            if _word_start is None:
                _build()
    return ~_word_start[token_ids]  # type: ignore[index]


@dataclass(frozen=True)
class TermPattern:
    """How one query term is matched: any of ``singles``, or any of the multi-token ``phrases``."""

    term: str
    singles: np.ndarray
    phrases: tuple[tuple[int, ...], ...]


def pattern(word: str) -> TermPattern:
    stem = textnorm.stem
    st = stem(word)
    singles = stem_tokens(st)
    phrases: set[tuple[int, ...]] = set()
    variants = {word, word.lower(), word.capitalize(), word.upper()}
    # Inflected forms that tokenize into several pieces (" h" + "iked") are not in the single-token table:
    # spell the usual inflections of the stem and keep those that fold back to the same stem.
    low = word.lower()
    for form in (st, st + "s", st + "es", st + "e", st + "ed", st + "ing", st + "d", st + "er", st + "ers",
                 low[:-1] + "ies" if low.endswith("y") else low):
        if form and stem(form) == st:
            variants.add(form)
            variants.add(form.capitalize())
    for v in variants:
        for form in (" " + v, v):
            ids = tuple(tokenizer.encoding().encode_ordinary(form))
            if len(ids) > 1:
                phrases.add(ids)
    return TermPattern(st, singles, tuple(sorted(phrases)))
