"""The kNN graphs' rows: only the rows their code set's count has reached hold lists ("no neighbour" until linked);
the room ahead of the codes stays zeroed memory. Checked against a graph whose rows are all written "no neighbour"
over the whole capacity (the layout the rows had), on random operations, and through a store's save and reopen."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo import Memory
from hippo.engine.hierarchy import knn as knn_mod
from hippo.engine.hierarchy.codes import CodeSet, hamming
from hippo.engine.hierarchy.knn import KnnGraph
from tests.conversation import NOUNS, VERBS


class FullRows(KnnGraph):
    """The reference: every row of the capacity written "no neighbour" when the rows grow."""

    def __init__(self, codes: CodeSet, bits: int, k: int) -> None:
        super().__init__(codes, bits, k)
        self.ids = np.full((codes.codes.shape[0], k), knn_mod._EMPTY, dtype=np.int64)
        self.dist = np.full((codes.codes.shape[0], k), knn_mod._FAR, dtype=np.int64)

    def _fit(self) -> None:
        cap = self.codes.codes.shape[0]
        if self.ids.shape[0] < cap:
            ids = np.full((cap, self.k), knn_mod._EMPTY, dtype=np.int64)
            dist = np.full((cap, self.k), knn_mod._FAR, dtype=np.int64)
            ids[: self.ids.shape[0]] = self.ids
            dist[: self.dist.shape[0]] = self.dist
            self.ids, self.dist = ids, dist
        self.filled = self.ids.shape[0]

    def rebuild(self) -> None:
        self._fit()
        self.ids[:] = knn_mod._EMPTY
        self.dist[:] = knn_mod._FAR
        self._exact()


def _brute(cs: CodeSet, k: int) -> dict[int, list[tuple[int, int]]]:
    """Every live slot's k nearest other live slots, (slot, distance), by a full sort on (distance, slot)."""
    live = cs.live().tolist()
    out = {}
    for u in live:
        d = hamming(cs.codes[u], cs.codes[: cs.n]).tolist()
        out[u] = sorted(((v, d[v]) for v in live if v != u), key=lambda p: (p[1], p[0]))[:k]
    return out


def _rows(g: KnnGraph, n: int) -> list[list[tuple[int, int]]]:
    ids, dist = g.lists(n)
    return [[(int(i), int(x)) for i, x in zip(r_i, r_d) if i >= 0] for r_i, r_d in zip(ids, dist)]


op = st.one_of(
    st.tuples(st.just("update"), st.integers(1, 3)),
    st.tuples(st.just("refresh"), st.integers(2, 90)),
    st.tuples(st.just("insert_many"), st.integers(1, 90)),
    st.tuples(st.just("append_only"), st.integers(1, 5)),
    st.tuples(st.just("kill"), st.integers(1, 6)),
    st.tuples(st.just("rebuild"), st.just(0)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=12), st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_rows_match_rows_written_over_the_whole_capacity(ops, seed, k):
    rng = np.random.default_rng(seed)
    centres = rng.integers(0, 2**63, size=(5, 2), dtype=np.uint64)
    sets = [CodeSet(2), CodeSet(2)]
    for cs in sets:
        cs.enable_index()
    graphs = [KnnGraph(sets[0], 128, k), FullRows(sets[1], 128, k)]
    for name, m in ops:
        live = sets[0].live()
        if name == "kill":
            if not live.size:
                continue
            gone = rng.choice(live, min(m, live.size), replace=False).tolist()
        else:
            noise = rng.integers(0, 2**63, size=(2, max(m, 1), 2), dtype=np.uint64)
            codes = centres[rng.integers(0, 5, max(m, 1))] ^ (noise[0] & noise[1])
        for cs, g in zip(sets, graphs):
            if name == "kill":
                for s in gone:
                    cs.kill(s)
                g.remove_many(gone) if len(gone) > 1 else g.remove(gone[0])
            elif name == "rebuild":
                g.rebuild()
            else:
                slots = cs.append_many(codes).tolist()
                if name == "update":
                    for s in slots:
                        g.update(s)
                elif name == "refresh":
                    g.refresh(slots)
                elif name == "insert_many":
                    g.insert_many(slots)
                # "append_only": codes the graph has not linked yet (their rows read "no neighbour")
        n = sets[0].n
        assert _rows(graphs[0], n) == _rows(graphs[1], n)
        for s in range(n + 2):
            for a, b in zip(graphs[0].neighbors(s), graphs[1].neighbors(s)):
                assert np.array_equal(a, b)
        g = graphs[0]
        assert g.filled <= n
        # the room ahead of the lists is never written: zero pages until the codes reach it
        assert not g.ids[g.filled :].any() and not g.dist[g.filled :].any()
    for g in graphs:
        g.rebuild()
    want = _brute(sets[0], k)
    got = _rows(graphs[0], sets[0].n)
    assert {u: got[u] for u in want} == want
    assert all(not got[u] for u in range(sets[0].n) if u not in want)


def test_a_new_graph_over_many_slots_writes_no_row_ahead_of_them():
    cs = CodeSet(2, cap=100_000)
    g = KnnGraph(cs, 128, 6)
    cs.append_many(np.arange(20, dtype=np.uint64).reshape(10, 2))
    g.refresh(list(range(10)))
    assert g.filled == 10 and g.ids.shape[0] == 100_000
    assert not g.ids[10:].any() and not g.dist[10:].any()
    assert (g.ids[:10] >= 0).sum() == 10 * 6
    # a slot and a distance in 32 bits each: 8 bytes a neighbour
    assert g.ids.nbytes + g.dist.nbytes == 100_000 * 6 * 8
    ids, sims = g.neighbors(3)
    assert ids.dtype == np.int64 and ids.size == 6 and np.all(sims <= 1.0)


def _text(rng, k: int) -> str:
    return f"Ann {rng.choice(VERBS)} the {rng.choice(NOUNS)} and the {rng.choice(NOUNS)} near the " \
           f"{rng.choice(NOUNS)} on day {k}."


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**32 - 1), st.integers(150, 300), st.booleans())
def test_graphs_saved_and_reopened_hold_the_same_lists(tmp_path_factory, seed, n, deep):
    rng = np.random.default_rng(seed)
    path = str(tmp_path_factory.mktemp("knn") / "m.db")
    cfg = {"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 4}}
    mem = Memory(path, config=cfg)
    items = mem.add_many([{"text": _text(rng, k), "speaker": "Ann", "session_id": f"s{k // 20}"} for k in range(n)])
    if deep:
        mem.consolidate("deep")
    mem.delete([it.id for it in items[:: 7]])
    h = mem.engine.state().life().hier
    before = [_rows(g, g.codes.n) for g in (h.sem_graph, h.themes.graph)]
    assert any(before)
    mem.close()
    mem = Memory(path, config=cfg)
    h = mem.engine.state().life().hier
    for g, want in zip((h.sem_graph, h.themes.graph), before):
        assert _rows(g, g.codes.n) == want
        assert not g.ids[g.filled :].any()
    mem.close()
