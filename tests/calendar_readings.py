"""What the time-expression tests compare with days worked out by hand from the calendar (hippo.text.timeexpr): a
UTC time, a period of whole days, a message's event time and all its times, and a question's window."""

from __future__ import annotations

from datetime import datetime, timezone

from hippo.text import timeexpr

DAY = timeexpr.DAY


def utc(*a: int) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


def days(first: tuple[int, int, int], last: tuple[int, int, int]) -> tuple[float, float]:
    """The period from the day ``first`` to the day ``last``, both included."""
    return utc(*first), utc(*last) + DAY


def reading(text: str, now: float) -> tuple[float, float] | None:
    """The event time of a message said at ``now``, as a period, or None."""
    ref = timeexpr.event_time(text, now)
    return None if ref is None else (ref.start, ref.end)


def readings(text: str, now: float) -> list[tuple[float, float]]:
    """Every time a message said at ``now`` holds, as periods, in its order."""
    return [(r.start, r.end) for r in timeexpr.find(text, now)]


def window(question: str, now: float) -> tuple[float, float] | None:
    """The period a question asked at ``now`` asks about, or None."""
    return timeexpr.analyze_query(question, now).window
