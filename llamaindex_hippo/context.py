"""Context lifecycle for ``llama_index.core.memory.Memory`` (seed 004, hippocampus.md), with the same index
policies as ``langchain_hippo.HippoContextMiddleware`` (``Memory.wants_index``, ``hippo.engine.entries``).

* ``HippoContextBlock``: a memory block. Messages flushed out of the short-term FIFO are indexed when the policies
  say so (large tool outputs, error dumps, user instructions) or when they are long turns (they decayed out of
  short-term memory); the block contributes the entries' compact blocks, strongest first, within its budget.
* ``compact_chat_history`` / ``HippoContextMemory``: the chat-history hook. Large tool outputs of older turns
  *inside* the FIFO are replaced by their entries in what ``aget`` returns (what the LLM is sent); the stored chat
  history is unchanged.
* ``make_expand_tool``: the ``memory_expand(entry_id, query)`` ``FunctionTool`` for pattern completion.

Entries of a session live in the namespace ``"context.<session_id>"``; the turn clock advances by one per new user
message the memory is read for.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, Iterable, Mapping

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.memory.memory import Memory as LlamaMemory

from hippo import EXPAND_TOOL, ContextCompactor, ContextMessage, InvalidInput, content_key, count_tokens
from llamaindex_hippo._common import (ValidatedInit, acall, check_chat_messages, check_memory, check_non_negative_int,
                                      check_positive_int, empty_block, message_text, tool_calls)

#: how many recent contents a block remembers the strength order of, for ``atruncate``
_KNOWN_CONTENTS = 64
#: how many sessions a block remembers the latest user message of (its turn clock); a forgotten one moves on a turn
_KNOWN_SESSIONS = 1024

_HIPPO_ROLE = {"tool": "tool", "function": "tool", "user": "user", "assistant": "assistant", "chatbot": "assistant",
               "model": "assistant", "system": "system", "developer": "system"}


def _role(message: ChatMessage) -> str:
    return str(getattr(message.role, "value", message.role))


def _text(message: ChatMessage) -> str:
    return message_text(message)


def _key(message: ChatMessage) -> str:
    """What identifies ``message`` across calls: its id, else its tool call id and its content (a model may give
    every call of a tool the same id, turn after turn), else its content."""
    extra = message.additional_kwargs or {}
    for name in ("id", "message_id"):
        if isinstance(extra.get(name), str) and extra[name]:
            return f"{name}:{extra[name]}"
    content = content_key(_role(message), _text(message))
    if isinstance(extra.get("tool_call_id"), str) and extra["tool_call_id"]:
        return f"tool_call_id:{extra['tool_call_id']}:{content}"
    return content


def _context_message(message: ChatMessage, called: Mapping[str, tuple[Any, Any]] | None = None) -> ContextMessage:
    """``message`` as hippo's compaction sees it. A tool result names its tool by its own ``name``, else by the call
    its ``tool_call_id`` answers among ``called`` (call id -> (tool, arguments)): LlamaIndex's agents give a result
    only the call's id. A ``memory_expand`` result names the query it was called with."""
    extra = message.additional_kwargs or {}
    call_id = str(extra["tool_call_id"]) if extra.get("tool_call_id") is not None else None
    name, args = (called or {}).get(call_id, (None, None)) if call_id is not None else (None, None)
    tool = extra.get("name") or extra.get("tool_name") or name
    query = args.get("query") if isinstance(args, dict) else None
    return ContextMessage(key=_key(message), role=_HIPPO_ROLE.get(_role(message), "system"), text=_text(message),
                          tool=str(tool) if tool else None, call_id=call_id,
                          query=query if isinstance(query, str) and str(tool) == EXPAND_TOOL else None)


def _context_messages(messages: list[ChatMessage]) -> list[ContextMessage]:
    """The conversation as hippo's compaction sees it, each tool result named by the call it answers."""
    called: dict[str, tuple[Any, Any]] = {}
    out = []
    for message in messages:
        called.update((str(cid), (name, args)) for cid, name, args in tool_calls(message) if cid is not None)
        out.append(_context_message(message, called))
    return out


class HippoContextBlock(ValidatedInit, BaseMemoryBlock[str]):
    """Index entries of content flushed out of the short-term FIFO.

    Args:
        memory: the ``hippo.Memory``.
        budget_tokens: token budget of the text the block contributes.
        min_turn_tokens: flushed user / assistant turns at least this long are indexed as ``message`` entries.
        policies: extra index policies (``hippo.engine.entries.DEFAULT_INDEX_POLICIES`` format).
        namespace_prefix: entries of session ``s`` live in ``f"{namespace_prefix}{s}"``.

    Example:
        >>> block = HippoContextBlock(memory=hippo.Memory("ctx.db"))
        >>> chat_memory = Memory.from_defaults(session_id="run-1", memory_blocks=[block], token_limit=8000)
        >>> agent_tools = [..., make_expand_tool(block.memory, namespace="context.run-1")]
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="hippo_context", description="The name of the memory block.")
    description: str | None = Field(default="Index entries of earlier tool outputs and turns; "
                                            "memory_expand(entry_id, query) reads the stored content.")
    memory: Any = Field(description="The hippo.Memory holding the entries.")
    budget_tokens: int = Field(default=1500)
    min_turn_tokens: int = Field(default=200)
    policies: list | None = Field(default=None)
    namespace_prefix: str = Field(default="context.")
    _last_user: OrderedDict = PrivateAttr(default_factory=OrderedDict)  # namespace -> the user message of its turn
    _compactor: Any = PrivateAttr(default=None)
    _weakest_first: OrderedDict = PrivateAttr(default_factory=OrderedDict)  # content -> its blocks, weakest first

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        if not callable(getattr(self.memory, "index_entry", None)):
            raise InvalidInput("memory must be a hippo.Memory with index entries")
        check_positive_int(self.budget_tokens, "budget_tokens")
        check_positive_int(self.min_turn_tokens, "min_turn_tokens")
        if not isinstance(self.namespace_prefix, str) or not self.namespace_prefix:
            raise InvalidInput("namespace_prefix must be a non-empty str")
        # flushed messages leave the short-term window: the policies index them, and long turns become entries
        self._compactor = ContextCompactor(self.memory, min_turn_tokens=self.min_turn_tokens, policies=self.policies)

    def view(self, session_id: str | None) -> Any:
        """The hippo namespace of a session's entries."""
        return self.memory.using(f"{self.namespace_prefix}{session_id or 'default'}")

    async def _aput(self, messages: list[ChatMessage]) -> None:
        by_session: dict[str | None, list[ChatMessage]] = {}
        for m in check_chat_messages(messages):
            by_session.setdefault((m.additional_kwargs or {}).get("session_id"), []).append(m)
        for session, batch in by_session.items():
            namespace = self.view(session).namespace
            for m in _context_messages(batch):
                await asyncio.to_thread(self._compactor.index, namespace, m)

    async def _aget(self, messages: list[ChatMessage] | None = None, session_id: str | None = None,
                    **block_kwargs: Any) -> str:
        view = self.view(session_id)
        messages = check_chat_messages(messages, allow_none=True)
        last_user = next((_text(m) for m in reversed(messages or []) if _role(m) == "user"), None)
        if last_user is not None and self._last_user.get(view.namespace) != last_user:
            self._last_user[view.namespace] = last_user
            self._last_user.move_to_end(view.namespace)
            while len(self._last_user) > _KNOWN_SESSIONS:  # a server's sessions come and go
                self._last_user.popitem(last=False)
            await acall(view, "next_turn")  # light consolidation: strengths move on by one turn (seed 004 §9.1)
        entries = await acall(view, "entries")
        if not entries:
            return ""
        order = sorted(entries, key=lambda e: (e.dormant, -e.strength, e.id))
        out, used = [], 0
        for rank, e in enumerate(order):
            block = e.render()
            cost = count_tokens(block) + 1
            if used + cost > self.budget_tokens:
                continue
            out.append((int(e.id[4:]), rank, block))
            used += cost
        out.sort()
        content = "\n\n".join(block for _, _, block in out)
        if content:  # which block atruncate drops first: the weakest, whatever its place
            self._weakest_first[content] = sorted(range(len(out)), key=lambda i: -out[i][1])
            while len(self._weakest_first) > _KNOWN_CONTENTS:
                self._weakest_first.popitem(last=False)
        return content

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop whole entry blocks until ``tokens_to_truncate`` tokens are freed: the weakest entries first, as
        ``aget`` chose the strongest (from the end for content this block did not give). None when nothing is left,
        or for empty ``content`` (``Memory`` passes ``[]`` for a block that contributed nothing)."""
        content = empty_block(content)
        if isinstance(tokens_to_truncate, bool) or not isinstance(tokens_to_truncate, int):
            raise InvalidInput(f"tokens_to_truncate must be an int, got {tokens_to_truncate!r}")
        blocks = content.split("\n\n[context_index") if content else []
        blocks = [blocks[0]] + ["[context_index" + b for b in blocks[1:]] if blocks else []
        order = self._weakest_first.get(content) if content else None
        if order is None or sorted(order) != list(range(len(blocks))):
            order = list(reversed(range(len(blocks))))
        dropped = set()
        for i in order:
            if tokens_to_truncate <= 0:
                break
            dropped.add(i)
            tokens_to_truncate -= count_tokens(blocks[i]) + 1
        return "\n\n".join(b for i, b in enumerate(blocks) if i not in dropped) or None


def compact_chat_history(messages: list[ChatMessage], memory: Any, *, namespace: str, keep_recent_turns: int = 1,
                         policies: Iterable[Mapping[str, Any]] | None = None) -> list[ChatMessage]:
    """``messages`` with the large tool outputs (and other content the index policies select) of turns older
    than the latest ``keep_recent_turns`` replaced by their index entries; the input list is not changed."""
    check_memory(memory)
    messages = check_chat_messages(messages)
    compactor = ContextCompactor(memory, keep_recent_turns=check_positive_int(keep_recent_turns, "keep_recent_turns"),
                                 index_roles=("tool",), index_turns=False, policies=policies)
    texts = compactor.compact(_context_messages(messages), namespace)
    out = list(messages)
    for i, text in enumerate(texts):
        if text is not None and _role(messages[i]) in ("tool", "function"):
            out[i] = ChatMessage(role=messages[i].role, content=text,
                                 additional_kwargs=dict(messages[i].additional_kwargs or {}))
    return out


class HippoContextMemory(LlamaMemory):
    """``llama_index.core.memory.Memory`` whose ``aget`` sends older large tool outputs as index entries.

    Build it with ``HippoContextMemory.from_defaults(hippo_memory=hippo.Memory(...), session_id=..., ...)``;
    every other argument is ``Memory.from_defaults``'s."""

    hippo_memory: Any = Field(default=None, exclude=True)
    keep_recent_turns: int = Field(default=1)
    index_policies: list | None = Field(default=None)

    @classmethod
    def from_defaults(cls, hippo_memory: Any = None, keep_recent_turns: int = 1,  # type: ignore[override]
                      index_policies: list | None = None, **kwargs: Any) -> "HippoContextMemory":
        check_memory(hippo_memory, "hippo_memory")
        check_positive_int(keep_recent_turns, "keep_recent_turns")
        try:  # refused now, not at every aget
            ContextCompactor(hippo_memory, policies=index_policies)
        except InvalidInput as exc:
            raise InvalidInput(f"index_policies: {exc}") from None
        mem = super().from_defaults(**kwargs)
        mem.hippo_memory = hippo_memory
        mem.keep_recent_turns = keep_recent_turns
        mem.index_policies = index_policies
        return mem

    @property
    def hippo_namespace(self) -> str:
        return f"context.{self.session_id}"

    async def aget(self, input: Any = None, **block_kwargs: Any) -> list[ChatMessage]:  # type: ignore[override]
        messages = await super().aget(input=input, **block_kwargs)
        if self.hippo_memory is None:
            return messages
        return await asyncio.to_thread(compact_chat_history, messages, self.hippo_memory,
                                       namespace=self.hippo_namespace, keep_recent_turns=self.keep_recent_turns,
                                       policies=self.index_policies)


def make_expand_tool(memory: Any, *, namespace: str, max_tokens: int = 1500, context_lines: int = 3):
    """``memory_expand(entry_id, query=None)`` as a LlamaIndex ``FunctionTool`` over ``namespace``."""
    from llama_index.core.tools import FunctionTool

    check_memory(memory)
    check_positive_int(max_tokens, "max_tokens")
    check_non_negative_int(context_lines, "context_lines")  # refused now, not in every answer the model gets
    view = memory.using(namespace)

    def memory_expand(entry_id: str, query: str | None = None) -> str:
        """Read the stored content behind an index entry '[context_index: ctx_N]': with a query, the numbered
        lines around the lines that match it; without, the whole content cut to a budget."""
        from hippo import HippoError

        if isinstance(query, str) and not query.strip():
            query = None  # a model fills an optional argument with "" as often as it leaves it out
        try:
            return view.complete(entry_id.strip(), query, max_tokens=max_tokens, context_lines=context_lines).text
        except HippoError as exc:
            return f"Error: {exc}"

    async def amemory_expand(entry_id: str, query: str | None = None) -> str:
        return await asyncio.to_thread(memory_expand, entry_id, query)

    return FunctionTool.from_defaults(fn=memory_expand, async_fn=amemory_expand, name=EXPAND_TOOL)


__all__ = ["HippoContextBlock", "HippoContextMemory", "compact_chat_history", "make_expand_tool", "EXPAND_TOOL"]
