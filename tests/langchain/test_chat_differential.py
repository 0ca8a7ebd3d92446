"""Differential suites for the conversation adapters: hypothesis drives hippo's adapter and the upstream
reference through the same random sequences.

* ``HippoChatMessageHistory`` vs langchain_core's ``InMemoryChatMessageHistory`` (``langchain_core/chat_history.py``):
  two sessions in one hippo namespace and one in another, messages of every type with ids, names, tool calls,
  content blocks of every kind (Anthropic's, OpenAI Responses'), streamed chunks, empty and control-character
  content; the histories must be equal message for message.
* ``HippoMemory`` vs langchain_classic's ``ConversationBufferMemory`` (``langchain_classic/memory/buffer.py`` and
  ``chat_memory.py``): two memory objects on one hippo namespace, beside notes added with ``Memory.add``; the same
  inputs and outputs (the key rules, the ``"output"`` fallback with its warning, the errors) must give the same
  stored turns, and ``clear()`` must take only the object's own turns (issue 22 items 1 and 6).
"""

from __future__ import annotations

import asyncio
import warnings
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

import hippo
from langchain_hippo import HippoChatMessageHistory

# message text: anything hippo can keep losslessly, control characters included (they are kept in the message
# and left out of the indexed text); lone surrogates are refused (tested below)
_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_word = st.sampled_from(["alpha", "beta", "gamma", "delta", "lisbon", "cello", "x"])
_ids = st.one_of(st.none(), st.uuids().map(str))
# content blocks of the kinds Anthropic's and OpenAI's Responses API give: words, reasoning, calls, results, media
_block = st.one_of(
    st.builds(lambda kind, t: {"type": kind, "text": t}, st.sampled_from(["text", "input_text", "output_text"]), _text),
    st.builds(lambda t: {"type": "refusal", "refusal": t}, _text),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "sig"}, _text),
    st.builds(lambda t: {"type": "reasoning", "summary": [{"type": "summary_text", "text": t}]}, _text),
    st.builds(lambda n, t: {"type": "tool_use", "id": "toolu_1", "name": n, "input": {"q": t}}, _word, _text),
    st.builds(lambda t, nested: {"type": "tool_result", "tool_use_id": "toolu_1",
                                 "content": [{"type": "text", "text": t}] if nested else t}, _text, st.booleans()),
    st.builds(lambda w: {"type": "image", "source": {"type": "url", "url": f"https://x.example/{w}.png"}}, _word),
    _text,
)
_blocks = st.lists(_block, min_size=1, max_size=3)
_content = st.one_of(_text, _blocks)
_tool_calls = st.lists(st.builds(lambda n, a, i: {"name": n, "args": {"q": a}, "id": i, "type": "tool_call"},
                                 _word, _text, st.uuids().map(str)), max_size=2)

_messages = st.one_of(
    st.builds(HumanMessage, content=_content, id=_ids, name=st.one_of(st.none(), _word)),
    st.builds(AIMessage, content=_content, id=_ids, tool_calls=_tool_calls),
    st.builds(AIMessageChunk, content=_content, id=_ids),  # a streamed answer
    st.builds(ToolMessage, content=_blocks, tool_call_id=st.uuids().map(str), id=_ids),
    st.builds(SystemMessage, content=_text, id=_ids),
    st.builds(ToolMessage, content=_text, tool_call_id=st.uuids().map(str), id=_ids,
              artifact=st.one_of(st.none(), st.dictionaries(_word, st.integers(), max_size=2))),
    st.builds(ChatMessage, content=_text, role=st.sampled_from(["critic", "planner"]), id=_ids),
    st.builds(lambda t, extra: HumanMessage(content=t, additional_kwargs=extra), _text,
              st.dictionaries(_word, st.one_of(st.integers(), _word), max_size=2)),
    # a message's own time (hippo's field) rides along: as ISO-8601 text with an offset, or epoch seconds
    st.builds(lambda t, when: AIMessage(content=t, additional_kwargs={"hippo_timestamp": when}), _text,
              st.one_of(st.integers(0, 4_000_000_000),
                        st.datetimes(min_value=datetime(1900, 1, 2), max_value=datetime(2199, 12, 30),
                                     timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-5)),
                                                                timezone(timedelta(hours=5, minutes=30))]))
                        .map(datetime.isoformat))),
)
_sessions = st.sampled_from(["s1", "s2", "other"])


class ChatHistoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.memory = hippo.Memory(None)
        self.hippo = {
            "s1": HippoChatMessageHistory(self.memory, session_id="s1"),
            "s2": HippoChatMessageHistory(self.memory, session_id="s2"),
            # same session id, another namespace: a different history
            "other": HippoChatMessageHistory(self.memory, session_id="s1", namespace="elsewhere"),
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated upstream; still the reference for the interface
            self.ref = {name: InMemoryChatMessageHistory() for name in self.hippo}

    def teardown(self) -> None:
        self.memory.close()

    @rule(session=_sessions, messages=st.lists(_messages, max_size=4), via=st.sampled_from(["sync", "async", "one"]))
    def add(self, session, messages, via):
        for target in (self.hippo[session], self.ref[session]):
            if via == "sync":
                target.add_messages(messages)
            elif via == "async":
                asyncio.run(target.aadd_messages(messages))
            else:
                for m in messages:
                    target.add_message(m)

    @rule(session=_sessions, text=_text, who=st.sampled_from(["user", "ai"]))
    def add_text(self, session, text, who):
        for target in (self.hippo[session], self.ref[session]):
            (target.add_user_message if who == "user" else target.add_ai_message)(text)

    @rule(session=_sessions, via=st.sampled_from(["sync", "async"]))
    def clear(self, session, via):
        for target in (self.hippo[session], self.ref[session]):
            target.clear() if via == "sync" else asyncio.run(target.aclear())

    @rule(session=_sessions, good=_messages)
    def refused(self, session, good):
        # hippo cannot keep a lone surrogate losslessly: the whole call is refused and nothing of it stored
        before = self.hippo[session].messages
        with pytest.raises(hippo.InvalidInput):
            self.hippo[session].add_messages([good, HumanMessage(content="broken \udc80 text")])
        assert self.hippo[session].messages == before

    @invariant()
    def same_histories(self):
        for name, history in self.hippo.items():
            assert history.messages == self.ref[name].messages, name

    @invariant()
    def each_message_dated_by_its_own_time(self):
        for name in ("s1", "s2", "other"):
            history = self.hippo[name]
            for item in history._target.list(filter={"session_id": history.session_id}):
                when = item.metadata["lc_message"]["data"].get("additional_kwargs", {}).get("hippo_timestamp")
                if when is not None:
                    want = (datetime.fromtimestamp(when, timezone.utc) if isinstance(when, int)
                            else datetime.fromisoformat(when))
                    assert item.timestamp == want and item.timestamp.utcoffset() == want.utcoffset()

    @rule(session=_sessions)
    def async_read(self, session):
        assert asyncio.run(self.hippo[session].aget_messages()) == self.ref[session].messages


ChatHistoryMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=12, deadline=None,
                                                suppress_health_check=[HealthCheck.too_slow])
TestChatHistoryDifferential = ChatHistoryMachine.TestCase


# -- HippoMemory vs ConversationBufferMemory ------------------------------------------------------------------

_value = st.one_of(_word, _text)
_inputs = st.one_of(
    st.builds(lambda v: {"input": v}, _value),
    st.builds(lambda v: {"question": v, "stop": ["\n"]}, _value),
    st.builds(lambda v, c: {"input": v, "context": c}, _value, _value),  # two input keys: refused without input_key
    st.builds(lambda v: {"history": "ignored", "input": v}, _value),  # the memory variable is not an input
    st.just({}),
)
_outputs = st.one_of(
    st.builds(lambda v: {"output": v}, _value),
    st.builds(lambda v: {"output": v, "intermediate_steps": []}, _value),  # AgentExecutor(return_intermediate_steps)
    st.builds(lambda v: {"text": v}, _value),
    st.builds(lambda v, s: {"answer": v, "sources": s}, _value, _value),  # ambiguous: refused
    st.builds(lambda v, s: {"output": v, "answer": s}, _value, _value),
)


def _outcome(fn):
    """What a call did: its exception family (ValueError / KeyError) or None, and whether it warned."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            fn()
            error = None
        except KeyError:
            error = KeyError
        except ValueError:
            error = ValueError
    warned = any("multiple output keys" in str(w.message) for w in seen)
    return error, warned


class ClassicMemoryMachine(RuleBasedStateMachine):
    @initialize(input_key=st.sampled_from([None, "input", "question"]),
                output_key=st.sampled_from([None, "output", "text"]), return_messages=st.booleans())
    def setup(self, input_key, output_key, return_messages):
        from langchain_classic.memory import ConversationBufferMemory

        from langchain_hippo import HippoMemory

        self.memory = hippo.Memory(None)
        self.note = self.memory.add("a note another part of the app keeps", speaker="app")
        self.thread = HippoChatMessageHistory(self.memory, session_id="thread-7")
        self.thread.add_messages([HumanMessage("another thread's question"), AIMessage("its answer")])
        kwargs = {"input_key": input_key, "output_key": output_key, "return_messages": return_messages}
        self.hippo = [HippoMemory(memory=self.memory, **kwargs) for _ in range(2)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConversationBufferMemory is deprecated upstream
            self.ref = [ConversationBufferMemory(**kwargs) for _ in range(2)]

    def teardown(self) -> None:
        if hasattr(self, "memory"):
            self.memory.close()

    @rule(which=st.integers(0, 1), inputs=_inputs, outputs=_outputs, via=st.sampled_from(["sync", "async"]))
    def save(self, which, inputs, outputs, via):
        def call(target):
            return (lambda: target.save_context(inputs, outputs)) if via == "sync" else \
                (lambda: asyncio.run(target.asave_context(inputs, outputs)))

        got = _outcome(call(self.hippo[which]))
        want = _outcome(call(self.ref[which]))
        assert got == want, (inputs, outputs)

    @rule(which=st.integers(0, 1), via=st.sampled_from(["sync", "async"]))
    def clear(self, which, via):
        for target in (self.hippo[which], self.ref[which]):
            target.clear() if via == "sync" else asyncio.run(target.aclear())

    @rule(which=st.integers(0, 1), query=_word)
    def load(self, which, query):
        # hippo recalls for the chain input, so it reads it (the buffer does not: docs/compatibility.md)
        inputs = {self.hippo[which].input_key or "input": query}
        got = self.hippo[which].load_memory_variables(inputs)
        want = self.ref[which].load_memory_variables(inputs)
        assert list(got) == list(want) == self.hippo[which].memory_variables
        value = got["history"]
        if self.hippo[which].return_messages:
            assert isinstance(value, list) and all(isinstance(m, BaseMessage) for m in value)
        else:
            assert isinstance(value, str)

    @invariant()
    def same_turns_and_nothing_else_lost(self):
        if not hasattr(self, "memory"):
            return
        for mine, ref in zip(self.hippo, self.ref):
            assert mine.chat_memory.messages == ref.chat_memory.messages
        assert self.memory.get(self.note.id).text == "a note another part of the app keeps"
        assert len(self.thread.messages) == 2


ClassicMemoryMachine.TestCase.settings = settings(max_examples=20, stateful_step_count=12, deadline=None,
                                                  suppress_health_check=[HealthCheck.too_slow])
TestClassicMemoryDifferential = ClassicMemoryMachine.TestCase
