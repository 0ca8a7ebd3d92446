"""Time expressions chats use that the everyday forms (test_time_forms.py) do not cover: the units as chats clip
them ("next wk", "last yr"), "on the weekend", the weeks of a month ("the first week of November"), holidays
("at Christmas", "over Easter") and a weekday that opens a sentence ("Saturday I went to the market").

The expected days are worked out by hand from the calendar: Wednesday 15 March 2023 and Thursday 28 December 2023
are the days a message is said on; 11-12 March and 18-19 March 2023 are the weekends around the first, 23-24 and
30-31 December 2023 those around the second."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo.text import timeexpr
from tests.calendar_readings import DAY, days, reading, utc, window


MAR_15 = utc(2023, 3, 15, 12)     # a Wednesday
DEC_28 = utc(2023, 12, 28, 12)    # a Thursday


def said(text: str, now: float) -> tuple[float, float] | None:
    return reading(text, now)


def asked(question: str, now: float) -> tuple[float, float] | None:
    return window(question, now)


# -- the units as chats clip them -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, now, period", [
    ("next wk I'm off", MAR_15, days((2023, 3, 20), (2023, 3, 26))),
    ("next wk I'm off", DEC_28, days((2024, 1, 1), (2024, 1, 7))),
    ("I was sick all last wk", MAR_15, days((2023, 3, 6), (2023, 3, 12))),
    ("last yr I ran a marathon", MAR_15, days((2022, 1, 1), (2022, 12, 31))),
    ("we moved here last yr.", DEC_28, days((2022, 1, 1), (2022, 12, 31))),
    ("next yr we're going to Japan", DEC_28, days((2024, 1, 1), (2024, 12, 31))),
    ("this wknd we're going camping", MAR_15, days((2023, 3, 18), (2023, 3, 19))),
    ("this wknd we're going camping", DEC_28, days((2023, 12, 30), (2023, 12, 31))),
    ("last wknd was fun", MAR_15, days((2023, 3, 11), (2023, 3, 12))),
    ("last wknd was fun", DEC_28, days((2023, 12, 23), (2023, 12, 24))),
    ("next wkend works for me", MAR_15, days((2023, 3, 18), (2023, 3, 19))),
    ("I saw her 2 wks ago.", MAR_15, days((2023, 2, 27), (2023, 3, 5))),     # 1 March: its week
    ("3 yrs ago I lived in Rome", MAR_15, days((2020, 1, 1), (2020, 12, 31))),
    ("I'll be done in 2 wks", MAR_15, days((2023, 3, 27), (2023, 4, 2))),
])
def test_a_clipped_unit_is_the_unit(text, now, period):
    assert said(text, now) == period


@pytest.mark.parametrize("text", [
    "is this yr first time here?",     # "yr" is "your"
    "Review Last Wk",                  # a heading
    "Had a great wknd!",               # no word says which
    "we did it in 2 wks",              # how long it took
])
def test_a_clipped_unit_that_is_another_word_is_no_date(text):
    assert said(text, MAR_15) is None


def test_a_question_reads_a_clipped_unit():
    assert asked("What did I do last wk?", MAR_15) == days((2023, 3, 6), (2023, 3, 12))
    assert asked("Where did Ana go last yr?", DEC_28) == days((2022, 1, 1), (2022, 12, 31))


# -- "on the weekend", "at the weekend" -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, now, period", [
    ("I went hiking on the weekend.", MAR_15, days((2023, 3, 11), (2023, 3, 12))),
    ("We saw Ana at the weekend.", MAR_15, days((2023, 3, 11), (2023, 3, 12))),
    ("I'm going hiking on the weekend.", MAR_15, days((2023, 3, 18), (2023, 3, 19))),
    ("What are you doing on the weekend?", DEC_28, days((2023, 12, 30), (2023, 12, 31))),
    ("We had family over on the weekend.", DEC_28, days((2023, 12, 23), (2023, 12, 24))),
    ("went hiking over the wknd", MAR_15, days((2023, 3, 11), (2023, 3, 12))),
    ("are you free over the wknd?", MAR_15, days((2023, 3, 18), (2023, 3, 19))),
])
def test_on_the_weekend_is_the_weekend_the_clause_names(text, now, period):
    assert said(text, now) == period


@pytest.mark.parametrize("text", [
    "If you prefer to keep the movie night on the weekend, plan it for Sunday.",   # advice
    "Try to rest on the weekend.",
    "It is best to rest at the weekend.",
    "I usually sleep in on the weekend.",                                          # a habit
    "Prepare your lunches on the weekends.",
])
def test_on_the_weekend_said_of_any_weekend_is_no_date(text):
    assert said(text, MAR_15) is None


def test_a_question_on_the_weekend_is_the_last_one():
    assert asked("What did Ana do on the weekend?", MAR_15) == days((2023, 3, 11), (2023, 3, 12))


# -- a week of a month ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, now, period", [
    ("I went to Paris the first week of November.", MAR_15, days((2022, 11, 1), (2022, 11, 7))),
    ("I went to Paris the first week of November.", DEC_28, days((2023, 11, 1), (2023, 11, 7))),
    ("I'm off the first week of November.", MAR_15, days((2023, 11, 1), (2023, 11, 7))),
    ("I'm off the first week of November.", DEC_28, days((2024, 11, 1), (2024, 11, 7))),
    ("The second week of November was busy.", DEC_28, days((2023, 11, 8), (2023, 11, 14))),
    ("The last week of November I was sick.", MAR_15, days((2022, 11, 24), (2022, 11, 30))),
    ("During the last week of February we skied.", MAR_15, days((2023, 2, 22), (2023, 2, 28))),
    ("the 3rd week of May 2023 we moved", DEC_28, days((2023, 5, 15), (2023, 5, 21))),
    ("the last week in May I was sick", MAR_15, days((2022, 5, 25), (2022, 5, 31))),
    ("We are moving the last week of next month.", DEC_28, days((2024, 1, 25), (2024, 1, 31))),
    # a perfect said with a modal after the time sets a goal for then, and reports nothing
    ("By the end of the first week of April, you should have gathered your sources.", MAR_15,
     days((2023, 4, 1), (2023, 4, 7))),
])
def test_a_week_of_a_month_is_its_seven_days(text, now, period):
    assert said(text, now) == period


def test_a_week_of_every_month_is_no_date():
    assert said("First Week of Each Month: review the logs", MAR_15) is None


def test_a_question_about_a_week_of_a_month_names_its_days():
    assert asked("Which country was Tim visiting in the second week of November?", DEC_28) == \
        days((2023, 11, 8), (2023, 11, 14))
    assert asked("What did Ana do in the first week of November 2022?", DEC_28) == days((2022, 11, 1), (2022, 11, 7))


def test_a_week_of_a_month_told_as_a_habit_is_no_date():
    assert said("We usually go skiing the first week of February.", MAR_15) is None


# -- holidays -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("year, sunday", [
    (2000, (2000, 4, 23)), (2019, (2019, 4, 21)), (2022, (2022, 4, 17)), (2023, (2023, 4, 9)), (2024, (2024, 3, 31)),
    (2025, (2025, 4, 20)), (2038, (2038, 4, 25)), (1818, (1818, 3, 22)), (1943, (1943, 4, 25)),
])
def test_easter_is_computed(year, sunday):
    # the tables of the Gregorian Easter: its earliest (22 March 1818) and latest (25 April 1943, 2038) days too
    assert timeexpr.easter(year) == datetime(*sunday, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, now, period", [
    ("We went to my parents' at Christmas.", MAR_15, days((2022, 12, 25), (2022, 12, 25))),
    ("We went to my parents' at Christmas.", DEC_28, days((2023, 12, 25), (2023, 12, 25))),
    ("I'll visit my parents at Christmas.", MAR_15, days((2023, 12, 25), (2023, 12, 25))),
    ("I'll visit my parents at Christmas.", DEC_28, days((2024, 12, 25), (2024, 12, 25))),
    ("On New Year's Eve we watched fireworks.", DEC_28, days((2022, 12, 31), (2022, 12, 31))),
    ("We're having friends over on New Year's Eve.", DEC_28, days((2023, 12, 31), (2023, 12, 31))),
    ("I've been sober since New Year's Day.", MAR_15, days((2023, 1, 1), (2023, 3, 15))),
    ("We went to Rome over Easter.", MAR_15, days((2022, 4, 15), (2022, 4, 18))),     # Good Friday to Easter Monday
    ("I'll be in Rome over Easter.", MAR_15, days((2023, 4, 7), (2023, 4, 10))),
    ("I'll be in Rome over Easter.", DEC_28, days((2024, 3, 29), (2024, 4, 1))),
    ("On Easter Sunday we had lunch with Ana.", DEC_28, days((2023, 4, 9), (2023, 4, 9))),
    ("We carved pumpkins on Halloween.", MAR_15, days((2022, 10, 31), (2022, 10, 31))),
    ("I got flowers on Valentine's Day.", MAR_15, days((2023, 2, 14), (2023, 2, 14))),
    ("On Valentine's we went out for dinner.", MAR_15, days((2023, 2, 14), (2023, 2, 14))),
    ("I got a bike for Christmas.", DEC_28, days((2023, 12, 25), (2023, 12, 25))),
    ("What should I get him for Christmas?", MAR_15, days((2023, 12, 25), (2023, 12, 25))),
    ("last Christmas I gave you my heart", MAR_15, days((2022, 12, 25), (2022, 12, 25))),
    ("next Easter we'll go to Spain", DEC_28, days((2024, 3, 29), (2024, 4, 1))),
    ("It snowed at Christmas 2021.", MAR_15, days((2021, 12, 25), (2021, 12, 25))),
    ("on christmas morning we opened gifts", DEC_28, days((2023, 12, 25), (2023, 12, 25))),
    # a holiday spent or celebrated
    ("We spent Christmas in Oslo.", DEC_28, days((2023, 12, 25), (2023, 12, 25))),
    ("We're spending New Year's Eve in Paris.", MAR_15, days((2023, 12, 31), (2023, 12, 31))),
    ("How did you celebrate Easter?", MAR_15, days((2022, 4, 15), (2022, 4, 18))),
])
def test_a_holiday_is_its_day(text, now, period):
    assert said(text, now) == period


@pytest.mark.parametrize("text", [
    "We put up the Christmas tree.",
    "It's about the true meaning of Christmas.",
    "For Christmas dinner we had goose.",              # what the dinner is
    "We always go to my parents' at Christmas.",        # a habit
    "At Christmas the whole family gets together.",     # no tense: any Christmas
    "Easter eggs are hidden in the game.",
    "We spent Christmas money on toys.",
    "I bought a Valentine's card.",
    "How do you usually celebrate Christmas?",
    "During Thanksgiving, we watch a few movies.",      # the day differs between the US and Canada
])
def test_a_holiday_that_names_no_day_is_no_date(text):
    assert said(text, MAR_15) is None


@pytest.mark.parametrize("question, now, period", [
    ("What did Ana do over Christmas?", DEC_28, days((2023, 12, 25), (2023, 12, 25))),
    ("What did Ana do over Christmas?", MAR_15, days((2022, 12, 25), (2022, 12, 25))),   # the latest before it
    ("What did Ana do over Christmas 2022?", DEC_28, days((2022, 12, 25), (2022, 12, 25))),
    ("Where did Ana go over Easter?", DEC_28, days((2023, 4, 7), (2023, 4, 10))),
])
def test_a_question_about_a_holiday_is_the_one_it_names(question, now, period):
    assert asked(question, now) == period


def test_a_question_about_a_holiday_in_general_names_no_period():
    assert asked("What tradition does Tim love during Halloween?", DEC_28) is None


# -- a weekday that opens a sentence --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, now, day", [
    ("Saturday I went to the market.", MAR_15, (2023, 3, 11)),
    ("Saturday I went to the market.", DEC_28, (2023, 12, 23)),
    ("Sunday we're driving up to the lake.", MAR_15, (2023, 3, 19)),
    ("Sunday we're driving up to the lake.", DEC_28, (2023, 12, 31)),
    ("Great news! Friday I finally got the job.", MAR_15, (2023, 3, 10)),
    ("Monday I'll call the bank.", DEC_28, (2024, 1, 1)),
    ("Sunday my sister visited us.", DEC_28, (2023, 12, 24)),
    ("Wednesday I went for a run.", MAR_15, (2023, 3, 15)),      # said on a Wednesday: that day
    ("Friday night we went out dancing.", MAR_15, (2023, 3, 10)),
    ("Saturday morning I'm going to the market.", DEC_28, (2023, 12, 30)),
])
def test_a_weekday_that_opens_a_sentence_is_the_day_the_clause_names(text, now, day):
    assert said(text, now) == days(day, day)


@pytest.mark.parametrize("text", [
    "Friday I usually rest.",             # no tense: any Friday
    "Friday nights we usually go out.",
    "Saturday Night Live was great.",     # a name
    "Monday: gym, Tuesday: swim",         # a plan of every week
    "We met, and Saturday is my day off.",
])
def test_a_weekday_that_opens_a_sentence_with_no_tense_is_no_date(text):
    assert said(text, MAR_15) is None


def test_a_holiday_is_shown_in_context_and_a_question_about_it_finds_it():
    from hippo import Memory

    with Memory(None) as mem:
        mem.add("We went to Oslo at Christmas, it was lovely.", speaker="Ana", timestamp="2023-12-28T12:00:00")
        mem.add("I started a new painting of the harbour.", speaker="Ana", timestamp="2023-12-20T12:00:00")
        mem.add("The office party was fun.", speaker="Ana", timestamp="2023-12-15T12:00:00")
        hit = mem.search("Oslo")[0]
        assert hit.event_time.date().isoformat() == "2023-12-25"
        context = mem.recall("What did Ana do over Christmas?", budget_tokens=200).text
        assert "Ana (25 December 2023): We went to Oslo at Christmas" in context


@pytest.mark.parametrize("text, now, want", [
    # the seven days from the day named, back for a report and forward for a plan as the day alone would be
    ("We moved in the week of November 6", MAR_15, days((2022, 11, 6), (2022, 11, 12))),
    ("I'm off the week of April 10", MAR_15, days((2023, 4, 10), (2023, 4, 16))),
    ("the week of 6 March was hard", MAR_15, days((2023, 3, 6), (2023, 3, 12))),
    # the day alone stays a day
    ("I moved on November 6", MAR_15, days((2022, 11, 6), (2022, 11, 6))),
])
def test_the_week_of_a_day_is_the_seven_days_from_it(text, now, want):
    assert said(text, now) == want
    assert timeexpr.event_time(text, now).label().startswith("week of") == (want[1] - want[0] == 7 * DAY)


def test_a_question_about_the_week_of_a_day_asks_for_those_seven_days():
    assert asked("What did Ann do the week of November 6, 2022?", MAR_15) == days((2022, 11, 6), (2022, 11, 12))
