"""More time expressions of chat, each worked out by hand from the calendar (hippo.text.timeexpr): a clause that
says who told what a sentence says, a holiday that opens a sentence, a question's "before Christmas" and "after
Easter", a range of months or days, and "how long ago".

Wednesday 15 March 2023 is the day a message is said on and the asker's day: Friday 10 and 17 March are the last and
the coming Friday; Christmas 2022 is the latest one over, Easter 2023 is Sunday 9 April (Good Friday 7 April, Easter
Monday 10 April) and Easter 2022 Sunday 17 April."""

from __future__ import annotations

import pytest

from hippo.text import timeexpr
from tests.calendar_readings import DAY, days, reading, utc as at, window


MAR_15 = at(2023, 3, 15, 12)      # a Wednesday


def said(text: str, now: float = MAR_15) -> tuple[float, float] | None:
    return reading(text, now)


def asked(question: str, now: float = MAR_15) -> tuple[float, float] | None:
    return window(question, now)


# -- a clause that says who told it: its past is the telling's, not the time's -----------------------------------------

@pytest.mark.parametrize("text, day", [
    ("We're meeting on Friday, I was told.", (2023, 3, 17)),          # was 10 March
    ("The meeting is on Friday, I was told.", (2023, 3, 17)),         # was 10 March
    ("On Friday, I was told, we're meeting.", (2023, 3, 17)),         # was 10 March
    ("Ana is coming on Friday, she told me.", (2023, 3, 17)),
    ("The party is on Saturday, I heard.", (2023, 3, 18)),
    # a past of the sentence itself still reports
    ("We met on Friday, I was told.", (2023, 3, 10)),
    ("The party was on Saturday, I heard.", (2023, 3, 11)),
])
def test_a_clause_that_says_who_told_it_does_not_make_the_time_past(text, day):
    assert said(text) == days(day, day)


def test_a_third_of_the_month_told_by_someone_is_still_to_come():
    # "the end of the month" of a clause that reports nothing but the telling: this month's, still to come
    assert said("The exam is at the end of the month, I was told.") == days((2023, 3, 21), (2023, 3, 31))


# -- a holiday that opens a sentence, with no word before it: placed by its clause -----------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("Christmas was lovely.", (2022, 12, 25), (2022, 12, 25)),
    ("It was fun. Christmas was lovely.", (2022, 12, 25), (2022, 12, 25)),
    ("Easter we spent at home.", (2022, 4, 15), (2022, 4, 18)),         # Good Friday to Easter Monday, 2022
    ("Christmas, we went to Oslo.", (2022, 12, 25), (2022, 12, 25)),
    ("Christmas Eve we watched movies.", (2022, 12, 24), (2022, 12, 24)),
    ("Easter Monday I went back to work.", (2022, 4, 18), (2022, 4, 18)),
    ("Halloween was a blast.", (2022, 10, 31), (2022, 10, 31)),
    ("Christmas we're going to Oslo.", (2023, 12, 25), (2023, 12, 25)),
])
def test_a_holiday_that_opens_a_sentence_is_placed_by_its_clause(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("text", [
    "Christmas is my favourite holiday.",      # no tense: any Christmas
    "Christmas is always busy.",               # a habit
    "Christmas dinner was great.",             # a noun it describes
    "Christmas!",
])
def test_a_holiday_that_opens_a_sentence_of_no_tense_or_a_noun_is_no_date(text):
    assert said(text) is None


# -- a question's "before Christmas" and "after Easter": a period that ends or starts at the holiday -----------------

INF = float("inf")


@pytest.mark.parametrize("question, window", [
    # the latest Christmas up to the asker's day, 25 December 2022: everything before it
    ("What did I do before Christmas?", (-INF, at(2022, 12, 25))),
    ("What did Ana do prior to Christmas?", (-INF, at(2022, 12, 25))),
    ("What did I do before Christmas 2021?", (-INF, at(2021, 12, 25))),
    # Easter 2022 is Good Friday 15 April to Easter Monday 18 April: everything after it
    ("What did I do after Easter?", (at(2022, 4, 19), INF)),
    ("What happened after Easter?", (at(2022, 4, 19), INF)),
    # what is to come: the coming Christmas, 25 December 2023
    ("What should I buy before Christmas?", (-INF, at(2023, 12, 25))),
])
def test_a_question_before_or_after_a_holiday_is_open_on_that_side(question, window):
    assert asked(question) == window


def test_a_question_after_a_holiday_asked_during_it_is_after_the_last_one_over():
    # asked on Easter Sunday 9 April 2023, Easter 2023 (7-10 April) is not over: after Easter 2022 (15-18 April)
    assert asked("What did I do after Easter?", at(2023, 4, 9, 12)) == (at(2022, 4, 19), INF)
    # asked on 26 December 2023, Christmas 2023 is over
    assert asked("What did I do after Christmas?", at(2023, 12, 26, 12)) == (at(2023, 12, 26), INF)


def test_before_a_holiday_in_a_message_is_still_no_date():
    # a message's "before Christmas" says no day, as its "after May" does not
    assert said("I went to Oslo before Christmas.") is None


def test_a_question_before_a_holiday_lifts_what_was_said_before_it():
    from hippo import Memory

    said_at = [(at(2022, 12, 20, 9), "I baked ginger cookies with Maya."),
               (at(2023, 1, 10, 9), "I baked rye bread with Maya."),
               (at(2023, 3, 15, 9), "I baked a lemon cake with Maya.")]

    def store(**temporal) -> Memory:
        mem = Memory(None, config={"temporal": temporal} if temporal else None)
        mem.add_many({"text": t, "role": "user", "timestamp": ts} for ts, t in said_at)
        return mem

    with store() as on, store(window_boost=1.0) as off:
        boost = on.config.temporal.window_boost
        question = "What did I bake with Maya before Christmas?"
        a = {h.text: h.score for h in on.search(question, k=10)}
        b = {h.text: h.score for h in off.search(question, k=10)}
        assert set(a) == {t for _, t in said_at} == set(b)
        for k, (_, text) in enumerate(said_at):
            assert a[text] == pytest.approx(b[text] * (boost if k == 0 else 1.0), rel=1e-9), text


# -- a range of months, days of a month or years ---------------------------------------------------------------------

@pytest.mark.parametrize("text, first, last", [
    # reported: the latest one over by the day it is said (March-May 2023 has not ended)
    ("I was in Spain between March and May.", (2022, 3, 1), (2022, 5, 31)),
    ("I was in Spain from March to May.", (2022, 3, 1), (2022, 5, 31)),
    ("I was in Spain from November to February.", (2022, 11, 1), (2023, 2, 28)),
    # to come: the first one not over
    ("I'll be in Spain between April and June.", (2023, 4, 1), (2023, 6, 30)),
    ("I'll be in Spain from November to February.", (2023, 11, 1), (2024, 2, 29)),
    # with its year (the last month's)
    ("I was in Spain from January to February 2022.", (2022, 1, 1), (2022, 2, 28)),
    ("We lived there from 2019 to 2021.", (2019, 1, 1), (2021, 12, 31)),
    ("From 2019 to 2021 I lived in Rome.", (2019, 1, 1), (2021, 12, 31)),
    # days of the month: this month's when over, the coming ones when to come
    ("I was away from the 3rd to the 5th.", (2023, 3, 3), (2023, 3, 5)),
    ("I'll be away from the 20th to the 25th.", (2023, 3, 20), (2023, 3, 25)),
    ("I'll be away between the 20th and the 25th.", (2023, 3, 20), (2023, 3, 25)),
    ("I'll be away from the 28th to the 3rd.", (2023, 3, 28), (2023, 4, 3)),
    ("I was off from the 1st to the 4th of last month.", (2023, 2, 1), (2023, 2, 4)),
])
def test_a_range_is_the_days_from_its_first_to_its_last(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("text", [
    "We always go to Spain from March to May.",      # a habit
    "I pay from the 1st to the 5th of each month.",  # a rate
    "I went from the 3rd to the 5th floor.",         # what the ordinals count
    "It grew from 2010 to 2020 words.",              # no years
    "Between 1990 and 2000 people came.",
])
def test_a_range_of_a_habit_a_rate_or_a_count_is_no_date(text):
    assert said(text) is None


@pytest.mark.parametrize("question, first, last", [
    ("What did I do between March and May?", (2022, 3, 1), (2022, 5, 31)),
    ("What did I do between January and February?", (2023, 1, 1), (2023, 2, 28)),
    ("What did I do from the 3rd to the 5th?", (2023, 3, 3), (2023, 3, 5)),
    ("What did I do between 2019 and 2021?", (2019, 1, 1), (2021, 12, 31)),
    ("What did I do from March to May 2022?", (2022, 3, 1), (2022, 5, 31)),
    # the whole range, where the last month alone was read (May 2022, September 2022)
    ("Summarize my progress between April and May 2022.", (2022, 4, 1), (2022, 5, 31)),
    ("Summarize my milestones from July through September 2022.", (2022, 7, 1), (2022, 9, 30)),
])
def test_a_question_about_a_range_names_its_days(question, first, last):
    assert asked(question) == days(first, last)


def test_a_range_of_months_without_its_year_is_read_in_every_year_of_a_question():
    assert timeexpr.analyze_query("What did I do between March and May?", MAR_15).yearless
    assert not timeexpr.analyze_query("What did I do between 2019 and 2021?", MAR_15).yearless


# -- a season spent ("we spent the summer in Italy") or opening a sentence ("The winter was harsh") ------------------

@pytest.mark.parametrize("text, first, last", [
    ("We spent the summer in Italy.", (2022, 6, 1), (2022, 8, 31)),
    ("We spent the fall in Vermont.", (2022, 9, 1), (2022, 11, 30)),
    ("I'll spend the winter in Spain.", (2023, 12, 1), (2024, 2, 29)),    # the last one is over by 1 March
    ("The winter was harsh.", (2022, 12, 1), (2023, 2, 28)),
    ("The summer was great. We swam a lot.", (2022, 6, 1), (2022, 8, 31)),
    ("The summer, we went to Rome.", (2022, 6, 1), (2022, 8, 31)),
])
def test_a_season_spent_or_opening_a_sentence_is_placed_by_its_clause(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("text", [
    "The summer house is ours.",            # a noun it describes
    "The summer is the best season.",       # no tense: any summer
    "The fall was painful.",                # as often the fall that hurt
    "The summer I turned 16 was wild.",     # a summer the clause after it names
    "The summer we met was magical.",
    "The Winter Olympics were great.",
])
def test_a_season_opening_a_sentence_of_no_tense_a_noun_or_a_fall_is_no_date(text):
    assert said(text) is None


# -- "back" as chats say "ago", and "the night before last" ----------------------------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("I saw her a few days back.", (2023, 3, 12), (2023, 3, 12)),          # as "a few days ago": three days back
    ("I saw her two weeks back.", (2023, 2, 27), (2023, 3, 5)),            # the week that holds 1 March
    ("I saw her a fortnight back.", (2023, 2, 27), (2023, 3, 5)),
    ("A couple years back I lived in Rome.", (2021, 1, 1), (2021, 12, 31)),
    ("I saw her the night before last.", (2023, 3, 13), (2023, 3, 13)),
])
def test_back_is_ago_and_the_night_before_last_is_two_days_back(text, first, last):
    assert said(text) == days(first, last)
    assert said(text) == said(text.replace(" back", " ago").replace("the night before last", "the day before "
                                                                                                "yesterday"))


@pytest.mark.parametrize("text", [
    "My first day back at work was hard.",
    "I spent two days back home.",
    "We played two games back-to-back.",
    "The launch was pushed two weeks back.",     # moved by a span
    "The records go back two years.",
])
def test_back_after_a_move_or_before_a_place_is_no_date(text):
    assert said(text) is None


def test_a_question_reads_back_as_ago():
    assert asked("What did I do a few days back?") == days((2023, 3, 12), (2023, 3, 12))
    assert asked("What did I do the night before last?") == days((2023, 3, 13), (2023, 3, 13))


# -- a day as an ordinal spelled out, or after "the" ---------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("I'll call you on the third.", (2023, 4, 3)),          # as "on the 3rd": to come, the next 3rd
    ("I called her on the third.", (2023, 3, 3)),
    ("Rent is due on the first.", (2023, 4, 1)),
    ("I'll see you on the twenty-first.", (2023, 3, 21)),
    ("I'll pay on the twentieth of next month.", (2023, 4, 20)),
    ("I went there March the 3rd.", (2023, 3, 3)),
    ("We met on the first of May.", (2022, 5, 1)),           # as "on the 1st of May"
    ("We met on the third of June, 2022.", (2022, 6, 3)),
    ("I'll see you May twenty-first.", (2023, 5, 21)),
])
def test_a_day_as_an_ordinal_word_is_the_day_its_digits_are(text, day):
    assert said(text) == days(day, day)


@pytest.mark.parametrize("text, digits", [
    ("I'll call you on the third.", "I'll call you on the 3rd."),
    ("We met on the first of May.", "We met on the 1st of May."),
    ("I went there March the 3rd.", "I went there March 3rd."),
])
def test_an_ordinal_word_reads_as_its_digits_do(text, digits):
    assert said(text) == said(digits)


@pytest.mark.parametrize("text", [
    "I got it on the first try.",              # what the ordinal counts
    "He finished on the second-to-last day.",
    "You may first want to rest.",             # the verb
    "May the 4th be with you.",
    "Probability of Drawing an Ace on the First Draw:",       # a title's noun
    "Rolling a 6 on the Second Die",
    "The chance of an ace on the first and second draws.",
    "Since the first Ace is removed, there are 3 left.",
])
def test_an_ordinal_word_that_counts_a_thing_is_no_date(text):
    assert said(text) is None


def test_a_question_reads_an_ordinal_word():
    assert asked("What did I do on the first of March?") == days((2023, 3, 1), (2023, 3, 1))
    assert asked("What did I do on the third?") == days((2023, 3, 3), (2023, 3, 3))


# -- "half a year ago": six months back, not a year -------------------------------------------------------------------

@pytest.mark.parametrize("text, same_as", [
    ("I moved here half a year ago.", "I moved here 6 months ago."),    # the week around 15 September 2022
    ("I moved here half a month ago.", "I moved here 2 weeks ago."),
])
def test_half_a_year_ago_is_six_months_ago(text, same_as):
    assert said(text) == said(same_as)


def test_half_a_year_ago_by_hand():
    assert said("I moved here half a year ago.") == days((2022, 9, 12), (2022, 9, 18))
    assert asked("What did I do half a year ago?") == days((2022, 9, 12), (2022, 9, 18))


@pytest.mark.parametrize("text", ["I slept half a day ago.", "I'll be done half a day from now."])
def test_half_a_day_is_no_day_a_count_names(text):
    assert said(text) is None      # was the day before, and the day after


# -- the forms chats use, each worked out by hand for Wednesday 15 March 2023 -----------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("I went to Paris in mid-April.", (2022, 4, 11), (2022, 4, 20)),       # reported: the latest one begun
    ("I'll be in Paris in mid-April.", (2023, 4, 11), (2023, 4, 20)),
    ("We're moving early next month.", (2023, 4, 1), (2023, 4, 10)),
    ("I changed jobs late last year.", (2022, 9, 1), (2022, 12, 31)),      # a third of a year
    ("I'll pay you back at the end of the month.", (2023, 3, 21), (2023, 3, 31)),
    ("We had a party at the end of the month.", (2023, 2, 21), (2023, 2, 28)),   # this one has not begun
    ("I went to the lake the weekend before last.", (2023, 3, 4), (2023, 3, 5)),
    ("I'm flying out the day after tomorrow.", (2023, 3, 17), (2023, 3, 17)),
    ("I saw Maya the other day.", (2023, 3, 8), (2023, 3, 14)),
    ("I quit smoking a few days ago.", (2023, 3, 12), (2023, 3, 12)),
    ("I got my results a fortnight ago.", (2023, 2, 27), (2023, 3, 5)),    # the week that holds 1 March
    ("The results come in a fortnight.", (2023, 3, 27), (2023, 4, 2)),     # the week that holds 29 March
    ("I'll be back in two weeks' time.", (2023, 3, 27), (2023, 4, 2)),
    ("I'll call you on the 3rd.", (2023, 4, 3), (2023, 4, 3)),
    ("I called her on the 3rd.", (2023, 3, 3), (2023, 3, 3)),
    ("This time last year I was in Rome.", (2022, 3, 12), (2022, 3, 18)),
    ("We went to Greece in the summer.", (2022, 6, 1), (2022, 8, 31)),
    ("I'll go to Greece in the spring.", (2023, 3, 1), (2023, 5, 31)),     # the one the day is in
    ("We moved in the fall.", (2022, 9, 1), (2022, 11, 30)),
    ("The meeting is a week from Friday.", (2023, 3, 24), (2023, 3, 24)),
    ("The meeting is Friday week.", (2023, 3, 24), (2023, 3, 24)),
    ("I've been running since January.", (2023, 1, 1), (2023, 3, 15)),
    ("I went there on March 3rd.", (2023, 3, 3), (2023, 3, 3)),
    ("I went there on the 3rd of March.", (2023, 3, 3), (2023, 3, 3)),
    ("I went there on 3 March.", (2023, 3, 3), (2023, 3, 3)),
    ("I went there 3 March 2022.", (2022, 3, 3), (2022, 3, 3)),
    ("I went there on March 3rd, 2022.", (2022, 3, 3), (2022, 3, 3)),
])
def test_the_forms_chats_use_said_on_15_march_2023(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("question, first, last", [
    ("What did I do in mid-April?", (2022, 4, 11), (2022, 4, 20)),
    ("What am I doing in mid-April?", (2023, 4, 11), (2023, 4, 20)),
    ("What did I do early last month?", (2023, 2, 1), (2023, 2, 10)),
    ("What did I do late last year?", (2022, 9, 1), (2022, 12, 31)),
    ("What am I doing at the end of the month?", (2023, 3, 21), (2023, 3, 31)),
    ("What did I do the weekend before last?", (2023, 3, 4), (2023, 3, 5)),
    ("What happened the other day?", (2023, 3, 8), (2023, 3, 14)),
    ("What did I do a fortnight ago?", (2023, 2, 27), (2023, 3, 5)),
    ("What's happening in two weeks' time?", (2023, 3, 27), (2023, 4, 2)),
    ("What am I doing a week from Friday?", (2023, 3, 24), (2023, 3, 24)),
    ("What did I do this time last year?", (2022, 3, 12), (2022, 3, 18)),
    ("What did I do in the winter?", (2022, 12, 1), (2023, 2, 28)),
    ("What did I do on the 3rd?", (2023, 3, 3), (2023, 3, 3)),
    ("What did I do on 3 March?", (2023, 3, 3), (2023, 3, 3)),
])
def test_the_forms_chats_use_asked_on_15_march_2023(question, first, last):
    assert asked(question) == days(first, last)


def test_since_a_month_in_a_question_is_open_up_to_the_asker():
    assert asked("What did I do since January?") == (at(2023, 1, 1), INF)


# -- a day of the month after "by", "until" and "since", and a question's "before the 10th" ------------------------

@pytest.mark.parametrize("text, first, last", [
    ("I need it by the 20th.", (2023, 3, 20), (2023, 3, 20)),       # a deadline: the coming one, as "by Friday"
    ("I'm away until the 20th.", (2023, 3, 20), (2023, 3, 20)),
    ("I finished it by the 10th.", (2023, 3, 10), (2023, 3, 10)),   # reported: the last one
    ("I've been sick since the 10th.", (2023, 3, 10), (2023, 3, 15)),   # up to the day it is said
    ("I've been here since the 20th.", (2023, 2, 20), (2023, 3, 15)),   # the last 20th
])
def test_a_day_of_the_month_after_by_until_or_since(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("question, window", [
    ("What is due by the 20th?", days((2023, 3, 20), (2023, 3, 20))),
    ("What have I done since the 10th?", days((2023, 3, 10), (2023, 3, 15))),
    ("What did I do before the 10th?", (-INF, at(2023, 3, 10))),
    ("What did I do after the 10th?", (at(2023, 3, 11), INF)),
])
def test_a_question_before_after_or_since_a_day_of_the_month(question, window):
    assert asked(question) == window


@pytest.mark.parametrize("text", ["It was decided by the 3rd vote.", "We stayed until the 11th hour.",
                                  "I've known her since the 1st grade."])
def test_a_day_of_the_month_that_counts_a_thing_is_no_date(text):
    assert said(text) is None


@pytest.mark.parametrize("question, window", [
    # the latest summer begun before the asker's day is 2022's (June-August)
    ("What did I do before the summer?", (-INF, at(2022, 6, 1))),
    ("What did I do after the summer?", (at(2022, 9, 1), INF)),
    # the last Friday is 10 March, the last Monday 13 March
    ("What did I do before Friday?", (-INF, at(2023, 3, 10))),
    ("What did I do after Monday?", (at(2023, 3, 14), INF)),
    ("What should I finish before Friday?", (-INF, at(2023, 3, 17))),    # to come: the coming Friday
    # a time next to the weekday: the weekday stands for it, as a date does
    ("What did I do the day before Friday?", days((2023, 3, 10), (2023, 3, 10))),
])
def test_a_question_before_or_after_a_season_or_a_weekday(question, window):
    assert asked(question) == window


# -- weeks on from a day, as Britain says them ----------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("I'll see her a week today.", (2023, 3, 22)),            # was today, 15 March
    ("I'll see her a week tomorrow.", (2023, 3, 23)),         # was tomorrow, 16 March
    ("I'll see her a fortnight today.", (2023, 3, 29)),
    ("Two weeks today I start the new job.", (2023, 3, 29)),
    ("I'll see her two weeks on Friday.", (2023, 3, 31)),     # was the coming Friday, 17 March
    ("I'll see her three weeks Friday.", (2023, 4, 7)),
    ("I'll see her a week on Friday.", (2023, 3, 24)),        # as before
])
def test_weeks_on_from_a_day_are_counted_forward(text, day):
    assert said(text) == days(day, day)


@pytest.mark.parametrize("text", [
    "I've been sober a week today.",           # today is the day
    "We've been dating for 3 weeks today.",
])
def test_weeks_up_to_today_leave_today(text):
    assert said(text) == days((2023, 3, 15), (2023, 3, 15))


@pytest.mark.parametrize("text", ["I worked 40 hours a week Monday to Friday.", "Two weeks Monday through Friday."])
def test_a_rate_or_a_range_of_weekdays_is_no_day_weeks_on(text):
    assert said(text) is None


def test_a_question_a_week_today():
    assert asked("What am I doing a week today?") == days((2023, 3, 22), (2023, 3, 22))


@pytest.mark.parametrize("text", ["I saw her the other night.", "I saw her the other morning.",
                                  "I saw her the other day lol"])
def test_the_other_night_is_the_week_of_days_before_as_the_other_day(text):
    assert said(text) == days((2023, 3, 8), (2023, 3, 14))


@pytest.mark.parametrize("text", ["I work the other night shift.", "She stays up every other night."])
def test_the_other_night_before_a_noun_or_as_a_rate_is_no_date(text):
    assert said(text) is None


@pytest.mark.parametrize("text, first, last", [
    ("This time next year I'll be in Rome.", (2024, 3, 12), (2024, 3, 18)),   # was the whole of 2024
    ("Same time next week?", (2023, 3, 19), (2023, 3, 25)),                    # the week around 22 March
    ("This time last week I was in Rome.", (2023, 3, 5), (2023, 3, 11)),       # as before
    ("This time last year I was in Rome.", (2022, 3, 12), (2022, 3, 18)),
])
def test_this_time_next_year_is_the_week_around_that_day(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("text, first, last", [
    ("I was away from the 3rd to the 5th of April.", (2022, 4, 3), (2022, 4, 5)),    # was 3-5 March
    ("I'll be away from the 3rd to the 5th of April.", (2023, 4, 3), (2023, 4, 5)),
    ("I was away from the 3rd to the 5th of April 2022.", (2022, 4, 3), (2022, 4, 5)),   # was 5 April 2022
])
def test_a_range_of_days_of_a_month_named_is_that_months(text, first, last):
    assert said(text) == days(first, last)


def test_a_question_about_days_of_a_month_named_is_that_months():
    assert asked("What did I do between the 3rd and the 5th of February?") == days((2023, 2, 3), (2023, 2, 5))


# -- Thanksgiving said with its country --------------------------------------------------------------------------

@pytest.mark.parametrize("text, day", [
    ("We went to my parents' for Canadian Thanksgiving.", (2022, 10, 10)),    # the second Monday of October
    ("We went to my parents' for American Thanksgiving.", (2022, 11, 24)),    # the fourth Thursday of November
    ("I'll be home for US Thanksgiving.", (2023, 11, 23)),
    ("I'll be home for U.S. Thanksgiving.", (2023, 11, 23)),
    ("I'll be home for Canadian Thanksgiving Day.", (2023, 10, 9)),
    ("Canadian Thanksgiving was lovely.", (2022, 10, 10)),
])
def test_thanksgiving_said_with_its_country_is_that_countrys(text, day):
    assert said(text) == days(day, day)


@pytest.mark.parametrize("text", ["We spent Thanksgiving with my parents.", "For us thanksgiving was fun."])
def test_thanksgiving_alone_is_no_date(text):
    assert said(text) is None


def test_a_question_about_thanksgiving_of_a_country():
    assert asked("What did I do at Canadian Thanksgiving?") == days((2022, 10, 10), (2022, 10, 10))


# -- a period reaching ahead from the message, said of what is to come -----------------------------------------------

@pytest.mark.parametrize("text, first, last", [
    ("I'll do it in the next few days.", (2023, 3, 15), (2023, 3, 18)),
    ("I'm going to rest in the next couple of days.", (2023, 3, 15), (2023, 3, 17)),
    ("I'll do it over the next week.", (2023, 3, 15), (2023, 3, 22)),
    ("I'll finish it over the next two weeks.", (2023, 3, 15), (2023, 3, 29)),
    ("I'll do it within the next month.", (2023, 3, 15), (2023, 4, 15)),
])
def test_a_period_reaching_ahead_is_the_days_from_the_message_on(text, first, last):
    assert said(text) == days(first, last)


@pytest.mark.parametrize("text", [
    "Over the next few days I recovered.",      # after another time, told
    "I'll do it in the coming weeks or months.",  # how many is not said
    "We will grow over the next 10 years.",     # how long, not when
])
def test_a_period_ahead_told_unsaid_or_long_is_no_date(text):
    assert said(text) is None


def test_a_question_about_the_next_few_days():
    assert asked("What am I doing in the next few days?") == days((2023, 3, 15), (2023, 3, 18))


@pytest.mark.parametrize("text, want", [
    ("We stayed on Easter Island last year.", ((2022, 1, 1), (2022, 12, 31))),   # was Easter 2022, 15-18 April
    ("Easter Island was amazing.", None),
    ("On Christmas Island we saw crabs.", None),
])
def test_a_place_named_after_a_holiday_is_no_holiday(text, want):
    assert said(text) == (None if want is None else days(*want))


@pytest.mark.parametrize("text, day", [
    ("We went to the sales on Boxing Day.", (2022, 12, 26)),
    ("I'll be in Dublin for St. Patrick's Day.", (2023, 3, 17)),     # two days on
    ("I was in Dublin for St Patrick's Day.", (2022, 3, 17)),
    ("We partied on St Patricks Day.", (2022, 3, 17)),
])
def test_boxing_day_and_st_patricks_day_are_their_days(text, day):
    assert said(text) == days(day, day)


def test_a_question_about_a_range_of_months_lifts_what_was_said_in_it_every_year():
    from hippo import Memory

    said_at = [(at(2022, 4, 20, 9), "I painted the fence with Maya."),
               (at(2022, 7, 2, 9), "I painted the shed with Maya."),
               (at(2023, 1, 10, 9), "I painted the door with Maya."),
               (at(2023, 3, 15, 9), "I painted the gate with Maya.")]

    def store(**temporal) -> Memory:
        mem = Memory(None, config={"temporal": temporal} if temporal else None)
        mem.add_many({"text": t, "role": "user", "timestamp": ts} for ts, t in said_at)
        return mem

    with store() as on, store(window_boost=1.0) as off:
        boost = on.config.temporal.window_boost
        question = "What did I paint with Maya between March and May?"   # March-May 2022, and 2023's
        a = {h.text: h.score for h in on.search(question, k=10)}
        b = {h.text: h.score for h in off.search(question, k=10)}
        assert set(a) == {t for _, t in said_at} == set(b)
        for k, (_, text) in enumerate(said_at):
            assert a[text] == pytest.approx(b[text] * (boost if k in (0, 3) else 1.0), rel=1e-9), text


@pytest.mark.parametrize("text, want", [
    ("We were off between Christmas and New Year.", ((2022, 12, 25), (2023, 1, 1))),
    ("I'll be off between Christmas and New Year.", ((2023, 12, 25), (2024, 1, 1))),
    ("The office closes between Christmas and New Year's.", None),        # no tense: any year's
])
def test_between_christmas_and_new_year_is_that_week(text, want):
    assert said(text) == (None if want is None else days(*want))
    assert asked("What did I do between Christmas and New Year?") == days((2022, 12, 25), (2023, 1, 1))


# -- a range of days written with a dash ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("The conference was March 3-5.", ((2023, 3, 3), (2023, 3, 5))),
    ("The festival ran 3-5 March.", ((2023, 3, 3), (2023, 3, 5))),           # not the 5th alone
    ("I'll be in Rome 20-22 March.", ((2023, 3, 20), (2023, 3, 22))),
    ("I took two days off on Feb 13 \u2013 14.", ((2023, 2, 13), (2023, 2, 14))),
    ("We were away December 30 - January 2.", ((2022, 12, 30), (2023, 1, 2))),
    ("I'm away March 31-April 2.", ((2023, 3, 31), (2023, 4, 2))),
    ("like I did on May 3-4, 2024, when I cut back", ((2024, 5, 3), (2024, 5, 4))),
    ("#### March 23 - March 30, 2024:", ((2024, 3, 23), (2024, 3, 30))),
    ("The trip was 10-12 March 2022.", ((2022, 3, 10), (2022, 3, 12))),
    ("### Week of May 27 - June 2", ((2023, 5, 27), (2023, 6, 2))),
    # no range: a time of day, a range that does not go forward
    ("We met on March 3 - 5pm was the end.", ((2023, 3, 3), (2023, 3, 3))),
    ("March 5-3 was the score.", ((2023, 3, 5), (2023, 3, 5))),
    ("On March 2-3 times a week was plenty.", ((2023, 3, 2), (2023, 3, 2))),
])
def test_a_range_of_days_is_its_days(text, want):
    assert said(text) == days(*want)


def test_a_question_about_a_range_of_days_asks_about_its_days():
    assert asked("What did I read on March 3-5?") == days((2023, 3, 3), (2023, 3, 5))
    assert asked("What did I read on 3-5 March?") == days((2023, 3, 3), (2023, 3, 5))


# -- a weekday said alone in a sentence: by the tense of its clause, as "on Friday" ----------------------------------

@pytest.mark.parametrize("text, want", [
    ("See you Friday!", (2023, 3, 17)),                       # the coming Friday
    ("I saw her Tuesday.", (2023, 3, 14)),                    # the last Tuesday
    ("I'll see her Tuesday.", (2023, 3, 21)),
    ("We got back Sunday night.", (2023, 3, 12)),
    ("The party is Saturday.", (2023, 3, 18)),
    ("I got there Wednesday.", (2023, 3, 8)),                  # said on a Wednesday: as "on Wednesday" is
    ("We went to Paris Saturday and came back Monday.", (2023, 3, 11)),
    ("Can we meet Monday at 10 AM?", (2023, 3, 20)),
    ("Friday works for me.", (2023, 3, 17)),                   # a day proposed: the coming one
    ("Does Tuesday suit you?", (2023, 3, 21)),
])
def test_a_weekday_said_alone_is_placed_by_its_clause(text, want):
    assert said(text) == days(want, want)


@pytest.mark.parametrize("text", [
    "Friday is a long day.",                                   # no tense says which
    "I usually swim Monday.",                                  # a habit
    "I work Monday to Friday.", "I was off Monday, Tuesday and Wednesday.", "I'm free Monday-Wednesday.",
    "Black Friday deals were crazy.", "We watched Monday Night Football.",
    "I've added Saturday 10 AM sessions to my schedule.",     # a weekday that describes
    "I went every Friday.", "Friday's meeting went well.",
    "#### Sunday\n- Do the dishes.", "| Sunday | We will rest |",
    "We'll hike on [Selected Saturday] at 9 AM.",
    "Friday the 13th is a film.",                              # no tense says which Friday the 13th
])
def test_a_weekday_said_alone_dates_nothing_when_the_sentence_does_not_place_it(text):
    assert said(text) is None


# -- "a year and a half ago", "a decade ago", "the other week" -------------------------------------------------------

def week_of(y: int, mo: int, d: int) -> tuple[float, float]:
    return at(y, mo, d), at(y, mo, d) + 7 * DAY


@pytest.mark.parametrize("text, want", [
    ("I started a year and a half ago.", week_of(2021, 9, 12)),       # as "18 months ago": the week around 15 Sept
    ("I started one and a half years ago.", week_of(2021, 9, 12)),
    ("I quit two and a half years ago.", week_of(2020, 9, 12)),
    ("I met him a month and a half ago.", week_of(2023, 1, 23)),      # 45 days back: Sunday 29 January
    ("It was a week and a half ago.", week_of(2023, 2, 27)),          # 10 days back: Sunday 5 March
    ("We moved here a decade ago.", (at(2013, 1, 1), at(2014, 1, 1))),  # as "10 years ago"
    ("Two decades ago I was young.", (at(2003, 1, 1), at(2004, 1, 1))),
    ("I saw him the other week.", days((2023, 2, 27), (2023, 3, 12))),  # last week or the one before
    ("The other week I went to Rome.", days((2023, 2, 27), (2023, 3, 12))),
])
def test_halves_decades_and_the_other_week(text, want):
    assert said(text) == want


@pytest.mark.parametrize("text", ["We meet every other week.", "I read the other week's notes.",
                                  "The other week team won."])
def test_the_other_week_that_is_no_time(text):
    assert said(text) is None


# -- the halves of a year and the turn of the year ------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("I moved in the first half of the year.", ((2023, 1, 1), (2023, 6, 30))),     # begun: this year's
    ("I'll move in the second half of the year.", ((2023, 7, 1), (2023, 12, 31))),
    ("Sales dropped in the second half of 2022.", ((2022, 7, 1), (2022, 12, 31))),
    ("In the first half of last year I was sick.", ((2022, 1, 1), (2022, 6, 30))),
    ("We met at the turn of the year.", ((2022, 12, 25), (2023, 1, 7))),
    ("We'll meet at the turn of the year.", ((2023, 12, 25), (2024, 1, 7))),
])
def test_halves_of_a_year_and_the_turn_of_the_year(text, want):
    assert said(text) == days(*want)


@pytest.mark.parametrize("text", ["I scored in the first half of the game.", "It was built at the turn of the century.",
                                  "The turn of the year is a time to reflect."])
def test_halves_and_turns_that_are_no_time(text):
    assert said(text) is None


# -- the Christmas holidays and the new year ------------------------------------------------------------------------

JAN_10 = at(2023, 1, 10, 12)


@pytest.mark.parametrize("text, now, want", [
    ("We stayed in during the Christmas break.", MAR_15, ((2022, 12, 24), (2023, 1, 1))),
    ("I'm going home for the Christmas holidays.", MAR_15, ((2023, 12, 24), (2024, 1, 1))),
    ("We went skiing over the holidays.", JAN_10, ((2022, 12, 24), (2023, 1, 1))),
    ("What are you doing over the holidays?", at(2023, 11, 20, 12), ((2023, 12, 24), (2024, 1, 1))),
    ("I'll start the new job in the new year.", MAR_15, ((2024, 1, 1), (2024, 4, 30))),
    ("I started a diet in the new year.", MAR_15, ((2023, 1, 1), (2023, 4, 30))),
    ("I've been running since the new year.", MAR_15, ((2023, 1, 1), (2023, 3, 15))),
    ("We went to Edinburgh over the new year.", MAR_15, ((2022, 12, 31), (2023, 1, 1))),
])
def test_the_christmas_holidays_and_the_new_year(text, now, want):
    assert said(text, now) == days(*want)


@pytest.mark.parametrize("text, now", [
    ("We went skiing over the holidays.", MAR_15),        # said in March: as often a school's or the summer's
    ("I love the holiday season.", MAR_15),                # no tense says which
    ("The holidays were stressful.", JAN_10),
    ("I made a list of the new year's resolutions.", MAR_15),
    ("Happy new year! The new year has started well.", JAN_10),
])
def test_holidays_and_new_years_that_are_no_time(text, now):
    assert said(text, now) is None


@pytest.mark.parametrize("text", ["Thank God it's Friday!", "Yay, it is Friday.", "Tomorrow is Friday, right?"])
def test_a_weekday_named_as_the_day_it_is_is_not_another_day(text):
    assert [r.phrase for r in timeexpr.find(text, MAR_15) if "Friday" in r.phrase] == []


@pytest.mark.parametrize("question, want", [
    ("Who did I see Tuesday?", ((2023, 3, 14), (2023, 3, 14))),
    ("What did I do the other week?", ((2023, 2, 27), (2023, 3, 12))),
    ("What did I do in the first half of the year?", ((2023, 1, 1), (2023, 6, 30))),
    ("What did I do during the Christmas break?", ((2022, 12, 24), (2023, 1, 1))),
    ("What did I do over the new year?", ((2022, 12, 31), (2023, 1, 1))),
])
def test_a_question_reads_the_same_forms(question, want):
    assert asked(question) == days(*want)


@pytest.mark.parametrize("text, want", [
    ("I was away from March 3 to March 5.", ((2023, 3, 3), (2023, 3, 5))),
    ("I was away from March 3 to 5.", ((2023, 3, 3), (2023, 3, 5))),
    ("I was away March 3 through 5.", ((2023, 3, 3), (2023, 3, 5))),
    ("I was away between March 3 and 5.", ((2023, 3, 3), (2023, 3, 5))),
    ("I was away from 3 to 5 March.", ((2023, 3, 3), (2023, 3, 5))),     # not the 5th alone
    # two days, no range: a list, a count, a day changed for another
    ("I was away on March 3 and 5.", ((2023, 3, 3), (2023, 3, 3))),
    ("In March 3 to 5 people came.", ((2023, 3, 3), (2023, 3, 3))),
    ("I rescheduled the call from March 3 to March 6.", ((2023, 3, 3), (2023, 3, 3))),
])
def test_a_range_of_days_said_in_words(text, want):
    assert said(text) == days(*want)
