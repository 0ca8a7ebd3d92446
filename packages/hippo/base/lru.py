"""A least-recently-used map bounded by its number of entries and by the total cost of what it holds.

The co-index keeps several such caches (a term's rows, its token counts, a token's positions, message texts, a
word's misspellings): each is bounded per loaded namespace by entries, by what its entries hold (rows, tokens,
characters), or both. Not thread-safe: callers hold their own lock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """Entries in order of use, least recent first; :meth:`put` drops the least recently used until at most
    ``entries`` are held and their ``cost`` adds up to at most ``budget`` (either bound None: none of that kind)."""

    def __init__(self, entries: int | None = None, budget: int | None = None,
                 cost: Callable[[V], int] | None = None) -> None:
        if budget is not None and cost is None:
            raise ValueError("a budget needs a cost")
        self.entries, self.budget, self._cost = entries, budget, cost
        self._map: OrderedDict[K, V] = OrderedDict()
        self.held = 0  # the total cost of the entries held

    def __len__(self) -> int:
        return len(self._map)

    def __contains__(self, key: object) -> bool:
        return key in self._map

    def values(self) -> list[V]:
        """The entries, least recently used first."""
        return list(self._map.values())

    def peek(self, key: K) -> V | None:
        """The entry of ``key`` (None without one), its place in the order left as it is."""
        return self._map.get(key)

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (None without one), now the most recently used."""
        got = self._map.get(key)
        if got is not None:
            self._map.move_to_end(key)
        return got

    def touch(self, key: K) -> None:
        """Make ``key``'s entry the most recently used."""
        self._map.move_to_end(key)

    def pop(self, key: K) -> V | None:
        got = self._map.pop(key, None)
        if got is not None and self._cost is not None:
            self.held -= self._cost(got)
        return got

    def put(self, key: K, value: V) -> None:
        """Hold ``value`` for ``key`` as the most recently used (replacing what was held), then drop the least
        recently used beyond the bounds (``value`` itself when it alone is over ``budget``)."""
        self.pop(key)
        self._map[key] = value
        if self._cost is not None:
            self.held += self._cost(value)
        while self._map and ((self.entries is not None and len(self._map) > self.entries)
                             or (self.budget is not None and self.held > self.budget)):
            _, dropped = self._map.popitem(last=False)
            if self._cost is not None:
                self.held -= self._cost(dropped)

    def clear(self) -> None:
        self._map.clear()
        self.held = 0
