"""Bad input: every failure raises the right HippoError subclass, names the argument, and leaves the
structure exactly as it was. Corrupt and truncated serialized forms raise CorruptData."""

from __future__ import annotations

import numpy as np
import pytest

from hippo import BinaryIndex, CorruptData, DynamicWaveletMatrix, HippoError, InvalidInput, OutOfRange, WaveletMatrix


def filled_dwm() -> tuple[DynamicWaveletMatrix, np.ndarray]:
    data = np.random.default_rng(0).integers(0, 128, size=3000).astype(np.uint32)
    d = DynamicWaveletMatrix(7)
    d.extend(data)
    return d, data


def snapshot(obj) -> bytes:
    return obj.to_bytes()


@pytest.fixture(params=["static", "dynamic"])
def seq(request):
    d, data = filled_dwm()
    if request.param == "static":
        return WaveletMatrix(data, 7), data
    return d, data


def test_hierarchy() -> None:
    assert issubclass(OutOfRange, InvalidInput) and issubclass(OutOfRange, IndexError)
    assert issubclass(InvalidInput, ValueError) and issubclass(CorruptData, ValueError)


@pytest.mark.parametrize("call, exc, name", [
    (lambda s, n: s.access(n), OutOfRange, "i"),
    (lambda s, n: s.access(-1), OutOfRange, "i"),
    (lambda s, n: s.rank(1, n + 1), OutOfRange, "i"),
    (lambda s, n: s.rank(1, -1), OutOfRange, "i"),
    (lambda s, n: s.rank(128, 0), InvalidInput, "symbol"),
    (lambda s, n: s.rank(-1, 0), InvalidInput, "symbol"),
    (lambda s, n: s.rank("a", 0), InvalidInput, "symbol"),
    (lambda s, n: s.rank(1.0, 0), InvalidInput, "symbol"),
    (lambda s, n: s.select(1, 0), OutOfRange, "k"),
    (lambda s, n: s.select(1, n + 1), OutOfRange, "k"),
    (lambda s, n: s.select(300, 1), InvalidInput, "symbol"),
    (lambda s, n: s.count(1, 5, 4), OutOfRange, "start"),
    (lambda s, n: s.count(1, 0, n + 1), OutOfRange, "end"),
    (lambda s, n: s.access_range(-1, 3), OutOfRange, "start"),
    (lambda s, n: s.access_many(np.array([0, n], dtype=np.int64)), OutOfRange, "positions[1]"),
    (lambda s, n: s.access_many(np.array([-3], dtype=np.int64)), OutOfRange, "positions[0]"),
    (lambda s, n: s.access_many(np.zeros(3, dtype=np.float64)), InvalidInput, "positions"),
    (lambda s, n: s.access_many(np.zeros((2, 2), dtype=np.int64)), InvalidInput, "positions"),
    (lambda s, n: s.access_many(np.zeros(6, dtype=np.int64)[::2]), InvalidInput, "contiguous"),
    (lambda s, n: s.access_many(np.array([True])), InvalidInput, "positions"),
    (lambda s, n: s.rank_many(np.zeros(3, dtype=np.uint32), np.zeros(2, dtype=np.int64)), InvalidInput, "length"),
    (lambda s, n: s.rank_many(np.array([200], dtype=np.uint32), np.zeros(1, dtype=np.int64)), InvalidInput,
     "symbols[0]"),
    (lambda s, n: s.rank_many(np.zeros(2, dtype=np.float32), np.zeros(2, dtype=np.int64)), InvalidInput,
     "symbols"),
    (lambda s, n: s.count_many(np.array([1], dtype=np.uint32), 0, n + 5), OutOfRange, "end"),
    (lambda s, n: s.hamming_ball(1, -1), InvalidInput, "radius"),
    (lambda s, n: s.hamming_ball(999, 1), InvalidInput, "symbol"),
    (lambda s, n: s.hamming_ball(1, 1, 0, n + 1), OutOfRange, "end"),
    (lambda s, n: s.hamming_ball(1, 1, method="magic"), InvalidInput, "method"),
])
def test_bad_queries(seq, call, exc, name: str) -> None:
    obj, data = seq
    before = snapshot(obj)
    with pytest.raises(exc) as err:
        call(obj, data.size)
    assert name in str(err.value)
    assert snapshot(obj) == before
    assert np.array_equal(obj.access_range(), data)


def test_bad_writes_leave_dynamic_matrix_intact() -> None:
    d, data = filled_dwm()
    before = snapshot(d)
    for bad, exc in [
        (lambda: d.append(128), InvalidInput),
        (lambda: d.append(-1), InvalidInput),
        (lambda: d.append(None), InvalidInput),
        (lambda: d.extend(np.array([1, 2, 500], dtype=np.uint32)), InvalidInput),
        (lambda: d.extend(np.array([1.5])), InvalidInput),
        (lambda: d.extend(np.zeros((2, 2), dtype=np.uint32)), InvalidInput),
        (lambda: d.extend(np.zeros(10, dtype=np.uint32)[::2]), InvalidInput),
        (lambda: d.extend([1, -1]), InvalidInput),
        (lambda: d.extend("abc"), InvalidInput),
    ]:
        with pytest.raises(exc):
            bad()
        assert snapshot(d) == before and len(d) == data.size
    d.extend(np.array([1, 2], dtype=np.int64))  # other integer dtypes are converted
    assert d.access_range(data.size).tolist() == [1, 2]


@pytest.mark.parametrize("bits", [0, 33, -1, 7.0, "7"])
def test_bad_widths(bits) -> None:
    with pytest.raises(InvalidInput, match="bits"):
        DynamicWaveletMatrix(bits)
    with pytest.raises(InvalidInput, match="bits"):
        WaveletMatrix(np.zeros(3, dtype=np.uint32), bits)


def test_empty_structures() -> None:
    d = DynamicWaveletMatrix(5)
    assert len(d) == 0 and d.access_range().size == 0 and d.rank(3, 0) == 0 and d.count(3) == 0
    assert d.hamming_ball(3, 2) == [] and d.access_many(np.zeros(0, dtype=np.int64)).size == 0
    with pytest.raises(OutOfRange):
        d.access(0)
    with pytest.raises(OutOfRange):
        d.select(3, 1)
    w = WaveletMatrix(np.zeros(0, dtype=np.uint32), 9)
    assert len(w) == 0 and WaveletMatrix.from_bytes(w.to_bytes()).bits == 9
    assert len(DynamicWaveletMatrix.from_bytes(d.to_bytes())) == 0
    ix = BinaryIndex(128)
    assert len(ix) == 0 and ix.radius_search(np.zeros(16, dtype=np.uint8), 5)[0].size == 0


def test_binary_index_bad_input() -> None:
    ix = BinaryIndex(64)
    codes = np.random.default_rng(1).integers(0, 256, (50, 8), dtype=np.uint8)
    ix.add(codes)
    before = ix.to_bytes()
    cases = [
        (lambda: ix.add(codes.astype(np.int16)), InvalidInput, "codes"),
        (lambda: ix.add(codes[:, :7].copy()), InvalidInput, "codes"),
        (lambda: ix.add(codes.T), InvalidInput, "codes"),
        (lambda: ix.add(codes[::2]), InvalidInput, "contiguous"),
        (lambda: ix.add([[1] * 8]), InvalidInput, "codes"),
        (lambda: ix.search(codes[:1], 0), InvalidInput, "k"),
        (lambda: ix.search(codes[:1], -5), InvalidInput, "k"),
        (lambda: ix.search(codes[:1], 2.0), InvalidInput, "k"),
        (lambda: ix.search(codes[:1, :4].copy(), 1), InvalidInput, "queries"),
        (lambda: ix.search(codes[:1].astype(np.float32), 1), InvalidInput, "queries"),
        (lambda: ix.radius_search(codes[0], -1), InvalidInput, "radius"),
        (lambda: ix.radius_search(codes[:2], 1), InvalidInput, "query"),
        (lambda: ix.get(np.array([50])), OutOfRange, "ids[0]"),
        (lambda: ix.get(np.array([-1])), OutOfRange, "ids[0]"),
    ]
    for call, exc, name in cases:
        with pytest.raises(exc) as err:
            call()
        assert name in str(err.value)
        assert ix.to_bytes() == before
    for bits in (0, 32, 100, 1088, 2048):
        with pytest.raises(InvalidInput, match="bits"):
            BinaryIndex(bits)


def serialized_forms() -> list[tuple[type, bytes]]:
    rng = np.random.default_rng(2)
    data = rng.integers(0, 1 << 11, size=40).astype(np.uint32)
    d = DynamicWaveletMatrix(11)
    d.extend(data)
    ix = BinaryIndex(128)
    ix.add(rng.integers(0, 256, (6, 16), dtype=np.uint8))
    return [(WaveletMatrix, WaveletMatrix(data, 11).to_bytes()), (DynamicWaveletMatrix, d.to_bytes()),
            (BinaryIndex, ix.to_bytes())]


@pytest.mark.parametrize("cls, blob", serialized_forms(), ids=["wm", "dwm", "bix"])
def test_every_truncation_and_byte_flip_is_corrupt(cls, blob: bytes) -> None:
    cls.from_bytes(blob)
    for cut in range(len(blob)):
        with pytest.raises(CorruptData):
            cls.from_bytes(blob[:cut])
    rng = np.random.default_rng(len(blob))
    for _ in range(200):
        b = bytearray(blob)
        b[int(rng.integers(0, len(b)))] ^= int(rng.integers(1, 256))
        with pytest.raises(CorruptData):
            cls.from_bytes(bytes(b))
    with pytest.raises(CorruptData):
        cls.from_bytes(blob + b"\0")
    with pytest.raises(InvalidInput):
        cls.from_bytes("not bytes")


def test_blobs_are_not_interchangeable() -> None:
    (_, wm), (_, dwm), (_, bix) = serialized_forms()
    with pytest.raises(CorruptData):
        DynamicWaveletMatrix.from_bytes(wm)
    with pytest.raises(CorruptData):
        BinaryIndex.from_bytes(dwm)
    with pytest.raises(CorruptData):
        WaveletMatrix.from_bytes(bix)


def test_no_pickle() -> None:
    import pickle

    with pytest.raises(TypeError):
        pickle.dumps(DynamicWaveletMatrix(3))
    with pytest.raises(TypeError):
        pickle.dumps(BinaryIndex(64))


def test_errors_are_hippo_errors() -> None:
    with pytest.raises(HippoError):
        DynamicWaveletMatrix(3).access(0)


@pytest.mark.parametrize("bad", [[], {}, memoryview(bytearray(b"auto")), 0])
def test_unhashable_names_are_invalid_input(seq, bad) -> None:
    from hippo.native import active_kernel, set_kernel

    obj, data = seq
    with pytest.raises(InvalidInput, match="method"):
        obj.hamming_ball(1, 1, method=bad)
    before = active_kernel()
    with pytest.raises(InvalidInput, match="name"):
        set_kernel(bad)
    assert active_kernel() == before
    assert np.array_equal(obj.access_range(), data)
