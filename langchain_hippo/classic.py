"""``HippoMemory``: hippo as a ``langchain_classic`` chain memory (``BaseMemory``).

``load_memory_variables`` recalls for the chain input under a token budget; ``save_context`` stores the input
and the output as two messages of the session, choosing the keys exactly as ``ConversationBufferMemory`` does
(``langchain_classic/memory/chat_memory.py``: ``BaseChatMemory._get_input_output``); ``chat_memory`` is the
session's ``HippoChatMessageHistory``; ``clear()`` forgets only what this object wrote. Needs the optional
``langchain-classic`` package.
"""

from __future__ import annotations

import uuid
import warnings
from typing import Any

try:
    from langchain_classic.base_memory import BaseMemory
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "HippoMemory needs langchain-classic; install it with: pip install 'hippo-memory[classic]'"
    ) from exc

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import ConfigDict, Field, PrivateAttr, ValidationError

from hippo import InvalidInput, time_zone
from langchain_hippo._common import (
    MissingKey,
    acall,
    check_memory,
    check_namespace,
    check_positive_int,
    query_text,
    raise_invalid_from_validation,
)
from langchain_hippo._messages import content_text, item_to_message, message_to_item, now_in, replayable
from langchain_hippo.chat_history import HippoChatMessageHistory


def _new_session_id() -> str:
    return f"hippo-memory-{uuid.uuid4().hex}"


class HippoMemory(BaseMemory):
    """Long-term chain memory: recall from everything stored, not just the last turns.

    Args:
        memory: the ``hippo.Memory``.
        session_id: hippo ``session_id`` of the turns this object stores (default: a new id per object).
            ``clear()`` forgets this session only: other sessions, other threads' chat histories and notes added
            with ``Memory.add`` stay. To wipe a namespace, call ``hippo.Memory.clear()`` explicitly.
        namespace: use this namespace of ``memory``.
        memory_key: the prompt variable filled with the recalled context.
        input_key / output_key: which chain input / output to store and recall for (default: the only one).
        budget_tokens: recall budget in cl100k tokens.
        return_messages: give the recalled messages as a list of messages instead of one string (a chat model
            takes them as history: a tool call recalled without its result, or a result without its call,
            comes as words, without the link; see ``langchain_hippo._messages.replayable``).
        timezone: the user's time zone (an IANA name such as ``"America/New_York"``, an offset from UTC such as
            ``"+05:30"``, or a ``tzinfo``): the turns are dated by the clock on its calendar, and the input is asked
            then (``recall(asked_at=...)``), so "tonight" and "yesterday" are the user's days. None (the default):
            the turns are dated in UTC and the input asked as of the latest message stored.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    session_id: str = Field(default_factory=_new_session_id)
    namespace: str | None = None
    memory_key: str = "history"
    input_key: str | None = None
    output_key: str | None = None
    budget_tokens: int = 1000
    return_messages: bool = False
    timezone: Any = None
    _zone: Any = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise_invalid_from_validation(type(self).__name__, exc)

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        check_namespace(self.namespace)
        check_positive_int(self.budget_tokens, "budget_tokens")
        self._zone = time_zone(self.timezone, "timezone")
        if not self.memory_key:
            raise InvalidInput("memory_key must be a non-empty string")
        if not isinstance(self.session_id, str) or not self.session_id.strip():
            raise InvalidInput(f"session_id must be a non-empty string, got {self.session_id!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        # a setting changed on a made object is checked as the constructor checks it, and the time zone read again
        zone = self._zone
        if name == "timezone":
            zone = time_zone(value, "timezone")
        elif name == "namespace":
            check_namespace(value)
        elif name == "budget_tokens":
            check_positive_int(value, "budget_tokens")
        elif name == "session_id" and (not isinstance(value, str) or not value.strip()):
            raise InvalidInput(f"session_id must be a non-empty string, got {value!r}")
        elif name == "memory_key" and not value:
            raise InvalidInput("memory_key must be a non-empty string")
        super().__setattr__(name, value)
        if name == "timezone":
            self._zone = zone

    @property
    def _target(self) -> Any:
        return self.memory.using(self.namespace) if self.namespace is not None else self.memory

    @property
    def memory_variables(self) -> list[str]:
        return [self.memory_key]

    @property
    def chat_memory(self) -> HippoChatMessageHistory:
        """The turns this object stored, as a chat history (``BaseChatMemory.chat_memory``'s role)."""
        return HippoChatMessageHistory(self.memory, session_id=self.session_id, namespace=self.namespace,
                                       timezone=self._zone)

    # -- helpers -------------------------------------------------------------------------------------------

    # The key rules and their order are BaseChatMemory._get_input_output's: the input key is chosen (ambiguity is a
    # ValueError), then the output key (several keys fall back to "output" with a warning), then both are read.

    def _input_key(self, inputs: dict[str, Any]) -> str:
        if not isinstance(inputs, dict):
            raise InvalidInput(f"inputs must be a dict, got {type(inputs).__name__}")
        if self.input_key is not None:
            return self.input_key
        # langchain_classic.memory.utils.get_prompt_input_key: every key but the memory variables and "stop"
        keys = [k for k in inputs if k not in (*self.memory_variables, "stop")]
        if len(keys) != 1:
            raise InvalidInput(f"inputs: one input key expected, got {sorted(keys)}; set input_key")
        return keys[0]

    def _output_key(self, outputs: dict[str, Any]) -> str:
        if not isinstance(outputs, dict):
            raise InvalidInput(f"outputs must be a dict, got {type(outputs).__name__}")
        if self.output_key is not None:
            return self.output_key
        if len(outputs) == 1:
            return next(iter(outputs))
        if "output" in outputs:
            # AgentExecutor(return_intermediate_steps=True) returns {"output", "intermediate_steps"}
            warnings.warn(f"'{type(self).__name__}' got multiple output keys: {outputs.keys()}. The default "
                          "'output' key is being used. If this is not desired, please manually set 'output_key'.",
                          stacklevel=4)
            return "output"
        raise InvalidInput(f"outputs: got multiple output keys {sorted(outputs)} and none is 'output'; "
                           "set output_key")

    @staticmethod
    def _read(mapping: dict[str, Any], key: str, name: str) -> str | list:
        """The value of ``key`` as a message's content: text, or a list of content blocks kept as it is (as
        ``ConversationBufferMemory`` keeps it: ``HumanMessage(content=value)``); a message's content; any other
        value as its text (``str``)."""
        if key not in mapping:
            raise MissingKey(f"{name} has no key {key!r}")
        value = mapping[key]
        if isinstance(value, BaseMessage):
            value = value.content
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, (str, dict)) for v in value)):
            return value
        return str(value)

    def _input_text(self, inputs: dict[str, Any]) -> str:
        """The chain's input as hippo can ask it (:func:`query_text`: an escape code or an over-long paste does
        not stop the chain, as it does not stop ``ConversationBufferMemory``); of content blocks, their words."""
        return query_text(content_text(self._read(inputs, self._input_key(inputs), "inputs")))

    def _variables(self, recall: Any) -> dict[str, Any]:
        if self.return_messages:
            # a recall picks messages, not exchanges: a tool call may come without its result, or a result without
            # its call, which no chat model takes in a prompt's history
            return {self.memory_key: replayable([item_to_message(i) for i in recall.messages])}
        return {self.memory_key: recall.text}

    def _items(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[dict]:
        in_key, out_key = self._input_key(inputs), self._output_key(outputs)
        turn = [HumanMessage(content=self._read(inputs, in_key, "inputs")),
                AIMessage(content=self._read(outputs, out_key, "outputs"))]
        return [message_to_item(m, session_id=self.session_id, zone=self._zone) for m in turn]

    def _asked(self) -> dict[str, Any]:
        """``recall``'s ``asked_at``: now on the user's calendar when a time zone is given (none otherwise)."""
        return {} if self._zone is None else {"asked_at": now_in(self._zone)}

    # -- BaseMemory ----------------------------------------------------------------------------------------

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query = self._input_text(inputs)
        if not query.strip():
            return {self.memory_key: [] if self.return_messages else ""}
        return self._variables(self._target.recall(query, budget_tokens=self.budget_tokens, **self._asked()))

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query = self._input_text(inputs)
        if not query.strip():
            return {self.memory_key: [] if self.return_messages else ""}
        return self._variables(await acall(self._target, "recall", query, budget_tokens=self.budget_tokens,
                                           **self._asked()))

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        items = self._items(inputs, outputs)
        if items:
            self._target.add_many(items)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        items = self._items(inputs, outputs)
        if items:
            await acall(self._target, "add_many", items)

    def clear(self) -> None:
        """Forget the turns of this object's session (and nothing else)."""
        self._target.forget({"session_id": self.session_id})

    async def aclear(self) -> None:
        await acall(self._target, "forget", {"session_id": self.session_id})


__all__ = ["HippoMemory"]
