"""Themes: groups of semantics, split and merged under the guidance function of seed 001 §3.2.

    f(P) = SparsityScore(P) + SemScore(P)                                     (Eq. 1)
    SparsityScore(P) = N^2 / (K * sum_k n_k^2)                                (Eq. 2)
    SemScore(P) = 1/K * sum_k (1/n_k * sum_{i in C_k} cos(x_i, mu_k)) * g(s_k)  (Eq. 3)
    g(s_k) = exp(-(s_k - m)^2 / (2 sigma^2)),  s_k = max_{j != k} cos(mu_k, mu_j),
    m = median(s),  sigma = median(|s - m|) + eps

Every x_i is a semantic's binary code and mu_k its theme's binarized centroid (the per-bit majority of the member
codes); cos is the cosine of the +-1 vectors, ``1 - 2 * hamming / bits``. A new semantic attaches to the theme
with the most similar centroid or opens a new theme (§3.2, "Guided attach, split, and merge"); a theme above the
cap (default 12, App. B) is split into the clustering candidate that maximizes f(P); a tiny theme merges into one
of its nearest themes when that raises f(P). Every semantic that changes theme counts as a reassignment (§5.3).

The nearest-neighbour similarity s_k of every theme is maintained exactly (a linear scan per changed theme).
Since s_k = 1 - 2 d_k / bits for an integer distance d_k, the partition's statistics are kept per distance
(:class:`Stats`: how many themes have their nearest neighbour at each distance and the exact sum of their
cohesions, plus K, N and sum n_k^2), so f(P) of the current partition costs O(bits) and a candidate split, merge or
move costs one native distance scan of the centroids plus O(bits), instead of a median, a MAD and a mean over every
theme. :meth:`ThemeSet._evaluate` is the direct computation over all themes; every decision takes it where the
incremental value is too close to the decision's threshold to be sure of the comparison (:meth:`ThemeSet._beats`),
so decisions are those of the direct computation. :func:`partition_score` is the from-scratch definition the tests
compare against.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from hippo.engine.hierarchy.codes import CodeSet, hamming, majority, similarity
from hippo.engine.hierarchy.knn import KnnGraph
from hippo.native import hamming_cross

SEM_EPS = 0.01  # the epsilon of sigma in Eq. 3, in cosine units (256-bit codes resolve steps of 2/256)
# Where the incremental f(P) decides. It differs from the direct computation only in how the mean of Eq. 3 is
# summed: the direct one (numpy's pairwise sum of K rounded products) is within (2 + log2 K) * 2^-53 of the exact
# value, the incremental one (exact per-distance sums, then math.fsum) within 2^-52; for K up to 10^9 both are
# within 1e-14 of each other. A comparison whose margin is below GUARD is decided by the direct computation.
GUARD = 1e-13
_SCALE = 1 << 1074   # every float64 times this is an integer: cohesions are summed exactly as integers


def sparsity_score(sizes: np.ndarray) -> float:
    """Eq. 2: N^2 / (K * sum n_k^2); 1.0 for perfectly balanced themes."""
    sizes = np.asarray(sizes, dtype=np.float64)
    if sizes.size == 0:
        return 0.0
    n = sizes.sum()
    return float(n * n / (sizes.size * np.square(sizes).sum()))


def sem_score(cohesion: np.ndarray, nn_sim: np.ndarray, eps: float = SEM_EPS) -> float:
    """Eq. 3 from per-theme mean cosine to the centroid and nearest-neighbour centroid similarity.

    With a single theme there is no neighbour to regularize against and g = 1."""
    cohesion = np.asarray(cohesion, dtype=np.float64)
    if cohesion.size == 0:
        return 0.0
    if cohesion.size == 1:
        return float(cohesion[0])
    s = np.asarray(nn_sim, dtype=np.float64)
    m = float(np.median(s))
    sigma = float(np.median(np.abs(s - m))) + eps
    g = np.exp(-np.square(s - m) / (2.0 * sigma * sigma))
    return float(np.mean(cohesion * g))


def f_score(sizes: np.ndarray, cohesion: np.ndarray, nn_sim: np.ndarray, eps: float = SEM_EPS) -> float:
    """Eq. 1."""
    return sparsity_score(sizes) + sem_score(cohesion, nn_sim, eps)


def theme_stats(member_codes: np.ndarray, bits: int, tie: np.ndarray) -> tuple[np.ndarray, float]:
    """Centroid code and cohesion (mean cosine of members to the centroid) of one theme."""
    member_codes = np.atleast_2d(member_codes)
    mu = majority(member_codes, tie)
    return mu, float(similarity(mu, member_codes, bits).mean())


def partition_score(groups: list[np.ndarray], bits: int, tie: np.ndarray, eps: float = SEM_EPS) -> float:
    """f(P) of a partition given as a list of (n_k, words) code arrays, computed from scratch (O(K^2))."""
    stats = [theme_stats(g, bits, tie) for g in groups]
    sizes = np.array([np.atleast_2d(g).shape[0] for g in groups], dtype=np.float64)
    coh = np.array([c for _, c in stats])
    mus = np.array([mu for mu, _ in stats]) if stats else np.zeros((0, 1), np.uint64)
    nn = np.full(len(groups), -1.0)
    for k in range(len(groups)):
        sims = similarity(mus[k], mus, bits)
        sims[k] = -np.inf
        if len(groups) > 1:
            nn[k] = sims.max()
    return f_score(sizes, coh, nn, eps)


def _exact(x: float) -> int:
    """``x * 2^1074`` as an exact integer."""
    num, den = float(x).as_integer_ratio()
    return num * (_SCALE // den)


def _once(fn: Callable[[], float]) -> Callable[[], float]:
    """``fn``, computed at its first call only."""
    box: list[float] = []

    def get() -> float:
        if not box:
            box.append(fn())
        return box[0]

    return get


class Stats:
    """What f(P) needs of a partition, kept per nearest-neighbour distance: theme count K, N = sum n_k,
    Q = sum n_k^2, and per distance d (``bits + 1``: no neighbour) how many themes have their nearest neighbour at
    d and the exact sum of their cohesions (integers scaled by 2^1074, with that sum as a float beside it)."""

    __slots__ = ("bits", "k", "n", "q", "count", "coh", "cohf", "s")

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.k = self.n = self.q = 0
        self.count = np.zeros(bits + 2, dtype=np.int64)
        self.coh = [0] * (bits + 2)
        self.cohf = np.zeros(bits + 2, dtype=np.float64)
        # the values nn_sim holds for each distance, as the theme set computes them
        self.s = 1.0 - 2.0 * np.arange(bits + 1, dtype=np.float64) / float(bits)

    def copy(self) -> "Stats":
        out = Stats.__new__(Stats)
        out.bits, out.k, out.n, out.q, out.s = self.bits, self.k, self.n, self.q, self.s
        out.count = self.count.copy()
        out.coh = list(self.coh)
        out.cohf = self.cohf.copy()
        return out

    def add(self, size: int, coh: int, d: int, sign: int = 1) -> None:
        self.k += sign
        self.n += sign * size
        self.q += sign * size * size
        self.count[d] += sign
        self.coh[d] += sign * coh
        self.cohf[d] = self.coh[d] / _SCALE

    def move(self, coh: int, d_old: int, d_new: int) -> None:
        if d_old != d_new:
            self.count[d_old] -= 1
            self.count[d_new] += 1
            self.coh[d_old] -= coh
            self.coh[d_new] += coh
            self.cohf[d_old] = self.coh[d_old] / _SCALE
            self.cohf[d_new] = self.coh[d_new] / _SCALE

    def f(self, eps: float = SEM_EPS) -> float | None:
        """f(P) (Eq. 1) from the statistics, as :func:`f_score` computes it up to the summation of Eq. 3's mean;
        None when a theme has no neighbour although there are several (not a partition this class keeps)."""
        k = self.k
        if k == 0:
            return 0.0
        sparsity = float(self.n) * float(self.n) / (k * float(self.q))
        if k == 1:
            return sparsity + sum(self.coh) / _SCALE
        bits = self.bits
        if self.count[bits + 1]:
            return None
        d = np.flatnonzero(self.count[: bits + 1])[::-1]   # s ascending
        counts = self.count[d]
        s = self.s[d]
        cum = np.cumsum(counts)
        m = _middle(s, cum, k)
        dev = np.abs(s - m)
        order = np.argsort(dev, kind="stable")
        sigma = _middle(dev[order], np.cumsum(counts[order]), k) + eps
        g = np.exp(-np.square(s - m) / (2.0 * sigma * sigma))
        return sparsity + math.fsum((g * self.cohf[d]).tolist()) / k


def _middle(values: np.ndarray, cum: np.ndarray, total: int) -> float:
    """np.median of the multiset of ascending ``values`` whose cumulative counts are ``cum``."""
    hi = float(values[int(np.searchsorted(cum, total // 2, side="right"))])
    if total % 2:
        return hi
    return (float(values[int(np.searchsorted(cum, total // 2 - 1, side="right"))]) + hi) / 2.0


class ThemeSet:
    """The theme level of the hierarchy. Themes are addressed by slot id; merged-away themes leave dead slots."""

    def __init__(self, bits: int, words: int, tie: np.ndarray, code_of: Callable[[int], np.ndarray], *,
                 cap: int = 12, attach: float = 0.12, tiny: int = 1, merge_candidates: int = 3,
                 split_trials: int = 4, knn_k: int = 6) -> None:
        self.bits = bits
        self.tie = tie
        self.code_of = code_of            # semantic id -> its code
        self.cap = cap
        self.attach_min = attach
        self.tiny = tiny
        self.merge_candidates = merge_candidates
        self.split_trials = split_trials
        self.codes = CodeSet(words)
        self.graph = KnnGraph(self.codes, bits, knn_k)
        self.members: list[list[int]] = []
        self.cohesion = np.zeros(0, dtype=np.float64)
        self.sizes = np.zeros(0, dtype=np.int64)
        self.nn_sim = np.zeros(0, dtype=np.float64)
        self.nn_id = np.zeros(0, dtype=np.int64)
        self.theme_of: dict[int, int] = {}
        self.moved: set[int] = set()      # semantics that changed theme at least once
        self.reassignments = 0            # total theme changes of semantics
        self.splits = 0
        self.merges = 0
        self.created: list[int] = []
        # f(P)'s statistics and what each theme contributes to them (see :meth:`_sync`)
        self.stats = Stats(bits)
        self._sc_on = np.zeros(0, dtype=bool)
        self._sc_n = np.zeros(0, dtype=np.int64)
        self._sc_coh = np.zeros(0, dtype=np.float64)
        self._sc_nn = np.zeros(0, dtype=np.float64)
        self._sc_d = np.zeros(0, dtype=np.int64)

    # -- bookkeeping ----------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.codes.alive[: self.codes.n].sum())

    def live(self) -> np.ndarray:
        return self.codes.live()

    def _grow(self) -> None:
        cap = self.codes.codes.shape[0]
        if self.cohesion.size < cap:
            extra = cap - self.cohesion.size
            self.cohesion = np.concatenate([self.cohesion, np.zeros(extra)])
            self.sizes = np.concatenate([self.sizes, np.zeros(extra, dtype=np.int64)])
            self.nn_sim = np.concatenate([self.nn_sim, np.full(extra, -np.inf)])
            self.nn_id = np.concatenate([self.nn_id, np.full(extra, -1, dtype=np.int64)])

    def _member_codes(self, sids: list[int]) -> np.ndarray:
        return np.array([self.code_of(s) for s in sids], dtype=np.uint64).reshape(len(sids), -1)

    def _sims_to_all(self, code: np.ndarray) -> np.ndarray:
        n = self.codes.n
        sims = similarity(code, self.codes.codes[:n], self.bits)
        sims[~self.codes.alive[:n]] = -np.inf
        return sims

    def _rescan_nn(self, t: int) -> None:
        sims = self._sims_to_all(self.codes.codes[t])
        sims[t] = -np.inf
        if sims.size and np.isfinite(sims.max()):
            j = int(np.argmax(sims))
            self.nn_sim[t], self.nn_id[t] = sims[j], j
        else:
            self.nn_sim[t], self.nn_id[t] = -np.inf, -1

    def _after_change(self, t: int) -> None:
        """Keep every nearest-neighbour similarity exact after theme ``t`` was created or its centroid moved."""
        n = self.codes.n
        d = self.codes.distances(self.codes.codes[t])
        sims = 1.0 - 2.0 * d.astype(np.float64) / self.bits
        sims[~self.codes.alive[:n]] = -np.inf
        sims[t] = -np.inf
        stale = np.flatnonzero((self.nn_id[:n] == t) & self.codes.alive[:n])
        better = np.flatnonzero(sims > self.nn_sim[:n])
        self.nn_sim[better] = sims[better]
        self.nn_id[better] = t
        self._rescan_many(np.setdiff1d(np.append(stale, t), better[better != t]))
        self.graph.update(t, d)

    def _after_change_many(self, ts: list[int]) -> None:
        """:meth:`_after_change` for several themes with one distance computation."""
        ts = [t for t in dict.fromkeys(ts) if self.codes.alive[t]]
        if not ts:
            return
        if len(ts) == 1:
            self._after_change(ts[0])
            return
        n = self.codes.n
        arr = np.asarray(ts, dtype=np.int64)
        d = hamming(self.codes.codes[arr][:, None, :], self.codes.codes[:n][None, :, :])
        sims = 1.0 - 2.0 * d.astype(np.float64) / self.bits
        sims[:, ~self.codes.alive[:n]] = -np.inf
        sims[np.arange(arr.size), arr] = -np.inf
        changed = np.zeros(n, dtype=bool)
        changed[arr] = True
        # the changed themes' own nearest neighbours
        j = np.argmax(sims, axis=1)
        self.nn_sim[arr] = sims[np.arange(arr.size), j]
        self.nn_id[arr] = np.where(np.isfinite(self.nn_sim[arr]), j, -1)
        # everyone else: a changed theme may now be nearer, or the old nearest may have moved away
        col_best = sims.max(axis=0)
        col_arg = arr[np.argmax(sims, axis=0)]
        others = self.codes.alive[:n] & ~changed
        stale = np.flatnonzero(others & np.isin(self.nn_id[:n], arr))
        better = np.flatnonzero(others & (col_best > self.nn_sim[:n]))
        self.nn_sim[better] = col_best[better]
        self.nn_id[better] = col_arg[better]
        self._rescan_many(np.setdiff1d(stale, better))
        self.graph.refresh(ts, d)

    def _rescan_many(self, rows: np.ndarray) -> None:
        """Exact nearest neighbours of several themes in one pass."""
        if rows.size == 0:
            return
        n = self.codes.n
        for lo in range(0, rows.size, 64):
            part = rows[lo : lo + 64]
            sims = similarity(self.codes.codes[part][:, None, :], self.codes.codes[:n][None, :, :], self.bits)
            sims[:, ~self.codes.alive[:n]] = -np.inf
            sims[np.arange(part.size), part] = -np.inf
            j = np.argmax(sims, axis=1)
            best = sims[np.arange(part.size), j]
            self.nn_sim[part] = best
            self.nn_id[part] = np.where(np.isfinite(best), j, -1)

    def _after_remove(self, t: int) -> None:
        n = self.codes.n
        self.nn_sim[t], self.nn_id[t] = -np.inf, -1
        self._rescan_many(np.flatnonzero((self.nn_id[:n] == t) & self.codes.alive[:n]))
        self.graph.remove(t)

    def _set_members(self, t: int, sids: list[int]) -> None:
        mu, coh = theme_stats(self._member_codes(sids), self.bits, self.tie)
        self.members[t] = list(sids)
        self.sizes[t] = len(sids)
        self.codes.set(t, mu)
        self.cohesion[t] = coh
        for s in sids:
            old = self.theme_of.get(s)
            if old is not None and old != t:
                self.moved.add(s)
                self.reassignments += 1
            self.theme_of[s] = t

    def _new_theme(self, sids: list[int]) -> int:
        t = self.codes.append(np.zeros(self.codes.words, dtype=np.uint64))
        self.members.append([])
        self._grow()
        self._set_members(t, sids)
        self._after_change(t)
        self.created.append(t)
        return t

    def drain_created(self) -> list[int]:
        out, self.created = self.created, []
        return out

    # -- scoring --------------------------------------------------------------------------------------------
    def score(self) -> float:
        """f(P) of the current partition."""
        live = self.live()
        if live.size == 0:
            return 0.0
        return f_score(self.sizes[live].astype(np.float64), self.cohesion[live], self.nn_sim[live])

    def _distance_bin(self, nn: float) -> int:
        """The integer distance behind a nearest-neighbour similarity (``bits + 1``: no neighbour)."""
        return int(round((1.0 - nn) * self.bits / 2.0)) if math.isfinite(nn) else self.bits + 1

    def _sync(self) -> None:
        """Bring :attr:`stats` up to date with the themes' sizes, cohesions, nearest-neighbour similarities and
        liveness: the themes whose values differ from what they contribute are taken out and put back."""
        n = self.codes.n
        if self._sc_on.size < n:
            extra = max(n, 2 * self._sc_on.size) - self._sc_on.size
            self._sc_on = np.concatenate([self._sc_on, np.zeros(extra, dtype=bool)])
            self._sc_n = np.concatenate([self._sc_n, np.zeros(extra, dtype=np.int64)])
            self._sc_coh = np.concatenate([self._sc_coh, np.zeros(extra)])
            self._sc_nn = np.concatenate([self._sc_nn, np.zeros(extra)])
            self._sc_d = np.concatenate([self._sc_d, np.full(extra, self.bits + 1, dtype=np.int64)])
        alive = self.codes.alive[:n]
        on = self._sc_on[:n]
        changed = (alive != on) | (alive & ((self.sizes[:n] != self._sc_n[:n]) | (self.cohesion[:n] != self._sc_coh[:n])
                                            | (self.nn_sim[:n] != self._sc_nn[:n])))
        st = self.stats
        for t in np.flatnonzero(changed).tolist():
            if self._sc_on[t]:
                st.add(int(self._sc_n[t]), _exact(self._sc_coh[t]), int(self._sc_d[t]), -1)
            if alive[t]:
                size, coh, nn = int(self.sizes[t]), float(self.cohesion[t]), float(self.nn_sim[t])
                d = self._distance_bin(nn)
                st.add(size, _exact(coh), d)
                self._sc_on[t], self._sc_n[t], self._sc_coh[t], self._sc_nn[t] = True, size, coh, nn
                self._sc_d[t] = d
            else:
                self._sc_on[t], self._sc_d[t] = False, self.bits + 1

    def _score_fast(self) -> float | None:
        """f(P) of the current partition from the kept statistics (None: only the direct computation has it)."""
        self._sync()
        return self.stats.f()

    def _evaluate_fast(self, removed: set[int], added: list[tuple[np.ndarray, int, float]]) -> float | None:
        """:meth:`_evaluate` from the kept statistics: the themes whose nearest neighbour changes are moved between
        distances (found by one native scan of the centroids from the added themes and the kept themes whose nearest
        neighbour is removed), then f(P) costs O(bits)."""
        self._sync()
        st = self.stats.copy()
        n = self.codes.n
        far = 1 << 30
        none = self.bits + 1
        keep = self.codes.alive[:n].copy()
        gone = np.fromiter(removed, dtype=np.int64, count=len(removed))
        keep[gone] = False
        for r in removed:
            if self._sc_on[r]:
                st.add(int(self._sc_n[r]), _exact(self._sc_coh[r]), int(self._sc_d[r]), -1)
        # one native scan of the centroids for the kept themes whose nearest neighbour is removed and the added ones
        nn_id = self.nn_id[:n]
        hit = np.zeros(n, dtype=bool)
        for r in removed:
            hit |= nn_id == r
        rows = np.flatnonzero(keep & hit)
        add_codes = np.array([c for c, _, _ in added], dtype=np.uint64).reshape(len(added), self.codes.words)
        queries = np.concatenate([self.codes.codes[rows], add_codes])
        new_d: dict[int, int] = {}   # kept themes whose nearest distance changes
        own = np.zeros(0, dtype=np.int64)
        if queries.shape[0] and n:
            dist = hamming_cross(queries, self.codes.codes[:n]) if self.codes.words <= 16 else \
                hamming(queries[:, None, :], self.codes.codes[:n][None, :, :])
            dist[:, np.flatnonzero(~keep)] = far
            dist[np.arange(rows.size), rows] = far
            for j, dm in zip(rows.tolist(), dist[: rows.size].min(axis=1).tolist()):
                new_d[j] = dm if dm < far else none
            if added:
                cross = dist[rows.size :]
                cmin = cross.min(axis=0)
                for j in np.flatnonzero(cmin < self._sc_d[:n]).tolist():
                    new_d[j] = min(new_d.get(j, none), int(cmin[j]))
                for j in rows.tolist():
                    if cmin[j] < new_d[j]:
                        new_d[j] = int(cmin[j])
                own = cross.min(axis=1)
        else:
            own = np.full(len(added), far, dtype=np.int64)
        if len(added) > 1:
            among = hamming(add_codes[:, None, :], add_codes[None, :, :])
            np.fill_diagonal(among, far)
            own = np.minimum(own, among.min(axis=1))
        for j, d in new_d.items():
            st.move(_exact(self._sc_coh[j]), int(self._sc_d[j]), d)
        for (_, size, coh), d in zip(added, own.tolist()):
            st.add(int(size), _exact(coh), int(d) if d < far else none)
        return st.f()

    def _beats(self, f: float | None, f_exact: Callable[[], float], ref: float | None,
               ref_exact: Callable[[], float], margin: float) -> bool:
        """Whether ``f > ref + margin`` as the direct computation of f(P) decides it: the incremental values
        decide unless they are within GUARD of the threshold (or missing)."""
        if f is not None and ref is not None and abs(f - (ref + margin)) > GUARD:
            return f > ref + margin
        return f_exact() > ref_exact() + margin

    def _evaluate(self, removed: set[int], added: list[tuple[np.ndarray, int, float]]) -> float:
        """f(P) after removing themes ``removed`` and adding ``(centroid, size, cohesion)`` themes, without
        changing anything. O(K) thanks to the maintained nearest-neighbour similarities."""
        n = self.codes.n
        keep = self.codes.alive[:n].copy()
        gone = np.fromiter(removed, dtype=np.int64, count=len(removed))
        keep[gone] = False
        nn = self.nn_sim[:n].copy()
        for j in np.flatnonzero(keep & np.isin(self.nn_id[:n], gone)).tolist():
            sims = similarity(self.codes.codes[j], self.codes.codes[:n], self.bits)
            sims[~keep] = -np.inf
            sims[j] = -np.inf
            nn[j] = sims.max()
        sizes = self.sizes[:n][keep].astype(np.float64)
        coh = self.cohesion[:n][keep]
        if added:
            add_codes = np.array([c for c, _, _ in added], dtype=np.uint64).reshape(len(added), -1)
            cross = similarity(add_codes[:, None, :], self.codes.codes[:n][None, :, :], self.bits)
            cross[:, ~keep] = -np.inf
            nn = np.maximum(nn, cross.max(axis=0))
            nn_add = cross.max(axis=1)
            if len(added) > 1:
                among = similarity(add_codes[:, None, :], add_codes[None, :, :], self.bits)
                np.fill_diagonal(among, -np.inf)
                nn_add = np.maximum(nn_add, among.max(axis=1))
            sizes = np.concatenate([sizes, [s for _, s, _ in added]])
            coh = np.concatenate([coh, [c for _, _, c in added]])
            nn = np.concatenate([nn[keep], nn_add])
        else:
            nn = nn[keep]
        return f_score(sizes, coh, nn)

    # -- operations -----------------------------------------------------------------------------------------
    def attach(self, sid: int) -> int:
        """Place a new semantic: nearest theme centroid if similar enough, else a new theme; split on overflow."""
        code = self.code_of(sid)
        top, dist = self.codes.top(code, 1)
        if top.size and 1.0 - 2.0 * float(dist[0]) / self.bits >= self.attach_min:
            t = int(top[0])
            self._set_members(t, self.members[t] + [sid])
            self._after_change(t)
            if len(self.members[t]) > self.cap:
                self.split(t)
            return self.theme_of[sid]
        return self._new_theme([sid])

    def _nearest_theme(self, code: np.ndarray, snap, snap_slots: np.ndarray, changed: list[int]) -> tuple[int, int]:
        """(theme, distance) of the nearest live centroid: unchanged themes through the batch's native snapshot,
        themes changed since by a direct scan."""
        best_t, best_d = -1, 1 << 30
        skip = set(changed)
        if snap is not None:
            d, ids = snap.search(np.ascontiguousarray(code).view(np.uint8), 1 + len(changed))
            for dist, j in zip(d[0].tolist(), ids[0].tolist()):
                t = int(snap_slots[j]) if j >= 0 else -1
                if t >= 0 and t not in skip and self.codes.alive[t]:
                    best_t, best_d = t, dist
                    break
        if changed:
            ch = np.asarray(changed, dtype=np.int64)
            ch = ch[self.codes.alive[ch]]
            if ch.size:
                dd = hamming(code, self.codes.codes[ch])
                j = int(np.lexsort((ch, dd))[0])
                if dd[j] < best_d or (dd[j] == best_d and ch[j] < best_t):
                    best_t, best_d = int(ch[j]), int(dd[j])
        return best_t, best_d

    def attach_batch(self, sids: list[int]) -> None:
        """Attach new semantics in order; neighbour bookkeeping and splits run once for the whole batch."""
        dirty: list[int] = []
        snap, snap_slots = None, np.zeros(0, dtype=np.int64)
        live = self.live()
        if live.size > 256:  # a native snapshot of the centroids answers the nearest-theme queries
            from hippo.native import BinaryIndex

            snap = BinaryIndex(self.bits)
            snap.add(np.ascontiguousarray(self.codes.codes[live]).view(np.uint8).reshape(live.size, -1))
            snap_slots = live
        changed: list[int] = []
        for sid in sids:
            code = self.code_of(sid)
            if snap is not None:
                t, dist = self._nearest_theme(code, snap, snap_slots, changed)
            else:
                top, dd = self.codes.top(code, 1)
                t, dist = (int(top[0]), int(dd[0])) if top.size else (-1, 1 << 30)
            if t >= 0 and 1.0 - 2.0 * float(dist) / self.bits >= self.attach_min:
                self._set_members(t, self.members[t] + [sid])
            else:
                t = self.codes.append(np.zeros(self.codes.words, dtype=np.uint64))
                self.members.append([])
                self._grow()
                self._set_members(t, [sid])
                self.created.append(t)
            dirty.append(t)
            if t not in changed:
                changed.append(t)
        self._after_change_many(dirty)
        for t in dict.fromkeys(dirty):
            if self.codes.alive[t] and len(self.members[t]) > self.cap:
                self.split(t)

    def _two_means(self, codes: np.ndarray, k: int, rng: np.random.Generator | None) -> np.ndarray | None:
        """Hamming k-means with majority centroids; returns a label per member or None if degenerate."""
        n = codes.shape[0]
        if rng is None:  # farthest-first initialization
            mu0 = majority(codes, self.tie)
            first = int(np.argmax(-similarity(mu0, codes, self.bits)))
            seeds = [first]
            while len(seeds) < k:
                d = np.min([-similarity(codes[s], codes, self.bits) for s in seeds], axis=0)
                d[seeds] = -np.inf
                seeds.append(int(np.argmax(d)))
        else:
            seeds = rng.choice(n, size=k, replace=False).tolist()
        cents = codes[seeds].copy()
        labels = np.full(n, -1)
        for _ in range(12):
            sims = np.stack([similarity(c, codes, self.bits) for c in cents])
            new = np.argmax(sims, axis=0)
            if np.array_equal(new, labels):
                break
            labels = new
            for g in range(k):
                if not (labels == g).any():
                    return None
                cents[g] = majority(codes[labels == g], self.tie)
        if len(set(labels.tolist())) < k:
            return None
        return labels

    def split_candidates(self, t: int) -> list[list[list[int]]]:
        """Candidate partitions of theme ``t``'s members (each a list of groups of semantic ids)."""
        sids = self.members[t]
        codes = self._member_codes(sids)
        seen: set[tuple] = set()
        out = []
        trials = [(2, None)] + [(2, np.random.default_rng(1000 * t + i)) for i in range(1, self.split_trials)]
        if len(sids) >= 6:
            trials.append((3, None))
        for k, rng in trials:
            labels = self._two_means(codes, k, rng)
            if labels is None:
                continue
            groups = [[s for s, lab in zip(sids, labels.tolist()) if lab == g] for g in range(k)]
            key = tuple(sorted(tuple(sorted(g)) for g in groups))
            if key in seen:
                continue
            seen.add(key)
            out.append(groups)
        if not out:  # degenerate codes (all equal): split in order, halves
            half = len(sids) // 2
            out.append([sids[:half], sids[half:]])
        return out

    def split(self, t: int) -> None:
        """Replace an overcrowded theme by the candidate split that maximizes f(P)."""
        best, best_f, best_x = None, -math.inf, (lambda: -math.inf)
        for groups in self.split_candidates(t):
            added = []
            for g in groups:
                mu, coh = theme_stats(self._member_codes(g), self.bits, self.tie)
                added.append((mu, len(g), coh))
            f = self._evaluate_fast({t}, added)
            fx = _once(lambda added=added: self._evaluate({t}, added))
            if self._beats(f, fx, best_f, best_x, 0.0):
                best, best_f, best_x = groups, f, fx
        assert best is not None
        best = sorted(best, key=len, reverse=True)
        self._set_members(t, best[0])  # the largest part keeps the theme's id
        parts = [t]
        for g in best[1:]:
            u = self.codes.append(np.zeros(self.codes.words, dtype=np.uint64))
            self.members.append([])
            self._grow()
            self._set_members(u, g)
            self.created.append(u)
            parts.append(u)
        self._after_change_many(parts)
        self.splits += 1
        for u in parts:  # a batch may have overfilled a theme by more than one split can fix
            if len(self.members[u]) > self.cap:
                self.split(u)

    def consider_merge(self, t: int) -> int | None:
        """Merge tiny theme ``t`` into the neighbour that maximizes f(P), if that beats leaving it alone."""
        if not self.codes.alive[t] or len(self.members[t]) > self.tiny:
            return None
        size = len(self.members[t])
        top, _ = self.codes.top(self.codes.codes[t], self.merge_candidates + 1, exclude=t)
        best, best_f, best_x = None, self._score_fast(), _once(self.score)
        for u in top.tolist():
            if len(self.members[u]) + size > self.cap:
                continue
            merged = self.members[u] + self.members[t]
            mu, coh = theme_stats(self._member_codes(merged), self.bits, self.tie)
            added = [(mu, len(merged), coh)]
            f = self._evaluate_fast({t, u}, added)
            fx = _once(lambda u=u, added=added: self._evaluate({t, u}, added))
            if self._beats(f, fx, best_f, best_x, 1e-12):
                best, best_f, best_x = u, f, fx
        if best is None:
            return None
        moving = self.members[t]
        self.members[t] = []
        self.sizes[t] = 0
        self.codes.kill(t)
        self._after_remove(t)
        self._set_members(best, self.members[best] + moving)
        self._after_change(best)
        self.merges += 1
        return best

    def consider_move(self, sid: int, u: int) -> bool:
        """Move semantic ``sid`` from its theme to theme ``u`` if that raises f(P); whether it moved."""
        t = self.theme_of[sid]
        rest = [s for s in self.members[t] if s != sid]
        grown = self.members[u] + [sid]
        mu_t, coh_t = theme_stats(self._member_codes(rest), self.bits, self.tie)
        mu_u, coh_u = theme_stats(self._member_codes(grown), self.bits, self.tie)
        added = [(mu_t, len(rest), coh_t), (mu_u, len(grown), coh_u)]
        if not self._beats(self._evaluate_fast({t, u}, added), lambda: self._evaluate({t, u}, added),
                           self._score_fast(), self.score, 1e-12):
            return False
        self._set_members(t, rest)
        self._after_change(t)
        self._set_members(u, grown)
        self._after_change(u)
        return True

    def remove_semantic(self, sid: int) -> None:
        self.moved.discard(sid)  # a semantic that is gone is no longer one of those that changed theme
        t = self.theme_of.pop(sid, None)
        if t is None:
            return
        rest = [s for s in self.members[t] if s != sid]
        self.sizes[t] = len(rest)
        if rest:
            self.members[t] = rest
            mu, coh = theme_stats(self._member_codes(rest), self.bits, self.tie)
            self.codes.set(t, mu)
            self.cohesion[t] = coh
            self._after_change(t)
        else:
            self.members[t] = []
            self.codes.kill(t)
            self._after_remove(t)

    def refresh(self, t: int) -> None:
        """Recompute a theme's centroid after member codes changed."""
        if self.codes.alive[t] and self.members[t]:
            self._set_members(t, self.members[t])
            self._after_change(t)
