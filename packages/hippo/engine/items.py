"""Messages as the public API returns them: a store row (metadata) plus its text reconstructed from the Content
DWM."""

from __future__ import annotations

import dataclasses
from typing import Any

from hippo.base.timeutil import to_datetime
from hippo.base.types import MemoryItem
from hippo.engine.state import NamespaceState
from hippo.store.base import MessageRow


_FIELDS = ("id", "text", "speaker", "role", "timestamp", "session_id", "metadata", "namespace", "seq", "n_tokens",
           "created_at")
# A recall returns dozens of messages, and a frozen dataclass's constructor sets each field through
# object.__setattr__ (with the two time conversions, a tenth of a repeated recall in a sampling profile): a MemoryItem
# is filled in one step instead, while its fields are exactly these and it has no __post_init__; otherwise the
# constructor is used.
_DIRECT = tuple(f.name for f in dataclasses.fields(MemoryItem)) == _FIELDS and not hasattr(MemoryItem,
                                                                                           "__post_init__")


def event_datetime(idx: Any, row: int, epoch: float) -> Any:
    """A message's event time ``epoch`` (row ``row`` of the namespace index ``idx``) as a datetime: with the offset
    from UTC the caller's ``event_time`` was given with, or, for an event dated by the timestamp, the timestamp's (the
    same instant); in UTC without one; None for NaN."""
    off = float(idx.event_offset.a[row])
    if off != off and epoch == float(idx.ts.a[row]):
        off = float(idx.utc_offset.a[row])
    return to_datetime(epoch, off)


def said_datetime(idx: Any, row: int) -> Any:
    """When row ``row`` of the namespace index ``idx`` was said, as :func:`make_item` gives it: with the offset from
    UTC its timestamp was given with, in UTC without one; None without a timestamp."""
    return to_datetime(float(idx.ts.a[row]), float(idx.utc_offset.a[row]))


def make_item(row: MessageRow, text: str, cls: type = MemoryItem, **extra: Any) -> Any:
    # a timestamp given with its offset from UTC is returned with it ("2023-03-03T23:30-05:00"), the same instant
    values = dict(id=row.id, text=text, speaker=row.speaker, role=row.role,
                  timestamp=to_datetime(row.ts, row.utc_offset), session_id=row.session_id,
                  metadata=dict(row.metadata), namespace=row.namespace, seq=row.seq,
                  n_tokens=row.n_tokens, created_at=to_datetime(row.created_at))
    if cls is MemoryItem and not extra and _DIRECT:
        item = object.__new__(MemoryItem)
        item.__dict__.update(values)
        return item
    return cls(**values, **extra)


def items(state: NamespaceState, ids: list[int], cls: type = MemoryItem,
          extras: list[dict[str, Any]] | None = None) -> list[Any]:
    """The messages with these ids, in the given order; ids not in the namespace are left out. Caller holds the
    read lock."""
    rows = state.rows(ids)
    idx = state.index
    found = [(k, rows[i], idx.row_of[i]) for k, i in enumerate(ids) if i in rows and i in idx.row_of]
    texts = idx.texts_of([pos for _, _, pos in found])  # one read of the Content DWM for all of them
    return [make_item(r, text, cls, **(extras[k] if extras else {})) for (k, r, _), text in zip(found, texts)]
