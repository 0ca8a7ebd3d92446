"""``HippoMemoryBlock``: long-term memory for ``llama_index.core.memory.Memory``.

Messages flushed out of the short-term FIFO are stored in hippo (``_aput``); when the memory is read, the
block recalls for the latest messages under a token budget (``_aget``). The session id comes with every
call (``Memory`` passes it), never from the block's own state, so one block shared by many ``Memory``
instances keeps their sessions apart.

A history set again is not stored again. ``Memory.aset`` (what ``AgentWorkflow.run(chat_history=...)`` and the chat
engines' ``chat(..., chat_history=...)`` call on every request) replaces the session's messages, flushed ones
included, and ``Memory`` flushes the oldest of them into the blocks once more. ``ChatMessage`` carries no id, so a
flushed batch is compared with the session's stored messages (role and text, in order, and the time a message gives
in ``hippo_timestamp``): a batch that repeats them
from where one of the session's latest replayed batches stopped (requests setting its history at once flush their
batches in turns, each going on from its own), or from the session's start (a history set again), is passed over, as
far as it repeats them; a batch that goes on past them stores what follows. A batch is a replay only when all of it
repeats stored messages, or the part that repeats them reaches the last one stored: one that repeats some and then
differs (a history edited in the middle, a turn that begins as the session began) is stored whole. The puts into one
store (one ``hippo.Memory``, or several opened on one file) take turns, in call order on one event loop, and one at
a time across loops and threads (a sync ``Memory.put`` runs a loop of its own in its thread), and across processes
on the store (a batch is added only while the namespace is as it was read, ``Memory.add_many(if_version=...)``,
else compared again with what is stored then): two requests of a session setting its history at once, in one
process or in two workers, store it once.

A message without a ``hippo_timestamp`` is dated, and the question asked, by the clock in UTC, or on the calendar of
the block's ``timezone`` (the user's) when it is given: at 21:00 in New York (02:00 UTC the next day) the user's
"yesterday" is then the day before New York's date, and a message "tonight I'm going out" is dated that day. A read
may say when and where it is asked: ``Memory.get(input, **block_kwargs)`` hands its keywords to every block, and
``chat.get(input=..., timezone="America/New_York")`` or ``asked_at=...`` (a datetime, epoch seconds or ISO-8601
text) take precedence over the block's ``timezone`` and the latest message's ``hippo_timestamp``, so one block
serves users in several zones.

An assistant message that calls tools is stored as its words and then its calls in words (only the calls when it
says nothing), its ``ToolCallBlock``s kept in the metadata (``tool_call_blocks``); a tool result is said by its tool
(its ``name``, else the tool its ``tool_call_id``'s call in the same batch named), as the LangChain middleware stores
one.

Under token pressure the block shrinks instead of vanishing: ``atruncate`` recalls again for the same query with a
budget smaller by the tokens ``Memory`` asks for (``BaseMemoryBlock.atruncate``'s contract, which by default drops
the whole block). Its default priority is 1, so ``Memory`` may shrink it: a block at priority 0 is never truncated
by LlamaIndex and always contributes up to ``budget_tokens``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import weakref
from collections import OrderedDict
from datetime import datetime, timezone, tzinfo
from typing import Any, Literal

from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from hippo import (MAX_QUERY_CHARS, Changed, InvalidInput, count_tokens, epoch_of, message_time, storable,
                   storable_metadata, time_zone)
from llamaindex_hippo._common import (
    ValidatedInit,
    tool_calls,
    acall,
    check_chat_messages,
    check_memory,
    check_namespace,
    check_positive_int,
    empty_block,
    message_text,
    with_embed_model,
)

log = logging.getLogger("llamaindex_hippo")

#: the ``ChatMessage.additional_kwargs`` key that gives a message its time (when it was said): a datetime (naive
#: read as UTC), epoch seconds or ISO-8601 text, its offset from UTC kept; a message without it is dated when it is
#: stored, which for a message ``Memory`` flushes out of its short-term FIFO is that flush, turns after it was put
TIME_KEY = "hippo_timestamp"
#: how many recent (content -> query) pairs a block remembers for ``atruncate``
_RECALLED = 64
#: sessions whose place in a replayed history a block remembers
_SESSIONS = 1024
#: where the latest replayed batches of a session ended, remembered per session: two requests setting its history at
#: once flush it batch by batch in turns, and each goes on from where its own previous batch ended
_ENDS = 4
#: the key of an item (taken off before it is stored) that says its text is an answer's tool calls in words
_CALLS_ONLY = "_calls_only"
#: the key of an item (taken off before it is stored) that holds the time its message gave (``hippo_timestamp``),
#: in epoch seconds, or None
_GIVEN = "_given"
#: the key of an item (taken off before it is stored) that holds, for an answer that says something and calls tools,
#: its words alone (what an earlier release stored of it), else None
_WORDS = "_words"
#: the settings a made block checks again when one is set
_SETTINGS = ("namespace", "budget_tokens", "scope", "query_messages", "priority")

#: hippo handle -> event loop -> the lock the puts of every block over that handle take turns with
_TURNS: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]] = \
    weakref.WeakKeyDictionary()
_TURNS_LOCK = threading.Lock()


def _turns(handle: Any) -> asyncio.Lock:
    """The running event loop's queue of the puts into ``handle`` (``asyncio.Lock`` wakes its waiters first come,
    first served): shared by every block over the same ``hippo.Memory``, one per loop since a lock belongs to one
    loop."""
    loop = asyncio.get_running_loop()
    with _TURNS_LOCK:
        per_loop = _TURNS.get(handle)
        if per_loop is None:
            per_loop = _TURNS[handle] = weakref.WeakKeyDictionary()
        lock = per_loop.get(loop)
        if lock is None:
            lock = per_loop[loop] = asyncio.Lock()
    return lock


#: hippo handle on a store in RAM -> the thread lock the puts of every event loop into it take turns with (each
#: loop's in call order)
_HELD: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
#: a store's file (its real path) or URL -> the same lock, shared by every handle opened on it
_HELD_STORES: dict[tuple[str, str], threading.Lock] = {}


def _forget_held() -> None:
    """In a forked child: the puts of the parent's other threads are not the child's to wait for."""
    global _TURNS_LOCK
    _TURNS_LOCK = threading.Lock()
    _HELD.clear()
    _HELD_STORES.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_held)


def _held(handle: Any) -> threading.Lock:
    """The thread lock the puts of every event loop into ``handle``'s store take turns with: one per store file or
    URL (two ``hippo.Memory`` objects opened on one file store into the same messages), else per handle."""
    path = getattr(handle, "path", None)
    with _TURNS_LOCK:
        if isinstance(path, str):
            key = ("url", path) if "://" in path else ("file", os.path.realpath(path))
            lock = _HELD_STORES.get(key)
            if lock is None:
                lock = _HELD_STORES[key] = threading.Lock()
            return lock
        lock = _HELD.get(handle)
        if lock is None:
            lock = _HELD[handle] = threading.Lock()
    return lock


_ROLE = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system",
         "tool": "tool", "function": "tool", "chatbot": "assistant", "model": "assistant"}

#: the metadata key that keeps a message's ``ToolCallBlock``s as LlamaIndex dumps them (``model_dump``)
CALLS_KEY = "tool_call_blocks"


def _calls_text(calls: list[tuple[Any, Any, Any]]) -> str:
    """Tool calls in words, in the LangChain adapters' form: ``[tool call name({"arg": ...})]`` each."""
    return "; ".join(f"[tool call {name}({json.dumps(args, default=str, ensure_ascii=False)})]"
                     for _, name, args in calls)


class HippoMemoryBlock(ValidatedInit, BaseMemoryBlock[str]):
    """Recall-based long-term memory block.

    Args:
        memory: the ``hippo.Memory``.
        namespace: use this namespace of ``memory``.
        budget_tokens: recall budget (cl100k tokens) of the text the block contributes.
        scope: ``"session"`` recalls only the current session's messages; ``"all"`` everything in the
            namespace (memories shared across sessions, e.g. one namespace per user).
        query_messages: how many of the latest messages form the recall query.
        embed_model: a LlamaIndex ``BaseEmbedding`` for hippo's embedding channel (the memory's own when it was
            opened with it, else a second handle on the memory's file, ``Memory.with_embedding``).
        priority: LlamaIndex block priority (1 by default: shrinkable under token pressure; 0 never truncated).
        timezone: the user's time zone (an IANA name such as ``"America/New_York"``, an offset from UTC such as
            ``"+05:30"``, or a ``tzinfo``): messages without a ``hippo_timestamp`` are dated, and questions asked,
            by the clock on its calendar, and times given in UTC (epoch seconds, naive, "Z") are put on it. None (the
            default): UTC's.

    Example:
        >>> block = HippoMemoryBlock(memory=hippo.Memory("mem.db"))
        >>> chat_memory = Memory.from_defaults(session_id="ann-1", memory_blocks=[block], token_limit=4000)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="hippo_memory", description="The name of the memory block.")
    description: str | None = Field(default="Relevant memories recalled from hippo long-term memory.")
    memory: Any = Field(description="The hippo.Memory to store into and recall from.")
    namespace: str | None = Field(default=None)
    budget_tokens: int = Field(default=500)
    scope: Literal["session", "all"] = Field(default="session")
    query_messages: int = Field(default=1)
    priority: int = Field(default=1, description="LlamaIndex block priority; 0 = never truncated.")
    embed_model: Any = Field(default=None, exclude=True)
    timezone: Any = Field(default=None, description="The user's time zone: an IANA name or an offset from UTC.")
    _zone: tzinfo | None = PrivateAttr(default=None)
    _handle: Any = PrivateAttr(default=None)
    _owns_handle: bool = PrivateAttr(default=False)
    _recalled: OrderedDict = PrivateAttr(default_factory=OrderedDict)
    _replayed: OrderedDict = PrivateAttr(default_factory=OrderedDict)  # (namespace, session) -> replays' ends

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        check_namespace(self.namespace)
        for name in _SETTINGS:
            self._check_setting(name, getattr(self, name))
        self._zone = time_zone(self.timezone, "timezone")
        self._handle, self._owns_handle = with_embed_model(self.memory, self.embed_model)

    @staticmethod
    def _check_setting(name: str, value: Any) -> None:
        if name in ("budget_tokens", "query_messages"):
            check_positive_int(value, name)
        elif name == "scope" and value not in ("session", "all"):
            raise InvalidInput(f"scope must be 'session' or 'all', got {value!r}")
        elif name == "priority" and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise InvalidInput(f"priority must be an int >= 0, got {value!r}")
        elif name == "namespace":
            check_namespace(value)

    def __setattr__(self, name: str, value: Any) -> None:
        # a setting changed on a made block (one block serving many requests) is checked as the constructor checks
        # it, and the time zone read again: the next read and put use it
        if name in _SETTINGS:
            self._check_setting(name, value)
        zone = time_zone(value, "timezone") if name == "timezone" else None
        super().__setattr__(name, value)
        if name == "timezone":
            self._zone = zone

    def close(self) -> None:
        """Close the memory handle this block opened for its ``embed_model`` (nothing otherwise)."""
        if self._owns_handle:
            self._handle.close()
            self._owns_handle = False

    @property
    def _target(self) -> Any:
        return self._handle.using(self.namespace) if self.namespace is not None else self._handle

    @staticmethod
    def _text(message: ChatMessage) -> str:
        return message_text(message).strip()

    def _query(self, messages: list[ChatMessage] | None) -> str:
        """The latest ``query_messages`` texts as hippo can ask them (:func:`hippo.storable`, the end of an
        over-long paste): an escape code a user pasted does not stop the agent."""
        texts = [t for t in (self._text(m) for m in messages or []) if t]
        query = storable("\n".join(texts[-self.query_messages:]), -MAX_QUERY_CHARS)
        return query if query.strip() else ""

    def _now(self, zone: tzinfo | None = None) -> datetime:
        """The clock on ``zone``'s calendar, else on the block's ``timezone``'s (UTC's without either)."""
        zone = zone if zone is not None else self._zone
        return datetime.now(zone if zone is not None else timezone.utc)

    def _read_time(self, block_kwargs: dict[str, Any]) -> tuple[tzinfo | None, Any]:
        """The zone and the time a read gives (``Memory.get`` hands its keywords to every block: one block serving
        users in several zones is told each one's): its ``timezone``, else the block's, and its ``asked_at`` (a time
        that carries no calendar but UTC's put on the zone's), else None. ``InvalidInput`` naming either."""
        zone = self._zone
        if block_kwargs.get("timezone") is not None:
            zone = time_zone(block_kwargs["timezone"], "timezone")
        asked_at = block_kwargs.get("asked_at")
        if asked_at is not None:
            asked_at = message_time(asked_at, "asked_at", self._handle.config, zone)
        return zone, asked_at

    def _asked(self, messages: list[ChatMessage] | None, zone: tzinfo | None, asked_at: Any) -> Any:
        """When the question is asked: the read's ``asked_at``, else the latest message's ``hippo_timestamp``, else
        now (the conversation may resume days after the last message stored, and its "yesterday" is the day before
        it), on ``zone``'s calendar."""
        if asked_at is not None:
            return asked_at
        config = self._handle.config
        last = messages[-1] if messages else None
        given = (last.additional_kwargs or {}).get(TIME_KEY) if last is not None else None
        if given is None:
            return self._now(zone)
        return message_time(given, f"messages[{len(messages) - 1}].additional_kwargs[{TIME_KEY!r}]", config, zone)

    async def _aget(self, messages: list[ChatMessage] | None = None, session_id: str | None = None,
                    **block_kwargs: Any) -> str:
        messages = check_chat_messages(messages, allow_none=True)
        zone, asked_at = self._read_time(block_kwargs)  # refused when hippo cannot read them, asked or not
        query = self._query(messages)
        if not query:
            return ""
        flt = {"session_id": session_id} if self.scope == "session" and session_id is not None else None
        asked = self._asked(messages, zone, asked_at)
        recall = await acall(self._target, "recall", query, budget_tokens=self.budget_tokens, filter=flt,
                             asked_at=asked)
        if recall.text:
            self._recalled[recall.text] = (query, flt, asked)
            while len(self._recalled) > _RECALLED:
                self._recalled.popitem(last=False)
        return recall.text

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """``content`` shrunk by at least ``tokens_to_truncate`` tokens: the recall this block made for it, made
        again under the smaller budget (hippo fits the best memories into it), or, for content this block does not
        know, its last lines dropped until enough is freed. None when nothing is left, or when ``content`` is
        empty (``Memory`` passes ``[]`` for a block that contributed nothing)."""
        content = empty_block(content)
        if isinstance(tokens_to_truncate, bool) or not isinstance(tokens_to_truncate, int):
            raise InvalidInput(f"tokens_to_truncate must be an int, got {tokens_to_truncate!r}")
        if not content:
            return None
        if tokens_to_truncate <= 0:
            return content
        budget = count_tokens(content) - int(tokens_to_truncate)
        if budget < 1:
            return None
        known = self._recalled.get(content)
        if known is not None:
            query, flt, asked = known
            recall = await acall(self._target, "recall", query, budget_tokens=budget, filter=flt, asked_at=asked)
            return recall.text or None
        lines = content.split("\n")
        while lines and count_tokens("\n".join(lines)) > budget:
            lines.pop()
        return "\n".join(lines) or None

    async def _aput(self, messages: list[ChatMessage]) -> None:
        messages = check_chat_messages(messages)
        items = []
        now = self._now()
        limit = int(getattr(self._handle.config, "max_message_chars", 1_000_000) or 1_000_000)
        config = self._handle.config
        called: dict[Any, str] = {}  # tool call id -> the tool's name, for the results that follow the call
        for i, message in enumerate(messages):
            calls = tool_calls(message)
            called.update((call_id, name) for call_id, name, _ in calls if call_id is not None)
            # an answer that calls tools is stored as its words and then its calls in words, on a line of their own
            said = self._text(message)
            text = storable("\n".join(t for t in (said, _calls_text(calls) if calls else "") if t), limit)
            if not text.strip():
                continue
            extra = dict(message.additional_kwargs or {})
            blocks = [b.model_dump() for b in message.blocks if isinstance(b, ToolCallBlock)]
            if blocks:
                extra.setdefault(CALLS_KEY, blocks)
            session_id = extra.pop("session_id", None)  # our copy only; the message is left untouched
            given = extra.pop(TIME_KEY, None)  # when it was said (kept as the timestamp), else when it is stored
            when, given_at = now, None
            if given is not None:
                field = f"messages[{i}].additional_kwargs[{TIME_KEY!r}]"
                try:
                    when = message_time(given, field, config, self._zone)
                    given_at = epoch_of(message_time(given, field, config, timezone.utc))
                except InvalidInput as exc:
                    # LlamaIndex's Memory hands a batch over once it has taken it out of its queue: refusing it would
                    # keep every message of it out of hippo. The message is stored as it is flushed, the value kept
                    extra[TIME_KEY] = given
                    log.warning("HippoMemoryBlock: %s; the message is dated when stored and the value kept in its "
                                "metadata", exc)
            role = _ROLE.get(str(getattr(message.role, "value", message.role)), "user")
            speaker = role
            if role == "tool":  # the tool that answered: the message's own name, else the one its call named
                named = extra.get("name") or extra.get("tool_name") or called.get(extra.get("tool_call_id"))
                if isinstance(named, str) and storable(named, 1000).strip():
                    speaker = storable(named, 1000).strip()
            items.append({"text": text, "role": role, "speaker": speaker, "timestamp": when,
                          "session_id": str(session_id) if session_id is not None else None,
                          "metadata": storable_metadata(extra), _CALLS_ONLY: not said, _GIVEN: given_at,
                          _WORDS: storable(said, limit) if said and calls else None})
        # A put compares its batch with the stored messages, then stores what follows them: two puts of a session
        # side by side (two requests setting its history at once) would both compare before either stored, and
        # store the history twice. They take turns, as the same puts one after the other: those of one event loop
        # in call order, then in a worker thread holding the lock of every loop's puts (a sync ``Memory.put`` runs
        # a loop of its own in its thread). The worker needs no loop to end its turn: a sync put waiting on a loop's
        # own thread cannot stall it. Cancelled before the worker took the lock, the put stores nothing.
        target, lock, abandoned = self._target, _held(self._handle), threading.Event()

        def store() -> None:
            with lock:
                if not abandoned.is_set():
                    self._store(target, items)

        async with _turns(self._handle):
            try:
                await asyncio.to_thread(store)
            except asyncio.CancelledError:
                abandoned.set()
                raise

    def _store(self, target: Any, items: list[dict]) -> None:
        """Store what ``items`` adds to the stored messages. The puts of this process take turns (``_aput``); those
        of other processes on the store: the batch is added only while the namespace is as it was read before the
        comparison (``add_many(if_version=...)``), else the stored messages are read and compared again."""
        while True:
            version = target.version()
            todo, places = [], []
            for session, batch in _by_session(items):
                skip, place = self._replay(target, session,
                                           [(it["role"], it["text"], it[_CALLS_ONLY], it[_GIVEN], it[_WORDS])
                                            for it in batch])
                todo.extend({k: v for k, v in it.items() if k not in (_CALLS_ONLY, _GIVEN, _WORDS)}
                            for it in batch[skip:])
                places.append((session, place if skip == len(batch) else None))
            if not todo:
                break
            try:
                target.add_many(todo, if_version=version)
            except Changed:  # another process stored into the namespace meanwhile
                continue
            break
        for session, place in places:  # where the next batch of a history set again is expected
            key = (target.namespace, session)
            ends = self._replayed.get(key, ())
            if place is not None:
                ends = (place, *(end for end in ends if end != place))[:_ENDS]
            self._replayed[key] = ends
            self._replayed.move_to_end(key)
        while len(self._replayed) > _SESSIONS:
            self._replayed.popitem(last=False)

    def _replay(self, target: Any, session: str | None,
                batch: list[tuple[str, str, bool, float | None, str | None]]) -> tuple[int, int]:
        """How many leading messages of ``batch`` (role, text, whether the text is tool calls in words, the time the
        message gave in epoch seconds or None, the words alone of an answer that says something and calls tools)
        repeat the session's stored messages as a history set again repeats them, and where among the stored messages
        they end. They repeat them from where one of the session's latest replayed batches ended, or from its start,
        and count only when the whole batch repeats them or they reach the end of what is stored. A message that
        gives its time repeats only a stored message of that time: a later turn saying again what the session opened
        with is no repeat of it. An answer that only calls tools repeats the stored messages also where they lack it:
        a history stored by an earlier release, which passed over such answers; one that says something and calls
        tools repeats a stored message of its words alone, as such a release stored it. Only the stored messages
        compared are read."""
        ends = self._replayed.get((target.namespace, session), ())
        for start in dict.fromkeys((*ends, 0)):
            stored = target.list(filter={"session_id": session}, offset=start, limit=len(batch) + 1)
            k = j = 0  # batch messages repeated, stored messages they repeat
            while k < len(batch) and j < len(stored):
                role, text, calls_only, given_at, words = batch[k]
                if stored[j].role == role and stored[j].text in (text, words) and \
                        (given_at is None or abs((epoch_of(stored[j].timestamp) or given_at) - given_at) < 1e-3):
                    j += 1
                elif not calls_only:
                    break
                k += 1
            if j and (k == len(batch) or j == len(stored)):
                return k, start + j
        return 0, 0


def _by_session(items: list[dict]) -> list[tuple[str | None, list[dict]]]:
    """The items grouped by session, in order of first appearance (a flush holds one session's messages)."""
    groups: dict[str | None, list[dict]] = {}
    for item in items:
        groups.setdefault(item["session_id"], []).append(item)
    return list(groups.items())


__all__ = ["HippoMemoryBlock", "TIME_KEY"]
