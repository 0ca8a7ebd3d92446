"""Rule-based salience and compression novelty of a message (seed 002 §4.1 stage 1, the encoding gate's
signals; salience also tilts ranking, :mod:`hippo.engine.truth.rank`)."""

from __future__ import annotations

import re
import zlib

from hippo.text import textnorm

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


def salience(text: str) -> tuple[float, str]:
    """(salience in [0, 1], category) with category in correction / decision / relationship / question / noise /
    other."""
    t = text.strip()
    words = [w.lower() for w in textnorm.words(t)]
    category = "other"
    if _CORRECT_RE.search(t):
        category = "correction"
    elif _COMMIT_RE.search(t):
        category = "decision"
    elif _RELATION_RE.search(t):
        category = "relationship"
    if len(t) <= 50:
        if category == "decision":
            return 0.8, category
        if category == "correction":
            return 0.6, category
        if words and all(w in _NOISE for w in words):
            return 0.02, "noise"
        if t.endswith("?"):
            return 0.2, "question"
        return (0.4 if category == "relationship" else 0.3), category
    score = min(0.35, 0.35 * len(t) / 300.0)
    score += 0.2 if re.search(r"\d", t) else 0.0
    score += 0.15 if _DATE_RE.search(t) else 0.0
    score += 0.1 if _EMOTION_RE.search(t) else 0.0
    score += 0.1 if any(w[:1].isupper() for w in textnorm.words(t)[1:]) else 0.0
    score += {"decision": 0.25, "correction": 0.2, "relationship": 0.1}.get(category, 0.0)
    return float(min(1.0, score)), category
