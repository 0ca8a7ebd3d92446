"""Agent tools over a ``hippo.Memory``: the agentic retrieval interface of seed 003 §3.4 (search, read a
message with its neighbours, list topics, read a topic document).

``make_memory_tools(memory)`` returns LangChain tools ready for ``create_agent(model, tools=...)`` or
``model.bind_tools(...)``. Every tool answers in plain text for the model; bad arguments and unknown ids come
back as an error message the model can read (``ToolException`` with ``handle_tool_error=True``).

With ``scope=``, a callable ``(ToolRuntime) -> hippo.Memory``, each call picks its memory view from the agent
run (e.g. the current user's namespace); ``HippoMemoryMiddleware(memory_tools=True)`` uses this.

A search is asked when the agent's turn is: its "yesterday" or "last week" count from the model's ``asked_at``
argument when it gives one, else from the clock, on the calendar of the run's zone (under ``timezone_key`` in its
LangGraph runtime context or ``configurable``, as the middleware reads it), else of ``timezone`` (the user's; UTC's
without one), or from ``asked=``, a callable ``(ToolRuntime) -> time`` (the middleware's: the time of the latest user
message). A model's ``asked_at`` that carries no calendar but UTC's ("Z") is put on that same calendar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from hippo import HippoError, InvalidInput, message_time, time_zone
from langchain_hippo._common import (acall, check_key, check_memory, check_namespace, check_positive_int, render_item,
                                     run_time_zone)
from langchain_hippo._messages import now_in


class _SearchArgs(BaseModel):
    query: str = Field(description="Keywords or a question to look up in long-term memory.")
    k: int | None = Field(default=None, ge=1, le=50, description="How many messages to return.")
    asked_at: str | None = Field(default=None, description=(
        "When the question is asked, ISO-8601 with the user's UTC offset (e.g. 2025-04-15T09:00:00-04:00): its "
        "'yesterday' or 'last week' count from it. Default: now."))


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


def _render_hits(hits: list[Any]) -> str:
    return "\n".join(render_item(h) for h in hits) if hits else "No matching memories."


def _render_window(items: list[Any], message_id: int) -> str:
    return "\n".join(("> " if i.id == message_id else "  ") + render_item(i) for i in items)


def _topic_key(topic_id: str) -> Any:
    """Topic ids travel through the model as strings; hippo's may be ints."""
    text = str(topic_id).strip()
    return int(text) if text.lstrip("-").isdigit() else text


def _require(target: Any, name: str) -> None:
    if not callable(getattr(target, name, None)):
        raise ToolException(f"this hippo version has no Memory.{name}(); topics are unavailable")


# One (sync, async) pair per tool, over an already chosen memory view.

def _search(target: Any, query: str, k: int, asked_at: Any) -> str:
    return _render_hits(target.search(query, k=k, asked_at=asked_at))


async def _asearch(target: Any, query: str, k: int, asked_at: Any) -> str:
    return _render_hits(await acall(target, "search", query, k=k, asked_at=asked_at))


def _read(target: Any, message_id: int, before: int, after: int) -> str:
    return _render_window(target.read(message_id, before=before, after=after), message_id)


async def _aread(target: Any, message_id: int, before: int, after: int) -> str:
    return _render_window(await acall(target, "read", message_id, before=before, after=after), message_id)


def _topics(target: Any) -> str:
    _require(target, "topics")
    return render_topics(target.topics())


async def _atopics(target: Any) -> str:
    _require(target, "topics")
    return render_topics(await acall(target, "topics"))


def _topic(target: Any, topic_id: str) -> str:
    _require(target, "topic")
    return str(target.topic(_topic_key(topic_id)))


async def _atopic(target: Any, topic_id: str) -> str:
    _require(target, "topic")
    return str(await acall(target, "topic", _topic_key(topic_id)))


def _describe_validation_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        return "Invalid arguments: " + "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors())
    return f"Invalid arguments: {exc}"


def _bind(impl: Callable, aimpl: Callable, defaults: dict[str, Any], target_of: Callable[[Any], Any],
          scoped: bool, timed: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None = None
          ) -> tuple[Callable, Callable]:
    """Tool functions calling ``impl`` / ``aimpl`` on the memory view ``target_of(runtime)``; hippo errors become
    ``ToolException``. Scoped functions take LangGraph's injected ``runtime`` argument. With ``timed``, ``(asked_of,
    zone_of)``, the tool takes ``asked_at``: the model's, checked (``InvalidInput`` naming it; one that carries no
    calendar but UTC's put on ``zone_of(runtime)``'s), else ``asked_of(runtime)``."""

    def call(runtime: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        args = {**defaults, **{n: v for n, v in kwargs.items() if v is not None}}
        target = target_of(runtime)
        if timed is not None:
            asked_of, zone_of = timed
            given = args.get("asked_at")
            args["asked_at"] = asked_of(runtime) if given is None else \
                message_time(given, "asked_at", getattr(target, "config", None), zone_of(runtime))
        return target, args

    def func(runtime: Any = None, **kwargs: Any) -> str:
        try:
            target, args = call(runtime, kwargs)
            return impl(target, **args)
        except HippoError as exc:
            raise ToolException(str(exc) or type(exc).__name__) from exc

    async def coroutine(runtime: Any = None, **kwargs: Any) -> str:
        try:
            target, args = call(runtime, kwargs)
            return await aimpl(target, **args)
        except HippoError as exc:
            raise ToolException(str(exc) or type(exc).__name__) from exc

    if scoped:
        from langgraph.prebuilt import ToolRuntime

        func.__annotations__ = coroutine.__annotations__ = {"runtime": ToolRuntime, "return": str}
        return func, coroutine

    def plain(**kwargs: Any) -> str:
        return func(None, **kwargs)

    async def aplain(**kwargs: Any) -> str:
        return await coroutine(None, **kwargs)

    return plain, aplain


def make_memory_tools(
    memory: Any,
    *,
    namespace: str | None = None,
    k: int = 5,
    scope: Callable[[Any], Any] | None = None,
    timezone: Any = None,
    asked: Callable[[Any], Any] | None = None,
    timezone_key: str = "timezone",
    zone: Callable[[Any], Any] | None = None,
) -> list[BaseTool]:
    """Tools ``memory_search``, ``memory_read``, ``memory_topics`` and ``memory_topic`` over ``memory``.

    Args:
        memory: a ``hippo.Memory``.
        namespace: read this namespace instead of the memory's own.
        k: default number of results of ``memory_search``.
        scope: ``(ToolRuntime) -> hippo.Memory`` choosing the memory view per call (overrides ``namespace``).
        timezone: the user's time zone (an IANA name such as ``"America/New_York"``, an offset from UTC such as
            ``"+05:30"``, or a ``tzinfo``): a search the model gives no ``asked_at`` is asked now on its calendar
            (None, the default: UTC's).
        asked: ``(ToolRuntime) -> time`` (a datetime, epoch seconds or ISO-8601 text): when a search the model gives
            no ``asked_at`` is asked, instead of the clock (takes ``scope``'s runtime: ``None`` without ``scope``).
        timezone_key: the name a run's own time zone is looked up by in its LangGraph runtime context and
            ``configurable``; it takes precedence over ``timezone`` (one agent serving users in several zones).
        zone: ``(ToolRuntime) -> tzinfo | None``: the zone of a call, read at each call instead of ``timezone`` and
            ``timezone_key`` (takes ``scope``'s runtime: ``None`` without ``scope``).
    """
    check_memory(memory)
    check_namespace(namespace)
    check_positive_int(k, "k")
    if scope is not None and not callable(scope):
        raise InvalidInput("scope must be callable or None")
    fixed_zone = time_zone(timezone, "timezone")
    if asked is not None and not callable(asked):
        raise InvalidInput("asked must be callable or None")
    check_key(timezone_key, "timezone_key")
    if zone is not None and not callable(zone):
        raise InvalidInput("zone must be callable or None")

    def run_zone(runtime: Any) -> Any:
        """The run's zone (its context's or configurable's ``timezone_key``), else ``timezone``."""
        given = run_time_zone(getattr(runtime, "config", None), timezone_key, getattr(runtime, "context", None))
        return fixed_zone if given is None else time_zone(*given)

    zone_of = zone if zone is not None else run_zone

    asked_of = asked if asked is not None else (lambda runtime: now_in(zone_of(runtime)))
    fixed = memory.using(namespace) if namespace is not None else memory
    target_of = scope if scope is not None else (lambda runtime: fixed)
    scoped = scope is not None

    common = {"handle_tool_error": True, "handle_validation_error": _describe_validation_error}
    specs = [
        ("memory_search", _SearchArgs, _search, _asearch, {"k": k},
         "Search long-term memory. Returns matching messages as '[id] date speaker: text'; "
         "use memory_read with an id to see the surrounding conversation. Relative times in the query "
         "('yesterday', 'last week') count from now, or from asked_at when given."),
        ("memory_read", _ReadArgs, _read, _aread, {"before": 2, "after": 2},
         "Read one remembered message with its neighbouring messages (the target is marked '>')."),
        ("memory_topics", _TopicsArgs, _topics, _atopics, {},
         "List the topics of long-term memory with their ids and summaries."),
        ("memory_topic", _TopicArgs, _topic, _atopic, {},
         "Read one topic document (markdown; entries carry <seq, time, source>) by topic id."),
    ]
    tools: list[BaseTool] = []
    for name, schema, impl, aimpl, defaults, description in specs:
        timed = (asked_of, zone_of) if "asked_at" in schema.model_fields else None
        func, coroutine = _bind(impl, aimpl, defaults, target_of, scoped, timed)
        tools.append(StructuredTool.from_function(func=func, coroutine=coroutine, name=name, args_schema=schema,
                                                  description=description, **common))
    return tools


__all__ = ["make_memory_tools", "render_topics"]
