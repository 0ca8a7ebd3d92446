"""``HippoMemory``: hippo as a ``langchain_classic`` chain memory (``BaseMemory``).

``load_memory_variables`` recalls for the chain input under a token budget; ``save_context`` stores the input
and the output as two messages of the session. Needs the optional ``langchain-classic`` package.
"""

from __future__ import annotations

from typing import Any

try:
    from langchain_classic.base_memory import BaseMemory
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "HippoMemory needs langchain-classic; install it with: pip install 'hippo-memory[classic]'"
    ) from exc

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import ConfigDict, ValidationError

from hippo import InvalidInput
from langchain_hippo._common import (
    acall,
    check_memory,
    check_namespace,
    check_positive_int,
    raise_invalid_from_validation,
)
from langchain_hippo._messages import item_to_message, message_to_item


class HippoMemory(BaseMemory):
    """Long-term chain memory: recall from everything stored, not just the last turns.

    Args:
        memory: the ``hippo.Memory``.
        session_id: tag for stored turns (hippo ``session_id``); ``clear()`` removes only this session when set.
        namespace: use this namespace of ``memory``.
        memory_key: the prompt variable filled with the recalled context.
        input_key / output_key: which chain input / output to store and recall for (default: the only one).
        budget_tokens: recall budget in cl100k tokens.
        return_messages: give the recalled messages as a list of messages instead of one string.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    session_id: str | None = None
    namespace: str | None = None
    memory_key: str = "history"
    input_key: str | None = None
    output_key: str | None = None
    budget_tokens: int = 1000
    return_messages: bool = False

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise_invalid_from_validation(type(self).__name__, exc)

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        check_namespace(self.namespace)
        check_positive_int(self.budget_tokens, "budget_tokens")
        if not self.memory_key:
            raise InvalidInput("memory_key must be a non-empty string")

    @property
    def _target(self) -> Any:
        return self.memory.using(self.namespace) if self.namespace is not None else self.memory

    @property
    def memory_variables(self) -> list[str]:
        return [self.memory_key]

    # -- helpers -------------------------------------------------------------------------------------------

    def _input_text(self, inputs: dict[str, Any]) -> str:
        if self.input_key is not None:
            if self.input_key not in inputs:
                raise InvalidInput(f"inputs has no key {self.input_key!r} (input_key)")
            key = self.input_key
        else:
            keys = [k for k in inputs if k not in (self.memory_key, "stop")]
            if len(keys) != 1:
                raise InvalidInput(f"inputs: one input key expected, got {sorted(keys)}; set input_key")
            key = keys[0]
        value = inputs[key]
        return value.text if isinstance(value, BaseMessage) else str(value)

    def _output_text(self, outputs: dict[str, Any]) -> str:
        if self.output_key is not None:
            if self.output_key not in outputs:
                raise InvalidInput(f"outputs has no key {self.output_key!r} (output_key)")
            value = outputs[self.output_key]
        elif len(outputs) == 1:
            value = next(iter(outputs.values()))
        else:
            raise InvalidInput(f"outputs: one output key expected, got {sorted(outputs)}; set output_key")
        return value.text if isinstance(value, BaseMessage) else str(value)

    def _variables(self, recall: Any) -> dict[str, Any]:
        if self.return_messages:
            return {self.memory_key: [item_to_message(i) for i in recall.messages]}
        return {self.memory_key: recall.text}

    def _items(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[dict]:
        turn = [HumanMessage(content=self._input_text(inputs)), AIMessage(content=self._output_text(outputs))]
        return [message_to_item(m, session_id=self.session_id) for m in turn if m.text.strip()]

    # -- BaseMemory ----------------------------------------------------------------------------------------

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query = self._input_text(inputs)
        if not query.strip():
            return {self.memory_key: [] if self.return_messages else ""}
        return self._variables(self._target.recall(query, budget_tokens=self.budget_tokens))

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query = self._input_text(inputs)
        if not query.strip():
            return {self.memory_key: [] if self.return_messages else ""}
        return self._variables(await acall(self._target, "recall", query, budget_tokens=self.budget_tokens))

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        items = self._items(inputs, outputs)
        if items:
            self._target.add_many(items)

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        items = self._items(inputs, outputs)
        if items:
            await acall(self._target, "add_many", items)

    def clear(self) -> None:
        if self.session_id is not None:
            self._target.forget({"session_id": self.session_id})
        else:
            self._target.clear()

    async def aclear(self) -> None:
        if self.session_id is not None:
            await acall(self._target, "forget", {"session_id": self.session_id})
        else:
            await acall(self._target, "clear")


__all__ = ["HippoMemory"]
