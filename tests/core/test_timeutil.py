"""ISO-8601 text reads the same on every supported Python (3.10's datetime.fromisoformat reads far less than 3.11's)."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone, tzinfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo import InvalidInput, Memory
from hippo.base.timeutil import parse_iso_compat, to_epoch

# 2024-01-15 10:30:00 UTC: 2024-01-01 is 1704067200, plus 14 days and 10.5 hours
_T = 1704067200 + 14 * 86400 + 10 * 3600 + 30 * 60


@pytest.mark.parametrize(("text", "epoch"), [
    ("2024-01-15T10:30:00Z", _T),
    ("2024-01-15T10:30:00.5Z", _T + 0.5),  # Go's RFC3339Nano drops trailing zeros
    ("2024-01-15T10:30:00.12+00:00", _T + 0.12),
    ("2024-01-15T10:30:00.1234567+00:00", _T + 0.123456),  # .NET's "o": seven digits, the seventh dropped
    ("2024-01-15T10:30:00+0530", _T - 19800),
    ("2024-01-15T10:30:00-05", _T + 18000),
    ("20240115T103000Z", _T),
    ("2024-01-15T1030", _T),
    ("2024-W03-1T10:30Z", _T),  # Monday of ISO week 3
    ("2024-01-15", _T - 10.5 * 3600),
])
def test_iso_timestamps_read_alike_on_every_python(text, epoch):
    assert to_epoch(text) == pytest.approx(epoch, abs=1e-6)


def test_a_timestamp_in_a_form_python_3_10_did_not_read_is_stored(tmp_path):
    with Memory(str(tmp_path / "m.db")) as mem:
        item = mem.add("Deploy finished.", timestamp="2024-01-15T10:30:00.5Z")
        assert item.timestamp == datetime(2024, 1, 15, 10, 30, 0, 500000, tzinfo=timezone.utc)
        assert [h.id for h in mem.search("deploy", since="20240115T1000Z", until="2024-01-15T11:00+00")] == [item.id]
        with pytest.raises(InvalidInput, match="timestamp"):
            mem.add("Never stored.", timestamp="2024-13-01T10:30Z")
        assert mem.count() == 1


_digits = st.integers(0, 10**9).map(str)


@st.composite
def _iso_texts(draw):
    """Well-formed ISO-8601 shapes with values in and out of range (month 13, week 53 of 2024, hour 24)."""
    two = st.integers(0, 99).map("{:02d}".format)
    year = draw(st.integers(1, 9999).map("{:04d}".format))
    basic = draw(st.booleans())
    if draw(st.booleans()):
        week, wday = draw(two), draw(st.none() | st.integers(0, 9).map(str))
        date = f"{year}{'' if basic else '-'}W{week}" + ("" if wday is None else f"{'' if basic else '-'}{wday}")
    else:
        date = f"{year}{draw(two)}{draw(two)}" if basic else f"{year}-{draw(two)}-{draw(two)}"
    if draw(st.booleans()):
        return date
    sep = draw(st.sampled_from("T t_é"))
    colon = "" if draw(st.booleans()) else ":"
    time = colon.join(draw(st.lists(two, min_size=1, max_size=3)))
    if draw(st.booleans()):
        time += draw(st.sampled_from(".,")) + draw(_digits)
    zone = draw(st.sampled_from(["", "Z", "+", "-"]))
    if zone in "+-" and zone:
        zone += colon.join(draw(st.lists(two, min_size=1, max_size=3)))
        if draw(st.booleans()):
            zone += "." + draw(_digits)
    return f"{date}{sep}{time}{zone}"


def _read(parse, text):
    try:
        dt = parse(text)
    except ValueError:
        return None
    return dt.replace(tzinfo=None), dt.utcoffset()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the reference is Python 3.11's datetime.fromisoformat")
@settings(max_examples=1000, deadline=None)
@given(_iso_texts())
def test_the_reader_for_python_3_10_reads_what_python_3_11_reads(text):
    assert _read(parse_iso_compat, text) == _read(datetime.fromisoformat, text)


def test_the_reader_for_python_3_10_refuses_what_is_no_date():
    for text in ["", "2024", "2024-01", "2024-1-15", "15/01/2024", "2024-01-15T", "2024-01-15T1", "2024-01-15T10:30z",
                 "2024-01-15T10:30+5", "２０２４-01-15", "2024-01-15T10:30:00+24:00"]:
        with pytest.raises(ValueError):
            parse_iso_compat(text)
    assert parse_iso_compat("2024-01-15T10:30-00:00").utcoffset() == timedelta(0)


class _Offset(tzinfo):
    """A time zone answering whatever offset it is given, as a hand-written tzinfo may."""

    def __init__(self, offset) -> None:
        self.offset = offset

    def utcoffset(self, dt):
        return self.offset


@pytest.mark.parametrize("offset", [timedelta(hours=30), 5, "+05:00"])
def test_a_time_zone_giving_no_valid_offset_is_refused_naming_the_argument(offset):
    mem = Memory()
    when = datetime(2023, 3, 3, 12, tzinfo=_Offset(offset))
    for call in (lambda: mem.add("x", timestamp=when), lambda: mem.add("x", event_time=when),
                 lambda: mem.search("x", since=when)):
        with pytest.raises(InvalidInput, match="timestamp|event_time|since"):
            call()
    assert mem.count() == 0
    # a valid one is read as given
    assert mem.add("y", timestamp=datetime(2023, 3, 3, 12, tzinfo=_Offset(timedelta(hours=-5)))).timestamp == \
        datetime(2023, 3, 3, 17, tzinfo=timezone.utc)


def test_message_time_names_the_field_and_keeps_the_value():
    """``hippo.message_time`` (for adapters) returns what ``add(timestamp=...)`` takes as given, and refuses by the
    name it is given and within the config's years."""
    import hippo

    for value in ("2023-05-08T23:30:00-05:00", 1683606660, datetime(2023, 5, 8, 23, 30)):
        assert hippo.message_time(value, "field") is value
    with pytest.raises(hippo.InvalidInput, match=r"^messages\[2\]\.when 'May' is not an ISO-8601"):
        hippo.message_time("May", "messages[2].when")
    with pytest.raises(hippo.InvalidInput, match="years 1900..2100"):
        hippo.message_time("2150-01-01", "when", hippo.Config(timestamp_max_year=2100))


def test_epoch_of_gives_the_epoch_seconds_of_every_form_a_message_time_takes():
    """``hippo.epoch_of`` (for adapters comparing a framework message's time with a stored one's): the instant _T
    (worked out by hand above) in each form, including what ``message_time`` gives on a zone's calendar; None for
    text no ISO-8601 reader takes and for a value that is no time."""
    import hippo

    new_york = hippo.time_zone("America/New_York")
    for value in (_T, float(_T), "2024-01-15T10:30:00+00:00", "2024-01-15T05:30:00-05:00", "2024-01-15T10:30:00",
                  datetime(2024, 1, 15, 10, 30), datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc),
                  hippo.message_time(_T, "when", zone=new_york)):
        assert hippo.epoch_of(value) == pytest.approx(_T, abs=1e-6), value
    for value in ("May", "", None, True, [_T], object()):
        assert hippo.epoch_of(value) is None, value


def test_message_time_reads_its_zone_and_config_as_the_rest_of_the_api_does():
    """A zone given by name raised TypeError from datetime ("tzinfo argument must be ... a tzinfo subclass") and a
    dict of settings was ignored (its years unchecked); the zone is read as ``hippo.time_zone`` reads one and the
    config as ``Memory(config=...)`` does, and what is neither is refused by name."""
    import hippo

    new_york = hippo.time_zone("America/New_York")
    for given in ("America/New_York", new_york):
        assert hippo.message_time(1683606660, "when", zone=given) == datetime(2023, 5, 9, 4, 31, tzinfo=timezone.utc)
        assert hippo.message_time(1683606660, "when", zone=given).utcoffset() == timedelta(hours=-4)
    for zone in ("Mars/Olympus", 5, object()):
        with pytest.raises(hippo.InvalidInput, match="^zone "):
            hippo.message_time(1683606660, "when", zone=zone)
    with pytest.raises(hippo.InvalidInput, match="years 1900..2100"):
        hippo.message_time("2150-01-01", "when", {"timestamp_max_year": 2100})
    assert hippo.message_time("1850-01-01", "when", {"timestamp_min_year": 1800}) == "1850-01-01"
    with pytest.raises(hippo.InvalidInput, match="^config "):
        hippo.message_time("2023-05-08", "when", "config.yaml")


@pytest.mark.parametrize(("value", "winter", "summer"), [
    ("America/New_York", -5, -4),  # EST / EDT
    ("Europe/London", 0, 1),
    ("+05:30", 5.5, 5.5),
    ("-0800", -8, -8),
    ("+05", 5, 5),
    ("Z", 0, 0),
    (timezone(timedelta(hours=9)), 9, 9),
])
def test_time_zone_reads_names_and_offsets(value, winter, summer):
    import hippo

    zone = hippo.time_zone(value)
    if isinstance(value, str) and "/" in value:
        zoneinfo = pytest.importorskip("zoneinfo")
        try:
            zoneinfo.ZoneInfo(value)
        except zoneinfo.ZoneInfoNotFoundError:  # pragma: no cover - a system without the time zone database
            pytest.skip("no IANA time zone database")
    assert datetime(2024, 1, 15, 12, tzinfo=timezone.utc).astimezone(zone).utcoffset() == timedelta(hours=winter)
    assert datetime(2024, 7, 15, 12, tzinfo=timezone.utc).astimezone(zone).utcoffset() == timedelta(hours=summer)
    assert hippo.time_zone(None) is None


class _Broken(tzinfo):
    def utcoffset(self, dt):
        return timedelta(days=2)  # Python refuses an offset of a day or more


@pytest.mark.parametrize("value", ["", "Mars/Olympus_Mons", "../../etc/passwd", "America", "+24:00", "+05:60",
                                   " UTC", "UTC\x00", 5, 5.5, b"UTC", True, _Broken()])
def test_time_zone_refuses_what_names_no_zone(value):
    import hippo

    with pytest.raises(InvalidInput, match=r"^where\.tz "):
        hippo.time_zone(value, "where.tz")


def test_message_time_puts_epoch_seconds_on_a_zone_s_calendar():
    import hippo

    zone = timezone(timedelta(hours=-5))
    assert hippo.message_time(_T, "t", None, zone) == datetime(2024, 1, 15, 5, 30, tzinfo=zone)
    assert hippo.message_time(_T, "t", None, zone).utcoffset() == timedelta(hours=-5)
    assert hippo.message_time(_T, "t") == _T


def test_message_time_puts_times_in_utc_on_a_zone_s_calendar():
    """A time that carries no calendar but UTC's (naive, "Z", +00:00, an aware UTC datetime) is that instant on the
    zone's calendar; one with another offset keeps it: the speaker said where they were."""
    import hippo

    zone = timezone(timedelta(hours=-5))
    local = datetime(2024, 1, 15, 5, 30, tzinfo=zone)  # _T, 10:30 UTC
    for value in ("2024-01-15T10:30:00", "2024-01-15T10:30:00Z", "2024-01-15T10:30:00+00:00",
                  datetime(2024, 1, 15, 10, 30), datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)):
        got = hippo.message_time(value, "t", None, zone)
        assert got == local and got.utcoffset() == timedelta(hours=-5), value
        assert hippo.message_time(value, "t") is value  # without a zone: as given
    for value in ("2024-01-15T11:30:00+01:00", datetime(2024, 1, 15, 16, 0, tzinfo=timezone(timedelta(hours=5.5))),
                  "2024-01-15", "20240115", "2024-W03-1"):  # another offset, and a day without a time: as given
        assert hippo.message_time(value, "t", None, zone) is value
