"""C-core kernels against the peers a user would otherwise reach for, all measured in one run.

* Hamming top-k (k = 10): ``hippo.BinaryIndex.search`` vs faiss ``IndexBinaryFlat`` (one OpenMP thread) and a
  numpy ``bitwise_count`` scan, at 1e5 and 1e6 codes of 64 and 256 bits, one query and a batch of 100. The
  machine's single-core read bandwidth (``hippo.native.read_bandwidth`` over a 256 MB array, best of several)
  puts the 256-bit scan in proportion to the physical limit.
* Dynamic wavelet matrix over 1e6 symbols of 17 bits (uniform and Zipf): bulk ``extend``, ``append`` one call
  at a time, ``access_many``, ``rank_many``, ``select`` vs the PyPI ``wavelet-matrix`` package (its
  ``DynamicWaveletMatrix.insert`` at the end and its static ``WaveletMatrix`` per call), plus bytes per symbol.

Every result is checked against a numpy oracle (and the peers against each other) before anything is timed;
a mismatch is recorded under ``checks`` and fails the run. Times are min / median over repeats; ratios are
peer time / hippo time from the same run (> 1 means hippo is faster).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from hippo_bench._common import (
    fmt_ratio,
    fmt_time,
    last_level_cache_bytes,
    machine_info,
    markdown_table,
    require,
    time_calls,
)

K = 10
SYMBOL_BITS = 17


@dataclass(frozen=True)
class Sizes:
    hamming_n: tuple[int, ...] = (100_000, 1_000_000)
    hamming_bits: tuple[int, ...] = (64, 256)
    batch: int = 100
    bandwidth_bytes: int = 256 << 20
    bandwidth_vs_cache: bool = True  # grow the bandwidth / eviction buffer to 4x the last-level cache
    dwm_n: int = 1_000_000
    dwm_append_n: int = 200_000  # one Python call per symbol: a smaller stream keeps the run short
    dwm_query_m: int = 1_000_000  # batched queries
    dwm_call_m: int = 100_000  # one Python call per query (ours and the static peer)
    peer_insert_n: int = 100_000  # wavelet-matrix DynamicWaveletMatrix.insert: ~10 us each
    peer_dynamic_m: int = 10_000  # wavelet-matrix DynamicWaveletMatrix access/rank: ~20 us each
    stream_chunk: int = 997  # extend() chunk size for the "streamed" matrix (many segments + a tail)
    repeats: int = 7


QUICK = Sizes(
    hamming_n=(20_000,),
    hamming_bits=(64, 256),
    batch=8,
    bandwidth_bytes=16 << 20,
    bandwidth_vs_cache=False,
    dwm_n=30_000,
    dwm_append_n=5_000,
    dwm_query_m=20_000,
    dwm_call_m=2_000,
    peer_insert_n=3_000,
    peer_dynamic_m=1_000,
    stream_chunk=997,
    repeats=3,
)


class Checks:
    """Collects equality checks; the run fails when any is false."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def expect(self, name: str, ok: bool, detail: str = "") -> bool:
        self.items.append({"name": name, "ok": bool(ok), "detail": detail})
        return bool(ok)

    @property
    def all_ok(self) -> bool:
        return all(i["ok"] for i in self.items)

    def failures(self) -> list[dict[str, Any]]:
        return [i for i in self.items if not i["ok"]]


# ---------------------------------------------------------------------------------------- bandwidth


def bandwidth_buffer(min_bytes: int, vs_cache: bool = True) -> np.ndarray:
    """A buffer for bandwidth and cache eviction: ``min_bytes`` or (``vs_cache``) 4x the last-level cache,
    whichever is larger (some servers have LLCs of 260 MB, which would hold a 256 MB array)."""
    llc = (last_level_cache_bytes() or 0) if vs_cache else 0
    return np.ones(max(min_bytes, 4 * llc), dtype=np.uint8)  # written once: every page is mapped


def measure_read_bandwidth(buf: np.ndarray, repeats: int = 7) -> dict[str, Any]:
    """Best-of-``repeats`` single-core read bandwidth (bytes/s) of the C read loop over ``buf``."""
    from hippo import native as _native
    nbytes = int(buf.nbytes)
    fn = _native.read_bandwidth
    fn(buf)  # warm-up
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(buf)
        samples.append(time.perf_counter() - t0)
    best = min(samples)
    return {
        "bytes": nbytes,
        "last_level_cache_bytes": last_level_cache_bytes(),
        "best_seconds": best,
        "bytes_per_second": nbytes / best,
        "gb_per_second": nbytes / best / 1e9,
        "median_gb_per_second": nbytes / float(np.median(samples)) / 1e9,
    }


# ------------------------------------------------------------------------------------------ Hamming


def numpy_topk(codes64: np.ndarray, queries64: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference Hamming top-k: XOR + ``np.bitwise_count``; rows sorted by (distance, id).

    ``codes64`` is (n, words) uint64; a word-major copy (one contiguous column per word) is cheaper to scan.
    """
    return _numpy_topk_wordmajor(np.ascontiguousarray(codes64.T), queries64, k)


def _numpy_topk_wordmajor(cols: np.ndarray, queries64: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    words, n = cols.shape
    nq = queries64.shape[0]
    k_eff = min(k, n)
    out_d = np.empty((nq, k_eff), dtype=np.int32)
    out_i = np.empty((nq, k_eff), dtype=np.int64)
    dist = np.empty(n, dtype=np.int32)
    for j in range(nq):
        dist[:] = np.bitwise_count(np.bitwise_xor(cols[0], queries64[j, 0]))
        for w in range(1, words):
            dist += np.bitwise_count(np.bitwise_xor(cols[w], queries64[j, w]))
        kth = np.partition(dist, k_eff - 1)[k_eff - 1]
        cand = np.flatnonzero(dist <= kth)
        order = np.lexsort((cand, dist[cand]))[:k_eff]
        ids = cand[order]
        out_d[j] = dist[ids]
        out_i[j] = ids
    return out_d, out_i


def _true_distances(codes64: np.ndarray, queries64: np.ndarray, ids: np.ndarray) -> np.ndarray:
    out = np.empty(ids.shape, dtype=np.int32)
    for j in range(ids.shape[0]):
        out[j] = np.bitwise_count(np.bitwise_xor(codes64[ids[j]], queries64[j])).sum(axis=1)
    return out


def bench_hamming(n: int, bits: int, sizes: Sizes, rng: np.random.Generator, checks: Checks,
                  bandwidth: float | None, evict: Callable[[], Any] | None = None) -> list[dict[str, Any]]:
    """One database size and code width. Single queries are timed twice: warm (the codes may sit in the
    last-level cache after the previous call) and cold (``evict`` streams a buffer larger than the cache
    before every call), so the cold figure is what RAM bandwidth allows."""
    import hippo

    faiss = require("faiss", "the faiss IndexBinaryFlat peer")
    faiss.omp_set_num_threads(1)
    nb = bits // 8
    codes = rng.integers(0, 256, size=(n, nb), dtype=np.uint8)
    queries = rng.integers(0, 256, size=(sizes.batch, nb), dtype=np.uint8)
    codes64 = codes.view(np.uint64)
    queries64 = queries.view(np.uint64)
    cols = np.ascontiguousarray(codes64.T)  # the numpy scan's own layout, prepared once like an index

    ours = hippo.BinaryIndex(bits)
    ours.add(codes)
    peer = faiss.IndexBinaryFlat(bits)
    peer.add(codes)

    tag = f"hamming n={n} bits={bits}"
    ref_d, ref_i = _numpy_topk_wordmajor(cols, queries64, K)
    d, i = ours.search(queries, K)
    d, i = np.asarray(d), np.asarray(i)
    checks.expect(f"{tag}: hippo == numpy (distances and ids)",
                  d.shape == ref_d.shape and np.array_equal(d, ref_d) and np.array_equal(i, ref_i))
    d1, i1 = ours.search(queries[:1], K)
    checks.expect(f"{tag}: hippo single query == numpy",
                  np.array_equal(np.asarray(d1), ref_d[:1]) and np.array_equal(np.asarray(i1), ref_i[:1]))
    fd, fi = peer.search(queries, K)
    fd = np.asarray(fd, dtype=np.int32)
    checks.expect(f"{tag}: faiss distances == numpy", np.array_equal(fd, ref_d))
    checks.expect(f"{tag}: faiss ids at their reported distances",
                  bool(np.all(fi >= 0)) and np.array_equal(_true_distances(codes64, queries64, fi), fd))

    rows = []
    for nq in (1, sizes.batch):
        q = np.ascontiguousarray(queries[:nq])
        q64 = q.view(np.uint64)
        heavy = nq > 1 and n * bits >= 1_000_000 * 256
        t_ours = time_calls(lambda: ours.search(q, K), repeats=sizes.repeats * 3, max_seconds=3.0)
        t_faiss = time_calls(lambda: peer.search(q, K), repeats=sizes.repeats * 3, max_seconds=3.0)
        t_np = time_calls(lambda: _numpy_topk_wordmajor(cols, q64, K), repeats=3 if heavy else sizes.repeats,
                          min_repeats=1, warmup=0 if heavy else 1, max_seconds=4.0)
        scanned = n * nb * nq
        row: dict[str, Any] = {
            "n": n, "bits": bits, "queries": nq, "k": K,
            "hippo_s": t_ours, "faiss_s": t_faiss, "numpy_s": t_np,
            "speedup_vs_faiss": t_faiss["min"] / t_ours["min"],
            "speedup_vs_numpy": t_np["min"] / t_ours["min"],
            # A batch is blocked over the database, so bytes scanned per query overstate memory traffic.
            "hippo_gb_per_s": scanned / t_ours["min"] / 1e9,
            "faiss_gb_per_s": scanned / t_faiss["min"] / 1e9,
        }
        if nq == 1 and evict is not None:
            c_ours = time_calls(lambda: ours.search(q, K), repeats=sizes.repeats, setup=evict, max_seconds=10.0)
            c_faiss = time_calls(lambda: peer.search(q, K), repeats=sizes.repeats, setup=evict, max_seconds=10.0)
            row.update({
                "hippo_cold_s": c_ours, "faiss_cold_s": c_faiss,
                "speedup_vs_faiss_cold": c_faiss["min"] / c_ours["min"],
                "hippo_cold_gb_per_s": scanned / c_ours["min"] / 1e9,
                "faiss_cold_gb_per_s": scanned / c_faiss["min"] / 1e9,
            })
            if bandwidth:
                row["hippo_fraction_of_read_bandwidth"] = scanned / c_ours["min"] / bandwidth
                row["faiss_fraction_of_read_bandwidth"] = scanned / c_faiss["min"] / bandwidth
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------- wavelet matrix


def zipf_symbols(n: int, bits: int, rng: np.random.Generator, s: float = 1.0) -> np.ndarray:
    """``n`` symbols whose frequencies follow Zipf's law (rank r has weight r^-s) over all 2^bits values,
    the ranks mapped to symbols by a random permutation (so frequent symbols are not the small ones)."""
    vocab = 1 << bits
    weights = 1.0 / np.arange(1, vocab + 1, dtype=np.float64) ** s
    ranks = rng.choice(vocab, size=n, p=weights / weights.sum())
    return rng.permutation(vocab).astype(np.uint32)[ranks]


class Oracle:
    """rank / select ground truth from one stable sort: key = symbol * (n + 1) + position."""

    def __init__(self, data: np.ndarray) -> None:
        self.n = data.shape[0]
        order = np.argsort(data, kind="stable")
        self.sorted_pos = order.astype(np.int64)
        self.keys = data[order].astype(np.int64) * (self.n + 1) + self.sorted_pos
        counts = np.bincount(data, minlength=1 << SYMBOL_BITS).astype(np.int64)
        self.counts = counts
        self.starts = np.concatenate(([0], np.cumsum(counts)))

    def rank(self, symbols: np.ndarray, positions: np.ndarray) -> np.ndarray:
        s = symbols.astype(np.int64)
        return np.searchsorted(self.keys, s * (self.n + 1) + positions.astype(np.int64)) - self.starts[s]

    def select(self, symbols: np.ndarray, ks: np.ndarray) -> np.ndarray:
        return self.sorted_pos[self.starts[symbols.astype(np.int64)] + ks.astype(np.int64) - 1]


def _per(t: dict[str, float], m: int) -> dict[str, float]:
    return {"min": t["min"] / m, "median": t["median"] / m, "n": t["n"]}


def bench_dwm(dist: str, sizes: Sizes, rng: np.random.Generator, checks: Checks) -> dict[str, Any]:
    import hippo

    wm = require("wavelet_matrix", "the wavelet-matrix (PyPI) peer")
    n = sizes.dwm_n
    data = (rng.integers(0, 1 << SYMBOL_BITS, size=n, dtype=np.uint32) if dist == "uniform"
            else zipf_symbols(n, SYMBOL_BITS, rng))
    oracle = Oracle(data)
    tag = f"dwm {dist}"
    DWM = hippo.DynamicWaveletMatrix

    # Queries: random positions; rank symbols drawn from the data; select (symbol, k) with k <= count.
    m = sizes.dwm_query_m
    pos = rng.integers(0, n, size=m, dtype=np.int64)
    rank_pos = rng.integers(0, n + 1, size=m, dtype=np.int64)
    rank_sym = data[rng.integers(0, n, size=m)]
    mc = sizes.dwm_call_m
    sel_sym = data[rng.integers(0, n, size=mc)]
    sel_k = (rng.random(mc) * oracle.counts[sel_sym]).astype(np.int64) + 1
    want_access = data[pos]
    want_rank = oracle.rank(rank_sym, rank_pos)
    want_select = oracle.select(sel_sym, sel_k)

    # ----- correctness first
    full = DWM(SYMBOL_BITS)
    full.extend(data)
    checks.expect(f"{tag}: extend + access_range == data", np.array_equal(np.asarray(full.access_range(0, n)), data))
    streamed = DWM(SYMBOL_BITS)
    for s in range(0, n, sizes.stream_chunk):
        streamed.extend(data[s : s + sizes.stream_chunk])
    appended = DWM(SYMBOL_BITS)
    app_list = data[: sizes.dwm_append_n].tolist()
    for x in app_list:
        appended.append(x)
    checks.expect(f"{tag}: append x{len(app_list)} == data",
                  np.array_equal(np.asarray(appended.access_range(0, len(app_list))), data[: len(app_list)]))
    for label, d in (("one extend", full), ("streamed", streamed)):
        checks.expect(f"{tag} ({label}): len", len(d) == n)
        checks.expect(f"{tag} ({label}): access_many == data[pos]",
                      np.array_equal(np.asarray(d.access_many(pos)), want_access))
        checks.expect(f"{tag} ({label}): rank_many == oracle",
                      np.array_equal(np.asarray(d.rank_many(rank_sym, rank_pos)).astype(np.int64), want_rank))
        got_sel = np.array([d.select(int(a), int(b)) for a, b in zip(sel_sym[:1000], sel_k[:1000])], dtype=np.int64)
        checks.expect(f"{tag} ({label}): select == oracle", np.array_equal(got_sel, want_select[:1000]))

    peer_static = wm.WaveletMatrix(data.tolist())
    pc = min(mc, 2000)
    checks.expect(f"{tag}: wavelet-matrix static access/rank/select == oracle",
                  [peer_static.access(int(p)) for p in pos[:pc]] == want_access[:pc].tolist()
                  and [peer_static.rank(int(a), int(b)) for a, b in zip(rank_sym[:pc], rank_pos[:pc])]
                  == want_rank[:pc].tolist()
                  and [peer_static.select(int(a), int(b)) for a, b in zip(sel_sym[:pc], sel_k[:pc])]
                  == want_select[:pc].tolist())

    # ----- timing: hippo
    def do_extend() -> None:
        DWM(SYMBOL_BITS).extend(data)

    def do_append() -> None:
        d = DWM(SYMBOL_BITS)
        app = d.append
        for x in app_list:
            app(x)

    t = {}
    t["extend"] = _per(time_calls(do_extend, repeats=sizes.repeats), n)
    t["append"] = _per(time_calls(do_append, repeats=max(3, sizes.repeats // 2), max_seconds=5.0), len(app_list))
    for label, d in (("", full), ("_streamed", streamed)):
        t[f"access_many{label}"] = _per(time_calls(lambda d=d: d.access_many(pos), repeats=sizes.repeats), m)
        t[f"rank_many{label}"] = _per(time_calls(lambda d=d: d.rank_many(rank_sym, rank_pos),
                                                  repeats=sizes.repeats), m)
    pos_l, rs_l, rp_l = pos[:mc].tolist(), rank_sym[:mc].tolist(), rank_pos[:mc].tolist()
    ss_l, sk_l = sel_sym.tolist(), sel_k.tolist()

    def calls(fn: Callable[..., Any], *cols: list[int]) -> Callable[[], None]:
        def run() -> None:
            for args in zip(*cols):
                fn(*args)
        return run

    t["access_call"] = _per(time_calls(calls(full.access, pos_l), repeats=sizes.repeats), mc)
    t["rank_call"] = _per(time_calls(calls(full.rank, rs_l, rp_l), repeats=sizes.repeats), mc)
    t["select_call"] = _per(time_calls(calls(full.select, ss_l, sk_l), repeats=sizes.repeats), mc)
    t["select_call_streamed"] = _per(time_calls(calls(streamed.select, ss_l, sk_l), repeats=sizes.repeats), mc)

    # ----- timing: wavelet-matrix (PyPI)
    p = {}
    data_list = data.tolist()
    t0 = time.perf_counter()
    wm.WaveletMatrix(data_list)
    el = time.perf_counter() - t0
    p["static_build"] = {"min": el / n, "median": el / n, "n": 1}
    p["static_access_call"] = _per(time_calls(calls(peer_static.access, pos_l), repeats=sizes.repeats), mc)
    p["static_rank_call"] = _per(time_calls(calls(peer_static.rank, rs_l, rp_l), repeats=sizes.repeats), mc)
    p["static_select_call"] = _per(time_calls(calls(peer_static.select, ss_l, sk_l), repeats=sizes.repeats), mc)

    ni = sizes.peer_insert_n
    ins_list = data_list[:ni]

    def peer_insert() -> Any:
        d = wm.DynamicWaveletMatrix([], max_bit=SYMBOL_BITS)
        ins = d.insert
        for j, x in enumerate(ins_list):
            ins(j, x)
        return d

    got = peer_insert()
    checks.expect(f"{tag}: wavelet-matrix dynamic insert(end) == data", got.values() == ins_list)
    p["dynamic_insert_end_from_empty"] = _per(time_calls(peer_insert, repeats=3, min_repeats=1, warmup=0,
                                                         max_seconds=5.0), ni)
    # The same number of inserts at the end of a matrix that already holds n - ni symbols: the per-symbol
    # cost at the full size n, without paying for n single inserts.
    grown = wm.DynamicWaveletMatrix(data_list[: n - ni], max_bit=SYMBOL_BITS)
    tail = data_list[n - ni :]
    t0 = time.perf_counter()
    ins = grown.insert
    for j, x in enumerate(tail, start=n - ni):
        ins(j, x)
    el = time.perf_counter() - t0
    p["dynamic_insert_end"] = {"min": el / ni, "median": el / ni, "n": 1}
    checks.expect(f"{tag}: wavelet-matrix dynamic insert(end) up to n == data",
                  len(grown) == n and [grown.access(j) for j in range(n - 100, n)] == data_list[n - 100 :])
    del grown
    t0 = time.perf_counter()
    peer_dyn = wm.DynamicWaveletMatrix(data_list, max_bit=SYMBOL_BITS)
    el = time.perf_counter() - t0
    p["dynamic_build"] = {"min": el / n, "median": el / n, "n": 1}
    md = sizes.peer_dynamic_m
    checks.expect(f"{tag}: wavelet-matrix dynamic access/rank == oracle",
                  [peer_dyn.access(x) for x in pos_l[:md]] == want_access[:md].tolist()
                  and [peer_dyn.rank(a, b) for a, b in zip(rs_l[:md], rp_l[:md])] == want_rank[:md].tolist())
    p["dynamic_access_call"] = _per(time_calls(calls(peer_dyn.access, pos_l[:md]), repeats=3, min_repeats=1), md)
    p["dynamic_rank_call"] = _per(time_calls(calls(peer_dyn.rank, rs_l[:md], rp_l[:md]), repeats=3, min_repeats=1), md)
    p["dynamic_select_call"] = _per(time_calls(calls(peer_dyn.select, ss_l[:md], sk_l[:md]), repeats=3,
                                               min_repeats=1), md)

    nbytes = int(full.nbytes)
    space: dict[str, Any] = {
        "nbytes": nbytes,
        "bytes_per_symbol": nbytes / n,
        "bits_per_symbol": nbytes * 8 / n,
        "ratio_to_raw_bits": nbytes * 8 / (n * SYMBOL_BITS),
        "streamed_bytes_per_symbol": int(streamed.nbytes) / n,
        "streamed_segments": getattr(streamed, "segments", None),
    }
    for attr in ("stream_bytes", "stream_nbytes"):
        v = getattr(full, attr, None)
        if v is not None:
            v = v() if callable(v) else v
            space["stream_bytes_per_symbol"] = int(v) / n
            space["stream_ratio_to_raw_bits"] = int(v) * 8 / (n * SYMBOL_BITS)
            break
    try:
        space["serialized_bytes_per_symbol"] = len(full.to_bytes()) / n
    except Exception:  # serialization size is informative only
        pass

    def ratio(peer_key: str, ours_key: str) -> float:
        return p[peer_key]["min"] / t[ours_key]["min"]

    comparisons = [
        # (operation, hippo key, peer key, peer description)
        ("bulk extend (per symbol)", "extend", "dynamic_insert_end", "DynamicWaveletMatrix.insert(end) near n"),
        ("append, 1 call/symbol", "append", "dynamic_insert_end", "DynamicWaveletMatrix.insert(end) near n"),
        ("bulk extend (per symbol)", "extend", "dynamic_insert_end_from_empty",
         "DynamicWaveletMatrix.insert(end) from empty"),
        ("bulk extend (per symbol)", "extend", "static_build", "WaveletMatrix(data) build"),
        ("access_many (per element)", "access_many", "static_access_call", "WaveletMatrix.access"),
        ("access_many, streamed", "access_many_streamed", "static_access_call", "WaveletMatrix.access"),
        ("access, 1 call", "access_call", "static_access_call", "WaveletMatrix.access"),
        ("access_many (per element)", "access_many", "dynamic_access_call", "DynamicWaveletMatrix.access"),
        ("rank_many (per element)", "rank_many", "static_rank_call", "WaveletMatrix.rank"),
        ("rank_many, streamed", "rank_many_streamed", "static_rank_call", "WaveletMatrix.rank"),
        ("rank, 1 call", "rank_call", "static_rank_call", "WaveletMatrix.rank"),
        ("rank_many (per element)", "rank_many", "dynamic_rank_call", "DynamicWaveletMatrix.rank"),
        ("select, 1 call", "select_call", "static_select_call", "WaveletMatrix.select"),
        ("select, 1 call, streamed", "select_call_streamed", "static_select_call", "WaveletMatrix.select"),
        ("select, 1 call", "select_call", "dynamic_select_call", "DynamicWaveletMatrix.select"),
    ]
    rows = [
        {"op": op, "hippo_key": hk, "peer_key": pk, "peer": desc, "hippo_s": t[hk]["min"],
         "hippo_median_s": t[hk]["median"], "peer_s": p[pk]["min"], "peer_median_s": p[pk]["median"],
         "speedup": ratio(pk, hk)}
        for op, hk, pk, desc in comparisons
    ]
    return {
        "distribution": dist,
        "n": n,
        "bits": SYMBOL_BITS,
        "distinct_symbols": int(np.count_nonzero(oracle.counts)),
        "append_n": len(app_list),
        "query_m": m,
        "call_m": mc,
        "peer_insert_n": ni,
        "peer_dynamic_m": md,
        "streamed_chunk": sizes.stream_chunk,
        "hippo": t,
        "peer": p,
        "space": space,
        "rows": rows,
    }


# -------------------------------------------------------------------------------------------- run


def _targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []

    def add(name: str, value: float | None, goal: float, higher_is_better: bool = True) -> None:
        ok = None if value is None else (value >= goal if higher_is_better else value <= goal)
        out.append({"target": name, "value": value, "goal": goal, "met": ok})

    for r in result["hamming"]:
        if r["queries"] == 1 and r["n"] == 1_000_000 and r["bits"] == 64:
            add("hamming 1e6x64 1q: speedup vs faiss (warm)", r["speedup_vs_faiss"], 4.0)
            add("hamming 1e6x64 1q: speedup vs faiss (cold)", r.get("speedup_vs_faiss_cold"), 4.0)
        if r["queries"] == 1 and r["n"] == 1_000_000 and r["bits"] == 256:
            add("hamming 1e6x256 1q: speedup vs faiss (warm)", r["speedup_vs_faiss"], 1.2)
            add("hamming 1e6x256 1q: speedup vs faiss (cold)", r.get("speedup_vs_faiss_cold"), 1.2)
            add("hamming 1e6x256 1q: cold scan / read bandwidth", r.get("hippo_fraction_of_read_bandwidth"), 0.8)
    for d in result["dwm"]:
        by = {(row["hippo_key"], row["peer_key"]): row["speedup"] for row in d["rows"]}
        dist = d["distribution"]
        add(f"dwm {dist}: extend vs DynamicWaveletMatrix.insert(end)", by[("extend", "dynamic_insert_end")], 50.0)
        add(f"dwm {dist}: access_many vs static access", by[("access_many", "static_access_call")], 5.0)
        add(f"dwm {dist}: rank_many vs static rank", by[("rank_many", "static_rank_call")], 5.0)
        sp = d["space"]
        add(f"dwm {dist}: space / raw bits", sp.get("stream_ratio_to_raw_bits", sp["ratio_to_raw_bits"]), 1.3,
            higher_is_better=False)
    return out


def render_markdown(result: dict[str, Any]) -> str:
    parts = ["## hippo bench kernels", ""]
    m = result["machine"]
    bw = result.get("read_bandwidth") or {}
    parts.append(f"{m.get('cpu', '')}, {m.get('cpus')} CPUs; active popcount kernel: "
                 f"`{result.get('active_kernel')}`; single-core read bandwidth "
                 f"{bw.get('gb_per_second', math.nan):.2f} GB/s (best of {bw.get('repeats', '?')} over "
                 f"{bw.get('bytes', 0) >> 20} MB). Times are the minimum over repeats; ratio = peer / hippo.")
    parts += ["", "### Hamming top-10 (faiss IndexBinaryFlat with 1 thread)", "",
              "Warm: repeated calls, the codes may stay in the last-level cache. Cold: a buffer larger than the "
              "cache is read before every call, so the codes come from RAM; GB/s and the share of the read "
              "bandwidth are for cold single queries.", ""]
    rows = []
    for r in result["hamming"]:
        frac = r.get("hippo_fraction_of_read_bandwidth")
        cold = "hippo_cold_s" in r
        rows.append([
            f"{r['n']:.0e}".replace("e+0", "e"), r["bits"], r["queries"],
            fmt_time(r["hippo_s"]["min"]), fmt_time(r["faiss_s"]["min"]), fmt_time(r["numpy_s"]["min"]),
            fmt_ratio(r["speedup_vs_faiss"]), fmt_ratio(r["speedup_vs_numpy"]),
            fmt_time(r["hippo_cold_s"]["min"]) if cold else "-", fmt_time(r["faiss_cold_s"]["min"]) if cold else "-",
            fmt_ratio(r.get("speedup_vs_faiss_cold")),
            f"{r['hippo_cold_gb_per_s']:.2f}" if cold else "-",
            f"{frac * 100:.0f}%" if frac is not None else "-",
        ])
    parts.append(markdown_table(["codes", "bits", "queries", "hippo warm", "faiss warm", "numpy", "vs faiss",
                                 "vs numpy", "hippo cold", "faiss cold", "vs faiss cold", "hippo cold GB/s",
                                 "of read bw"], rows))
    for d in result["dwm"]:
        parts += ["", f"### Dynamic wavelet matrix, {d['n']:,} symbols x {d['bits']} bits, {d['distribution']} "
                      f"({d['distinct_symbols']:,} distinct)", ""]
        rows = [[r["op"], fmt_time(r["hippo_s"]), r["peer"], fmt_time(r["peer_s"]), fmt_ratio(r["speedup"])]
                for r in d["rows"]]
        parts.append(markdown_table(["hippo operation", "hippo per op", "wavelet-matrix (PyPI)", "peer per op",
                                     "speedup"], rows))
        sp = d["space"]
        line = (f"\nSpace: {sp['bytes_per_symbol']:.3f} bytes/symbol = {sp['bits_per_symbol']:.2f} bits "
                f"({sp['ratio_to_raw_bits']:.3f}x the raw {d['bits']} bits) after one extend; "
                f"{sp['streamed_bytes_per_symbol']:.3f} bytes/symbol when streamed in chunks of {d['streamed_chunk']}")
        if "stream_ratio_to_raw_bits" in sp:
            line += f"; stored stream alone {sp['stream_ratio_to_raw_bits']:.3f}x raw"
        if "serialized_bytes_per_symbol" in sp:
            line += f"; serialized {sp['serialized_bytes_per_symbol']:.3f} bytes/symbol"
        parts.append(line + ".")
        parts.append(f"Sizes: append {d['append_n']:,} calls; batched queries {d['query_m']:,}; per-call queries "
                     f"{d['call_m']:,}; peer insert(end) {d['peer_insert_n']:,} calls (from empty, and from "
                     f"{d['n'] - d['peer_insert_n']:,} to {d['n']:,} symbols); peer dynamic queries "
                     f"{d['peer_dynamic_m']:,}.")
    parts += ["", "### Targets", ""]
    parts.append(markdown_table(
        ["target", "measured", "goal", "met"],
        [[t["target"], "-" if t["value"] is None else f"{t['value']:.3g}", t["goal"],
          {True: "yes", False: "NO", None: "-"}[t["met"]]] for t in result["targets"]]))
    checks = result["checks"]
    parts += ["", f"Equality checks: {checks['passed']}/{checks['total']} passed"
              + ("" if checks["all_passed"] else f"; FAILED: {[f['name'] for f in checks['failures']]}")]
    return "\n".join(parts) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=20240601, help="random seed for codes and symbols")
    p.add_argument("--skip-hamming", action="store_true", help="only the wavelet-matrix part")
    p.add_argument("--skip-dwm", action="store_true", help="only the Hamming part")


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    require("faiss", "the faiss IndexBinaryFlat peer")
    require("wavelet_matrix", "the wavelet-matrix (PyPI) peer")
    import hippo
    from hippo import native as _native
    sizes = QUICK if args.quick else Sizes()
    rng = np.random.default_rng(args.seed)
    checks = Checks()

    def log(msg: str) -> None:
        print(msg, flush=True)

    kernel = _native.active_kernel()
    big = bandwidth_buffer(sizes.bandwidth_bytes, sizes.bandwidth_vs_cache)
    bw = measure_read_bandwidth(big, repeats=sizes.repeats)
    bw["repeats"] = sizes.repeats

    def evict() -> None:
        _native.read_bandwidth(big)

    log(f"read bandwidth: {bw['gb_per_second']:.2f} GB/s; kernel {kernel}")
    hamming: list[dict[str, Any]] = []
    if not args.skip_hamming:
        for n in sizes.hamming_n:
            for bits in sizes.hamming_bits:
                hamming += bench_hamming(n, bits, sizes, rng, checks, bw["bytes_per_second"], evict)
                log(f"hamming n={n} bits={bits} done")
    del big
    dwm: list[dict[str, Any]] = []
    if not args.skip_dwm:
        for dist in ("uniform", "zipf"):
            dwm.append(bench_dwm(dist, sizes, rng, checks))
            log(f"dwm {dist} done")
    result: dict[str, Any] = {
        "benchmark": "kernels",
        "quick": bool(args.quick),
        "sizes": asdict(sizes),
        "machine": machine_info(),
        "hippo_version": getattr(hippo, "__version__", None),
        "active_kernel": kernel,
        "read_bandwidth": bw,
        "hamming": hamming,
        "dwm": dwm,
    }
    result["targets"] = _targets(result)
    result["checks"] = {
        "all_passed": checks.all_ok,
        "passed": sum(1 for c in checks.items if c["ok"]),
        "total": len(checks.items),
        "failures": checks.failures(),
        "items": checks.items,
    }
    return result, render_markdown(result)
