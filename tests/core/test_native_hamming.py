"""BinaryIndex against a numpy ``bitwise_count`` reference, on the dispatched and the portable kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo import BinaryIndex
from hippo import native as _native

KERNELS = _native.available_kernels()
FAST = settings(max_examples=20, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(params=KERNELS)
def kernel(request):
    previous = _native.active_kernel()
    _native.set_kernel(request.param)
    yield request.param
    _native.set_kernel(previous)


def tied_codes(rng: np.random.Generator, n: int, nb: int) -> np.ndarray:
    """Codes near one base code with few flipped bits: many equal distances (ties)."""
    base = rng.integers(0, 256, size=nb, dtype=np.uint8)
    codes = np.tile(base, (n, 1))
    for i in range(n):
        for _ in range(int(rng.integers(0, 5))):
            j = int(rng.integers(0, nb * 8))
            codes[i, j // 8] ^= np.uint8(1 << (j % 8))
    return codes


def reference(codes: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.bitwise_count(np.bitwise_xor(codes, q[None, :])).sum(axis=1).astype(np.int64)


def ref_topk(codes: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``min(k, n)`` nearest codes of each query, by (distance, id)."""
    k = min(k, codes.shape[0])
    d_out = np.full((queries.shape[0], k), -1, dtype=np.int32)
    i_out = np.full((queries.shape[0], k), -1, dtype=np.int64)
    for j, q in enumerate(queries):
        d = reference(codes, q)
        order = np.lexsort((np.arange(d.size), d))[:k]  # by distance, then id
        d_out[j, : order.size] = d[order]
        i_out[j, : order.size] = order
    return d_out, i_out


@FAST
@given(bits=st.sampled_from([64, 128, 192, 256, 512, 1024]), n=st.integers(0, 1500),
       k=st.integers(1, 40), nq=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_topk_and_radius_match_numpy(kernel: str, bits: int, n: int, k: int, nq: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    nb = bits // 8
    codes = tied_codes(rng, n, nb) if rng.random() < 0.7 else rng.integers(0, 256, (n, nb), dtype=np.uint8)
    ix = BinaryIndex(bits)
    half = n // 2
    assert ix.add(codes[:half]).tolist() == list(range(half))
    assert ix.add(codes[half:]).tolist() == list(range(half, n))
    assert len(ix) == n
    queries = codes[rng.integers(0, n, size=nq)] if n else rng.integers(0, 256, (nq, nb), dtype=np.uint8)
    queries = np.ascontiguousarray(queries)
    d, i = ix.search(queries, k)
    rd, ri = ref_topk(codes, queries, k)
    assert d.dtype == np.int32 and i.dtype == np.int64 and d.shape == (nq, min(k, n))
    assert np.array_equal(d, rd) and np.array_equal(i, ri)
    d1, i1 = ix.search(queries[0], k)  # a single 1-D query
    assert np.array_equal(d1, rd[:1]) and np.array_equal(i1, ri[:1])
    for r in (0, 2, 7, bits):
        dist, ids = ix.radius_search(queries[0], r)
        ref = reference(codes, queries[0]) if n else np.zeros(0, dtype=np.int64)
        order = np.lexsort((np.arange(ref.size), ref))
        order = order[ref[order] <= r]
        assert np.array_equal(ids, order) and np.array_equal(dist, ref[order])
    if n:
        pick = rng.integers(0, n, size=5)
        assert np.array_equal(ix.get(pick), codes[pick])


def test_large_scan_crosses_blocks(kernel: str) -> None:
    """Enough codes to cross the batch blocking and the 32-code unrolled steps, with ties at the k-th."""
    rng = np.random.default_rng(5)
    for bits in (64, 256):
        nb = bits // 8
        codes = tied_codes(rng, 40000, nb)
        ix = BinaryIndex(bits)
        ix.add(codes)
        queries = np.ascontiguousarray(codes[[3, 17, 39999]])
        d, i = ix.search(queries, 25)
        rd, ri = ref_topk(codes, queries, 25)
        assert np.array_equal(d, rd) and np.array_equal(i, ri)


def test_k_larger_than_the_index_returns_every_code() -> None:
    ix = BinaryIndex(64)
    d, i = ix.search(np.zeros((2, 8), dtype=np.uint8), 3)
    assert d.shape == i.shape == (2, 0)
    ix.add(np.zeros((1, 8), dtype=np.uint8))
    d, i = ix.search(np.zeros((1, 8), dtype=np.uint8), 3)
    assert d.tolist() == [[0]] and i.tolist() == [[0]]


@pytest.mark.parametrize("k", [2**31, 2**62])
def test_a_huge_k_is_answered_as_k_equal_to_the_index_size(k) -> None:
    """A huge ``k`` returns what ``k = n`` returns; before, ``k = 2**31`` allocated and wrote 24 GiB of padding."""
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 256, size=(300, 16), dtype=np.uint8)
    ix = BinaryIndex(128)
    ix.add(codes)
    queries = np.ascontiguousarray(codes[[0, 7, 299]])
    d, i = ix.search(queries, k)
    rd, ri = ref_topk(codes, queries, 300)
    assert np.array_equal(d, rd) and np.array_equal(i, ri)
    dn, i_n = ix.search(queries, 300)
    assert np.array_equal(d, dn) and np.array_equal(i, i_n)


def test_kernel_control() -> None:
    assert _native.active_kernel() in KERNELS
    before = _native.active_kernel()
    with _native.force_portable():
        assert _native.active_kernel() == "portable"
    assert _native.active_kernel() == before


def test_serialization_round_trip() -> None:
    rng = np.random.default_rng(9)
    codes = rng.integers(0, 256, (300, 32), dtype=np.uint8)
    ix = BinaryIndex(256)
    ix.add(codes)
    back = BinaryIndex.from_bytes(ix.to_bytes())
    assert back.bits == 256 and len(back) == 300
    assert np.array_equal(back.get(np.arange(300)), codes)
    assert ix.nbytes >= codes.nbytes


def test_read_bandwidth_checksum_is_kernel_independent() -> None:
    buf = np.random.default_rng(1).integers(0, 256, size=1 << 16, dtype=np.uint8)
    sums = set()
    previous = _native.active_kernel()
    try:
        for name in KERNELS:
            _native.set_kernel(name)
            sums.add(_native.read_bandwidth(buf[3:]))
    finally:
        _native.set_kernel(previous)
    assert len(sums) == 1


def test_read_bandwidth_checksum_is_the_documented_sum(kernel: str) -> None:
    """XOR of the aligned 64-bit words plus the sum of the bytes before and after them, for every start
    alignment and lengths around the kernels' 4-, 16- and 32-word steps."""
    buf = np.random.default_rng(2).integers(0, 256, size=4096, dtype=np.uint8)
    for off in range(9):
        for n in (0, 1, 7, 8, 9, 31, 32, 33, 127, 128, 129, 255, 256, 257, 300, 2000):
            view = buf[off:off + n]
            head = min((-view.ctypes.data) % 8, n)
            words = (n - head) // 8
            body = view[head:head + 8 * words].view(np.uint64)
            want = int(view[:head].sum()) + int(view[head + 8 * words:].sum())
            want += int(np.bitwise_xor.reduce(body)) if words else 0
            assert _native.read_bandwidth(view) == want % 2**64, (off, n)


@pytest.mark.parametrize("words", [1, 2, 3, 4, 8, 16])
def test_hamming_cross_matches_numpy_on_every_kernel(words):
    from hippo.native import active_kernel, available_kernels, hamming_cross, set_kernel

    rng = np.random.default_rng(words)
    a = rng.integers(0, 2**63, (9, words), dtype=np.uint64) ^ rng.integers(0, 2, (9, words), dtype=np.uint64) << 63
    b = rng.integers(0, 2**63, (131, words), dtype=np.uint64)
    ref = np.bitwise_count(a[:, None, :] ^ b[None, :, :]).sum(axis=-1)
    before = active_kernel()
    try:
        for kernel in available_kernels():
            set_kernel(kernel)
            assert (hamming_cross(a, b) == ref).all()
            assert (hamming_cross(a[3], b) == ref[3]).all()
    finally:
        set_kernel(before)
    assert hamming_cross(a[:0], b).shape == (0, 131)


def test_hamming_cross_rejects_bad_codes():
    from hippo.base.errors import InvalidInput
    from hippo.native import hamming_cross

    with pytest.raises(InvalidInput, match="uint64"):
        hamming_cross(np.zeros((2, 2), np.int64), np.zeros((2, 2), np.uint64))
    with pytest.raises(InvalidInput, match="same code width"):
        hamming_cross(np.zeros((2, 2), np.uint64), np.zeros((2, 3), np.uint64))
    with pytest.raises(InvalidInput, match="1..16 words"):
        hamming_cross(np.zeros((1, 17), np.uint64), np.zeros((1, 17), np.uint64))
