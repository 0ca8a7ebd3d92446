"""HippoMemoryBlock inside llama_index.core.memory.Memory: flushed turns go to hippo, reads recall them, and
sessions stay apart even when one block is shared by several Memory instances (the upstream vector block
pins every session to the first session's filter)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory

import hippo
from llamaindex_hippo import HippoMemoryBlock


def _chat_memory(block: HippoMemoryBlock, session_id: str) -> Memory:
    # A tiny short-term budget so that older turns are flushed into the block right away.
    return Memory.from_defaults(session_id=session_id, memory_blocks=[block], token_limit=60,
                                chat_history_token_ratio=0.5, token_flush_size=20)


TURNS = {
    "ann": [("user", "My locker code is 4417, remember it."), ("assistant", "I will remember your locker code."),
            ("user", "Also, my gym is on Baker Street."), ("assistant", "Noted, the gym on Baker Street.")],
    "bob": [("user", "My locker code is 9902, keep it safe."), ("assistant", "Your locker code is noted."),
            ("user", "I swim on Tuesdays."), ("assistant", "Swimming on Tuesdays, got it.")],
}


async def _fill(chat: Memory, who: str) -> None:
    for role, text in TURNS[who]:
        await chat.aput(ChatMessage(role=role, content=text))


async def test_sessions_stay_isolated_across_memory_instances(memory):
    block = HippoMemoryBlock(memory=memory, budget_tokens=200)
    ann, bob = _chat_memory(block, "ann-session"), _chat_memory(block, "bob-session")
    await _fill(ann, "ann")  # ann first: an implementation caching the first session id would pin to it
    await _fill(bob, "bob")
    stored = {m.session_id for m in memory.list()}
    assert stored == {"ann-session", "bob-session"}
    assert any("4417" in m.text and m.session_id == "ann-session" for m in memory.list())

    ann_view = await ann.aget(input="What is my locker code?")
    bob_view = await bob.aget(input="What is my locker code?")
    ann_text = "\n".join(m.content or "" for m in ann_view)
    bob_text = "\n".join(m.content or "" for m in bob_view)
    assert "4417" in ann_text and "9902" not in ann_text
    assert "9902" in bob_text and "4417" not in bob_text
    # and again in the other order, with the same block instance
    assert "4417" not in await block.aget([ChatMessage(role="user", content="locker code")], session_id="bob-session")
    assert "4417" in await block.aget([ChatMessage(role="user", content="locker code")], session_id="ann-session")


def test_sync_memory_api(memory):
    block = HippoMemoryBlock(memory=memory)
    chat = _chat_memory(block, "sync")
    for role, text in TURNS["ann"]:
        chat.put(ChatMessage(role=role, content=text))
    messages = chat.get(input="Where is my gym?")
    assert any("Baker Street" in (m.content or "") for m in messages)
    assert memory.count() >= 2 and {m.role for m in memory.list()} <= {"user", "assistant"}


async def test_scope_all_shares_memories_between_sessions(memory):
    block = HippoMemoryBlock(memory=memory, namespace="user.ann", scope="all")
    await _fill(_chat_memory(block, "monday"), "ann")
    tuesday = await block.aget([ChatMessage(role="user", content="locker code?")], session_id="tuesday")
    assert "4417" in tuesday and memory.count() == 0 and memory.using("user.ann").count() >= 2


async def test_put_keeps_extra_kwargs_and_ignores_empty(memory):
    block = HippoMemoryBlock(memory=memory)
    msg = ChatMessage(role="user", content="the boiler was serviced in March", additional_kwargs={"source": "sms"})
    await block.aput([msg, ChatMessage(role="assistant", content="")], session_id="s")
    items = memory.list()
    assert len(items) == 1 and items[0].metadata == {"source": "sms"} and items[0].session_id == "s"
    assert await block.aget([], session_id="s") == ""


@pytest.mark.parametrize("kwargs, name", [({"budget_tokens": 0}, "budget_tokens"), ({"scope": "world"}, "scope"),
                                          ({"query_messages": 0}, "query_messages"), ({"memory": 3}, "memory")])
def test_bad_arguments(memory, kwargs, name):
    with pytest.raises(hippo.InvalidInput, match=name):
        HippoMemoryBlock(**{"memory": memory, **kwargs})


async def test_text_hippo_cannot_take_as_is_is_asked_and_stored_as_spaces(memory):
    """A pasted escape code or a bell in the chat: the block stores the turn with such characters as spaces and
    recalls for a question holding them, instead of failing the LlamaIndex ``Memory`` that flushes into it."""
    block = HippoMemoryBlock(memory=memory)
    await block.aput([ChatMessage(role="user", content="\x1b[1mNote:\x1b[0m my locker code is 4417, remember it."),
                      ChatMessage(role="assistant", content="I will remember your locker code.")])
    assert [m.text for m in memory.list()] == [" [1mNote: [0m my locker code is 4417, remember it.",
                                               "I will remember your locker code."]
    assert "4417" in await block.aget([ChatMessage(role="user", content="what is my locker \x07code?")])


async def test_extra_kwargs_hippo_cannot_store_as_they_are_do_not_lose_the_batch(memory):
    """LlamaIndex's ``Memory`` drops the turns it flushes into the blocks from its own history, so a block that
    refused the batch over one extra field would lose every turn of it. A lone surrogate in an extra field is
    stored as U+FFFD and a value nested past hippo's limit as its JSON text; the turns and the other fields are
    stored as given (reference: the same turns whose fields need no change)."""
    deep: object = "bottom"
    for _ in range(150):
        deep = {"d": deep}
    block = HippoMemoryBlock(memory=memory)
    await block.aput([ChatMessage(role="user", content="my locker code is 4417",
                                  additional_kwargs={"note": "caf\udce9", "source": "sms"}),
                      ChatMessage(role="assistant", content="noted, 4417", additional_kwargs={"trace": deep}),
                      ChatMessage(role="user", content="and the gym is on Baker Street",
                                  additional_kwargs={"ok": [1, 2.5, None]})], session_id="s")
    items = memory.list()
    assert [m.text for m in items] == ["my locker code is 4417", "noted, 4417", "and the gym is on Baker Street"]
    assert items[0].metadata == {"note": "caf\ufffd", "source": "sms"}
    assert items[2].metadata == {"ok": [1, 2.5, None]}
    kept = items[1].metadata["trace"]
    for _ in range(99):  # the first 100 levels as they were, the rest as the JSON text of what was there
        kept = kept["d"]
    inner = deep
    for _ in range(99):
        inner = inner["d"]
    assert json.loads(kept) == inner


@pytest.mark.parametrize("messages, name", [(None, "messages"), ("hello", "messages"), (["hello"], r"messages\[0\]"),
                                            ([{"role": "user", "content": "hi"}], r"messages\[0\]")])
async def test_messages_that_are_no_list_of_chat_messages_raise_invalid_input(memory, messages, name):
    """``aput(None)`` raised ``TypeError``, ``aget("hello")`` and ``aput(["hello"])`` ``AttributeError``; each
    raises ``InvalidInput`` naming the argument (or its element), and nothing is stored. ``aget(None)`` stays a
    read without a query (an empty block)."""
    block = HippoMemoryBlock(memory=memory)
    with pytest.raises(hippo.InvalidInput, match=f"^{name} must be"):
        await block.aput(messages)
    if messages is not None:
        with pytest.raises(hippo.InvalidInput, match=f"^{name} must be"):
            await block.aget(messages, session_id="s")
    assert memory.count() == 0 and await block.aget(None, session_id="s") == ""


async def test_atruncate_refuses_a_token_count_that_is_no_int(memory):
    block = HippoMemoryBlock(memory=memory)
    with pytest.raises(hippo.InvalidInput, match="^tokens_to_truncate must be an int"):
        await block.atruncate("some recalled text", "3")
    with pytest.raises(hippo.InvalidInput, match="^content must be a string"):
        await block.atruncate(["some recalled text"], 3)
    assert await block.atruncate(None, 3) is None and await block.atruncate("kept", 0) == "kept"


CHAT = [("user", f"Question {k}: what about the trip to Kyoto in April, day {k}?") if k % 2 == 0 else
        ("assistant", f"Answer {k}: the trip to Kyoto in April looks good for day {k}.") for k in range(16)]


def _stored(memory) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in memory.list()]


async def _reference_stream() -> list[tuple[str, str]]:
    """What the block stores of CHAT when the conversation is only appended to (nothing is set again)."""
    memory = hippo.Memory(None)
    chat = _chat_memory(HippoMemoryBlock(memory=memory), "s")
    for k in range(0, len(CHAT), 2):
        await chat.aput_messages([ChatMessage(role=r, content=t) for r, t in CHAT[k:k + 2]])
    out = _stored(memory)
    memory.close()
    return out


@pytest.mark.parametrize("fresh", [None, "memory", "block"])
async def test_a_history_set_again_is_not_stored_again(memory, fresh):
    """A server that gets the whole history with each request sets it again (``Memory.aset``, as
    ``AgentWorkflow.run(chat_history=...)`` and the chat engines do): ``Memory`` flushed its oldest messages into the
    block once more, and after eight requests the block held 56 messages for 14, the first one 7 times.
    ``fresh``: a new ``Memory`` per request over the same block, or a new block too (another process)."""
    block = HippoMemoryBlock(memory=memory)
    chat = _chat_memory(block, "s")
    for k in range(0, len(CHAT), 2):
        if fresh == "block":
            block = HippoMemoryBlock(memory=memory)
        if fresh:
            chat = _chat_memory(block, "s")
        await chat.aset([ChatMessage(role=r, content=t) for r, t in CHAT[:k]])
        await chat.aput_messages([ChatMessage(role=r, content=t) for r, t in CHAT[k:k + 2]])
    want = await _reference_stream()
    assert want and len(want) < len(CHAT)  # the recent turns stay in the short-term window
    assert _stored(memory) == want
    assert "times" not in await block.aget([ChatMessage(role="user", content="trip to Kyoto")], session_id="s")


async def test_a_new_batch_that_repeats_stored_words_in_part_is_stored(memory):
    """Only a replay of the stored messages is passed over: a batch that starts like the session and goes on
    differently, or repeats a stretch from its middle, is new."""
    block = HippoMemoryBlock(memory=memory)
    said = [ChatMessage(role=r, content=t) for r, t in CHAT[:6]]
    await block.aput(said, session_id="s")
    again = [ChatMessage(role=r, content=t) for r, t in CHAT[:2]] + [ChatMessage(role="user", content="Other.")]
    await block.aput(again, session_id="s")
    middle = [ChatMessage(role=r, content=t) for r, t in CHAT[2:4]]
    await block.aput(middle, session_id="s")
    assert _stored(memory) == CHAT[:6] + CHAT[:2] + [("user", "Other.")] + CHAT[2:4]


async def test_histories_set_again_by_concurrent_requests_are_stored_once(memory):
    """One block serves every request: two requests of a session handled at once (two tabs, a retry) both flush
    its history into the block. Both compared their batch with the stored messages before either stored it, and
    the block held the first message twice where the same puts one after the other store it once."""
    import asyncio

    def batch(n: int) -> list[ChatMessage]:
        return [ChatMessage(role=r, content=t) for r, t in CHAT[:n]]

    block = HippoMemoryBlock(memory=memory)
    await asyncio.gather(block.aput(batch(2), session_id="s"), block.aput(batch(4), session_id="s"),
                         block.aput(batch(4), session_id="s"), block.aput(batch(6), session_id="s"))
    one_by_one = hippo.Memory(None)
    alone = HippoMemoryBlock(memory=one_by_one)
    for n in (2, 4, 4, 6):
        await alone.aput(batch(n), session_id="s")
    assert _stored(one_by_one) == CHAT[:6]
    assert _stored(memory) == _stored(one_by_one)
    one_by_one.close()


async def test_histories_flushed_in_several_batches_by_requests_at_once_are_stored_once():
    """Three requests of a session put its whole history at once, and each ``Memory`` flushes it in batches of two
    messages; the batches take turns (A's first, B's first, C's first, A's second, ...). The block remembered only
    where the latest batch ended: A's second batch, new, made B's and C's second compare from the session's start,
    and each stored it again (8 messages for 4)."""
    import asyncio

    async def requests(at_once: bool) -> list[tuple[str, str]]:
        memory = hippo.Memory(None)
        block = HippoMemoryBlock(memory=memory)

        async def request() -> None:
            history = [ChatMessage(role=r, content=t) for r, t in CHAT[:6]]
            await _chat_memory(block, "s").aput_messages(history)

        if at_once:
            await asyncio.gather(request(), request(), request())
        else:
            for _ in range(3):
                await request()
        stored = _stored(memory)
        memory.close()
        return stored

    one_by_one = await requests(at_once=False)
    assert one_by_one == CHAT[:4]  # _chat_memory keeps the last turn in its short-term window
    assert await requests(at_once=True) == one_by_one


def test_histories_set_again_from_two_threads_at_once_are_stored_once():
    """Sync callers run a put on an event loop of their own, one per thread (LlamaIndex's ``Memory.put`` does):
    two requests of a session flushing its history from two threads at once both compared it with the stored
    messages before either stored it, and the history was stored twice (8 messages for 4, in 18 of 20 runs), where
    the same puts one after the other store it once."""
    import asyncio
    import threading

    def puts(at_once: bool) -> list[tuple[str, str]]:
        memory = hippo.Memory(None)
        block = HippoMemoryBlock(memory=memory)
        barrier = threading.Barrier(2)

        def request() -> None:
            history = [ChatMessage(role=r, content=t) for r, t in CHAT[:4]]
            if at_once:
                barrier.wait()
            asyncio.run(block.aput(history, session_id="s"))

        if at_once:
            threads = [threading.Thread(target=request) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        else:
            request()
            request()
        stored = _stored(memory)
        memory.close()
        return stored

    one_by_one = puts(at_once=False)
    assert one_by_one == CHAT[:4]
    for _ in range(5):
        assert puts(at_once=True) == one_by_one


def test_histories_put_through_two_handles_on_one_file_at_once_are_stored_once(tmp_path, monkeypatch):
    """Two blocks over two ``hippo.Memory`` objects opened on one file (a server opening the store per request) put
    one session's history from two threads at once: their puts took turns per handle, both compared the history
    with the stored messages before either stored it, and it was stored twice."""
    import asyncio
    import threading

    path = tmp_path / "blocks.db"
    compared = threading.Barrier(2)
    real = hippo.Memory.list

    def side_by_side(self, *args, **kwargs):
        found = real(self, *args, **kwargs)
        try:  # each waits for the other to have compared too, unless they take turns (the barrier then breaks)
            compared.wait(timeout=2)
        except threading.BrokenBarrierError:
            pass
        return found

    monkeypatch.setattr(hippo.Memory, "list", side_by_side)
    handles = [hippo.Memory(path), hippo.Memory(path)]

    def request(handle) -> None:
        history = [ChatMessage(role=r, content=t) for r, t in CHAT[:4]]
        asyncio.run(HippoMemoryBlock(memory=handle).aput(history, session_id="s"))

    threads = [threading.Thread(target=request, args=(handle,)) for handle in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    monkeypatch.setattr(hippo.Memory, "list", real)
    for handle in handles:
        handle.close()
    with hippo.Memory(path) as memory:
        assert _stored(memory) == CHAT[:4]


def _put_history_in_a_process(path: str, compared) -> None:
    """A worker process putting the session's history: its first read of the stored messages waits until the other
    process has read them too (when the two do not take turns, the barrier's wait ends them both together)."""
    import asyncio

    from tests.barrier import first_call_waits

    hippo.Memory.list = first_call_waits(hippo.Memory.list, compared)
    with hippo.Memory(path) as memory:
        history = [ChatMessage(role=r, content=t) for r, t in CHAT[:4]]
        asyncio.run(HippoMemoryBlock(memory=memory).aput(history, session_id="s"))


def test_histories_put_by_two_processes_at_once_are_stored_once(tmp_path):
    """Two worker processes on one SQLite file put one session's history at once (two requests setting it): each
    compared the history with the stored messages before either stored it, and it was stored twice. A batch is
    added only while the namespace is as it was read (``add_many(if_version=...)``): the second compares again."""
    import multiprocessing

    path = str(tmp_path / "workers.db")
    hippo.Memory(path).close()
    ctx = multiprocessing.get_context("spawn")
    compared = ctx.Barrier(2)
    workers = [ctx.Process(target=_put_history_in_a_process, args=(path, compared)) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    with hippo.Memory(path) as memory:
        assert _stored(memory) == CHAT[:4]


async def test_a_put_cancelled_while_another_loop_s_put_runs_leaves_the_turn_free(memory):
    """A put waiting for another event loop's put (a thread's) and cancelled meanwhile takes no turn: the puts after
    it are stored."""
    import asyncio
    import threading

    from llamaindex_hippo import memory_blocks

    block = HippoMemoryBlock(memory=memory)
    await block.aput([ChatMessage(role="user", content="First words.")], session_id="s")
    held = memory_blocks._HELD[block._handle]
    taken, done = threading.Event(), threading.Event()

    def other_loop() -> None:  # another thread's put, running
        held.acquire()
        taken.set()
        done.wait()
        held.release()

    thread = threading.Thread(target=other_loop)
    thread.start()
    await asyncio.to_thread(taken.wait)
    waiting = asyncio.ensure_future(block.aput([ChatMessage(role="user", content="Cancelled words.")],
                                               session_id="s"))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    done.set()
    await asyncio.to_thread(thread.join)
    await block.aput([ChatMessage(role="user", content="Later words.")], session_id="s")
    assert _stored(memory) == [("user", "First words."), ("user", "Later words.")]
    assert held.acquire(blocking=False)
    held.release()


def test_a_sync_put_on_an_event_loop_s_thread_waits_for_an_async_put_of_that_loop_without_a_hang(monkeypatch):
    """LlamaIndex's sync ``Memory.put`` called inside a running loop (sync code in an ``async def`` handler) runs its
    put on a loop of its own in another thread and blocks the caller's loop until it is done. Were an async put of
    the caller's loop holding the turn until that loop resumed it, the two would wait for each other for ever: the
    async put's turn ends without its loop, and both puts are stored."""
    import asyncio
    import threading
    import time

    from llama_index.core.async_utils import asyncio_run

    from llamaindex_hippo import memory_blocks

    memory = hippo.Memory(None)
    block = HippoMemoryBlock(memory=memory)
    real_held, waiting = memory_blocks._held, [0]

    class Counted:  # the turn's lock, counting the puts that hold or wait for it
        def __init__(self, lock):
            self.lock = lock

        def __enter__(self):
            waiting[0] += 1
            self.lock.acquire()

        def __exit__(self, *exc):
            self.lock.release()

    monkeypatch.setattr(memory_blocks, "_held", lambda handle: Counted(real_held(handle)))
    real_add = hippo.Memory.add_many
    first = [True]

    def add_many(self, *args, **kwargs):  # the async put's store, held until the sync put waits for the turn
        if first[0]:
            first[0] = False
            while waiting[0] < 2:
                time.sleep(0.001)
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(hippo.Memory, "add_many", add_many)

    async def both() -> None:
        task = asyncio.ensure_future(block.aput([ChatMessage(role="user", content="Async words.")], session_id="s"))
        while not waiting[0]:
            await asyncio.sleep(0)
        asyncio_run(block.aput([ChatMessage(role="user", content="Sync words.")], session_id="s"))  # loop waits
        await task

    runner = threading.Thread(target=lambda: asyncio.run(both()), daemon=True)
    runner.start()
    runner.join(60)
    assert not runner.is_alive(), "the puts never ended"
    assert _stored(memory) == [("user", "Async words."), ("user", "Sync words.")]
    memory.close()


# -- a message's own time ------------------------------------------------------------------------------------------

async def test_a_message_s_own_time_dates_it(memory):
    """Imported messages (``put_messages`` of last month's chat) were dated by the flush that moved them into the
    block: "yesterday" in them was the day before that flush. A message's ``hippo_timestamp`` dates it now; one
    without is dated when the block stores it."""
    new_york = timezone(timedelta(hours=-5))
    block = HippoMemoryBlock(memory=memory)
    chat = _chat_memory(block, "s1")
    said = [ChatMessage(role="user", content="I went to a support group yesterday.",
                        additional_kwargs={"hippo_timestamp": "2023-05-08T23:30:00-05:00"}),
            ChatMessage(role="assistant", content="How did it go?",
                        additional_kwargs={"hippo_timestamp": datetime(2023, 5, 8, 23, 31, tzinfo=new_york)}),
            ChatMessage(role="user", content="It went well, thanks for asking about it.",
                        additional_kwargs={"hippo_timestamp": 1683606720}),
            ChatMessage(role="assistant", content="Glad to hear the support group went well for you.")]
    before = datetime.now(timezone.utc)
    await chat.aput_messages(said)
    await chat.aput_messages([ChatMessage(role="user", content=f"Filler turn number {i} to push the others out.")
                              for i in range(6)])
    stored = {m.text: m for m in memory.list()}
    assert stored[said[0].content].timestamp == datetime(2023, 5, 8, 23, 30, tzinfo=new_york)
    assert stored[said[0].content].timestamp.utcoffset() == timedelta(hours=-5)
    assert stored[said[1].content].timestamp == datetime(2023, 5, 9, 4, 31, tzinfo=timezone.utc)
    assert stored[said[2].content].timestamp == datetime(2023, 5, 9, 4, 32, tzinfo=timezone.utc)
    assert stored[said[3].content].timestamp >= before
    assert "hippo_timestamp" not in stored[said[0].content].metadata  # it is the timestamp
    hits = memory.search("support group", since="2023-05-07", until="2023-05-08")
    assert [h.text for h in hits] == [said[0].content]


@pytest.mark.parametrize("value", ["yesterday", float("nan"), True, [2023], 1683606720000, "0999-01-01"])
async def test_a_time_hippo_cannot_read_does_not_lose_the_batch(memory, value, caplog):
    """LlamaIndex's Memory hands a batch to the block once it has taken it out of its queue: refusing the batch for
    one message's time kept every message of it out of hippo. Each is stored; the one of the unreadable time is
    dated when stored, the value kept in its metadata, and a warning names the field."""
    block = HippoMemoryBlock(memory=memory)
    batch = [ChatMessage(role="user", content="kept back"),
             ChatMessage(role="user", content="bad", additional_kwargs={"hippo_timestamp": value})]
    before = datetime.now(timezone.utc)
    with caplog.at_level("WARNING", logger="llamaindex_hippo"):
        await block.aput(batch, from_short_term_memory=True, session_id="s1")
    assert [m.text for m in memory.list()] == ["kept back", "bad"]
    bad = memory.list()[1]
    assert bad.timestamp >= before
    assert bad.metadata["hippo_timestamp"] == hippo.storable_metadata({"v": value})["v"]
    assert "messages[1].additional_kwargs['hippo_timestamp']" in caplog.text


async def test_a_question_s_yesterday_is_the_day_before_it_is_asked(memory):
    """The conversation resumes on Tuesday, a day after the last message stored: "yesterday" is Monday."""
    memory.add("I played tennis in the park", timestamp="2026-11-22T18:00:00+00:00")  # Sunday
    memory.add("I played chess in the park", timestamp="2026-11-23T18:00:00+00:00")   # Monday
    block = HippoMemoryBlock(memory=memory, budget_tokens=20)
    asked = ChatMessage(role="user", content="What did I play in the park yesterday?",
                        additional_kwargs={"hippo_timestamp": "2026-11-24T09:00:00+00:00"})
    got = await block.aget(messages=[asked])
    assert "chess" in got and "tennis" not in got
    assert "chess" in (await block.atruncate(got, 1) or "chess")  # a truncation asks again at the same time
    assert memory.recall(asked.content, budget_tokens=20).messages[0].text == "I played tennis in the park"


def _tool_exchange() -> list[ChatMessage]:
    """An agent's turn as LlamaIndex's agents write it: an answer that only calls tools (a ``ToolCallBlock``, or
    OpenAI's ``additional_kwargs["tool_calls"]``), each result a ``tool`` message with the call's id."""
    from llama_index.core.base.llms.types import ToolCallBlock

    return [
        ChatMessage(role="user", content="What is the weather in Köln this week?"),
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="lookup",
                                                            tool_kwargs={"city": "Köln"})]),
        ChatMessage(role="tool", content="Sunny in Köln.", additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(role="assistant", content=None, additional_kwargs={"tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "forecast", "arguments": '{"days": 3}'}}]}),
        ChatMessage(role="tool", content="Rain from Thursday.", additional_kwargs={"tool_call_id": "c2"}),
        ChatMessage(role="tool", content="Windy.", additional_kwargs={"tool_call_id": "x9", "name": "wind"}),
        ChatMessage(role="assistant", content="Sunny, then rain from Thursday."),
    ]


async def test_an_answer_that_only_calls_tools_is_stored_with_its_calls(memory):
    """An assistant message holding only tool calls has no text, and the block passed over it: hippo kept the tool
    results without the calls that asked for them. It is stored as its calls in words (the LangChain adapters'
    form), and the calls ride along in its metadata: the ``ToolCallBlock``s as LlamaIndex dumps them, which read
    back as the same blocks, and ``additional_kwargs["tool_calls"]`` as given."""
    from llama_index.core.base.llms.types import ToolCallBlock

    messages = _tool_exchange()
    await HippoMemoryBlock(memory=memory).aput(messages, session_id="s")
    items = memory.list()
    assert [(m.role, m.text) for m in items] == [
        ("user", "What is the weather in Köln this week?"),
        ("assistant", '[tool call lookup({"city": "Köln"})]'),
        ("tool", "Sunny in Köln."),
        ("assistant", '[tool call forecast({"days": 3})]'),
        ("tool", "Rain from Thursday."),
        ("tool", "Windy."),
        ("assistant", "Sunny, then rain from Thursday."),
    ]
    blocks = [ToolCallBlock.model_validate(b) for b in items[1].metadata["tool_call_blocks"]]
    assert blocks == messages[1].blocks
    assert items[3].metadata == {"tool_calls": messages[3].additional_kwargs["tool_calls"]}
    assert "lookup" in memory.search("Köln lookup", filter={"role": "assistant"})[0].text


async def test_a_tool_result_is_said_by_its_tool(memory):
    """A tool result was stored with the speaker "tool" whatever the tool: its speaker is the tool's name, the
    message's own (``additional_kwargs["name"]``) or the one its call gave (``tool_call_id``); the call's id stays
    in its metadata."""
    await HippoMemoryBlock(memory=memory).aput(_tool_exchange(), session_id="s")
    tools = [(m.speaker, m.metadata.get("tool_call_id")) for m in memory.list() if m.role == "tool"]
    assert tools == [("lookup", "c1"), ("forecast", "c2"), ("wind", "x9")]


async def test_tool_exchanges_flushed_by_memory_are_stored_whole_and_once(memory):
    """Through LlamaIndex's ``Memory``: the exchange it flushes (a turn with its calls and results) is stored whole,
    and a history set again with it is not stored a second time."""
    block = HippoMemoryBlock(memory=memory)
    chat = _chat_memory(block, "agent")
    messages = _tool_exchange()
    await chat.aput_messages(messages)
    await chat.aput_messages([ChatMessage(role="user", content=f"Filler turn number {i} about nothing.")
                              for i in range(6)])
    stored = [(m.role, m.speaker, m.text) for m in memory.list()]
    assert stored[:7] == [(m.role.value, s, t) for m, s, t in zip(messages, [
        "user", "assistant", "lookup", "assistant", "forecast", "wind", "assistant"], [
        "What is the weather in Köln this week?", '[tool call lookup({"city": "Köln"})]', "Sunny in Köln.",
        '[tool call forecast({"days": 3})]', "Rain from Thursday.", "Windy.", "Sunny, then rain from Thursday."])]
    history = messages + [ChatMessage(role="user", content=f"Filler turn number {i} about nothing.")
                          for i in range(6)]
    await chat.aset(history)  # as AgentWorkflow.run(chat_history=...) sets it on every request
    await chat.aput_messages([ChatMessage(role="user", content="And next week, in Köln?")])  # flushes it again
    again = [(m.role, m.speaker, m.text) for m in memory.list()]
    assert again[:len(stored)] == stored and len(again) > len(stored)
    assert [t for _, _, t in again].count("Sunny in Köln.") == 1


async def test_a_setting_changed_on_a_made_block_is_checked_and_used(memory):
    """``timezone`` set on a made block was kept as the field and not read (messages still dated on UTC's calendar),
    and a bad budget or scope was taken as it came. A setting is checked as the constructor checks it, a bad one
    raising ``InvalidInput`` naming it and leaving the block as it was, and the time zone is read again."""
    block = HippoMemoryBlock(memory=memory)
    block.timezone = "America/New_York"
    await block.aput([ChatMessage(role="user", content="Tonight I'm going out.")], session_id="s")
    assert memory.list()[0].timestamp.utcoffset() in (timedelta(hours=-5), timedelta(hours=-4))
    for name, value in [("timezone", "Mars/Olympus"), ("budget_tokens", 0), ("scope", "world"),
                        ("query_messages", 0), ("priority", -1), ("namespace", "")]:
        before = getattr(block, name)
        with pytest.raises(hippo.InvalidInput, match=name):
            setattr(block, name, value)
        assert getattr(block, name) == before
    block.budget_tokens = 20
    assert block.budget_tokens == 20


async def _set_again_then_continued(memory, messages: list, before: list) -> None:
    """``messages`` put twice (as ``Memory.aset`` does on every request) store nothing beside ``before``, the stored
    session; a message after them is stored."""
    block = HippoMemoryBlock(memory=memory)
    for _ in range(2):
        await block.aput(messages, session_id="s")
        assert [(m.role, m.text) for m in memory.list()] == before
    await HippoMemoryBlock(memory=memory).aput(messages + [ChatMessage(role="user", content="And Bonn?")],
                                               session_id="s")
    assert [(m.role, m.text) for m in memory.list()] == before + [("user", "And Bonn?")]


async def test_a_history_stored_without_its_tool_calls_is_not_stored_again(memory):
    """A session stored before answers that only call tools were kept holds their results without them. Set again
    (``Memory.aset`` on every request), its flushed batch holds the calls, and it repeated the stored messages only
    up to the first call: the whole batch was stored again, on every request. The calls count as repeated where the
    stored history lacks them; what follows the stored messages is still stored."""
    messages = _tool_exchange()
    memory.add_many([{"text": m.content, "role": m.role.value, "session_id": "s"} for m in messages
                     if m.content])  # as the block stored the exchange before: no answer that only calls tools
    before = [(m.role, m.text) for m in memory.list()]
    assert len(before) == 5
    await _set_again_then_continued(memory, messages, before)


async def test_a_tool_call_object_in_the_extra_fields_is_kept_as_its_fields(memory):
    """LLM integrations put their client's tool call objects (pydantic models) in
    ``additional_kwargs["tool_calls"]``; the metadata kept each as its ``repr`` text, which reads back as no call.
    It keeps the object's fields, as ``model_dump(mode="json")`` gives them."""
    from pydantic import BaseModel

    class Function(BaseModel):
        name: str
        arguments: str

    class ToolCall(BaseModel):
        id: str
        type: str = "function"
        function: Function

    call = ToolCall(id="c1", function=Function(name="lookup", arguments='{"city": "Köln"}'))
    await HippoMemoryBlock(memory=memory).aput(
        [ChatMessage(role="assistant", content=None, additional_kwargs={"tool_calls": [call]})], session_id="s")
    stored, = memory.list()
    assert stored.text == '[tool call lookup({"city": "Köln"})]'
    assert [ToolCall.model_validate(c) for c in stored.metadata["tool_calls"]] == [call]


OPENING = [("user", "Hi there, good morning."), ("assistant", "Good morning! How can I help?")]
LIVE = OPENING + [("user", "What is the capital of France?"), ("assistant", "Paris is the capital.")] + OPENING + [
    ("user", "What about Spain?"), ("assistant", "Madrid is the capital of Spain."),
    ("user", "Thanks a lot for that."), ("assistant", "You are welcome."),
    ("user", "Bye for now then."), ("assistant", "Goodbye and take care.")]


def _dated(turns, start=0):
    return [ChatMessage(role=r, content=t, additional_kwargs={"hippo_timestamp": 1_700_000_000 + 60 * k})
            for k, (r, t) in enumerate(turns, start)]


async def test_a_dated_turn_that_repeats_the_opening_is_stored():
    """In a live conversation, a later turn that says again what the session opened with was passed over when it was
    flushed as a batch of its own: it looked like the first batch of a history set again (8 of the 10 messages
    flushed were stored). A message that gives its time (``hippo_timestamp``) repeats only a stored message of that
    time: hippo holds every message ``Memory`` archived, as its chat store lists them."""
    from llama_index.core.storage.chat_store.sql import MessageStatus

    memory = hippo.Memory(None)
    chat = Memory.from_defaults(session_id="s", memory_blocks=[HippoMemoryBlock(memory=memory)], token_limit=60,
                                chat_history_token_ratio=0.5, token_flush_size=3)
    for message in _dated(LIVE):
        await chat.aput(message)
    archived = [(m.role.value, m.content) for m in await chat.aget_all(status=MessageStatus.ARCHIVED)]
    assert len(archived) == 10 and archived[4:6] == OPENING
    assert _stored(memory) == archived
    assert [m.timestamp.timestamp() for m in memory.list()] == [1_700_000_000 + 60 * k for k in range(10)]


async def test_a_dated_history_set_again_is_still_stored_once():
    """The times a history gives come back with it when it is set again: its replayed batches are still passed
    over, and hippo holds what the conversation appended to alone holds."""
    memory = hippo.Memory(None)
    block = HippoMemoryBlock(memory=memory)
    for k in range(0, len(LIVE), 2):
        chat = _chat_memory(block, "s")
        await chat.aset(_dated(LIVE[:k]))
        await chat.aput_messages(_dated(LIVE[k:k + 2], k))
    reference = hippo.Memory(None)
    chat = _chat_memory(HippoMemoryBlock(memory=reference), "s")
    for k in range(0, len(LIVE), 2):
        await chat.aput_messages(_dated(LIVE[k:k + 2], k))
    assert _stored(reference) and _stored(memory) == _stored(reference)
    assert _stored(reference)[:6] == LIVE[:6]


async def test_a_tool_result_given_as_citable_content_is_stored(memory):
    """A tool that returns its output with its source (a ``CitableBlock``, for an LLM that cites: ``FunctionAgent``
    puts the output's blocks in the tool message) had no text for the block (``ChatMessage.content`` reads only
    ``TextBlock``s): the result was not stored, its call stored without it. It is stored as the text it holds, said
    by its tool, and recalled."""
    from llama_index.core.base.llms.types import CitableBlock, TextBlock, ToolCallBlock

    block = HippoMemoryBlock(memory=memory)
    await block.aput([
        ChatMessage(role="user", content="When does my lease end?"),
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="documents",
                                                            tool_kwargs={"query": "lease end"})]),
        ChatMessage(role="tool", blocks=[CitableBlock(title="lease.pdf", source="drive://lease.pdf",
                                                      content=[TextBlock(text="The lease ends on 30 June."),
                                                               TextBlock(text="Notice is three months.")])],
                    additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(role="assistant", content="Your lease ends on 30 June.")], session_id="s")
    assert [(m.role, m.speaker, m.text) for m in memory.list()] == [
        ("user", "user", "When does my lease end?"),
        ("assistant", "assistant", '[tool call documents({"query": "lease end"})]'),
        ("tool", "documents", "The lease ends on 30 June.\nNotice is three months."),
        ("assistant", "assistant", "Your lease ends on 30 June.")]
    assert "Notice is three months." in memory.recall("How much notice for the lease?").text


def _spoken_exchange() -> list[ChatMessage]:
    """An agent's turn on Anthropic's models: the answer says something before it calls a tool."""
    from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock

    return [
        ChatMessage(role="user", content="What is the weather in Köln this week?"),
        ChatMessage(role="assistant", blocks=[ThinkingBlock(content="the weather tool"),
                                              TextBlock(text="Let me check Köln."),
                                              ToolCallBlock(tool_call_id="c1", tool_name="lookup",
                                                            tool_kwargs={"city": "Köln"})]),
        ChatMessage(role="tool", content="Sunny in Köln.", additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(role="assistant", content="Sunny all week."),
    ]


async def test_an_answer_that_says_something_and_calls_tools_is_stored_with_its_calls(memory):
    """An answer that says something and calls tools (Anthropic's "Let me check." before its call) was stored as its
    words alone: the tool's result after it answered a call no stored message made, as the result of an answer that
    only calls tools did before it was stored with its calls. Its calls in words follow its words, on a line of their
    own, as the LangChain middleware stores it."""
    await HippoMemoryBlock(memory=memory).aput(_spoken_exchange(), session_id="s")
    assert [(m.role, m.speaker, m.text) for m in memory.list()] == [
        ("user", "user", "What is the weather in Köln this week?"),
        ("assistant", "assistant", 'Let me check Köln.\n[tool call lookup({"city": "Köln"})]'),
        ("tool", "lookup", "Sunny in Köln."), ("assistant", "assistant", "Sunny all week.")]
    assert memory.list()[1].metadata["tool_call_blocks"][0]["tool_kwargs"] == {"city": "Köln"}


async def test_a_history_stored_without_the_calls_of_an_answer_with_words_is_not_stored_again(memory):
    """A session stored before the calls of an answer that says something were kept holds its words alone. Set again
    (``Memory.aset`` on every request), its batch repeats the stored messages, and what follows them is stored."""
    messages = _spoken_exchange()
    memory.add_many([{"text": m.content, "role": m.role.value, "session_id": "s"} for m in messages])
    before = [(m.role, m.text) for m in memory.list()]
    await _set_again_then_continued(memory, messages, before)
