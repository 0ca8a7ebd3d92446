"""Time expressions of everyday speech, in a message and in a question: "two weeks ago on Monday", "since Tuesday",
"over the weekend", "the other day", "the start of next week"... (hippo.text.timeexpr).

The expected days are worked out by hand from the calendar: Wednesday 10 May 2023 is the day a message is said on
and the memory's latest day; 8 and 9 May are the Monday and Tuesday before it, 13-14 May the coming weekend."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo import Memory
from hippo.text import timeexpr


def utc(*a: int) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


MAY_10 = utc(2023, 5, 10, 12)     # a Wednesday
DAY = timeexpr.DAY


def days(first: tuple[int, int, int], last: tuple[int, int, int]) -> tuple[float, float]:
    """The period from the day ``first`` to the day ``last``, both included."""
    return utc(*first), utc(*last) + DAY


def said(text: str, now: float = MAY_10) -> tuple[float, float] | None:
    ref = timeexpr.event_time(text, now)
    return None if ref is None else (ref.start, ref.end)


def asked(question: str, now: float = MAY_10) -> tuple[float, float] | None:
    return timeexpr.analyze_query(question, now).window


# -- a weekday some weeks back: the weekday of the week that holds the day that many weeks before -------------------

@pytest.mark.parametrize("text, day", [
    ("I went there two weeks ago on Monday.", (2023, 4, 24)),     # 26 April is two weeks back: its week's Monday
    ("We met 3 weeks ago on Friday.", (2023, 4, 21)),             # 19 April: its week's Friday
    ("I saw him a week ago Tuesday.", (2023, 5, 2)),              # 3 May: its week's Tuesday
    ("On Sunday, two weeks ago, we hiked.", (2023, 4, 30)),
    ("I called her a fortnight ago on Thursday.", (2023, 4, 27)),
])
def test_a_weekday_some_weeks_ago_is_that_day(text, day):
    assert said(text) == days(day, day)



@pytest.mark.parametrize("question, day", [
    ("What did I do two weeks ago on Monday?", (2023, 4, 24)),
    ("Who did I see a week ago Tuesday?", (2023, 5, 2)),
])
def test_a_question_about_a_weekday_some_weeks_ago_names_that_day(question, day):
    assert asked(question) == days(day, day)


def test_weeks_ago_alone_is_still_the_week():
    assert said("I went there two weeks ago.") == days((2023, 4, 24), (2023, 4, 30))
