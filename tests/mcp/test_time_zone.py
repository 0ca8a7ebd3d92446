"""``hippo mcp --timezone``: a question asked without ``asked_at`` is asked now on the user's calendar, not the
machine's. The days, worked out by hand, are those of
tests/time_zone_days.py."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import hippo  # noqa: E402
from hippo import mcp_server  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from tests.time_zone_days import (  # noqa: E402
    BOWLING, CHESS, PARK_QUESTION, QUESTION, SWIMMING, TENNIS, WEDNESDAY_2_UTC, add_days, frozen)

from .test_server import _env, call, stdio_session  # noqa: E402



@pytest.fixture
def clock(monkeypatch):
    """The server's clock, set to an instant, with the machine in UTC."""

    monkeypatch.setattr(mcp_server, "datetime", frozen(WEDNESDAY_2_UTC))


@pytest.mark.parametrize("zone, recalled", [(None, SWIMMING), ("America/New_York", BOWLING), ("-05:00", BOWLING)])
async def test_a_question_is_asked_on_the_user_s_calendar(clock, zone, recalled):
    if zone == "America/New_York":
        zoneinfo = pytest.importorskip("zoneinfo")
        try:
            zoneinfo.ZoneInfo(zone)
        except zoneinfo.ZoneInfoNotFoundError:  # pragma: no cover - a system without the time zone database
            pytest.skip("no IANA time zone database")
    with hippo.Memory(None, namespace="ann") as mem:
        add_days(mem)
        server = mcp_server.build_server(mem, timezone=zone)
        got = await server.call_tool("recall", {"query": QUESTION, "budget_tokens": 20})
        hits = await server.call_tool("search", {"query": QUESTION, "k": 1})
        # the client's own time: the instant it gives, on the user's calendar when it carries no other than UTC's
        # (JavaScript's toISOString() writes "Z" wherever the user is), as the adapters read a hippo_timestamp
        given = await server.call_tool("recall", {"query": QUESTION, "budget_tokens": 20,
                                                  "asked_at": "2024-03-06T02:00:00Z"})
        offset = await server.call_tool("recall", {"query": QUESTION, "budget_tokens": 20,
                                                   "asked_at": "2024-03-06T11:00:00+09:00"})  # said where it was
    assert [m["text"] for m in got.structured_content["messages"]] == [recalled]
    assert hits.structured_content["hits"][0]["text"] == recalled
    assert [m["text"] for m in given.structured_content["messages"]] == [recalled]
    assert [m["text"] for m in offset.structured_content["messages"]] == [SWIMMING]


@pytest.mark.parametrize("bad", ["Mars/Olympus_Mons", "+25:00", "", "America"])
def test_a_bad_time_zone_is_refused_naming_timezone(tmp_path, bad):
    path = tmp_path / "tz.db"
    with hippo.Memory(None) as mem, pytest.raises(hippo.InvalidInput, match=r"^timezone"):
        mcp_server.build_server(mem, timezone=bad)
    with pytest.raises(hippo.InvalidInput, match=r"^timezone"):
        mcp_server.serve(path=str(path), user="ann", timezone=bad)
    assert not path.exists()  # refused before the store is opened
    proc = subprocess.run([sys.executable, "-m", "hippo.cli", "mcp", "--path", str(path), "--timezone", bad],
                          capture_output=True, text=True, timeout=120, env=_env(), stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr.startswith("hippo: error: --timezone") and proc.stderr.count("\n") == 1


async def test_the_flag_reaches_the_server(tmp_path):
    """``--timezone +14:00`` over stdio, on the real clock: "yesterday" is the day before the date at +14:00."""
    plus14 = timezone(timedelta(hours=14))
    today = datetime.now(plus14).date()
    path = tmp_path / "flag.db"
    with hippo.Memory(path, namespace="ann") as mem:
        for days, text in ((1, BOWLING), (2, SWIMMING)):
            day = today - timedelta(days=days)
            mem.add(text, timestamp=datetime(day.year, day.month, day.day, 12, tzinfo=plus14))
    async with stdio_session(path, "--user", "ann", "--timezone", "+14:00") as session:
        got = await call(session, "recall", query=QUESTION, budget_tokens=20)
    if datetime.now(plus14).date() != today:  # pragma: no cover - midnight at +14:00 came during the call
        pytest.skip("the date changed during the call")
    assert [m["text"] for m in got["messages"]] == [BOWLING]


@pytest.mark.parametrize("zone, offset", [(None, timedelta(0)), ("America/New_York", timedelta(hours=-5))])
async def test_a_message_added_without_a_time_is_dated_now_on_the_user_s_calendar(monkeypatch, zone, offset):
    """Sunday's tennis and Monday's chess added as they are said; on Tuesday, "yesterday" is Monday's chess, and a
    search since Monday finds it (an undated message has no day: neither)."""
    with hippo.Memory(None, namespace="ann") as mem:
        server = mcp_server.build_server(mem, timezone=zone)
        for instant, text in ((datetime(2026, 11, 22, 23, 0, tzinfo=timezone.utc), TENNIS),
                              (datetime(2026, 11, 23, 23, 0, tzinfo=timezone.utc), CHESS)):
            monkeypatch.setattr(mcp_server, "datetime", frozen(instant))
            added = await server.call_tool("add", {"text": text})
            stamp = datetime.fromisoformat(added.structured_content["timestamp"])
            assert stamp == instant and (zone is None or stamp.utcoffset() == offset)
        monkeypatch.setattr(mcp_server, "datetime", frozen(datetime(2026, 11, 24, 23, 0, tzinfo=timezone.utc)))
        got = await server.call_tool("recall", {"query": PARK_QUESTION, "budget_tokens": 20})
        since = await server.call_tool("search", {"query": "played in the park", "since": "2026-11-23T12:00:00Z"})
    assert [m["text"] for m in got.structured_content["messages"]] == [CHESS]
    assert [h["text"] for h in since.structured_content["hits"]] == [CHESS]


async def test_a_time_added_in_utc_is_put_on_the_user_s_calendar():
    """02:00 UTC on Wednesday is 21:00 on Tuesday in New York: that evening's "tonight" is Tuesday; a time with another
    offset keeps it, and one hippo cannot read is refused by name, storing nothing."""
    with hippo.Memory(None, namespace="ann") as mem:
        zoned = mcp_server.build_server(mem, timezone="America/New_York")
        for given in ("2024-03-06T02:00:00Z", "2024-03-06T02:00:00", "2024-03-06T02:00:00+00:00"):
            added = await zoned.call_tool("add", {"text": "Tonight I'm going out.", "timestamp": given})
            assert added.structured_content["timestamp"] == "2024-03-05T21:00:00-05:00"
        paris = await zoned.call_tool("add", {"text": "Paris!", "timestamp": "2024-03-06T03:00:00+01:00"})
        assert paris.structured_content["timestamp"] == "2024-03-06T03:00:00+01:00"
        plain = mcp_server.build_server(mem)  # without --timezone a time is kept as given
        added = await plain.call_tool("add", {"text": "Tonight I'm going out.", "timestamp": "2024-03-06T02:00:00Z"})
        assert added.structured_content["timestamp"] == "2024-03-06T02:00:00+00:00"
        n = len(mem.list())
        with pytest.raises(ToolError, match=r"^Error executing tool add: timestamp 'next tuesday'"):
            await zoned.call_tool("add", {"text": "x", "timestamp": "next tuesday"})
        assert len(mem.list()) == n
