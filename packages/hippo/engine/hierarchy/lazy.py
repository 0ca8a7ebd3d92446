"""Mappings read back from a hierarchy snapshot without building a Python object per entry.

:class:`LazyUnits`: units whose objects are built on first access. :class:`IntMap`: the per-message maps (message
id -> code slot, message id -> episode), a million entries in a long history, kept as sorted arrays.

A reopened store holds tens of thousands of episodes and semantics; a recall touches a few hundred. Building every
unit object at load would cost more than the rest of the load together, so units stay columns until a caller
reads one (then the object is built once and kept). To its callers the mapping is a dict from unit id to unit, in
id order (the order units were created in).
"""

from __future__ import annotations

import abc
import copy
from collections.abc import MutableMapping
from typing import Any, Callable, Iterable, Iterator

import numpy as np

_MISSING = object()


def find_sorted(keys: np.ndarray, live: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``want``: an index into the ascending ``keys`` (0 when they are empty) and whether a ``live``
    entry holds that key there; one vectorized binary search for all."""
    if not keys.size:
        return np.zeros(want.size, dtype=np.int64), np.zeros(want.size, dtype=bool)
    at = np.minimum(np.searchsorted(keys, want), keys.size - 1)
    return at, (keys[at] == want) & live[at]


class LazyUnits:
    """``{id: unit}`` where the units of ``pending`` (id -> position) are built by ``make(position)`` when first
    read. ``source`` is whatever ``make`` reads them from (the snapshot's columns): a unit not built yet is exactly
    its row there, so a writer may copy that row instead of building the unit (:meth:`split`)."""

    __slots__ = ("_made", "_pos", "_order", "_make", "source")

    def __init__(self, pending: dict[int, int], make: Callable[[int], Any], source: Any = None) -> None:
        self._made: dict[int, Any] = {}
        self._pos = pending
        self._order: dict[int, None] = dict.fromkeys(pending)
        self._make = make
        self.source = source

    def __deepcopy__(self, memo: dict[int, Any]) -> "LazyUnits":
        """A copy whose units are its own; the snapshot's columns the units not built yet are read from (``make``
        and ``source``, never written) are shared."""
        out = LazyUnits.__new__(LazyUnits)
        memo[id(self)] = out
        out._made = copy.deepcopy(self._made, memo)
        out._pos, out._order = dict(self._pos), dict(self._order)
        out._make, out.source = self._make, self.source
        return out

    def split(self, keys: list[int]) -> tuple[np.ndarray, list[Any]]:
        """For ``keys`` (all held): the ``source`` position of each one not built yet (-1 for a built one), and the
        built units in the order of ``keys``. Builds none of the units it gives a position."""
        pos = self._pos
        at = np.fromiter((pos.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
        return at, [self[k] for k, p in zip(keys, at.tolist()) if p < 0]

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


FOLD_MIN = 4096  # later entries an IntMap keeps in its dict before it folds them into its arrays


class _Folded(MutableMapping):
    """What :class:`IntMap` and :class:`ListMap` share: live entries in sorted key arrays (``_keys``, ``_live``,
    ``_n_live``; :meth:`_slot` finds one) and the entries added since the last fold in a dict (``_new``).
    Iteration: the arrays' keys ascending, then the later ones in insertion order."""

    __slots__ = ()

    @abc.abstractmethod
    def _slot(self, key: Any) -> int:
        """Position of the live entry of ``key`` in the arrays, or -1."""

    def __delitem__(self, key: int) -> None:
        if key in self._new:
            del self._new[key]
            return
        i = self._slot(key)
        if i < 0:
            raise KeyError(key)
        self._live[i] = False
        self._n_live -= 1

    def __len__(self) -> int:
        return self._n_live + len(self._new)

    def __iter__(self) -> Iterator[int]:
        yield from self._keys[self._live].tolist()
        yield from list(self._new)

    def __bool__(self) -> bool:
        return len(self) > 0


class IntMap(_Folded):
    """``{int: int}`` whose entries stay two sorted int64 arrays (found by binary search, changed in place, deleted
    by a mask), the entries added last in a dict until they are more than an eighth of the arrays' (and at least
    :data:`FOLD_MIN`): then they are folded into the arrays, dead entries dropped. Loading a million-entry map costs
    an array copy instead of a million dict insertions, and a map that grows message by message holds 16 bytes an
    entry instead of a dict's hundred; lookups cost a binary search. Iteration: the arrays' keys ascending, then the
    later ones in insertion order."""

    __slots__ = ("_keys", "_vals", "_live", "_n_live", "_new")

    def __init__(self, keys: Any = (), values: Any = ()) -> None:
        k = np.asarray(keys, dtype=np.int64).reshape(-1)
        v = np.asarray(values, dtype=np.int64).reshape(-1)
        if k.shape != v.shape:
            raise ValueError(f"IntMap: {k.size} keys but {v.size} values")
        if k.size > 1 and not (k[1:] > k[:-1]).all():
            order = np.argsort(k, kind="stable")
            k, v = k[order], v[order]
            if (k[1:] == k[:-1]).any():
                raise ValueError("IntMap: repeated keys")
        self._keys = k.copy()
        self._vals = v.copy()
        self._live = np.ones(k.size, dtype=bool)
        self._n_live = int(k.size)
        self._new: dict[int, int] = {}

    def _slot(self, key: Any) -> int:
        """Position of a live snapshot entry for ``key``, or -1."""
        n = self._keys.size
        if not n or not isinstance(key, (int, np.integer)) or isinstance(key, bool):
            return -1
        i = int(np.searchsorted(self._keys, key))
        return i if i < n and self._keys[i] == key and self._live[i] else -1

    def __getitem__(self, key: Any) -> int:
        got = self._new.get(key, _MISSING)
        if got is not _MISSING:
            return got
        i = self._slot(key)
        if i < 0:
            raise KeyError(key)
        return int(self._vals[i])

    def get(self, key: Any, default: Any = None) -> Any:
        got = self._new.get(key, _MISSING)
        if got is not _MISSING:
            return got
        i = self._slot(key)
        return default if i < 0 else int(self._vals[i])

    def get_many(self, keys: list[int], default: Any = None) -> list[Any]:
        """``[self.get(k, default) for k in keys]`` for int keys, with one vectorized binary search instead of one per
        key (a lookup costs about 4 us; a recall looks up each message of its context, a hundred or more)."""
        out: list[Any] = [self._new.get(k, _MISSING) for k in keys]
        todo = [j for j, v in enumerate(out) if v is _MISSING]
        if not todo:
            return out
        want = np.fromiter((keys[j] for j in todo), dtype=np.int64, count=len(todo))
        at, hit = find_sorted(self._keys, self._live, want)
        vals = self._vals[at].tolist() if self._keys.size else [0] * len(todo)
        for j, h, v in zip(todo, hit.tolist(), vals):
            out[j] = v if h else default
        return out

    def __contains__(self, key: object) -> bool:
        return key in self._new or self._slot(key) >= 0

    def __setitem__(self, key: int, value: int) -> None:
        i = self._slot(key)
        if i >= 0:
            self._vals[i] = value
        else:
            self._new[int(key)] = int(value)
            if len(self._new) > max(FOLD_MIN, self._keys.size >> 3):
                self._fold()

    def _fold(self) -> None:
        """Move the later entries into the sorted arrays (amortized O(1) per entry: the dict holds an eighth)."""
        new_k = np.fromiter(self._new.keys(), dtype=np.int64, count=len(self._new))
        new_v = np.fromiter(self._new.values(), dtype=np.int64, count=len(self._new))
        if self._n_live == self._keys.size:
            keys, vals = np.concatenate([self._keys, new_k]), np.concatenate([self._vals, new_v])
        else:
            keys = np.concatenate([self._keys[self._live], new_k])
            vals = np.concatenate([self._vals[self._live], new_v])
        if keys.size > 1 and not (keys[1:] > keys[:-1]).all():  # a later key below an earlier one: sort them
            order = np.argsort(keys, kind="stable")
            keys, vals = keys[order], vals[order]
        self._keys, self._vals = keys, vals
        self._live = np.ones(keys.size, dtype=bool)
        self._n_live = int(keys.size)
        self._new = {}

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, values)`` of every entry, in iteration order, as int64 arrays."""
        new_k = np.fromiter(self._new.keys(), dtype=np.int64, count=len(self._new))
        new_v = np.fromiter(self._new.values(), dtype=np.int64, count=len(self._new))
        return (np.concatenate([self._keys[self._live], new_k]), np.concatenate([self._vals[self._live], new_v]))

    def __repr__(self) -> str:
        return f"IntMap({len(self)} entries, {len(self._new)} since the snapshot)"


def get_many(mapping: Any, keys: list[int], default: Any = None) -> list[Any]:
    """``[mapping.get(k, default) for k in keys]``: vectorized for an :class:`IntMap`, one by one for a dict."""
    fn = getattr(mapping, "get_many", None)
    return fn(keys, default) if fn is not None else [mapping.get(k, default) for k in keys]


def ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """``starts[k], starts[k] + 1, ..., starts[k] + lens[k] - 1`` for every k, concatenated."""
    total = int(lens.sum()) if lens.size else 0
    if not total:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total, dtype=np.int64)


class ListMap(_Folded):
    """``{int: list[int]}`` (message id -> the semantics that quote it) kept as a CSR: sorted int64 keys, the offsets
    of their lists and one array of every list's values, the entries added or changed last in a dict of lists until
    they are more than an eighth of the arrays' (and at least :data:`FOLD_MIN`): then they are folded into the
    arrays, dead entries dropped, as :class:`IntMap` does. A dict of lists holds about 225 bytes a message with one
    or two values; this holds 16 bytes a key and 4 a value. A value read is a new list: change an entry through
    :meth:`add`, :meth:`discard` or assignment. Iteration: the arrays' keys ascending, then the later ones in the
    order they were added or changed."""

    __slots__ = ("_keys", "_ptr", "_val", "_live", "_n_live", "_new", "_top")

    def __init__(self) -> None:
        self._keys = np.zeros(0, dtype=np.int64)
        self._ptr = np.zeros(1, dtype=np.int64)
        self._val = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)
        self._n_live = 0
        self._new: dict[int, list[int]] = {}
        self._top = None  # the arrays' largest key: a later one (each new message) is known absent without a search

    @classmethod
    def from_csr(cls, keys: Any, ptr: Any, values: Any) -> "ListMap":
        """The map whose key ``keys[k]`` holds ``values[ptr[k]:ptr[k + 1]]`` (keys in any order, each once)."""
        k = np.asarray(keys, dtype=np.int64).reshape(-1)
        p = np.asarray(ptr, dtype=np.int64).reshape(-1)
        v = np.asarray(values).reshape(-1)
        if p.shape != (k.size + 1,) or p[0] != 0 or (np.diff(p) < 0).any() or p[-1] != v.size:
            raise ValueError("ListMap: offsets are inconsistent")
        out = cls()
        out._set(k, np.diff(p), v.astype(np.int64, copy=False))
        return out

    def _set(self, keys: np.ndarray, lens: np.ndarray, vals: np.ndarray) -> None:
        """Make the arrays hold ``keys`` with lists of ``lens`` values in turn from ``vals`` (sorted here)."""
        if keys.size > 1 and not (keys[1:] > keys[:-1]).all():
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
            if (keys[1:] == keys[:-1]).any():
                raise ValueError("ListMap: repeated keys")
            starts = np.cumsum(lens) - lens
            vals, lens = vals[ranges(starts[order], lens[order])], lens[order]
        small = not vals.size or (int(vals.min()) >= -(1 << 31) and int(vals.max()) < (1 << 31))
        self._keys = np.ascontiguousarray(keys, dtype=np.int64)
        self._ptr = np.zeros(keys.size + 1, dtype=np.int64)
        np.cumsum(lens, out=self._ptr[1:])
        self._val = np.ascontiguousarray(vals, dtype=np.int32 if small else np.int64)
        self._live = np.ones(keys.size, dtype=bool)
        self._n_live = int(keys.size)
        self._top = int(keys[-1]) if keys.size else None

    def __deepcopy__(self, memo: dict[int, Any]) -> "ListMap":
        """A copy of its own; the arrays, which are replaced and never written in place but for the live mask, are
        shared."""
        out = ListMap.__new__(ListMap)
        memo[id(self)] = out
        out._keys, out._ptr, out._val = self._keys, self._ptr, self._val
        out._live, out._n_live, out._top = self._live.copy(), self._n_live, self._top
        out._new = {k: list(v) for k, v in self._new.items()}
        return out

    def _slot(self, key: Any) -> int:
        """Position of a live folded entry for ``key``, or -1."""
        n = self._keys.size
        if not n or not isinstance(key, (int, np.integer)) or isinstance(key, bool) or key > self._top:
            return -1
        i = int(np.searchsorted(self._keys, key))
        return i if i < n and self._keys[i] == key and self._live[i] else -1

    def _row(self, i: int) -> list[int]:
        return self._val[self._ptr[i] : self._ptr[i + 1]].tolist()

    def get(self, key: Any, default: Any = None) -> Any:
        got = self._new.get(key, _MISSING)
        if got is not _MISSING:
            return list(got)
        i = self._slot(key)
        return default if i < 0 else self._row(i)

    def __getitem__(self, key: Any) -> list[int]:
        got = self.get(key, _MISSING)
        if got is _MISSING:
            raise KeyError(key)
        return got

    def get_many(self, keys: list[int], default: Any = None) -> list[Any]:
        """``[self.get(k, default) for k in keys]`` for int keys, with one vectorized binary search and one read of
        the values for all."""
        new = self._new
        out: list[Any] = [list(v) if (v := new.get(k, _MISSING)) is not _MISSING else _MISSING for k in keys]
        todo = [j for j, v in enumerate(out) if v is _MISSING]
        if not todo:
            return out
        want = np.fromiter((keys[j] for j in todo), dtype=np.int64, count=len(todo))
        at, hit = find_sorted(self._keys, self._live, want)
        rows = at[hit]
        lens = self._ptr[rows + 1] - self._ptr[rows]
        flat = self._val[ranges(self._ptr[rows], lens)].tolist()
        pos = 0
        lens_l = iter(lens.tolist())
        for j, h in zip(todo, hit.tolist()):
            if h:
                n = next(lens_l)
                out[j] = flat[pos : pos + n]
                pos += n
            else:
                out[j] = default
        return out

    def __contains__(self, key: object) -> bool:
        return key in self._new or self._slot(key) >= 0

    def _take(self, key: int) -> list[int] | None:
        """The list of ``key`` moved into the later entries (to be changed there), or None when it is not held."""
        got = self._new.get(key)
        if got is not None:
            return got
        i = self._slot(key)
        if i < 0:
            return None
        self._live[i] = False
        self._n_live -= 1
        got = self._new[int(key)] = self._row(i)
        return got

    def _after_new(self) -> None:
        if len(self._new) > max(FOLD_MIN, self._keys.size >> 3):
            self._fold()

    def add(self, key: int, value: int) -> None:
        """Append ``value`` to the list of ``key`` (a new list when it holds none) unless the list holds it."""
        lst = self._take(key)
        if lst is None:
            self._new[int(key)] = [int(value)]
        elif value not in lst:
            lst.append(int(value))
        self._after_new()

    def discard(self, key: int, value: int) -> None:
        """Remove ``value`` from the list of ``key`` when it holds it (the key stays, with the rest of its list)."""
        got = self._new.get(key)
        if got is None:
            i = self._slot(key)
            if i < 0 or value not in self._row(i):
                return
            got = self._take(key)
        if value in got:
            got.remove(value)
        self._after_new()

    def __setitem__(self, key: int, value: Iterable[int]) -> None:
        lst = [int(x) for x in value]
        i = self._slot(key)
        if i >= 0:
            self._live[i] = False
            self._n_live -= 1
        self._new[int(key)] = lst
        self._after_new()

    def _fold(self) -> None:
        """Move the later entries into the arrays (amortized O(1) per entry: the dict holds an eighth)."""
        keys, ptr, vals = self.csr()
        self._set(keys, np.diff(ptr), vals)
        self._new = {}

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(keys, offsets, values)`` of every entry in iteration order: key ``keys[k]`` holds
        ``values[offsets[k]:offsets[k + 1]]``."""
        if self._n_live == self._keys.size:
            old_k, old_ptr, old_v = self._keys, self._ptr, self._val
        else:
            live = np.flatnonzero(self._live)
            lens = self._ptr[live + 1] - self._ptr[live]
            old_k, old_v = self._keys[live], self._val[ranges(self._ptr[live], lens)]
            old_ptr = np.zeros(live.size + 1, dtype=np.int64)
            np.cumsum(lens, out=old_ptr[1:])
        new = self._new
        new_k = np.fromiter(new.keys(), dtype=np.int64, count=len(new))
        new_lens = np.fromiter((len(v) for v in new.values()), dtype=np.int64, count=len(new))
        new_v = np.fromiter((x for v in new.values() for x in v), dtype=np.int64, count=int(new_lens.sum()))
        ptr = np.concatenate([old_ptr, old_ptr[-1] + np.cumsum(new_lens)])
        return np.concatenate([old_k, new_k]), ptr, np.concatenate([old_v.astype(np.int64), new_v])

    def __repr__(self) -> str:
        return f"ListMap({len(self)} entries, {len(self._new)} since the last fold)"
