"""Random-indexing signatures: determinism and hand-checkable properties (seed paper §3.3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo import InvalidInput
from hippo.native import ri_signatures

P = dict(seed=42, dim=512, nnz=8, window=2, self_weight=4, top_m=12, sig_bits=32)


def test_deterministic_and_typed() -> None:
    tok = np.random.default_rng(0).integers(0, 5000, size=3000).astype(np.uint32)
    a = ri_signatures(tok, **P)
    b = ri_signatures(tok.tolist(), **P)
    assert a.dtype == np.uint32 and a.shape == tok.shape
    assert np.array_equal(a, b)


def test_identical_contexts_identical_signatures() -> None:
    # the same 5-token context (window 2) appears twice, far apart
    tok = np.array([1, 2, 3, 4, 5] + [9] * 7 + [1, 2, 3, 4, 5], dtype=np.uint32)
    s = ri_signatures(tok, **P)
    assert s[2] == s[14]  # centre of each copy: identical windows
    assert s[7] == s[8] == s[9]  # inside the run of 9s: identical windows
    assert s[2] != s[8]


def test_seeds_differ_and_width_is_respected() -> None:
    tok = np.arange(200, dtype=np.uint32)
    a = ri_signatures(tok, **P)
    b = ri_signatures(tok, **{**P, "seed": 43})
    assert np.mean(a != b) > 0.9
    narrow = ri_signatures(tok, **{**P, "sig_bits": 9})
    assert int(narrow.max()) < (1 << 9)


def test_shared_context_gives_small_hamming_distance() -> None:
    rng = np.random.default_rng(3)
    tok = rng.integers(0, 1000, size=400).astype(np.uint32)
    other = tok.copy()
    other[::7] = rng.integers(1000, 2000, size=other[::7].size)  # change a few neighbours
    s, t = ri_signatures(tok, **P), ri_signatures(other, **P)
    unchanged = np.ones(tok.size, dtype=bool)
    unchanged[::7] = False
    near = np.bitwise_count(s[unchanged] ^ t[unchanged]).mean()
    rand = np.bitwise_count(s ^ np.roll(s, 13)).mean()
    assert near < rand / 2


def test_segment_boundaries_are_respected() -> None:
    rng = np.random.default_rng(4)
    a = rng.integers(0, 100, size=50).astype(np.uint32)
    b = rng.integers(0, 100, size=30).astype(np.uint32)
    c = rng.integers(0, 100, size=30).astype(np.uint32)
    joined = ri_signatures(np.concatenate([a, b]), **P, segment_ends=[50, 80])
    assert np.array_equal(joined[:50], ri_signatures(a, **P))
    assert np.array_equal(joined[50:], ri_signatures(b, **P))
    # the last tokens of a segment do not see the next segment's tokens
    other = ri_signatures(np.concatenate([a, c]), **P, segment_ends=np.array([50, 80], dtype=np.uint64))
    assert np.array_equal(other[:50], joined[:50])
    # without boundaries they would
    flat = ri_signatures(np.concatenate([a, b]), **P)
    assert not np.array_equal(flat[48:50], joined[48:50]) or not np.array_equal(flat[50:52], joined[50:52])
    single = ri_signatures(a, **P, segment_ends=[50])
    assert np.array_equal(single, ri_signatures(a, **P))


def test_empty_input() -> None:
    assert ri_signatures(np.zeros(0, dtype=np.uint32), **P).size == 0
    assert ri_signatures(np.zeros(0, dtype=np.uint32), **P, segment_ends=[]).size == 0


@pytest.mark.parametrize("bad", [
    {"nnz": 7}, {"nnz": 0}, {"dim": 1}, {"sig_bits": 0}, {"sig_bits": 33}, {"top_m": 0}, {"top_m": 513},
    {"window": -1}, {"self_weight": -2}, {"seed": -1}, {"dim": 2.5},
])
def test_bad_parameters(bad: dict) -> None:
    with pytest.raises(InvalidInput) as err:
        ri_signatures(np.arange(10, dtype=np.uint32), **{**P, **bad})
    assert next(iter(bad)) in str(err.value)


@pytest.mark.parametrize("ends", [[5], [0, 10], [5, 5, 10], [11], [6, 4, 10]])
def test_bad_segment_ends(ends: list[int]) -> None:
    with pytest.raises(InvalidInput, match="segment_ends"):
        ri_signatures(np.arange(10, dtype=np.uint32), **P, segment_ends=ends)


def test_bad_tokens() -> None:
    with pytest.raises(InvalidInput, match="tokens"):
        ri_signatures(np.arange(10, dtype=np.float64), **P)
    with pytest.raises(InvalidInput, match="tokens"):
        ri_signatures(np.arange(20, dtype=np.uint32)[::2], **P)


# ---- a plain Python reading of the contract in hippo_core.h / ri.c, position by position ----------------------
_M64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _base(seed: int, token: int, dim: int, nnz: int) -> list[int]:
    """nnz distinct indices of base(token): the first half +1, the rest -1."""
    key = _splitmix64(seed ^ _splitmix64((token * 0xD1B54A32D192ED03 + 1) & _M64))
    idx: list[int] = []
    ctr = 0
    while len(idx) < nnz:
        ctr += 1
        cand = ((_splitmix64((key + ctr) & _M64) >> 32) * dim) >> 32
        if cand not in idx:
            idx.append(cand)
    return idx


def reference_signatures(tokens: list[int], *, seed: int, dim: int, nnz: int, window: int, self_weight: int,
                         top_m: int, sig_bits: int, segment_ends: list[int] | None = None) -> np.ndarray:
    rseed = _splitmix64(seed ^ 0x5DEECE66D)
    planes = [_splitmix64((rseed + i) & _M64) & 0xFFFFFFFF for i in range(dim)]  # bit b set: R(i, b) = +1
    ends = segment_ends if segment_ends is not None else ([len(tokens)] if tokens else [])
    out, start = [], 0
    for end in ends:
        for i in range(start, end):
            ctx: dict[int, int] = {}
            for j in range(max(start, i - window), min(end, i + window + 1)):
                weight = self_weight if j == i else 1
                for slot, ix in enumerate(_base(seed, tokens[j], dim, nnz)):
                    ctx[ix] = ctx.get(ix, 0) + (weight if slot < nnz // 2 else -weight)
            kept = sorted(((ix, v) for ix, v in ctx.items() if v), key=lambda p: (-abs(p[1]), p[0]))[:top_m]
            sig = 0
            for b in range(sig_bits):
                if sum(v if planes[ix] >> b & 1 else -v for ix, v in kept) > 0:
                    sig |= 1 << b
            out.append(sig)
        start = end
    return np.asarray(out, dtype=np.uint32)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**64 - 1), dim=st.sampled_from([2, 3, 8, 65, 300]), half_nnz=st.integers(1, 8),
       window=st.sampled_from([0, 1, 2, 7]), self_weight=st.sampled_from([0, 1, 4, 65536]),
       top_m=st.integers(1, 300), sig_bits=st.sampled_from([1, 13, 32]),
       tokens=st.lists(st.sampled_from([0, 1, 2, 7, 2**32 - 1]) | st.integers(0, 2**32 - 1), max_size=40),
       data=st.data())
def test_signatures_equal_the_reference(seed, dim, half_nnz, window, self_weight, top_m, sig_bits, tokens,
                                        data) -> None:
    """Every kept component, tie to the lower index, segment boundary and hyperplane bit, against a plain
    reading of the contract (few distinct tokens and tiny dims make ties and cancellations common)."""
    p = dict(seed=seed, dim=dim, nnz=min(2 * half_nnz, dim - dim % 2), window=window, self_weight=self_weight,
             top_m=min(top_m, dim), sig_bits=sig_bits)
    ends = None
    if tokens and data.draw(st.booleans()):
        ends = sorted(set(data.draw(st.lists(st.integers(1, len(tokens)), max_size=4))) | {len(tokens)})
    got = ri_signatures(np.asarray(tokens, dtype=np.uint32), segment_ends=ends, **p)
    assert np.array_equal(got, reference_signatures(tokens, segment_ends=ends, **p))
