"""Oracle tests of the static and dynamic wavelet matrix against numpy / Python lists.

Widths 1, 7, 17 and 32; sizes crossing 64-bit words, 448/512-bit rank lines and the dynamic matrix's
segment and tail boundaries (tail = 2048 symbols).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from hippo import DynamicWaveletMatrix, WaveletMatrix

WIDTHS = [1, 7, 17, 32]
BOUNDARY_SIZES = [0, 1, 63, 64, 65, 447, 448, 449, 511, 512, 513, 2047, 2048, 2049, 4097]
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def symbols_for(bits: int, n: int, rng: np.random.Generator, alphabet: int | None = None) -> np.ndarray:
    """Skewed symbols: a small pool drawn often (so counts, selects and ties are non-trivial)."""
    hi = 1 << bits
    pool = rng.integers(0, hi, size=alphabet or rng.integers(1, 20), dtype=np.uint64).astype(np.uint32)
    take = rng.random(n) < 0.8
    out = rng.integers(0, hi, size=n, dtype=np.uint64).astype(np.uint32)
    out[take] = pool[rng.integers(0, pool.size, size=int(take.sum()))]
    return out


def build(kind: str, data: np.ndarray, bits: int, rng: np.random.Generator):
    if kind == "static":
        return WaveletMatrix(data, bits)
    d = DynamicWaveletMatrix(bits)
    i = 0
    while i < data.size:  # mix single appends and bulk extends of varied sizes
        step = int(rng.choice([1, 5, 300, 2100, 5000]))
        chunk = data[i : i + step]
        if step == 1:
            d.append(int(chunk[0]))
        else:
            d.extend(chunk)
        i += step
    return d


def check_all(obj, data: np.ndarray, bits: int, rng: np.random.Generator) -> None:
    n = data.size
    assert len(obj) == n
    assert np.array_equal(obj.access_range(0, n), data)
    assert np.array_equal(obj.access_range(), data)
    if n == 0:
        return
    pos = rng.integers(0, n, size=200)
    assert np.array_equal(obj.access_many(pos), data[pos])
    for p in pos[:20]:
        assert obj.access(int(p)) == int(data[p])
    a, b = sorted(rng.integers(0, n + 1, size=2).tolist())
    assert np.array_equal(obj.access_range(a, b), data[a:b])
    syms = np.concatenate([data[rng.integers(0, n, size=50)],
                           rng.integers(0, 1 << bits, size=10, dtype=np.uint64).astype(np.uint32)])
    rpos = rng.integers(0, n + 1, size=syms.size)
    want = np.array([np.count_nonzero(data[:p] == s) for s, p in zip(syms, rpos)], dtype=np.int64)
    got = obj.rank_many(syms, rpos)
    assert got.dtype == np.int64 and np.array_equal(got, want)
    for s, p, w in list(zip(syms, rpos, want))[:15]:
        assert obj.rank(int(s), int(p)) == int(w)
    counts = obj.count_many(syms, a, b)
    assert np.array_equal(counts, [np.count_nonzero(data[a:b] == s) for s in syms])
    for s in syms[:8]:
        assert obj.count(int(s), a, b) == int(np.count_nonzero(data[a:b] == s))
        where = np.flatnonzero(data == s)
        for k in sorted({1, len(where), max(1, len(where) // 2)}):
            if k <= len(where):
                assert obj.select(int(s), k) == int(where[k - 1])


@pytest.mark.parametrize("kind", ["static", "dynamic"])
@pytest.mark.parametrize("bits", WIDTHS)
def test_boundary_sizes(kind: str, bits: int) -> None:
    rng = np.random.default_rng(bits)
    for n in BOUNDARY_SIZES:
        data = symbols_for(bits, n, rng)
        check_all(build(kind, data, bits, rng), data, bits, rng)


@FAST
@given(bits=st.sampled_from(WIDTHS), n=st.integers(0, 5000), seed=st.integers(0, 2**32 - 1),
       kind=st.sampled_from(["static", "dynamic"]))
def test_oracle(bits: int, n: int, seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    data = symbols_for(bits, n, rng)
    check_all(build(kind, data, bits, rng), data, bits, rng)


@pytest.mark.parametrize("kind", ["static", "dynamic"])
@pytest.mark.parametrize("bits", [1, 2, 3])
def test_narrow_symbols_where_the_node_table_covers_every_level(kind: str, bits: int) -> None:
    """n * bits >= 2**(bits + 14): the node-start table reaches the bottom level, so whole-sequence ranks, counts
    and selects take every interval from it; long runs of the alphabet's two edge symbols."""
    rng = np.random.default_rng(bits + 40)
    n = 50000
    edges = np.array([0, (1 << bits) - 1], dtype=np.uint32)
    data = np.repeat(edges[rng.integers(0, 2, 200)], rng.multinomial(n, np.full(200, 1 / 200)))
    data[rng.integers(0, n, 500)] = rng.integers(0, 1 << bits, 500, dtype=np.uint64).astype(np.uint32)
    obj = build(kind, data, bits, rng)
    check_all(obj, data, bits, rng)
    syms = np.arange(1 << bits, dtype=np.uint32)
    full = np.full(syms.size, n, dtype=np.int64)
    want = np.array([np.count_nonzero(data == s) for s in syms], dtype=np.int64)
    assert np.array_equal(obj.rank_many(syms, full), want)
    assert np.array_equal(obj.count_many(syms), want)
    for s, w in zip(syms.tolist(), want.tolist()):
        assert obj.rank(s, n) == obj.count(s) == w
        where = np.flatnonzero(data == s)
        for k in {1, w // 3 + 1, w} if w else ():
            assert obj.select(s, k) == int(where[k - 1])


def brute_ball(data: np.ndarray, q: int, r: int, a: int, b: int) -> list[tuple[int, int]]:
    vals, cnt = np.unique(data[a:b], return_counts=True)
    dist = np.bitwise_count(np.bitwise_xor(vals, np.uint32(q)))
    keep = dist <= r
    return list(zip(vals[keep].tolist(), cnt[keep].tolist()))


@FAST
@given(bits=st.sampled_from([1, 7, 17, 32]), n=st.integers(0, 6000), seed=st.integers(0, 2**32 - 1),
       radius=st.integers(0, 6), kind=st.sampled_from(["static", "dynamic"]))
def test_hamming_ball_all_methods_agree_with_brute_force(bits: int, n: int, seed: int, radius: int,
                                                        kind: str) -> None:
    rng = np.random.default_rng(seed)
    data = symbols_for(bits, n, rng, alphabet=int(rng.integers(1, 300)))
    obj = build(kind, data, bits, rng)
    q = int(data[rng.integers(0, n)]) if n and rng.random() < 0.7 else int(rng.integers(0, 1 << bits))
    ranges = [(0, n)]
    if n:
        a = int(rng.integers(0, n))
        ranges.append((a, int(rng.integers(a, n + 1))))
    for a, b in ranges:
        want = brute_ball(data, q, radius, a, b)
        for method in ("auto", "branch", "table", "decode"):
            assert obj.hamming_ball(q, radius, a, b, method=method) == want, (method, a, b)


def test_hamming_ball_table_and_branch_paths_on_a_large_matrix() -> None:
    """Few distinct symbols over many positions: the distinct table exists and the cost model has a
    real choice; every method must agree, including with a radius wider than the symbols."""
    rng = np.random.default_rng(7)
    data = symbols_for(17, 60000, rng, alphabet=200)
    d = DynamicWaveletMatrix(17)
    d.extend(data)
    for q in [int(data[0]), 12345, 0]:
        for r in [0, 1, 3, 8, 17, 40]:
            want = brute_ball(data, q, min(r, 17), 0, 60000)
            for method in ("auto", "branch", "table", "decode"):
                assert d.hamming_ball(q, r, method=method) == want
    assert d.hamming_ball(int(data[5]), 2, 100, 100) == []


class DynamicMachine(RuleBasedStateMachine):
    """Interleaves appends and extends with every query; the reference is a Python list."""

    def __init__(self) -> None:
        super().__init__()
        self.bits = 7
        self.d = DynamicWaveletMatrix(self.bits)
        self.ref: list[int] = []

    @rule(x=st.integers(0, 127))
    def append(self, x: int) -> None:
        self.d.append(x)
        self.ref.append(x)

    @rule(xs=st.lists(st.integers(0, 127), max_size=50), big=st.integers(0, 3000), seed=st.integers(0, 99))
    def extend(self, xs: list[int], big: int, seed: int) -> None:
        extra = np.random.default_rng(seed).integers(0, 8, size=big if big > 2500 else 0).tolist()
        arr = np.asarray(xs + extra, dtype=np.uint32)
        self.d.extend(arr)
        self.ref.extend(arr.tolist())

    @precondition(lambda self: self.ref)
    @rule(data=st.data())
    def access(self, data: st.DataObject) -> None:
        i = data.draw(st.integers(0, len(self.ref) - 1))
        assert self.d.access(i) == self.ref[i]

    @rule(data=st.data())
    def rank_count_select(self, data: st.DataObject) -> None:
        n = len(self.ref)
        s = data.draw(st.integers(0, 127))
        i = data.draw(st.integers(0, n))
        assert self.d.rank(s, i) == self.ref[:i].count(s)
        a = data.draw(st.integers(0, n))
        b = data.draw(st.integers(a, n))
        assert self.d.count(s, a, b) == self.ref[a:b].count(s)
        total = self.ref.count(s)
        if total:
            k = data.draw(st.integers(1, total))
            want = [j for j, v in enumerate(self.ref) if v == s][k - 1]
            assert self.d.select(s, k) == want

    @rule(data=st.data())
    def hamming(self, data: st.DataObject) -> None:
        n = len(self.ref)
        q = data.draw(st.integers(0, 127))
        r = data.draw(st.integers(0, 3))
        a = data.draw(st.integers(0, n))
        b = data.draw(st.integers(a, n))
        want = brute_ball(np.asarray(self.ref, dtype=np.uint32), q, r, a, b)
        assert self.d.hamming_ball(q, r, a, b) == want
        assert self.d.hamming_ball(q, r, a, b, method="branch") == want

    @invariant()
    def length_and_tail(self) -> None:
        assert len(self.d) == len(self.ref)
        n = len(self.ref)
        tail = self.d.access_range(max(0, n - 70), n)
        assert tail.tolist() == self.ref[max(0, n - 70):]


TestDynamicMachine = DynamicMachine.TestCase
TestDynamicMachine.settings = settings(max_examples=30, stateful_step_count=30, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow])


def test_many_segments_and_serialization_round_trip() -> None:
    rng = np.random.default_rng(3)
    data = symbols_for(17, 50000, rng)
    d = DynamicWaveletMatrix(17)
    for i in range(0, data.size, 997):
        d.extend(data[i : i + 997])
    assert d.segments >= 2
    assert np.array_equal(d.access_range(), data)
    back = DynamicWaveletMatrix.from_bytes(d.to_bytes())
    assert back.bits == 17 and len(back) == data.size
    assert np.array_equal(back.access_range(), data)
    back.append(5)
    assert back.access(data.size) == 5
    w = WaveletMatrix(data, 17)
    w2 = WaveletMatrix.from_bytes(memoryview(w.to_bytes()))
    assert np.array_equal(w2.access_range(), data)
    assert w.nbytes > 0 and d.nbytes > 0


def test_space_per_symbol_is_within_target() -> None:
    rng = np.random.default_rng(11)
    n, bits = 200_000, 17
    data = rng.integers(0, 1 << bits, size=n, dtype=np.uint64).astype(np.uint32)
    d = DynamicWaveletMatrix(bits)
    d.extend(data)
    assert d.stream_bytes * 8 / (n * bits) <= 1.3
    assert d.nbytes * 8 / (n * bits) <= 1.3
    w = WaveletMatrix(data, bits)
    assert w.nbytes * 8 / (n * bits) <= 1.3
