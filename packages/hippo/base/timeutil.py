"""Timestamps: accepted as datetime, epoch seconds or ISO-8601 text; stored as UTC epoch seconds."""

from __future__ import annotations

import functools
import math
import numbers
from datetime import date, datetime, timezone

from hippo.base.errors import InvalidInput

# English month names, spelled out: strftime's %B follows the process's locale (LC_TIME), which the application may
# have set, while the dates hippo writes into a context are English ("8 May 2023", not "8 Mai 2023")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December")


def iso_date(dt: datetime) -> str:
    """"2023-05-08": the year in four digits whatever it is (strftime's %Y writes the year 1 as "1" on glibc)."""
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}"


def iso_minute(dt: datetime) -> str:
    """"2023-05-08 14:30" (see :func:`iso_date`)."""
    return f"{iso_date(dt)} {dt.hour:02d}:{dt.minute:02d}"


def month_year(dt: datetime) -> str:
    """"May 2023": the month's English name and the year, whatever the process's locale."""
    return f"{MONTH_NAMES[dt.month - 1]} {dt.year}"


_EPOCH_DAY = date(1970, 1, 1).toordinal()

# the epoch seconds a datetime can be read back from: 0001-01-01T00:00 (included) to 10000-01-01T00:00 (excluded)
EPOCH_MIN = float((date(1, 1, 1).toordinal() - _EPOCH_DAY) * 86400)
EPOCH_END = float((date(9999, 12, 31).toordinal() + 1 - _EPOCH_DAY) * 86400)


def year_bounds(min_year: int, max_year: int) -> tuple[float, float]:
    """Epoch seconds of the first instant of ``min_year`` and of the year after ``max_year`` (UTC), 1 <= min_year <=
    max_year <= 9999: a stored time t is in those years when ``lo <= t < hi``."""
    return (float((date(min_year, 1, 1).toordinal() - _EPOCH_DAY) * 86400),
            float((date(max_year, 12, 31).toordinal() + 1 - _EPOCH_DAY) * 86400))


def to_epoch(value: object, name: str = "timestamp", *, min_year: int = 1900, max_year: int = 2200) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidInput(f"{name} must be a datetime, epoch seconds or an ISO-8601 string, got bool")
    if isinstance(value, datetime):
        # a tzinfo whose utcoffset() is None leaves the datetime naive (Python's own rule): read as UTC
        dt = value if value.utcoffset() is not None else value.replace(tzinfo=timezone.utc)
    elif isinstance(value, numbers.Real):  # int and float, and numpy's numbers (a column of epoch seconds)
        try:
            seconds = float(value)
        except (OverflowError, ValueError) as exc:  # an int or a Fraction past any float
            raise InvalidInput(f"{name} {value!r} is out of range") from exc
        if not math.isfinite(seconds):
            raise InvalidInput(f"{name} must be finite, got {value!r}")
        try:
            dt = datetime.fromtimestamp(seconds, tz=timezone.utc)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidInput(f"{name} {value!r} is out of range") from exc
    elif isinstance(value, str):
        try:
            # RFC 3339 writes UTC as "Z" or "z" (as it allows "t" for "T", which fromisoformat reads)
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(f"{name} {value!r} is not an ISO-8601 date/time") from exc
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
    else:
        raise InvalidInput(f"{name} must be a datetime, epoch seconds or an ISO-8601 string, got {type(value).__name__}")
    try:  # the range holds for the stored time, which is UTC: "9999-12-31T23:00-05:00" is in the year 10000
        utc = dt.astimezone(timezone.utc)
    except (OverflowError, ValueError) as exc:
        raise InvalidInput(f"{name} {dt.isoformat()} is out of range (years {min_year}..{max_year} in UTC)") from exc
    if not min_year <= utc.year <= max_year:
        raise InvalidInput(f"{name} {dt.isoformat()} is out of range (years {min_year}..{max_year} in UTC)")
    epoch = utc.timestamp()
    lo, hi = year_bounds(min_year, max_year)
    if not lo <= epoch < hi:
        # stored as float seconds, whose step is 2**-15 s at the year 9999: the last microseconds of the last year
        # round up into the next one, which a datetime of the year 10000 could not be read back as
        raise InvalidInput(f"{name} {dt.isoformat()} is out of range: stored as epoch seconds it rounds to {epoch!r}, "
                           f"past the end of the year {max_year} (the range is years {min_year}..{max_year} in UTC)")
    return epoch


def to_datetime(epoch: float | None) -> datetime | None:
    if epoch is None or (isinstance(epoch, float) and math.isnan(epoch)):
        return None
    return _utc(epoch)


@functools.lru_cache(maxsize=1 << 14)
def _utc(epoch: float) -> datetime:
    # datetimes are immutable: the times of the messages a recall returns again are converted once
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


@functools.lru_cache(maxsize=4096)
def _day_strings(day: int) -> tuple[str, str]:
    """("2023-05-08", "8 May 2023") of a UTC day number (formatting is per day: cached for the hot paths)."""
    dt = datetime.fromtimestamp(day * 86400, tz=timezone.utc)
    return iso_date(dt), f"{dt.day} {month_year(dt)}"


def _day(epoch: float | None) -> int | None:
    if epoch is None or (isinstance(epoch, float) and math.isnan(epoch)):
        return None
    return int(epoch // 86400)


def fmt_date(epoch: float | None) -> str:
    day = _day(epoch)
    return _day_strings(day)[0] if day is not None else "undated"


def fmt_datetime(epoch: float | None) -> str:
    dt = to_datetime(epoch)
    return iso_minute(dt) if dt else "undated"


def fmt_day(epoch: float | None) -> str:
    day = _day(epoch)
    return _day_strings(day)[1] if day is not None else "undated"
