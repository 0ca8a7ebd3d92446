"""Rule-based salience and compression novelty of a message (seed 002 §4.1 stage 1, the encoding gate's
signals; salience also tilts ranking, :mod:`hippo.engine.truth.rank`)."""

from __future__ import annotations

import re
import zlib

from hippo.text import anchors, textnorm

_COMMIT_RE = re.compile(r"\b(i will|i'll|i promise|i'm going to|i am going to|let's|we will|we'll|remind me|"
                        r"don't forget|do not forget|i plan to|i decided|we decided|deadline|must)\b", re.I)
_CORRECT_RE = re.compile(r"\b(actually|correction|i meant|not .{1,30} but|wrong|instead|mistake|sorry, it's|"
                         r"no, it|update:)\b", re.I)
_RELATION_RE = re.compile(r"\b(wife|husband|partner|girlfriend|boyfriend|mother|father|mom|dad|sister|brother|"
                          r"son|daughter|kids?|children|friend|family|married|divorced|boss|colleague)\b", re.I)
_EMOTION_RE = re.compile(r"\b(love|hate|afraid|scared|angry|sad|happy|excited|worried|proud|upset|thrilled|"
                         r"anxious|grateful|devastated)\b|!", re.I)
_DATE_RE = re.compile(r"\b(\d{4}|\d{1,2}[/.-]\d{1,2}|january|february|march|april|may|june|july|august|september|"
                      r"october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
                      r"yesterday|tomorrow|today|tonight|next week|last week)\b", re.I)
# Per pattern above: texts one of which every match holds (lowercase, as textnorm.regex_folded gives the text). A
# pattern none of whose texts a message holds is not run: the regex engine tries its alternatives at every position.
_COMMIT_NEEDS = ("i will", "i'll", "i promise", "i'm going to", "i am going to", "let's", "we will", "we'll",
                 "remind me", "don't forget", "do not forget", "i plan to", "i decided", "we decided", "deadline",
                 "must")
_CORRECT_NEEDS = ("actually", "correction", "i meant", "wrong", "instead", "mistake", "sorry, it's", "no, it",
                  "update:")  # and "not .{1,30} but": both "not " and " but"
_RELATION_NEEDS = ("wife", "husband", "partner", "girlfriend", "boyfriend", "mother", "father", "mom", "dad", "sister",
                   "brother", "son", "daughter", "kid", "children", "friend", "family", "married", "divorced", "boss",
                   "colleague")
_EMOTION_NEEDS = ("love", "hate", "afraid", "scared", "angry", "sad", "happy", "excited", "worried", "proud", "upset",
                  "thrilled", "anxious", "grateful", "devastated", "!")
_DATE_NEEDS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
               "yesterday", "tomorrow", "today", "tonight", "next week", "last week")  # or a digit
_DIGIT_RE = re.compile(r"\d")
# where each pattern's matches can begin (:func:`hippo.text.anchors.starts`, its words' first six letters: few
# places each): a long message's pattern is tried there
_STARTS = {rx: anchors.starts(rx, 6) for rx in (_COMMIT_RE, _CORRECT_RE, _RELATION_RE, _EMOTION_RE, _DATE_RE)}
_NOISE = frozenset("ok okay k thanks thx ty cool nice lol haha hmm yes no yeah yep nope sure great wow hi hey hello "
                   "bye right fine alright".split())



def _deflate(data: bytes) -> int:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return len(c.compress(data) + c.flush())


def novelty(text: str, memory: list[str]) -> float:
    e = text.encode("utf-8")
    ce = _deflate(e)
    if ce < 10:
        return 0.05
    if not memory:
        return 1.0
    m = "\n".join(memory).encode("utf-8")
    return float(min(1.0, max(0.0, (_deflate(m + b"\n" + e) - _deflate(m)) / ce)))


def _holds(low: str, needs: tuple[str, ...]) -> bool:
    for w in needs:
        if w in low:
            return True
    return False


def _found(rx: re.Pattern, places: anchors.Places) -> bool:
    """Whether ``rx`` matches in the text of ``places``, tried where its matches can begin (a short text: one
    pass)."""
    return anchors.search(rx, _STARTS[rx], places)


def salience(text: str) -> tuple[float, str]:
    """(salience in [0, 1], category) with category in correction / decision / relationship / question / noise /
    other."""
    t = text.strip()
    found = textnorm.words(t)
    low = textnorm.regex_folded(t)
    places = anchors.Places(t, low)
    category = "other"
    if (_holds(low, _CORRECT_NEEDS) or ("not " in low and " but" in low)) and _found(_CORRECT_RE, places):
        category = "correction"
    elif _holds(low, _COMMIT_NEEDS) and _found(_COMMIT_RE, places):
        category = "decision"
    elif _holds(low, _RELATION_NEEDS) and _found(_RELATION_RE, places):
        category = "relationship"
    if len(t) <= 50:
        if category == "decision":
            return 0.8, category
        if category == "correction":
            return 0.6, category
        if found and all(w.lower() in _NOISE for w in found):
            return 0.02, "noise"
        if t.endswith("?"):
            return 0.2, "question"
        return (0.4 if category == "relationship" else 0.3), category
    digit = _DIGIT_RE.search(t) is not None
    score = min(0.35, 0.35 * len(t) / 300.0)
    score += 0.2 if digit else 0.0
    score += 0.15 if (digit or _holds(low, _DATE_NEEDS)) and _found(_DATE_RE, places) else 0.0
    score += 0.1 if _holds(low, _EMOTION_NEEDS) and _found(_EMOTION_RE, places) else 0.0
    score += 0.1 if any(w[:1].isupper() for w in found[1:]) else 0.0
    score += {"decision": 0.25, "correction": 0.2, "relationship": 0.1}.get(category, 0.0)
    return float(min(1.0, score)), category
