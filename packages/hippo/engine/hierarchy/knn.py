"""A k-nearest-neighbour graph over unit codes (seed 001 §3.2, "kNN graph for high-level navigation").

Only the top-k Hamming neighbours of every node are kept, so maintenance is linear per insertion instead of
quadratic: a new or changed node scans every live code once (XOR-popcount), takes its own k best, and enters the
lists of the nodes it beats. Lists can go slightly stale when a node's code drifts; :meth:`rebuild` (deep
consolidation) makes them exact again.
"""

from __future__ import annotations

import copy

import numpy as np

from hippo.base.arrays import filled_copy
from hippo.engine.hierarchy.codes import CodeSet, hamming
from hippo.native import BinaryIndex

_EMPTY = -1
_FAR = int(np.iinfo(np.int32).max)
#: the rows' type: slots and Hamming distances (at most a code's bits) fit in 32 bits, half the room of 64
_ROW = np.int32
_REBUILD_BLOCK = 1 << 20  # results of one native search call in a rebuild


class KnnGraph:
    """``ids[s]`` / ``dist[s]``: the neighbour slots of node ``s`` and their Hamming distances, nearest first, padded
    with :data:`_EMPTY` / :data:`_FAR` ("no neighbour").

    The rows follow their code set's capacity, but only the first :attr:`filled` of them hold lists: they are taken
    as zeroed memory (pages the system maps when first written, as :mod:`hippo.base.arrays`'s columns) and a row
    is written "no neighbour" when its code set's count first covers it (:meth:`_fit`, which every change calls
    first), so the room ahead of the codes is neither written nor resident. A row at or past :attr:`filled` has no
    neighbours (:meth:`neighbors`)."""

    def __init__(self, codes: CodeSet, bits: int, k: int) -> None:
        self.codes = codes
        self.bits = bits
        self.k = k
        self.ids = np.zeros((codes.codes.shape[0], k), dtype=_ROW)
        self.dist = np.zeros((codes.codes.shape[0], k), dtype=_ROW)
        self.filled = 0

    def __deepcopy__(self, memo: dict) -> "KnnGraph":
        """A copy of the lists of its :attr:`filled` rows; the room after them is left unwritten, as here."""
        out = KnnGraph.__new__(KnnGraph)
        memo[id(self)] = out
        out.codes = copy.deepcopy(self.codes, memo)
        out.bits, out.k, out.filled = self.bits, self.k, self.filled
        out.ids, out.dist = filled_copy(self.ids, self.filled), filled_copy(self.dist, self.filled)
        return out

    def _fit(self) -> None:
        """Rows for the code set's capacity, and "no neighbour" in the rows its count reached since."""
        cap = self.codes.codes.shape[0]
        if self.ids.shape[0] < cap:
            ids = np.zeros((cap, self.k), dtype=_ROW)
            dist = np.zeros((cap, self.k), dtype=_ROW)
            ids[: self.filled] = self.ids[: self.filled]
            dist[: self.filled] = self.dist[: self.filled]
            self.ids, self.dist = ids, dist
        n = self.codes.n
        if self.filled < n:
            self.ids[self.filled : n] = _EMPTY
            self.dist[self.filled : n] = _FAR
            self.filled = n

    def _take(self, rows: np.ndarray, ids: np.ndarray, dist: np.ndarray) -> None:
        """Keep the k nearest of each row's candidate ``ids`` / ``dist`` (ties: lower slot first)."""
        order = np.lexsort((ids, dist), axis=1)[:, : self.k] if ids.size else np.zeros((0, self.k), np.int64)
        self.ids[rows] = np.take_along_axis(ids, order, 1)
        self.dist[rows] = np.take_along_axis(dist, order, 1)

    def update(self, slot: int, d: np.ndarray | None = None) -> None:
        """(Re)link ``slot`` after its code was set; ``d`` may pass its distances to every slot if known."""
        self._fit()
        n = self.codes.n
        if d is None:
            d = self.codes.distances(self.codes.codes[slot])
        d = d.copy()
        d[slot] = 1 << 30
        live = d < (1 << 30)
        hit_rows = self._drop_from_lists(slot)
        # its own list
        k = min(self.k, int(live.sum()))
        self.ids[slot] = _EMPTY
        self.dist[slot] = _FAR
        if k > 0:
            part = np.argpartition(d, k - 1)[:k] if k < d.size else np.arange(d.size)
            part = part[np.lexsort((part, d[part]))]
            self.ids[slot, :k] = part
            self.dist[slot, :k] = d[part]
        # enter the lists of nodes whose k-th neighbour is farther away than this one
        better = np.flatnonzero(live & (d[:n] < self.dist[:n, -1]))
        if better.size:
            ids = np.concatenate([self.ids[better], np.full((better.size, 1), slot, dtype=np.int64)], axis=1)
            dist = np.concatenate([self.dist[better], d[better][:, None]], axis=1)
            self._take(better, ids, dist)
        rest = hit_rows[d[hit_rows] >= self.dist[hit_rows, -1]] if hit_rows.size else hit_rows
        if rest.size:
            self._take(rest, self.ids[rest], self.dist[rest])

    def refresh(self, slots: list[int], d: np.ndarray | None = None) -> None:
        """(Re)link several slots at once; ``d`` may pass their distances to every slot (len(slots) x n)."""
        if not slots:
            return
        self._fit()
        n = self.codes.n
        new = np.asarray(slots, dtype=np.int64)
        if d is None:
            d = hamming(self.codes.codes[new][:, None, :], self.codes.codes[:n][None, :, :])
        d = d.astype(np.int64, copy=True)
        d[:, ~self.codes.alive[:n]] = 1 << 30
        d[np.arange(new.size), new] = 1 << 30
        is_new = np.zeros(n, dtype=bool)
        is_new[new] = True
        hit = np.isin(self.ids[:n], new)
        hit_rows = np.flatnonzero(hit.any(axis=1) & ~is_new)
        if hit_rows.size:
            self.ids[:n][hit] = _EMPTY
            self.dist[:n][hit] = _FAR
        # their own lists
        k = min(self.k, n - 1) if n > 1 else 0
        self.ids[new] = _EMPTY
        self.dist[new] = _FAR
        if k > 0:
            part = np.argpartition(d, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (new.size, 1))
            pd = np.take_along_axis(d, part, 1)
            ok = pd < (1 << 30)
            ids = np.where(ok, part, _EMPTY)
            dist = np.where(ok, pd, _FAR)
            pad = self.k - ids.shape[1]
            if pad > 0:
                ids = np.hstack([ids, np.full((new.size, pad), _EMPTY)])
                dist = np.hstack([dist, np.full((new.size, pad), _FAR)])
            self._take(new, ids, dist)
        # enter the lists of the other nodes they beat
        live = self.codes.alive[:n] & ~is_new
        best = d.min(axis=0)
        better = np.flatnonzero(live & (best < self.dist[:n, -1]))
        if better.size:
            ids = np.concatenate([self.ids[better], np.tile(new, (better.size, 1))], axis=1)
            dist = np.concatenate([self.dist[better], d[:, better].T], axis=1)
            self._take(better, ids, dist)
        rest = np.setdiff1d(hit_rows, better, assume_unique=True)
        if rest.size:
            self._take(rest, self.ids[rest], self.dist[rest])

    def insert_many(self, slots: list[int], reach: int = 32) -> None:
        """Link newly appended slots through the code set's native index: their own lists are exact; a new node
        enters the lists of the ``reach`` nodes nearest to it when it beats their k-th neighbour (a node whose
        k nearest include the new one is almost always among the new one's nearest ``reach``)."""
        if not slots:
            return
        self._fit()
        new = np.asarray(slots, dtype=np.int64)
        d, ids = self.codes.nearest(self.codes.codes[new], max(self.k + 1, reach))
        is_new = np.zeros(self.codes.n, dtype=bool)
        is_new[new] = True
        for r, s in enumerate(new.tolist()):
            row_i, row_d = ids[r], d[r]
            keep = (row_i >= 0) & (row_i != s)
            own_i, own_d = row_i[keep][: self.k], row_d[keep][: self.k]
            self.ids[s] = _EMPTY
            self.dist[s] = _FAR
            self.ids[s, : own_i.size] = own_i
            self.dist[s, : own_d.size] = own_d
            cand = keep & ~is_new[np.maximum(row_i, 0)]
            us, ud = row_i[cand], row_d[cand]
            better = ud < self.dist[us, -1]
            us, ud = us[better], ud[better]
            if us.size:
                ids2 = np.concatenate([self.ids[us], np.full((us.size, 1), s, dtype=np.int64)], axis=1)
                dist2 = np.concatenate([self.dist[us], ud[:, None]], axis=1)
                self._take(us, ids2, dist2)

    def _drop_from_lists(self, slot: int) -> np.ndarray:
        """Blank ``slot`` out of every list (entries move to the end on the next sort); returns the rows."""
        n = self.codes.n
        hit = self.ids[:n] == slot
        rows = np.flatnonzero(hit.any(axis=1))
        if rows.size:
            self.ids[:n][hit] = _EMPTY
            self.dist[:n][hit] = _FAR
        return rows

    def remove(self, slot: int) -> None:
        """Unlink a killed node; lists that lose it are refilled by a search."""
        self.remove_many([slot])

    def remove_many(self, slots: list[int]) -> None:
        """Unlink killed nodes at once: every list that held one of them is blanked there, and the live nodes'
        lists among them are refilled by one search over the live codes, as removing them one at a time does."""
        if not len(slots):
            return
        self._fit()
        n = self.codes.n
        gone = np.asarray(slots, dtype=np.int64)
        hit = np.isin(self.ids[:n], gone)
        rows = np.flatnonzero(hit.any(axis=1))
        if rows.size:
            self.ids[:n][hit] = _EMPTY
            self.dist[:n][hit] = _FAR
        self.ids[gone] = _EMPTY
        self.dist[gone] = _FAR
        rows = rows[self.codes.alive[rows]]
        if rows.size:
            self._exact(rows)

    def _exact(self, rows: np.ndarray | None = None) -> None:
        """Set the lists of live ``rows`` (every live node when None) to their exact k nearest among the live codes
        (ties: lower slot first), as :meth:`CodeSet.top` gives them one node at a time: the live codes go into a
        native XOR-popcount index once and are searched in blocks of queries, each for its k + 1 nearest, of
        which the node itself is dropped."""
        live = self.codes.live()
        m = int(live.size)
        if rows is None:
            rows = live
        if m < 2 or self.k < 1 or not rows.size:
            return
        codes = np.ascontiguousarray(self.codes.codes[live]).view(np.uint8).reshape(m, -1)
        queries = np.ascontiguousarray(self.codes.codes[rows]).view(np.uint8).reshape(rows.size, -1)
        index = BinaryIndex(self.codes.words * 64)
        index.add(codes)
        want = min(self.k + 1, m)
        keep = want - 1
        block = max(1, min(rows.size, _REBUILD_BLOCK // want))
        for s in range(0, rows.size, block):
            e = min(rows.size, s + block)
            d, at = index.search(queries[s:e], want)
            # the node itself leaves its row; where it is not among the k + 1 (more than k codes equal to it
            # at lower slots) the row's last entry goes instead; the order of the others is kept
            other = live[at] != rows[s:e, None]
            other[~(~other).any(axis=1), -1] = False
            order = np.argsort(~other, axis=1, kind="stable")[:, :keep]
            self.ids[rows[s:e]] = _EMPTY
            self.dist[rows[s:e]] = _FAR
            self.ids[rows[s:e], :keep] = live[np.take_along_axis(at, order, 1)]
            self.dist[rows[s:e], :keep] = np.take_along_axis(d, order, 1)

    def rebuild(self) -> None:
        """Every live node's exact k nearest (ties: lower slot first): :meth:`_exact` of every live node."""
        self._fit()
        self.ids[: self.filled] = _EMPTY
        self.dist[: self.filled] = _FAR
        self._exact()

    def lists(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The lists of the first ``n`` rows (copies): ids and distances, "no neighbour" in rows not filled yet."""
        ids = np.full((n, self.k), _EMPTY, dtype=np.int64)
        dist = np.full((n, self.k), _FAR, dtype=np.int64)
        m = min(n, self.filled)
        ids[:m] = self.ids[:m]
        dist[:m] = self.dist[:m]
        return ids, dist

    def neighbors(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """Neighbour slots and their similarities (cosine of the +-1 codes), nearest first."""
        if not 0 <= slot < self.filled:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        row = self.ids[slot]
        keep = row != _EMPTY
        return row[keep].astype(np.int64), 1.0 - 2.0 * self.dist[slot][keep].astype(np.float64) / self.bits
