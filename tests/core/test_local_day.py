"""The speaker's own calendar day: a timestamp given with its offset from UTC resolves "yesterday", "today",
"tonight", "last Friday" on the date the speaker lived, and the offset is kept by the store, across a reopen, an
export and an import; a store written before it was kept still opens and reads as before.

The expected dates are worked out by hand from the calendar: 23:30 on Friday 3 March 2023 in New York (UTC-05:00) is
04:30 UTC on Saturday 4 March; 08:00 on Saturday 4 March 2023 in Tokyo (UTC+09:00) is 23:00 UTC on Friday 3 March."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import hippo
from hippo import CorruptData, InvalidInput, Memory
from hippo.cli import sources
from hippo.text import timeexpr

DATA = Path(__file__).parent / "data"
NEW_YORK = "2023-03-03T23:30:00-05:00"
TOKYO = "2023-03-04T08:00:00+09:00"


def note(text: str, timestamp) -> tuple[str, str]:
    """(the day header, the line of ``text``) of a recall's context: a resolved date other than the header's is shown
    next to the speaker."""
    mem = Memory()
    mem.add(text, speaker="Ann", timestamp=timestamp)
    header, line = mem.recall(text, budget_tokens=200).text.splitlines()
    return header, line


@pytest.mark.parametrize("text, timestamp, want", [
    ("I went to the gym yesterday.", NEW_YORK, "2 March 2023"),
    ("I went to the gym yesterday.", datetime(2023, 3, 3, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
     "2 March 2023"),
    ("I'm going to bed early tonight.", NEW_YORK, "3 March 2023"),
    ("We fly out tomorrow.", NEW_YORK, "4 March 2023"),   # the UTC day, but the header shows the speaker's: noted
    ("I went to the gym yesterday.", TOKYO, "3 March 2023"),
    ("I had sushi this morning.", TOKYO, "4 March 2023"),
    ("I finished the report last Friday.", TOKYO, "3 March 2023"),   # said on a Saturday: the day before
    # UTC's calendar, as before: "Z", a naive time and epoch seconds
    ("I went to the gym yesterday.", "2023-03-04T04:30:00Z", "3 March 2023"),
    ("I went to the gym yesterday.", "2023-03-04T04:30:00", "3 March 2023"),
    ("I went to the gym yesterday.", 1677904200.0, "3 March 2023"),
    ("I went to the gym yesterday.", datetime(2023, 3, 4, 4, 30), "3 March 2023"),
])
def test_relative_days_are_the_speakers_own(text, timestamp, want):
    header, line = note(text, timestamp)
    # the day the expression means: next to the speaker, or the header's when it is that day (then not repeated)
    assert line == f"Ann ({want}): {text}" or (line == f"Ann: {text}" and header == f"[{want}]")


def test_find_reads_the_day_of_the_offset_and_utc_without_one():
    now = datetime(2023, 3, 4, 4, 30, tzinfo=timezone.utc).timestamp()
    assert timeexpr.find("yesterday", now)[0].label() == "3 March 2023"
    assert timeexpr.find("yesterday", now, -18000.0)[0].label() == "2 March 2023"
    # a local day is the same interval as the date written out
    assert timeexpr.find("yesterday", now, -18000.0)[0].start == timeexpr.find("2023-03-02", None)[0].start
    # a local day past the years a datetime holds: the UTC one is read
    end = datetime(9999, 12, 31, 23, 0, tzinfo=timezone.utc).timestamp()
    assert timeexpr.find("on 2 May 9999, yesterday", end, 50400.0) == timeexpr.find("on 2 May 9999, yesterday", end)
    first = datetime(1, 1, 1, 1, 0, tzinfo=timezone.utc).timestamp()
    assert timeexpr.find("on 2 May 9999, yesterday", first, -7200.0) == \
        timeexpr.find("on 2 May 9999, yesterday", first)


def test_the_timestamp_comes_back_with_its_offset_and_survives_a_reopen(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.add("I went to the gym yesterday.", speaker="Ann", timestamp=NEW_YORK)
        mem.add("I went to the pool yesterday.", speaker="Bob", timestamp=1677904200.0)
        items = mem.list()
        assert items[0].timestamp.isoformat() == NEW_YORK
        assert items[1].timestamp.isoformat() == "2023-03-04T04:30:00+00:00"
    for _ in range(2):  # from the change feed, then from the snapshot the first reopen saved
        with Memory(path) as mem:
            text = mem.recall("gym pool yesterday", budget_tokens=200).text
            assert "Ann (2 March 2023): I went to the gym yesterday." in text
            assert "Bob (3 March 2023): I went to the pool yesterday." in text
            assert mem.list()[0].timestamp.isoformat() == NEW_YORK
            mem.add("filler", timestamp=1677904300.0)  # a change, so that close saves a snapshot


def test_export_and_import_keep_the_offset(tmp_path):
    src = Memory()
    src.add("I went to the gym yesterday.", speaker="Ann", timestamp="2023-03-03T23:30:00.123456-05:00")
    src.add("I went to the pool yesterday.", speaker="Bob", timestamp=1677904200.5)
    out = tmp_path / "e.jsonl"
    src.export(out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert records[0]["utc_offset"] == -18000.0 and "utc_offset" not in records[1]
    dst = Memory()
    dst.import_(out)
    assert [(i.timestamp, i.timestamp.utcoffset()) for i in dst.list()] == \
        [(i.timestamp, i.timestamp.utcoffset()) for i in src.list()]
    assert "Ann (2 March 2023)" in dst.recall("gym", budget_tokens=100).text
    # the command line reads an export file the same way
    items = [r.item for r in sources.read_source(str(out)).records]
    again = Memory()
    again.add_many(items)
    assert [i.timestamp.isoformat() for i in again.list()] == [i.timestamp.isoformat() for i in src.list()]


@pytest.mark.parametrize("bad", [90000, "-05:00", True])
def test_an_export_with_a_bad_offset_is_refused_whole(tmp_path, bad):
    out = tmp_path / "e.jsonl"
    src = Memory()
    src.add("hello", timestamp=NEW_YORK)
    src.export(out)
    lines = out.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[1])
    rec["utc_offset"] = bad
    out.write_text(lines[0] + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    dst = Memory()
    with pytest.raises(CorruptData, match="utc_offset"):
        dst.import_(out)
    assert dst.count() == 0


def _before_the_offsets(path: Path) -> None:
    """The store at ``path`` as the last release wrote it: schema 4 without the utc_offset column."""
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE messages DROP COLUMN utc_offset")
    db.commit()
    db.close()


def _meta_and_columns(path: Path) -> tuple[str, set[str]]:
    db = sqlite3.connect(path)
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        return version, {r[1] for r in db.execute("PRAGMA table_info(messages)")}
    finally:
        db.close()


def test_a_store_written_before_the_offsets_opens_and_reads_as_before(tmp_path):
    path = tmp_path / "v4.db"
    with Memory(path) as mem:
        mem.add("I went to the gym yesterday.", speaker="Ann", timestamp=1677904200.0)
    _before_the_offsets(path)
    with Memory(path, read_only=True) as mem:  # read as it is
        assert mem._rt.store.version == 4
        assert mem.list()[0].timestamp.isoformat() == "2023-03-04T04:30:00+00:00"
        assert "Ann (3 March 2023)" in mem.recall("gym", budget_tokens=100).text
    assert "utc_offset" not in _meta_and_columns(path)[1]
    with Memory(path) as mem:  # the column added: the old message has no offset, a new one keeps it
        mem.add("I went to the pool yesterday.", speaker="Bob", timestamp=NEW_YORK)
        text = mem.recall("gym pool", budget_tokens=200).text
        assert "Ann (3 March 2023)" in text and "Bob (2 March 2023)" in text
    # the schema keeps its number, so releases that refuse any newer one still open the store
    version, columns = _meta_and_columns(path)
    assert version == str(hippo.store.sqlite.SCHEMA_VERSION) == "4" and "utc_offset" in columns


def test_a_schema_2_store_is_upgraded_and_keeps_offsets_after(tmp_path):
    path = tmp_path / "v2.db"
    shutil.copy(DATA / "store_v2.db", path)
    with Memory(path, namespace="alpha") as mem:
        n = mem.count()
        assert all(it.timestamp is None or it.timestamp.utcoffset() == timedelta(0) for it in mem.list())
        mem.add("I went to the gym yesterday.", speaker="Ann", timestamp=NEW_YORK)
    with Memory(path, namespace="alpha", read_only=True) as mem:
        assert mem.count() == n + 1
        assert mem.list()[-1].timestamp.isoformat() == NEW_YORK


def test_an_offset_is_checked_where_it_is_given():
    with pytest.raises(InvalidInput, match="utc_offset"):
        hippo.base.timeutil.with_utc_offset(1677904200.0, 86400)
    assert hippo.base.timeutil.with_utc_offset(1677904200.0, None) == 1677904200.0


def test_a_contexts_day_headers_are_the_speakers_days():
    # said at 23:00 and 23:30 on 1 May in New York (04:00 and 04:30 UTC on 2 May) and at 08:00 on 2 May there
    with Memory(None) as mem:
        mem.add("I adopted a greyhound named Biscuit yesterday", timestamp="2024-05-01T23:00-05:00")
        mem.add("tomorrow I take Biscuit to the vet", timestamp="2024-05-01T23:30-05:00")
        mem.add("Walked Biscuit in the park this morning", timestamp="2024-05-02T08:00-05:00")
        lines = mem.recall("Biscuit", budget_tokens=200).text.splitlines()
    assert lines == ["[1 May 2024]",
                     "user (30 April 2024): I adopted a greyhound named Biscuit yesterday",
                     "user (2 May 2024): tomorrow I take Biscuit to the vet",
                     "[2 May 2024]",
                     "user: Walked Biscuit in the park this morning"]  # "this morning" is the header's day
    with Memory(None) as mem:  # the same instants without offsets: UTC's days, as before
        for ts in ("2024-05-02T04:00", "2024-05-02T04:30", "2024-05-02T13:00"):
            mem.add(f"Biscuit note at {ts}", timestamp=ts)
        assert mem.recall("Biscuit", budget_tokens=200).text.splitlines()[0] == "[2 May 2024]"
