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
import hashlib
from typing import Any, Iterable, Mapping

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import ConfigDict, Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.memory.memory import Memory as LlamaMemory

from hippo import InvalidInput
from hippo.text.extract import looks_like_error
from hippo.text.tokenizer import count_tokens
from llamaindex_hippo._common import ValidatedInit, acall, check_memory, check_positive_int

EXPAND_TOOL = "memory_expand"
_TYPE_OF_ROLE = {"tool": "tool_result", "function": "tool_result", "user": "message", "assistant": "message",
                 "chatbot": "message", "model": "message"}


def _role(message: ChatMessage) -> str:
    return str(getattr(message.role, "value", message.role))


def _text(message: ChatMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else (str(content) if content is not None else "")


def _key(message: ChatMessage) -> str:
    extra = message.additional_kwargs or {}
    for name in ("tool_call_id", "id", "message_id"):
        if isinstance(extra.get(name), str) and extra[name]:
            return f"{name}:{extra[name]}"
    return "sha:" + hashlib.sha1(f"{_role(message)}\x00{_text(message)}".encode("utf-8", "surrogatepass")).hexdigest()


def _index_message(view: Any, message: ChatMessage, turn: int | None, *, policies: list | None,
                   min_turn_tokens: int | None) -> str | None:
    """Index ``message`` in ``view`` when the policies (or, for long turns, ``min_turn_tokens``) say so; content
    hippo cannot store losslessly (control characters, lone surrogates) is left as it is."""
    try:
        return _index_checked(view, message, turn, policies=policies, min_turn_tokens=min_turn_tokens)
    except InvalidInput:
        return None


def _index_checked(view: Any, message: ChatMessage, turn: int | None, *, policies: list | None,
                   min_turn_tokens: int | None) -> str | None:
    text = _text(message)
    role = _role(message)
    entry_type = _TYPE_OF_ROLE.get(role)
    if entry_type is None or not text.strip():
        return None
    extra = message.additional_kwargs or {}
    key = _key(message)
    tool = extra.get("name") or extra.get("tool_name")
    error = entry_type == "tool_result" and looks_like_error(text)
    source = {"type": "error" if error else (str(tool) if tool and entry_type == "tool_result"
                                              else f"turn.{role}" if entry_type == "message" else "tool"),
              "ref": extra.get("tool_call_id"), "message_key": key, "retrievable": True}
    n = count_tokens(text)
    hippo_role = "tool" if entry_type == "tool_result" else ("user" if role == "user" else "assistant")
    if not view.wants_index(text, type=entry_type, role=hippo_role, source=source, n_tokens=n, policies=policies) \
            and not (min_turn_tokens is not None and entry_type == "message" and n >= min_turn_tokens):
        return None
    return view.index_entry(text, type=entry_type, role=hippo_role, source=source, turn=turn, policies=policies).id


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
    _last_user: dict = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        if not callable(getattr(self.memory, "index_entry", None)):
            raise InvalidInput("memory must be a hippo.Memory with index entries")
        check_positive_int(self.budget_tokens, "budget_tokens")
        check_positive_int(self.min_turn_tokens, "min_turn_tokens")
        if not isinstance(self.namespace_prefix, str) or not self.namespace_prefix:
            raise InvalidInput("namespace_prefix must be a non-empty str")
        if self.policies:
            from hippo.base.policies import compile_policies

            compile_policies(self.policies)

    def view(self, session_id: str | None) -> Any:
        """The hippo namespace of a session's entries."""
        return self.memory.using(f"{self.namespace_prefix}{session_id or 'default'}")

    async def _aput(self, messages: list[ChatMessage]) -> None:
        by_session: dict[str | None, list[ChatMessage]] = {}
        for m in messages:
            by_session.setdefault((m.additional_kwargs or {}).get("session_id"), []).append(m)
        for session, batch in by_session.items():
            view = self.view(session)
            for m in batch:
                await asyncio.to_thread(_index_message, view, m, None, policies=self.policies,
                                        min_turn_tokens=self.min_turn_tokens)

    async def _aget(self, messages: list[ChatMessage] | None = None, session_id: str | None = None,
                    **block_kwargs: Any) -> str:
        view = self.view(session_id)
        last_user = next((_text(m) for m in reversed(messages or []) if _role(m) == "user"), None)
        if last_user is not None and self._last_user.get(view.namespace) != last_user:
            self._last_user[view.namespace] = last_user
            await acall(view, "next_turn")  # light consolidation: strengths move on by one turn (seed 004 §9.1)
        entries = await acall(view, "entries")
        if not entries:
            return ""
        order = sorted(entries, key=lambda e: (e.dormant, -e.strength, e.id))
        out, used = [], 0
        for e in order:
            block = e.render()
            cost = count_tokens(block) + 1
            if used + cost > self.budget_tokens:
                continue
            out.append((int(e.id[4:]), block))
            used += cost
        return "\n\n".join(block for _, block in sorted(out))

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop whole entry blocks from the end until ``tokens_to_truncate`` tokens are freed."""
        blocks = content.split("\n\n[context_index") if content else []
        blocks = [blocks[0]] + ["[context_index" + b for b in blocks[1:]] if blocks else []
        while blocks and tokens_to_truncate > 0:
            tokens_to_truncate -= count_tokens(blocks.pop()) + 1
        return "\n\n".join(blocks) or None


def compact_chat_history(messages: list[ChatMessage], memory: Any, *, namespace: str, keep_recent_turns: int = 1,
                         policies: Iterable[Mapping[str, Any]] | None = None) -> list[ChatMessage]:
    """``messages`` with the large tool outputs (and other content the index policies select) of turns older
    than the latest ``keep_recent_turns`` replaced by their index entries; the input list is not changed."""
    check_memory(memory)
    check_positive_int(keep_recent_turns, "keep_recent_turns")
    policies = list(policies) if policies is not None else None
    view = memory.using(namespace)
    turns, n = [], 0
    for m in messages:
        if _role(m) == "user":
            n += 1
        turns.append(n)
    known = {e.source.get("message_key"): e.id for e in view.entries()}
    plan = []
    for i, m in enumerate(messages):
        if n - turns[i] < keep_recent_turns or _role(m) not in ("tool", "function"):
            continue
        if (m.additional_kwargs or {}).get("name") == EXPAND_TOOL:
            continue
        eid = known.get(_key(m)) or _index_message(view, m, turns[i], policies=policies, min_turn_tokens=None)
        if eid is not None:
            plan.append((i, eid))
    if not plan:
        return list(messages)
    blocks = view.entry_blocks([eid for _, eid in plan], turn=n)
    ask = next((_text(m) for m in reversed(messages) if _role(m) == "user"), "")
    if ask.strip():
        # seed 004 §7.1 direct reference: an identifier the user names brings the lines around it along
        blocks.update(view.blocks_on_cue(ask, blocks, turn=n))
    out = list(messages)
    for i, eid in plan:
        block = blocks.get(eid)
        if block is not None and len(block) < len(_text(messages[i])):
            out[i] = ChatMessage(role=messages[i].role, content=block,
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
    view = memory.using(namespace)

    def memory_expand(entry_id: str, query: str | None = None) -> str:
        """Read the stored content behind an index entry '[context_index: ctx_N]': with a query, the numbered
        lines around the lines that match it; without, the whole content cut to a budget."""
        from hippo import HippoError

        try:
            return view.complete(entry_id.strip(), query, max_tokens=max_tokens, context_lines=context_lines).text
        except HippoError as exc:
            return f"Error: {exc}"

    async def amemory_expand(entry_id: str, query: str | None = None) -> str:
        return await asyncio.to_thread(memory_expand, entry_id, query)

    return FunctionTool.from_defaults(fn=memory_expand, async_fn=amemory_expand, name=EXPAND_TOOL)


__all__ = ["HippoContextBlock", "HippoContextMemory", "compact_chat_history", "make_expand_tool", "EXPAND_TOOL"]
