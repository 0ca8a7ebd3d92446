"""Timestamps: accepted as datetime, epoch seconds or ISO-8601 text; stored as UTC epoch seconds."""

from __future__ import annotations

import functools
import math
import numbers
import re
import sys
from datetime import date, datetime, timedelta, timezone, tzinfo

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


# ISO-8601 as Python 3.11's datetime.fromisoformat reads it: extended and basic dates (2024-01-15, 20240115) and
# week dates (2024-W03-1, 2024W031, 2024-W03); one character other than a digit before the time; hours with optional
# minutes and seconds (10, 10:30, 10:30:00, 1030, 103000); a fraction of a second of any length ("." or ",", digits
# past the sixth dropped); an offset (Z, +05, +05:30, +0530, +05:30:15.5). Python 3.10's fromisoformat reads only
# what its isoformat() writes: no Z, no basic forms, fractions of exactly 3 or 6 digits, offsets with a colon.
_ISO_DATE = (r"(?P<y>[0-9]{4})(?:-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})|(?P<bm>[0-9]{2})(?P<bd>[0-9]{2})"
             r"|-W(?P<w>[0-9]{2})(?:-(?P<wd>[0-9]))?|W(?P<bw>[0-9]{2})(?P<bwd>[0-9])?)")
_ISO_TIME = (r"(?P<H>[0-9]{2})(?::(?P<M>[0-9]{2})(?::(?P<S>[0-9]{2}))?|(?P<bM>[0-9]{2})(?P<bS>[0-9]{2})?)?"
             r"(?:[.,](?P<f>[0-9]+))?")
_ISO_ZONE = (r"(?P<z>Z|(?P<sign>[+-])(?P<zH>[0-9]{2})(?::(?P<zM>[0-9]{2})(?::(?P<zS>[0-9]{2}))?"
             r"|(?P<bzM>[0-9]{2})(?P<bzS>[0-9]{2})?)?(?:[.,](?P<zf>[0-9]+))?)")
_ISO = re.compile(rf"{_ISO_DATE}(?:[^0-9]{_ISO_TIME}{_ISO_ZONE}?)?")


def _micro(digits: str | None) -> int:
    return int((digits or "")[:6].ljust(6, "0"))


def parse_iso_compat(text: str) -> datetime:
    """``text`` read as Python 3.11's ``datetime.fromisoformat`` reads it, on any Python; ``ValueError`` for text
    that is no ISO-8601 date or date and time, or names a day, time or offset that does not exist."""
    m = _ISO.fullmatch(text)
    if m is None:
        raise ValueError(f"Invalid isoformat string: {text!r}")
    g = m.groupdict()
    year = int(g["y"])
    if g["w"] or g["bw"]:
        day = date.fromisocalendar(year, int(g["w"] or g["bw"]), int(g["wd"] or g["bwd"] or 1))
    else:
        day = date(year, int(g["m"] or g["bm"]), int(g["d"] or g["bd"]))
    if g["H"] is None:
        return datetime(day.year, day.month, day.day)
    tz = None
    if g["z"] == "Z":
        tz = timezone.utc
    elif g["z"]:
        whole = timedelta(hours=int(g["zH"]), minutes=int(g["zM"] or g["bzM"] or 0),
                          seconds=int(g["zS"] or g["bzS"] or 0))
        offset = whole + timedelta(microseconds=_micro(g["zf"])) if whole else whole  # +00:00:00.5 is UTC in 3.11
        tz = timezone(-offset if g["sign"] == "-" else offset)
    return datetime(day.year, day.month, day.day, int(g["H"]), int(g["M"] or g["bM"] or 0),
                    int(g["S"] or g["bS"] or 0), _micro(g["f"]), tzinfo=tz)


if sys.version_info >= (3, 11):
    parse_iso = datetime.fromisoformat
else:
    def parse_iso(text: str) -> datetime:
        """``datetime.fromisoformat`` of Python 3.11 (see :func:`parse_iso_compat`)."""
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            return parse_iso_compat(text)


def to_epoch(value: object, name: str = "timestamp", *, min_year: int = 1900, max_year: int = 2200) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidInput(f"{name} must be a datetime, epoch seconds or an ISO-8601 string, got bool")
    if isinstance(value, datetime):
        try:  # a time zone may answer an offset Python refuses (a day or more, a number instead of a timedelta)
            offset = value.utcoffset()
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"{name} {value!r}: its time zone gives no offset from UTC ({exc})") from exc
        # a tzinfo whose utcoffset() is None leaves the datetime naive (Python's own rule): read as UTC
        dt = value if offset is not None else value.replace(tzinfo=timezone.utc)
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
            dt = _read_iso(value)
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


@functools.lru_cache(maxsize=256)
def _read_iso(text: str) -> datetime:
    """An ISO-8601 timestamp as given (kept: :func:`to_epoch` and :func:`utc_offset` read the same text in turn)."""
    # RFC 3339 writes UTC as "Z" or "z" (as it allows "t" for "T", which fromisoformat reads)
    return parse_iso(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))


def utc_offset(value: object) -> float | None:
    """The offset from UTC, in seconds east, that a timestamp was given with: an aware datetime's, an ISO-8601 text's
    ("2023-03-03T23:30-05:00": -18000.0; "Z": 0.0); None for a naive datetime or text, epoch seconds and None, whose
    local calendar is unknown. Call it on a value :func:`to_epoch` accepted."""
    if isinstance(value, datetime):
        off = value.utcoffset()
    elif isinstance(value, str):
        try:
            off = _read_iso(value).utcoffset()
        except ValueError:
            return None
    else:
        return None
    return None if off is None else off.total_seconds()


def is_utc_offset(value: object) -> bool:
    """Whether ``value`` is an offset from UTC in seconds as :func:`utc_offset` gives it (strictly within a day)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and -86400 < value < 86400


def check_utc_offset(value: object, name: str = "utc_offset") -> float | None:
    """``value`` as an offset from UTC in seconds (None stays None); ``InvalidInput`` naming ``name`` otherwise."""
    if value is None:
        return None
    if not is_utc_offset(value):
        raise InvalidInput(f"{name} must be seconds east of UTC within a day (-86400 < s < 86400) or None, got "
                           f"{value!r}")
    return float(value)


def with_utc_offset(timestamp: object, offset: object, name: str = "utc_offset") -> object:
    """An export record's ``timestamp`` (epoch seconds) with the ``offset`` it was given with, as the aware datetime
    that ``add`` reads both from; ``timestamp`` as it is without an offset. ``InvalidInput`` naming ``name`` for an
    offset that is none."""
    off = check_utc_offset(offset, name)
    if off is None or isinstance(timestamp, bool) or not isinstance(timestamp, numbers.Real):
        return timestamp
    try:
        return datetime.fromtimestamp(float(timestamp), tz=timezone(timedelta(seconds=off)))
    except (OverflowError, OSError, ValueError):
        return timestamp  # no time a datetime holds: add says so


# a fixed offset from UTC as a time zone: "+05:30", "-0800", "+05"
_FIXED_OFFSET = re.compile(r"(?P<sign>[+-])(?P<h>[0-9]{2})(?::?(?P<m>[0-9]{2}))?")


def time_zone(value: object, name: str = "timezone") -> tzinfo | None:
    """``value`` as the time zone whose calendar a user's days are on: an IANA name (``"America/New_York"``, read by
    :mod:`zoneinfo`, its summer and winter offsets both), a fixed offset from UTC (``"+05:30"``, ``"-0800"``,
    ``"Z"``) or a ``tzinfo``; None stays None. ``InvalidInput`` naming ``name`` for anything else."""
    if value is None:
        return None
    if isinstance(value, tzinfo):
        try:  # a tzinfo must answer an offset Python takes for any instant
            off = datetime.now(timezone.utc).astimezone(value).utcoffset()
        except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
            raise InvalidInput(f"{name} {value!r}: the time zone gives no offset from UTC ({exc})") from None
        if off is None:
            raise InvalidInput(f"{name} {value!r}: the time zone gives no offset from UTC")
        return value
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be an IANA time zone name ('America/New_York'), an offset from UTC "
                           f"('+05:30') or None, got {type(value).__name__} {value!r}")
    if value in ("Z", "z"):
        return timezone.utc
    m = _FIXED_OFFSET.fullmatch(value)
    if m is not None:
        hours, minutes = int(m["h"]), int(m["m"] or 0)
        if hours > 23 or minutes > 59:
            raise InvalidInput(f"{name} {value!r} is no offset from UTC (hours 00..23, minutes 00..59)")
        offset = timedelta(hours=hours, minutes=minutes)
        return timezone(-offset if m["sign"] == "-" else offset)
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(value)
    except (KeyError, ValueError, OSError, ImportError) as exc:  # unknown (ZoneInfoNotFoundError), "../x", a folder
        raise InvalidInput(f"{name} must be an IANA time zone name ('America/New_York'), an offset from UTC "
                           f"('+05:30') or None, got {value!r} ({type(exc).__name__})") from None


def on_calendar(value: object, zone: tzinfo | None) -> object:
    """A message time ``value`` (one :func:`to_epoch` accepted) put on ``zone``'s calendar when it carries no calendar
    but UTC's: epoch seconds, a naive datetime or text (read as UTC), "Z" and an offset of zero (what
    ``datetime.now(timezone.utc)``, ``datetime.utcnow()`` and JavaScript's ``toISOString()`` write, whoever the
    speaker is) become the aware datetime of the same instant in ``zone``. A time with another offset keeps it (the
    speaker said where they were), a date without a time ("2024-03-05") stays the day it names, and any value is
    returned as it is when ``zone`` is None."""
    if zone is None or isinstance(value, bool):
        return value
    try:
        if isinstance(value, numbers.Real):
            return datetime.fromtimestamp(float(value), tz=zone)
        if isinstance(value, str):
            day_only = _ISO.fullmatch(value.strip())
            if day_only is not None and day_only["H"] is None:
                return value  # a day, no instant: put on another calendar it would be the day before or after
            value_dt = _read_iso(value)
        elif isinstance(value, datetime):
            value_dt = value
        else:
            return value
        offset = value_dt.utcoffset()
        if offset is None:
            return value_dt.replace(tzinfo=timezone.utc).astimezone(zone)
        return value_dt.astimezone(zone) if not offset else value
    except (OverflowError, OSError, ValueError):
        return value  # an instant past what a datetime holds in that zone: add reads it as it is


def to_datetime(epoch: float | None, offset: float | None = None) -> datetime | None:
    """The instant ``epoch`` as the wall clock of ``offset`` (seconds east of UTC) shows it, in UTC when the offset is
    None or NaN; None when ``epoch`` is None or NaN."""
    if epoch is None or (isinstance(epoch, float) and math.isnan(epoch)):
        return None
    if offset is None or offset != offset:
        return _utc(epoch)
    return datetime.fromtimestamp(epoch, tz=timezone(timedelta(seconds=offset)))


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
