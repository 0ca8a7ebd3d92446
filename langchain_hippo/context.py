"""``HippoContextMiddleware``: context lifecycle for LangChain 1.x ``create_agent`` (seed 004, hippocampus.md).

Before each model call the message list *sent to the model* is compacted (light consolidation per turn, seed 004
§9.1): large tool outputs and error dumps that the index policies select (§6.1, ``Memory.wants_index``) and old
turns whose strength decayed are stored in hippo as index entries (``Memory.index_entry``) and replaced by the
entries' compact blocks; dormant entries shrink to a one-line pointer (§8.3). Messages of the latest
``keep_recent_turns`` user turns, system messages and critical entries stay verbatim. The model gets a
``memory_expand(entry_id, query)`` tool for pattern completion (§7, ``Memory.complete``). The graph state, i.e. the
conversation the user sees, is never changed: only ``request.messages`` of the model call is overridden.

``end_thread`` (or ``consolidate_on_end=True``, after every agent run) runs deep consolidation (§9.2):
persist-worthy entries are written to long-term memory (``Memory.consolidate_entries``).

Scope: entries of a thread live in the namespace ``"context.<thread_id>"``; long-term memory is ``"user.<user_id>"``
(the namespace ``HippoMemoryMiddleware`` uses, so the two compose), else the memory's own namespace. User and
thread ids are found as ``HippoMemoryMiddleware`` finds them; ``namespace_fn(user_id, thread_id)`` may choose the
working namespace instead.

A message's turn is the number of user (human) messages up to and including it; the entries' decay clock counts
these turns.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from hippo import EXPAND_TOOL, ContextCompactor, ContextMessage, InvalidInput, content_key
from langchain_hippo._common import (check_bool, check_memory, check_messages, check_non_negative_int,
                                     check_positive_int, custom_namespace)
from langchain_hippo.middleware import HippoMemoryMiddleware, is_notification
from langchain_hippo.tools import _bind, _describe_validation_error

log = logging.getLogger("hippo.langchain.context")
# compacted messages kept as the objects last sent (HippoContextMiddleware.compact): enough for the prompts of a few
# hundred live threads, bounded for a server that runs for months
_COPIES_KEPT = 4096


class _ExpandArgs(BaseModel):
    entry_id: str = Field(description="The id of an index entry, as shown in '[context_index: ctx_N]'.")
    query: str | None = Field(default=None, description="What to look for in the stored content (a name, id, "
                              "key or value); without it the whole content comes back, cut to the budget.")


def _key(message: BaseMessage) -> str:
    """What identifies ``message`` across calls: its id, else its tool call id and its content (a model may give
    every call of a tool the same id, turn after turn), else its content."""
    if message.id:
        return f"id:{message.id}"
    if isinstance(message, ToolMessage) and message.tool_call_id:
        return f"call:{message.tool_call_id}:{content_key(message.type, message.text)}"
    return content_key(message.type, message.text)


def _text(message: BaseMessage) -> str:
    return message.text or ""


def _role(message: BaseMessage) -> str:
    """The role compaction sees. A human message the agent harness added (a notification: the summary
    ``SummarizationMiddleware`` puts in place of the turns it summarized) is no user turn: it counts no turn, is never
    indexed as the user's words (an instruction to persist) and is sent as it is, like the system prompt."""
    if isinstance(message, HumanMessage):
        return "system" if is_notification(message) else "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ToolMessage):
        return "tool"
    return "system"


def _context_messages(messages: list[AnyMessage]) -> list[ContextMessage]:
    """The conversation as hippo's compaction sees it (an old memory_expand result names its query)."""
    out = []
    for i, m in enumerate(messages):
        query = tool = None
        if isinstance(m, ToolMessage):
            # a result without a name (a history a client sends as role and text) is the tool its call named
            call = next((c for c in _calls_before(messages, i) if c.get("id") == m.tool_call_id), None)
            tool = m.name or (call.get("name") if call is not None else None)
            if tool == EXPAND_TOOL and call is not None:
                query = (call.get("args") or {}).get("query")
        out.append(ContextMessage(key=_key(m), role=_role(m), text=_text(m), tool=tool,
                                  call_id=m.tool_call_id if isinstance(m, ToolMessage) else m.id,
                                  error=isinstance(m, ToolMessage) and m.status == "error",
                                  query=query if isinstance(query, str) else None))
    return out


def _calls_before(messages: list[AnyMessage], i: int) -> list[dict]:
    for m in reversed(messages[:i]):
        if isinstance(m, AIMessage):
            return list(m.tool_calls or [])
    return []


class HippoContextMiddleware(AgentMiddleware):
    """Index large tool outputs and decayed turns, send the model compact entries, let it expand them.

    Args:
        memory: the ``hippo.Memory`` holding entries (one namespace per thread) and long-term memory.
        keep_recent_turns: user turns (the latest first) whose messages are always sent verbatim.
        turn_threshold: an old user / assistant message whose strength (seed 004 §8.1, ``message`` rate) fell
            below this is replaced by its entry when that is shorter.
        min_turn_tokens: shorter messages are never replaced (an entry would not be smaller).
        policies: extra index policies (``hippo.engine.entries.DEFAULT_INDEX_POLICIES`` format) evaluated after the
            defaults and ``config.decay.policies``.
        expand_tokens: token budget of one ``memory_expand`` answer.
        expand_context_lines: lines shown around each line that matches an expand query.
        consolidate_on_end: run deep consolidation after every agent run (otherwise call ``end_thread``).
        user_id_key / thread_id_key / namespace_fn: scoping, as in ``HippoMemoryMiddleware``.

    Example:
        >>> agent = create_agent(model, tools, middleware=[HippoContextMiddleware(hippo.Memory("ctx.db"))])
    """

    def __init__(
        self,
        memory: Any,
        *,
        keep_recent_turns: int = 1,
        turn_threshold: float = 0.75,
        min_turn_tokens: int = 200,
        policies: Iterable[Mapping[str, Any]] | None = None,
        expand_tokens: int = 1500,
        expand_context_lines: int = 3,
        consolidate_on_end: bool = False,
        cue_tokens: int = 200,
        user_id_key: str = "user_id",
        thread_id_key: str = "thread_id",
        namespace_fn: Callable[[str | None, str | None], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.memory = check_memory(memory)
        for attr in ("index_entry", "entries", "complete", "wants_index", "consolidate_entries"):
            if not callable(getattr(memory, attr, None)):
                raise InvalidInput(f"memory must be a hippo.Memory with index entries (no Memory.{attr})")
        self.keep_recent_turns = check_positive_int(keep_recent_turns, "keep_recent_turns")
        self.expand_tokens = check_positive_int(expand_tokens, "expand_tokens")
        check_non_negative_int(expand_context_lines, "expand_context_lines")  # the compactor would say context_lines
        self.consolidate_on_end = check_bool(consolidate_on_end, "consolidate_on_end")
        # the policy itself is hippo's (framework-neutral): which messages become entries, what replaces them;
        # seed 004 §7.1 "direct reference": an identifier of the current user message that an entry's block
        # lacks but its content holds brings the lines around it along with the block (cue_tokens=0 turns it off)
        self.compactor = ContextCompactor(memory, keep_recent_turns=keep_recent_turns, turn_threshold=turn_threshold,
                                          min_turn_tokens=min_turn_tokens, policies=policies, cue_tokens=cue_tokens,
                                          context_lines=expand_context_lines)
        # scoping is HippoMemoryMiddleware's: same ids, same long-term namespace
        self._scoper = HippoMemoryMiddleware(memory, user_id_key=user_id_key, thread_id_key=thread_id_key)
        if namespace_fn is not None and not callable(namespace_fn):
            raise InvalidInput("namespace_fn must be callable or None")
        self.namespace_fn = namespace_fn
        # (namespace, key) -> (text, message sent), the least recently sent dropped past _COPIES_KEPT: a server's
        # threads come and go, and only the prompts still being extended gain from the same objects
        self._copies: OrderedDict[tuple[str, str], tuple[str, AnyMessage]] = OrderedDict()
        self._copies_lock = threading.Lock()
        self.tools: list[BaseTool] = [self._expand_tool()]

    # -- scope ---------------------------------------------------------------------------------------------
    def working_namespace(self, user_id: str | None, thread_id: str | None) -> str:
        """Where the entries of a thread live."""
        chosen = custom_namespace(self.namespace_fn, user_id, thread_id)
        if chosen is not None:
            return chosen
        if thread_id is not None:
            return f"context.{thread_id}"
        return f"context.{self.memory.namespace}"

    def long_term_namespace(self, user_id: str | None, thread_id: str | None) -> str:
        """Where deep consolidation writes persist-worthy entries."""
        return f"user.{user_id}" if user_id is not None else self.memory.namespace

    def _views(self, runtime: Any) -> tuple[Any, str | None, str | None]:
        user, thread = self._scoper.identify(runtime)
        return self.memory.using(self.working_namespace(user, thread)), user, thread

    # -- compaction ----------------------------------------------------------------------------------------
    def compact(self, messages: list[AnyMessage], view: Any, *, index_recent: bool = False) -> list[AnyMessage]:
        """The message list to send: old large / decayed messages replaced by their index entries. With
        ``index_recent`` the policies also index the messages of the recent turns (they still stay verbatim)."""
        messages = check_messages(messages)
        texts = self.compactor.compact(_context_messages(messages), view.namespace, index_recent=index_recent)
        out = list(messages)
        for i, text in enumerate(texts):
            if text is None:
                continue
            key = (view.namespace, _key(messages[i]))
            with self._copies_lock:
                cached = self._copies.get(key)
                if cached is not None and cached[0] == text:
                    out[i] = cached[1]  # the same object as last time: a stable prompt prefix
                    self._copies.move_to_end(key)
                    continue
                out[i] = messages[i].model_copy(update={"content": text})
                self._copies[key] = (text, out[i])
                self._copies.move_to_end(key)
                while len(self._copies) > _COPIES_KEPT:
                    self._copies.popitem(last=False)
        return out

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage:
        view, _, _ = self._views(request.runtime)
        return handler(request.override(messages=self.compact(list(request.messages), view)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage:
        import asyncio

        view, _, _ = self._views(request.runtime)
        messages = await asyncio.to_thread(self.compact, list(request.messages), view)
        return await handler(request.override(messages=messages))

    # -- pattern completion tool ---------------------------------------------------------------------------
    def _expand(self, target: Any, entry_id: str, query: str | None = None) -> str:
        return self.compactor.expand(target.namespace, entry_id, query, max_tokens=self.expand_tokens)

    async def _aexpand(self, target: Any, entry_id: str, query: str | None = None) -> str:
        import asyncio

        return await asyncio.to_thread(self._expand, target, entry_id, query)

    def _expand_tool(self) -> BaseTool:
        func, coroutine = _bind(self._expand, self._aexpand, {}, lambda runtime: self._views(runtime)[0], True)
        return StructuredTool.from_function(
            func=func, coroutine=coroutine, name=EXPAND_TOOL, args_schema=_ExpandArgs,
            description=("Read the stored content behind an index entry '[context_index: ctx_N]'. With a query, "
                         "returns the numbered lines around the lines that match it; without, the whole content "
                         "(cut to a budget). Use it when the entry's summary and key_data lack a detail you need."),
            handle_tool_error=True, handle_validation_error=_describe_validation_error)

    # -- deep consolidation at the end of a thread ---------------------------------------------------------
    def end_thread(self, messages: list[AnyMessage] | None = None, *, thread_id: str | None = None,
                   user_id: str | None = None, runtime: Any = None) -> dict[str, Any]:
        """Deep consolidation of a thread's entries (seed 004 §9.2): persist-worthy ones go to long-term memory.

        ``messages`` (the thread's conversation) are first run through the index policies, the latest turns
        included, so an instruction given in the last turn is not missed. Ids default to those of ``runtime`` /
        the current run."""
        if messages is not None:
            messages = check_messages(messages)
        user, thread = self._ids(runtime, user_id, thread_id)
        view = self.memory.using(self.working_namespace(user, thread))
        into = self.long_term_namespace(user, thread)
        try:  # refused before anything is indexed: a call that raises stores nothing
            self.memory.using(into)
        except InvalidInput as exc:
            raise InvalidInput(f"user_id {user[:60]!r} names no namespace hippo can hold: {exc}") from None
        if messages:
            self.compact(list(messages), view, index_recent=True)
        return view.consolidate_entries("deep", into=into)

    async def aend_thread(self, messages: list[AnyMessage] | None = None, *, thread_id: str | None = None,
                          user_id: str | None = None, runtime: Any = None) -> dict[str, Any]:
        import asyncio

        return await asyncio.to_thread(self.end_thread, messages, thread_id=thread_id, user_id=user_id,
                                       runtime=runtime)

    def _ids(self, runtime: Any, user_id: str | None, thread_id: str | None) -> tuple[str | None, str | None]:
        for name, value in (("user_id", user_id), ("thread_id", thread_id)):
            # an id given names someone: a blank one would write to "user." (no one's namespace), a list to "user.[..]"
            if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))
                                      or not str(value).strip()):
                raise InvalidInput(f"{name} must be a non-empty string or None, got {value!r}")
        user, thread = self._scoper.identify(runtime)
        return (str(user_id) if user_id is not None else user, str(thread_id) if thread_id is not None else thread)

    def after_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        if self.consolidate_on_end:
            self.end_thread(state["messages"], runtime=runtime)
        return None

    async def aafter_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        if self.consolidate_on_end:
            await self.aend_thread(state["messages"], runtime=runtime)
        return None


__all__ = ["HippoContextMiddleware", "EXPAND_TOOL"]
