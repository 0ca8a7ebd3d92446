"""A period the question names ("in April 2022", "on April 6") lifts the messages said in it by the window factor,
and those that tell of an event in it by the share of the event's time inside it (hippo.engine.truth.rank.adjust).
A question that names a date without its year ("the titles I mentioned for April 6-7", "in May") means that date
in whichever year of the history it happened: in a history of more than a year, every copy of the period that the
history covers gets the window factor, not only the one nearest the last message (hippo.text.timeexpr.each_year,
hippo.engine.truth.rank.adjust). Checked against hand-computed periods and against the same store with the factor
at 1."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.text import timeexpr


def utc(*a: int) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


LAST = utc(2025, 3, 20)
FIRST = utc(2024, 3, 3)


@pytest.mark.parametrize("question, yearless", [
    ("Which titles did I mention for April 6-7 and April 8?", True),
    ("Which outdoor spot did Melanie visit in May?", True),
    ("How many scenes had I filmed by July 5?", True),
    ("What did I do on April 6, 2024?", False),
    ("What did Mel do in May 2023?", False),
    ("What did I do last May?", False),         # the May before now: its year is told by "last"
    ("What did I do last week?", False),
    ("What did I do on April 6 and in May 2023?", False),  # one of the dates has its year: the others follow it
])
def test_a_date_without_its_year_is_read_by_hand(question: str, yearless: bool) -> None:
    q = timeexpr.analyze_query(question, LAST)
    assert q.window is not None
    assert q.yearless is yearless


def test_each_year_copies_the_period_into_the_years_the_history_covers() -> None:
    q = timeexpr.analyze_query("Which titles did I mention for April 6-7 and April 8?", LAST)
    # nearest the last message (20 March 2025) is the coming April, which no message was said in
    assert q.window == (utc(2025, 4, 6), utc(2025, 4, 9))
    assert timeexpr.each_year(q.window, FIRST, LAST) == [(utc(2025, 4, 6), utc(2025, 4, 9)),
                                                         (utc(2024, 4, 6), utc(2024, 4, 9))]
    # a history that began after April 2024 holds no other April
    assert timeexpr.each_year(q.window, utc(2024, 5, 1), LAST) == [q.window]
    # three years of history: the two earlier Aprils, oldest first after the window itself
    assert timeexpr.each_year(q.window, utc(2022, 1, 1), LAST) == [
        (utc(2025, 4, 6), utc(2025, 4, 9)), (utc(2022, 4, 6), utc(2022, 4, 9)),
        (utc(2023, 4, 6), utc(2023, 4, 9)), (utc(2024, 4, 6), utc(2024, 4, 9))]
    # no known extent: the window alone
    assert timeexpr.each_year(q.window, None, LAST) == [q.window]
    assert timeexpr.each_year(q.window, FIRST, None) == [q.window]
    assert timeexpr.each_year(q.window, float("nan"), LAST) == [q.window]


@pytest.mark.parametrize("window, first, last", [
    ((2.0, 1.0), FIRST, LAST), ((1.0, float("nan")), FIRST, LAST), ([1.0, 2.0], FIRST, LAST), ((1.0,), FIRST, LAST),
    (("a", "b"), FIRST, LAST), ((1.0, 2.0), "2024", LAST), ((1.0, 2.0), FIRST, object()),
])
def test_each_year_refuses_what_is_not_a_period_and_names_it(window, first, last) -> None:
    with pytest.raises(InvalidInput, match="window|first|last"):
        timeexpr.each_year(window, first, last)


def test_each_year_moves_29_february_to_the_28th_of_a_common_year() -> None:
    day = (utc(2024, 2, 29), utc(2024, 3, 1))
    assert timeexpr.each_year(day, utc(2023, 1, 1), utc(2024, 12, 31)) == [day, (utc(2023, 2, 28), utc(2023, 3, 1))]


HISTORY = [
    (utc(2024, 4, 6, 20), "We watched Coco and Paddington at the family movie marathon tonight."),
    (utc(2024, 9, 10, 20), "We watched Moana at the family movie night, the kids loved it."),
    (utc(2025, 3, 1, 20), "We watched Zootopia at the family movie night."),
]


def _store(**temporal) -> Memory:
    mem = Memory(None, config={"temporal": temporal} if temporal else None)
    mem.add_many({"text": t, "role": "user", "timestamp": ts} for ts, t in HISTORY)
    return mem


def test_the_april_of_an_earlier_year_gets_the_window_factor() -> None:
    on, off = _store(), _store(window_boost=1.0)
    boost = on.config.temporal.window_boost
    assert boost > 1.0
    question = "Which movies did we watch at the family movie marathon on April 6?"
    a = {h.text: h.score for h in on.search(question, k=10)}
    b = {h.text: h.score for h in off.search(question, k=10)}
    assert set(a) == {t for _, t in HISTORY} == set(b)
    for text in a:
        expected = b[text] * boost if text == HISTORY[0][1] else b[text]
        assert a[text] == pytest.approx(expected, rel=1e-9), text
    assert on.search(question, k=1)[0].text == HISTORY[0][1]
    # the year named: April 2025, which no message was said in or tells of; April 2024 stays as it was
    named = "Which movies did we watch at the family movie marathon on April 6, 2025?"
    assert {h.text: h.score for h in on.search(named, k=10)} == pytest.approx(
        {h.text: h.score for h in off.search(named, k=10)})


DATED = [
    (utc(2023, 5, 4, 15), "Last year I took a solo trip to Spain and came back a different person."),   # 2022
    (utc(2022, 4, 15, 19), "Guess what, I dyed my hair purple for the solo trip last week!"),           # said in it
    (utc(2022, 9, 1, 12), "The solo trip photos came out great, I printed a few."),                     # no date
    (utc(2023, 6, 1, 9), "Next month I will take another solo trip, this time to Portugal."),           # July 2023
]


def test_an_event_dated_by_a_longer_period_gets_the_window_factor_by_its_share_inside() -> None:
    def store(**temporal) -> Memory:
        mem = Memory(None, config={"temporal": temporal} if temporal else None)
        mem.add_many({"text": t, "role": "user", "speaker": "Caroline", "timestamp": ts} for ts, t in DATED)
        return mem

    on, off = store(), store(window_boost=1.0)
    boost = on.config.temporal.window_boost
    question = "What did Caroline do for her solo trip in April 2022?"
    a = {h.text: h.score for h in on.search(question, k=10)}
    b = {h.text: h.score for h in off.search(question, k=10)}
    assert set(a) == {t for _, t in DATED} == set(b)
    april_of_2022 = 30 / 365  # the share of "last year" (all of 2022) inside April 2022
    expected = {DATED[0][1]: 1 + (boost - 1) * april_of_2022, DATED[1][1]: boost, DATED[2][1]: 1.0, DATED[3][1]: 1.0}
    for text, factor in expected.items():
        assert a[text] == pytest.approx(b[text] * factor, rel=1e-9), text


def test_a_message_said_in_the_named_period_is_a_candidate_past_the_candidate_limit() -> None:
    # Twelve messages that match the question's words better than the one said on the day it names.
    rows = [{"text": f"Caroline made dinner for Melanie and the kids, the {k}th dinner this year, pasta again.",
             "role": "user", "speaker": "Caroline", "timestamp": utc(2022, 1, 3 + k, 19)} for k in range(12)]
    day = "Caroline baked a lemon cake for Melanie's birthday party."
    rows.append({"text": day, "role": "user", "speaker": "Caroline", "timestamp": utc(2022, 5, 25, 18)})
    question = "What did Caroline make for Melanie on 25 May, 2022?"

    def found(limit: int, **temporal) -> list[str]:
        config = {"retrieval": {"candidate_limit": limit}, "temporal": temporal}
        with Memory(None, config=config) as mem:
            mem.add_many(rows)
            return [h.text for h in mem.search(question, k=3)]

    # Every match a candidate: the day's message, lifted by the period's factor, comes first.
    assert found(400)[0] == day
    # Five candidates by their words alone would leave it out; the period brings it in, and it still comes first.
    assert found(5)[0] == day
    # Without time handling there is no period, and five candidates hold only the better word matches.
    assert day not in found(5, enabled=False)
    # search_many does the same in each namespace it searches
    with Memory(None, namespace="a", config={"retrieval": {"candidate_limit": 5}}) as mem:
        mem.add_many(rows)
        mem.using("b").add_many(rows[:6])
        hits = mem.search_many(["a", "b"], question, k=3)
        assert (hits[0].text, hits[0].namespace) == (day, "a")


DIARY = [
    (utc(2023, 4, 28, 9), "Finally fixed the leaking kitchen tap."),
    (utc(2023, 5, 3, 18), "Went hiking with my sister, the view was amazing."),
    (utc(2023, 5, 20, 11), "Baked sourdough for the first time."),
    (utc(2023, 6, 2, 8), "Started a new job at the bakery."),
    (utc(2023, 6, 9, 19), "Dinner with the team after my first days there."),
]


@pytest.mark.parametrize("question, month", [
    ("What did I do in May 2023?", 5),
    ("What did I do in May?", 5),          # the history's May: no year given
    ("What happened in June 2023?", 6),
    ("What happened last week?", 6),       # the week before the last message's (5-11 June): 29 May - 4 June
])
def test_a_question_made_of_a_period_alone_finds_what_was_said_in_it(question: str, month: int) -> None:
    with Memory(None) as mem:
        mem.add_many({"text": t, "role": "user", "timestamp": ts} for ts, t in DIARY)
        q = timeexpr.analyze_query(question, DIARY[-1][0])
        lo, hi = q.window
        said = [t for ts, t in DIARY if lo <= ts < hi]  # the reference: the messages said in the period
        assert said and all(datetime.fromtimestamp(ts, timezone.utc).month == month
                            for ts, t in DIARY if t in said)
        assert sorted(h.text for h in mem.search(question, k=10)) == sorted(said)
        assert sorted(m.text for m in mem.recall(question, budget_tokens=200).messages) == sorted(said)
    # a question that names no period and no word of the diary still finds nothing
    with Memory(None) as mem:
        mem.add_many({"text": t, "role": "user", "timestamp": ts} for ts, t in DIARY)
        assert mem.search("What did I do?", k=10) == []


INF = float("inf")


@pytest.mark.parametrize("question, window", [
    ("What did I work on before May 2023?", (-INF, utc(2023, 5, 1))),
    ("What did I work on until April 2023?", (-INF, utc(2023, 5, 1))),
    ("What did I work on prior to May 2023?", (-INF, utc(2023, 5, 1))),
    ("What happened after June 2023?", (utc(2023, 7, 1), INF)),
    ("What did I work on since March 2023?", (utc(2023, 3, 1), INF)),
    # a time next to the date: the date stands for it, as before
    ("Where was Tim in the week before 16 November 2023?", (utc(2023, 11, 16), utc(2023, 11, 17))),
    ("What did I do the day after May 5, 2023?", (utc(2023, 5, 5), utc(2023, 5, 6))),
    ("What did John do before his trip in August 2023?", (utc(2023, 8, 1), utc(2023, 9, 1))),
    ("What did I work on in May 2023?", (utc(2023, 5, 1), utc(2023, 6, 1))),
    # a month bounded without a day or a year: the latest such month up to the last message (20 March 2025)
    ("What did I work on before May?", (-INF, utc(2024, 5, 1))),
    ("What happened after February?", (utc(2025, 3, 1), INF)),
    ("Until March, what did I read?", (-INF, utc(2025, 4, 1))),
    # a year bounded without a month: the whole year is the bound
    ("What did I work on before 2023?", (-INF, utc(2023, 1, 1))),
    ("What happened after 2022?", (utc(2023, 1, 1), INF)),
    ("Until 2023, where did I live?", (-INF, utc(2024, 1, 1))),
    ("What did I work on since 2023?", (utc(2023, 1, 1), INF)),
])
def test_a_period_before_or_after_a_date_is_open_on_that_side_by_hand(question, window) -> None:
    q = timeexpr.analyze_query(question, LAST)
    assert q.window == window
    assert not q.yearless


WORK = [
    (utc(2023, 3, 10, 9), "Worked on the budget report for the board."),
    (utc(2023, 4, 12, 9), "Worked on the hiring plan for the new team."),
    (utc(2023, 5, 15, 9), "Worked on the launch checklist with Dana."),
    (utc(2023, 6, 20, 9), "Worked on the customer survey results."),
]


@pytest.mark.parametrize("question, lifted", [
    ("What did I work on before May 2023?", {0, 1}),
    ("What did I work on after 2022?", {0, 1, 2, 3}),
    ("What did I work on before 2023?", set()),
    ("What did I work on since April 2023?", {1, 2, 3}),
    ("What did I work on after April 2023?", {2, 3}),
])
def test_an_open_period_lifts_what_was_said_on_its_side(question, lifted) -> None:
    def store(**temporal) -> Memory:
        mem = Memory(None, config={"temporal": temporal} if temporal else None)
        mem.add_many({"text": t, "role": "user", "timestamp": ts} for ts, t in WORK)
        return mem

    on, off = store(), store(window_boost=1.0)
    boost = on.config.temporal.window_boost
    a = {h.text: h.score for h in on.search(question, k=10)}
    b = {h.text: h.score for h in off.search(question, k=10)}
    assert set(a) == {t for _, t in WORK} == set(b)
    for k, (_, text) in enumerate(WORK):
        assert a[text] == pytest.approx(b[text] * (boost if k in lifted else 1.0), rel=1e-9), text


def test_a_relative_period_that_a_date_anchors_is_resolved_against_that_date() -> None:
    # "last weekend before April 10, 2023" is the weekend of 8-9 April 2023, not the one before the last message
    q = timeexpr.analyze_query("What did Maria participate in last weekend before April 10, 2023?", LAST)
    assert q.window == (utc(2023, 4, 8), utc(2023, 4, 10))
    q = timeexpr.analyze_query("What did I do last week before May 5, 2023?", LAST)
    assert q.window == (utc(2023, 4, 24), utc(2023, 5, 1))
    # without the anchor, "last weekend" is the one before the memory's latest timestamp (20 March 2025, a Thursday)
    q = timeexpr.analyze_query("What did Maria participate in last weekend?", LAST)
    assert q.window == (utc(2025, 3, 15), utc(2025, 3, 17))



@pytest.mark.parametrize("question, window", [
    # 23 January 2022 is a Sunday: its last Friday is the 21st; the window was 23 January 2022 to 15 March 2025
    ("What did Joanna just finish last Friday on 23 January, 2022?", (utc(2022, 1, 21), utc(2022, 1, 24))),
    # 6 November 2023 is a Monday: last week is 30 October-5 November; the window reached 20 March 2025
    ("What was Tim's huge writing issue last week,as mentioned on November 6, 2023?",
     (utc(2023, 10, 30), utc(2023, 11, 7))),
    ("What did I cook yesterday, as mentioned on 9 November, 2022?", (utc(2022, 11, 8), utc(2022, 11, 10))),
    ("What did I do last weekend, as I said on the 10th of April 2023?", (utc(2023, 4, 8), utc(2023, 4, 11))),
])
def test_a_relative_period_said_on_a_date_is_resolved_against_it_and_keeps_it(question, window) -> None:
    assert timeexpr.analyze_query(question, LAST).window == window


def _scores_with_and_without_the_window(said, question: str) -> tuple[dict[str, float], dict[str, float], float]:
    """``question``'s search scores by text over ``said`` ((timestamp, text) pairs of one user), with the window
    factor and without it (``window_boost`` 1), and the factor."""

    def store(**temporal) -> Memory:
        mem = Memory(None, config={"temporal": temporal} if temporal else None)
        mem.add_many({"text": t, "role": "user", "timestamp": ts} for ts, t in said)
        return mem

    on, off = store(), store(window_boost=1.0)
    return ({h.text: h.score for h in on.search(question, k=10)}, {h.text: h.score for h in off.search(question, k=10)},
            on.config.temporal.window_boost)


def test_a_relative_period_said_on_a_date_lifts_that_time_only() -> None:
    said = [(utc(2022, 1, 23, 10), "I just finished my screenplay last Friday, so happy!"),
            (utc(2022, 6, 1, 10), "I finished a screenplay draft and sent it out."),
            (utc(2025, 3, 14, 10), "Finished the screenplay edits today.")]
    a, b, boost = _scores_with_and_without_the_window(said, "What did I just finish last Friday on 23 January, 2022?")
    assert set(a) == {t for _, t in said} == set(b)
    # said on the day named (and telling of its last Friday): the whole factor; said months later: none (the window
    # reached from 23 January 2022 to the Friday before the last message, and lifted all three alike)
    assert a[said[0][1]] == pytest.approx(b[said[0][1]] * boost, rel=1e-9)
    assert a[said[1][1]] == pytest.approx(b[said[1][1]], rel=1e-9)
    assert a[said[2][1]] == pytest.approx(b[said[2][1]], rel=1e-9)


def test_a_count_after_before_is_no_year() -> None:
    assert timeexpr.analyze_query("Did I write my essay before 2000 words?", LAST).window is None
    assert timeexpr.analyze_query("What happened after 2000 steps a day?", LAST).window is None
    assert timeexpr.analyze_query("After 2022 ended, what did I do?", LAST).window == (utc(2023, 1, 1), INF)


def test_before_may_the_verb_is_no_period() -> None:
    assert timeexpr.analyze_query("Should I call her before may be too late?", LAST).window is None
    assert timeexpr.analyze_query("What did I work on before May?", None).window is None  # no "now" to resolve it


def test_a_state_since_a_year_gets_the_share_of_its_days_in_the_year_asked_about() -> None:
    # "since 2019" said on 10 May 2024 is the days from 1 January 2019 up to 10 May 2024, that day included (1,957
    # days); a question about 2022 holds 365 of them: the state held then, as surely as any of its other years
    said = [(utc(2024, 5, 10, 12), "I've lived in Boston since 2019."),
            (utc(2022, 7, 1, 12), "We moved the office to Boston."),
            (utc(2024, 5, 11, 12), "Boston is lovely in spring.")]
    a, b, boost = _scores_with_and_without_the_window(said, "Where did I live in 2022, Boston?")
    share = 365 / ((utc(2024, 5, 11) - utc(2019, 1, 1)) / 86400)
    assert a[said[0][1]] == pytest.approx(b[said[0][1]] * (1 + (boost - 1) * share), rel=1e-9)
    assert a[said[1][1]] == pytest.approx(b[said[1][1]] * boost, rel=1e-9)      # said in 2022
    assert a[said[2][1]] == pytest.approx(b[said[2][1]], rel=1e-9)              # neither
