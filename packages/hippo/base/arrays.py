"""Append-only numpy columns shared by the co-index, its annotations and the hierarchy's tables.

A column that grows by appends keeps room ahead of its values so that an append is amortized O(1). The room is
taken as zeroed memory (``np.zeros``: ``calloc``, whose large blocks are pages the system maps on first write), so
the slots not used yet cost address space, not resident memory, and it grows by half its size (:func:`grown`), so
that at most a third of what it holds is room: doubling left up to half of it unused, and a copy of a doubled
column held three times its values at once.

:class:`RowMap`: the co-index's message id -> row, an array indexed by id instead of a dict.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping

import numpy as np


def grown(cap: int, need: int) -> int:
    """The capacity a column of ``cap`` slots that must hold ``need`` values grows to: ``need`` or half again its
    size, whichever is more (every value is copied about twice over a column's life, instead of once)."""
    return max(need, cap + (cap >> 1), 64)


def filled_copy(a: np.ndarray, n: int) -> np.ndarray:
    """A copy of a column (or of the rows of a table) of which the first ``n`` hold values: as large, its room taken
    as zeroed memory again and left unwritten. ``a.copy()`` wrote every slot, so that a copy of a column grown by
    half made its room resident (a third of it) where the column's own room was not."""
    out = np.zeros(a.shape, dtype=a.dtype)
    out[:n] = a[:n]
    return out


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

    def __deepcopy__(self, memo) -> "GrowArray":
        out = GrowArray.__new__(GrowArray)
        out.fill, out.n, out.a = self.fill, self.n, filled_copy(self.a, self.n)
        return out

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


_NONE = -1  # a RowMap slot of no id


class RowMap(Mapping):
    """``{id: row}`` for a column of ids (row ``k`` holds ``ids[k]``), read like a dict.

    The ids of a namespace's messages are increasing integers, near one another: the map is one array of C ints
    indexed by ``id - base`` (:data:`_NONE` where no row holds that id), 4 bytes a slot where a dict spends about 90
    bytes an entry (its entry, its key and its value objects), and a lookup is an index into it (a few times a dict's
    cost, never a search). When the ids are so far apart that the array would hold more than :data:`SPARSE` slots an
    entry (several namespaces' messages added in turns to one store), the map is a dict, as it was.
    """

    __slots__ = ("_base", "_rows", "_n", "_d")

    SPARSE = 8      # slots an entry past which the map is a dict
    SPARSE_MIN = 4096  # slots any map may hold

    def __init__(self, ids=()) -> None:
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        self._base, self._rows, self._n, self._d = 0, array("i"), 0, None
        if not ids.size:
            return
        lo, hi = int(ids.min()), int(ids.max())
        repeated = ids.size > 1 and not (ids[1:] > ids[:-1]).all() and np.unique(ids).size != ids.size
        if hi - lo + 1 > self._room(ids.size) or repeated:
            self._d = dict(zip(ids.tolist(), range(ids.size)))
            return
        slots = np.full(hi - lo + 1, _NONE, dtype=np.intc)
        slots[ids - lo] = np.arange(ids.size, dtype=np.intc)
        self._base, self._rows, self._n = lo, array("i", slots.tobytes()), int(ids.size)

    @classmethod
    def _room(cls, n: int) -> int:
        return cls.SPARSE * n + cls.SPARSE_MIN

    def append(self, ids: list[int], first_row: int) -> None:
        """Rows ``first_row``, ``first_row + 1``, ... hold ``ids`` (a later row of an id replaces the earlier)."""
        if not ids:
            return
        d = self._d
        if d is None:
            lo, hi = min(ids), max(ids)
            if not self._n:
                self._base, self._rows = lo, array("i")
            rows = self._rows
            if lo < self._base:  # an id below every one held: room below it too, so that more of them cost O(1)
                below = self._base - lo + (len(rows) >> 2)
                rows[:0] = array("i", [_NONE]) * below
                self._base -= below
            if hi - self._base >= len(rows):
                rows.extend(array("i", [_NONE]) * (hi - self._base + 1 - len(rows)))
            if len(rows) > self._room(self._n + len(ids)):
                self._to_dict()
                d = self._d
        if d is not None:
            for k, i in enumerate(ids):
                d[i] = first_row + k
            return
        rows, base, n = self._rows, self._base, self._n
        for k, i in enumerate(ids):
            j = i - base
            if rows[j] < 0:
                n += 1
            rows[j] = first_row + k
        self._n = n

    def _to_dict(self) -> None:
        slots = np.frombuffer(self._rows, dtype=np.intc)
        at = np.flatnonzero(slots >= 0)
        self._d = dict(zip((at + self._base).tolist(), slots[at].tolist()))
        self._base, self._rows, self._n = 0, array("i"), 0

    def get(self, key, default=None):
        d = self._d
        if d is not None:
            return d.get(key, default)
        try:
            j = key - self._base
            if j < 0:
                return default
            r = self._rows[j]
        except IndexError:
            return default
        except TypeError:
            return self._odd_key(key, default)
        return r if r >= 0 else default

    def __getitem__(self, key) -> int:
        d = self._d
        if d is not None:
            return d[key]
        try:
            j = key - self._base
            r = self._rows[j] if j >= 0 else _NONE
        except IndexError:
            r = _NONE
        except TypeError:
            r = self._odd_key(key, _NONE)
        if r < 0:
            raise KeyError(key)
        return r

    def __contains__(self, key) -> bool:
        d = self._d
        if d is not None:
            return key in d
        try:
            j = key - self._base
            return j >= 0 and self._rows[j] >= 0
        except IndexError:
            return False
        except TypeError:
            return self._odd_key(key, _NONE) >= 0

    def _odd_key(self, key, default):
        """A key that is not an int: found as a dict finds it (a float equal to an int id is that id)."""
        if isinstance(key, (float, np.floating)) and float(key).is_integer():
            return self.get(int(key), default)
        return default

    def __len__(self) -> int:
        return len(self._d) if self._d is not None else self._n

    def __iter__(self):
        if self._d is not None:
            return iter(list(self._d))
        slots = np.frombuffer(self._rows, dtype=np.intc)
        return iter((np.flatnonzero(slots >= 0) + self._base).tolist())

    def __repr__(self) -> str:
        return f"RowMap({len(self)} ids{', a dict' if self._d is not None else ''})"
