"""Fact fingerprints and attribute facts, extracted offline from one message.

* Fingerprints (seed 002 §4.1 stage 4, the L5 predictive coder): numbers, proper nouns, dates, event keywords and
  definitional predicates. A message's surprise is the share of its fingerprints that the namespace has not seen
  before, plus small detail and event bonuses.
* Attribute facts (seed 002 §4.1 stage 3, contradiction records "indexed by entity and predicate"): a message that
  states where someone lives, where they work, who their partner is, their pet, phone, car, school, a salary or a
  deadline yields ``(entity, attribute, value)``. Two facts about the same entity and attribute with different
  values, the later one said after the earlier one, are an update (when the later one carries an update cue:
  "moved", "now", "no longer", "switched", "new"...) or an open contradiction (when it does not).

Attributes come from a small lexicon of trigger words per attribute family, so "relocated to Denver" and "I live in
Boston" are both ``residence`` facts even though they share no word. The lexicon is deliberately short: it covers
the attributes people update most, and a miss costs only the boost, never content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hippo import textnorm

# attribute family -> trigger words (lower case surface forms)
FAMILIES: dict[str, tuple[str, ...]] = {
    "residence": ("live", "lives", "living", "lived", "moved", "move", "moving", "relocated", "relocate",
                  "relocating", "relocation", "hometown", "based", "settled", "apartment", "neighborhood",
                  "neighbourhood", "reside", "resides", "residing"),
    "work": ("work", "works", "working", "worked", "job", "jobs", "hired", "joined", "employer", "employed",
             "company", "position", "role", "promoted", "promotion", "quit", "career", "intern", "internship",
             "boss", "occupation", "profession"),
    "partner": ("girlfriend", "boyfriend", "wife", "husband", "partner", "fiance", "fiancee", "fiancé", "fiancée",
                "married", "dating", "engaged", "spouse"),
    "pet": ("dog", "dogs", "cat", "cats", "puppy", "kitten", "pet", "pets", "parrot", "hamster", "rabbit", "bunny"),
    "phone": ("phone", "smartphone", "iphone", "android", "mobile"),
    "car": ("car", "cars", "truck", "vehicle", "suv", "motorbike", "motorcycle"),
    "school": ("school", "university", "college", "studying", "study", "studies", "major", "degree", "enrolled",
               "grad", "course"),
    "salary": ("salary", "paid", "pay", "earn", "earns", "earning", "income", "wage", "raise"),
    "deadline": ("deadline", "due", "launch", "release", "ship", "shipping", "postponed", "pushed"),
    "favorite": ("favorite", "favourite", "fave"),
}
_TRIGGER = {w: fam for fam, ws in FAMILIES.items() for w in ws}

# words whose presence marks the later statement as an update of the earlier one (seed 002 stage 4: "explicit
# contradiction detection for update verbs")
UPDATE_CUES = frozenset(
    """moved move moving relocated relocating changed change changing switched switch switching now no longer anymore
    new newly instead finally became become becoming replaced replace upgraded upgrade joined left quit started
    starting pushed postponed delayed rescheduled moved-up updated update actually currently since transferred
    promoted raise raised bumped got""".split())

EVENT_WORDS = frozenset(
    """born married wedding divorced engaged moved graduated graduation started finished adopted died passed won
    lost bought sold joined quit hired fired promoted launched visited travelled traveled trip vacation concert
    marathon race surgery accident birthday anniversary interview exam competition tournament festival conference
    retired pregnant baby""".split())

_NUMBER_RE = re.compile(r"(?<![\w.])\$?\d+(?:[.,]\d+)*(?:k|m|%)?(?![\w])", re.I)
_DEF_RE = re.compile(r"\b(?:my|our|his|her|their) ([a-z]+(?: [a-z]+)?) (?:is|was|are) (?:called |named )?([\w' -]{2,40})",
                     re.I)
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+")
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "me", "we", "we're", "we've", "our", "us", "mine"})
_VALUE_STOP = textnorm.STOPWORDS | frozenset(
    """now new currently finally recently today week month year last next ago really so very pretty big small
    great good nice little old""".split())
_PREP_VALUE_RE = re.compile(
    r"\b(?:to|in|at|as an?|as|for|with|named|called|is|was|into|from|by|on|until|til)\s+((?:the |a |an )?"
    r"[\w$€£%.,'-]+(?:\s+[\w$€£%.,'-]+){0,2})", re.I)
_CAP_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)")


@dataclass(frozen=True)
class Fact:
    entity: str        # lower case: the speaker for first-person statements, else the named subject
    attribute: str     # attribute family
    value: str         # normalized value words, space separated
    cue: bool          # the statement carries an update cue
    negated: bool      # "no longer", "not ... anymore", "quit", "left": the old value stops holding


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
    fp = {"n:" + m.group(0).lower().strip("$") for m in _NUMBER_RE.finditer(text)}
    fp.update("p:" + w.lower() for w in proper_nouns(text))
    fp.update("d:" + d for d in date_labels)
    lw = {w.lower() for w in textnorm.words(text)}
    fp.update("e:" + w for w in lw & EVENT_WORDS)
    fp.update("def:" + m.group(1).lower() + "=" + m.group(2).lower().strip() for m in _DEF_RE.finditer(text))
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


def _values_after(sentence: str, start: int) -> list[str]:
    """Value words following a trigger: proper nouns and numbers first, else the object of a preposition."""
    tail = sentence[start:]
    caps = [m.group(1) for m in _CAP_RE.finditer(tail)]
    nums = [m.group(0) for m in _NUMBER_RE.finditer(tail)]
    if caps or nums:
        return [v.lower() for v in (caps[:1] + nums[:1])]
    m = _PREP_VALUE_RE.search(tail)
    if m:
        ws = [w.lower().strip(".,'") for w in m.group(1).split()]
        ws = [w for w in ws if w and w not in _VALUE_STOP]
        if ws:
            return [" ".join(ws[:2])]
    return []


def facts(text: str, speaker: str | None) -> list[Fact]:
    """Attribute facts stated in ``text`` by ``speaker`` (at most one per attribute family)."""
    out: dict[str, Fact] = {}
    for sent in _SENT_SPLIT.split(text):
        low = sent.lower()
        ws = [w.lower() for w in textnorm.words(sent)]
        if not ws:
            continue
        fams = [(k, _TRIGGER[w]) for k, w in enumerate(ws) if w in _TRIGGER]
        if not fams:
            continue
        first_person = any(w in _FIRST_PERSON for w in ws)
        if first_person and speaker:
            entity = speaker.lower()
        else:
            names = proper_nouns(sent) or [w for w in textnorm.words(sent)[:1] if w[:1].isupper()]
            if not names:
                continue
            entity = names[0].lower()
        cue = any(w in UPDATE_CUES for w in ws) or "no longer" in low
        negated = "no longer" in low or "anymore" in low or "any more" in low or " quit " in f" {low} " \
            or " left " in f" {low} "
        for k, fam in fams:
            if fam in out:
                continue
            # the trigger word's character offset: search from the k-th word
            pos = 0
            for w in textnorm.words(sent)[: k + 1]:
                pos = sent.find(w, pos) + len(w)
            vals = _values_after(sent, pos)
            vals = [v for v in vals if v != entity and v not in _TRIGGER]
            if fam == "favorite":
                m = re.search(r"favou?rite ([a-z]+)", low)
                fam = f"favorite {m.group(1)}" if m else fam
            if vals:
                out[fam] = Fact(entity, fam, vals[0], cue, negated)
    return list(out.values())


def query_targets(query: str) -> tuple[list[str], set[str]]:
    """(attribute families the query asks about, lower-case names it mentions)."""
    ws = [w.lower() for w in textnorm.words(query)]
    fams = []
    for w in ws:
        fam = _TRIGGER.get(w) or _TRIGGER.get(textnorm.stem(w))
        if fam and fam not in fams:
            fams.append(fam)
    if "favorite" in fams or "favourite" in ws:
        m = re.search(r"favou?rite ([a-z]+)", query.lower())
        if m:
            fams = [f"favorite {m.group(1)}" if f == "favorite" else f for f in fams]
    if re.search(r"\bwhere\b.*\b(live|from|based|stay)", query, re.I) and "residence" not in fams:
        fams.append("residence")
    names = {w.lower().removesuffix("'s").removesuffix("’s") for w in textnorm.words(query) if w[:1].isupper()}
    names -= textnorm.STOPWORDS | textnorm.QUESTION_WORDS
    return fams, names
