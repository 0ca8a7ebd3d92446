"""A mapping whose values are built on first access, for hierarchy units read back from a snapshot.

A reopened store holds tens of thousands of episodes and semantics; a recall touches a few hundred. Building every
unit object at load would cost more than the rest of the load together, so units stay columns until a caller
reads one (then the object is built once and kept). To its callers the mapping is a dict from unit id to unit, in
id order (the order units were created in).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

_MISSING = object()


class LazyUnits:
    """``{id: unit}`` where the units of ``pending`` (id -> position) are built by ``make(position)`` when first
    read."""

    __slots__ = ("_made", "_pos", "_order", "_make")

    def __init__(self, pending: dict[int, int], make: Callable[[int], Any]) -> None:
        self._made: dict[int, Any] = {}
        self._pos = pending
        self._order: dict[int, None] = dict.fromkeys(pending)
        self._make = make

    def _build(self, key: int) -> Any:
        p = self._pos.pop(key, _MISSING)
        if p is _MISSING:
            return _MISSING
        value = self._made[key] = self._make(p)
        return value

    def get(self, key: int, default: Any = None) -> Any:
        value = self._made.get(key, _MISSING)
        if value is _MISSING:
            value = self._build(key)
        return default if value is _MISSING else value

    def __getitem__(self, key: int) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._made or key in self._pos

    def __setitem__(self, key: int, value: Any) -> None:
        self._pos.pop(key, None)
        self._made[key] = value
        self._order.setdefault(key, None)

    def __delitem__(self, key: int) -> None:
        if key not in self:
            raise KeyError(key)
        self._made.pop(key, None)
        self._pos.pop(key, None)
        del self._order[key]

    def pop(self, key: int, default: Any = _MISSING) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                raise KeyError(key)
            return default
        del self[key]
        return value

    def setdefault(self, key: int, default: Any = None) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            self[key] = value = default
        return value

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._order))

    def keys(self) -> Iterable[int]:
        return list(self._order)

    def values(self) -> list[Any]:
        return [self[k] for k in list(self._order)]

    def items(self) -> list[tuple[int, Any]]:
        return [(k, self[k]) for k in list(self._order)]

    def __bool__(self) -> bool:
        return bool(self._order)

    def __repr__(self) -> str:
        return f"LazyUnits({len(self)} units, {len(self._made)} built)"
