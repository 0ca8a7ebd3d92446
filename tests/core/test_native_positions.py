"""DynamicWaveletMatrix.positions (locate) against numpy, across segment and tail boundaries."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo import DynamicWaveletMatrix
from hippo.base.errors import InvalidInput, OutOfRange


@settings(max_examples=40, deadline=None)
@given(
    bits=st.sampled_from([1, 7, 17, 32]),
    chunks=st.lists(st.integers(1, 3000), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_positions_match_numpy(bits, chunks, seed, data):
    rng = np.random.default_rng(seed)
    hi = min(2**bits, 40)
    arr = rng.integers(0, hi, sum(chunks), dtype=np.uint64).astype(np.uint32)
    d = DynamicWaveletMatrix(bits)
    at = 0
    for c in chunks:
        d.extend(arr[at : at + c])
        at += c
    d.append(int(arr[0]))
    arr = np.append(arr, arr[0])
    n = arr.size
    start = data.draw(st.integers(0, n))
    end = data.draw(st.integers(start, n))
    for sym in {int(arr[0]), int(arr[-2]), hi - 1, 0}:
        ref = np.flatnonzero(arr[start:end] == sym) + start
        assert np.array_equal(d.positions(sym, start, end), ref)


def test_positions_bad_input():
    d = DynamicWaveletMatrix(7)
    d.extend(np.arange(100, dtype=np.uint32) % 128)
    with pytest.raises(InvalidInput):
        d.positions(1 << 7)
    with pytest.raises(OutOfRange):
        d.positions(3, 0, 101)
    with pytest.raises(InvalidInput):
        d.positions(3, 50, 10)
    assert d.positions(3).tolist() == [3]
