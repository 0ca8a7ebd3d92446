"""Time expressions of plans, business and television, each worked out by hand from the calendar
(hippo.text.timeexpr): "in the coming days", a "back" that answers, the quarters and halves of a year and fiscal
years, a weekday that is a title or a name, a list of days of a month, a weekday of a month ("the first Monday of
April") or with its day ("Tuesday, the 7th"), and a month as a deadline or a start ("by July", "starting April").

Wednesday 15 March 2023 is the day a message is said on: Friday 10 and 17 March are the last and the coming
Friday; the quarter it is in is January-March 2023."""

from __future__ import annotations

import calendar

import pytest

from tests.calendar_readings import DAY, days, reading, readings, utc as at, window


MAR_15 = at(2023, 3, 15, 12)      # a Wednesday


def said(text: str, now: float = MAR_15) -> tuple[float, float] | None:
    return reading(text, now)


def all_said(text: str, now: float = MAR_15) -> list[tuple[float, float]]:
    return readings(text, now)


def asked(question: str, now: float = MAR_15) -> tuple[float, float] | None:
    return window(question, now)


# -- a period ahead that says no count: a few of its units, as "the next few days" -----------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("I'll send the results in the coming days.", (2023, 3, 15), (2023, 3, 18)),
    ("We'll know more in the days ahead.", (2023, 3, 15), (2023, 3, 18)),
    ("I'll finish it over the next few days.", (2023, 3, 15), (2023, 3, 18)),
    ("I will call you in the coming weeks.", (2023, 3, 15), (2023, 4, 5)),
    ("I'll do it within the coming month.", (2023, 3, 15), (2023, 4, 15)),
])
def test_a_period_ahead_without_its_count_is_a_few_of_its_units(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("text", [
    "In the coming days I went out more.",              # told: after another time
    "I'll call in the coming weeks or months.",         # neither
    "We will grow in the coming years.",                # three years: how long, not when
])
def test_a_period_ahead_told_vague_or_long_is_still_no_date(text):
    assert said(text) is None


# -- "back" after a verb of answering: the answer, not "back in November" ---------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("I'll hear back in November.", ((2023, 11, 1), (2023, 11, 30))),       # was November 2022
    ("I'll hear back on Friday.", ((2023, 3, 17), (2023, 3, 17))),          # was 10 March
    ("I'll call back on the 20th.", ((2023, 3, 20), (2023, 3, 20))),        # was 20 February
    ("We'll hear back in the next few days.", ((2023, 3, 15), (2023, 3, 18))),  # was no date
    # told, and "back in" a month of the past
    ("I heard back in November.", ((2022, 11, 1), (2022, 11, 30))),
    ("We met back in November.", ((2022, 11, 1), (2022, 11, 30))),
    ("I was back on the 10th.", ((2023, 3, 10), (2023, 3, 10))),
])
def test_back_after_a_verb_of_answering_leaves_the_tense_to_the_clause(text, want):
    assert said(text) == days(*want)


# -- a weekday that is a title or a name ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "I watched Wednesday on Netflix.",          # was 8 March
    "I started watching Wednesday.",            # was 8 March
    "I finally watched Wednesday, it was great.",
    "I loved Wednesday on Netflix.",
    "Did you watch Wednesday?",
    "I finished season 2 of Wednesday.",
    "I binged Friday Night Lights.",
    "We ate at Ruby Tuesday.",                  # was 14 March
    "We had a party on Super Bowl Sunday.",     # was 12 March
    "He is my Man Friday.",
    "I met Tuesday Weld.",
])
def test_a_weekday_that_is_a_title_or_a_name_is_no_day(text):
    assert said(text) is None


@pytest.mark.parametrize("text, day", [
    ("On Wednesday we watched a film.", (2023, 3, 8)),
    ("I watched a movie Wednesday.", (2023, 3, 8)),
    ("We watched Wednesday night.", (2023, 3, 8)),       # a time of day: the day
    ("we watched it wednesday", (2023, 3, 8)),
    ("We binged Wednesday last night.", (2023, 3, 14)),  # the show, and the night before
])
def test_a_weekday_said_of_watching_is_still_a_day(text, day):
    assert said(text) == days(day, day)


@pytest.mark.parametrize("text, day", [
    # the Friday and the Monday after the fourth Thursday of November (24 November 2022, 23 November 2023)
    ("I bought a TV on Black Friday.", (2022, 11, 25)),
    ("Black Friday was crazy.", (2022, 11, 25)),
    ("I'll shop on Black Friday.", (2023, 11, 24)),
    ("I got a laptop on Cyber Monday.", (2022, 11, 28)),
    ("We went to church on Good Friday.", (2022, 4, 15)),
])
def test_black_friday_and_cyber_monday_are_the_days_after_us_thanksgiving(text, day):
    assert said(text) == days(day, day)


def test_black_friday_before_what_it_describes_is_no_date():
    assert said("Black Friday sales are wild.") is None


def test_a_question_about_black_friday():
    assert asked("What did I buy on Black Friday?") == days((2022, 11, 25), (2022, 11, 25))


# -- a list of days of one month --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("I saw him on March 3 and 5.", [(2023, 3, 3), (2023, 3, 5)]),                      # was 3 March alone
    ("We met March 3, 5 and 7.", [(2023, 3, 3), (2023, 3, 5), (2023, 3, 7)]),
    ("We met March 3rd & 5th.", [(2023, 3, 3), (2023, 3, 5)]),
    ("I was in Rome on the 3rd and the 5th.", [(2023, 3, 3), (2023, 3, 5)]),
    ("On the 3rd and 5th of March I was sick.", [(2023, 3, 3), (2023, 3, 5)]),
    ("We meet on March 3rd and 5th, 2024.", [(2024, 3, 3), (2024, 3, 5)]),              # the year is both days'
    ("I was off on the 3rd, 4th and 6th of February.", [(2023, 2, 3), (2023, 2, 4), (2023, 2, 6)]),
    ("I was off 3rd, 4th and 5th March 2022.", [(2022, 3, 3), (2022, 3, 4), (2022, 3, 5)]),   # was the 5th alone
])
def test_each_day_of_a_list_is_read(text, want):
    assert all_said(text) == [days(d, d) for d in want]


@pytest.mark.parametrize("text, want", [
    ("On March 3, 5 people came.", [(2023, 3, 3)]),          # a count
    ("March 3 and 5 more days.", [(2023, 3, 3)]),            # a count
    ("We met on March 5 and 3.", [(2023, 3, 5)]),            # no list that goes forward
    ("We hiked on February 27 and 30.", [(2023, 2, 27)]),    # no 30 February
])
def test_a_number_after_a_day_that_is_no_day_of_a_list(text, want):
    assert all_said(text) == [days(d, d) for d in want]


def test_the_event_time_of_a_list_is_its_first_day():
    assert said("I saw him on March 3 and 5.") == days((2023, 3, 3), (2023, 3, 3))


def test_a_question_about_a_list_of_days_spans_them():
    assert asked("What did I do on March 3 and 5?") == days((2023, 3, 3), (2023, 3, 5))
    assert asked("What happened on March 3, 5 and 7, 2022?") == days((2022, 3, 3), (2022, 3, 7))


# -- quarters, halves and fiscal years, as the calendar's --------------------------------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("We launched in Q3.", (2022, 7, 1), (2022, 9, 30)),                     # told: the latest begun
    ("We'll launch in Q3.", (2023, 7, 1), (2023, 9, 30)),                    # to come
    ("We'll launch in Q2 2024.", (2024, 4, 1), (2024, 6, 30)),
    ("We'll hire in Q3'24.", (2024, 7, 1), (2024, 9, 30)),
    ("Q3 FY24 results beat estimates.", (2024, 7, 1), (2024, 9, 30)),
    ("That was Q4 of last year.", (2022, 10, 1), (2022, 12, 31)),            # was 2022, the whole year
    ("The $8,000 allocation for Q3 is set.", (2023, 7, 1), (2023, 9, 30)),  # what it is for: to come
    ("I'll ship by the end of Q2.", (2023, 4, 1), (2023, 6, 30)),
    ("Revenue grew in the third quarter.", (2022, 7, 1), (2022, 9, 30)),
    ("Revenue in the last quarter of 2022 was flat.", (2022, 10, 1), (2022, 12, 31)),
    ("Sales dropped last quarter.", (2022, 10, 1), (2022, 12, 31)),
    ("We're on track this quarter.", (2023, 1, 1), (2023, 3, 31)),
    ("We'll hire next quarter.", (2023, 4, 1), (2023, 6, 30)),
    ("The plan for H1 2024 is ready.", (2024, 1, 1), (2024, 6, 30)),
    ("We'll grow in H2 of next year.", (2024, 7, 1), (2024, 12, 31)),
    ("We'll expand in the first half of next year.", (2024, 1, 1), (2024, 6, 30)),
    ("FY24 budget is approved.", (2024, 1, 1), (2024, 12, 31)),
    ("In FY2024 we grew 10%.", (2024, 1, 1), (2024, 12, 31)),
    ("Our fiscal year starts in January. In FY2024 we grew 10%.", (2024, 1, 1), (2024, 12, 31)),
])
def test_a_quarter_a_half_or_a_fiscal_year_is_the_calendars(text, first, last):
    assert [r for r in all_said(text) if r[1] - r[0] > 31 * DAY] == [days(first, last)]


@pytest.mark.parametrize("text", [
    "Our fiscal year starts in July. In FY2024 we grew 10%.",   # another start: not the calendar's
    "Our fiscal year starts in July, and Q3 was strong.",
    "Q3: what is the capital of France?",                       # a question's number
    "I drive an Audi Q3.",
    "Explain Q3 allocation.",
    "I've allocated $8,000 for staff training in Q3 budget.",  # a word it describes
    "I set up the <h1> title in H1.",                           # a heading
    "We were down 10 in the third quarter.",                    # a game's
    "They scored twice in the final quarter of the game.",
    "The moon is in its last quarter.",
    "Revenue is strong in Q3.",                                 # no tense: any year's
    "For Q1, I got 8/10 on the quiz.",                          # a question's number
    "Did you get to Q4 in the homework?",
])
def test_a_quarter_that_is_no_calendar_quarter_is_no_date(text):
    assert [r for r in all_said(text) if r[1] - r[0] > 31 * DAY] == []


def test_a_question_about_a_quarter():
    assert asked("What did we spend in Q2 2022?") == days((2022, 4, 1), (2022, 6, 30))
    assert asked("What did we plan for next quarter?") == days((2023, 4, 1), (2023, 6, 30))


# -- a weekday of a month ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("I'll start the new job on the first Monday of April.", (2023, 4, 3)),      # was 20 March
    ("The last Friday of May I was sick.", (2022, 5, 27)),                      # was 10 March
    ("I was sick the last Friday of February.", (2023, 2, 24)),
    ("We'll meet on the second Tuesday of next month.", (2023, 4, 11)),          # was 21 March
    ("I met her the first Sunday in March.", (2023, 3, 5)),                     # was 12 March
    ("The workshop is on the second Wednesday of August, 2024.", (2024, 8, 14)),  # was August 2024
])
def test_a_weekday_of_a_month_is_that_day(text, day):
    assert said(text) == days(day, day)


@pytest.mark.parametrize("text", [
    "Let's meet the first Saturday of every month.",     # a rate: was 18 March
    "We meet on the second Tuesday of each month.",
    "The last Friday of May is always busy.",            # a habit
])
def test_a_weekday_of_every_month_is_no_day(text):
    assert said(text) is None


# -- a weekday and its day of the month ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("We met on Tuesday, the 7th.", (2023, 3, 7)),                   # was 14 March, the last Tuesday
    ("It happened on Friday the 13th.", (2023, 1, 13)),              # was 10 March: the latest Friday the 13th
    ("Friday the 13th was scary.", (2023, 1, 13)),                   # was no date
    ("The meeting is on Thursday the 16th.", (2023, 3, 16)),
    ("I'll see you Friday the 17th.", (2023, 3, 17)),                # was no date
    ("I'll finish by Friday the 17th.", (2023, 3, 17)),
    ("It was Friday the 13th of October.", (2022, 10, 13)),          # the date says which
])
def test_a_weekday_and_its_day_of_the_month_are_the_day_that_is_both(text, day):
    assert said(text) == days(day, day)


def test_a_weekday_and_its_day_said_with_no_tense_is_no_date():
    assert said("Friday the 13th is a film.") is None


# -- a month and a number before what it counts ----------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("I saw June 3 times this week.", [((2023, 3, 13), (2023, 3, 19))]),     # was 3 June 2022 too
    ("In March 2 of us got sick.", [((2023, 3, 1), (2023, 3, 31))]),          # was 2 March
    ("On June 3 we met.", [((2022, 6, 3), (2022, 6, 3))]),
])
def test_a_number_after_a_month_that_counts_is_no_day(text, want):
    assert all_said(text) == [days(*w) for w in want]


@pytest.mark.parametrize("text, want", [
    ("I was there on the 3rd and 5th floors.", []),          # was 3 March
    ("On the 1st or 2nd floor we met.", []),                 # was 1 March
    ("On March 3 and 4 of us went.", [(2023, 3, 3)]),        # a count: the 3rd alone
])
def test_ordinals_before_what_they_count_are_no_days(text, want):
    assert all_said(text) == [days(d, d) for d in want]


@pytest.mark.parametrize("text, first, last", [
    ("I'll rest in the week ahead.", (2023, 3, 15), (2023, 3, 22)),
    ("I'll be off in the weeks ahead.", (2023, 3, 15), (2023, 4, 5)),
    ("I'm visiting my parents over the coming weekend.", (2023, 3, 18), (2023, 3, 19)),   # was no date
    ("I'll rest during the coming weekend.", (2023, 3, 18), (2023, 3, 19)),
])
def test_a_unit_ahead_said_singular_and_the_coming_weekend(text, first, last):
    assert said(text) == days(first, last)


def test_the_coming_week_in_advice_is_still_no_date():
    assert said("Over the coming week, focus on your draft.") is None


@pytest.mark.parametrize("text, first, last", [
    # "the upcoming week" and "weekend" said as "the coming" ones are (was no date)
    ("I have a big presentation in the upcoming week.", (2023, 3, 15), (2023, 3, 22)),
    ("I'm off during the upcoming weeks.", (2023, 3, 15), (2023, 4, 5)),
    ("See you this upcoming weekend.", (2023, 3, 18), (2023, 3, 19)),
    ("I'll have three exams this upcoming week.", (2023, 3, 20), (2023, 3, 26)),
    ("We'll relax over the upcoming weekend.", (2023, 3, 18), (2023, 3, 19)),
])
def test_the_upcoming_week_is_the_coming_one(text, first, last):
    assert said(text) == days(first, last)


def test_the_upcoming_week_in_advice_is_no_date():
    assert said("Review your progress and plan for the upcoming week.") is None


@pytest.mark.parametrize("text, month", [
    # a question about what one can do is about what is to come (was April 2022, June 2022)
    ("Can I finish this in April?", (2023, 4)), ("Is it realistic to move in June?", (2023, 6)),
    ("Is it too late to start training in May?", (2023, 5)), ("Can I still sign up for the race in May?", (2023, 5)),
    # ... one that asks to tell of what was is not, nor a "how can I" whose time is another verb's, further off; a
    # report is not
    ("Can I tell you about my trip in April?", (2022, 4)), ("I finished this in April.", (2022, 4)),
    ("How can I make sure the wellness program for the staff, introduced in October, helps them?", (2022, 10)),
])
def test_a_question_about_what_one_can_do_is_about_the_coming_month(text, month):
    first = (*month, 1)
    last = (*month, calendar.monthrange(*month)[1])
    assert said(text) == days(first, last)


# -- a month as a deadline or a start ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, month", [
    ("I'm trying to reduce my work hours to 40 by July.", (2023, 7)),     # was no date
    ("The prototype is market-ready by November.", (2023, 11)),
    ("I'll be done by March.", (2023, 3)),
    ("I finished it by February.", (2023, 2)),                            # told
    ("We compromised on $200 starting April.", (2023, 4)),                # what starts is to come
    ("Starting June I work from home.", (2023, 6)),
])
def test_a_month_as_a_deadline_or_a_start_is_that_month(text, month):
    first = at(*month, 1)
    end = at(month[0] + month[1] // 12, month[1] % 12 + 1, 1)
    assert said(text) == (first, end)


@pytest.mark.parametrize("text", ["It was followed by may be more.", "I'm staying until June.",
                                  "I was inspired by June's story.", "The portrait was painted by June Smith.",
                                  "I was inspired by April."])
def test_a_verb_or_a_month_something_lasts_until_is_no_date(text):
    assert said(text) is None
