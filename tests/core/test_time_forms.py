"""Time expressions of everyday speech, in a message and in a question: "two weeks ago on Monday", "since Tuesday",
"over the weekend", "the other day", "the start of next week"... (hippo.text.timeexpr).

The expected days are worked out by hand from the calendar: Wednesday 10 May 2023 is the day a message is said on
and the memory's latest day; 8 and 9 May are the Monday and Tuesday before it, 13-14 May the coming weekend."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pytest

from hippo import Memory
from hippo.text import timeexpr
from tests.calendar_readings import DAY, days, reading, utc, window


MAY_10 = utc(2023, 5, 10, 12)     # a Wednesday


def said(text: str, now: float = MAY_10) -> tuple[float, float] | None:
    return reading(text, now)


def asked(question: str, now: float = MAY_10) -> tuple[float, float] | None:
    return window(question, now)


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


# -- "since Tuesday": the days from the last Tuesday up to the day it is said, that day included ---------------------

@pytest.mark.parametrize("text, first", [
    ("I've been sick since Tuesday.", (2023, 5, 9)),
    ("I've been sick since Wednesday.", (2023, 5, 3)),       # said on a Wednesday: the one a week before
    ("It has rained since last Monday.", (2023, 5, 8)),
])
def test_since_a_weekday_is_the_days_from_it_up_to_the_message(text, first):
    assert said(text) == days(first, (2023, 5, 10))


@pytest.mark.parametrize("question, first", [
    ("What have I done since Tuesday?", (2023, 5, 9)),
    ("What did Maya eat since last Monday?", (2023, 5, 8)),
])
def test_a_question_since_a_weekday_is_the_days_up_to_the_askers(question, first):
    assert asked(question) == days(first, (2023, 5, 10))


def test_a_question_since_a_weekday_finds_what_was_said_since_then_and_not_before():
    with Memory(None) as mem:
        mem.add("I finished the quilt for my sister.", speaker="Maya", timestamp=utc(2023, 5, 2, 10))
        mem.add("I finished the painting for the gallery.", speaker="Maya", timestamp=utc(2023, 5, 9, 10))
        mem.add("A quiet evening at home.", speaker="Maya", timestamp=MAY_10)
        texts = [h.text for h in mem.search("What did Maya finish since Tuesday?", k=3)]
        assert "painting" in texts[0] and "quilt" in texts[-1]


# -- "over the weekend": the last one when told, the coming one when still to come --------------------------------

@pytest.mark.parametrize("text, now, saturday", [
    ("I went hiking over the weekend.", MAY_10, (2023, 5, 6)),
    ("Over the weekend we painted the fence.", MAY_10, (2023, 5, 6)),             # no tense cue: a report
    ("I'll go hiking over the weekend.", MAY_10, (2023, 5, 13)),
    ("We're camping over the weekend with the kids.", MAY_10, (2023, 5, 13)),
    ("I went hiking over the weekend.", utc(2023, 5, 14, 18), (2023, 5, 13)),   # said on Sunday: that one
    ("I went hiking over the weekend.", utc(2023, 5, 13, 18), (2023, 5, 6)),    # said on Saturday: the one before
    ("I'll rest over the weekend.", utc(2023, 5, 13, 9), (2023, 5, 13)),        # said on Saturday: that one
    ("Are you free over the weekend?", MAY_10, (2023, 5, 13)),                   # the present: to come
    ("We're painting the fence over the weekend.", MAY_10, (2023, 5, 13)),
    ("Anything fun over the weekend?", MAY_10, (2023, 5, 6)),
    ("Maya's dog ran off over the weekend.", MAY_10, (2023, 5, 6)),               # a possessive, no present
    ("Let's meet over the weekend.", MAY_10, (2023, 5, 13)),
])
def test_over_the_weekend_is_the_last_or_the_coming_one_by_the_tense(text, now, saturday):
    assert said(text, now) == days(saturday, (saturday[0], saturday[1], saturday[2] + 1))


@pytest.mark.parametrize("question, saturday", [
    ("What did I do over the weekend?", (2023, 5, 6)),
    ("What will Maya do over the weekend?", (2023, 5, 13)),
    ("What is Maya doing over the weekend?", (2023, 5, 13)),
])
def test_a_question_over_the_weekend_names_that_weekend(question, saturday):
    assert asked(question) == days(saturday, (saturday[0], saturday[1], saturday[2] + 1))


def test_over_the_weekend_as_a_habit_is_no_date():
    assert said("I usually rest over the weekend.") is None


def test_over_the_weekend_of_a_date_is_that_date():
    assert said("We met over the weekend of May 5, 2023.") == days((2023, 5, 5), (2023, 5, 5))


# -- "the other day": the week of days before the day it is said -------------------------------------------------

def test_the_other_day_is_the_week_before_the_message():
    assert said("I ran into Sam the other day at the market.") == days((2023, 5, 3), (2023, 5, 9))
    assert timeexpr.event_time("I ran into Sam the other day.", MAY_10).label() == "3-9 May 2023"


def test_a_question_about_the_other_day_names_that_week():
    assert asked("Who did I run into the other day?") == days((2023, 5, 3), (2023, 5, 9))


def test_every_other_day_is_a_rate_and_no_date():
    assert said("I water the plants every other day.") is None


# -- a question reads "the week after next", "by Friday" and the thirds of a month as a message does ---------------

@pytest.mark.parametrize("question, first, last", [
    ("What is Maya doing the week after next?", (2023, 5, 22), (2023, 5, 28)),
    ("What is planned for the Friday after next?", (2023, 5, 19), (2023, 5, 19)),
    ("What do I need to finish by Friday?", (2023, 5, 12), (2023, 5, 12)),
    ("What did I do in mid-March?", (2023, 3, 11), (2023, 3, 20)),
    ("Where will Maya be in early June?", (2023, 6, 1), (2023, 6, 10)),
    ("Which tournament did Nate win in the beginning of November 2022?", (2022, 11, 1), (2022, 11, 10)),
    ("What is due at the end of next month?", (2023, 6, 21), (2023, 6, 30)),
])
def test_a_question_names_the_days_a_message_would(question, first, last):
    assert asked(question) == days(first, last)


@pytest.mark.parametrize("said, question, want", [
    ([("We flew to Oslo for the conference.", utc(2023, 3, 29, 10)),
      ("We flew to Lisbon for the wedding.", utc(2023, 3, 15, 10))], "Where did Maya fly in mid-March?", "Lisbon"),
    ([("We drove to the lake.", utc(2022, 7, 20, 10)), ("We drove to the city with the kids.", utc(2023, 1, 20, 10))],
     "Where did Maya drive with the kids last summer?", "lake"),
])
def test_a_question_about_a_period_finds_what_was_said_then(said, question, want):
    """The message of the period asked about comes first, even where another one shares more of the question's
    words (mid-March against late March; last summer against January's "with the kids")."""
    with Memory(None) as mem:
        for text, when in said:
            mem.add(text, speaker="Maya", timestamp=when)
        mem.add("A quiet evening at home.", speaker="Maya", timestamp=MAY_10)
        assert want in mem.search(question, k=3)[0].text


# -- a third of a week, and "the end of the month" said of what is to come or told -------------------------------

@pytest.mark.parametrize("text, now, first, last", [
    ("I'll start at the start of next week.", MAY_10, (2023, 5, 15), (2023, 5, 16)),
    ("Let's meet at the beginning of next week.", MAY_10, (2023, 5, 15), (2023, 5, 16)),
    ("I'll finish it at the end of the week.", MAY_10, (2023, 5, 12), (2023, 5, 14)),
    ("The package will arrive late this week.", MAY_10, (2023, 5, 12), (2023, 5, 14)),
    ("We went there early last week.", MAY_10, (2023, 5, 1), (2023, 5, 2)),
    ("The middle of next week works for me.", MAY_10, (2023, 5, 17), (2023, 5, 18)),
    ("I'll pay you back at the end of the month.", MAY_10, (2023, 5, 21), (2023, 5, 31)),
    ("I'll pay you back at the start of the month.", utc(2023, 5, 26, 12), (2023, 6, 1), (2023, 6, 10)),
    ("We had a party at the end of the month.", MAY_10, (2023, 4, 21), (2023, 4, 30)),  # this one's is to come
    # a deadline the speaker sets for what is to come is the end of that period
    ("I'll finish it by the end of the week.", MAY_10, (2023, 5, 12), (2023, 5, 14)),
    ("I'll have the report done by the end of the month.", MAY_10, (2023, 5, 21), (2023, 5, 31)),
    ("We're going to launch by the end of the month.", utc(2023, 5, 25, 12), (2023, 5, 21), (2023, 5, 31)),
])
def test_a_third_of_a_week_or_of_the_month_is_those_days(text, now, first, last):
    assert said(text, now) == days(first, last)


@pytest.mark.parametrize("text", [
    "I pay the rent at the end of the month.",          # a habit
    "Try to finish the draft by the end of the month.",  # advice, said of any month
    "We had it done by the end of the week.",  # told: which week's end it was is not said
    "At the end of the week, reflect on whether the extra time has improved your writing.",  # advice
])
def test_the_end_of_the_month_without_a_tense_or_told_after_by_is_no_date(text):
    assert said(text) is None


def test_a_question_about_the_start_of_next_week_names_its_first_days():
    assert asked("What is planned for the start of next week?") == days((2023, 5, 15), (2023, 5, 16))
    assert asked("What will Maya do at the end of the month?") == days((2023, 5, 21), (2023, 5, 31))


# -- "two weekends ago": counted back from the last weekend -------------------------------------------------------

@pytest.mark.parametrize("text, now, saturday", [
    ("We went camping two weekends ago.", utc(2023, 7, 17, 14), (2023, 7, 8)),   # said on a Monday
    ("We went camping two weekends ago.", MAY_10, (2023, 4, 29)),
    ("I saw them a weekend ago.", MAY_10, (2023, 5, 6)),
    ("We went camping 3 weekends ago.", utc(2023, 5, 14, 18), (2023, 4, 29)),    # said on a Sunday
])
def test_weekends_ago_count_back_from_the_last_weekend(text, now, saturday):
    assert said(text, now) == days(saturday, (saturday[0], saturday[1], saturday[2] + 1))
    assert asked(text.replace("We went camping", "Who went camping").rstrip(".") + "?", now) == \
        days(saturday, (saturday[0], saturday[1], saturday[2] + 1))


# -- "in a fortnight" is "in two weeks": a date whatever the clause says of its tense -------------------------------

@pytest.mark.parametrize("text", ["We meet again in a fortnight.", "We meet again in two weeks."])
def test_in_a_fortnight_is_the_week_two_weeks_on(text):
    assert said(text) == days((2023, 5, 22), (2023, 5, 28))


def test_a_question_in_a_fortnight_names_that_week():
    assert asked("What happens in a fortnight?") == days((2023, 5, 22), (2023, 5, 28))


# -- "the week before last": a week before the last one ------------------------------------------------------------

@pytest.mark.parametrize("text, now, first, last", [
    ("We met the week before last.", MAY_10, (2023, 4, 24), (2023, 4, 30)),
    ("We went camping the weekend before last.", MAY_10, (2023, 4, 29), (2023, 4, 30)),
    ("We went camping the weekend before last.", utc(2023, 5, 14, 18), (2023, 4, 29), (2023, 4, 30)),  # a Sunday
    ("I saw her the Friday before last.", MAY_10, (2023, 4, 28), (2023, 4, 28)),
])
def test_the_week_before_last_is_a_week_before_the_last_one(text, now, first, last):
    assert said(text, now) == days(first, last)
    assert asked("What happened the " + text.split(" the ", 1)[1].rstrip(".") + "?", now) == days(first, last)


def test_before_last_years_final_is_no_week_before_last():
    assert said("The week before last year's final we trained hard.") == days((2022, 1, 1), (2022, 12, 31))


# -- "earlier this week", "later this month": the part of it before or after the day it is said -------------------

@pytest.mark.parametrize("text, first, last", [
    ("I was there earlier this week.", (2023, 5, 8), (2023, 5, 10)),
    ("I will go later this week.", (2023, 5, 10), (2023, 5, 14)),
    ("Later this month I will travel.", (2023, 5, 10), (2023, 5, 31)),
    ("Earlier this year we moved.", (2023, 1, 1), (2023, 5, 10)),
])
def test_earlier_or_later_this_week_is_its_days_before_or_after_the_message(text, first, last):
    assert said(text) == days(first, last)


def test_a_question_about_earlier_this_week_names_its_days_so_far():
    assert asked("What did I do earlier this week?") == days((2023, 5, 8), (2023, 5, 10))


# -- "a year ago today": that day, counted back -------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("A year ago today we got married.", (2022, 5, 10)),
    ("A week ago today I started the new job.", (2023, 5, 3)),
    ("Two weeks ago yesterday she called.", (2023, 4, 25)),
    ("A month ago tomorrow we moved.", (2023, 4, 11)),
])
def test_a_count_back_from_today_is_that_day(text, day):
    assert said(text) == days(day, day)


def test_a_question_a_year_ago_today_names_that_day():
    assert asked("What did I do a year ago today?") == days((2022, 5, 10), (2022, 5, 10))


# -- "this time last year": the week around that day a year before -----------------------------------------------

@pytest.mark.parametrize("text, first", [
    ("This time last year I was in Rome.", (2022, 5, 7)),
    ("Around this time last month we moved.", (2023, 4, 7)),
])
def test_this_time_last_year_is_the_week_around_that_day(text, first):
    assert said(text) == (utc(*first), utc(*first) + 7 * DAY)


def test_a_question_this_time_last_year_names_that_week():
    assert asked("What did I do this time last year?") == (utc(2022, 5, 7), utc(2022, 5, 14))


# -- "Tuesday week", "a week on Friday": a week after the coming one ------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("We fly on Tuesday week.", (2023, 5, 23)),
    ("Next Tuesday week we fly.", (2023, 5, 23)),
    ("See you a week on Friday.", (2023, 5, 19)),
    ("See you Tuesday week!", (2023, 5, 23)),            # was no date: only "on", "next" or "this" were read
    ("Tuesday week works for me.", (2023, 5, 23)),
])
def test_a_weekday_week_is_a_week_after_the_coming_one(text, day):
    assert said(text) == days(day, day)


def test_a_monday_to_sunday_week_is_a_kind_of_week_and_no_date():
    assert said("Assuming a Monday to Sunday week, six days remain.") is None
    assert said("We work a Monday-Friday week.") is None
    assert said("It was a Tuesday week for us, everything went wrong.") is None


def test_a_weekday_then_a_week_number_is_that_weekday():
    assert said("On Monday week 3 of the course starts.") == days((2023, 5, 8), (2023, 5, 8))


def test_during_the_weekend_in_advice_is_no_date():
    assert said("This way, you can revisit these notes during the weekend.", utc(2024, 1, 20)) is None


# -- "two Fridays ago": counted back from the last Friday ---------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("We met two Fridays ago.", (2023, 4, 28)),       # the last Friday is 5 May
    ("She called three Wednesdays ago.", (2023, 4, 19)),  # said on a Wednesday: the last one is 3 May
])
def test_weekdays_ago_count_back_from_the_last_one(text, day):
    assert said(text) == days(day, day)
    assert asked("Who did I meet two Fridays ago?") == days((2023, 4, 28), (2023, 4, 28))


# -- a third of a year: January to April, May to August, September to December ------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("At the end of last year I changed jobs.", (2022, 9, 1), (2022, 12, 31)),   # not the whole of 2022
    ("I'll move early next year.", (2024, 1, 1), (2024, 4, 30)),
    ("We married in mid-2021.", (2021, 5, 1), (2021, 8, 31)),
    ("The beginning of 2020 was hard.", (2020, 1, 1), (2020, 4, 30)),
    ("I'll be done by the end of the year.", (2023, 9, 1), (2023, 12, 31)),      # a deadline: this year's end
    ("We had a party at the end of the year.", (2022, 9, 1), (2022, 12, 31)),    # told: this year's is to come
    ("Late this year we'll open a shop.", (2023, 9, 1), (2023, 12, 31)),
])
def test_a_third_of_a_year_is_those_months(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("text", [
    "I pay my taxes at the end of the year.",                  # a habit
    "Aim to save $1,000 by the end of the year.",              # advice, said of any year
])
def test_the_end_of_the_year_without_a_tense_or_as_advice_is_no_date(text):
    assert said(text) is None


def test_a_question_about_the_end_of_last_year_names_its_last_months():
    assert asked("What did I do at the end of last year?") == days((2022, 9, 1), (2022, 12, 31))


# -- a season: the northern hemisphere's, spring March to May, summer June to August, autumn September to November,
# winter December to February ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, now, first, last", [
    ("I went hiking last spring.", MAY_10, (2022, 3, 1), (2022, 5, 31)),           # this spring is not over
    ("Last summer I went to Spain.", MAY_10, (2022, 6, 1), (2022, 8, 31)),
    ("Last winter was cold.", MAY_10, (2022, 12, 1), (2023, 2, 28)),
    ("We went camping last summer.", utc(2023, 9, 15), (2023, 6, 1), (2023, 8, 31)),  # over two weeks ago
    ("This past autumn was rainy.", MAY_10, (2022, 9, 1), (2022, 11, 30)),
    ("We're going to Italy this summer.", MAY_10, (2023, 6, 1), (2023, 8, 31)),
    ("This spring has been busy.", MAY_10, (2023, 3, 1), (2023, 5, 31)),            # the one the day is in
    ("This summer was great.", utc(2023, 10, 2), (2023, 6, 1), (2023, 8, 31)),
    ("This winter was mild.", MAY_10, (2022, 12, 1), (2023, 2, 28)),                # the nearest one
    ("I'll go skiing this winter.", MAY_10, (2023, 12, 1), (2024, 2, 29)),          # the coming one: a plan
    ("I'm going skiing next winter.", MAY_10, (2023, 12, 1), (2024, 2, 29)),
    ("Next fall I start college.", MAY_10, (2023, 9, 1), (2023, 11, 30)),
    ("Next summer we move.", utc(2023, 7, 1), (2024, 6, 1), (2024, 8, 31)),         # not the one the day is in
    ("We met in the summer of 2021.", MAY_10, (2021, 6, 1), (2021, 8, 31)),
    ("I moved in autumn 2020.", None, (2020, 9, 1), (2020, 11, 30)),                # a year says which
])
def test_a_season_is_its_three_months(text, now, first, last):
    assert said(text, now) == days(first, last)


@pytest.mark.parametrize("text", [
    "I hurt my knee in my last fall.",                 # a fall, not autumn
    "It was the last summer of my childhood.",
    "The winter 2022 collection is out.",             # which winter is not said
])
def test_a_season_that_names_no_period_is_no_date(text):
    assert said(text) is None


def test_a_season_shows_its_months_in_context():
    with Memory(None) as mem:
        mem.add("I took that pic on a hike last summer near Fort Wayne.", speaker="Joanna",
                timestamp=utc(2022, 11, 9, 17))
        assert "Joanna (June-August 2022): I took that pic" in mem.recall("Where did Joanna hike?").text


@pytest.mark.parametrize("text, now, want", [
    ("Last winter was cold.", MAY_10, "December 2022-February 2023"),
    ("At the end of last year I changed jobs.", MAY_10, "September-December 2022"),
    ("I've been learning guitar since March.", utc(2023, 5, 31, 12), "March-May 2023"),
    ("I've been learning guitar since March.", MAY_10, "1 March-10 May 2023"),
    ("Later this month we move.", utc(2023, 5, 1, 12), "1-31 May 2023"),
])
def test_a_period_of_whole_months_is_shown_as_its_months(text, now, want):
    assert timeexpr.event_time(text, now).label() == want


@pytest.mark.parametrize("question, now, first, last", [
    ("What did Joanna take a picture of last summer?", utc(2022, 11, 11), (2022, 6, 1), (2022, 8, 31)),
    ("What are we doing this summer?", MAY_10, (2023, 6, 1), (2023, 8, 31)),
    ("Which state did Joanna visit in summer 2021?", MAY_10, (2021, 6, 1), (2021, 8, 31)),
])
def test_a_question_about_a_season_names_its_months(question, now, first, last):
    assert asked(question, now) == days(first, last)


# -- a season said with "the": "in the summer", "over the winter", placed by the tense of the clause ---------------

@pytest.mark.parametrize("text, now, first, last", [
    ("I moved here in the summer.", MAY_10, (2022, 6, 1), (2022, 8, 31)),
    ("Over the summer I learned to swim.", MAY_10, (2022, 6, 1), (2022, 8, 31)),
    ("We went to the coast during the spring.", MAY_10, (2023, 3, 1), (2023, 5, 31)),    # the one it is in
    ("I went to Italy in the summer.", utc(2023, 7, 10, 12), (2023, 6, 1), (2023, 8, 31)),
    ("I went to Italy in the summer.", utc(2023, 6, 1, 12), (2022, 6, 1), (2022, 8, 31)),  # begun that day: the last
    ("I'll go to Italy in the summer.", MAY_10, (2023, 6, 1), (2023, 8, 31)),
    ("We're skiing in the winter.", MAY_10, (2023, 12, 1), (2024, 2, 29)),
    ("I'll finish the quilt over the winter.", utc(2024, 1, 10, 12), (2023, 12, 1), (2024, 2, 29)),
    ("I'm going to paint the house in the fall.", MAY_10, (2023, 9, 1), (2023, 11, 30)),
])
def test_a_season_with_the_is_the_last_one_begun_when_told_and_the_coming_one_when_planned(text, now, first, last):
    assert said(text, now) == days(first, last)


@pytest.mark.parametrize("text", [
    "I usually go to Italy in the summer.",          # a habit
    "We always went to the lake in the summer.",
    "We used to go camping in the summer.",
    "I finished my exams and in the summer I travel.",  # the verb after the time is no past
    "It gets really hot in the summer.",             # no tense: any summer
    "Gardens need more water in the summer months.",
])
def test_a_season_with_the_said_as_a_habit_or_without_a_tense_is_no_date(text):
    assert said(text) is None


def test_a_season_with_the_of_a_year_is_that_years():
    assert said("We met in the summer of 2021.") == days((2021, 6, 1), (2021, 8, 31))


def test_a_question_about_a_season_with_the_names_it():
    assert asked("What did Maya do over the summer?") == days((2022, 6, 1), (2022, 8, 31))


# -- "since March", "since last summer", "since 2019": from then up to the day it is said, that day included -------

@pytest.mark.parametrize("text, first", [
    ("I've been learning guitar since March.", (2023, 3, 1)),
    ("I've been running since last summer.", (2022, 6, 1)),
    ("I've lived here since 2019.", (2019, 1, 1)),
    ("We've been partners since May 2021.", (2021, 5, 1)),
    ("Ever since last year, I've felt better.", (2022, 1, 1)),
    ("She's been away since last month.", (2023, 4, 1)),
    ("It's the lowest it's been since the start of 2022.", (2022, 1, 1)),
])
def test_since_a_month_a_season_or_a_year_is_the_days_from_it_up_to_the_message(text, first):
    assert said(text) == days(first, (2023, 5, 10))


def test_since_a_day_is_that_day():
    assert said("Since May 2, I've run every morning.") == days((2023, 5, 2), (2023, 5, 2))


def test_a_question_since_a_month_is_still_open_up_to_the_askers_time():
    assert asked("What have I done since March?") == (utc(2023, 3, 1), math.inf)
    assert asked("What have I done since last summer?") == (utc(2022, 6, 1), math.inf)


def test_since_march_is_found_by_a_search_of_april():
    with Memory(None) as mem:
        item = mem.add("I've been learning guitar since March.", speaker="Maya", timestamp=MAY_10)
        april = dict(since=datetime(2023, 4, 10, tzinfo=timezone.utc), until=datetime(2023, 4, 20, tzinfo=timezone.utc))
        assert [h.id for h in mem.search("guitar", **april)] == [item.id]
        assert "Maya (1 March-10 May 2023): I've been learning guitar" in mem.recall("What is Maya learning?").text


@pytest.mark.parametrize("text, now, at", [
    ("I've lived here since 2019.", utc(2024, 5, 10, 12), utc(2019, 7, 2, 12)),        # the middle of 2019
    ("I've been learning guitar since March.", MAY_10, utc(2023, 3, 16, 12)),          # the middle of March
    ("I've been sick since Tuesday.", MAY_10, utc(2023, 5, 9, 12)),                    # that Tuesday's noon
    ("It's the lowest it's been since the start of 2022.", MAY_10, utc(2022, 3, 2)),   # of January-April 2022
    ("We've been partners since May 2023.", utc(2023, 5, 11, 12), utc(2023, 5, 6, 12)),  # 1-11 May, up to then
    ("I went to the gym yesterday.", MAY_10, utc(2023, 5, 9, 12)),                     # every other: the middle
])
def test_a_period_since_a_time_dates_the_event_when_it_began(text, now, at):
    assert timeexpr.event_time(text, now).at == at


def test_a_timeline_orders_a_period_since_a_time_by_when_it_began():
    with Memory(None) as mem:
        said_on = utc(2024, 5, 10, 12)
        lived = mem.add("I've lived in Lisbon since 2019.", speaker="Maya", timestamp=said_on)
        moved = mem.add("I started at Acme in 2020.", speaker="Maya", timestamp=said_on + 60)
        learned = mem.add("I took up the cello in 2021.", speaker="Maya", timestamp=said_on + 120)
        entries = mem.timeline("Maya")
        assert [e["id"] for e in entries] == [lived.id, moved.id, learned.id]
        assert entries[0]["event_time"] == datetime(2019, 7, 2, 12, tzinfo=timezone.utc)
        hit = next(h for h in mem.search("Where does Maya live? Lisbon", k=3) if h.id == lived.id)
        assert hit.event_time == datetime(2019, 7, 2, 12, tzinfo=timezone.utc)
        # its days up to the message are still what a period is matched against: 2021 is among them
        in_2021 = dict(since=datetime(2021, 3, 1, tzinfo=timezone.utc), until=datetime(2021, 4, 1, tzinfo=timezone.utc))
        assert [h.id for h in mem.search("Lisbon", **in_2021)] == [lived.id]


def test_when_a_period_since_a_time_began_is_kept_in_a_snapshot_and_an_older_one_still_loads():
    from hippo.engine.truth.state import Truth
    with Memory(None) as mem:
        mem.add("I've lived in Lisbon since 2019.", speaker="Maya", timestamp=utc(2024, 5, 10, 12))
        mem.add("I started at Acme in 2020.", speaker="Maya", timestamp=utc(2024, 5, 10, 13))
        state = mem.engine.state()
        state.truth.sync(state.index)
        rows = np.arange(len(state.index))
        meta, arrays = state.truth.to_snapshot()
        loaded = Truth.from_snapshot(meta, arrays, state.index)
        assert loaded.event_mid(rows).tolist() == [utc(2019, 7, 2, 12), utc(2020, 7, 2)]
        # written before the onsets were kept: the middle of the period, as it was read then
        older = Truth.from_snapshot(meta, {k: v for k, v in arrays.items() if k != "event_onset"}, state.index)
        assert older.event_mid(rows).tolist() == [(utc(2019, 1, 1) + utc(2024, 5, 11)) / 2, utc(2020, 7, 2)]


# -- a question's count of days or weeks back: those days up to the asker's --------------------------------------

@pytest.mark.parametrize("question, first", [
    ("What have I been doing the past few days?", (2023, 5, 7)),
    ("What did I read over the last couple of weeks?", (2023, 4, 26)),
    ("What happened in the past 10 days?", (2023, 4, 30)),
])
def test_a_question_about_a_count_of_days_back_names_those_days(question, first):
    assert asked(question) == days(first, (2023, 5, 10))


@pytest.mark.parametrize("question, window", [
    ("What did I do in the last week?", days((2023, 5, 1), (2023, 5, 7))),   # the calendar week before, as measured
    ("What did I do over the past few months?", None),
    ("What did I do the last two days of the trip?", None),
])
def test_a_question_reads_the_other_periods_back_as_before(question, window):
    assert asked(question) == window


@pytest.mark.parametrize("text", ["I went for a run in the morning.", "I'll call you in the morning.",
                                  "In the evening we cooked.", "We talked late at night."])
def test_a_time_of_day_is_no_date(text):
    assert said(text) is None
    assert asked(text) is None
