"""Messages as the API returns them (``hippo.engine.items.make_item``) against the dataclass constructors."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
from datetime import datetime, timezone

from hippo.base.timeutil import to_datetime
from hippo.base.types import Hit, MemoryItem
from hippo.engine import items
from hippo.store.base import MessageRow


def _row(ts, created=1.7e9, meta=None):
    return MessageRow(id=7, namespace="ns", seq=3, n_tokens=12, speaker="Ann", role="user", ts=ts,
                      session_id="s1", metadata={"k": [1, 2]} if meta is None else meta, created_at=created)


def _utc(epoch):
    return None if epoch is None or epoch != epoch else datetime.fromtimestamp(epoch, tz=timezone.utc)


def _reference(row, text):
    return MemoryItem(id=row.id, text=text, speaker=row.speaker, role=row.role, timestamp=_utc(row.ts),
                      session_id=row.session_id, metadata=dict(row.metadata), namespace=row.namespace, seq=row.seq,
                      n_tokens=row.n_tokens, created_at=_utc(row.created_at))


def test_memory_items_equal_the_constructed_ones():
    assert items._DIRECT  # the fields are the ones make_item fills; a new field must be added there too
    for ts in (1.7e9, 1.7e9 + 0.123456, None, math.nan, 0.0, -86400.5, 4e9):
        row = _row(ts)
        got, want = items.make_item(row, "héllo"), _reference(row, "héllo")
        assert type(got) is MemoryItem and got == want and repr(got) == repr(want)
        assert dataclasses.asdict(got) == dataclasses.asdict(want)
        assert pickle.loads(pickle.dumps(got)) == want and copy.deepcopy(got) == want
        assert dataclasses.replace(got, text="x") == dataclasses.replace(want, text="x")


def test_memory_items_are_frozen_and_own_their_metadata():
    row = _row(1.7e9)
    item = items.make_item(row, "t")
    try:
        item.text = "changed"
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("a MemoryItem must stay frozen")
    item.metadata["k"] = "mine"
    assert row.metadata == {"k": [1, 2]}  # the kept store row is not the caller's dict


def test_subclasses_and_extras_use_the_constructor():
    row = _row(1.7e9)
    hit = items.make_item(row, "t", Hit, score=0.5)
    assert type(hit) is Hit and hit.score == 0.5 and hit.level == "message"
    assert hit == Hit(**{**dataclasses.asdict(_reference(row, "t")), "score": 0.5})


def test_times_are_the_same_datetimes_when_converted_again():
    for ts in (1.7e9, 1.7e9 + 1e-6, 12345, -1.5, 1.7e9 + 0.5e-6):
        for _ in range(2):  # converted, then kept
            assert to_datetime(ts) == to_datetime(float(ts)) == _utc(ts)
    assert to_datetime(None) is None and to_datetime(math.nan) is None
