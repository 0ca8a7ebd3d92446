"""``HippoMemoryMiddleware``: long-term memory for LangChain 1.x ``create_agent``.

Before each model call it recalls from hippo for the latest user message and appends the context to the
system message (for that call only: the conversation state is unchanged). After each model call it stores
the turns that are new since the previous model call: the user messages and the model's answer (and, when
asked, tool results, with the answers that only called the tools as their calls in words).

Scope: memories live in one hippo namespace per user, so they carry across threads; the thread id is kept
as hippo's ``session_id``. The user id is read from the runtime context (attribute or key ``user_id``) or
from ``config["configurable"]["user_id"]``; the thread id from the context, ``configurable.thread_id`` or
the runtime's execution info. Namespaces are ``"user.<user_id>"``; without a user id, ``"thread.<thread_id>"``;
without either, the memory's own namespace. Pass ``namespace_fn`` to choose differently.

What the model already has is not recalled again: the turns of the current thread that the prompt holds are
passed to recall as ``exclude`` (a stored turn is shown when the prompt holds its words in the same role, whatever
the ids a client sending the whole history each time gives its messages), so the budget goes to what the prompt does
not hold (other threads, and turns of this one that a summary or a trim took out of the prompt).

Each message is stored once: a thread forked from an earlier checkpoint (LangGraph time travel, a regenerated
answer) holds turns stored already, and only its new messages are stored (a message is known by its LangChain id and
its text: a fork that edits a message's words stores the new words; a client sending the whole history each time,
which LangChain gives new ids, is known by the words of the stored turns that follow the ones it sent before). The
middleware keeps, per thread, the LangChain ids of what it stored and the hippo ids they got (for the latest 256
threads); a thread it does not know, or whose prompt holds earlier turns it has not seen (another process served
them), is read back from the store once: the messages of that session. Runs of one thread at once store their turns
one after the other (:class:`_Turns` in a process; across processes, a turn is added only while the namespace is
as it was read, ``add_many(if_version=...)``, else read and compared again), so each message is stored once then
too.

Times are on the user's calendar when the middleware knows the user's time zone: a message without a
``hippo_timestamp`` is dated by the clock, and the question asked at the clock (``recall(asked_at=...)``), in UTC by
default, in the zone given as ``timezone`` to the constructor otherwise, and for one run in the zone its context or
config gives (``timezone_key``, ``"timezone"`` by default: ``context={"timezone": "America/New_York"}`` or
``config["configurable"]["timezone"]``), which takes precedence. At 21:00 in New York (02:00 UTC the next day) the
user's "yesterday" is then the day before New York's date, and a message "tonight I'm going out" is dated that day.

On Python 3.10 an async run (``ainvoke``, ``astream``) hands its middleware no config: asyncio tasks there take no
context, so LangGraph's ``get_config`` fails in async nodes. The user id is then read from the runtime context only
(``agent.ainvoke(..., context={"user_id": ...})``); a run that gives none gets a ``RuntimeWarning`` once per
middleware, and its turns go where a run without a user id goes.

Text is handed to hippo as hippo can take it (:func:`hippo.storable`): a control character or a lone surrogate in a
message (a pasted terminal escape code) is stored and asked as a space, a message past ``max_message_chars`` is
cut, and a question past hippo's question length is asked by its end. An agent never stops on what its user typed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from collections.abc import Awaitable, Callable, Mapping
from datetime import timezone, tzinfo
from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.runtime import Runtime

from hippo import Changed, InvalidInput, epoch_of, message_time, time_zone
from langchain_hippo._common import (acall, check_bool, check_key, check_memory, check_positive_int, custom_namespace,
                                     index_text, message_chars, query_text, store_key)
from langchain_hippo._messages import TIME_KEY, calls_of, calls_text, message_text, now_in, time_of, tool_results

DEFAULT_TEMPLATE = (
    "Relevant memories from earlier conversations (verbatim, with speaker and date; use them when they help):\n"
    "<memory>\n{context}\n</memory>"
)


#: threads whose stored messages a middleware keeps (least recently used dropped first)
_THREADS = 256
#: the key of an item (taken off before it is stored) that holds the time its message gave (``hippo_timestamp``), in
#: epoch seconds, or None
_GIVEN = "_given"


class _Turns:
    """The calls that store a thread's new turns take turns, per (store, namespace, thread): each compares the
    turns with what the thread has stored, then stores the rest, and two side by side (a turn regenerated twice at
    once, two requests of one thread) would both compare before either stored. Sync calls wait on a thread lock,
    the async calls of one event loop on an ``asyncio.Lock`` (first come, first served), then store in a worker
    thread that waits on the same thread lock (an async run on another loop, a sync run in another thread); a key's
    lock goes when no call holds or waits for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[Any, list[Any]] = {}  # key -> [lock, calls holding or waiting for it]

    def _take(self, key: Any, make: Callable[[], Any]) -> Any:
        with self._lock:
            entry = self._held.get(key)
            if entry is None:
                entry = self._held[key] = [make(), 0]
            entry[1] += 1
            return entry[0]

    def _give(self, key: Any) -> None:
        with self._lock:
            entry = self._held[key]
            entry[1] -= 1
            if not entry[1]:
                del self._held[key]

    @contextlib.contextmanager
    def held(self, key: Any) -> Iterator[None]:
        lock = self._take(("sync", key), threading.Lock)
        try:
            with lock:
                yield
        finally:
            self._give(("sync", key))

    @contextlib.asynccontextmanager
    async def aheld(self, key: Any) -> AsyncIterator[None]:
        at = (asyncio.get_running_loop(), key)
        lock = self._take(at, asyncio.Lock)
        try:
            async with lock:
                yield
        finally:
            self._give(at)

    async def arun(self, key: Any, fn: Callable[[], Any]) -> Any:
        """``fn()`` in its turn from an async call: after the calls of this event loop before it (``aheld``), in a
        worker thread holding the sync calls' lock, so that it takes turns with every other loop's calls (a run
        started by ``asyncio.run`` in another thread) and the sync calls too. The loop is not blocked, and the
        turn needs no loop to end: a sync call waiting on a loop's own thread cannot stall it. Cancelled before
        the worker took the lock, ``fn`` is not run."""
        abandoned = threading.Event()

        def work() -> Any:
            with self.held(key):
                return None if abandoned.is_set() else fn()

        async with self.aheld(key):
            try:
                return await asyncio.to_thread(work)
            except asyncio.CancelledError:
                abandoned.set()
                raise

    def after_fork(self) -> None:
        """In a forked child: the calls of the parent's other threads are not the child's to wait for."""
        self._lock = threading.Lock()
        self._held = {}


_TURNS = _Turns()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_TURNS.after_fork)


class _Stores:
    """When a thread was last stored into by any middleware of this process, per (store, namespace, thread): a number
    that grows with every turn stored. A middleware's record of a thread read before it (another agent's middleware
    stored a turn of the thread since) is out of date. The latest 4,096 threads are kept; a thread let go reads as
    stored after every record made before."""

    _KEPT = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: OrderedDict[Any, int] = OrderedDict()
        self._count = 0
        self._floor = 0  # the latest number of a thread let go

    def last(self, key: Any) -> int:
        with self._lock:
            return self._last.get(key, self._floor)

    def stored(self, key: Any) -> int:
        with self._lock:
            self._count += 1
            self._last[key] = self._count
            self._last.move_to_end(key)
            while len(self._last) > self._KEPT:
                self._floor = max(self._floor, self._last.popitem(last=False)[1])
            return self._count

    def after_fork(self) -> None:
        self._lock = threading.Lock()


_STORES = _Stores()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_STORES.after_fork)


class _Thread:
    """What one thread has stored: (LangChain message id, stored text) -> hippo id, (role, stored text) -> hippo ids,
    the (role, stored text) of its messages in order, every LangChain id this record accounts for (stored, or
    passed over as nothing to store: a notification, a turn without text), and when the thread was last stored into
    as far as this record knows (``_Stores``)."""

    __slots__ = ("stored", "said", "stream", "times", "known", "as_of", "version")

    def __init__(self, as_of: int = 0, version: int | None = None) -> None:
        self.stored: dict[tuple[str, str], int] = {}
        self.said: dict[tuple[str, str], list[int]] = {}
        self.stream: list[tuple[str, str]] = []
        self.times: list[float | None] = []  # epoch seconds of the messages of ``stream``
        self.known: set[str] = set()
        self.as_of = as_of
        self.version = version  # the namespace's latest change the record reflects (``Memory.version``)

    def add(self, item: Any) -> None:
        """Account for a stored hippo message (``MemoryItem``) of the thread."""
        lc_id = (item.metadata or {}).get("message_id")
        if isinstance(lc_id, str):
            self.stored.setdefault((lc_id, item.text), item.id)
            self.known.add(lc_id)
        self.said.setdefault((item.role, item.text), []).append(item.id)
        self.stream.append((item.role, item.text))
        self.times.append(epoch_of(item.timestamp))


def _role(message: BaseMessage) -> str | None:
    """The hippo role a message of the prompt is stored with, or None for one that is not stored."""
    if isinstance(message, HumanMessage):
        return None if is_notification(message) else "tool" if tool_results(message) is not None else "user"
    if isinstance(message, AIMessage):
        return "assistant"
    return "tool" if isinstance(message, ToolMessage) else None


def _tool_names(messages: list[AnyMessage]) -> dict[str, str]:
    """Tool call id -> the tool's name, of the calls the AI messages of ``messages`` make."""
    return {c["id"]: c["name"] for m in messages if isinstance(m, AIMessage) for c in calls_of(m)
            if isinstance(c.get("id"), str) and isinstance(c.get("name"), str)}


def _lookup(source: Any, key: str) -> Any:
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


#: how the text of an answer that only calls tools begins (``calls_text``)
_CALLS_TEXT = "[tool call "


def _words_alone(role: str, text: str) -> tuple[str, str] | None:
    """An answer that said something and called tools as a thread stored by an earlier release holds it: (role, its
    words alone); None for any other message."""
    if role == "assistant" and f"\n{_CALLS_TEXT}" in text:
        return role, text.split(f"\n{_CALLS_TEXT}", 1)[0]
    return None

# Python 3.11 gave asyncio tasks a context: before it, LangGraph cannot hand an async node its config
_ASYNC_RUNS_SHOW_CONFIG = sys.version_info >= (3, 11)


def _current_config() -> Mapping[str, Any] | None:
    """The run's config; None outside a runnable context (and in an async run on Python 3.10)."""
    try:
        from langgraph.config import get_config

        return get_config() or {}
    except RuntimeError:
        return None


def is_notification(message: BaseMessage) -> bool:
    """Whether ``message`` is a human message the agent harness added and the user did not type: a string
    ``additional_kwargs["lc_source"]``, as langchain_core's ``add_notification_metadata`` marks it (the summary
    ``SummarizationMiddleware`` puts in place of the turns it summarized, a background task's update)."""
    return isinstance(message, HumanMessage) and isinstance((message.additional_kwargs or {}).get("lc_source"), str)


def _check_template(template: Any, name: str) -> str:
    if not isinstance(template, str) or "{context}" not in template:
        raise InvalidInput(f"{name} must be a string containing '{{context}}'")
    try:  # filled with str.format: any other field or a lone brace would fail at the first model call
        template.format(context="")
    except (KeyError, IndexError, ValueError) as exc:
        raise InvalidInput(f"{name} must hold no format field but {{context}} (write a literal brace as "
                           f"'{{{{' or '}}}}'): {type(exc).__name__}: {exc}") from None
    return template


def _check_namespace_fn(value: Any, name: str) -> Any:
    if value is not None and not callable(value):
        raise InvalidInput(f"{name} must be callable or None")
    return value


#: the middleware's settings, each checked whenever it is set: name -> check(value, name), the value to keep
_SETTINGS: dict[str, Callable[[Any, str], Any]] = {
    "budget_tokens": check_positive_int, "template": _check_template, "store_tool_results": check_bool,
    "user_id_key": check_key, "thread_id_key": check_key, "timezone_key": check_key,
    "namespace_fn": _check_namespace_fn,
}


class HippoMemoryMiddleware(AgentMiddleware):
    """Recall before each model call, remember after it.

    Args:
        memory: the ``hippo.Memory`` to use (its namespaces hold one user each).
        budget_tokens: recall budget in cl100k tokens.
        template: how the recalled context is appended to the system message; must contain ``{context}``.
        store_tool_results: also store tool messages (off by default: they are often large), and an answer that
            only calls tools as its calls in words (``[tool call lookup({"city": "Kyoto"})]``); the results of the
            memory tools below are not stored: they are copies of stored messages, and recall would hand them over
            twice.
        memory_tools: also give the model ``memory_search`` / ``memory_read`` / ``memory_topics`` /
            ``memory_topic`` (see ``langchain_hippo.tools``), reading the current user's namespace.
        user_id_key / thread_id_key: names looked up in the runtime context and ``configurable``.
        namespace_fn: ``(user_id, thread_id) -> namespace | None`` to override the default scoping.
        timezone: the users' time zone (an IANA name such as ``"America/New_York"``, an offset from UTC such as
            ``"+05:30"``, or a ``tzinfo``): messages without a ``hippo_timestamp`` are dated, and questions asked,
            by the clock on its calendar (None, the default: UTC's). A run's own, under ``timezone_key`` in its
            context or ``configurable``, takes precedence.
        timezone_key: the name a run's time zone is looked up by in the runtime context and ``configurable``.

    Example:
        >>> agent = create_agent(model, tools, middleware=[HippoMemoryMiddleware(hippo.Memory("mem.db"))])
        >>> agent.invoke({"messages": [...]}, {"configurable": {"user_id": "ann", "thread_id": "t1"}})
    """

    def __init__(
        self,
        memory: Any,
        *,
        budget_tokens: int = 1000,
        template: str = DEFAULT_TEMPLATE,
        store_tool_results: bool = False,
        memory_tools: bool = False,
        user_id_key: str = "user_id",
        thread_id_key: str = "thread_id",
        namespace_fn: Callable[[str | None, str | None], str | None] | None = None,
        timezone: Any = None,
        timezone_key: str = "timezone",
    ) -> None:
        super().__init__()
        self.memory = check_memory(memory)
        self.budget_tokens = budget_tokens
        self.template = template
        self.store_tool_results = store_tool_results
        self._max_chars = message_chars(self.memory)
        self.user_id_key = user_id_key
        self.thread_id_key = thread_id_key
        self.timezone_key = timezone_key
        self.timezone = timezone
        self.namespace_fn = namespace_fn
        self._threads: OrderedDict[tuple[str, str | None], _Thread] = OrderedDict()
        self._threads_lock = threading.Lock()
        self._stores = 0  # turns this middleware stored (a record read while one was stored is not kept)
        self._config_unseen_warned = False
        self.tools = []
        if check_bool(memory_tools, "memory_tools"):
            from langchain_hippo.tools import make_memory_tools

            self.tools = make_memory_tools(self.memory, scope=lambda runtime: self._scope(runtime)[0],
                                           asked=self._tool_asked, zone=self.zone)
        self._own = frozenset(t.name for t in self.tools)  # tools whose results are copies of the memory

    def __setattr__(self, name: str, value: Any) -> None:
        # a setting changed on a made middleware (one middleware serving many runs) is checked as the constructor
        # checks it, and left as it was when refused: the next run reads it
        check = _SETTINGS.get(name)
        super().__setattr__(name, value if check is None else check(value, name))

    @property
    def timezone(self) -> Any:
        return self._timezone

    @timezone.setter
    def timezone(self, value: Any) -> None:
        """Checked as the constructor checks it (``InvalidInput`` naming ``timezone``, the setting left as it was);
        the next run, its memory tools included, reads it."""
        self._zone = time_zone(value, "timezone")
        self._timezone = value

    # -- scope ---------------------------------------------------------------------------------------------

    def identify(self, runtime: Runtime | None) -> tuple[str | None, str | None]:
        """(user_id, thread_id) of the current run."""
        context = getattr(runtime, "context", None)
        config = _current_config()
        configurable = (config or {}).get("configurable") or {}
        user = _lookup(context, self.user_id_key) or configurable.get(self.user_id_key)
        if user is None and config is None and runtime is not None and not _ASYNC_RUNS_SHOW_CONFIG:
            self._warn_config_unseen()
        thread = _lookup(context, self.thread_id_key) or configurable.get(self.thread_id_key)
        if thread is None:
            thread = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
        def named(value: Any) -> str | None:  # an empty id names no one ("user." would be everyone's namespace)
            return str(value) if value is not None and str(value).strip() else None

        return named(user), named(thread)

    def zone(self, runtime: Runtime | None) -> tzinfo | None:
        """The time zone of the current run: its context's or ``configurable``'s ``timezone_key``, else the
        constructor's ``timezone`` (None: UTC). ``InvalidInput`` naming where a run's value that is none came from."""
        context = getattr(runtime, "context", None)
        given = _lookup(context, self.timezone_key)
        if given is not None:
            return time_zone(given, f"context[{self.timezone_key!r}]")
        given = ((_current_config() or {}).get("configurable") or {}).get(self.timezone_key)
        if given is not None:
            return time_zone(given, f"config['configurable'][{self.timezone_key!r}]")
        return self._zone

    def _warn_config_unseen(self) -> None:
        if not self._config_unseen_warned:
            self._config_unseen_warned = True
            warnings.warn(
                f"langchain_hippo's middleware cannot read config['configurable'] in an async run on Python 3.10 "
                f"(LangGraph hands async middleware no config before Python 3.11): pass the user id in the run's "
                f"context, agent.ainvoke(..., context={{{self.user_id_key!r}: ...}}); without it this run's turns are "
                f"stored and recalled as a run without a user id's are", RuntimeWarning, stacklevel=3)

    def namespace_for(self, user_id: str | None, thread_id: str | None) -> str:
        chosen = custom_namespace(self.namespace_fn, user_id, thread_id)
        if chosen is not None:
            return chosen
        if user_id is not None:
            return f"user.{user_id}"
        if thread_id is not None:
            return f"thread.{thread_id}"
        return self.memory.namespace

    def _scope(self, runtime: Runtime | None) -> tuple[Any, str | None, str | None]:
        user, thread = self.identify(runtime)
        return self.memory.using(self.namespace_for(user, thread)), user, thread

    # -- recall before the model call ----------------------------------------------------------------------

    @staticmethod
    def _latest_user_text(messages: list[AnyMessage]) -> str | None:
        """The question to recall for: the latest message the user typed (not a notification the harness added)
        as hippo can ask it (:func:`query_text`: a pasted escape code or a paste past hippo's question length does
        not stop the agent), or None."""
        for message in reversed(messages):
            if _role(message) == "user":
                query = query_text(message_text(message) or "")
                return query if query.strip() else None
        return None

    def _asked(self, messages: list[AnyMessage], zone: tzinfo | None = None) -> Any:
        """When the question is asked: the latest user message's ``hippo_timestamp``, else now on ``zone``'s
        calendar (UTC's without one; a turn may come days after the last one stored, and its "yesterday" is the day
        before it). Every message's ``hippo_timestamp`` is checked here, before the model is called: a time the
        store would refuse after the call fails the turn before an answer is paid for and lost."""
        config = getattr(self.memory, "config", None)
        now = now_in(zone)
        asked = now
        for i, message in enumerate(messages):
            kwargs = message.additional_kwargs if isinstance(message, BaseMessage) else None
            if isinstance(kwargs, dict) and kwargs.get(TIME_KEY) is not None:
                when = time_of(message, f"messages[{i}]", config, now, as_json=False, zone=zone)
                if _role(message) == "user":
                    asked = when
            elif _role(message) == "user":
                asked = now
        return asked

    def _tool_asked(self, runtime: Any) -> Any:
        """When a memory tool's search is asked (the model gave no ``asked_at``): as the middleware's recall of the
        turn is, at the latest user message's ``hippo_timestamp``, else now, on the run's calendar."""
        state = getattr(runtime, "state", None)
        messages = state.get("messages") if isinstance(state, Mapping) else None
        return self._asked(list(messages or []), self.zone(runtime))

    def _inject(self, request: ModelRequest, context: str) -> ModelRequest:
        if not context.strip():
            return request
        block = self.template.format(context=context)
        system = request.system_message
        if system is None:
            new = SystemMessage(content=block)
        elif isinstance(system.content, str):
            new = SystemMessage(content=f"{system.content}\n\n{block}" if system.content else block)
        else:
            new = SystemMessage(content=[*system.content, {"type": "text", "text": block}])
        return request.override(system_message=new)

    # -- what a thread stored -----------------------------------------------------------------------------

    def _stored_text(self, message: BaseMessage) -> str:
        """What hippo stores of ``message``: its text; for an answer that calls tools, when tool results are stored,
        its text and then its calls in words, on a line of their own (the memory tools' left out: their results are
        not stored), as ``HippoMemory`` replays an answer whose results it did not recall."""
        text = message_text(message)
        if self.store_tool_results and isinstance(message, AIMessage):
            calls = calls_text([c for c in calls_of(message) if c.get("name") not in self._own])
            text = "\n".join(t for t in (text, calls) if t)
        return index_text(text or "", self._max_chars)

    @staticmethod
    def _earlier(messages: list[AnyMessage]) -> list[AnyMessage]:
        """The messages up to the model's latest answer: the turns stored after earlier model calls."""
        end = len(messages)
        while end and not isinstance(messages[end - 1], AIMessage):
            end -= 1
        return messages[:end]

    def _known(self, view: Any, thread: str | None, messages: list[AnyMessage]) -> _Thread | None:
        """The record of ``thread`` when it accounts for every earlier turn of ``messages``, else None."""
        with self._threads_lock:
            record = self._threads.get((view.namespace, thread))
            if record is None:
                return None
            self._threads.move_to_end((view.namespace, thread))
        if any(m.id and m.id not in record.known for m in self._earlier(messages)):
            return None  # turns this process did not see: stored by another one, or before a restart
        if record.as_of != _STORES.last(self._stores_key(view, thread)):
            return None  # turns another middleware of this process stored since (two agents on one thread)
        return record

    def _stores_key(self, view: Any, thread: str | None) -> tuple:
        return store_key(self.memory), view.namespace, thread

    def _rebuilt(self, view: Any, thread: str | None, items: list[Any], messages: list[AnyMessage],
                 since: int, as_of: int, version: int | None = None) -> _Thread:
        """The record of ``thread`` read back from ``items`` (the stored messages of its session, read when this
        process had stored ``since`` turns, and the thread's last store was ``as_of``, ``_Stores``); the earlier
        turns of ``messages`` not among them had nothing to store.
        It is kept for the next calls only when this process stored no turn while it was read: a run of the thread
        reading before the model call, beside another run storing its turn, would otherwise replace the record that
        holds that turn with one that does not, and the next run would store the turn again."""
        record = _Thread(as_of, version)
        for item in items:
            record.add(item)
        record.known.update(m.id for m in self._earlier(messages) if m.id)
        with self._threads_lock:
            if self._stores == since:
                self._keep(view.namespace, thread, record)
        return record

    def _keep(self, namespace: str, thread: str | None, record: _Thread) -> None:
        """``record`` as the thread's record for the next calls (under ``_threads_lock``)."""
        self._threads[(namespace, thread)] = record
        self._threads.move_to_end((namespace, thread))
        while len(self._threads) > _THREADS:
            self._threads.popitem(last=False)

    def _record(self, view: Any, thread: str | None, messages: list[AnyMessage], version: int | None = None
                ) -> _Thread:
        """The thread's record; ``version``: the namespace's latest change, read before (a record of an earlier
        one is read again: another process may have stored into the thread since)."""
        record = self._known(view, thread, messages)
        if record is not None and version is not None and record.version != version:
            record = None
        if record is None:
            since, as_of = self._stores, _STORES.last(self._stores_key(view, thread))
            if version is None:
                version = view.version()  # before the read: the read reflects it, or a later change
            record = self._rebuilt(view, thread, view.list(filter={"session_id": thread}), messages, since, as_of,
                                   version)
        return record

    async def _arecord(self, view: Any, thread: str | None, messages: list[AnyMessage]) -> _Thread:
        record = self._known(view, thread, messages)
        if record is None:
            since, as_of = self._stores, _STORES.last(self._stores_key(view, thread))
            version = await acall(view, "version")
            record = self._rebuilt(view, thread, await acall(view, "list", filter={"session_id": thread}), messages,
                                   since, as_of, version)
        return record

    def _shown(self, record: _Thread, messages: list[AnyMessage]) -> list[int]:
        """The hippo ids of the thread's stored messages whose words the prompt holds (in the same role): by their
        words, not their LangChain ids, which a client sending the whole history each time may leave out and
        LangChain then makes anew."""
        shown: list[int] = []
        for m in messages:
            role = _role(m)
            if role is None:
                continue
            text = self._stored_text(m)
            shown.extend(record.said.get((role, text), ()))
            older = _words_alone(role, text)
            if older is not None:
                shown.extend(record.said.get(older, ()))
        return shown

    @staticmethod
    def _unstored(record: _Thread, items: list[dict], earlier: list[tuple[str, str]]) -> list[dict]:
        """The items of a turn that this thread has not stored yet. A message is stored when its LangChain id and
        text are; and the turn's leading items that repeat the stored messages following the prompt's ``earlier``
        turns (role and words; found in the thread's stored messages in order, each at its latest place, or the last
        of them at the latest place the turn's first message follows, when a later turn said the same words) were
        stored already: a client that sends the whole history each time (LangChain gives its messages new ids) sent
        the same turn again, to regenerate its answer. Without earlier turns that holds only while the thread's
        stored messages after the repeated ones are answers: past a later user message, the prompt is a client
        sending only its latest message, and its words are a new turn. A message that gives its time
        (``hippo_timestamp``) repeats only a stored message of that time, and a prompt holding no earlier turn
        repeats the stored message of its words and time wherever it is: said again later, it is a new turn."""
        stream = record.stream

        def find(words: tuple[str, str], end: int) -> int:
            """The latest place of ``words`` in ``stream[:end]``, else -1."""
            j = end - 1
            while j >= 0 and stream[j] != words:
                j -= 1
            return j

        def align(end: int) -> int | None:
            """Where the stored messages following the ``earlier`` turns begin, the turns found in ``stream[:end]``
            in order, each at its latest place; None when they are not all there."""
            at = 0 if not earlier else None
            j = end
            for words in reversed(earlier):
                last = j
                j = find(words, last)
                if j < 0 and (older := _words_alone(*words)) is not None:
                    j = find(older, last)
                if j < 0 and words[0] == "assistant" and words[1].startswith(_CALLS_TEXT):
                    j = last  # an answer that only called tools, which a thread stored by an earlier release lacks
                    continue
                if j < 0:
                    return None  # the prompt holds turns the thread did not store: nothing to align
                if at is None:
                    at = j + 1
            return at

        def same_time(given: float | None, stored: float | None) -> bool:
            return given is None or stored is None or abs(given - stored) < 1e-3

        def repeated(at: int | None) -> int:
            k = 0
            if at is not None:
                while k < len(items) and at + k < len(stream) and \
                        stream[at + k] == (items[k]["role"], items[k]["text"]) and \
                        same_time(items[k].get(_GIVEN), record.times[at + k]):
                    k += 1
            return k

        k = repeated(align(len(stream)))
        if not earlier and any(role == "user" for role, _ in stream[k:]):
            # A prompt holding no earlier turn is the thread's first turn sent again (a client sending the whole
            # history regenerates its answer) only while the thread holds nothing but answers after it: once the
            # user said more, a prompt without those turns is a client sending only its latest message, which may
            # say what the thread began with ("Hi") and is a new turn
            k = 0
        if not earlier and items and items[0].get(_GIVEN) is not None:
            # A message that gives its time is known by it: sent again (a client sending only its latest message
            # regenerates its answer), it repeats the stored message of its words and time, wherever that is
            first = (items[0]["role"], items[0]["text"])
            for p in range(len(stream) - 1, -1, -1):
                if stream[p] == first and record.times[p] is not None and same_time(items[0][_GIVEN], record.times[p]):
                    k = max(k, repeated(p))
                    break
        if earlier and items and k < len(items):
            # The latest place of the last earlier turn may be a later turn's copy of its words (the answer to a
            # turn regenerated was "Noted!" as the one before it): the turn repeats the stored messages following
            # the latest earlier place of those words that the turn's first message follows, when the stored turns
            # before it hold the prompt's earlier turns in order (not there below one place, they are not below an
            # earlier one: one alignment is tried)
            first = (items[0]["role"], items[0]["text"])
            for p in range(len(stream) - 1, 0, -1):
                if stream[p] == first and stream[p - 1] == earlier[-1]:
                    if align(p) == p:
                        k = max(k, repeated(p))
                    break
        return [item for item in items[k:] if "message_id" not in item["metadata"]
                or (item["metadata"]["message_id"], item["text"]) not in record.stored]

    def _remember(self, view: Any, thread: str | None, record: _Thread, seen: list[str], added: list[Any],
                  version: int) -> None:
        """Account for a turn stored with ``record`` (the thread's, read under the thread's turn; ``version``: the
        namespace's latest change after it): it is the thread's record for the next calls, and a record read while
        the turn was stored is not kept (``_rebuilt``)."""
        with self._threads_lock:
            record.version = version
            record.known.update(seen)
            for item in added:
                record.add(item)
            if added:
                self._stores += 1
                record.as_of = _STORES.stored(self._stores_key(view, thread))
            self._keep(view.namespace, thread, record)

    # -- recall before the model call ----------------------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage:
        query = self._latest_user_text(request.messages)
        zone = self.zone(request.runtime)  # a run's zone that names none fails it before the model is called
        if query:
            view, _, thread = self._scope(request.runtime)
            shown = self._shown(self._record(view, thread, request.messages), request.messages)
            recall = view.recall(query, budget_tokens=self.budget_tokens, exclude=shown,
                                 asked_at=self._asked(request.messages, zone))
            request = self._inject(request, recall.text)
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage:
        query = self._latest_user_text(request.messages)
        zone = self.zone(request.runtime)  # a run's zone that names none fails it before the model is called
        if query:
            view, _, thread = self._scope(request.runtime)
            shown = self._shown(await self._arecord(view, thread, request.messages), request.messages)
            recall = await acall(view, "recall", query, budget_tokens=self.budget_tokens, exclude=shown,
                                 asked_at=self._asked(request.messages, zone))
            request = self._inject(request, recall.text)
        return await handler(request)

    # -- remember after the model call ---------------------------------------------------------------------

    def _new_turns(self, messages: list[AnyMessage], user: str | None, thread: str | None,
                   zone: tzinfo | None = None) -> tuple[int, list[dict], list[str]]:
        """The model's latest answer and the messages since the model's previous answer, as hippo items: where the
        turn starts in ``messages``, the items, and the LangChain ids of the turn's messages (stored or not)."""
        end = len(messages)
        # the model call may end with the results of the answer's own calls: a structured response
        # (create_agent's ToolStrategy) adds the ToolMessage acknowledging it; they are stored with the next turn
        while end and isinstance(messages[end - 1], ToolMessage):
            end -= 1
        if not end or not isinstance(messages[end - 1], AIMessage):
            return 0, [], []
        answer = messages[end - 1]
        if any(m.tool_call_id not in {c.get("id") for c in answer.tool_calls} for m in messages[end:]):
            return 0, [], []  # results of an earlier answer's calls: no model answer is new
        turn = [answer]
        for message in reversed(messages[: end - 1]):
            if isinstance(message, AIMessage):
                break
            turn.append(message)
        turn.reverse()
        start = end - len(turn)
        return (start, self._items(turn, user, thread, first=start, zone=zone, names=_tool_names(messages)),
                [m.id for m in turn if m.id])

    def _items(self, messages: list[AnyMessage], user: str | None, thread: str | None, *,
               dated: bool = True, first: int = 0, zone: tzinfo | None = None,
               names: Mapping[str, str] | None = None) -> list[dict]:
        """The hippo items of the ``messages`` that are stored, each dated by its ``hippo_timestamp`` or now, on
        ``zone``'s calendar (UTC's without one; ``dated=False``: not dated, for comparing words); ``first`` is the
        place of ``messages[0]`` in the state's messages, which errors name."""
        now = now_in(zone)
        config = getattr(self.memory, "config", None)
        items = []
        for i, message in enumerate(messages):
            if is_notification(message):
                continue  # not the user's words (a summary of turns stored already, a task's update)
            results = tool_results(message)
            if results is not None:  # a tool's output sent as a user's message (Anthropic's form)
                if not self.store_tool_results:
                    continue
                tools = {(names or {}).get(r.get("tool_use_id")) for r in results}
                if tools <= self._own:
                    continue
                role, speaker = "tool", (tools.pop() if len(tools) == 1 else None) or "tool"
            elif isinstance(message, HumanMessage):  # a message's own name says who wrote it (a group chat)
                named = index_text(message.name, 1000) if isinstance(message.name, str) else ""  # a speaker's limit
                role, speaker = "user", named.strip() or user or "user"
            elif isinstance(message, AIMessage):
                role, speaker = "assistant", "assistant"
            elif isinstance(message, ToolMessage) and self.store_tool_results:
                # a result without a name (a history a client sends as role and text) is the tool its call named
                tool = message.name or (names or {}).get(message.tool_call_id)
                if tool in self._own:
                    continue
                role, speaker = "tool", tool or "tool"
            else:
                continue
            text = self._stored_text(message)
            if not text.strip():
                continue
            metadata = {"message_id": message.id} if message.id else {}
            when = time_of(message, f"messages[{first + i}]", config, now, as_json=False, zone=zone) if dated else None
            given = (message.additional_kwargs or {}).get(TIME_KEY) if dated else None
            items.append({"text": text, "speaker": speaker, "role": role, "timestamp": when,
                          "session_id": thread, "metadata": metadata,
                          _GIVEN: epoch_of(message_time(given, "", config, timezone.utc)) if given is not None
                          else None})
        return items

    def _words(self, messages: list[AnyMessage]) -> list[tuple[str, str]]:
        """(role, stored text) of the ``messages`` that are stored, in order."""
        return [(item["role"], item["text"])
                for item in self._items(messages, None, None, dated=False, names=_tool_names(messages))]

    def after_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        view, user, thread = self._scope(runtime)
        start, items, seen = self._new_turns(state["messages"], user, thread, self.zone(runtime))
        if not seen and not items:
            return None
        with _TURNS.held((store_key(self.memory), view.namespace, thread)):
            self._store_turn(view, thread, state["messages"][:start], items, seen)
        return None

    async def aafter_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        view, user, thread = self._scope(runtime)
        start, items, seen = self._new_turns(state["messages"], user, thread, self.zone(runtime))
        if not seen and not items:
            return None
        await _TURNS.arun((store_key(self.memory), view.namespace, thread),
                          lambda: self._store_turn(view, thread, state["messages"][:start], items, seen))
        return None

    def _store_turn(self, view: Any, thread: str | None, earlier: list[AnyMessage], items: list[dict],
                    seen: list[str]) -> None:
        """Store what the thread has not stored of a turn (``items``; ``earlier``: the prompt's turns before it), in
        the thread's turn. The turns of this process take turns on ``_Turns``; those of other processes on the
        store: the turn is stored only while the namespace's latest change is the one read before comparing
        (``add_many(if_version=...)``), else the thread is read again and compared again."""
        words = self._words(earlier)
        while True:
            version = view.version()
            record = self._record(view, thread, earlier, version)
            todo = self._unstored(record, items, words)
            if not todo:
                added = []
                break
            try:
                added = view.add_many([{k: v for k, v in item.items() if k != _GIVEN} for item in todo],
                                      if_version=version)
            except Changed:  # another process (or thread of this user) wrote meanwhile: read the thread again
                continue
            version += 1
            break
        self._remember(view, thread, record, seen, added, version)


__all__ = ["HippoMemoryMiddleware", "DEFAULT_TEMPLATE"]
