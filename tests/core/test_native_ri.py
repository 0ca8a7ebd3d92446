"""Random-indexing signatures: determinism and hand-checkable properties (seed paper §3.3)."""

from __future__ import annotations

import numpy as np
import pytest

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
