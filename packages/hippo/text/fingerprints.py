"""Fact fingerprints of one message and its surprise (seed 002 §4.1 stage 4, the L5 predictive coder).

The fingerprints of a message are its numbers, proper nouns, dates, event keywords and definitional predicates
("my dog is called Rex"). A message's surprise is the share of its fingerprints that the namespace has not seen
before, plus small detail and event bonuses. Attribute statements (who lives where, works where...) are read by
:mod:`hippo.text.attributes`.
"""

from __future__ import annotations

import re

from hippo.text import anchors, textnorm

EVENT_WORDS = frozenset(
    """born married wedding divorced engaged moved graduated graduation started finished adopted died passed won
    lost bought sold joined quit hired fired promoted launched visited travelled traveled trip vacation concert
    marathon race surgery accident birthday anniversary interview exam competition tournament festival conference
    retired pregnant baby""".split())

_NUMBER_RE = re.compile(r"(?<![\w.])\$?\d+(?:[.,]\d+)*(?:k|m|%)?(?![\w])", re.I)
_DEF_RE = re.compile(r"\b(?:my|our|his|her|their) ([a-z]+(?: [a-z]+)?) (?:is|was|are) (?:called |named )?([\w' -]{2,40})",
                     re.I)
_DIGIT_RE = re.compile(r"\d")
_DEF_NEEDS = ("my ", "our ", "his ", "her ", "their ")
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+")
# where the number and definition patterns' matches can begin (:func:`hippo.text.anchors.starts`: a digit or "$"; "my",
# "her", ...): a long message's pattern is tried there
_STARTS = {rx: anchors.starts(rx, 6) for rx in (_NUMBER_RE, _DEF_RE)}


def _each(rx: re.Pattern, places: anchors.Places):
    """``rx.finditer`` of the text of ``places``, tried where its matches can begin (a short text: one pass)."""
    return anchors.matches(rx, _STARTS[rx], places)


def proper_nouns(text: str) -> list[str]:
    """Capitalized words that do not start a sentence (names, places, brands), in order."""
    out = []
    for sent in _SENT_SPLIT.split(text):
        ws = textnorm.words(sent)
        for k, w in enumerate(ws):
            if k > 0 and w[:1].isupper() and w.lower() not in ("i", "i'm", "i've", "i'd", "i'll") \
                    and w.lower() not in textnorm.STOPWORDS:
                out.append(w)
    return out


def fingerprints(text: str, date_labels: list[str]) -> set[str]:
    """Seed 002 stage 4: the fact fingerprints of one message."""
    fp: set[str] = set()
    low = textnorm.regex_folded(text)
    places = anchors.Places(text, low)
    if _DIGIT_RE.search(text):  # every number holds a digit: a message without one (most chat) skips the pattern
        fp.update("n:" + m.group(0).lower().strip("$") for m in _each(_NUMBER_RE, places))
    fp.update("p:" + w.lower() for w in proper_nouns(text))
    fp.update("d:" + d for d in date_labels)
    lw = {w.lower() for w in textnorm.words(text)}
    fp.update("e:" + w for w in lw & EVENT_WORDS)
    if any(w in low for w in _DEF_NEEDS):  # every match holds one: most messages hold none, and it is not run
        fp.update("def:" + m.group(1).lower() + "=" + m.group(2).lower().strip()
                  for m in _each(_DEF_RE, places))
    return fp


def surprise(fp: set[str], seen: set[str], text: str) -> float:
    """Share of new fingerprints, with small length / detail / event bonuses (seed 002 stage 4), in [0, 1]."""
    if not fp:
        return 0.0
    new = sum(1 for f in fp if f not in seen)
    score = 0.8 * new / len(fp)
    score += 0.1 * min(1.0, len(text) / 300.0)
    score += 0.1 if any(f.startswith("e:") for f in fp) else 0.0
    return float(min(1.0, score))
