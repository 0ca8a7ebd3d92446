"""Type translation shared by the LlamaIndex adapters. Nothing here ranks or selects memories."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hippo import InvalidInput, jsonable

DEFAULT_BUDGET_TOKENS = 2000
#: the largest int hippo takes (a SQLite / PostgreSQL integer): a count past it is refused here, naming the
#: adapter's own argument, rather than by the Memory call it becomes
MAX_INT = 2**63 - 1

#: metadata keys kept out of LLM prompts and embeddings (bookkeeping, not content)
HIDDEN_KEYS = ["id", "namespace", "seq", "score", "level", "role", "message_ids", "n_tokens"]


def check_positive_int(value: Any, name: str, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INT:
        raise InvalidInput(f"{name} must be a positive int (at most {MAX_INT}), got {value!r}")
    return value


def check_non_negative_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{name} must be an int >= 0, got {value!r}")
    if value > MAX_INT:
        raise InvalidInput(f"{name} must be at most {MAX_INT}, got {value!r}")
    return value


def check_filter(value: Any, name: str = "filter") -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise InvalidInput(f"{name} must be a dict or None, got {type(value).__name__}")
    return value


def check_memory(value: Any, name: str = "memory") -> Any:
    if not all(callable(getattr(value, a, None)) for a in ("search", "recall", "add", "using")):
        raise InvalidInput(f"{name} must be a hippo.Memory, got {type(value).__name__}")
    return value


def check_namespace(value: Any, name: str = "namespace") -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidInput(f"{name} must be a non-empty string or None, got {value!r}")
    return value


def _list_of(value: Any, kind: type, what: str, name: str) -> list[Any]:
    """``value`` as a list of ``kind`` instances, else InvalidInput naming it (or the element)."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{name} must be a list of {what}, got {type(value).__name__}")
    for i, element in enumerate(value):
        if not isinstance(element, kind):
            raise InvalidInput(f"{name}[{i}] must be a {what}, got {type(element).__name__}")
    return list(value)


def _arguments(value: Any) -> Any:
    """A call's arguments as they read: JSON text (an OpenAI call's ``arguments``) parsed, anything else as given."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _field(source: Any, key: str) -> Any:
    return source.get(key) if isinstance(source, dict) else getattr(source, key, None)


def tool_calls(message: Any) -> list[tuple[Any, Any, Any]]:
    """(id, name, arguments) of each tool call ``message`` makes: its ``ToolCallBlock``s, then the calls in
    ``additional_kwargs["tool_calls"]`` (what LLM integrations put there: OpenAI's ``{"id", "function": {"name",
    "arguments"}}``, as dicts or their client's objects, or ``{"id", "name", "input"}``) that no block carries."""
    from llama_index.core.base.llms.types import ToolCallBlock

    calls = [(b.tool_call_id, b.tool_name, _arguments(b.tool_kwargs)) for b in message.blocks
             if isinstance(b, ToolCallBlock)]
    seen = {c[0] for c in calls if c[0] is not None}
    listed = (message.additional_kwargs or {}).get("tool_calls")
    for call in listed if isinstance(listed, (list, tuple)) else ():
        function = _field(call, "function")
        name = _field(function, "name") if function is not None else _field(call, "name")
        if not isinstance(name, str) or not name:
            continue
        args = _field(function, "arguments") if function is not None else _field(call, "input")
        if args is None and function is None:
            args = _field(call, "args")
        call_id = _field(call, "id")
        if call_id is None or call_id not in seen:
            calls.append((call_id, name, _arguments(args)))
    return calls


def message_text(message: Any) -> str:
    """The words of a LlamaIndex ``ChatMessage``: the text of its ``TextBlock``s and of those a ``CitableBlock`` holds
    (a tool's output given with its source, for an LLM that cites it: ``FunctionAgent`` puts the output's blocks in
    the tool message), one a line, in order. ``ChatMessage.content`` reads only the ``TextBlock``s."""
    from llama_index.core.base.llms.types import TextBlock

    texts = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif getattr(block, "block_type", None) == "citable":  # llama-index-core releases without it: none
            texts.extend(b.text for b in block.content if isinstance(b, TextBlock))
    return "\n".join(texts)


def check_nodes(value: Any, name: str = "nodes") -> list[Any]:
    """``value`` as a list of LlamaIndex ``NodeWithScore`` (what a postprocessor takes), else InvalidInput."""
    from llama_index.core.schema import NodeWithScore

    return _list_of(value, NodeWithScore, "NodeWithScore", name)


def check_chat_messages(value: Any, name: str = "messages", *, allow_none: bool = False) -> list[Any] | None:
    """``value`` as a list of LlamaIndex ``ChatMessage`` (what a memory block takes), else InvalidInput."""
    from llama_index.core.base.llms.types import ChatMessage

    if value is None and allow_none:
        return None
    return _list_of(value, ChatMessage, "ChatMessage", name)


def empty_block(content: Any, name: str = "content") -> str | None:
    """A memory block's content handed to ``atruncate``: the string, or None for nothing. ``Memory`` passes ``[]``
    for a block that contributed nothing (``truncated_content.get(name, [])``); anything else raises InvalidInput
    naming ``name``."""
    if content is None or (isinstance(content, list) and not content):
        return None
    if not isinstance(content, str):
        raise InvalidInput(f"{name} must be a string or None, got {type(content).__name__}")
    return content


def item_metadata(item: Any, *, level: str | None = None) -> dict[str, Any]:
    """hippo fields over the item's own metadata, JSON-safe (LlamaIndex serializes node metadata)."""
    md = {str(k): jsonable(v) for k, v in (item.metadata or {}).items()}
    md.update(
        id=item.id,
        speaker=item.speaker,
        role=item.role,
        timestamp=item.timestamp.isoformat() if item.timestamp is not None else None,
        session_id=item.session_id,
        namespace=item.namespace,
        seq=item.seq,
        level=level or getattr(item, "level", "message"),
    )
    return md


# Node ids: "hippo:<namespace>:<message id>" for messages, "hippo:<namespace>:<level>:<unit id>" for hierarchy units
# (episode, semantic, theme). ":" and "%" in a namespace are %-escaped, so the namespace never holds the separator
# and every id parses one way. Built and parsed here only.

def _escape_ns(namespace: str) -> str:
    return namespace.replace("%", "%25").replace(":", "%3A")


def _unescape_ns(text: str) -> str:
    return text.replace("%3A", ":").replace("%3a", ":").replace("%25", "%")


def node_id(namespace: str, ident: Any, level: str = "message") -> str:
    """Stable node id of a hippo message (or hierarchy unit): equal ids mean the same memory, across retrievers."""
    if level == "message":
        return f"hippo:{_escape_ns(namespace)}:{ident}"
    return f"hippo:{_escape_ns(namespace)}:{level}:{ident}"


def parse_node_id(nid: Any) -> tuple[str, str, Any] | None:
    """``(namespace, level, id)`` of a node id made by :func:`node_id`, else None (an int id for messages)."""
    if not isinstance(nid, str) or not nid.startswith("hippo:"):
        return None
    parts = nid[len("hippo:"):].split(":")
    if len(parts) == 2 and parts[0] and parts[1].lstrip("-").isdigit():
        return _unescape_ns(parts[0]), "message", int(parts[1])
    if len(parts) == 3 and parts[0] and parts[1] and parts[2]:
        ident: Any = int(parts[2]) if parts[2].lstrip("-").isdigit() else parts[2]
        return _unescape_ns(parts[0]), parts[1], ident
    return None


def render_item(item: Any) -> str:
    # the speaker's wall clock, the year in four digits (strftime writes the year 64 as "64")
    when = item.timestamp.isoformat(sep=" ", timespec="minutes")[:16] if item.timestamp is not None else "undated"
    return f"[{when}] {item.speaker or item.role}: {item.text}"


async def acall(target: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
    """hippo's async twin ``a<name>`` when it exists, else ``<name>`` in a worker thread."""
    twin = getattr(target, "a" + name, None)
    if twin is not None:
        return await twin(*args, **kwargs)
    return await asyncio.to_thread(getattr(target, name), *args, **kwargs)


def hippo_ref(node: Any) -> tuple[str, int] | None:
    """(namespace, message id) of a node made from a hippo message, told by its node id (:func:`node_id`); None
    for hierarchy units and for every other node, whatever its metadata holds (a document store's rows may have an
    "id" and a "namespace" of their own)."""
    parsed = parse_node_id(getattr(node, "node_id", None))
    if parsed is not None:
        ns, level, ident = parsed
        return (ns, ident) if level == "message" else None
    return None


def with_embed_model(memory: Any, embed_model: Any) -> tuple[Any, bool]:
    """``memory`` with ``embed_model`` (a LlamaIndex ``BaseEmbedding``) as its embedding channel
    (``Memory.with_embedding``) and whether a second handle was opened for it (to be closed by the owner)."""
    if embed_model is None:
        return memory, False
    if not callable(getattr(embed_model, "get_text_embedding_batch", None)):
        raise InvalidInput(f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}")
    handle = memory.with_embedding(embed_model)
    return handle, handle is not memory


def invalid_from_validation(owner: str, exc: Exception) -> InvalidInput:
    """A pydantic ValidationError raised while building an adapter, as hippo's InvalidInput."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or 'argument'}: {e.get('msg', 'invalid value')}"
                 for e in errors()]
        return InvalidInput(f"{owner}: " + "; ".join(parts))
    return InvalidInput(f"{owner}: {exc}")


class ValidatedInit:
    """Mixin for pydantic-based LlamaIndex components: a bad constructor argument raises ``InvalidInput`` naming
    the component and the field, instead of pydantic's ``ValidationError``. Put it first among the bases."""

    def __init__(self, **data: Any) -> None:
        from pydantic import ValidationError

        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise invalid_from_validation(type(self).__name__, exc) from None
