"""hippo.base.arrays.GrowArray against a plain list through random appends, resizes, writes and reloads."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.base.arrays import GrowArray, grown

ops = st.lists(st.one_of(
    st.tuples(st.just("extend"), st.lists(st.integers(-100, 100), max_size=300)),
    st.tuples(st.just("resize"), st.integers(0, 700)),
    st.tuples(st.just("write"), st.integers(0, 10_000), st.integers(-100, 100)),
    st.tuples(st.just("reload"),),
), max_size=60)


@settings(max_examples=200, deadline=None)
@given(ops, st.sampled_from([(np.int64, 0), (np.int64, -1), (np.float64, np.nan), (np.int8, 3)]))
def test_behaves_like_a_list(steps, kind):
    dtype, fill = kind
    g = GrowArray(dtype, fill=fill)
    ref: list = []
    for step in steps:
        if step[0] == "extend":
            g.extend(step[1])
            ref.extend(step[1])
        elif step[0] == "resize":
            g.resize(step[1])
            ref.extend([fill] * (step[1] - len(ref)))
        elif step[0] == "write" and ref:
            at = step[1] % len(ref)
            g.a[at] = step[2]
            ref[at] = step[2]
        elif step[0] == "reload":  # what a snapshot load makes of a saved column: its values, no room ahead
            g = GrowArray.wrap(np.array(g.view, copy=True), fill=fill)
        assert g.n == len(ref) and g.view.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(g.view, np.array(ref, dtype=dtype))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=1, max_size=40))
def test_room_ahead_is_at_most_a_third(batches):
    """Grown by appends, a column never holds more than half again its values (64 slots at least)."""
    g = GrowArray(np.int64)
    for size in batches:
        g.extend(np.arange(size))
        assert g.a.size <= max(64, g.n + g.n // 2)


def test_growth_copies_each_value_a_bounded_number_of_times():
    cap, copied, n = 64, 0, 0
    while n < 1_000_000:
        n += 1
        if n > cap:
            copied += cap
            cap = grown(cap, n)
    assert copied <= 3 * n


def test_room_is_written_only_by_resize():
    """Slots past the values are zero pages until used: a column of NaN fill writes NaN only where it resized to."""
    g = GrowArray(np.float64, fill=np.nan)
    g.resize(10)
    assert np.isnan(g.view).all() and not np.isnan(g.a[10:]).any()
