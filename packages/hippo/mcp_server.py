"""``hippo mcp``: one user's memory as a Model Context Protocol server, on the official ``mcp`` SDK (2.x).

Tools: ``add``, ``search``, ``recall``, ``read``, ``forget``, ``topics`` and ``timeline``, each a thin call of the
:class:`hippo.Memory` method of the same name on the namespace of the configured user (``--user`` or
``$HIPPO_USER``). No tool takes a namespace: a client reaches the memory of the user its server was started for and
no other. Arguments and results are typed (JSON Schema from the signatures and the result models below); results
carry ``structuredContent`` in the shape of :mod:`hippo.records`. A bad argument comes back as a tool error
(``isError: true``) whose text is the ``HippoError`` message, never as a protocol failure.

Transports: stdio (the client starts ``hippo mcp`` itself) and streamable HTTP (``--transport streamable-http``, a
long-running server on ``http://<host>:<port>/mcp``). Imported only by ``hippo mcp``: ``import hippo`` never loads
the SDK. See docs/mcp.md for client configuration.
"""

# No ``from __future__ import annotations``: the SDK reads the tool signatures at registration time.

import functools
import inspect
import io
import signal
import socket
import sys
import threading
from datetime import datetime, tzinfo
from typing import Annotated, Any, Callable, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, StrictInt

import hippo
from hippo import HippoError, Memory
from hippo.base.checks import check_namespace
from hippo.records import jsonable

__all__ = ["build_server", "serve", "TOOLS"]

TOOLS = ("add", "search", "recall", "read", "forget", "topics", "timeline")

INSTRUCTIONS = (
    "Long-term memory of one user, stored verbatim and offline. Call `add` for facts, decisions and preferences "
    "worth keeping; `recall` for a compact, dated context to answer from (whole messages under a token budget); "
    "`search` for ranked individual messages with ids; `read` to see a message with its neighbours; `timeline` for "
    "what a person said or did over time; `topics` for an overview; `forget` to delete messages by id or filter."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

F = TypeVar("F", bound=Callable[..., Any])

Role = Literal["user", "assistant", "system", "tool"]
When = Annotated[str | None, Field(description="ISO-8601 date or date-time, e.g. 2025-04-13 or 2025-04-13T10:15:00Z")]
SaidAt = Annotated[str | None, Field(description="when it was said, ISO-8601 with the user's UTC offset (e.g. "
                                                 "2025-04-13T21:00:00-04:00); default: now, in the user's time zone")]
AskedAt = Annotated[str | None, Field(description="when the question is asked, ISO-8601 with the asker's UTC offset "
                                                  "(e.g. 2025-04-13T10:15:00-05:00): its 'yesterday' or 'last week' "
                                                  "count from it; default: now, in the user's time zone")]


def _now(zone: tzinfo | None = None) -> datetime:
    """Now on the calendar of ``zone`` (the user's, ``hippo mcp --timezone``), or without one on the machine's clock
    and calendar (a client is a live conversation, and the server usually runs where its user is, as the command
    line does)."""
    return datetime.now(zone) if zone is not None else datetime.now().astimezone()


def _asked(asked_at: str | None, config: Any, zone: tzinfo | None = None) -> Any:
    """When a client's question is asked: as the client says (a time that carries no calendar but UTC's put on
    ``zone``'s, as a message's ``timestamp`` is: :func:`_said`), else now (:func:`_now`)."""
    return _now(zone) if asked_at is None else hippo.message_time(asked_at, "asked_at", config, zone)


def _said(timestamp: str | None, config: Any, zone: tzinfo | None = None) -> Any:
    """When a message a client adds was said: its ``timestamp``, one that carries no calendar but UTC's ("Z",
    +00:00, naive) put on ``zone``'s (:func:`hippo.message_time`, as the adapters put a ``hippo_timestamp``), else
    now (:func:`_now`): a client adds what its user says as it is said, and an undated message would have no day
    for its "tonight" nor for a later question's "yesterday"."""
    return _now(zone) if timestamp is None else hippo.message_time(timestamp, "timestamp", config, zone)
FilterArg = Annotated[dict[str, Any] | None, Field(
    description='metadata filter, e.g. {"speaker": "Ann"} or {"session_id": "s1", "timestamp": {"$gte": '
                '"2025-01-01"}}; operators $eq $ne $gt $gte $lt $lte $in $nin $exists')]
# Integer arguments are StrictInt: lax validation would read JSON true as 1 and "5" as 5, values the advertised
# schema ({"type": "integer"}) and hippo.Memory's own checks refuse (budget_tokens: true recalled within 1 token).


# ----------------------------------------------------------------------------------------- result models


class Message(BaseModel):
    """A stored message (hippo.MemoryItem)."""

    model_config = ConfigDict(extra="forbid")
    id: int
    text: str
    speaker: str | None
    role: str
    timestamp: str | None = Field(description="when it was said, ISO-8601 with the UTC offset it was said with")
    session_id: str | None
    metadata: dict[str, Any]
    namespace: str
    seq: int
    n_tokens: int
    created_at: str | None


class Hit(Message):
    """A search result (hippo.Hit): a message with its fused score and time-and-truth notes."""

    score: float
    channels: dict[str, float]
    level: str
    event_time: str | None = Field(description="when the reported event happened, if known")
    superseded_by: int | None = Field(description="id of a newer message that updates this one")
    surprise: float
    salience: float


class SearchResult(BaseModel):
    hits: list[Hit]


class RecallResult(BaseModel):
    """A prompt-ready context (hippo.Recall) and the messages it holds."""

    query: str
    text: str = Field(description="the context: whole messages grouped by session, dated, within budget_tokens")
    tokens: int
    budget_tokens: int
    messages: list[Message]
    units: list[dict[str, Any]] = Field(description="hierarchy units (episodes, semantics, themes) that guided it")
    repeats: dict[str, int] = Field(default_factory=dict, description="id of a message that stands for copies of "
                                    "its text (same text, same voice) -> how many times it was written")


class ReadResult(BaseModel):
    messages: list[Message]


class ForgetResult(BaseModel):
    forgotten: int = Field(description="number of messages deleted")


class Topic(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: int | str = Field(description="theme id, or 'current' for messages not yet consolidated")
    title: str
    summary: str
    size: int
    n_messages: int
    first_time: str | None = None
    last_time: str | None = None
    strength: float | None = None


class TopicsResult(BaseModel):
    topics: list[Topic]


class Fact(BaseModel):
    attribute: str
    value: str


class TimelineEntry(BaseModel):
    id: int
    event_time: str | None
    event: str | None = Field(description="the resolved date of the event as text, when the message dates it")
    timestamp: str | None
    text: str
    speaker: str | None
    session_id: str | None
    superseded_by: int | None
    facts: list[Fact]


class TimelineResult(BaseModel):
    entries: list[TimelineEntry]


# ------------------------------------------------------------------------------------------------ server


def _nothing_recalled(budget_tokens: int) -> str:
    """The text of an empty recall. An empty context does not mean nothing relevant is stored: a relevant message
    longer than the budget is left out whole. The note is kept within the budget too (else empty)."""
    note = f"(nothing recalled within {budget_tokens} tokens)"
    return note if hippo.count_tokens(note) <= budget_tokens else ""


def _hippo_errors(fn: F) -> F:
    """A HippoError becomes a tool error carrying its message (the model reads it and can correct the call)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HippoError as exc:
            raise ToolError(" ".join(str(exc).split())) from exc
        except RecursionError as exc:
            raise ToolError("an argument is nested too deeply") from exc

    return wrapper  # type: ignore[return-value]


class _Server(MCPServer):
    """The SDK's server, refusing a call that names an argument its tool does not take. The SDK drops such an
    argument and runs the call: a model's guess (``recall`` with ``max_tokens``, ``search`` with ``limit``, ``add``
    with ``tags``) got the defaults, or stored the message without what it was asked to keep, with no sign of it.
    The tools' advertised schemas say so too (``additionalProperties: false``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._arguments: dict[str, tuple[str, ...]] = {}

    def hippo_tool(self, annotations: ToolAnnotations) -> Callable[[F], F]:
        """``tool(annotations=...)`` that also records the arguments the tool takes."""

        def register(fn: F) -> F:
            self._arguments[fn.__name__] = tuple(inspect.signature(fn).parameters)
            return self.tool(annotations=annotations)(fn)

        return register

    async def list_tools(self) -> list[Any]:
        tools = await super().list_tools()
        for tool in tools:
            if tool.name in self._arguments:
                tool.input_schema = {**tool.input_schema, "additionalProperties": False}
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = self._arguments.get(name)
        unknown = [key for key in arguments if key not in known] if known is not None else []
        if unknown:
            takes = ", ".join(known) if known else "no arguments"
            raise ToolError(f"Error executing tool {name}: unknown argument(s) {', '.join(map(repr, unknown))}; "
                            f"{name} takes {takes}")
        return await super().call_tool(name, arguments, context)


def build_server(mem: Memory, *, name: str = "hippo", log_level: str = "WARNING", timezone: Any = None) -> MCPServer:
    """An MCP server whose tools act on ``mem`` (one namespace: the user's). The caller owns and closes ``mem``.
    ``timezone`` (an IANA name, an offset from UTC such as ``"+05:30"``, or a ``tzinfo``) is the user's: a question
    asked without ``asked_at`` is asked now on its calendar, a message added without ``timestamp`` is dated now on
    it, and one whose ``timestamp`` carries no calendar but UTC's is put on it; None: the machine's time zone (and
    a ``timestamp`` is kept as given)."""
    if not isinstance(mem, Memory):
        raise hippo.InvalidInput(f"mem must be a hippo.Memory, got {type(mem).__name__}")
    if not isinstance(name, str) or not name.strip() or not name.isprintable() \
            or any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        raise hippo.InvalidInput(f"name must be a non-empty str of printable characters, got {name!r}")
    _check_log_level(log_level)
    zone = hippo.time_zone(timezone, "timezone")
    server = _Server(name, instructions=INSTRUCTIONS, version=hippo.__version__, log_level=log_level)

    @server.hippo_tool(ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                                             open_world_hint=False))
    @_hippo_errors
    def add(
        text: Annotated[str, Field(description="the message, stored verbatim")],
        speaker: Annotated[str | None, Field(description="who said it, e.g. the user's name")] = None,
        role: Annotated[Role, Field(description="conversation role")] = "user",
        timestamp: SaidAt = None,
        session_id: Annotated[str | None, Field(description="conversation or session this belongs to")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="JSON object stored with the message")] = None,
    ) -> Message:
        """Store one message in the user's memory, verbatim; it is searchable as soon as this returns."""
        item = mem.add(text, speaker=speaker, role=role, timestamp=_said(timestamp, mem.config, zone),
                       session_id=session_id, metadata=metadata)
        return Message.model_validate(jsonable(item))

    @server.hippo_tool(_READ_ONLY)
    @_hippo_errors
    def search(
        query: Annotated[str, Field(description="what to look for, in plain words")],
        k: Annotated[StrictInt, Field(description="number of results", ge=1, le=200)] = 10,
        filter: FilterArg = None,
        since: When = None,
        until: When = None,
        asked_at: AskedAt = None,
    ) -> SearchResult:
        """The k messages that best match the query, best first, with ids and scores."""
        hits = mem.search(query, k=k, filter=filter, since=since, until=until, asked_at=_asked(asked_at, mem.config, zone))
        return SearchResult(hits=[Hit.model_validate(jsonable(h)) for h in hits])

    @server.hippo_tool(_READ_ONLY)
    @_hippo_errors
    def recall(
        query: Annotated[str, Field(description="the question to answer from memory")],
        budget_tokens: Annotated[StrictInt, Field(description="maximum size of the context in cl100k tokens", ge=1,
                                                  le=200_000)] = 2000,
        filter: FilterArg = None,
        since: When = None,
        until: When = None,
        asked_at: AskedAt = None,
    ) -> Annotated[CallToolResult, RecallResult]:
        """A compact context for the query: whole relevant messages, grouped by session, dated, within the budget.
        The text content is the context itself; the structured content lists the messages it holds."""
        r = mem.recall(query, budget_tokens=budget_tokens, filter=filter, since=since, until=until,
                       asked_at=_asked(asked_at, mem.config, zone))
        data = jsonable(r)
        result = RecallResult.model_validate({k: data[k] for k in RecallResult.model_fields})
        return CallToolResult(content=[TextContent(type="text", text=r.text or _nothing_recalled(budget_tokens))],
                              structured_content=result.model_dump(mode="json"))

    @server.hippo_tool(_READ_ONLY)
    @_hippo_errors
    def read(
        message_id: Annotated[StrictInt, Field(description="id of a message, from search, recall or timeline", ge=0)],
        before: Annotated[StrictInt, Field(description="neighbours before it in its session", ge=0, le=50)] = 2,
        after: Annotated[StrictInt, Field(description="neighbours after it in its session", ge=0, le=50)] = 2,
    ) -> ReadResult:
        """A message with its neighbours from the same session, in order."""
        items = mem.read(message_id, before=before, after=after)
        return ReadResult(messages=[Message.model_validate(jsonable(m)) for m in items])

    @server.hippo_tool(ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False))
    @_hippo_errors
    def forget(
        # strict: JSON true is no id (lax validation would read it as message 1 and delete that)
        ids: Annotated[list[StrictInt] | None, Field(description="ids of the messages to delete")] = None,
        filter: FilterArg = None,
    ) -> ForgetResult:
        """Delete messages from the user's memory, by ids or by a filter (give one of them). Irreversible."""
        if (ids is None) == (filter is None):
            raise hippo.InvalidInput("forget needs exactly one of ids or filter")
        if ids is not None:
            return ForgetResult(forgotten=mem.delete(ids))
        return ForgetResult(forgotten=mem.forget(filter))

    @server.hippo_tool(_READ_ONLY)
    @_hippo_errors
    def topics() -> TopicsResult:
        """The topics of the user's memory: one entry per theme with a title, a summary, size and time span."""
        return TopicsResult(topics=[Topic.model_validate(jsonable(t)) for t in mem.topics()])

    @server.hippo_tool(_READ_ONLY)
    @_hippo_errors
    def timeline(
        query_or_entity: Annotated[str, Field(description="a person's name (their statements over time) or a topic")],
        limit: Annotated[StrictInt, Field(description="maximum number of entries", ge=1, le=500)] = 50,
        since: When = None,
        until: When = None,
    ) -> TimelineResult:
        """What was said or happened about a person or topic, ordered by when it happened, with dates."""
        entries = mem.timeline(query_or_entity, limit=limit, since=since, until=until)
        return TimelineResult(entries=[TimelineEntry.model_validate(jsonable(e)) for e in entries])

    return server


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _check_log_level(log_level: object) -> None:
    if not (isinstance(log_level, str) and log_level in LOG_LEVELS):
        raise hippo.InvalidInput(f"log_level must be DEBUG, INFO, WARNING, ERROR or CRITICAL, got {log_level!r}")


def serve(*, path: str, user: str, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000,
          mount: str = "/mcp", log_level: str = "WARNING", timezone: Any = None, read_only: bool = False) -> int:
    """Open the store at ``path`` on ``user``'s namespace and serve it until the client (stdio) or a signal
    (HTTP) ends the session; the store is closed (its tail sealed) on the way out. ``timezone``: the user's (see
    :func:`build_server`), checked before the store is opened. ``read_only``: open an existing store as
    ``Memory(path, read_only=True)`` does (also one on read-only media, or that this user may not write): the read
    tools answer, ``add`` and ``forget`` answer a tool error naming the read-only store."""
    user = check_namespace(user, "user")  # the namespace it names, refused as the argument the caller gave
    zone = hippo.time_zone(timezone, "timezone")
    if not (isinstance(transport, str) and transport in ("stdio", "streamable-http")):
        raise hippo.InvalidInput(f"transport must be 'stdio' or 'streamable-http', got {transport!r}")
    if not isinstance(host, str) or not host.strip():
        raise hippo.InvalidInput(f"host must be a host name or an IP address, got {host!r}")
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise hippo.InvalidInput(f"port must be an int in 1..65535, got {port!r}")
    _check_log_level(log_level)
    if not isinstance(mount, str) or not mount.startswith("/"):
        raise hippo.InvalidInput(f"mount must be a path starting with '/', got {mount!r}")
    if not isinstance(read_only, bool):
        raise hippo.InvalidInput(f"read_only must be a bool, got {type(read_only).__name__}")
    if transport == "streamable-http":
        try:  # a clear error now rather than uvicorn's log line after start-up
            _check_listen(host, port)
        except (OSError, UnicodeError) as exc:  # UnicodeError: a name IDNA cannot encode (a lone surrogate, a
            # label of over 63 characters)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise hippo.InvalidInput(f"cannot listen on host {host!r}, port {port}: {reason}") from None
    mem = Memory(path, namespace=user, read_only=read_only)
    # SIGTERM / SIGINT end the server cleanly, so the store is closed below. uvicorn (streamable HTTP) shuts down
    # first and then re-raises the signal to the handler it found installed: this one.
    main_thread = threading.current_thread() is threading.main_thread()  # only there can handlers be set
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)} if main_thread else {}
    try:
        server = build_server(mem, log_level=log_level, timezone=zone)
        if transport == "stdio":
            server.run("stdio")
        else:
            server.run("streamable-http", host=host, port=port, streamable_http_path=mount)
    except _Stopped:
        pass
    except Exception as exc:
        if not _client_gone(exc):
            raise
        _quiet_broken_pipes()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        mem.close()
    return 0


def _check_listen(host: str, port: int) -> None:
    """Bind (and release) every address uvicorn will listen on for ``host``; raises the OSError it would meet.

    uvicorn hands ``host`` to asyncio's ``create_server``, which binds each address the name resolves to, in its
    own family: an IPv6 literal (``::1``, ``::``) or a name with IPv6 addresses is served, so an IPv4-only
    check would refuse hosts the server can listen on. An empty host means every interface, as there."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    for family, address in dict.fromkeys((info[0], info[4]) for info in infos):  # one of each (family, address)
        socket.create_server(address, family=family).close()


def _client_gone(exc: BaseException) -> bool:
    """Whether ``exc`` only says the client stopped reading: a broken pipe, alone or in the SDK's task-group
    exception. On stdio that ends the session as closing standard input does; it is no error of the server's."""
    if isinstance(exc, BrokenPipeError):
        return True
    inner = getattr(exc, "exceptions", None)  # an ExceptionGroup (or the exceptiongroup backport on 3.10)
    return isinstance(inner, tuple) and bool(inner) and all(_client_gone(e) for e in inner)


def _quiet_broken_pipes() -> None:
    """Once the client has stopped reading, the SDK's writer of the wire still holds the answer it could not send,
    and the SDK keeps it until the process ends: its flush then meets the broken pipe again, and Python reported
    that on standard error ("Exception ignored in: <_io.BufferedWriter name=...>", on Python 3.13). From here on a
    broken pipe met while a file object is finalized is not reported; any other report goes to the hook installed."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not (isinstance(unraisable.exc_value, BrokenPipeError) and isinstance(unraisable.object, io.IOBase)):
            previous(unraisable)

    sys.unraisablehook = hook


class _Stopped(Exception):
    """A termination signal arrived: stop serving, close the store, exit 0."""


def _stop(signum: int, frame: Any) -> None:
    raise _Stopped(signal.Signals(signum).name)
