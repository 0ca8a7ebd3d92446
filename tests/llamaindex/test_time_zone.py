"""HippoMemoryBlock on the user's calendar: ``timezone`` dates the messages the block stamps and the questions it asks
on the user's days, not UTC's. The days, worked out by hand, are those of
tests/time_zone_days.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from llama_index.core.llms import ChatMessage

import hippo
import llamaindex_hippo.memory_blocks as blocks
import llamaindex_hippo.retrievers as retrievers
from llamaindex_hippo import HippoMemoryBlock, HippoRetriever
from tests.time_zone_days import (BOWLING, CHESS, PARK_QUESTION, QUESTION, SWIMMING, TENNIS, TUESDAY_9_UTC,
                                  WEDNESDAY_2_UTC, add_days, add_park_days, clock_setter, new_york)

new_york()  # or the module is skipped


@pytest.fixture
def clock(monkeypatch):
    """The block's clock, set to an instant: ``clock(instant)``."""
    return clock_setter(monkeypatch, blocks)


@pytest.mark.parametrize("zone, recalled, gone", [(None, SWIMMING, BOWLING), ("America/New_York", BOWLING, SWIMMING),
                                                  ("-05:00", BOWLING, SWIMMING)])
async def test_the_block_asks_on_the_user_s_calendar(memory, clock, zone, recalled, gone):
    clock(WEDNESDAY_2_UTC)
    add_days(memory)
    block = HippoMemoryBlock(memory=memory, budget_tokens=20, scope="all", timezone=zone)
    got = await block.aget(messages=[ChatMessage(role="user", content=QUESTION)])
    assert recalled in got and gone not in got
    assert recalled in (await block.atruncate(got, 1) or recalled)  # a truncation asks again at the same time


@pytest.mark.parametrize("instant, local, offset", [
    (datetime(2024, 7, 10, 2, 0, tzinfo=timezone.utc), datetime(2024, 7, 9, 22, 0), -4),   # EDT
    (datetime(2024, 1, 10, 2, 0, tzinfo=timezone.utc), datetime(2024, 1, 9, 21, 0), -5),   # EST
])
async def test_the_block_dates_on_the_user_s_calendar_summer_and_winter(memory, clock, instant, local, offset):
    clock(instant)
    block = HippoMemoryBlock(memory=memory, timezone="America/New_York")
    await block.aput([ChatMessage(role="user", content="Tonight I'm going out to the jazz club."),
                      ChatMessage(role="assistant", content="Enjoy the jazz club.",
                                  additional_kwargs={"hippo_timestamp": instant.timestamp()}),
                      ChatMessage(role="user", content="Thanks a lot.",
                                  additional_kwargs={"hippo_timestamp": instant.replace(tzinfo=None)}),  # naive: UTC
                      ChatMessage(role="assistant", content="Have a good night.",
                                  additional_kwargs={"hippo_timestamp": instant.isoformat()})])  # +00:00
    stored = memory.list()
    assert len(stored) == 4
    for item in stored:
        assert item.timestamp == instant
        assert item.timestamp.utcoffset() == timedelta(hours=offset)
        assert item.timestamp.replace(tzinfo=None) == local
    # its "tonight" is the user's evening, as an ISO-8601 time with the offset would make it
    same = hippo.Memory(None)
    same.add("Tonight I'm going out to the jazz club.", timestamp=instant.astimezone(timezone(timedelta(hours=offset))))
    assert memory.search("Tonight jazz club", k=1)[0].event_time == same.search("Tonight jazz club", k=1)[0].event_time
    same.close()


async def test_without_a_time_zone_the_block_dates_in_utc(memory, clock):
    clock(WEDNESDAY_2_UTC)
    await HippoMemoryBlock(memory=memory).aput([ChatMessage(role="user", content="Tonight I'm going out.")])
    assert memory.list()[0].timestamp == WEDNESDAY_2_UTC
    assert memory.list()[0].timestamp.utcoffset() == timedelta(0)


@pytest.mark.parametrize("bad", ["Mars/Olympus_Mons", "+25:00", "", 5, "America"])
def test_a_bad_time_zone_is_refused_by_name(memory, bad):
    with pytest.raises(hippo.InvalidInput, match="timezone"):
        HippoMemoryBlock(memory=memory, timezone=bad)


@pytest.mark.parametrize("mode", ["search", "recall"])
@pytest.mark.parametrize("zone, recalled", [(None, TENNIS), ("Z", CHESS), ("America/New_York", CHESS)])
async def test_the_retriever_asks_now_on_the_user_s_calendar(memory, monkeypatch, mode, zone, recalled):
    """Asked on Tuesday (04:00 in New York), "yesterday" is Monday; without a zone, counted from Monday's message."""
    clock_setter(monkeypatch, retrievers)(TUESDAY_9_UTC)
    add_park_days(memory)
    retriever = HippoRetriever(memory, similarity_top_k=1, budget_tokens=20, mode=mode, timezone=zone)
    assert [n.node.get_content() for n in retriever.retrieve(PARK_QUESTION)] == [recalled]
    assert [n.node.get_content() for n in await retriever.aretrieve(PARK_QUESTION)] == [recalled]


def test_the_retriever_asks_on_new_york_s_day_not_utc_s(memory, monkeypatch):
    clock_setter(monkeypatch, retrievers)(WEDNESDAY_2_UTC)  # Tuesday 21:00 in New York, Wednesday 11:00 at +09:00
    add_days(memory)
    for zone, recalled in (("America/New_York", BOWLING), ("+09:00", SWIMMING)):
        got = HippoRetriever(memory, similarity_top_k=1, timezone=zone).retrieve(QUESTION)
        assert [n.node.get_content() for n in got] == [recalled]


def test_the_retriever_refuses_a_bad_time_zone_by_name(memory):
    for bad in ("Mars/Olympus_Mons", "+25:00", "", 5):
        with pytest.raises(hippo.InvalidInput, match=r"^timezone"):
            HippoRetriever(memory, timezone=bad)


async def test_a_read_s_own_zone_and_time_come_with_memory_get(memory, clock):
    """One block shared by the ``Memory`` of users in several zones: ``Memory.get`` hands its keywords to every block,
    and a read's ``timezone`` (or ``asked_at``) is the user's. At 02:00 UTC on Wednesday a New Yorker's "yesterday"
    is Monday (bowling), UTC's Tuesday (swimming)."""
    from llama_index.core.memory import Memory

    clock(WEDNESDAY_2_UTC)
    add_days(memory)
    block = HippoMemoryBlock(memory=memory, budget_tokens=20, scope="all")
    chat = Memory.from_defaults(session_id="ann", token_limit=4000, memory_blocks=[block])

    async def recalled(**kwargs):
        return (await chat.aget(input=QUESTION, **kwargs))[0].content

    got = await recalled()
    assert SWIMMING in got and BOWLING not in got
    got = await recalled(timezone="America/New_York")
    assert BOWLING in got and SWIMMING not in got
    assert BOWLING in chat.get(input=QUESTION, timezone="America/New_York")[0].content
    got = await recalled(asked_at="2024-03-05T21:00:00-05:00")  # Tuesday evening in New York
    assert BOWLING in got and SWIMMING not in got
    got = await recalled(asked_at="2024-03-06T02:00:00Z", timezone="America/New_York")  # UTC put on the zone
    assert BOWLING in got and SWIMMING not in got
    zoned = HippoMemoryBlock(memory=memory, budget_tokens=20, scope="all", timezone="America/New_York")
    got = await zoned.aget(messages=[ChatMessage(role="user", content=QUESTION)], timezone="Z")
    assert SWIMMING in got and BOWLING not in got
    assert SWIMMING in (await zoned.atruncate(got, 1) or SWIMMING)  # a truncation asks again at the same time
    with pytest.raises(hippo.InvalidInput, match=r"^timezone"):
        await recalled(timezone="Mars/Olympus_Mons")
    with pytest.raises(hippo.InvalidInput, match=r"^asked_at"):
        await recalled(asked_at="tomorrow")


@pytest.mark.parametrize("how", ["input", "put", "stamped"])
async def test_a_conversation_resumed_a_day_later_asks_on_that_day(memory, clock, how):
    """Sunday's tennis and Monday's chess, said through LlamaIndex's ``Memory`` with their times (as an application
    stamps what it puts); the user comes back on Tuesday and asks about "yesterday": Monday, chess. What ``Memory``
    hands the block is its short-term history with the question last (``get(input=...)`` appends it, unstamped), so
    the question is asked now, not when the latest message of Monday was said."""
    from llama_index.core.memory import Memory

    clock(TUESDAY_9_UTC)
    block = HippoMemoryBlock(memory=memory, budget_tokens=20, scope="all")
    chat = Memory.from_defaults(session_id="ann", token_limit=400, chat_history_token_ratio=0.1, memory_blocks=[block])

    def said(role, text, when):
        return ChatMessage(role=role, content=text, additional_kwargs={"hippo_timestamp": when})

    await chat.aput_messages([said("user", TENNIS, "2026-11-22T18:00:00+00:00"),
                              said("assistant", "Nice game.", "2026-11-22T18:01:00+00:00"),
                              said("user", CHESS, "2026-11-23T18:00:00+00:00"),
                              said("assistant", "Who won?", "2026-11-23T18:01:00+00:00"),
                              said("user", "I did.", "2026-11-23T18:02:00+00:00"),
                              said("assistant", "Congratulations on the win.", "2026-11-23T18:03:00+00:00")])
    assert {TENNIS, CHESS} <= {m.text for m in memory.list()}  # flushed into hippo, each dated by its own time
    if how == "input":
        got = await chat.aget(input=PARK_QUESTION)
    elif how == "put":
        await chat.aput(ChatMessage(role="user", content=PARK_QUESTION))
        got = await chat.aget()
    else:
        await chat.aput(said("user", PARK_QUESTION, TUESDAY_9_UTC.isoformat()))
        got = await chat.aget()
    recalled = got[0].content
    assert CHESS in recalled and TENNIS not in recalled
    # counted from Monday's latest message instead, "yesterday" would be Sunday
    assert memory.recall(PARK_QUESTION, budget_tokens=20, asked_at="2026-11-23T18:03:00+00:00").messages[0].text \
        == TENNIS
