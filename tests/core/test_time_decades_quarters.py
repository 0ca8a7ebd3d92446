"""Decades, ranges of quarters, "the past quarter", "for the weekend" and "around the 20th" (hippo.text.timeexpr),
each worked out by hand from the calendar.

Wednesday 15 March 2023 is the day a message is said on and the asker's day: 11-12 March is the last weekend and
18-19 March the coming one; October-December 2022 is the quarter before the one the day is in. Wednesday 16 August
2023 is a day whose quarter before (April-June 2023) is not the fourth of any year."""

from __future__ import annotations

import pytest

from tests.calendar_readings import days, reading, readings, utc as at, window


MAR_15 = at(2023, 3, 15, 12)      # a Wednesday
AUG_16 = at(2023, 8, 16, 12)      # a Wednesday


def said(text: str, now: float = MAR_15) -> tuple[float, float] | None:
    return reading(text, now)


# -- decades -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("I grew up in the 1990s.", 1990, 1999),
    ("Music of the 1990's was better.", 1990, 1999),
    ("Music was better in the '90s.", 1990, 1999),
    ("Music was better in the 90s.", 1990, 1999),
    ("Music was better in the 90's.", 1990, 1999),
    ("I loved the 80's.", 1980, 1989),
    ("Things were simpler in the nineties.", 1990, 1999),
    ("The eighties were wild.", 1980, 1989),
    ("We moved there in the early 2000s.", 2000, 2003),
    ("Prices in the early 2000s were lower.", 2000, 2003),
    ("It happened in the mid-'90s.", 1994, 1996),
    ("That was in the late 1980s.", 1987, 1989),
    ("Fashion in the '00s was odd.", 2000, 2009),
    ("A drama about maids in the 1960s South.", 1960, 1969),
])
def test_a_decade_is_its_years(text, first, last):
    assert said(text) == days((first, 1, 1), (last, 12, 31))


def test_since_a_decade_is_from_its_start_up_to_the_day():
    assert said("Representation has improved significantly since the 1990s.") == days((1990, 1, 1), (2023, 3, 15))


@pytest.mark.parametrize("text", [
    "In my twenties I travelled a lot.",          # an age
    "She is in her nineties now.",                # an age
    "Temperatures were in the 90s all week.",     # degrees
    "It was in the 90's all week, too hot.",      # degrees
    "His scores were in the nineties.",           # a score
    "I found a book from the 1900s.",             # as often the century
    "The roaring '20s had jazz.",                 # the 1920s or the 2020s
    "the 1800s",                                  # a century
])
def test_what_is_not_a_decade_is_no_date(text):
    assert said(text) is None


def test_a_question_about_a_decade_asks_about_its_years():
    assert window("What did I say about films of the 1990s?", MAR_15) == days((1990, 1, 1), (1999, 12, 31))


# -- a range of quarters -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("The project runs from Q1 to Q3 2024.", (2024, 1, 1), (2024, 9, 30)),       # was Q3 2024 alone
    ("The project ran Q2-Q4 2022.", (2022, 4, 1), (2022, 12, 31)),
    ("The project runs from Q3 to Q1 2024.", (2023, 7, 1), (2024, 3, 31)),       # the year is the last quarter's
    ("We'll hire from Q2 to Q3.", (2023, 4, 1), (2023, 9, 30)),                  # to come
    ("We hired from Q2 to Q3.", (2022, 4, 1), (2022, 9, 30)),                    # the latest begun
])
def test_a_range_of_quarters_is_all_of_them(text, first, last):
    assert readings(text, MAR_15) == [days(first, last)]


def test_a_range_of_quarters_of_a_quiz_is_no_date():
    assert said("For Q1 to Q3 of the quiz I got them right.") is None


# -- the quarter before -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("Sales grew over the past quarter.", (2023, 4, 1), (2023, 6, 30)),
    ("I'm looking forward to discussing my progress over the past quarter.", (2023, 4, 1), (2023, 6, 30)),
    ("Sales grew in the last quarter.", (2023, 4, 1), (2023, 6, 30)),             # was October-December 2022
    ("Sales grew last quarter.", (2023, 4, 1), (2023, 6, 30)),
    # the last quarter of a year: said of what is to come, or with its year
    ("Sales will grow in the last quarter.", (2023, 10, 1), (2023, 12, 31)),
    ("Sales grew in the last quarter of 2022.", (2022, 10, 1), (2022, 12, 31)),
])
def test_the_past_quarter_is_the_one_before_the_days(text, first, last):
    assert said(text, AUG_16) == days(first, last)


@pytest.mark.parametrize("text", [
    "We scored twice in the last quarter.",
    "We were down 10 in the last quarter but came back.",
    "He played well in the past quarter of the game.",
])
def test_a_games_last_quarter_is_no_date(text):
    assert said(text, AUG_16) is None


# -- for the weekend ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, first", [
    ("Do you have any plans for the weekend?", (2023, 3, 18)),
    ("Any plans for the weekend?", (2023, 3, 18)),
    ("I'm going away for the weekend.", (2023, 3, 18)),
    ("My parents are visiting for the weekend.", (2023, 3, 18)),
    ("I've budgeted $50 for the weekend, can you help me pick snacks?", (2023, 3, 18)),
    ("I went to my parents' for the weekend.", (2023, 3, 11)),
    ("I was away for the weekend.", (2023, 3, 11)),
])
def test_for_the_weekend_is_the_coming_one_or_the_last_one_reported(text, first):
    start = at(*first)
    assert said(text) == (start, start + 2 * 86400)


@pytest.mark.parametrize("text", [
    "Set aside time for the weekend to relax.",          # advice
    "Prepare for the weekend by setting up reminders.",  # advice
])
def test_for_the_weekend_in_advice_is_no_date(text):
    assert said(text) is None


def test_plans_for_the_weekend_said_of_anyone_is_no_date():
    assert said("For example, a couple discussing plans for the weekend, or friends catching up.") is None
    assert said("Do you have plans for the weekend?") == (at(2023, 3, 18), at(2023, 3, 20))
    assert said("Got any big plans for the weekend?") == (at(2023, 3, 18), at(2023, 3, 20))


# -- around the 20th ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("I'll be there around the 20th.", (2023, 3, 20)),
    ("I got there around the 20th.", (2023, 2, 20)),
])
def test_around_a_day_of_the_month_is_that_day(text, day):
    assert said(text) == days(day, day)


def test_around_an_ordinal_that_counts_is_no_date():
    assert said("We stopped around the 3rd floor.") is None
