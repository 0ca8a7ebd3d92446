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

from hippo.text import textnorm

# attribute family -> trigger words (lower case surface forms)
FAMILIES: dict[str, tuple[str, ...]] = {
    "residence": ("live", "lives", "living", "lived", "moved", "move", "moving", "relocated", "relocate",
                  "relocating", "relocation", "hometown", "based", "settled", "apartment", "flat", "neighborhood",
                  "neighbourhood", "reside", "resides", "residing", "home", "place"),
    "work": ("work", "works", "working", "worked", "job", "jobs", "hired", "joined", "employer", "employed",
             "company", "position", "role", "promoted", "promotion", "quit", "career", "intern", "internship",
             "boss", "occupation", "profession", "offer", "team", "colleagues", "office", "shift", "retrained"),
    "partner": ("girlfriend", "boyfriend", "wife", "husband", "partner", "fiance", "fiancee", "fiancé", "fiancée",
                "married", "dating", "engaged", "spouse", "together"),
    "pet": ("dog", "dogs", "cat", "cats", "puppy", "kitten", "pet", "pets", "parrot", "hamster", "rabbit", "bunny",
            "adopted", "vet"),
    "phone": ("phone", "smartphone", "iphone", "android", "mobile"),
    "car": ("car", "cars", "truck", "vehicle", "suv", "motorbike", "motorcycle", "drive", "drives", "driving",
            "bought"),
    "school": ("school", "university", "college", "studying", "study", "studies", "major", "degree", "enrolled",
               "grad", "course"),
    "salary": ("salary", "paid", "pay", "earn", "earns", "earning", "income", "wage", "raise"),
    "deadline": ("deadline", "due", "launch", "release", "ship", "ships", "shipping", "postponed", "pushed"),
    "favorite": ("favorite", "favourite", "fave"),
}
_TRIGGER = {w: fam for fam, ws in FAMILIES.items() for w in ws}
_TRIGGER_WORDS = frozenset(_TRIGGER)
_LOWER_WORD_RE = re.compile(r"[a-zé]+")

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
THING_ATTRIBUTES = frozenset({"deadline"})
# attributes whose values are often common nouns ("I work as a nurse", "my favourite food is ramen"): only these
# take the object of a preposition as a value; the others need a name or a number
OBJECT_ATTRIBUTES = ("work", "school", "favorite")  # attributes of a named thing rather than of the speaker
_MONTH_WORDS = frozenset("""january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split())
_PLACE_PREP = re.compile(r"\b(?:in|to|at|from|near|is)\s+$", re.I)
_SUBJECT_I = frozenset({"i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've"})
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "my", "me", "we", "we're", "we've", "our", "us", "mine"})
_VALUE_STOP = textnorm.STOPWORDS | frozenset(
    """now new currently finally recently today week month year last next ago really so very pretty big small
    great good nice little old""".split())
_PREP_VALUE_RE = re.compile(
    r"\b(?:to|in|at|as an?|as|for|with|named|called|is|was|into|from|by|on|until|til)\s+((?:the |a |an )?"
    r"[\w$€£%.,'-]+(?:\s+[\w$€£%.,'-]+){0,2})", re.I)
_CAP_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|\d+[a-z]?))*)")
# someone other than the speaker is the subject: "my sister moved to Lyon", "his car", "they sold me"
_THIRD_PARTY_RE = re.compile(
    r"\b(?:he|she|his|her|him|(?:my|our) (?:cousin|sister|brother|dad|mum|mom|mother|father|"
    r"parents|neighbou?r|friend|aunt|uncle|grandma|grandpa|grandmother|grandfather|colleague|son|daughter|kids?))\b",
    re.I)


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
    """The object of a preposition after a trigger ("as a nurse"), for values that are not proper nouns or
    numbers (those are given to their nearest trigger first)."""
    tail = sentence[start:]
    if _CAP_RE.search(tail) or _NUMBER_RE.search(tail):
        return []
    m = _PREP_VALUE_RE.search(tail)
    if m:
        ws = [w.lower().strip(".,'") for w in m.group(1).split()]
        ws = [w for w in ws if w and w not in _VALUE_STOP]
        if ws:
            return [" ".join(ws[:2])]
    return []


def facts(text: str, speaker: str | None) -> list[Fact]:
    """Attribute facts stated in ``text`` by ``speaker`` (at most one per attribute family).

    Values are the sentence's proper nouns and numbers, each given to the nearest trigger word before it (or after
    it, when none precedes): "I moved in with my new partner Felix" is a partner fact, not a residence. A family
    whose trigger got no such value takes the object of a preposition after it ("I work as a nurse")."""
    if _TRIGGER_WORDS.isdisjoint(_LOWER_WORD_RE.findall(text.lower())):
        return []
    out: dict[str, Fact] = {}
    pending: list[str] = []
    for sent in _SENT_SPLIT.split(text):
        low = sent.lower()
        surface = textnorm.words(sent)
        ws = [w.lower() for w in surface]
        if not ws:
            continue
        # "since Priya moved to Berlin": a trigger right after another person's name states their fact, not ours
        def theirs(k: int) -> bool:
            return (_TRIGGER[ws[k]] not in THING_ATTRIBUTES and k > 0 and surface[k - 1][:1].isupper()
                    and ws[k - 1] not in _FIRST_PERSON and ws[k - 1] not in textnorm.STOPWORDS
                    and (speaker is None or ws[k - 1] != speaker.lower()))

        all_trig = [(k, _TRIGGER[w]) for k, w in enumerate(ws) if w in _TRIGGER]
        fams = [(k, f) for k, f in all_trig if not theirs(k)]
        skipped = {k for k, _ in all_trig if theirs(k)}
        if not fams and pending:
            fams = [(0, fam) for fam in pending]  # "Got a raise! I'm on 64,000 now."
        pending = []
        if not fams:
            continue
        third_party = bool(_THIRD_PARTY_RE.search(sent))
        if third_party and ws[0] not in _SUBJECT_I:
            continue  # a fact about someone else, or about the speaker only through someone else
        # first-person statements, and chat's implicit subject ("Sold the Kuga and bought a Yaris."), are the
        # speaker's
        if speaker:
            entity = speaker.lower()
        else:
            names = proper_nouns(sent)
            if not names:
                continue
            entity = names[0].lower()
        cue = any(w in UPDATE_CUES for w in ws) or "no longer" in low
        negated = "no longer" in low or "anymore" in low or "any more" in low or " quit " in f" {low} " \
            or " left " in f" {low} "
        # word offsets of each surface word, to place values relative to triggers
        offsets, pos = [], 0
        for w in surface:
            pos = sent.find(w, pos)
            offsets.append(pos)
            pos += len(w)
        trig_at = [(offsets[k], fam) for k, fam in fams]
        near_at = [(offsets[k], k in skipped) for k, _ in all_trig]
        values: list[tuple[int, str]] = [(m.start(1), m.group(1)) for m in _CAP_RE.finditer(sent)]
        m = re.match(r"([A-Z][a-z]+) and (?:I|me)\b", sent)  # "Theo and I have been together"
        if m:
            values.insert(0, (0, m.group(1)))
        m = re.search(r"([a-z]+(?: [a-z]+)?) (?:is|are) (?:now )?(?:my|our) (?:new )?favou?rite", low)
        if m and m.group(1).split()[-1] not in textnorm.STOPWORDS:  # "tacos is my favourite now"
            values.append((m.start(1), m.group(1).split()[-1]))
        spans = [(a, a + len(v)) for a, v in values]
        values += [(m.start(), m.group(0)) for m in _NUMBER_RE.finditer(sent)
                   if not any(a <= m.start() < b for a, b in spans)]  # "Model 3" is one value
        assigned: dict[str, str] = {}
        for at, raw in sorted(values):
            v = raw.lower()
            if v == entity or v in _TRIGGER or v in textnorm.STOPWORDS:
                continue
            if re.search(r"(?:instead of|rather than|\bnot)\s+(?:the |a |an )?$", sent[:at], re.I):
                continue  # "due November 28 instead of October 22": the old value is not the statement's
            if near_at and min(near_at, key=lambda t: abs(t[0] - at))[1]:
                continue  # the value belongs to someone else's statement
            fam = min(trig_at, key=lambda t: abs(t[0] - at))[1]  # the nearest trigger owns the value
            if v.split()[0] in _MONTH_WORDS and fam not in THING_ATTRIBUTES:
                continue  # a date is a value only of a deadline
            if fam == "residence" and not _PLACE_PREP.search(sent[max(0, at - 16):at]):
                continue  # a place is "in / to / at / from / near X" or "home is X", not "facing the Douro"
            assigned[fam] = v  # the last value wins: "from 55,000 to 92,500", "not in Lyon anymore, moved to Leeds"
        for k, fam in fams:
            if fam in assigned or fam in out or not fam.startswith(OBJECT_ATTRIBUTES):
                continue
            vals = _values_after(sent, offsets[k] + len(surface[k]))
            taken = set(assigned.values())
            vals = [v for v in vals if v != entity and v not in _TRIGGER and not (set(v.split()) & taken)]
            if vals:
                assigned[fam] = vals[0]
            elif k < len(surface) and surface[k].lower() in _TRIGGER:
                pending.append(fam)
        for k, fam in fams:  # a trigger with no value of its own may take one from the next sentence
            if fam not in assigned and fam not in out and fam not in pending and not fam.startswith(OBJECT_ATTRIBUTES):
                pending.append(fam)
        for fam, v in assigned.items():
            name = fam
            if fam in THING_ATTRIBUTES:
                # a deadline belongs to the project it names ("The Orion project is due on March 18"), not to
                # the speaker: the first capitalized word that is not the value, sentence-initial included
                things = [w.lower() for w in proper_nouns(sent) + surface[:1] if w[:1].isupper()
                          and w.lower() not in v.split() and w.lower() not in textnorm.STOPWORDS
                          and w.lower() not in _TRIGGER and w.lower() not in _MONTH_WORDS]
                if not things:
                    continue
                out.setdefault(name, Fact(things[0], name, v, cue, negated))
                continue
            if fam == "favorite":
                name = favorite_attribute(low) or fam
            out.setdefault(name, Fact(entity, name, v, cue, negated))
    return list(out.values())


_FOOD_WORDS = frozenset({"food", "meal", "dish", "dishes", "cuisine", "snack", "dinner", "lunch", "breakfast"})


def favorite_attribute(low: str) -> str | None:
    """"favorite <thing>" for a lower-case sentence or question: the noun after favourite, with meals and dishes
    folded into food ("my favourite meal", "... is my favourite now" about food)."""
    m = re.search(r"favou?rite ([a-z]+)", low)
    noun = m.group(1) if m else None
    if noun is None or noun in textnorm.STOPWORDS or noun in ("now", "these", "ever", "thing", "one"):
        words = set(re.findall(r"[a-z]+", low))
        noun = "food" if words & _FOOD_WORDS else None
    if noun in _FOOD_WORDS:
        noun = "food"
    return f"favorite {noun}" if noun else None


def query_targets(query: str) -> tuple[list[str], set[str]]:
    """(attribute families the query asks about, lower-case names it mentions)."""
    ws = [w.lower() for w in textnorm.words(query)]
    fams = []
    for w in ws:
        fam = _TRIGGER.get(w) or _TRIGGER.get(textnorm.stem(w))
        if fam and fam not in fams:
            fams.append(fam)
    low = query.lower()
    m = re.search(
        r"\bwhat (?:kind of |type of )?([a-z]+) does .{1,40} (?:like|love|enjoy|prefer)(?: the)? (?:best|most)\b", low)
    fam = favorite_attribute(f"favourite {m.group(1)}") if m else favorite_attribute(low) if "favo" in low else None
    if fam:
        fams = [f for f in fams if f != "favorite"]
        if fam not in fams:
            fams.insert(0, fam)
    if re.search(r"\bwhere\b.*\b(live|from|based|stay)", query, re.I) and "residence" not in fams:
        fams.append("residence")
    names = {w.lower().removesuffix("'s").removesuffix("’s") for w in textnorm.words(query) if w[:1].isupper()}
    names -= textnorm.STOPWORDS | textnorm.QUESTION_WORDS
    return fams, names
