"""The steps hippo's compact maps (``IntMap``, ``ListMap``) share with a dict, each taken on the map and on a plain
dict beside it (the oracle), asserting that both answer alike."""

from __future__ import annotations

from typing import Any

import pytest

from hippo.engine.hierarchy.lazy import get_many


def step_like_a_dict(m: Any, ref: dict, op: str, key: int, probe: Any) -> bool:
    """Take ``op`` ("del", "pop", "many" or "in") with ``key`` (``probe`` the same key as a numpy or Python int) on
    ``m`` and ``ref``; False for an op of the map's own."""
    if op == "del":
        if key in ref:
            del m[probe]
            del ref[key]
        else:
            with pytest.raises(KeyError):
                del m[probe]
    elif op == "pop":
        assert m.pop(probe, "none") == ref.pop(key, "none")
    elif op == "many":  # every key around this one, present or not, and repeated
        want = list(range(key - 3, key + 4)) + [key]
        assert m.get_many(want, "none") == [ref.get(k, "none") for k in want]
        assert get_many(m, want, "none") == get_many(ref, want, "none") == m.get_many(want, "none")
    elif op == "in":
        assert (probe in m) == (key in ref)
    else:
        return False
    return True


def missing(m: Any, probe: Any) -> None:
    """A key the map does not hold raises KeyError when read."""
    with pytest.raises(KeyError):
        m[probe]
