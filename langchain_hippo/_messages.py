"""LangChain messages <-> hippo items, losslessly: the item text is the message text (what hippo indexes),
and the full message (type, ids, tool calls, extra fields) rides along in ``metadata["lc_message"]``."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

from hippo import InvalidInput
from langchain_hippo._common import index_text

_ROLE_BY_TYPE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_CLASS_BY_ROLE = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}


def _indexable_text(message: BaseMessage) -> str:
    text = index_text(message.text or "")
    if text.strip():
        return text
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        return "; ".join(f"[tool call {c.get('name')}({json.dumps(c.get('args'), default=str)})]" for c in calls)
    return f"[{message.type} message without text]"


def message_to_item(message: BaseMessage, *, session_id: str | None) -> dict[str, Any]:
    """A hippo ``add_many`` item for ``message``."""
    if not isinstance(message, BaseMessage):
        raise InvalidInput(f"messages must be LangChain BaseMessage objects, got {type(message).__name__}")
    text = _indexable_text(message)
    stored = message_to_dict(message)
    try:  # kept whole or not at all: a value JSON does not hold exactly (NaN, bytes, an object) is refused
        json.dumps(stored, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"messages: a message of type {message.type!r} holds a value that JSON cannot keep exactly "
                           f"({exc}); hippo stores a message whole or not at all") from None
    if stored["data"].get("content") == text:
        del stored["data"]["content"]  # the item text holds it; no second copy
    role = _ROLE_BY_TYPE.get(message.type, "user")
    return {
        "text": text,
        "role": role,
        "speaker": message.name or role,
        "timestamp": datetime.now(timezone.utc),
        "session_id": session_id,
        "metadata": {"lc_message": stored},
    }


def item_to_message(item: Any) -> BaseMessage:
    """Rebuild the LangChain message an item was made from (or a plain one for items from elsewhere)."""
    stored = (item.metadata or {}).get("lc_message")
    if isinstance(stored, dict) and "type" in stored and isinstance(stored.get("data"), dict):
        data = dict(stored["data"])
        data.setdefault("content", item.text)
        return messages_from_dict([{"type": stored["type"], "data": data}])[0]
    if item.role == "tool":
        return ToolMessage(content=item.text, tool_call_id=str((item.metadata or {}).get("tool_call_id", "")))
    cls = _CLASS_BY_ROLE.get(item.role, HumanMessage)
    return cls(content=item.text, name=item.speaker if item.speaker not in (None, item.role) else None)


__all__ = ["message_to_item", "item_to_message"]
