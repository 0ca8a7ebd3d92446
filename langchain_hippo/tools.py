"""Agent tools over a ``hippo.Memory``: the agentic retrieval interface of seed 003 §3.4 (search, read a
message with its neighbours, list topics, read a topic document).

``make_memory_tools(memory)`` returns LangChain tools ready for ``create_agent(model, tools=...)`` or
``model.bind_tools(...)``. Every tool answers in plain text for the model; bad arguments and unknown ids come
back as an error message the model can read (``ToolException`` with ``handle_tool_error=True``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from hippo import HippoError
from langchain_hippo._common import acall, check_memory, check_namespace, check_positive_int, render_item


class _SearchArgs(BaseModel):
    query: str = Field(description="Keywords or a question to look up in long-term memory.")
    k: int = Field(default=5, ge=1, le=50, description="How many messages to return.")


class _ReadArgs(BaseModel):
    message_id: int = Field(description="The id of a message, as shown in brackets by memory_search.")
    before: int = Field(default=2, ge=0, le=50, description="How many earlier messages to include.")
    after: int = Field(default=2, ge=0, le=50, description="How many later messages to include.")


class _TopicsArgs(BaseModel):
    pass


class _TopicArgs(BaseModel):
    topic_id: str = Field(description="The id of a topic, as listed by memory_topics.")


def _field(obj: Any, *names: str) -> Any:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def render_topics(topics: Any) -> str:
    """One line per topic: ``[id] title (n entries): summary``."""
    lines = []
    for topic in topics or []:
        tid = _field(topic, "id", "topic_id")
        title = _field(topic, "title", "name", "label")
        summary = _field(topic, "summary", "text")
        size = _field(topic, "size", "n_entries", "count")
        head = f"[{tid}]" + (f" {title}" if title else "") + (f" ({size} entries)" if size is not None else "")
        lines.append(head + (f": {summary}" if summary else ""))
    return "\n".join(lines) if lines else "No topics yet."


def make_memory_tools(memory: Any, *, namespace: str | None = None, k: int = 5) -> list[BaseTool]:
    """Tools ``memory_search``, ``memory_read``, ``memory_topics`` and ``memory_topic`` over ``memory``.

    Args:
        memory: a ``hippo.Memory``.
        namespace: read this namespace instead of the memory's own.
        k: default number of results of ``memory_search``.
    """
    check_memory(memory)
    check_namespace(namespace)
    check_positive_int(k, "k")
    target = memory.using(namespace) if namespace is not None else memory

    def _guard(exc: Exception) -> ToolException:
        return ToolException(str(exc) or type(exc).__name__)

    # memory_search
    def _render_hits(hits: list[Any]) -> str:
        return "\n".join(render_item(h) for h in hits) if hits else "No matching memories."

    def search(query: str, k: int = k) -> str:
        try:
            return _render_hits(target.search(query, k=k))
        except HippoError as exc:
            raise _guard(exc) from exc

    async def asearch(query: str, k: int = k) -> str:
        try:
            return _render_hits(await acall(target, "search", query, k=k))
        except HippoError as exc:
            raise _guard(exc) from exc

    # memory_read
    def _render_window(items: list[Any], message_id: int) -> str:
        return "\n".join(("> " if i.id == message_id else "  ") + render_item(i) for i in items)

    def read(message_id: int, before: int = 2, after: int = 2) -> str:
        try:
            return _render_window(target.read(message_id, before=before, after=after), message_id)
        except HippoError as exc:
            raise _guard(exc) from exc

    async def aread(message_id: int, before: int = 2, after: int = 2) -> str:
        try:
            items = await acall(target, "read", message_id, before=before, after=after)
            return _render_window(items, message_id)
        except HippoError as exc:
            raise _guard(exc) from exc

    # memory_topics / memory_topic: backed by Memory.topics() / Memory.topic(id)
    def _require(name: str) -> None:
        if not callable(getattr(target, name, None)):
            raise ToolException(f"this hippo version has no Memory.{name}(); topics are unavailable")

    def topics() -> str:
        _require("topics")
        try:
            return render_topics(target.topics())
        except HippoError as exc:
            raise _guard(exc) from exc

    async def atopics() -> str:
        _require("topics")
        try:
            return render_topics(await acall(target, "topics"))
        except HippoError as exc:
            raise _guard(exc) from exc

    def topic(topic_id: str) -> str:
        _require("topic")
        try:
            return str(target.topic(_topic_key(topic_id)))
        except HippoError as exc:
            raise _guard(exc) from exc

    async def atopic(topic_id: str) -> str:
        _require("topic")
        try:
            return str(await acall(target, "topic", _topic_key(topic_id)))
        except HippoError as exc:
            raise _guard(exc) from exc

    common = {"handle_tool_error": True, "handle_validation_error": _describe_validation_error}
    return [
        StructuredTool.from_function(
            func=search, coroutine=asearch, name="memory_search", args_schema=_SearchArgs,
            description="Search long-term memory. Returns matching messages as '[id] date speaker: text'; "
                        "use memory_read with an id to see the surrounding conversation.", **common),
        StructuredTool.from_function(
            func=read, coroutine=aread, name="memory_read", args_schema=_ReadArgs,
            description="Read one remembered message with its neighbouring messages (the target is marked '>').",
            **common),
        StructuredTool.from_function(
            func=topics, coroutine=atopics, name="memory_topics", args_schema=_TopicsArgs,
            description="List the topics of long-term memory with their ids and summaries.", **common),
        StructuredTool.from_function(
            func=topic, coroutine=atopic, name="memory_topic", args_schema=_TopicArgs,
            description="Read one topic document (markdown; entries carry <seq, time, source>) by topic id.",
            **common),
    ]


def _describe_validation_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        return "Invalid arguments: " + "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors())
    return f"Invalid arguments: {exc}"


def _topic_key(topic_id: str) -> Any:
    """Topic ids travel through the model as strings; hippo's may be ints."""
    text = str(topic_id).strip()
    return int(text) if text.lstrip("-").isdigit() else text


__all__ = ["make_memory_tools", "render_topics"]
