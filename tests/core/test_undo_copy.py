"""The copy a consolidation keeps to put the lifecycle back if it raises: it holds what the lifecycle holds, costs
the memory of the values (not of the room the columns keep ahead of them) and is gone when the call returns."""

from __future__ import annotations

import copy
import gc
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import numpy as np
import pytest

import hippo
from hippo import Memory
from hippo.base.arrays import GrowArray
from hippo.engine import lifecycle
from hippo.engine import state as state_mod
from hippo.engine.hierarchy.codes import CodeSet
from hippo.engine.hierarchy.decay import DecayTable
from hippo.engine.hierarchy.knn import KnnGraph


def _table(n: int) -> DecayTable:
    t = DecayTable()
    for k in range(n):
        t.add(10 * k + 3, type="message", priority="high" if k % 3 else "normal", base_rate=0.01 * (k + 1),
              turn=k, at=1e9 + k, expires_turn=k + 5 if k % 2 else -1)
    return t


def test_copies_hold_the_values_and_are_their_own():
    rng = np.random.default_rng(1)
    g = GrowArray(np.float64, fill=np.nan)
    g.extend(rng.random(100))
    g.resize(130)
    cs = CodeSet(2)
    cs.append_many(rng.integers(0, 2**63, size=(150, 2), dtype=np.uint64))
    cs.kill(7)
    cs.enable_index()
    graph = KnnGraph(cs, 128, 4)
    graph.refresh(list(range(cs.n)))
    t = _table(90)
    memo: dict = {}
    g2, cs2, graph2, t2 = (copy.deepcopy(x, memo) for x in (g, cs, graph, t))
    assert graph2.codes is cs2  # the copied graph reads the copied codes
    np.testing.assert_array_equal(g2.view, g.view)
    assert g2.a.shape == g.a.shape and g2.fill is g.fill
    np.testing.assert_array_equal(cs2.codes[: cs.n], cs.codes[: cs.n])
    np.testing.assert_array_equal(cs2.alive[: cs.n], cs.alive[: cs.n])
    assert cs2.codes.shape == cs.codes.shape and cs2._dead == cs._dead
    np.testing.assert_array_equal(graph2.ids[: graph.filled], graph.ids[: graph.filled])
    np.testing.assert_array_equal(graph2.dist[: graph.filled], graph.dist[: graph.filled])
    for name in (*DecayTable._FIELDS, "touched", "own"):
        np.testing.assert_array_equal(getattr(t2, name)[: t.n], getattr(t, name)[: t.n])
    assert (t2.n, t2.live, t2._ordered) == (t.n, t.live, t._ordered)
    # the copy's native mirror answers as the original's (it is built when first searched)
    q = rng.integers(0, 2**63, size=(5, 2), dtype=np.uint64)
    for a, b in zip(cs.nearest(q, 6), cs2.nearest(q, 6)):
        np.testing.assert_array_equal(a, b)
    # writes to one leave the other as it was
    before = cs.codes[: cs.n].copy(), graph.ids[: graph.filled].copy(), t.flags[: t.n].copy(), g.view.copy()
    cs2.append_many(np.ones((400, 2), dtype=np.uint64))
    cs2.set(3, np.zeros(2, dtype=np.uint64))
    graph2.refresh([3, 200])
    t2.flags[: t2.n] |= 8
    g2.extend(np.zeros(500))
    g2.a[0] = -1.0
    for a, b in zip(before, (cs.codes[: cs.n], graph.ids[: graph.filled], t.flags[: t.n], g.view)):
        np.testing.assert_array_equal(a, b)
    cs.append_many(np.full((3, 2), 5, dtype=np.uint64))
    assert cs2.n == cs.n - 3 + 400 and (cs2.codes[cs.n - 3 : cs.n] == 1).all()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the resident memory from /proc")
def test_copies_leave_the_room_unwritten():
    """A column grown by half keeps room ahead of its values as zero pages, mapped when first written: a copy of it
    (``copy.deepcopy``, what a consolidation keeps to undo a failed run) wrote every slot, so that the room became
    resident; and a copy of the semantics' code set built its native mirror at once. Columns of 64 MB of room and a
    few values: the copies made the process 64 MB larger each; now a few pages."""
    script = textwrap.dedent("""
        import copy, os
        import numpy as np
        from hippo.base.arrays import GrowArray
        from hippo.engine.hierarchy.codes import CodeSet
        from hippo.engine.hierarchy.decay import DecayTable
        from hippo.engine.hierarchy.knn import KnnGraph

        page = os.sysconf("SC_PAGE_SIZE")
        def resident():
            return int(open("/proc/self/statm").read().split()[1]) * page

        big = 1 << 23  # slots: 64 MB of int64 / of two-word codes / of four 32-bit neighbours
        g = GrowArray(np.int64, cap=big)
        g.extend(np.arange(1000))
        cs = CodeSet(1, cap=big)
        cs.append_many(np.arange(1, 1001, dtype=np.uint64).reshape(-1, 1))
        graph = KnnGraph(CodeSet(1, cap=big // 2), 64, 4)
        graph.codes.append_many(np.arange(1, 1001, dtype=np.uint64).reshape(-1, 1))
        graph.refresh(list(range(1000)))
        t = DecayTable(cap=big // 8)  # 13 columns of 8 bytes, 4 of fewer
        for k in range(1000):
            t.add(k, type="message", base_rate=0.1, turn=k, at=1e9)
        mirrored = CodeSet(4, cap=1 << 20)  # 32 MB of codes, all of them values
        mirrored.append_many(np.ones((1 << 20, 4), dtype=np.uint64))
        mirrored.enable_index()
        out, kept = [], []
        for x in (g, cs, graph, t, mirrored):
            r0 = resident()
            kept.append(copy.deepcopy(x))
            out.append(resident() - r0)
        print(" ".join(str(v) for v in out))
    """)
    env = {"PYTHONPATH": str(Path(hippo.__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"}
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert got.returncode == 0, got.stderr
    grown = [int(v) for v in got.stdout.split()]
    mb = 1 << 20
    assert all(v < 8 * mb for v in grown[:4]), grown  # each column held 64 MB of room or more
    assert grown[4] < 40 * mb, grown  # the values (32 MB), not a native mirror of them besides


CFG = {"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 4, "theme_cap": 6}}


@pytest.mark.parametrize("level", ["deep", "archival"])
def test_the_undo_copy_is_gone_when_the_units_are_saved(tmp_path, monkeypatch, level):
    """The copy is as large as the lifecycle: it was held until the call returned, through the save of the whole
    lifecycle that follows a consolidation, and the hierarchy's copy (which held itself through its themes) until
    the cycle collector ran, so a deep consolidation of 200,000 messages peaked that much higher."""
    copies: list[weakref.ref] = []
    alive_at_save: list[bool] = []
    real_checkpoint, real_save = lifecycle.Life.checkpoint, state_mod.NamespaceState.save_derived

    def checkpoint(self, *args, **kwargs):
        out = real_checkpoint(self, *args, **kwargs)
        copies.extend(weakref.ref(x) for x in (out["hier"], out["decay"], *out["units"].values()))
        return out

    def save_derived(self, *args, **kwargs):
        alive_at_save.append(any(r() is not None for r in copies))
        return real_save(self, *args, **kwargs)

    with Memory(tmp_path / "m.db", config=CFG) as mem:
        mem.add_many([{"text": f"Ann fixed the violin {k} near the museum and the kiln {k % 7}.",
                       "session_id": f"s{k // 20}"} for k in range(203)])
        monkeypatch.setattr(lifecycle.Life, "checkpoint", checkpoint)
        monkeypatch.setattr(state_mod.NamespaceState, "save_derived", save_derived)
        gc.disable()  # freed when the last reference goes, not when the collector comes by
        try:
            mem.consolidate(level)
        finally:
            gc.enable()
    assert copies and alive_at_save and not any(alive_at_save)
