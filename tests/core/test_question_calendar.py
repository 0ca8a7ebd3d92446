"""The days a question names, read as a message's are: "the day after tomorrow", "two weeks from today", "a week
from Friday" point forward from the memory's latest message (hippo.text.timeexpr.analyze_query).

The expected days are worked out by hand from the calendar: Wednesday 10 May 2023 is the memory's latest day."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo import Memory
from hippo.text import timeexpr


def utc(*a: int) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


MAY_10 = utc(2023, 5, 10, 12)     # a Wednesday


@pytest.mark.parametrize("question, day", [
    ("What is Maya doing the day after tomorrow?", (2023, 5, 12)),
    ("What happens two weeks from today?", (2023, 5, 24)),
    ("What did I plan for 3 days from now?", (2023, 5, 13)),
    ("What is due a week from Friday?", (2023, 5, 19)),          # Friday 12 May, and a week on
    ("What is on a month from tomorrow?", (2023, 6, 11)),
    ("What will I do a fortnight from today?", (2023, 5, 24)),
])
def test_a_question_counts_forward_from_the_latest_day(question, day):
    assert timeexpr.analyze_query(question, MAY_10).window == (utc(*day), utc(*day) + timeexpr.DAY)


def test_a_count_from_now_on_names_no_day_in_a_question():
    assert timeexpr.analyze_query("What did I promise two weeks from now on?", MAY_10).window is None


@pytest.mark.parametrize("question, want", [
    ("What is planned for the day after tomorrow?", "dentist"),      # 12 May, not "tomorrow" (11 May)
    ("What is planned for two weeks from today?", "conference"),     # 24 May, not "today" (10 May)
    ("What is planned for a week from Friday?", "recital"),          # 19 May
])
def test_a_question_finds_what_happens_on_the_day_it_counts_to(question, want):
    with Memory(None) as mem:
        mem.add("I have my dentist appointment on May 12.", speaker="Maya", timestamp=utc(2023, 5, 8, 10))
        mem.add("The conference I'm speaking at is on May 24.", speaker="Maya", timestamp=utc(2023, 5, 8, 11))
        mem.add("I have the piano recital on May 19.", speaker="Maya", timestamp=utc(2023, 5, 8, 12))
        mem.add("I'll pick up the new bike tomorrow.", speaker="Maya", timestamp=utc(2023, 5, 10, 11))
        mem.add("Today was calm, nothing planned.", speaker="Maya", timestamp=MAY_10)
        hits = mem.search(question, k=3)
        assert hits and want in hits[0].text
