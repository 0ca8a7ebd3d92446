"""Hand-worked days for the adapters' time zones: Sam went bowling on Monday 4 March 2024 and swimming on Tuesday
5 March 2024, both at 19:00 in New York (EST, -05:00). At 02:00 UTC on Wednesday 6 March it is 21:00 on Tuesday 5 March
in New York: the user's "yesterday" is Monday (bowling), UTC's is Tuesday (swimming)."""

from __future__ import annotations

from datetime import datetime, timezone

QUESTION = "What did I do with Sam yesterday?"
BOWLING = "I went bowling with Sam"
SWIMMING = "I went swimming with Sam"
WEDNESDAY_2_UTC = datetime(2024, 3, 6, 2, 0, tzinfo=timezone.utc)  # Tuesday 5 March, 21:00 in New York


def add_days(view) -> None:
    """The two days' messages, each with its New York offset."""
    view.add(BOWLING, timestamp="2024-03-04T19:00:00-05:00")
    view.add(SWIMMING, timestamp="2024-03-05T19:00:00-05:00")


def frozen(instant: datetime) -> type[datetime]:
    """A ``datetime`` whose ``now()`` is ``instant`` (in the zone asked for; naive: the machine's local time), to put
    in place of a module's ``datetime`` name."""

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return instant.astimezone(tz) if tz is not None else instant.astimezone().replace(tzinfo=None)

    return Frozen


def new_york():
    """America/New_York; the calling test module is skipped where there is no IANA time zone database."""
    import pytest

    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        return zoneinfo.ZoneInfo("America/New_York")
    except zoneinfo.ZoneInfoNotFoundError:  # pragma: no cover - a system without the time zone database
        pytest.skip("no IANA time zone database", allow_module_level=True)


def clock_setter(monkeypatch, module):
    """``set_to(instant)``: the ``datetime`` of ``module`` answers ``now()`` with ``instant`` for the test."""

    def set_to(instant: datetime) -> None:
        monkeypatch.setattr(module, "datetime", frozen(instant))

    return set_to


# A question asked on Tuesday 24 November 2026 about "yesterday", after Sunday's tennis and Monday's chess (18:00 UTC
# each): asked on Tuesday, "yesterday" is Monday (chess); counted from the latest message stored (Monday), Sunday.
PARK_QUESTION = "What did I play in the park yesterday?"
TENNIS = "I played tennis in the park"
CHESS = "I played chess in the park"
TUESDAY_9_UTC = datetime(2026, 11, 24, 9, 0, tzinfo=timezone.utc)


def add_park_days(view) -> None:
    """Sunday's tennis and Monday's chess, in UTC."""
    view.add(TENNIS, timestamp="2026-11-22T18:00:00+00:00")
    view.add(CHESS, timestamp="2026-11-23T18:00:00+00:00")
