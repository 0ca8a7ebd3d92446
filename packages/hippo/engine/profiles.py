"""Speaker profiles (seed 002 §4.1 stage 5, the L0 speaker engram).

Stage 5 keeps, per speaker, an attribute map of preferences and identity built offline from the speaker's own
first-person statements ("I'm a nurse", "I live in Lyon", "my favourite colour is green", "I don't like jazz"), and
a character-n-gram style vector: hashed char-(3,4,5)-grams, L2-normalized per message and mean-pooled over the
speaker's messages. At query time (seed 002 §4.1 stage 9, the ``f_L0`` factor of Eq. 4) the engram is a prior:
when a question asks about a person's preferences or identity, candidate messages in which that person states the
asked attribute get a bounded multiplicative boost, so the prior informs but does not dominate lexical ranking.

Extraction is a small set of anchored patterns, chosen for precision: a missed statement costs only the boost, a
wrong one would push an unrelated message up. Every value keeps its provenance (message id, timestamp) and all values
are kept over time in time order, newest last; the newest is the current one. Memory per speaker is bounded: at
most ``max_attributes`` attributes with at most ``max_values`` values each, and one fixed-size style sum.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from hippo.base.errors import InvalidInput, NotFound
from hippo.text import textnorm

__all__ = ["ProfileIndex", "Statement", "extract", "style_vector", "check_speaker"]

# -- first-person statement patterns ----------------------------------------------------------------------------

_ADV = r"(?:(?:really|absolutely|just|also|totally|truly|especially|always|still|definitely|genuinely|kinda|" \
       r"kind of|sort of|do|actually|honestly|generally|personally|mostly|mainly|now|simply|so)\s+)"
_I_AM = r"\bI(?:'m|\s+am)\s+"
_NEG = r"(?:don't|do\s+not|dont|never|can't\s+say\s+I|won't\s+ever)\s+"

# Occupations recognised after "I'm a ..." (otherwise the value is an identity statement).
_OCCUPATIONS = frozenset(
    """accountant actor actress architect artist athlete attorney baker banker barista bartender biologist
    builder butcher carpenter cashier ceo chef chemist cleaner clerk coach consultant cook counselor counsellor
    dancer dentist designer developer doctor driver economist editor electrician engineer entrepreneur farmer
    firefighter founder gardener guard hairdresser historian illustrator instructor intern janitor journalist
    judge lawyer lecturer librarian manager mechanic midwife musician nurse nanny officer painter paramedic
    pharmacist photographer physician physicist physiotherapist pianist pilot planner plumber poet policeman
    policewoman politician producer professor programmer psychologist psychiatrist realtor receptionist
    researcher salesman saleswoman scientist secretary singer soldier student surgeon tailor teacher technician
    therapist trainer translator tutor veterinarian vet volunteer waiter waitress writer author youtuber
    streamer blogger influencer analyst administrator marketer recruiter mentor player gamer""".split()
)

# Words that start a value which is not an attribute ("I love that you came", "I'm a bit tired").
_BAD_FIRST = frozenset(
    """it it's its that this these those you you're your yours them they their he she him her his hers how what
    when where why who which if so too to_see seeing hearing knowing watching_you being_able having_you everything
    all bit little lot lots part fan huge big sure here there one ones anything something nothing any some
    such more much way the_way us our we myself me i every is are was were has had be been can will would could
    does did do makes made to to_hear to_see to_say to_think to_know to_read to_talk to_chat to_help_you""".split()
)

_BOUNDARY = re.compile(
    r"\s*(?:[,;:()\[\]—–!?]|(?:^|\s)-(?:\s|$)|\.\s|\.$|\b(?:but|because|since|so|when|while|although|though|which|whereas|"
    r"cause|coz|as|if|until|unless|and\s+I|and\s+i'm|and\s+it|and\s+that|and\s+they|"
    r"and\s+we|and\s+my|and\s+have|and\s+has|and\s+am|and\s+was|that\s+I|that\s+you|lately|these\s+days|"
    r"nowadays|right\s+now|now|too|anymore|recently|ago|earlier|soon|(?:last|this|next)\s+(?:week|month|year|night|weekend|summer|winter|spring|fall|autumn|time)|again|already|today|yesterday|tomorrow|tonight|lol|haha)\b)",
    re.I,
)
_NAME_WORDS = re.compile(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
_REFERENTIAL = re.compile(r"\b(?:it|them|this|that|these|those|him|her|you|your)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")
_LEAD_ARTICLE = re.compile(r"^(?:a|an)\s+", re.I)
_INTENSIFIERS = re.compile(r"^(?:(?:big|huge|massive|total|real|true|great|die[- ]hard|avid|proud|"
                           r"self[- ]taught|professional|full[- ]time|part[- ]time|former)\s+)+", re.I)
_BRIT = {"colour": "color", "favourite": "favorite", "flavour": "flavor", "neighbourhood": "neighborhood",
         "jewellery": "jewelry", "theatre": "theater"}
_PETS = r"(?:dog|puppy|cat|kitten|pup|parrot|bird|hamster|rabbit|bunny|fish|turtle|horse|pony|snake|lizard|" \
        r"guinea\s+pig|ferret|pet)"


def _clean_value(raw: str, *, max_words: int = 6) -> str | None:
    """The value phrase at the start of ``raw``: cut at the first clause boundary, at most ``max_words`` words."""
    cut = _BOUNDARY.search(raw)
    value = raw[: cut.start()] if cut else raw
    value = value.strip(" \t\"'“”‘’.*")
    value = re.sub(r"\s+", " ", value)
    if not value:
        return None
    words = value.split()
    if len(words) > max_words:
        return None
    first = words[0].lower().replace("’", "'")
    two = "_".join(w.lower() for w in words[:2])
    if first in _BAD_FIRST or two in _BAD_FIRST:
        return None
    if not any(c.isalnum() for c in value):
        return None
    return value


@dataclass(frozen=True)
class Statement:
    """One attribute stated by the speaker of a message: ``attribute`` = ``value`` (from ``sentence``)."""

    attribute: str
    value: str
    sentence: str


def _attr_key(noun: str) -> str:
    words = [_BRIT.get(w, w) for w in re.findall(r"[a-z0-9]+", noun.lower())]
    words = [w for w in words if w not in {"kind", "type", "sort", "genre", "of", "the", "all", "time", "absolute"}]
    return "_".join(words)


# Each rule: (compiled pattern, attribute name or callable(match) -> (attribute, value raw)). Order matters: the
# first rule that yields a value for a span wins; negative rules precede positive ones.
def _rules() -> list[tuple[re.Pattern, Any]]:
    f = re.I
    r: list[tuple[re.Pattern, Any]] = []

    def add(pattern: str, attr: Any) -> None:
        r.append((re.compile(pattern, f), attr))

    # dislikes
    add(r"\bI\s+" + _ADV + r"{0,2}" + _NEG + _ADV + r"{0,2}(?:like|enjoy|love|care\s+for)\s+(?P<v>.+)", "dislikes")
    add(r"\bI\s+" + _ADV + r"{0,2}(?:hate|dislike|detest|despise|can't\s+stand|cannot\s+stand|can't\s+bear)\s+"
        r"(?P<v>.+)", "dislikes")
    add(_I_AM + r"not\s+(?:really\s+|a\s+|much\s+of\s+a\s+|)+(?:big\s+|huge\s+)?(?:fan\s+of|into)\s+(?P<v>.+)",
        "dislikes")
    # preferences
    add(r"\bI\s+" + _ADV + r"{0,2}prefer\s+(?:to\s+)?(?P<v>.+?)(?=\s+(?:over|to|rather\s+than|instead\s+of|than)\s|$|[,.;!?])",
        "prefers")
    add(r"\bI(?:'d|\s+would)\s+rather\s+(?P<v>.+?)(?=\s+(?:than|instead\s+of)\s|$|[,.;!?])", "prefers")
    # favourites: "my favourite colour is green", "my all-time favorite band is ..."
    add(r"\bmy\s+(?:absolute\s+|all[- ]time\s+|current\s+|new\s+)?favou?rite\s+(?P<n>(?:[a-z]+\s+){0,2}?[a-z]+)"
        r"\s+(?:is|are|was|has\s+to\s+be|would\s+be|has\s+always\s+been)\s+(?:definitely\s+|probably\s+)?(?P<v>.+)",
        "favorite")
    add(r"\bmy\s+(?:absolute\s+|all[- ]time\s+)?favou?rite\s+(?:one\s+|thing\s+)?(?:is|was)\s+(?P<v>.+)", "favorite")
    add(r"\b(?P<v>[A-Z][^,.;!?]{1,40}?)\s+(?:is|are)\s+my\s+(?:absolute\s+|all[- ]time\s+)?favou?rite\s+"
        r"(?P<n>(?:[a-z]+\s+){0,2}?[a-z]+)\b", "favorite")
    # names: "my dog's name is Rex", "my cat is called Tom", "I have a dog named Rex", "my name is Ann"
    add(r"\bmy\s+(?P<n>[a-z]+(?:\s+[a-z]+)?)'s\s+name\s+is\s+(?P<v>.+)", "name_of")
    add(r"\bmy\s+(?P<n>" + _PETS + r"|son|daughter|brother|sister|wife|husband|partner|girlfriend|boyfriend|baby|"
        r"kid|car|boat|band|business|company|shop|studio|blog|channel|podcast)\s+(?:is\s+)?(?:called|named)\s+"
        r"(?P<v>.+)", "name_of")
    add(r"\bI\s+(?:have|got|adopted|own)\s+(?:a|an)\s+(?:[a-z]+\s+)?(?P<n>" + _PETS + r")\s+(?:called|named)\s+"
        r"(?P<v>.+)", "name_of")
    add(r"\bmy\s+name\s+is\s+(?P<v>.+)", "name")
    # occupation and employer
    add(r"\bI(?:'m|\s+am)?\s+(?:currently\s+|now\s+)?(?:work|working)\s+as\s+(?:a|an)?\s*(?P<v>.+)", "occupation")
    add(r"\bmy\s+(?:current\s+|new\s+|day\s+)?job\s+is\s+(?:being\s+)?(?:a|an)?\s*(?P<v>.+)", "occupation")
    add(_I_AM + r"(?:currently\s+|now\s+)?(?:employed|working)\s+(?:at|for|with)\s+(?P<v>.+)", "employer")
    add(r"\bI\s+(?:currently\s+|now\s+|still\s+)?work\s+(?:at|for)\s+(?P<v>.+)", "employer")
    # residence and origin
    add(r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+to\s+(?P<v>.+)",
        "residence")
    add(r"\bI(?:'m|\s+am)?\s+(?:currently\s+|now\s+|still\s+)?(?:live|living|based|settled)\s+in\s+(?P<v>.+)",
        "residence")
    add(_I_AM + r"(?:originally\s+)?from\s+(?P<v>.+)", "origin")
    add(r"\bI\s+(?:originally\s+)?(?:come|came)\s+from\s+(?P<v>.+)", "origin")
    add(r"\bI\s+grew\s+up\s+in\s+(?P<v>.+)", "origin")
    add(r"\bI\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<v>.+)", "born_in")
    # age, allergies, family, study, instruments and sports
    add(_I_AM + r"(?P<v>\d{1,3})\s+(?:years?\s+old|yrs?\s+old|y/?o)\b", "age")
    add(_I_AM + r"(?:very\s+|really\s+|super\s+|severely\s+|a\s+bit\s+)?allergic\s+to\s+(?P<v>.+)", "allergy")
    add(r"\bI\s+have\s+(?P<v>(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
        r"(?:kids|children|sons|daughters|son|daughter|child|kid|brothers|sisters|siblings|dogs|cats|pets))\b",
        "family")
    add(_I_AM + r"(?:happily\s+)?married\s+to\s+(?P<v>.+)", "partner")
    add(r"\bI(?:'m|\s+am)?\s+(?:currently\s+)?(?:study|studying|majoring\s+in|major\s+in)\s+(?P<v>.+)", "studies")
    add(_I_AM + r"(?:a\s+)?(?:student|freshman|sophomore|junior|senior)\s+at\s+(?P<v>.+)", "school")
    add(r"\bI\s+" + _ADV + r"{0,2}play\s+(?P<v>the\s+[a-z]+|[a-z]+(?:ball|tennis|golf|hockey|chess|soccer|"
        r"rugby|cricket|guitar|piano|drums|violin|cello|bass|saxophone|flute|ukulele))\b", "plays")
    # likes: "I love hiking", "I'm a big fan of pottery", "I'm really into jazz", "I'm passionate about art"
    add(_I_AM + r"(?:a\s+|such\s+a\s+)?(?:really\s+|so\s+)?(?:big|huge|massive|total|real|true|great|die[- ]hard|"
        r"avid)?\s*fan\s+of\s+(?P<v>.+)", "likes")
    add(_I_AM + r"(?:a\s+)?(?:big|huge|massive|total|real|true|great|die[- ]hard|avid)\s+(?P<v>[a-z]+(?:\s+[a-z]+)?)"
        r"\s+(?:fan|lover|enthusiast|buff|nerd|geek)\b", "likes")
    add(_I_AM + _ADV + r"{0,2}(?:into|passionate\s+about|obsessed\s+with|crazy\s+about|hooked\s+on)\s+(?P<v>.+)",
        "likes")
    add(r"\bI\s+" + _ADV + r"{0,3}(?:love|like|enjoy|adore)\s+(?P<v>.+)", "likes")
    add(r"\bI(?:'ve|\s+have)\s+(?:always|long|been)\s+(?:loved|liked|enjoyed|adored|into)\s+(?P<v>.+)", "likes")
    add(r"\bmy\s+(?:biggest\s+|real\s+|true\s+|greatest\s+)?passion\s+is\s+(?P<v>.+)", "likes")
    # identity: "I'm a nurse" (an occupation), "I am a single parent", "I'm an introvert"
    add(_I_AM + r"(?:a|an)\s+(?P<v>.+)", "identity")
    return r


_RULES = _rules()


# Statements are conversational: only the head of a very long message and of a run-on sentence is read, which keeps
# extraction linear in the capped size whatever the input (a 10 MB paste costs the same as a 20 kB one).
MAX_EXTRACT_CHARS = 20_000
MAX_SENTENCE_CHARS = 1_000
# The style of a speaker is estimated well from a few thousand characters per message.
MAX_STYLE_CHARS = 20_000


def _sentences(text: str) -> list[str]:
    text = text[:MAX_EXTRACT_CHARS].replace("’", "'").replace("‘", "'")
    return [s.strip()[:MAX_SENTENCE_CHARS] for s in _SENTENCE.split(text) if s and s.strip()]


def extract(text: str) -> list[Statement]:
    """First-person attribute statements in ``text``, in order of appearance (deterministic, offline).

    A statement read by an earlier rule is not read again by a later rule from the same start ("I'm a big fan of
    jazz" is a like of "jazz", not the identity "big fan of jazz").
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    out: list[Statement] = []
    seen: set[tuple[str, str]] = set()
    for sent in _sentences(text):
        claimed: set[int] = set()  # start offsets already read as a statement
        for pattern, attr in _RULES:
            pos = 0
            while pos < len(sent):
                m = pattern.search(sent, pos)
                if m is None:
                    break
                # values run to the end of the sentence; search again inside the value for a second statement
                pos = m.start("v") if m.start("v") > m.start() else m.end()
                if m.start() in claimed:
                    continue
                st = _statement(attr, m, sent)
                if st is None:
                    continue
                claimed.add(m.start())
                key = (st.attribute, st.value.lower())
                if key not in seen:
                    seen.add(key)
                    out.append(st)
    return out


def _statement(attr: str, m: re.Match, sent: str) -> Statement | None:
    raw = m.group("v")
    if attr == "age":
        return Statement("age", raw, sent)
    if attr == "family":
        return Statement("family", raw.lower(), sent)
    if attr in ("name_of", "name"):
        cap = _NAME_WORDS.match(raw.strip(" \"'“”‘’"))
        value = cap.group(0) if cap else None
        if value is None or value.lower() in _BAD_FIRST or len(value.split()) > 3:
            return None
        if attr == "name":
            return Statement("name", value, sent)
        noun = _attr_key(m.group("n"))
        return Statement(f"{noun}_name", value, sent) if noun else None
    if attr == "favorite":
        value = _clean_value(raw)
        if value is None:
            return None
        noun = _attr_key(m.groupdict().get("n") or "")
        if not noun or noun in {"one", "thing", "part", "is", "was"} or noun.endswith("_one"):
            return Statement("favorite", value, sent)
        return Statement(f"favorite_{noun}", value, sent)
    if attr == "born_in":
        value = _clean_value(raw, max_words=4)
        if value is None:
            return None
        return Statement("birth_year" if re.fullmatch(r"\d{4}", value) else "origin", value, sent)
    if attr == "plays":
        value = re.sub(r"^the\s+", "", raw.strip(), flags=re.I)
        return Statement("plays", value, sent) if value.lower() not in _BAD_FIRST else None
    if attr == "identity":
        value = _clean_value(raw, max_words=4)
        if value is None:
            return None
        value = _INTENSIFIERS.sub("", value)
        words = value.split()
        if not words or words[0].lower() in _BAD_FIRST or len(words) > 3:
            return None
        # a trailing preposition means the noun phrase continues into a clause ("a part of", "a mom to")
        if words[-1].lower() in {"of", "to", "for", "in", "on", "at", "with", "about", "from", "by"}:
            return None
        if words[-1].lower() in _OCCUPATIONS:
            return Statement("occupation", value, sent)
        return Statement("identity", value, sent)
    value = _clean_value(raw)
    if value is None:
        return None
    if attr in ("occupation",):
        value = _LEAD_ARTICLE.sub("", value)
    if attr in ("likes", "dislikes", "prefers"):
        value = re.sub(r"^to\s+", "", value, flags=re.I)
        if not value or value.split()[0].lower() in _BAD_FIRST:
            return None
        if _REFERENTIAL.search(value):
            return None  # "having them around", "the way it looks": the object is elsewhere in the dialogue
    return Statement(attr, value, sent)


# -- style vectors ----------------------------------------------------------------------------------------------

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_S63 = np.uint64(63)


def _style_counts(text: str, dim: int, ngrams: tuple[int, int]) -> np.ndarray:
    data = (" " + text[:MAX_STYLE_CHARS] + " ").encode("utf-8", "surrogatepass")
    b = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    out = np.zeros(dim, dtype=np.float64)
    for n in range(ngrams[0], ngrams[1] + 1):
        m = b.size - n + 1
        if m <= 0:
            continue
        h = np.full(m, np.uint64(n), dtype=np.uint64)
        for j in range(n):
            h = h * np.uint64(0x100000001B3) + b[j : j + m]  # FNV-style polynomial; wraps mod 2**64
        # murmur3 fmix64: spreads the polynomial hash over all bits before bucketing
        h ^= h >> _S33
        h *= _M1
        h ^= h >> _S33
        h *= _M2
        h ^= h >> _S33
        bucket = (h % np.uint64(dim)).astype(np.int64)
        sign = 1.0 - 2.0 * (h >> _S63).astype(np.float64)  # signed feature hashing: collisions cancel on average
        out += np.bincount(bucket, weights=sign, minlength=dim)
    return out


def style_vector(text: str, *, dim: int = 512, ngrams: tuple[int, int] = (3, 5)) -> np.ndarray | None:
    """The L2-normalized hashed char-n-gram vector of one text (float32), or ``None`` if it has no n-gram.

    Seed 002 §4.1 stage 5: hashed char-(3,4,5)-grams, L2-normalized. Case and punctuation are kept: they are
    style. Only the first ``MAX_STYLE_CHARS`` characters are read. The hash is a fixed function of the UTF-8 bytes, so vectors are identical across processes.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    v = _style_counts(text, dim, ngrams)
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        return None
    return (v / norm).astype(np.float32)


# -- query intent -----------------------------------------------------------------------------------------------

# question cue (stem) -> attributes it asks about
_INTENT: dict[str, tuple[str, ...]] = {}
for _cues, _attrs in (
    ("like love enjoy fan into passion passionate hobby hobbies interest interested pastime fond prefer preference "
     "favorite favourite", ("likes", "prefers", "favorite*", "plays")),
    ("dislike hate avoid detest", ("dislikes",)),
    ("prefer preference rather", ("prefers",)),
    ("favorite favourite", ("favorite*",)),
    ("job occupation profession career employ employer living company boss", ("occupation", "employer",
                                                                               "identity")),
    ("live reside resident residence hometown address", ("residence", "origin")),
    ("from origin originally grew born nationality heritage native hometown", ("origin", "born_in", "birth_year")),
    ("identity identify gender orientation religion", ("identity", "occupation")),
    ("name named", ("*_name", "name")),
    ("age old", ("age", "birth_year")),
    ("allergic allergy allergies", ("allergy",)),
    ("major degree", ("studies", "school")),
    ("instrument", ("plays", "likes")),
    ("married spouse", ("partner", "*_name")),
):
    for _c in _cues.split():
        _INTENT[textnorm.stem(_c)] = tuple(dict.fromkeys(_INTENT.get(textnorm.stem(_c), ()) + _attrs))

# Patterns of identity/preference questions that name no cue above ("What kind of music does Tim ...?").
_EVENT_Q = re.compile(r"^\s*(?:when\b|how\s+long\b|(?:on\s+)?(?:what|which)\s+(?:day|date|year|month|week|time)\b|"
                      r"after\s+how\s+many\b|how\s+many\s+(?:days|weeks|months|years|times)\b)", re.I)
_FAMILY_Q = re.compile(r"\bhow\s+many\s+(?:kids|children|sons|daughters|siblings|brothers|sisters|pets)\b", re.I)
_WHAT_IS_X = re.compile(r"\bwhat\s+(?:is|was|are)\s+(?P<who>[\w' -]+?)'s\s+(?P<n>[a-z]+(?:\s+[a-z]+)?)\s*\??$", re.I)
_PROFILE_WORDS = frozenset(_INTENT) | {textnorm.stem(w) for w in ("personality", "describe", "trait", "type",
                                                                     "pet", "dog", "cat")}
_ACTION_VERBS = frozenset(textnorm.stem(w) for w in (
    "go", "went", "visit", "attend", "buy", "bought", "make", "made", "do", "did", "happen", "see", "saw", "meet",
    "start", "take", "give", "get", "receive", "paint", "read", "research", "plan", "decide"))
_GENERIC_TOPIC = frozenset(textnorm.stem(w) for w in (
    "kind", "type", "sort", "genre", "thing", "activity", "activities", "something", "stuff", "person", "does", "do"))


_S = textnorm.stem
_NOT_LIKE_BEFORE = frozenset(_S(w) for w in ("look", "looks", "feel", "feels", "sound", "sounds", "seem", "seems",
                                               "would", "i'd", "be", "just", "is", "was"))


def _is_cue(stems: list[str], k: int) -> bool:
    """Whether ``stems[k]`` is a trait cue where it stands ("where is she from?" but not "a gift from her")."""
    s = stems[k]
    prev = stems[k - 1] if k else ""
    if s == _S("from"):
        return k == len(stems) - 1 and _S("where") in stems
    if s == _S("old"):
        return prev == _S("how")
    if s == _S("like"):
        return prev not in _NOT_LIKE_BEFORE
    return True


def _attr_matches(attr: str, wanted: tuple[str, ...]) -> bool:
    for w in wanted:
        if w == attr or (w.endswith("*") and attr.startswith(w[:-1])) or (w.startswith("*") and attr.endswith(w[1:])):
            return True
    return False


@dataclass
class _Entry:
    value: str
    message_id: int
    timestamp: float | None
    key: tuple[float, int]  # (effective time, arrival number): the time order of values
    norm: str               # value folded for equality


class _Speaker:
    __slots__ = ("n_messages", "attributes", "style_sum", "n_style")

    def __init__(self, dim: int) -> None:
        self.n_messages = 0
        self.attributes: dict[str, list[_Entry]] = {}
        self.style_sum = np.zeros(dim, dtype=np.float64)
        self.n_style = 0


def _fold(value: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", value.lower()))


class ProfileIndex:
    """Per-speaker attribute maps and style vectors, built incrementally from a message stream.

    ``append(ids, speakers, texts, timestamps)`` consumes messages in arrival order; building is deterministic
    (the same stream gives the same index). Values of an attribute are kept in time order (by timestamp, and by
    arrival for equal or missing timestamps: a message without a timestamp counts as said at the latest time
    seen so far); a value equal to the one just before it in time is a repetition and is not stored again. Per
    speaker at most ``max_attributes`` attributes (later new attributes are ignored) and ``max_values`` values per
    attribute (the oldest is dropped) are kept, so memory is bounded whatever the length of the stream.
    """

    def __init__(self, *, dim: int = 512, ngrams: tuple[int, int] = (3, 5), max_values: int = 32,
                 max_attributes: int = 128, max_boost: float = 0.3) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or not 16 <= dim <= 65536:
            raise InvalidInput(f"dim must be an int in [16, 65536], got {dim!r}")
        if (not isinstance(ngrams, tuple) or len(ngrams) != 2 or not all(isinstance(n, int) for n in ngrams)
                or not 1 <= ngrams[0] <= ngrams[1] <= 8):
            raise InvalidInput(f"ngrams must be a (low, high) tuple of ints with 1 <= low <= high <= 8, got {ngrams!r}")
        for name, v in (("max_values", max_values), ("max_attributes", max_attributes)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InvalidInput(f"{name} must be a positive int, got {v!r}")
        if isinstance(max_boost, bool) or not isinstance(max_boost, (int, float)) or not 0 <= max_boost <= 10:
            raise InvalidInput(f"max_boost must be a number in [0, 10], got {max_boost!r}")
        self.dim = dim
        self.ngrams = ngrams
        self.max_values = max_values
        self.max_attributes = max_attributes
        self.max_boost = float(max_boost)
        self._speakers: dict[str, _Speaker] = {}
        self._arrivals = 0
        self._latest = -math.inf
        # message id -> [(speaker, attribute, folded value, stems of value and sentence)] for the boost
        self._by_message: dict[int, list[tuple[str, str, str, frozenset[str]]]] = {}
        self._name_re: re.Pattern | None = None
        self._alias: dict[str, str] = {}

    # -- building ---------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._speakers)

    def append(self, ids: Sequence[int], speakers: Sequence[str | None], texts: Sequence[str],
               timestamps: Sequence[float | None] | None = None) -> None:
        """Consume messages in arrival order. Messages without a speaker (``None``) are skipped."""
        ids = self._check_seq(ids, "ids")
        speakers = self._check_seq(speakers, "speakers")
        texts = self._check_seq(texts, "texts")
        if timestamps is None:
            timestamps = [None] * len(ids)
        timestamps = self._check_seq(timestamps, "timestamps")
        if not len(ids) == len(speakers) == len(texts) == len(timestamps):
            raise InvalidInput(f"ids, speakers, texts and timestamps must have one length, got {len(ids)}, "
                               f"{len(speakers)}, {len(texts)}, {len(timestamps)}")
        clean = []
        for k in range(len(ids)):
            i, sp, text, ts = ids[k], speakers[k], texts[k], timestamps[k]
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise InvalidInput(f"ids[{k}] must be an int, got {type(i).__name__}")
            if sp is not None and not isinstance(sp, str):
                raise InvalidInput(f"speakers[{k}] must be a str or None, got {type(sp).__name__}")
            if not isinstance(text, str):
                raise InvalidInput(f"texts[{k}] must be a str, got {type(text).__name__}")
            if ts is not None:
                if isinstance(ts, bool) or not isinstance(ts, (int, float, np.floating, np.integer)):
                    raise InvalidInput(f"timestamps[{k}] must be a number or None, got {type(ts).__name__}")
                ts = float(ts)
                if math.isnan(ts):
                    ts = None
                elif math.isinf(ts):
                    raise InvalidInput(f"timestamps[{k}] must be finite, got {ts}")
            clean.append((int(i), sp, text, ts))
        for i, sp, text, ts in clean:
            self._consume(i, sp, text, ts)

    @staticmethod
    def _check_seq(values: Any, name: str) -> Sequence:
        if isinstance(values, np.ndarray):
            return values.tolist()
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise InvalidInput(f"{name} must be a sequence, got {type(values).__name__}")
        return values

    def _consume(self, message_id: int, speaker: str | None, text: str, ts: float | None) -> None:
        self._arrivals += 1
        if ts is not None:
            self._latest = max(self._latest, ts)
        if speaker is None:
            return
        sp = self._speakers.get(speaker)
        if sp is None:
            sp = self._speakers[speaker] = _Speaker(self.dim)
            self._name_re = None
        sp.n_messages += 1
        v = style_vector(text, dim=self.dim, ngrams=self.ngrams)
        if v is not None:
            sp.style_sum += v
            sp.n_style += 1
        key = (ts if ts is not None else self._latest, self._arrivals)
        for st in extract(text):
            st = self._unaddress(st)
            if st is None:
                continue
            self._add_value(speaker, sp, st, message_id, ts, key)

    def _unaddress(self, st: Statement) -> Statement | None:
        """Drop a trailing vocative ("I love the thought, Nate" read as "the thought Nate")."""
        words = st.value.split()
        if len(words) > 1 and words[-1] in self._speakers:
            return Statement(st.attribute, " ".join(words[:-1]), st.sentence)
        if st.value in self._speakers and st.attribute not in ("name", "partner") and not st.attribute.endswith("_name"):
            return None
        return st

    def _add_value(self, speaker: str, sp: _Speaker, st: Statement, message_id: int, ts: float | None,
                   key: tuple[float, int]) -> None:
        values = sp.attributes.get(st.attribute)
        if values is None:
            if len(sp.attributes) >= self.max_attributes:
                return
            values = sp.attributes[st.attribute] = []
        norm = _fold(st.value)
        pos = bisect.bisect_right([e.key for e in values], key)
        if pos > 0 and values[pos - 1].norm == norm:
            return  # a repetition of the value in force at that time
        values.insert(pos, _Entry(st.value, message_id, ts, key, norm))
        if pos < len(values) - 1 and values[pos + 1].norm == norm:
            self._drop(speaker, st.attribute, values.pop(pos + 1))  # the later copy now repeats this one
        while len(values) > self.max_values:
            self._drop(speaker, st.attribute, values.pop(0))
        if any(e.message_id == message_id and e.norm == norm for e in values):
            stems = frozenset(textnorm.terms(st.value)) | frozenset(textnorm.terms(st.sentence))
            self._by_message.setdefault(message_id, []).append((speaker, st.attribute, norm, stems))

    def _drop(self, speaker: str, attribute: str, entry: _Entry) -> None:
        recs = self._by_message.get(entry.message_id)
        if not recs:
            return
        recs[:] = [r for r in recs if not (r[0] == speaker and r[1] == attribute and r[2] == entry.norm)]
        if not recs:
            del self._by_message[entry.message_id]

    # -- reading ----------------------------------------------------------------------------------------------
    def speakers(self) -> list[str]:
        """Speakers with at least one message, in order of first appearance."""
        return list(self._speakers)

    def _get(self, speaker: Any) -> _Speaker:
        if not isinstance(speaker, str) or not speaker.strip():
            raise InvalidInput(f"speaker must be a non-empty str, got {speaker!r}")
        sp = self._speakers.get(speaker)
        if sp is None:
            raise NotFound(f"speaker {speaker!r} has no messages")
        return sp

    def attributes(self, speaker: str) -> dict[str, list[dict[str, Any]]]:
        """``{attribute: [{"value", "message_id", "timestamp"}, ...]}``, each list oldest first."""
        sp = self._get(speaker)
        return {a: [{"value": e.value, "message_id": e.message_id, "timestamp": e.timestamp} for e in vals]
                for a, vals in sorted(sp.attributes.items())}

    def current(self, speaker: str) -> dict[str, str]:
        """The value in force now (the newest) of every attribute of ``speaker``."""
        sp = self._get(speaker)
        return {a: vals[-1].value for a, vals in sorted(sp.attributes.items()) if vals}

    def style(self, speaker: str) -> np.ndarray | None:
        """The speaker's style vector: mean of per-message vectors, L2-normalized (float32); ``None`` if empty."""
        sp = self._get(speaker)
        norm = float(np.linalg.norm(sp.style_sum))
        if sp.n_style == 0 or norm == 0.0:
            return None
        return (sp.style_sum / norm).astype(np.float32)

    def style_similarity(self, speaker: str, text: str) -> float:
        """Cosine between ``text``'s style vector and ``speaker``'s (seed 002 stage 5 retrieval prior); 0 if none."""
        s = self.style(speaker)
        v = style_vector(text, dim=self.dim, ngrams=self.ngrams)
        if s is None or v is None:
            return 0.0
        return float(np.dot(s, v))

    def profile(self, speaker: str) -> dict[str, Any]:
        """The public profile record of ``speaker`` (see ``Memory.profile``)."""
        sp = self._get(speaker)
        style = self.style(speaker)
        return {
            "speaker": speaker,
            "n_messages": sp.n_messages,
            "attributes": self.attributes(speaker),
            "current": self.current(speaker),
            "style": None if style is None else style.tolist(),
        }

    # -- query-time prior (seed 002 §4.1 stage 9, f_L0) -------------------------------------------------------
    def _names(self) -> re.Pattern | None:
        if self._name_re is None:
            alts: dict[str, str] = {}
            firsts: dict[str, list[str]] = {}
            for name in self._speakers:
                n = name.strip()
                if len(n) >= 2:
                    alts[n.lower()] = name
                parts = n.split()
                if len(parts) > 1 and len(parts[0]) >= 3:
                    firsts.setdefault(parts[0].lower(), []).append(name)
            for first, names in firsts.items():
                if len(names) == 1 and first not in alts:
                    alts[first] = names[0]
            if not alts:
                return None
            self._alias = alts
            body = "|".join(re.escape(a) for a in sorted(alts, key=len, reverse=True))
            self._name_re = re.compile(r"(?<![\w])(" + body + r")(?='s\b|s'|[^\w]|$)", re.I)
        return self._name_re

    def _speaker_in(self, query: str) -> tuple[str | None, tuple[int, int] | None]:
        pat = self._names()
        if pat is None:
            return None, None
        m = pat.search(query.replace("’", "'"))
        if m is None:
            return None, None
        return self._alias[m.group(1).lower()], m.span()

    def _intent(self, query: str) -> tuple[str | None, bool, tuple[str, ...], frozenset[str]]:
        """(speaker, is profile query, attributes asked, topic stems) of ``query``."""
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a str, got {type(query).__name__}")
        q = query.replace("’", "'")
        speaker, span = self._speaker_in(q)
        rest = q if span is None else q[: span[0]] + " " + q[span[1]:]
        rest = re.sub(r"^'s\b", "", rest)
        raw = [textnorm.stem(w.lower()) for w in textnorm.words(rest)]
        stems = [s for k, s in enumerate(raw) if _is_cue(raw, k)]
        wanted: list[str] = []
        for s in stems:
            wanted.extend(_INTENT.get(s, ()))
        if _EVENT_Q.search(q):
            return speaker, False, (), frozenset()  # "When did ...", "What day ...": an event, not a trait
        m = _WHAT_IS_X.search(q)
        if m is not None and not wanted:
            noun = _attr_key(m.group("n"))
            wanted.extend((noun, f"favorite_{noun}", f"{noun}_name"))
        if _FAMILY_Q.search(q):
            wanted.append("family")
        if not wanted:
            return speaker, False, (), frozenset()
        # "What did Caroline paint?" asks about an event, not a trait, unless a trait cue is also there
        strong = any(s in _INTENT for s in stems) or m is not None or "family" in wanted
        if not strong:
            return speaker, False, (), frozenset()
        cues = set(_INTENT) | set(textnorm.QUESTION_WORDS) | _GENERIC_TOPIC
        topic = frozenset(t for t in textnorm.terms(rest) if t not in cues and t not in _ACTION_VERBS)
        return speaker, True, tuple(dict.fromkeys(wanted)), topic

    def know_speakers(self, names: Iterable[str]) -> None:
        """Register speakers by name only (no statements): enough for :meth:`query_intent`."""
        for name in names:
            self._speakers.setdefault(name, None)

    def query_intent(self, query: str) -> tuple[str | None, bool]:
        """``(speaker the query is about or None, whether it asks about preferences or identity)``.

        The speaker is the first known speaker name in the query (a full name, or a first name that only one
        speaker has); the intent comes from trait cues ("like", "favourite", "from", "job", "name"...).
        """
        speaker, is_profile, _, _ = self._intent(query)
        return speaker, is_profile

    def boost(self, query: str, row_ids: np.ndarray) -> np.ndarray:
        """Multiplicative factors in ``[1, 1 + max_boost]`` for candidate messages (``row_ids`` = message ids).

        A candidate gets more than 1 only when the query asks about a known speaker's preferences or identity and
        the candidate is a statement by that speaker of an asked attribute: ``1 + max_boost`` if the statement
        shares a content term with the query's topic (or the query names no topic), ``1 + max_boost / 2``
        otherwise. Every other candidate gets exactly 1.0 (seed 002 Eq. 4: inactive factors are the identity).
        """
        ids = np.asarray(row_ids)
        if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
            raise InvalidInput(f"row_ids must be a 1-d array of int message ids, got dtype {ids.dtype} "
                               f"and shape {ids.shape}")
        out = np.ones(ids.size, dtype=np.float64)
        speaker, is_profile, wanted, topic = self._intent(query)
        if not is_profile or speaker is None or self.max_boost == 0.0:
            return out
        for k, i in enumerate(ids.tolist()):
            best = 0.0
            for sp, attr, _norm, stems in self._by_message.get(int(i), ()):
                if sp != speaker or not _attr_matches(attr, wanted):
                    continue
                w = 1.0 if (not topic or topic & stems) else 0.5
                best = max(best, w)
            if best:
                out[k] = 1.0 + self.max_boost * best
        return out


def check_speaker(speaker: Any) -> str:
    if not isinstance(speaker, str):
        raise InvalidInput(f"speaker must be a str, got {type(speaker).__name__}")
    if not speaker.strip():
        raise InvalidInput("speaker must be a non-empty str")
    return speaker
