"""The time expressions', the salience's and the fingerprints' patterns are tried only where a match can begin
(hippo.text.anchors): the places read from each pattern's parse hold every match's start, the matches found from them
are finditer's, and the time readings of a generated chat are those of every pattern run over every message (the code
before the places were read). Salience and the fingerprints are compared with their plain computations in
test_write_fastpaths."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo.text import anchors, fingerprints, salience, timeexpr
from tests.word_shapes import mangle

_ALL = {id(rx): (name, rx) for name, rx in timeexpr._PATTERNS + timeexpr._QUERY_PATTERNS}
_READ = [(name, rx) for name, rx in _ALL.values() if anchors.starts(rx) is not None]


def _spans(ms) -> list[tuple]:
    return [(m.span(), m.groups()) for m in ms]


def test_most_patterns_have_known_starts():
    # what makes the scan cheap: only the patterns of other languages' words and a few others are left to finditer
    left = sorted({name for name, rx in _ALL.values() if anchors.starts(rx) is None})
    assert len(_READ) >= 0.85 * len(_ALL), left


def test_starts_worked_out_by_hand():
    assert anchors.starts(re.compile(r"\b(?:next|this) (?:week|month)\b", re.I)) == (("nex", "thi"), 0)
    assert anchors.starts(re.compile(r"\b(\d{4})-(\d{2})", re.I)) == ((), 1)  # the first digit of a number
    assert anchors.starts(re.compile(r"(?<!\d)(\d{1,2}) days", re.I)) == ((), 2)  # any digit
    assert anchors.starts(re.compile(r"\bin (?:19|20)\d\d", re.I)) == (("in ",), 0)
    assert anchors.starts(re.compile(r"\b(?:19|20)\d\d", re.I)) == (("19", "20"), 0)
    assert anchors.starts(re.compile(r"(?:the\s+)?end of", re.I)) == (("end", "the"), 0)
    assert anchors.starts(re.compile(r"\bQ[1-4]\b", re.I)) == (("q1", "q2", "q3", "q4"), 0)
    assert anchors.starts(re.compile(r"Kelvin", re.I)) == (("kel",), 0)  # the Kelvin sign folds onto "k"
    assert anchors.starts(re.compile(r"\b(?:next|this) (?:week|month)\b", re.I), 6) == \
        (("next m", "next w", "this m", "this w"), 0)
    assert anchors.starts(re.compile(r"(?:a|\d)\w+", re.I)) is None  # a start of one letter: nearly everywhere
    assert anchors.starts(re.compile(r".ago", re.I)) is None
    assert anchors.starts(re.compile(r"\w+ ago", re.I)) is None
    assert anchors.starts(re.compile(r"(?:day)?", re.I)) is None  # an empty match
    assert anchors.starts(re.compile(r"\u0131yi", re.I)) is None  # a cased letter that is not ASCII


@pytest.mark.parametrize("name,rx", _READ, ids=[f"{name}-{k}" for k, (name, _) in enumerate(_READ)])
def test_every_match_starts_at_a_place_and_is_finditers(name, rx, monkeypatch):
    key = anchors.starts(rx)
    monkeypatch.setattr(anchors, "LONG", 0)  # generated texts are short: the places are tried whatever the length

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.from_regex(rx))
    def check(text):
        ms = list(rx.finditer(text))
        for k in (key, anchors.starts(rx, 6) or key):  # the starts read to three characters and to six
            places = anchors.Places(text, timeexpr._folded(text))
            at = set(places.of(k))
            assert all(m.start() in at for m in ms), (name, text)
            assert _spans(anchors.matches(rx, k, places)) == _spans(ms)

    check()


# -- a generated chat: its time readings against every pattern run over every message -----------------------------

_PHRASES = [
    "2024-03-05", "on March 3 and 5", "March 3, 5 and 7", "the 3rd and 5th of March", "on the 14th", "by the 2nd",
    "3 days ago", "two weeks from now", "a week from Friday", "in 3 days", "in a couple of weeks", "early next month",
    "mid-March", "late 2023", "the end of the year", "the start of next week", "last Friday", "next tues",
    "the week of May 6", "the week of the 6th", "Q3 2023", "FY24", "H1 2025", "the 90s", "the nineties",
    "in the summer", "last winter", "Christmas", "over the holidays", "New Year's Eve", "yesterday", "yday",
    "tmrw", "tonight", "this morning", "2 weeks back", "a week on Monday", "since Tuesday", "since March",
    "the Friday after next", "the week before last", "a year and a half ago", "half a year ago", "decades ago",
    "between 2019 and 2021", "from the 3rd to the 5th", "March 3-5", "from January to March 2022", "on 3/5",
    "on 12/25/2023", "5 May 2024", "May 2024", "by Friday", "until Sunday", "this coming weekend", "next weekend",
    "the other day", "earlier this week", "later this month", "this time last year", "Monday week", "wed",
    "the day before yesterday", "the day after tomorrow", "three Mondays ago", "over the past 3 days",
    "the last couple of weeks", "the next few months", "in 2019", "back in 2015", "during 2020",
    "the turn of the century",
    "the second half of 2023", "the first week of June", "the last Friday of May", "in June", "starting April",
    "hace 3 días", "la semana pasada", "letzte Woche", "la semaine prochaine", "2024年3月5日", "昨天", "어제", "कल",
    "5 มีนาคม 2567", "Feb 29", "Sept. 4th", "4th of July", "Thanksgiving", "Black Friday", "the fall",
]
_FILLER = ["I", "we", "went", "will go", "the meeting", "my sister", "moved", "the report", "was due", "and", "then",
           "x = 42", "port 8080", "v2.3.1", "id 9f3a7c21", "at 10:30", "about", "on", "in", "the", "this", "that",
           "beginning", "end", "start", "from", "for", "since", "last", "next", "month", "week", "year", "day"]
# the words of the salience patterns (hippo.text.salience), tried the same way
_SALIENT = ["I will", "I'll", "let's", "remind me", "deadline", "must", "actually", "I meant", "not this but that",
            "sorry, it's", "no, it", "update:", "my wife", "kids", "friend", "boss", "love", "sad", "!", "proud",
            "2024",
            "3/4", "12-05", "march", "Friday", "yesterday", "next week", "mistake", "instead", "$1,200.50", "3.5k",
            "40%", "v1.2", "x42", "my dog is called Rex", "her car was named Blue", "their son is Tom"]

_HOW = [0, 0, 0, 0, 1, 2, 3, 4]


def _chat(seed: int, n: int, phrases: list[str] = _PHRASES) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rnd.randint(1, 40)):
            word = rnd.choice(phrases if rnd.random() < 0.3 else _FILLER)
            parts.append(mangle(word, rnd.choice(_HOW)))
            parts.append(rnd.choice([" ", " ", " ", ", ", ". ", "\n", "-", "\u2019s "]))
        out.append("".join(parts))
    return out


def test_a_generated_chats_readings_equal_every_pattern_run_everywhere(monkeypatch):
    texts = _chat(7, 600)
    nows = [random.Random(k).uniform(1.0e9, 1.9e9) for k in range(len(texts))]
    got = [timeexpr.find(t, now) for t, now in zip(texts, nows)]
    asked = [timeexpr.analyze_query(t, now) for t, now in zip(texts[:200], nows)]
    assert sum(map(bool, got)) > 400  # the chat holds times to read
    # reference: no place read (finditer), every word list held, the month search passing
    monkeypatch.setattr(timeexpr, "_STARTS", {})
    monkeypatch.setattr(anchors, "starts", lambda rx: None)
    monkeypatch.setattr(timeexpr, "_NEEDS", {name: ("",) for name in timeexpr._NEEDS})
    monkeypatch.setattr(timeexpr, "_MONTH_WORD", re.compile(""))
    assert [timeexpr.find(t, now) for t, now in zip(texts, nows)] == got
    assert [timeexpr.analyze_query(t, now) for t, now in zip(texts[:200], nows)] == asked


def test_places_are_tried_even_where_they_are_dense(monkeypatch):
    # the shortcut to finditer where places are nearly everywhere must not hide a wrong place
    monkeypatch.setattr(anchors, "_DENSE", 10 ** 9)
    monkeypatch.setattr(anchors, "LONG", 0)
    texts = _chat(11, 200) + _chat(12, 100, _SALIENT)
    for name, rx, key in [(name, rx, anchors.starts(rx)) for name, rx in _READ] + \
            [(f"salience-{k}", rx, key) for k, (rx, key) in enumerate(salience._STARTS.items())] + \
            [(f"fingerprints-{k}", rx, key) for k, (rx, key) in enumerate(fingerprints._STARTS.items())]:
        assert key is not None, name
        for text in texts:
            places = anchors.Places(text, timeexpr._folded(text))
            assert _spans(anchors.matches(rx, key, places)) == _spans(rx.finditer(text)), (name, text)
            assert anchors.search(rx, key, places) == (rx.search(text) is not None), (name, text)
