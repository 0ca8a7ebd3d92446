"""LangChain messages <-> hippo items, losslessly: the item text is the message text (what hippo indexes),
and the full message (type, ids, tool calls, extra fields) rides along in ``metadata["lc_message"]``."""

from __future__ import annotations

import json
import numbers
from datetime import datetime, timezone, tzinfo
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

from hippo import InvalidInput, message_time
from langchain_hippo._common import index_text

#: the ``additional_kwargs`` key that gives a message its time (when it was said): ISO-8601 text (its offset from UTC
#: kept) or epoch seconds; a message without it is dated when it is stored
TIME_KEY = "hippo_timestamp"

#: the hippo role of each message class (and of its chunk, a subclass: a streamed answer is an ``AIMessageChunk``)
_ROLE_BY_CLASS = ((HumanMessage, "user"), (AIMessage, "assistant"), (SystemMessage, "system"), (ToolMessage, "tool"),
                  (FunctionMessage, "tool"))
#: the hippo role of a ``ChatMessage``'s role, as LangChain's own conversions read it (``convert_to_openai_messages``)
_ROLE_BY_NAME = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system",
                 "developer": "system", "tool": "tool", "function": "tool"}
_CLASS_BY_ROLE = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}


def calls_text(calls: list[dict[str, Any]]) -> str:
    """Tool calls in words: ``[tool call name({"arg": ...})]`` each."""
    return "; ".join(f"[tool call {c.get('name')}({json.dumps(c.get('args'), default=str, ensure_ascii=False)})]"
                     for c in calls)


#: the content blocks that hold a message's words: LangChain's and Anthropic's ``text``, OpenAI Responses'
#: ``input_text`` and ``output_text`` (a history kept in the API's own form)
_TEXT_BLOCKS = ("text", "input_text", "output_text")


def content_text(content: Any, *, results: bool = True) -> str:
    """The words of a message's ``content``: the string itself, or of a list of content blocks the text of its text
    blocks (:data:`_TEXT_BLOCKS`) and strings, joined as ``BaseMessage.text`` joins them, and a refusal's words;
    then, each on a line of its own, the output an Anthropic ``tool_result`` block holds (its ``content``: text or
    blocks; with ``results``). ``BaseMessage.text`` reads only ``text`` blocks: a user's message or an answer given
    in OpenAI Responses' blocks, and a tool's output in a ``tool_result`` block, had no words. Reasoning
    (``thinking``, ``reasoning``), media and tool calls (``tool_use``: the message's ``tool_calls``) are no words."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    said: list[str] = []
    outputs: list[str] = []
    for block in content:
        if isinstance(block, str):
            said.append(block)
        elif not isinstance(block, dict):
            continue
        elif block.get("type") in _TEXT_BLOCKS and isinstance(block.get("text"), str):
            said.append(block["text"])
        elif block.get("type") == "refusal" and isinstance(block.get("refusal"), str):
            said.append(block["refusal"])
        elif block.get("type") == "tool_result" and results:
            output = content_text(block.get("content"), results=False).strip()
            if output:
                outputs.append(output)
    return "\n".join(t for t in ("".join(said), *outputs) if t)


def calls_of(message: BaseMessage) -> list[dict[str, Any]]:
    """The tool calls ``message`` makes: its ``tool_calls``, else those its Anthropic ``tool_use`` blocks make (a
    history kept in the API's form gives LangChain an ``AIMessage`` whose calls are only in its content)."""
    calls = getattr(message, "tool_calls", None) or []
    if calls or not isinstance(message, AIMessage) or not isinstance(message.content, list):
        return list(calls)
    return [{"name": b["name"], "args": b.get("input"), "id": b.get("id"), "type": "tool_call"}
            for b in message.content
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("name"), str)]


def message_text(message: BaseMessage) -> str:
    """The words of ``message`` (:func:`content_text`), stripped."""
    return content_text(message.content).strip()


def _indexable_text(message: BaseMessage) -> str:
    """What hippo indexes of ``message``: its words, then its tool calls in words on a line of their own (what the
    middleware stores of an answer that calls tools), else a marker of a message without either."""
    text = index_text(content_text(message.content))
    calls = calls_of(message)
    if calls:  # arguments may hold characters hippo does not index that JSON writes as they are (U+007F)
        return index_text(f"{text}\n{calls_text(calls)}" if text.strip() else calls_text(calls))
    if text.strip():
        return text
    return f"[{message.type} message without text]"


def tool_results(message: BaseMessage) -> list[dict] | None:
    """The ``tool_result`` blocks of a ``HumanMessage`` that holds only them, else None: Anthropic's API sends a
    tool's output as a user's message, and a history kept in its form gives LangChain such a message."""
    content = message.content if isinstance(message, HumanMessage) else None
    if isinstance(content, list) and content and \
            all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return content
    return None


def role_of(message: BaseMessage) -> tuple[str, str | None]:
    """The hippo role of ``message`` and who said it when its class does not say (a ``ChatMessage`` of a role of its
    own, such as ``"critic"``), else None. By its class: its ``type`` names a chunk by its class name
    (``"AIMessageChunk"``), and a streamed answer (``RunnableWithMessageHistory.stream``) was the user's words. A
    user's message that only holds tool results (:func:`tool_results`) is a tool's."""
    if tool_results(message) is not None:
        return "tool", None
    for cls, role in _ROLE_BY_CLASS:
        if isinstance(message, cls):
            return role, None
    if isinstance(message, ChatMessage):
        role = _ROLE_BY_NAME.get(message.role.lower() if isinstance(message.role, str) else message.role)
        return (role, None) if role is not None else ("user", message.role or None)
    return "user", None


def now_in(zone: tzinfo | None) -> datetime:
    """The clock on ``zone``'s calendar (its offset of the day: summer or winter), UTC's without one."""
    return datetime.now(zone if zone is not None else timezone.utc)


def time_of(message: BaseMessage, name: str, config: Any = None, now: datetime | None = None, *,
            as_json: bool = True, zone: tzinfo | None = None) -> Any:
    """When ``message`` was said: its ``additional_kwargs["hippo_timestamp"]`` as given (ISO-8601 text, its offset
    from UTC kept, or epoch seconds; a naive text is UTC; with ``as_json=False``, for a message that is not kept
    whole, also a datetime), else ``now`` (the clock on ``zone``'s calendar when not given). With ``zone``, a time
    that carries no calendar but UTC's is that instant on ``zone``'s (:func:`hippo.message_time`). ``InvalidInput``
    naming the field of ``name`` (the message) for a time ``add`` refuses."""
    given = (message.additional_kwargs or {}).get(TIME_KEY) if isinstance(message.additional_kwargs, dict) else None
    if given is None:
        return now if now is not None else now_in(zone)
    field = f"{name}.additional_kwargs[{TIME_KEY!r}]"
    if isinstance(given, datetime) and not as_json:
        return message_time(given, field, config, zone)
    if isinstance(given, datetime):
        raise InvalidInput(f"{field} must be ISO-8601 text or epoch seconds (a message is kept as JSON, which holds "
                           f"no datetime): give {given.isoformat()!r}")
    # a message kept as JSON holds a number JSON writes (int, float); one that is not kept also a numpy number
    numbers_taken = (int, float) if as_json else numbers.Real
    if isinstance(given, bool) or not isinstance(given, (str, numbers_taken)):
        raise InvalidInput(f"{field} must be ISO-8601 text or epoch seconds, got {type(given).__name__} {given!r}")
    return message_time(given, field, config, zone)


def message_to_item(message: BaseMessage, *, session_id: str | None, name: str = "message", config: Any = None,
                    now: datetime | None = None, zone: tzinfo | None = None) -> dict[str, Any]:
    """A hippo ``add_many`` item for ``message`` (``name`` says which in errors), dated by :func:`time_of`."""
    if not isinstance(message, BaseMessage):
        raise InvalidInput(f"messages must be LangChain BaseMessage objects, got {type(message).__name__}")
    timestamp = time_of(message, name, config, now, zone=zone)
    text = _indexable_text(message)
    stored = message_to_dict(message)
    try:  # kept whole or not at all: a value JSON does not hold exactly (NaN, bytes, an object) is refused
        exact = json.loads(json.dumps(stored, allow_nan=False)) == stored
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"messages: a message of type {message.type!r} holds a value that JSON cannot keep exactly "
                           f"({exc}); hippo stores a message whole or not at all") from None
    if not exact:  # JSON writes it, but reads back another value: a tuple as a list, a key 1 as "1"
        raise InvalidInput(f"messages: a message of type {message.type!r} holds a value that JSON cannot keep exactly "
                           "(a tuple or a dict key that is not a string reads back as a list or a string key); hippo "
                           "stores a message whole or not at all")
    if stored["data"].get("content") == text:
        del stored["data"]["content"]  # the item text holds it; no second copy
    role, who = role_of(message)
    return {
        "text": text,
        "role": role,
        "speaker": message.name or who or role,
        "timestamp": timestamp,
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
    if item.role == "tool":  # its speaker is the tool (the middleware's, the LlamaIndex block's, an import's)
        return ToolMessage(content=item.text, tool_call_id=str((item.metadata or {}).get("tool_call_id", "")),
                           name=item.speaker if item.speaker not in (None, item.role) else None)
    cls = _CLASS_BY_ROLE.get(item.role, HumanMessage)
    return cls(content=item.text, name=item.speaker if item.speaker not in (None, item.role) else None)


def replayable(messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` (a selection of a history, in its order) as a history a chat model takes: chat APIs refuse an
    ``AIMessage`` with ``tool_calls`` that is not followed by a ``ToolMessage`` for each call, and a ``ToolMessage``
    that does not answer a call of the ``AIMessage`` before it. A tool exchange whose messages are all there stays
    as it is; a part of one whose other part is missing keeps its words and loses the link: the ``AIMessage``
    without its calls (named in its text, as :func:`message_to_item` indexes them), the tool's result as an
    ``AIMessage`` (what the assistant was told) naming the tool."""
    out: list[BaseMessage] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, AIMessage) and message.tool_calls:
            wanted = [c.get("id") for c in message.tool_calls]
            j = i + 1
            answered: set[Any] = set()
            while (j < len(messages) and isinstance(messages[j], ToolMessage)
                   and messages[j].tool_call_id in wanted and messages[j].tool_call_id not in answered):
                answered.add(messages[j].tool_call_id)
                j += 1
            if None not in wanted and answered == set(wanted):
                out.extend(messages[i:j])
            else:
                out.append(_without_calls(message))
                out.extend(_told(m) for m in messages[i + 1: j])
            i = j
            continue
        out.append(_told(message) if isinstance(message, ToolMessage) else message)
        i += 1
    return out


def _without_calls(message: AIMessage) -> AIMessage:
    """``message`` with its tool calls in its text instead of in ``tool_calls``."""
    text = "\n".join(t for t in (message_text(message), calls_text(message.tool_calls)) if t)
    return AIMessage(content=text, id=message.id, name=message.name)


def _told(message: ToolMessage) -> AIMessage:
    """A tool's result without the call it answers, as the assistant's words."""
    tool = message.name or "tool"
    failed = " (error)" if message.status == "error" else ""
    return AIMessage(content=f"[tool result {tool}{failed}] {message_text(message)}".rstrip(), id=message.id)


__all__ = ["TIME_KEY", "calls_of", "content_text", "message_text", "tool_results", "role_of", "now_in", "time_of", "message_to_item", "item_to_message",
           "replayable"]
