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

import hashlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from langchain.agents.middleware.types import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from hippo import HippoError, InvalidInput
from hippo.engine.hierarchy.decay import closed_form
from hippo.text.extract import looks_like_error
from hippo.text.tokenizer import count_tokens
from langchain_hippo._common import acall, check_memory, check_positive_int, custom_namespace
from langchain_hippo.middleware import HippoMemoryMiddleware
from langchain_hippo.tools import _bind, _describe_validation_error

EXPAND_TOOL = "memory_expand"
log = logging.getLogger("hippo.langchain.context")


class _ExpandArgs(BaseModel):
    entry_id: str = Field(description="The id of an index entry, as shown in '[context_index: ctx_N]'.")
    query: str | None = Field(default=None, description="What to look for in the stored content (a name, id, "
                              "key or value); without it the whole content comes back, cut to the budget.")


class _Thread:
    """What the middleware knows about one working namespace: which messages it indexed or decided to keep."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded = False
        self.entry_of: dict[str, str] = {}    # message key -> entry id
        self.keep: set[str] = set()           # message keys the policies left verbatim
        self.tokens: dict[str, int] = {}      # message key -> cl100k tokens of its text
        self.copies: dict[str, tuple] = {}    # entry id -> (block, message key, message sent)
        self.plain: set[str] = set()          # turns the policies do not index by content


def _key(message: BaseMessage) -> str:
    if message.id:
        return f"id:{message.id}"
    if isinstance(message, ToolMessage) and message.tool_call_id:
        return f"call:{message.tool_call_id}"
    return "sha:" + hashlib.sha1(f"{message.type}\x00{message.text}".encode("utf-8", "surrogatepass")).hexdigest()


def _text(message: BaseMessage) -> str:
    return message.text or ""


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
        if isinstance(turn_threshold, bool) or not isinstance(turn_threshold, (int, float)) \
                or not 0.0 <= turn_threshold <= 1.0:
            raise InvalidInput(f"turn_threshold must be a number in [0, 1], got {turn_threshold!r}")
        self.turn_threshold = float(turn_threshold)
        self.min_turn_tokens = check_positive_int(min_turn_tokens, "min_turn_tokens")
        if policies is not None and (isinstance(policies, (str, bytes, Mapping)) or not isinstance(policies, Iterable)):
            raise InvalidInput("policies must be a list of {'match': ..., 'action': ...} dicts or None")
        self.policies = list(policies) if policies is not None else None
        if self.policies:
            from hippo.base.policies import compile_policies

            compile_policies(self.policies)  # fail now, not at the first tool output
        self.expand_tokens = check_positive_int(expand_tokens, "expand_tokens")
        if isinstance(expand_context_lines, bool) or not isinstance(expand_context_lines, int) \
                or expand_context_lines < 0:
            raise InvalidInput(f"expand_context_lines must be an int >= 0, got {expand_context_lines!r}")
        self.expand_context_lines = expand_context_lines
        self.consolidate_on_end = bool(consolidate_on_end)
        # seed 004 §7.1 "direct reference": an identifier of the current user message that an entry's block lacks
        # but its content holds brings the lines around it along with the block (0 turns this off)
        if isinstance(cue_tokens, bool) or not isinstance(cue_tokens, int) or cue_tokens < 0:
            raise InvalidInput(f"cue_tokens must be an int >= 0, got {cue_tokens!r}")
        self.cue_tokens = cue_tokens
        # scoping is HippoMemoryMiddleware's: same ids, same long-term namespace
        self._scoper = HippoMemoryMiddleware(memory, user_id_key=user_id_key, thread_id_key=thread_id_key)
        if namespace_fn is not None and not callable(namespace_fn):
            raise InvalidInput("namespace_fn must be callable or None")
        self.namespace_fn = namespace_fn
        self._threads: dict[str, _Thread] = {}
        self._threads_lock = threading.Lock()
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

    def _thread(self, view: Any) -> _Thread:
        with self._threads_lock:
            th = self._threads.get(view.namespace)
            if th is None:
                th = self._threads[view.namespace] = _Thread()
        if not th.loaded:
            with th.lock:
                if not th.loaded:
                    for e in view.entries():  # entries indexed by an earlier process
                        mk = e.source.get("message_key")
                        if isinstance(mk, str):
                            th.entry_of[mk] = e.id
                    th.loaded = True
        return th

    # -- compaction ----------------------------------------------------------------------------------------
    def _tokens(self, th: _Thread, key: str, text: str) -> int:
        n = th.tokens.get(key)
        if n is None:
            n = th.tokens[key] = count_tokens(text) if text else 0
        return n

    def _decide(self, view: Any, th: _Thread, message: BaseMessage, key: str, turn: int, age: int) -> str | None:
        """The entry id standing for ``message`` (indexing it now if the policies say so), or None."""
        got = th.entry_of.get(key)
        if got is not None or key in th.keep:
            return got
        try:
            return self._index(view, th, message, key, turn, age)
        except InvalidInput as exc:
            # content hippo cannot store losslessly (control characters, lone surrogates): sent verbatim
            log.warning("message %s stays verbatim: %s", key, exc)
            th.keep.add(key)
            return None

    def _index(self, view: Any, th: _Thread, message: BaseMessage, key: str, turn: int, age: int) -> str | None:
        text = _text(message)
        if not text.strip():
            th.keep.add(key)
            return None
        n = self._tokens(th, key, text)
        if isinstance(message, ToolMessage):
            if message.name == EXPAND_TOOL:
                th.keep.add(key)
                return None
            error = message.status == "error" or looks_like_error(text)
            source = {"type": "error" if error else (message.name or "tool"), "tool": message.name,
                      "ref": message.tool_call_id, "message_key": key, "retrievable": True}
            if not view.wants_index(text, type="tool_result", role="tool", source=source, n_tokens=n,
                                    policies=self.policies):
                th.keep.add(key)
                return None
            entry = view.index_entry(text, type="tool_result", role="tool", source=source, turn=turn,
                                     policies=self.policies)
        elif isinstance(message, (HumanMessage, AIMessage)):
            role = "user" if isinstance(message, HumanMessage) else "assistant"
            source = {"type": f"turn.{role}", "ref": message.id, "message_key": key, "retrievable": True}
            if key not in th.plain:
                # user instructions are indexed at once (policy: high priority, persist-worthy); such an entry
                # replaces the message only if it is ever shorter than the message
                if view.wants_index(text, type="message", role=role, source=source, n_tokens=n,
                                    policies=self.policies):
                    entry = view.index_entry(text, type="message", role=role, source=source, turn=turn,
                                             policies=self.policies)
                    th.entry_of[key] = entry.id
                    return entry.id
                th.plain.add(key)
            if n < self.min_turn_tokens:
                th.keep.add(key)  # never worth an entry; short turns stay verbatim
                return None
            if closed_form(view.config.decay.rates["message"], age) >= self.turn_threshold:
                return None  # not decayed yet (seed 004 §8.1, message rate): decided again at a later turn
            entry = view.index_entry(text, type="message", role=role, source=source, turn=turn,
                                     policies=self.policies)
        else:
            th.keep.add(key)
            return None
        th.entry_of[key] = entry.id
        return entry.id

    def compact(self, messages: list[AnyMessage], view: Any, *, index_recent: bool = False) -> list[AnyMessage]:
        """The message list to send: old large / decayed messages replaced by their index entries. With
        ``index_recent`` the policies also index the messages of the recent turns (they still stay verbatim)."""
        th = self._thread(view)
        turns = []
        n_turn = 0
        for m in messages:
            if isinstance(m, HumanMessage):
                n_turn += 1
            turns.append(n_turn)
        current = n_turn
        if current <= self.keep_recent_turns - 1 and not index_recent:
            return list(messages)
        plan: list[tuple[int, str]] = []
        with th.lock:
            for i, m in enumerate(messages):
                age = current - turns[i]
                if isinstance(m, SystemMessage):
                    continue
                if age < self.keep_recent_turns:
                    if index_recent and not (isinstance(m, ToolMessage) and m.name == EXPAND_TOOL):
                        self._decide(view, th, m, _key(m), turns[i], age)
                    continue
                key = _key(m)
                if isinstance(m, ToolMessage) and m.name == EXPAND_TOOL:
                    plan.append((i, ""))
                    continue
                eid = self._decide(view, th, m, key, turns[i], age)
                if eid is not None:
                    plan.append((i, eid))
        if not plan:
            return list(messages)
        blocks = view.entry_blocks([eid for _, eid in plan if eid], turn=current)
        blocks.update(self._cued(view, messages, blocks, current))
        out = list(messages)
        for i, eid in plan:
            m = messages[i]
            if not eid:
                query = next((c.get("args", {}).get("query") for c in self._calls_before(messages, i)
                              if c.get("id") == m.tool_call_id), None)
                note = f"[memory_expand result of an earlier turn{f' for {query!r}' if query else ''} " \
                       "removed from context; call memory_expand again to re-read it]"
                out[i] = m.model_copy(update={"content": note})
                continue
            block = blocks.get(eid)
            if block is None:
                continue  # critical (kept verbatim) or deleted meanwhile
            cached = th.copies.get(eid)
            if cached is not None and cached[0] == block and cached[1] == _key(m):
                out[i] = cached[2]
                continue
            if len(block) >= len(_text(m)):
                continue  # the entry would not be smaller than the message
            out[i] = m.model_copy(update={"content": block})
            th.copies[eid] = (block, _key(m), out[i])
        return out

    def _cued(self, view: Any, messages: list[AnyMessage], blocks: dict[str, str | None], turn: int
              ) -> dict[str, str]:
        """Blocks extended with the lines an identifier of the latest user message points to (pattern
        completion on a direct reference, seed 004 §7.1), for entries whose block does not already show it."""
        if not self.cue_tokens:
            return {}
        ask = next((_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        if not ask.strip():
            return {}
        try:
            return view.blocks_on_cue(ask, blocks, max_tokens=self.cue_tokens,
                                      context_lines=self.expand_context_lines, turn=turn)
        except HippoError:
            return {}

    @staticmethod
    def _calls_before(messages: list[AnyMessage], i: int) -> list[dict]:
        for m in reversed(messages[:i]):
            if isinstance(m, AIMessage):
                return list(m.tool_calls or [])
        return []

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
        got = target.complete(entry_id.strip(), query, max_tokens=self.expand_tokens,
                              context_lines=self.expand_context_lines)
        return got.text

    async def _aexpand(self, target: Any, entry_id: str, query: str | None = None) -> str:
        got = await acall(target, "complete", entry_id.strip(), query, max_tokens=self.expand_tokens,
                          context_lines=self.expand_context_lines)
        return got.text

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
        user, thread = self._ids(runtime, user_id, thread_id)
        view = self.memory.using(self.working_namespace(user, thread))
        if messages:
            self.compact(list(messages), view, index_recent=True)
        return view.consolidate_entries("deep", into=self.long_term_namespace(user, thread))

    async def aend_thread(self, messages: list[AnyMessage] | None = None, *, thread_id: str | None = None,
                          user_id: str | None = None, runtime: Any = None) -> dict[str, Any]:
        import asyncio

        return await asyncio.to_thread(self.end_thread, messages, thread_id=thread_id, user_id=user_id,
                                       runtime=runtime)

    def _ids(self, runtime: Any, user_id: str | None, thread_id: str | None) -> tuple[str | None, str | None]:
        user, thread = self._scoper.identify(runtime)
        return (user_id if user_id is not None else user, thread_id if thread_id is not None else thread)

    def after_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        if self.consolidate_on_end:
            self.end_thread(state["messages"], runtime=runtime)
        return None

    async def aafter_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        if self.consolidate_on_end:
            await self.aend_thread(state["messages"], runtime=runtime)
        return None


__all__ = ["HippoContextMiddleware", "EXPAND_TOOL"]
