"""``HippoChatMessageHistory``: a LangChain ``BaseChatMessageHistory`` kept in hippo.

One chat session is the set of messages with one ``session_id`` in a hippo namespace, in insertion order.
Messages round-trip losslessly (type, id, tool calls, extra fields); their text is indexed by hippo, so the
same store also answers ``recall`` / ``search`` across sessions. A message is dated by its
``additional_kwargs["hippo_timestamp"]`` (ISO-8601 text or epoch seconds: a chat loaded from elsewhere keeps when it
was said), else when it is added: by the clock in UTC, or on the calendar of ``timezone`` (the user's) when given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from hippo import InvalidInput, time_zone
from langchain_hippo._common import acall, check_memory, check_namespace
from langchain_hippo._messages import item_to_message, message_to_item, now_in


class HippoChatMessageHistory(BaseChatMessageHistory):
    """Chat history of one session in a ``hippo.Memory``.

    Args:
        memory: the ``hippo.Memory``.
        session_id: the hippo ``session_id`` of the chat.
        namespace: use this namespace of ``memory``.
        timezone: the user's time zone (an IANA name such as ``"America/New_York"``, an offset from UTC such as
            ``"+05:30"``, or a ``tzinfo``): a message without a ``hippo_timestamp`` is dated by the clock on its
            calendar, and one given in UTC (epoch seconds, naive, "Z") is put on it, so its "tonight" and
            "yesterday" are the user's days. None (the default): UTC's.

    Example:
        >>> history = HippoChatMessageHistory(hippo.Memory("chat.db"), session_id="t1")
        >>> RunnableWithMessageHistory(chain, lambda sid: HippoChatMessageHistory(memory, session_id=sid))
    """

    def __init__(self, memory: Any, session_id: str, *, namespace: str | None = None, timezone: Any = None) -> None:
        self.memory = check_memory(memory)
        self.timezone = timezone
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInput(f"session_id must be a non-empty string, got {session_id!r}")
        self.session_id = session_id
        self.namespace = namespace
        if getattr(getattr(getattr(memory, "config", None), "gate", None), "enabled", False):
            raise InvalidInput("memory has the encoding gate on (config.gate.enabled), which may refuse a message; "
                               "a chat history must keep every message: use a memory without the gate")

    # ``timezone`` and ``namespace`` may be set on a made history: checked as the constructor checks them, and the
    # next call uses them

    @property
    def timezone(self) -> Any:
        return self._timezone

    @timezone.setter
    def timezone(self, value: Any) -> None:
        self._zone = time_zone(value, "timezone")
        self._timezone = value

    @property
    def namespace(self) -> str | None:
        return self._namespace

    @namespace.setter
    def namespace(self, value: str | None) -> None:
        self._namespace = check_namespace(value)

    @property
    def _target(self) -> Any:
        return self.memory.using(self._namespace) if self._namespace is not None else self.memory

    @property
    def _filter(self) -> dict[str, Any]:
        return {"session_id": self.session_id}

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [item_to_message(i) for i in self._target.list(filter=self._filter)]

    async def aget_messages(self) -> list[BaseMessage]:
        return [item_to_message(i) for i in await acall(self._target, "list", filter=self._filter)]

    def _items(self, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        if isinstance(messages, (str, bytes, Mapping, BaseMessage)) or not isinstance(messages, Iterable):
            raise InvalidInput(f"messages must be a sequence of LangChain BaseMessage objects, got "
                               f"{type(messages).__name__}")
        now = now_in(self._zone)  # one time for the messages that bring none: they keep their order
        config = getattr(self._target, "config", None)
        return [message_to_item(m, session_id=self.session_id, name=f"messages[{i}]", config=config, now=now,
                                zone=self._zone) for i, m in enumerate(messages)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        items = self._items(messages)
        if items:
            self._target.add_many(items)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        items = self._items(messages)
        if items:
            await acall(self._target, "add_many", items)

    def clear(self) -> None:
        self._target.forget(self._filter)

    async def aclear(self) -> None:
        await acall(self._target, "forget", self._filter)


__all__ = ["HippoChatMessageHistory"]
