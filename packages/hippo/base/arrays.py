"""Append-only numpy columns shared by the co-index, its annotations and the hierarchy's tables.

A column that grows by appends keeps room ahead of its values so that an append is amortized O(1). The room is
taken as zeroed memory (``np.zeros``: ``calloc``, whose large blocks are pages the system maps on first write), so
the slots not used yet cost address space, not resident memory, and it grows by half its size (:func:`grown`), so
that at most a third of what it holds is room: doubling left up to half of it unused, and a copy of a doubled
column held three times its values at once.
"""

from __future__ import annotations

import numpy as np


def grown(cap: int, need: int) -> int:
    """The capacity a column of ``cap`` slots that must hold ``need`` values grows to: ``need`` or half again its
    size, whichever is more (every value is copied about twice over a column's life, instead of once)."""
    return max(need, cap + (cap >> 1), 64)


class GrowArray:
    """``a[:n]`` holds the values; a slot past ``n`` holds nothing meaningful until :meth:`extend` or
    :meth:`resize` writes it (``resize`` writes ``fill``)."""

    __slots__ = ("a", "n", "fill")

    def __init__(self, dtype, cap: int = 64, fill=0) -> None:
        self.fill = fill
        self.a = np.zeros(cap, dtype=dtype)
        self.n = 0

    def _reserve(self, need: int) -> None:
        if need > self.a.size:
            b = np.zeros(grown(self.a.size, need), dtype=self.a.dtype)
            b[: self.n] = self.a[: self.n]
            self.a = b

    @classmethod
    def wrap(cls, values: np.ndarray, fill=0) -> "GrowArray":
        """A column holding ``values`` (taken as they are, no copy: the caller gives the array up)."""
        g = cls.__new__(cls)
        g.fill = fill
        g.a = values if values.size else np.zeros(64, dtype=values.dtype)
        g.n = values.size
        return g

    def extend(self, values) -> None:
        values = np.asarray(values, dtype=self.a.dtype)
        need = self.n + values.size
        self._reserve(need)
        self.a[self.n : need] = values
        self.n = need

    def resize(self, n: int) -> None:
        """Grow to ``n`` values; the new ones are ``fill`` until written."""
        if n > self.n:
            self._reserve(n)
            self.a[self.n : n] = self.fill
            self.n = n

    @property
    def view(self) -> np.ndarray:
        return self.a[: self.n]

