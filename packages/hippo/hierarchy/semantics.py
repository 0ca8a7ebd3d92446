"""Offline distillation of semantics (seed 001 §3.2: "semantic nodes distil reusable long-term facts from
episodes"): salient sentences or clauses of an episode's messages, kept verbatim with their source message ids.

Salience is rule-based and cheap: the idf mass of a sentence's distinct content terms, plus bonuses for the marks of
a fact (numbers, dates, names, first-person statements of state or plan) and a penalty for questions and phatic
talk. Near-duplicates (code similarity at or above ``semantic_dedup``) merge into the existing semantic, which
gains the new provenance instead of a second copy.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from hippo import textnorm
from hippo.hierarchy.codes import idf

_SENTENCE_RE = re.compile(r"[^.!?;\n]+(?:[.!?;]+|\n|$)")
_DIGIT_RE = re.compile(r"\d")
_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday yesterday tomorrow today tonight week weeks month months year years "
    "weekend ago".split())
_FIRST_PERSON = frozenset("i i'm i've i'd i'll my mine we we're we've our ours".split())
_PHATIC = frozenset("hi hey hello thanks thank wow cool great awesome nice lol haha ok okay bye yay aw".split())


@dataclass
class Semantic:
    id: int
    text: str                   # "<speaker>: <sentence>" (the sentence verbatim)
    speaker: str | None
    message_ids: list[int]      # provenance: every message this fact was read from
    episode_ids: list[int]
    terms: tuple[str, ...]      # distinct content stems (speaker included), for query coverage
    seq: int                    # seq of the first source message
    ts: float | None
    salience: float = 0.0
    llm: bool = False           # extracted by an LLM rather than the offline rules
    extra: dict = field(default_factory=dict)


def sentences(text: str) -> list[str]:
    """Sentences and clauses of ``text``, verbatim and stripped."""
    out = []
    for m in _SENTENCE_RE.finditer(text):
        s = m.group(0).strip()
        if s:
            out.append(s)
    return out


def salience(sentence: str, terms: list[str], df: dict[str, int], n_docs: int) -> float:
    """Rule-based salience of one sentence (higher = more fact-like)."""
    distinct = set(terms)
    score = sum(idf(n_docs, df.get(t, 0)) for t in distinct) / max(1.0, math.log(2.0 + n_docs))
    words = textnorm.words(sentence)
    lower = [w.lower().replace("’", "'") for w in words]
    if _DIGIT_RE.search(sentence):
        score += 0.6
    if _TIME_WORDS.intersection(lower):
        score += 0.5
    if any(w[:1].isupper() and lw not in _FIRST_PERSON for w, lw in zip(words[1:], lower[1:])):
        score += 0.4
    if _FIRST_PERSON.intersection(lower):
        score += 0.4
    if sentence.rstrip().endswith("?"):
        score -= 1.0
    if lower and lower[0] in _PHATIC and len(distinct) < 5:
        score -= 0.8
    return score


def candidates(messages: list[tuple[int, str | None, str]], df: dict[str, int], n_docs: int,
               min_terms: int) -> list[tuple[float, int, str, list[str]]]:
    """(salience, message id, sentence, terms) of every fact-like sentence of the messages, in message order."""
    out = []
    for mid, _speaker, text in messages:
        for sent in sentences(text):
            terms = textnorm.terms(sent)
            if len(set(terms)) < min_terms:
                continue
            out.append((salience(sent, terms, df, n_docs), mid, sent, terms))
    return out


def select(cands: list[tuple[float, int, str, list[str]]], n_messages: int,
           per_message: float) -> list[tuple[int, str, list[str], float]]:
    """The most salient of an episode's candidate sentences: at most ``ceil(per_message * n_messages)``, at least
    one when any qualifies, returned in message order as (message id, sentence, terms, salience)."""
    if not cands:
        return []
    limit = max(1, math.ceil(per_message * n_messages))
    ranked = sorted(range(len(cands)), key=lambda i: (-cands[i][0], i))[:limit]
    keep = sorted(i for i in ranked if cands[i][0] > 0 or i == ranked[0])
    return [(cands[i][1], cands[i][2], cands[i][3], cands[i][0]) for i in keep]


def render(speaker: str | None, sentence: str) -> str:
    return f"{speaker}: {sentence}" if speaker else sentence
