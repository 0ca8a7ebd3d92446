"""A message as the caller gives it (a dict or a :class:`~hippo.base.types.MemoryItem`), validated and encoded
into what the store appends (:class:`~hippo.store.base.NewMessage`)."""

from __future__ import annotations

import time
import uuid
from typing import Any, Mapping

from hippo.base.checks import check_choice, check_metadata, is_one_of
from hippo.base.errors import InvalidInput
from hippo.base.timeutil import check_utc_offset, to_epoch, utc_offset
from hippo.base.types import MemoryItem
from hippo.index.coindex import ROLES
from hippo.store.base import NewMessage
from hippo.text import tokenizer

ADD_KEYS = ("text", "speaker", "role", "timestamp", "session_id", "metadata", "priority", "event_time")
PRIORITIES = ("critical", "high", "normal", "low")
# the metadata key that keeps the offset from UTC an ``event_time`` was given with (seconds east): the event's day is
# that calendar's, as a timestamp's is (``MessageRow.utc_offset``)
EVENT_TIME_OFFSET = "event_time_utc_offset"


def check_optional_str(value: object, name: str, limit: int = 1000) -> str | None:
    """None, or a str of at most ``limit`` characters that encodes losslessly."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a str or None, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidInput(f"{name} is longer than {limit} characters")
    if value.strip():
        tokenizer.check_text(value, name)
    elif tokenizer.control_character(value) is not None:  # str.strip() takes U+001C-U+001F for blanks
        raise InvalidInput(f"{name} must not contain control characters, got {value!r}")
    return value


def check_event_time(metadata: dict[str, Any], config: Any, name: str = "metadata") -> dict[str, Any]:
    """``metadata`` (checked by :func:`~hippo.base.checks.check_metadata`), its ``"event_time"`` checked: the engine
    reads a number there as the message's event time in epoch seconds (what ``add(event_time=...)`` stores), so a
    number must be one in the configured years ("1700000000000", milliseconds, is not). Other values are the
    caller's own and are kept as they are."""
    et = metadata.get("event_time")
    if isinstance(et, (int, float)) and not isinstance(et, bool):
        to_epoch(et, f"{name}['event_time']", min_year=config.timestamp_min_year,
                 max_year=config.timestamp_max_year)
    check_utc_offset(metadata.get(EVENT_TIME_OFFSET), f"{name}['{EVENT_TIME_OFFSET}'] (event_time's offset)")
    return metadata


def prepare(item: Mapping[str, Any] | MemoryItem, where: str, config: Any) -> NewMessage:
    """Validate one message (``where`` names it in errors: ``"add"`` or ``"items[3]"``) and encode its text."""
    if isinstance(item, MemoryItem):
        item = {"text": item.text, "speaker": item.speaker, "role": item.role, "timestamp": item.timestamp,
                "session_id": item.session_id, "metadata": item.metadata}
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where} must be a dict or MemoryItem, got {type(item).__name__}")
    unknown = set(item) - set(ADD_KEYS)
    if unknown:
        raise InvalidInput(f"{where}: unknown field(s) {sorted(unknown)}; expected {list(ADD_KEYS)}")
    text = tokenizer.check_text(item.get("text"), f"{where}.text" if where != "add" else "text",
                                max_chars=config.max_message_chars)
    # a field of one of add_many's items is named with its place ("items[41].speaker"), as its text is
    field = (lambda name: f"{where}.{name}") if where.startswith("items[") else (lambda name: name)
    role = item.get("role")
    role = "user" if role is None or (isinstance(role, str) and not role) else role
    if not is_one_of(role, ROLES):
        raise InvalidInput(f"{field('role')} must be one of {ROLES}, got {role!r}")
    speaker = check_optional_str(item.get("speaker"), field("speaker"))
    session = check_optional_str(item.get("session_id"), field("session_id"))
    ts = to_epoch(item.get("timestamp"), field("timestamp"), min_year=config.timestamp_min_year,
                  max_year=config.timestamp_max_year)
    offset = utc_offset(item.get("timestamp"))  # the speaker's calendar: "yesterday" said at 23:30 in New York
    metadata = check_event_time(check_metadata(item.get("metadata"), field("metadata")), config, field("metadata"))
    event_time = to_epoch(item.get("event_time"), field("event_time"), min_year=config.timestamp_min_year,
                          max_year=config.timestamp_max_year)
    if event_time is not None:
        metadata["event_time"] = event_time
        event_offset = utc_offset(item.get("event_time"))
        if event_offset is None:
            metadata.pop(EVENT_TIME_OFFSET, None)  # a time given without one is on UTC's calendar
        else:
            metadata[EVENT_TIME_OFFSET] = event_offset
    priority = check_choice(item.get("priority"), field("priority"), PRIORITIES, optional=True)
    if priority is not None:
        metadata["priority"] = priority
    tokens = tokenizer.encode(text)
    # A fresh idempotency key per message: a store that has to retry the append (a connection lost while it
    # committed) recognises what it already stored. The ingestion time is kept to the microsecond, the resolution
    # of the datetime ``MemoryItem.created_at`` shows it as: a time the clock read between two microseconds would
    # make that datetime miss the message it names (``as_of=item.created_at``, a ``created_at`` filter).
    return NewMessage(tokens=tokens, speaker=speaker, role=role, ts=ts, session_id=session,
                      metadata=metadata, created_at=round(time.time(), 6), key=uuid.uuid4().hex, utc_offset=offset)
