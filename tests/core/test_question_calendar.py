"""The days a question names, read as a message's are: "the day after tomorrow", "two weeks from today", "a week
from Friday" point forward from the memory's latest message (hippo.text.timeexpr.analyze_query); in a store whose
latest message keeps its offset from UTC, they are the days of that message's calendar (hippo.engine.truth.rank);
an event_time given with an offset, and the times a timeline gives, keep it.

The expected days are worked out by hand from the calendar: Wednesday 10 May 2023 is the memory's latest day."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hippo import InvalidInput, Memory
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


# The asker's calendar: in a store whose messages keep their offset from UTC, a question's days are those of the
# calendar the latest message was said on, and a message is said in them from that calendar's midnights.
# 23:30 on Friday 3 March 2023 in New York (UTC-05:00) is 04:30 UTC on Saturday 4 March; 23:30 on Sunday 5 March in
# New York is 04:30 UTC on Monday 6 March; 08:00 on Saturday 4 March in Tokyo (UTC+09:00) is 23:00 UTC on 3 March.
NY_LATE_FRIDAY = datetime.fromisoformat("2023-03-03T23:30:00-05:00").timestamp()
NY_LATE_SUNDAY = datetime.fromisoformat("2023-03-05T23:30:00-05:00").timestamp()
TOKYO_MORNING = datetime.fromisoformat("2023-03-04T08:00:00+09:00").timestamp()
H = 3600


@pytest.mark.parametrize("question, now, offset, days", [
    ("What did I do yesterday?", NY_LATE_FRIDAY, -5 * H, ((2023, 3, 2), (2023, 3, 3))),
    ("What did I do this morning?", NY_LATE_FRIDAY, -5 * H, ((2023, 3, 3), (2023, 3, 4))),
    ("What will I do tomorrow?", NY_LATE_FRIDAY, -5 * H, ((2023, 3, 4), (2023, 3, 5))),
    ("What did I do last week?", NY_LATE_SUNDAY, -5 * H, ((2023, 2, 20), (2023, 2, 27))),  # asked on a Sunday
    ("What did I do last Friday?", NY_LATE_SUNDAY, -5 * H, ((2023, 3, 3), (2023, 3, 4))),
    ("What did I do yesterday?", TOKYO_MORNING, 9 * H, ((2023, 3, 3), (2023, 3, 4))),
    ("What is on the day after tomorrow?", TOKYO_MORNING, 9 * H, ((2023, 3, 6), (2023, 3, 7))),
    # UTC's calendar without an offset, as before
    ("What did I do yesterday?", NY_LATE_FRIDAY, None, ((2023, 3, 3), (2023, 3, 4))),
    ("What did I do last week?", NY_LATE_SUNDAY, None, ((2023, 2, 27), (2023, 3, 6))),
    ("What did I do yesterday?", TOKYO_MORNING, None, ((2023, 3, 2), (2023, 3, 3))),
])
def test_a_questions_days_are_the_askers_own(question, now, offset, days):
    q = timeexpr.analyze_query(question, now, offset)
    assert q.window == (utc(*days[0]), utc(*days[1]))
    assert q.offset == offset


def test_an_offset_that_is_none_is_refused_and_named():
    from hippo.base.errors import InvalidInput
    for bad in (86400.0, float("nan"), "-05:00", True):
        with pytest.raises(InvalidInput, match="offset"):
            timeexpr.analyze_query("What did I do yesterday?", NY_LATE_FRIDAY, bad)


NEW_YORK_DAYS = [
    ("2023-03-02T08:00:00-05:00", "I went to the bakery."),     # 13:00 UTC on 2 March
    ("2023-03-02T20:00:00-05:00", "I went to the museum."),     # 01:00 UTC on 3 March
    ("2023-03-03T12:00:00-05:00", "I went to the cinema."),     # 17:00 UTC on 3 March
    ("2023-03-03T23:30:00-05:00", "Good night!"),               # 04:30 UTC on 4 March: the latest
]


def _said_on(day: tuple[int, int, int], as_utc: bool) -> list[str]:
    """The reference: the messages said on ``day`` of New York's calendar (of UTC's with ``as_utc``)."""
    out = []
    for ts, text in NEW_YORK_DAYS:
        d = datetime.fromisoformat(ts)
        d = d.astimezone(timezone.utc) if as_utc else d
        if (d.year, d.month, d.day) == day:
            out.append(text)
    return sorted(out)


@pytest.mark.parametrize("question, day", [
    ("What did I do yesterday?", (2023, 3, 2)),
    ("What did I do this morning?", (2023, 3, 3)),
    ("What did I do today?", (2023, 3, 3)),
    ("What did I do on 2 March 2023?", (2023, 3, 2)),   # a date written out: New York's 2 March too
])
def test_a_question_finds_what_was_said_on_the_askers_day(question, day):
    with Memory(None) as mem:
        for ts, text in NEW_YORK_DAYS:
            mem.add(text, speaker="Ann", timestamp=ts)
        want = _said_on(day, as_utc=False)
        assert want
        assert sorted(h.text for h in mem.search(question, k=10)) == want
        assert sorted(m.text for m in mem.recall(question, budget_tokens=200).messages) == want


@pytest.mark.parametrize("question, day", [
    ("What did I do yesterday?", (2023, 3, 3)),      # UTC's day before 4 March
    ("What did I do on 2 March 2023?", (2023, 3, 2)),
])
def test_a_store_without_offsets_reads_a_question_on_utcs_calendar(question, day):
    with Memory(None) as mem:
        for ts, text in NEW_YORK_DAYS:  # the same instants, given in UTC without an offset
            mem.add(text, speaker="Ann", timestamp=datetime.fromisoformat(ts).astimezone(timezone.utc)
                    .replace(tzinfo=None))
        assert sorted(h.text for h in mem.search(question, k=10)) == _said_on(day, as_utc=True)


def test_a_message_is_said_on_the_day_of_the_clock_it_was_said_by():
    # said at 23:30 on 1 March in New York in winter (UTC-05:00: 04:30 UTC on 2 March) and asked in summer, when the
    # latest message has UTC-04:00: New York's 1 March all the same, and no message of the 2nd
    with Memory(None) as mem:
        mem.add("I went to the opera.", speaker="Ann", timestamp="2023-03-01T23:30:00-05:00")
        mem.add("I went to the market.", speaker="Ann", timestamp="2023-03-02T12:00:00-05:00")
        mem.add("Summer is here.", speaker="Ann", timestamp="2023-07-01T12:00:00-04:00")
        assert [h.text for h in mem.search("What did I do on 1 March 2023?", k=10)] == ["I went to the opera."]
        assert [h.text for h in mem.search("What did I do on 2 March 2023?", k=10)] == ["I went to the market."]


def test_an_event_a_message_dates_is_on_its_day_for_the_askers_question():
    with Memory(None) as mem:
        # said on 3 March in New York: "yesterday" is 2 March, kept as every date is
        mem.add("I visited the zoo yesterday.", speaker="Ann", timestamp="2023-03-03T09:00:00-05:00")
        mem.add("I went to the cinema.", speaker="Ann", timestamp="2023-03-03T12:00:00-05:00")
        mem.add("Good night!", speaker="Ann", timestamp="2023-03-03T23:30:00-05:00")
        assert [h.text for h in mem.search("What did I do yesterday?", k=10)] == ["I visited the zoo yesterday."]


# A time the caller gives for the event (``add(..., event_time=...)``) keeps the offset it was given with: 22:00 on
# 3 March 2023 in New York is 03:00 UTC on 4 March, and the event is on 3 March.
NY_EVENING = "2023-03-03T22:00:00-05:00"


def test_an_event_time_given_with_its_offset_is_on_that_calendars_day(tmp_path):
    ny = timezone(timedelta(hours=-5))
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        item = mem.add("The server crashed.", speaker="Ann", timestamp="2023-03-05T10:00:00-05:00",
                       event_time=NY_EVENING)
        mem.add("All good again.", speaker="Ann", timestamp="2023-03-05T12:00:00-05:00")
        assert mem.get(item.id).metadata["event_time_utc_offset"] == -5 * H
    for _ in range(2):  # and again after a reopen
        with Memory(path) as mem:
            assert "Ann (3 March 2023): The server crashed." in mem.recall("server crash", budget_tokens=200).text
            hit = mem.search("server crash")[0]
            assert hit.event_time == datetime(2023, 3, 3, 22, tzinfo=ny)
            assert hit.event_time.utcoffset() == timedelta(hours=-5)
            entry = mem.timeline("server")[0]
            assert (entry["event"], entry["event_time"].utcoffset()) == ("3 March 2023", timedelta(hours=-5))
            assert [h.text for h in mem.search("What happened on 3 March 2023?")] == ["The server crashed."]
            assert mem.search("What happened on 4 March 2023?") == []


def test_an_event_time_without_an_offset_is_on_utcs_day_as_before():
    with Memory(None) as mem:
        mem.add("The server crashed.", speaker="Ann", timestamp="2023-03-05T15:00:00",
                event_time="2023-03-04T03:00:00")
        assert "Ann (4 March 2023): The server crashed." in mem.recall("server crash", budget_tokens=200).text
        assert mem.search("server crash")[0].event_time == datetime(2023, 3, 4, 3, tzinfo=timezone.utc)


def test_an_event_time_given_again_without_an_offset_drops_the_old_one():
    with Memory(None) as mem:
        item = mem.add("The server crashed.", speaker="Ann", timestamp="2023-03-05T15:00:00",
                       metadata={"event_time_utc_offset": 3600.0}, event_time="2023-03-04T03:00:00")
        assert "event_time_utc_offset" not in mem.get(item.id).metadata
        mem.update(item.id, metadata={"event_time": datetime.fromisoformat(NY_EVENING).timestamp(),
                                      "event_time_utc_offset": -5 * H})
        assert "Ann (3 March 2023): The server crashed." in mem.recall("server crash", budget_tokens=200).text
        mem.update(item.id, metadata={"event_time": datetime.fromisoformat(NY_EVENING).timestamp()})
        assert "Ann (4 March 2023): The server crashed." in mem.recall("server crash", budget_tokens=200).text


@pytest.mark.parametrize("bad", [86400, "-05:00", True])
def test_an_event_time_offset_that_is_none_is_refused_and_named(bad):
    from hippo.base.errors import InvalidInput
    with Memory(None) as mem:
        with pytest.raises(InvalidInput, match="event_time_utc_offset"):
            mem.add("x", timestamp="2023-03-05", metadata={"event_time": 1677898800.0, "event_time_utc_offset": bad})
        first = mem.add("y", timestamp="2023-03-05")
        with pytest.raises(InvalidInput, match="event_time_utc_offset"):
            mem.update(first.id, metadata={"event_time_utc_offset": bad})
        assert mem.get(first.id).metadata == {}


def test_a_timeline_and_the_updates_give_times_with_the_offset_they_were_said_with():
    ny = timezone(timedelta(hours=-5))
    said = datetime(2023, 3, 3, 23, 30, tzinfo=ny)       # 04:30 UTC on 4 March
    moved = datetime(2023, 6, 3, 23, 30, tzinfo=ny)
    with Memory(None) as mem:
        first = mem.add("I live in Boston.", speaker="Ann", timestamp=said.isoformat())
        mem.add("I moved to Denver, now I live in Denver.", speaker="Ann", timestamp=moved.isoformat())
        entry = next(e for e in mem.timeline("Ann") if e["id"] == first.id)
        # as get() gives it: the same instant, on the speaker's clock
        assert entry["timestamp"] == mem.get(first.id).timestamp == said
        assert entry["timestamp"].utcoffset() == entry["event_time"].utcoffset() == timedelta(hours=-5)
        assert entry["event_time"].date() == said.date()
        assert mem.search("Boston")[0].event_time.utcoffset() == timedelta(hours=-5)
        link = mem.contradictions(include_updates=True)[0]
        assert (link["old_time"], link["new_time"]) == (said, moved)
        assert link["old_time"].utcoffset() == link["new_time"].utcoffset() == timedelta(hours=-5)
    with Memory(None) as mem:  # without an offset: UTC, as before
        first = mem.add("I live in Boston.", speaker="Ann", timestamp="2023-03-04T04:30:00")
        entry = mem.timeline("Ann")[0]
        assert entry["timestamp"].utcoffset() == entry["event_time"].utcoffset() == timedelta(0)


@pytest.mark.parametrize("text, want", [
    # said on Wed 10 May 2023, the days typed as chats type them
    ("We meet the day after tmrw.", "12 May 2023"),
    ("we meet the day after 2moro!", "12 May 2023"),
    ("I saw her the day before yday", "8 May 2023"),
    ("see u 2 days from 2day", "12 May 2023"),
    ("a week from tmrw we leave", "18 May 2023"),
    ("Two weeks from tommorow I fly out", "25 May 2023"),
])
def test_the_days_counted_from_a_chats_spelling_of_today_and_tomorrow(text, want):
    ref = timeexpr.event_time(text, MAY_10)
    assert ref is not None and ref.label() == want
    question = f"What happens {ref.phrase}?"
    assert timeexpr.analyze_query(question, MAY_10).window == (ref.start, ref.end)


def test_a_month_bounded_before_the_first_year_read_is_no_period():
    # "before May" asked in March of the year 1 is the May of the year 0, which no datetime holds
    with Memory(None, config={"timestamp_min_year": 1}) as mem:
        mem.add("I planted roses.", speaker="Ann", timestamp="0001-03-01T10:00:00")
        assert "I planted roses." in mem.recall("What did I plant before May?", budget_tokens=100).text
        assert timeexpr.analyze_query("What did I plant before May?", utc(1, 3, 1, 10)).window is None


def test_a_questions_days_are_counted_from_the_memory_as_it_stood_at_as_of():
    with Memory(None) as mem:
        mem.add("I went to the bakery.", speaker="Ann", timestamp="2023-03-01T10:00:00")
        then = mem.add("I went to the museum.", speaker="Ann", timestamp="2023-03-02T10:00:00").created_at
        mem.add("I went to the cinema.", speaker="Ann", timestamp="2023-03-10T10:00:00")
        mem.add("I went to the zoo.", speaker="Ann", timestamp="2023-03-11T10:00:00")
        # as it stood then, its latest message was said on 2 March: "yesterday" is 1 March
        assert [h.text for h in mem.search("What did I do yesterday?", as_of=then)] == ["I went to the bakery."]
        assert [m.text for m in mem.recall("What did I do yesterday?", as_of=then, budget_tokens=200).messages] \
            == ["I went to the bakery."]
        assert [h.text for h in mem.search("What did I do yesterday?")] == ["I went to the cinema."]


# When the question is asked (``asked_at``): a live agent's turn may come days after the last message stored, and
# its "yesterday" is the day before the turn, on the asker's calendar. Sunday 22 and Monday 23 November 2026: tennis
# and chess, each at 18:00 UTC.
def _games() -> Memory:
    mem = Memory(None)
    mem.add("I played tennis in the park", timestamp="2026-11-22T18:00:00+00:00")
    mem.add("I played chess in the park", timestamp="2026-11-23T18:00:00+00:00")
    return mem


GAMES_Q = "What did I play in the park yesterday?"


@pytest.mark.parametrize("asked_at, first", [
    (None, "tennis"),                                            # from the latest message: Monday's yesterday
    ("2026-11-24T09:00:00+00:00", "chess"),                      # asked on Tuesday
    (datetime(2026, 11, 24, 9, tzinfo=timezone.utc).timestamp(), "chess"),
    # 02:00 UTC on Tuesday is 21:00 on Monday in New York: its yesterday is Sunday
    (datetime(2026, 11, 23, 21, tzinfo=timezone(timedelta(hours=-5))), "tennis"),
])
def test_a_question_s_days_count_from_when_it_is_asked(asked_at, first):
    with _games() as mem:
        hits = mem.search(GAMES_Q, k=2, asked_at=asked_at)
        assert first in hits[0].text
        assert first in mem.recall(GAMES_Q, budget_tokens=30, asked_at=asked_at).messages[0].text
        assert first in mem.search_many(["default"], GAMES_Q, k=2, asked_at=asked_at)[0].text


def test_asked_at_moves_only_the_question_s_days():
    # a question that names no day ranks as it does without asked_at
    with _games() as mem:
        plain = [(h.id, h.score) for h in mem.search("What did I play in the park?", k=2)]
        later = [(h.id, h.score) for h in mem.search("What did I play in the park?", k=2,
                                                    asked_at="2030-01-01T00:00:00Z")]
        assert plain == later


@pytest.mark.parametrize("bad", ["tomorrow", float("nan"), True, "0999-01-01", [2026]])
def test_asked_at_is_checked_by_name(bad):
    with _games() as mem:
        with pytest.raises(InvalidInput, match="asked_at"):
            mem.search(GAMES_Q, asked_at=bad)
        with pytest.raises(InvalidInput, match="asked_at"):
            mem.recall(GAMES_Q, asked_at=bad)
