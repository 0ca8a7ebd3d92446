"""A time expression written with a character that case-insensitive matching takes for an ASCII letter (the dotted
and the dotless i, the long s, the Kelvin sign: "next FRİDAY" typed on a Turkish keyboard) is read as the same words
in ASCII letters: the patterns matched them, and the tables that read the words raised KeyError (in every recall of
the namespace that held such a message)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo import Memory
from hippo.text import timeexpr

NOW = datetime(2024, 6, 15, 12, tzinfo=timezone.utc).timestamp()  # a Saturday
_FOLDS = {"i": "\u0131", "I": "\u0130", "s": "\u017f", "K": "\u212a"}

PHRASES = ["see you next Friday", "since last Tuesday", "it was last Saturday", "by Wednesday", "this Thursday",
           "the first Monday of March", "early next month is busy", "two weeks from Sunday", "in six weeks",
           "this spring",
           "last winter", "in the second quarter of 2023", "Q2 of last year", "the late sixties", "a week on Tuesday",
           "on March 3rd and 5th of this year", "the Friday after next", "three Sundays ago", "mid-September",
           "this weekend is free",
           "KICKOFF IS NEXT FRIDAY", "AT THE END OF THIS MONTH"]
PHRASES = [p for p in PHRASES if any(c in p for c in _FOLDS)]


def _fold(text: str) -> str:
    return "".join(_FOLDS.get(c, c) for c in text)


def _read(refs) -> list[tuple]:
    return [(r.start, r.end, r.granularity, r.phrase, r.relative, r.yearless, r.onset_end) for r in refs]


@pytest.mark.parametrize("text", PHRASES)
def test_a_phrase_with_folded_letters_reads_as_its_ascii_letters(text):
    folded = _fold(text)
    assert _read(timeexpr.find(folded, NOW)) == _read(timeexpr.find(text, NOW))
    assert timeexpr.find(text, NOW)  # each phrase holds a time
    assert timeexpr.analyze_query(_fold("what did I do " + text + "?"), NOW) == \
        timeexpr.analyze_query("what did I do " + text + "?", NOW)


def test_words_of_other_languages_keep_their_letters():
    # Turkish writes the dotless i: its words are read from the text as written, the phrase too
    (ref,) = timeexpr.find("bu y\u0131l", NOW)
    assert ref.phrase == "bu y\u0131l" and ref.granularity == "year"


def test_a_namespace_holding_such_a_message_answers():
    mem = Memory(None)
    mem.add("The demo is planned for next FR\u0130DAY at the office.", timestamp=NOW)
    mem.add("I bought new running shoes.", timestamp=NOW + 60)
    got = mem.recall("When is the demo?")
    assert "demo" in got.text
    (ref,) = timeexpr.find("next FR\u0130DAY", NOW)
    assert datetime.fromtimestamp(ref.start, tz=timezone.utc).date().isoformat() == "2024-06-21"
