"""f(P) kept incrementally (hierarchy/themes.py ``Stats``) against the direct computation over every theme.

Splits, merges and moves are decided by the kept statistics unless their value is within ``GUARD`` of the
decision's threshold; the direct computation (``ThemeSet._evaluate`` / ``ThemeSet.score``, the previous way of
deciding) decides the rest. ``Direct`` below decides everything the previous way: the kept statistics are never
asked. Both must build the same themes with the same f(P) bit for bit, since the two differ only in how Eq. 3's mean
is summed (numpy's pairwise sum against exact per-distance sums), by far less than ``GUARD``: the first tests bound
that difference against the from-scratch definition ``partition_score``."""

from __future__ import annotations

import numpy as np
import pytest
from hippo_bench.scale import SyntheticConversation

from hippo import Memory
from hippo.engine.hierarchy.codes import CodeSet
from hippo.engine.hierarchy.themes import GUARD, ThemeSet, partition_score, theme_stats

BITS = 256
WORDS = BITS // 64
TOL = 1e-14  # |kept - direct| bound checked below; GUARD (1e-13) leaves a factor of ten


class Direct(ThemeSet):
    """Every decision by the direct computation over all themes."""

    def _evaluate_fast(self, removed, added):
        return None

    def _score_fast(self):
        return None


def clustered_codes(rng, n: int, clusters: int) -> np.ndarray:
    """Codes around ``clusters`` random centres (a few to many bits flipped), a fifth of them uniformly random:
    full themes that split, and tiny ones to merge or move."""
    centres = rng.integers(0, 2**64, size=(clusters, WORDS), dtype=np.uint64)
    out = np.empty((n, WORDS), dtype=np.uint64)
    for i in range(n):
        if rng.random() < 0.2:
            out[i] = rng.integers(0, 2**64, size=WORDS, dtype=np.uint64)
            continue
        flips = rng.random(BITS) < rng.choice((0.05, 0.15, 0.3))
        out[i] = centres[rng.integers(clusters)] ^ np.packbits(flips, bitorder="little").view(np.uint64)
    return out


def themeset(cls, codes: np.ndarray) -> ThemeSet:
    sem = CodeSet(WORDS)
    for c in codes:
        sem.append(c)
    return cls(BITS, WORDS, np.zeros(BITS, dtype=bool), lambda s: sem.codes[s], cap=12, attach=0.12, tiny=2,
               merge_candidates=3, split_trials=2, knn_k=6)


def grow(th: ThemeSet, n: int, rng: np.random.Generator) -> None:
    """Batches of attaches, tiny-theme merges and moves of semantics to the theme nearest to them."""
    for lo in range(0, n, 40):
        th.attach_batch(list(range(lo, min(n, lo + 40))))
        for t in th.live().tolist():
            if th.codes.alive[t] and len(th.members[t]) <= th.tiny:
                th.consider_merge(t)
        for sid in rng.choice(min(n, lo + 40), size=10, replace=False).tolist():
            t = th.theme_of[sid]
            top, _ = th.codes.top(th.code_of(sid), 2, exclude=t)
            if len(th.members[t]) > 1 and top.size and len(th.members[int(top[0])]) < th.cap:
                th.consider_move(sid, int(top[0]))


def groups(th: ThemeSet, code_of) -> list[np.ndarray]:
    return [np.stack([code_of(s) for s in th.members[t]]) for t in th.live().tolist()]


@pytest.mark.parametrize("seed", range(3))
def test_kept_f_of_the_partition_and_of_candidates_is_the_from_scratch_f(seed):
    rng = np.random.default_rng(seed)
    codes = clustered_codes(rng, 700, 60)
    th = themeset(ThemeSet, codes)
    grow(th, 700, rng)
    assert th.merges and th.splits and len(th) > 40
    code_of = th.code_of
    want = partition_score(groups(th, code_of), BITS, th.tie)
    assert abs(th._score_fast() - want) <= TOL
    assert abs(th._score_fast() - th.score()) <= TOL
    live = th.live().tolist()
    for _ in range(60):
        kind = rng.integers(3)
        t = int(rng.choice(live))
        if kind == 0:      # merge t into another theme
            u = int(rng.choice([x for x in live if x != t]))
            parts = {t, u}
            new = [th.members[t] + th.members[u]]
        elif kind == 1:    # move one semantic of t to u
            u = int(rng.choice([x for x in live if x != t]))
            if len(th.members[t]) < 2:
                continue
            sid = th.members[t][0]
            parts = {t, u}
            new = [th.members[t][1:], th.members[u] + [sid]]
        else:              # split t in two
            if len(th.members[t]) < 2:
                continue
            parts = {t}
            half = len(th.members[t]) // 2
            new = [th.members[t][:half], th.members[t][half:]]
        added = []
        for g in new:
            mu, coh = theme_stats(np.stack([code_of(s) for s in g]), BITS, th.tie)
            added.append((mu, len(g), coh))
        rest = [np.stack([code_of(s) for s in th.members[v]]) for v in live if v not in parts]
        want = partition_score(rest + [np.stack([code_of(s) for s in g]) for g in new], BITS, th.tie)
        assert abs(th._evaluate_fast(parts, added) - want) <= TOL
        assert abs(th._evaluate(parts, added) - want) <= TOL


def test_kept_statistics_follow_removals_and_a_single_theme():
    rng = np.random.default_rng(5)
    codes = clustered_codes(rng, 200, 10)
    th = themeset(ThemeSet, codes)
    grow(th, 200, rng)
    for sid in rng.permutation(200).tolist():
        th.remove_semantic(sid)
        if len(th) and sid % 7 == 0:
            assert abs(th._score_fast() - partition_score(groups(th, th.code_of), BITS, th.tie)) <= TOL
    assert len(th) == 0 and th._score_fast() == 0.0 == th.score()
    th.attach(3)
    assert th._score_fast() == th.score() == 2.0   # one theme of one semantic: sparsity 1 + cohesion 1


def test_a_comparison_too_close_to_call_is_decided_by_the_direct_computation():
    th = themeset(ThemeSet, np.zeros((1, WORDS), dtype=np.uint64))
    asked = []

    def direct(v):
        return lambda: asked.append(v) or v

    # far from the threshold: the kept values decide, the direct computation is not asked
    assert th._beats(1.5, direct(0.0), 1.0, direct(9.0), 1e-12) and not asked
    # within GUARD of it: the direct values decide (here, against the kept ones)
    assert not th._beats(1.0 + 1e-12 + GUARD / 2, direct(1.0), 1.0, direct(1.0), 1e-12)
    assert asked == [1.0, 1.0]
    assert th._beats(None, direct(2.0), 1.0, direct(1.0), 0.0)   # no kept value: direct


@pytest.mark.parametrize("seed", range(4))
def test_clustered_codes_build_the_same_themes_as_the_direct_computation(seed):
    codes = clustered_codes(np.random.default_rng(seed), 900, 70)
    built = []
    for cls in (Direct, ThemeSet):
        th = themeset(cls, codes)
        grow(th, 900, np.random.default_rng(100 + seed))
        built.append(th)
    a, b = built
    assert b.merges > 10 and b.splits > 10 and b.reassignments > 50
    assert [sorted(m) if a.codes.alive[t] else None for t, m in enumerate(a.members)] == \
        [sorted(m) if b.codes.alive[t] else None for t, m in enumerate(b.members)]
    assert a.theme_of == b.theme_of and a.moved == b.moved
    assert (a.reassignments, a.splits, a.merges) == (b.reassignments, b.splits, b.merges)
    assert np.array_equal(a.codes.codes[: a.codes.n], b.codes.codes[: b.codes.n])
    assert a.score() == b.score()


def _store(tmp_path, name: str, items: list[dict]) -> Memory:
    mem = Memory(str(tmp_path / f"{name}.db"), config={"hierarchy": {"recall": "stage2"}})
    for lo in range(0, len(items), 500):
        mem.add_many(items[lo : lo + 500])
    return mem


def test_a_chat_store_consolidates_to_the_same_hierarchy_and_recall(tmp_path, monkeypatch):
    """Ingest (tiny-theme merges every other batch) and a deep consolidation (splits, moves, merges), once with
    every decision taken the direct way, once as shipped: same themes, f(P), report and top-down recall."""
    items = SyntheticConversation(11, n_nouns=3000, n_people=40, n_places=30, n_speakers=8).generate(
        90_000, n_needles=0).items
    questions = [" ".join(it["text"].split()[:8]) for it in items[::97][:12]]
    runs = []
    for name in ("direct", "kept"):
        with monkeypatch.context() as mp:
            if name == "direct":
                mp.setattr(ThemeSet, "_evaluate_fast", Direct._evaluate_fast)
                mp.setattr(ThemeSet, "_score_fast", Direct._score_fast)
            mem = _store(tmp_path, name, items)
            report = mem.consolidate("deep")
            h = mem.engine.state().life().hier
            th = h.themes
            members = [sorted(m) if th.codes.alive[t] else None for t, m in enumerate(th.members)]
            recalls = [(r.text, [u["id"] for u in r.units])
                       for r in (mem.recall(q, budget_tokens=600) for q in questions)]
            runs.append((members, th.score(), {k: report[k] for k in ("splits", "merges", "moved", "reassignments",
                                                                         "f_score")}, recalls))
            mem.close()
    (m1, f1, r1, rec1), (m2, f2, r2, rec2) = runs
    assert r1["merges"] > 0 and r1["moved"] > 0 and sum(x is not None for x in m1) > 100
    assert m1 == m2 and f1 == f2 and r1 == r2
    assert rec1 == rec2 and any(rec1)
