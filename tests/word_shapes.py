"""A word written in the shapes a pre-check or a fast path must read as the plain reading does."""

from __future__ import annotations

#: the characters case-insensitive matching (``re.I``) takes for ASCII letters: the dotless and the dotted i, the long
#: s and the Kelvin sign
FOLDS = {"i": "\u0131", "I": "\u0130", "s": "\u017f", "k": "\u212a", "K": "\u212a"}


def mangle(word: str, how: int) -> str:
    """``word`` as written (0), in capitals (1), in title case (2), in the characters of :data:`FOLDS` (3), or glued
    to letters on both sides, with no word boundary (4)."""
    if how == 1:
        return word.upper()
    if how == 2:
        return word.title()
    if how == 3:
        return "".join(FOLDS.get(c, c) for c in word)
    if how == 4:
        return "x" + word + "y"
    return word
