"""The hierarchy (seed 001 §3.2): f(P) by hand, oracles for incremental structures, episodes, semantics, themes."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from hippo import InvalidInput, Memory, NotFound
from hippo.engine import lifecycle
from hippo.engine.hierarchy.codes import CodeSet, hamming, pack, similarity
from hippo.engine.hierarchy.knn import KnnGraph
from hippo.engine.hierarchy.themes import (
    SEM_EPS,
    ThemeSet,
    f_score,
    partition_score,
    sem_score,
    sparsity_score,
    theme_stats,
)
from hippo.engine.topdown import greedy_representatives
from hippo.store import snapshot

BITS = 64
TIE = np.zeros(BITS, dtype=bool)


def code(*ones: int) -> np.ndarray:
    bits = np.zeros(BITS, dtype=bool)
    bits[list(ones)] = True
    return pack(bits)


# -- f(P) = SparsityScore + SemScore (Eq. 1-3) by hand -----------------------------------------------------------
def test_sparsity_score_by_hand():
    assert sparsity_score([2, 1]) == pytest.approx(9 / (2 * 5))      # N^2 / (K * sum n_k^2)
    assert sparsity_score([4, 4, 4]) == pytest.approx(1.0)            # balanced -> 1
    assert sparsity_score([10, 1, 1]) == pytest.approx(144 / (3 * 102))


def test_f_of_a_tiny_partition_by_hand():
    # three single-semantic themes at distances 16, 48 (from c0) and 32 (c1-c2) on 64 bits
    c0, c1, c2 = code(), code(*range(16)), code(*range(48))
    assert similarity(c0, c1[None], BITS)[0] == pytest.approx(0.5)    # 1 - 2 * 16 / 64
    assert similarity(c0, c2[None], BITS)[0] == pytest.approx(-0.5)
    assert similarity(c1, c2[None], BITS)[0] == pytest.approx(0.0)
    # nearest-neighbour similarities s = (0.5, 0.5, 0.0); m = 0.5; sigma = median(0, 0, 0.5) + eps = eps
    s = np.array([0.5, 0.5, 0.0])
    g = np.exp(-np.square(s - 0.5) / (2 * SEM_EPS**2))
    assert g[0] == g[1] == 1.0 and g[2] < 1e-100
    expected = 1.0 + (1.0 + 1.0 + 0.0) / 3                          # sparsity 1, cohesion 1 each
    assert partition_score([c0[None], c1[None], c2[None]], BITS, TIE) == pytest.approx(expected)
    assert f_score([1, 1, 1], [1, 1, 1], s) == pytest.approx(expected)


def test_sem_score_cohesion_and_single_theme():
    a, b = code(0, 1, 2, 3), code(0, 1, 2, 3, 4, 5, 6, 7)             # 4 bits apart
    mu, coh = theme_stats(np.stack([a, b]), BITS, TIE)                # tie on bits 4..7 -> tie bits (0)
    assert np.array_equal(mu, a)
    assert coh == pytest.approx((1.0 + (1 - 2 * 4 / 64)) / 2)
    assert sem_score([0.8], [float("nan")]) == pytest.approx(0.8)      # K = 1: g = 1
    # two themes: s_1 = s_2 -> sigma = eps, g = 1
    assert partition_score([np.stack([a, b]), code(*range(40))[None]], BITS, TIE) == pytest.approx(
        sparsity_score([2, 1]) + (coh + 1.0) / 2)


def _random_themeset(rng, n_sem=60, cap=6, bits=BITS):
    words = bits // 64
    centers = rng.integers(0, 2**63, size=(5, words), dtype=np.uint64)
    sem = CodeSet(words)
    for i in range(n_sem):
        flip = rng.integers(0, 2**63, size=words, dtype=np.uint64) & rng.integers(0, 2**63, size=words,
                                                                                      dtype=np.uint64)
        sem.append(centers[i % 5] ^ (flip & rng.integers(0, 2**63, size=words, dtype=np.uint64)))
    th = ThemeSet(bits, words, np.zeros(bits, dtype=bool), lambda s: sem.codes[s], cap=cap, attach=0.2, tiny=1)
    return sem, th


@pytest.mark.parametrize("seed", range(4))
def test_incremental_f_matches_the_from_scratch_definition(seed):
    rng = np.random.default_rng(seed)
    sem, th = _random_themeset(rng)
    th.attach_batch(list(range(30)))
    for s in range(30, 60):
        th.attach(s)

    def groups(th):
        return [sem.codes[th.members[t]] for t in th.live().tolist()]

    assert th.score() == pytest.approx(partition_score(groups(th), BITS, th.tie))
    assert all(len(th.members[t]) <= th.cap for t in th.live().tolist())
    assert sorted(s for t in th.live().tolist() for s in th.members[t]) == list(range(60))
    # scoring a candidate merge without applying it == f of the merged partition from scratch
    live = th.live().tolist()
    t, u = live[0], live[1]
    merged = th.members[t] + th.members[u]
    mu, coh = theme_stats(sem.codes[merged], BITS, th.tie)
    want = partition_score([sem.codes[merged]] + [sem.codes[th.members[v]] for v in live if v not in (t, u)],
                           BITS, th.tie)
    assert th._evaluate({t, u}, [(mu, len(merged), coh)]) == pytest.approx(want)


def test_split_picks_the_candidate_that_maximizes_f_and_counts_reassignments():
    rng = np.random.default_rng(7)
    sem, th = _random_themeset(rng, n_sem=60, cap=4)
    t = th.attach(0)
    th.attach_min = -1.0  # everything lands in the first theme until it overflows
    for s in range(1, 5):
        th.attach(s)
    assert th.splits == 1 and len(th) >= 2
    assert all(len(th.members[x]) <= 4 for x in th.live().tolist())
    moved = sum(1 for s in range(5) if th.theme_of[s] != t)
    assert th.reassignments == moved == len(th.moved) > 0


def test_tiny_theme_merges_only_when_f_rises():
    sem = CodeSet(1)
    a = [code(*range(8)), code(*range(9)), code(*range(10))]
    far = code(*range(30, 62))
    for c in a + [far]:
        sem.append(c)
    th = ThemeSet(BITS, 1, TIE, lambda s: sem.codes[s], cap=12, attach=0.5, tiny=1)
    th.attach_batch([0, 1, 2, 3])
    assert len(th) == 2
    before = th.score()
    target = th.consider_merge(th.theme_of[3])
    if target is None:
        assert th.score() == before
    else:
        assert th.score() > before


# -- kNN graph against brute force ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_knn_graph_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    cs = CodeSet(2)
    g = KnnGraph(cs, 128, 5)
    for batch in (rng.integers(0, 2**63, size=(n, 2), dtype=np.uint64) for n in (1, 7, 20, 3, 40)):
        slots = cs.append_many(batch).tolist()
        if len(slots) == 1:
            g.update(slots[0])
        else:
            g.refresh(slots)
    n = cs.n
    full = hamming(cs.codes[:n][:, None, :], cs.codes[:n][None, :, :])
    for u in range(n):
        d = np.delete(full[u], u)
        want = np.sort(d)[:5]
        got = g.dist[u][g.ids[u] >= 0]
        assert np.array_equal(np.sort(got), want)
    # removing a node refills the lists that held it
    cs.kill(0)
    g.remove(0)
    assert not (g.ids[:n] == 0).any()
    for u in range(1, n):
        d = np.delete(full[u], [0, u])
        assert np.array_equal(np.sort(g.dist[u][g.ids[u] >= 0]), np.sort(d)[:5])


def _knn_oracle(cs: CodeSet, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every live slot's k nearest other live slots by a full sort on (distance, slot)."""
    n = cs.n
    live = cs.live()
    full = hamming(cs.codes[:n][:, None, :], cs.codes[:n][None, :, :])
    ids = np.full((n, k), -1, dtype=np.int64)
    dist = np.full((n, k), np.iinfo(np.int32).max, dtype=np.int64)
    for u in live.tolist():
        others = live[live != u]
        order = np.lexsort((others, full[u, others]))[:k]
        ids[u, : order.size] = others[order]
        dist[u, : order.size] = full[u, others[order]]
    return ids, dist


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n, k", [(1, 3), (2, 3), (4, 3), (60, 1), (300, 5), (1500, 8)])
def test_knn_rebuild_is_exact_with_lower_slots_first_on_ties(seed, n, k):
    # clustered codes (a few bits flipped from shared centres, so many distances tie), a block of copies of one
    # code (more than k + 1 at distance 0, so a node may not be among its own k + 1 nearest), dead slots
    rng = np.random.default_rng(seed)
    centres = rng.integers(0, 2**63, size=(max(1, n // 12), 2), dtype=np.uint64)
    codes = centres[rng.integers(0, centres.shape[0], n)]
    noise = rng.integers(0, 2**63, size=(3, n, 2), dtype=np.uint64)
    codes = codes ^ (noise[0] & noise[1] & noise[2])
    codes[: n // 4] = centres[0]
    cs = CodeSet(2)
    cs.append_many(codes)
    for s in rng.choice(n, n // 10, replace=False).tolist():
        cs.kill(s)
    g = KnnGraph(cs, 128, k)
    g.rebuild()
    want_ids, want_dist = _knn_oracle(cs, k)
    assert np.array_equal(g.ids[:n], want_ids)
    assert np.array_equal(g.dist[:n], want_dist)


# -- Stage I, Eq. 4 by hand -----------------------------------------------------------------------------------
def test_greedy_representatives_by_hand():
    nbrs = {1: [(2, 0.9)], 2: [(1, 0.9), (3, 0.8)], 3: [(2, 0.8)]}
    rel = {1: 1.0, 2: 0.9, 3: 0.2}
    # Z = 1 + 0.9 + 0.8 = 2.7; scores: 1 -> .5*1.9/2.7 + .5*1 = .852; 2 -> .5 + .45 = .95; 3 -> .433
    assert greedy_representatives([1, 2, 3], rel, nbrs, 0.5, 3, 0.9) == [2]  # node 2 covers everything
    assert greedy_representatives([1, 2, 3], rel, nbrs, 0.0, 3, 1.0) == [1, 2]  # pure relevance
    assert greedy_representatives([1, 2, 3], rel, nbrs, 1.0, 1, 1.0) == [2]
    assert greedy_representatives([], rel, nbrs, 0.5, 3, 0.9) == []


# -- the hierarchy inside Memory ----------------------------------------------------------------------------------
TOPIC_A = ["I adopted a beagle puppy named Rufus from the animal shelter.",
           "Rufus the beagle loves chewing shoes and chasing the neighbour's cat.",
           "The shelter said beagle puppies need two long walks every day.",
           "I bought Rufus a red collar and a chew toy at the pet store."]
TOPIC_B = ["My pottery class at the community center starts on Monday evening.",
           "The pottery teacher showed us how to glaze a teapot with blue enamel.",
           "I fired my first teapot in the kiln and it cracked at the handle.",
           "Next pottery session we will throw bowls on the wheel."]


def _conversation(mem: Memory, sessions: int = 3) -> list:
    items = []
    for s in range(sessions):
        for k, text in enumerate(TOPIC_A + TOPIC_B):
            items.append({"text": f"{text} (week {s + 1})", "speaker": "Ann" if k % 2 else "Bob",
                          "session_id": f"s{s}", "timestamp": f"2024-0{s + 1}-10T10:{k:02d}:00"})
    return mem.add_many(items)


def test_deep_consolidation_makes_both_knn_graphs_exact():
    rng = np.random.default_rng(3)
    nouns = ("beagle pottery kiln teapot garden tomato bicycle marathon violin guitar recipe lasagna passport flight "
             "hotel museum camera lens novel chapter printer laptop budget invoice").split()
    verbs = "bought fixed painted cooked booked visited repaired sold borrowed finished".split()
    names = "Ann Bob Carla Dev Emma Farid".split()
    mem = Memory(None, config={"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 4}})
    mem.add_many([{"text": f"{rng.choice(names)} {rng.choice(verbs)} the {rng.choice(nouns)} and the "
                           f"{rng.choice(nouns)} near the {rng.choice(nouns)} on day {k}.",
                   "speaker": names[k % 2], "session_id": f"s{k // 20}"} for k in range(240)])
    mem.consolidate("deep")
    h = mem.engine.state().life().hier
    for graph in (h.sem_graph, h.themes.graph):
        assert graph.codes.live().size > graph.k + 1
        want_ids, want_dist = _knn_oracle(graph.codes, graph.k)
        n = graph.codes.n
        assert np.array_equal(graph.ids[:n], want_ids)
        assert np.array_equal(graph.dist[:n], want_dist)
    mem.close()


@pytest.mark.parametrize("seed", range(3))
def test_knn_removals_at_once_leave_the_exact_graph_of_the_survivors(seed):
    rng = np.random.default_rng(seed)
    n, k = 800, 6
    centres = rng.integers(0, 2**63, size=(60, 2), dtype=np.uint64)
    noise = rng.integers(0, 2**63, size=(3, n, 2), dtype=np.uint64)
    codes = centres[rng.integers(0, 60, n)] ^ (noise[0] & noise[1] & noise[2])
    codes[:40] = centres[0]
    cs = CodeSet(2)
    cs.append_many(codes)
    g = KnnGraph(cs, 128, k)
    g.rebuild()
    one = KnnGraph(cs, 128, k)
    one.rebuild()
    gone = rng.choice(n, 250, replace=False).tolist()
    for s in gone:
        cs.kill(s)
    g.remove_many(gone)
    for s in gone:
        one.remove(s)
    want_ids, want_dist = _knn_oracle(cs, k)
    assert np.array_equal(g.ids[:n], want_ids) and np.array_equal(g.dist[:n], want_dist)
    assert np.array_equal(one.ids[:n], want_ids) and np.array_equal(one.dist[:n], want_dist)


def test_deleting_many_messages_relinks_the_semantic_graph_once(monkeypatch):
    """A deletion that drops many semantics leaves the exact kNN graph of the survivors (the reference: a full sort
    on (distance, slot)) and searches the live codes once for all the lists that lost a node, not once per list
    per dropped semantic."""
    rng = np.random.default_rng(5)
    nouns = ("beagle pottery kiln teapot garden tomato bicycle marathon violin guitar recipe lasagna passport flight "
             "hotel museum camera lens novel chapter printer laptop budget invoice").split()
    verbs = "bought fixed painted cooked booked visited repaired sold borrowed finished".split()
    mem = Memory(None, config={"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 4}})
    items = mem.add_many([{"text": f"Ann {rng.choice(verbs)} the {rng.choice(nouns)} and the {rng.choice(nouns)} "
                                   f"near the {rng.choice(nouns)} on day {k}.", "speaker": "Ann",
                           "session_id": f"s{k // 20}"} for k in range(240)])
    mem.consolidate("deep")
    h = mem.engine.state().life().hier
    before = int(h.sem_codes.live().size)
    scans: list[int] = []
    distances = CodeSet.distances
    sem = h.sem_codes
    monkeypatch.setattr(CodeSet, "distances",
                        lambda self, code: (self is sem and scans.append(1)) or distances(self, code))
    searches: list[int] = []
    search = getattr(KnnGraph, "_exact", None)
    monkeypatch.setattr(KnnGraph, "_exact",
                        lambda self, rows=None: (self.codes is sem and searches.append(1)) or search(self, rows),
                        raising=False)
    mem.delete([it.id for it in items[::3]])
    monkeypatch.undo()
    h = mem.engine.state().life().hier
    assert int(h.sem_codes.live().size) < before - 20
    assert scans == [] and len(searches) == 1
    want_ids, want_dist = _knn_oracle(h.sem_codes, h.sem_graph.k)
    n = h.sem_codes.n
    assert np.array_equal(h.sem_graph.ids[:n], want_ids) and np.array_equal(h.sem_graph.dist[:n], want_dist)
    mem.close()


def test_episodes_split_at_sessions_and_topic_shifts():
    mem = Memory(None, config={"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 6}})
    items = _conversation(mem, sessions=2)
    mem.consolidate("deep")
    h = mem.engine.state().life().hier
    sessions = {i.id: i.session_id for i in items}
    for e in h.episodes.values():
        assert len({sessions[m] for m in e.message_ids}) == 1            # never across a session
        assert e.message_ids == sorted(e.message_ids)                     # contiguous blocks, in order
        assert 2 <= len(e.message_ids) <= 6
    first = [e for e in h.episodes.values() if e.session == "s0"]
    cut = {e.message_ids[0] for e in first}
    assert items[4].id in cut                                             # the beagle -> pottery shift
    assert all(e.summary for e in h.episodes.values())


def test_semantics_keep_provenance_and_merge_near_duplicates():
    mem = Memory(None)
    a = mem.add("We adopted a beagle named Rufus from the shelter in Portland.", speaker="Ann", session_id="s1")
    mem.add("Lunch was fine.", speaker="Bob", session_id="s1")
    b = mem.add("We adopted a beagle named Rufus from the shelter in Portland.", speaker="Ann", session_id="s2")
    mem.add("ok", speaker="Bob", session_id="s3")
    mem.consolidate("deep")
    h = mem.engine.state().life().hier
    rufus = [s for s in h.semantics.values() if "Rufus" in s.text]
    assert len(rufus) == 1 and set(rufus[0].message_ids) == {a.id, b.id}
    assert len(rufus[0].episode_ids) == 2 and h.dedup_merges >= 1
    assert rufus[0].text == "Ann: We adopted a beagle named Rufus from the shelter in Portland."


def test_themes_cap_provenance_and_deletion():
    mem = Memory(None, config={"hierarchy": {"theme_cap": 4}})
    items = _conversation(mem, sessions=4)
    mem.consolidate("deep")
    life = mem.engine.state().life()
    h = life.hier
    ids = {i.id for i in items}
    assert len(h.themes) >= 2 and all(len(h.themes.members[t]) <= 4 for t in h.themes.live().tolist())
    assert all(set(s.message_ids) <= ids for s in h.semantics.values())
    stats = mem.stats()["hierarchy"]
    assert stats["semantics"] == len(h.semantics) and stats["themes"] == len(h.themes)
    assert stats["reassignments"] >= stats["splits"]
    # deleting every source of a semantic removes it, its theme membership and its strength record
    victim = next(iter(h.semantics.values()))
    mem.delete(victim.message_ids)
    assert victim.id not in h.semantics and victim.id not in h.themes.theme_of
    assert victim.id not in life.units["semantic"]
    assert all(set(s.message_ids) <= ids - set(victim.message_ids) for s in h.semantics.values())
    mem.clear()
    assert not h.semantics and not h.episodes and len(h.themes) == 0


def test_an_episode_a_deletion_left_is_described_by_the_messages_left_in_it(tmp_path):
    """Deleting a message of an episode removed it from the episode's messages but not from its description: the
    episode kept the deleted message's speaker (["Bob", "Ann"] with no message of Bob left), its time (t0 9:00
    instead of 11:00; the date its topic's heading shows), its seq and its tokens (82 instead of 68). They are now
    those of the messages left, as an episode built from them is described, and read back so after a restart."""
    path = tmp_path / "ep.db"
    with Memory(path, config={"hierarchy": {"batch_messages": 4}}) as mem:
        items = mem.add_many(
            [{"text": "Bob adopted a beagle puppy named Rufus from the shelter downtown.", "speaker": "Bob",
              "session_id": "s1", "timestamp": "2024-01-01T09:00:00"}]
            + [{"text": f"Ann says the beagle Rufus chewed the shelter collar again number {k}.", "speaker": "Ann",
                "session_id": "s1", "timestamp": f"2024-01-01T1{k + 1}:00:00"} for k in range(4)])
        mem.consolidate("deep")
        h = mem.engine.state().life().hier
        assert [e.message_ids for e in h.episodes.values()] == [[i.id for i in items]]
        mem.delete([items[0].id])
        left = items[1:]
        want = ([i.id for i in left], left[0].seq, left[-1].seq, left[0].timestamp.timestamp(),
                left[-1].timestamp.timestamp(), ["Ann"], sum(i.n_tokens for i in left))

        def described(mem: Memory) -> list[tuple]:
            return [(e.message_ids, e.first_seq, e.last_seq, e.t0, e.t1, e.speakers, e.n_tokens)
                    for e in mem.engine.state().life().hier.episodes.values()]

        assert described(mem) == [want]
    with Memory(path, config={"hierarchy": {"batch_messages": 4}}) as again:
        assert described(again) == [want]


def test_batched_eager_and_one_by_one_writes_build_the_same_hierarchy():
    lazy, eager = Memory(None), Memory(None, config={"hierarchy": {"consolidate_on_add": True}})
    single = Memory(None)
    for mem in (lazy, eager, single):
        for k in range(3):  # several batches, as an agent would add them
            items = ([{"text": f"{t} (week 1)", "speaker": "Ann" if j % 2 else "Bob", "session_id": "s0",
                       "timestamp": f"2024-01-10T10:{j:02d}:00"} for j, t in enumerate(TOPIC_A + TOPIC_B)]
                     if k == 0 else [{"text": t + f" ({k})", "speaker": "Ann", "session_id": f"x{k}"}
                                     for t in TOPIC_B + TOPIC_A])
            if mem is single:
                for it in items:
                    mem.add(**it)
            else:
                mem.add_many(items)
        mem.consolidate("light")  # what no write completed: the last flush units
    keys = ("messages", "episodes", "semantics", "themes", "reassignments", "splits", "merges", "f_score",
            "current_buffer", "dedup_merges")
    a, b, c = (m.stats()["hierarchy"] for m in (lazy, eager, single))
    assert a["semantics"] > 0 and {k: a[k] for k in keys} == {k: b[k] for k in keys} == {k: c[k] for k in keys}


def test_current_buffer_is_always_retrievable():
    mem = Memory(None)
    _conversation(mem, sessions=1)
    new = mem.add("The plumber fixes the leaking sink on Thursday at noon.", speaker="Ann", session_id="s9")
    h = mem.engine.state().life().hier
    assert any(b.id == new.id for b in h.buffer)                  # not consolidated yet
    rec = mem.recall("When is the plumber coming?", budget_tokens=80)
    assert new.id in [m.id for m in rec.messages]


def test_recall_lists_units_with_provenance_and_respects_the_budget():
    mem = Memory(None)
    items = _conversation(mem, sessions=3)
    mem.consolidate("light")  # a store this small fills no consolidation batch by itself
    ids = {i.id for i in items}
    for mode in ("flat", "units", "stage1", "stage2", "full"):
        mem.engine.rt.config = mem.config.replace(hierarchy=mem.config.hierarchy.__class__(recall=mode))
        rec = mem.recall("What did the pottery teacher show about the teapot glaze?", budget_tokens=120)
        assert rec.tokens <= 120 and "teapot" in rec.text
        for u in rec.units:
            assert u["level"] in ("theme", "semantic") and set(u["message_ids"]) <= ids
        assert (mode == "flat") == (not rec.units)


@pytest.mark.parametrize("mode", ["evidence", "units", "stage1", "stage2", "full"])
def test_units_of_a_filtered_or_time_travelling_recall_hold_only_admitted_messages(mode):
    """Units are built over the whole namespace: a fact of a message the filter (or ``as_of``) leaves out, near
    duplicates of admitted messages merged into it, came back in ``Recall.units`` with its text and ids (a session
    filter listed 12 messages of the other session and its "secret" sentence; ``as_of`` 8 to 16 later messages).
    Every unit listed now holds only messages the same call's ``list`` / time scope admits."""
    import time

    mem = Memory(None, config={"hierarchy": {"recall": mode, "batch_messages": 4}})
    public = mem.add_many({"text": f"The launch code for project apollo is {1000 + k} alpha, said the public note",
                           "speaker": "Bob", "session_id": "public"} for k in range(12))
    time.sleep(0.01)  # ingestion times on either side of as_of, whatever the clock's resolution
    as_of = time.time()
    time.sleep(0.01)
    mem.add_many({"text": f"Ann: the secret launch code for project apollo is {2000 + k} alpha", "speaker": "Ann",
                  "session_id": "private"} for k in range(12))
    mem.consolidate("deep")
    query = "launch code project apollo"
    assert any("secret" in u["text"] for u in mem.recall(query, budget_tokens=300).units)  # units quote both
    admitted = {i.id for i in mem.list(filter={"session_id": "public"})}
    assert admitted == {i.id for i in public}
    for rec in (mem.recall(query, budget_tokens=300, filter={"session_id": "public"}),
                mem.recall(query, budget_tokens=300, as_of=as_of)):
        assert rec.messages and {m.id for m in rec.messages} <= admitted
        for u in rec.units:
            assert set(u["message_ids"]) <= admitted and "secret" not in u["text"], u


def test_snapshot_round_trip_and_rebuild(tmp_path, caplog):
    path = tmp_path / "h.db"
    keys = ("messages", "episodes", "semantics", "themes", "reassignments", "splits", "merges", "f_score",
            "current_buffer", "dedup_merges")
    with Memory(path) as mem:
        _conversation(mem, sessions=3)
        mem.add("An unconsolidated remark about beagles.", speaker="Ann", session_id="s9")
        stats = {k: mem.stats()["hierarchy"][k] for k in keys}
        rec = mem.recall("beagle collar", budget_tokens=100).text
    with caplog.at_level(logging.INFO, logger="hippo.engine"):
        with Memory(path) as mem:
            assert {k: mem.stats()["hierarchy"][k] for k in keys} == stats
            assert mem.recall("beagle collar", budget_tokens=100).text == rec
    assert not caplog.records  # loaded, not rebuilt
    # a corrupted snapshot is rebuilt from the messages, to the same structure
    with Memory(path) as mem:
        blob = bytearray(mem.engine.rt.store.get_units("default", "derived.life"))
        blob[len(blob) // 2] ^= 0xFF
        mem.engine.rt.store.put_units("default", "derived.life", bytes(blob))
    with pytest.raises(Exception):
        snapshot.load(bytes(blob))
    with caplog.at_level(logging.WARNING, logger="hippo.engine"):
        with Memory(path) as mem:
            assert {k: mem.stats()["hierarchy"][k] for k in keys} == stats
    assert any("rebuilding" in r.message for r in caplog.records)


def test_hierarchy_can_be_disabled():
    mem = Memory(None, config={"hierarchy": {"enabled": False}})
    _conversation(mem, sessions=1)
    assert mem.topics() == []
    assert "teapot" in mem.recall("teapot kiln", budget_tokens=60).text
    assert not math.isnan(mem.strength(mem.list()[0].id)[mem.list()[0].id])


def _toy_embed(texts):
    """A deterministic bag-of-words embedding (64 dims) standing in for a real model."""
    import hashlib

    out = []
    for t in texts:
        v = np.zeros(64)
        for w in t.lower().split():
            h = int.from_bytes(hashlib.blake2b(w.strip(".,!?").encode(), digest_size=8).digest(), "little")
            v[h % 64] += 1.0 if (h >> 8) & 1 else -1.0
        out.append(v.tolist())
    return out


def test_units_use_embedding_codes_when_embeddings_are_given(tmp_path):
    path = tmp_path / "e.db"
    with Memory(path, embed=_toy_embed) as mem:
        items = _conversation(mem, sessions=3)
        mem.consolidate("light")
        life = mem.engine.state().life()
        h = life.hier
        assert h.external_codes is not None
        codes = mem.engine.state().codes
        index, owners = codes.index, codes.owners
        stored = np.ascontiguousarray(index.get(np.arange(len(owners)))).view(np.uint64).reshape(len(owners), -1)
        for k, mid in enumerate(owners):
            if mid in h.msg_slot:
                assert np.array_equal(h.message_code(mid), stored[k])
        for sem in h.semantics.values():
            assert np.array_equal(h.sem_codes.codes[sem.id], h.message_code(sem.message_ids[0]))
        rec = mem.recall("teapot glaze in the kiln", budget_tokens=120)
        assert "teapot" in rec.text and rec.units
        keys = ("episodes", "semantics", "themes", "reassignments")
        stats = {k: mem.stats()["hierarchy"][k] for k in keys}
    with Memory(path, embed=_toy_embed) as mem:
        assert {k: mem.stats()["hierarchy"][k] for k in keys} == stats
        h = mem.engine.state().life().hier
        assert all(np.array_equal(h.sem_codes.codes[x.id], h.message_code(x.message_ids[0]))
                   for x in h.semantics.values())
    assert len(items) == 24


def test_writes_consolidate_complete_batches_and_reads_never_do():
    mem = Memory(None, config={"hierarchy": {"batch_messages": 4, "flush_tokens": 40}})
    for k in range(4):
        mem.add_many({"text": t + f" ({k})", "speaker": "Ann", "session_id": f"x{k}"} for t in TOPIC_B + TOPIC_A)
    h = mem.engine.state().life().hier
    assert h.episodes and not h.ready_batches   # every complete batch became units as it was written
    keys = ("messages", "episodes", "semantics", "themes", "current_buffer", "reassignments")
    before = {k: mem.stats()["hierarchy"][k] for k in keys}
    rec = mem.recall("pottery class", budget_tokens=200)
    mem.search("pottery class")
    mem.topics()
    assert rec.messages and {k: mem.stats()["hierarchy"][k] for k in keys} == before
    assert mem.consolidate("light")["current_buffer"] < before["current_buffer"]  # the explicit call folds


def test_message_terms_keep_words_split_into_several_tokens():
    from hippo.text.vocab import vocab

    mem = Memory(None)
    item = mem.add("Somusumi is moving to Milemi in November.", speaker="Ann", session_id="s1")
    life = mem.engine.state().life()
    terms = lifecycle.message_terms(life, mem.engine.state().index, item.id)
    # the query side stems whole words; a name cl100k splits into pieces must still match (dormant cues, Stage II)
    assert set(vocab().stem_ids(["somusumi", "milemi"])) <= terms


def test_episodes_partition_the_messages_into_stretches_of_one_session(tmp_path):
    """``Memory.episode``: every message is in its own episode; two messages share an episode exactly when each is
    in the other's (episodes partition the namespace); an episode is one session's messages, consecutive among
    that session's; it is the same before and after a reopen and after a light consolidation, except that the
    open episode (messages still in the CURRENT buffer) is cut by it; a deleted message leaves its episode."""
    path = tmp_path / "e.db"
    mem = Memory(path)
    topics = ["tomatoes in the greenhouse", "the bike race through the hills", "a sourdough starter"]
    items = mem.add_many({"text": f"note {i} on {topics[(i // 25) % 3]}", "session_id": f"s{i // 35}"}
                         for i in range(120))
    ids = [i.id for i in items]
    session = {i.id: i.session_id for i in items}

    def check(m: Memory) -> dict[int, tuple[int, ...]]:
        eps = {i: tuple(x.id for x in m.episode(i)) for i in ids if i in live}
        for i, ep in eps.items():
            assert i in ep and list(ep) == sorted(ep)
            assert {session[j] for j in ep} == {session[i]}
            same = [j for j in ids if session[j] == session[i] and j in live]
            k = same.index(ep[0])
            assert same[k: k + len(ep)] == list(ep)  # consecutive among the session's messages
            for j in ep:
                assert eps[j] == ep
        return eps

    live = set(ids)
    before = check(mem)
    mem.close()
    with Memory(path) as again:
        assert check(again) == before
        again.consolidate("light")
        after = check(again)
        assert {ep for ep in before.values() if len(ep) > 1} & set(after.values())  # cut episodes stay as they were
        gone = after[ids[3]][0] if len(after[ids[3]]) > 1 else ids[3]
        again.delete([gone])
        live.discard(gone)
        assert all(gone not in ep for ep in check(again).values())
        with pytest.raises(NotFound):
            again.episode(gone)
    with Memory(None, config={"hierarchy": {"enabled": False}}) as flat:
        one = flat.add("a lone note")
        with pytest.raises(NotFound, match="hierarchy"):
            flat.episode(one.id)
        with pytest.raises(InvalidInput, match="message_id"):
            flat.episode("seven")


def _numbered(stems: list[str]):
    """A vocabulary that met ``stems`` first, in that order (stem ids follow what a process read first)."""
    from hippo.text.vocab import Vocab

    v = Vocab()
    for s in stems:
        v.stem_id(s, create=True)
    return v


def test_vectors_and_codes_do_not_depend_on_the_order_stems_were_first_read(monkeypatch):
    from hippo.engine.hierarchy import codes as codes_mod

    rng = np.random.default_rng(7)
    words = [f"stem{i}" for i in range(400)]
    bags = [rng.choice(len(words), size=int(rng.integers(3, 40)), replace=False) for _ in range(300)]
    weights = [rng.uniform(0.2, 9.0, size=b.size) * (1 + np.log(rng.integers(1, 4, size=b.size))) for b in bags]
    out = []
    for order in (words, words[::-1]):
        v = _numbered(order)
        monkeypatch.setattr(codes_mod, "vocab", lambda v=v: v)
        coder = codes_mod.Coder(256)
        ids = [np.asarray([v.stem_id(words[i]) for i in b], dtype=np.int64) for b in bags]
        # bags as bag_pairs hands them over: sorted by stem id, which orders the terms differently per numbering
        group = np.repeat(np.arange(len(bags)), [b.size for b in bags])
        flat_ids, flat_w = np.concatenate(ids), np.concatenate(weights)
        order_ = np.lexsort((flat_ids, group))
        acc = codes_mod.bag_vectors(coder, group[order_], flat_ids[order_], flat_w[order_], len(bags))
        one = np.stack([coder.accumulate_ids(i[np.argsort(i)], w[np.argsort(i)]) for i, w in zip(ids, weights)])
        out.append((acc, codes_mod.sign_many(coder, acc), one))
    (a1, c1, o1), (a2, c2, o2) = out
    assert np.array_equal(a1, a2) and np.array_equal(c1, c2) and np.array_equal(o1, o2)
    assert np.array_equal(a1, o1)   # the batched and the one-bag sums agree too
    # and they are the sums, to float32 precision (the weights are rounded to 2**-20 first)
    ref = np.stack([w @ coder.rows(np.asarray([v.stem_id(words[i]) for i in b])).astype(np.float64)
                    for b, w in zip(bags, weights)])
    assert np.allclose(a2, ref, rtol=1e-6, atol=1e-4)


def test_a_store_builds_the_same_hierarchy_whatever_the_process_read_before(monkeypatch):
    """Stem ids are numbered in the order a process first reads each stem, so a process that read other text
    first numbers them differently; the hierarchy built from the same messages must not change with that."""
    from hippo.text import tokenizer
    from hippo.text import vocab as vocab_mod
    from hippo_bench.scale import SyntheticConversation

    def convo(seed: int, n: int) -> list[dict]:
        return SyntheticConversation(seed, n_nouns=3000, n_people=40, n_places=30, n_speakers=8).generate(
            n, n_needles=0).items

    items = convo(11, 90_000)
    other = " ".join(it["text"] for it in convo(5, 20_000)[::-1])
    built = []
    for warm in (False, True):
        v = vocab_mod.Vocab()
        if warm:
            v.resolve(np.asarray(tokenizer.encoding().encode(other), dtype=np.int64))
        monkeypatch.setattr(vocab_mod, "_vocab", v)
        mem = Memory(None)
        for lo in range(0, len(items), 500):
            mem.add_many(items[lo: lo + 500])
        h = mem.engine.state().life().hier
        th = h.themes
        built.append(({k: (s.text, h.sem_codes.codes[k].tobytes()) for k, s in h.semantics.items()},
                      [sorted(m) if th.codes.alive[t] else None for t, m in enumerate(th.members)],
                      h.ep_codes.codes[: h.ep_codes.n].tobytes(), th.merges, th.splits))
        mem.close()
    assert len(built[0][0]) > 1000
    assert built[0] == built[1]


def test_index_vectors_are_kept_once_for_every_namespace_not_per_namespace():
    """Stem ids are numbered for the whole process, so a table of index vectors by id spans every stem it met: kept
    per loaded namespace, each namespace held the vectors of the process's whole vocabulary. Held once, they take at
    most twice the stems met (the table grows by doubling), however many namespaces use them."""
    import inspect
    import random
    import tracemalloc

    from hippo.engine.hierarchy import codes as codes_mod
    from hippo.text import tokenizer
    from hippo.text.vocab import vocab

    enc = tokenizer.encoding()
    words = []
    for t in range(2000, 40000):
        piece = enc.decode_single_token_bytes(t)
        if piece[:1] == b" " and piece[1:].isalpha() and piece[1:].islower() and len(piece) > 4:
            words.append(piece[1:].decode())
    rng = random.Random(3)
    lines, first = inspect.getsourcelines(codes_mod.Coder.rows)
    mem = Memory(None)
    tracemalloc.start()
    try:
        for k in range(8):  # each namespace with words of its own: the process's vocabulary grows with each
            view = mem.using(f"user{k}")
            mine = rng.sample(words, 600)
            items = [{"text": " ".join(rng.choice(mine) for _ in range(10)) + ".", "speaker": "Ann" if i % 2 else "Bo",
                      "session_id": f"s{i // 20}"} for i in range(120)]
            view.add_many(items)
            view.recall(items[3]["text"], budget_tokens=100)
            assert view.engine.state().life().hier.ep_codes.n > 0  # the codes were made
        held = sum(t.size for t in tracemalloc.take_snapshot().traces
                   if t.traceback[0].filename == codes_mod.__file__
                   and first <= t.traceback[0].lineno < first + len(lines))
    finally:
        tracemalloc.stop()
        mem.close()
    bits = mem.config.hierarchy.code_bits
    assert held <= 2 * vocab().n_stems * (bits + 1) + 4096


@pytest.mark.parametrize("mode", ["evidence", "units", "full"])
def test_a_question_s_new_words_give_the_process_no_stem(mode):
    """Stem ids are numbered for the whole process: a question's new word given one (and an index vector) stayed
    for the life of the process, so a server asked questions of new words grew without bound (two stems a
    question). Only the words of stored text get ids; the recall of a question is the same whatever ids exist."""
    from hippo.engine.hierarchy import codes as codes_mod
    from hippo.text.vocab import vocab

    mem = Memory(None, config={"hierarchy": {"recall": mode}})
    words = "pottery garden guitar sister budget concert painting marathon".split()
    mem.add_many([{"text": f"My {words[i % 8]} and the {words[(i * 3) % 8]} took the whole week {i}.",
                   "speaker": "Ann" if i % 2 else "Bo", "session_id": f"s{i // 10}"} for i in range(60)])
    mem.recall("pottery garden", budget_tokens=200)
    rows = lambda: sum(r.table[1].size for s in codes_mod._index_rows.values() for r in s.values())  # noqa: E731
    stems, held = vocab().n_stems, rows()
    new = [f"quorvex{k}ilat zembrudite{k}" for k in range(40)]
    got = [mem.recall(f"what about the pottery and {q}?", budget_tokens=200) for q in new]
    assert vocab().n_stems == stems and rows() == held
    # once the words have ids (a message holding them was read), the same questions are answered alike
    vocab().stem_ids([w for q in new for w in q.split()])
    again = [mem.recall(f"what about the pottery and {q}?", budget_tokens=200) for q in new]
    assert [(r.text, [m.id for m in r.messages]) for r in got] == [(r.text, [m.id for m in r.messages]) for r in again]
    mem.close()


def test_the_code_of_a_question_s_new_words_is_the_code_they_get_with_ids():
    """A question's stems without ids get their index vectors from their text: the code is the one the same stems
    have once they hold ids (the path every stem took before)."""
    from hippo.text.vocab import vocab

    mem = Memory(None, config={"hierarchy": {"recall": "full"}})
    mem.add_many([{"text": f"The pottery class on day {i} was about glazes and kilns.", "speaker": "Ann",
                   "session_id": f"s{i // 10}"} for i in range(40)])
    mem.recall("pottery", budget_tokens=100)
    h = mem.engine.state().life().hier
    known = vocab().known_ids(["pottery", "kiln"])
    assert min(known) >= 0
    new = ["vextramolin", "strubenquay", "plorritude"]
    assert vocab().known_ids(new) == [-1, -1, -1]
    got = h.query_code(known, new)
    vec = h.coder.index_vector(new[0])
    weights = {"pottery": 1.5, new[1]: 0.75, new[2]: 2.0}
    coded = h.coder.code(weights)
    assert vocab().known_ids(new) == [-1, -1, -1]     # computing them gave no ids
    ids = known + vocab().stem_ids(new)
    assert np.array_equal(got, h.query_code(ids))
    assert np.array_equal(vec, h.coder.rows(np.array([ids[2]]))[0].astype(np.float32))
    assert np.array_equal(coded, h.coder.code(weights))
    mem.close()


def test_a_question_word_stemmed_whole_only_in_a_message_read_during_the_recall_still_covers_it():
    """A name cl100k writes in pieces has its whole stem only once a message's terms are computed, which recall
    does for its candidates after the question was analysed: the question's word, without an id then, must still
    count as covered by that message (as when its id was made by the question)."""
    from hippo.engine.topdown import _Scorer
    from hippo.text.vocab import vocab

    mem = Memory(None)
    item = mem.add("Zorvakulim is moving to Porto in November.", speaker="Ann", session_id="s1")
    life = mem.engine.state().life()
    assert vocab().known_ids(["zorvakulim"]) == [-1]
    sc = _Scorer(life, ["zorvakulim", "qwertavinum"])
    terms = lifecycle.message_terms(life, mem.engine.state().index, item.id)
    assert vocab().known_ids(["zorvakulim"])[0] in terms
    # both words are unseen by the hierarchy (df 0): equal weights, and the message covers one of the two
    assert sc.coverage(terms) == pytest.approx(0.5)
    mem.close()


def test_a_message_s_words_longer_than_any_question_s_get_no_stem():
    """A message's whole words are stemmed for query-term coverage; a pasted key or blob, longer than any word a
    question can ask for, got a stem the process's vocabulary kept for good (200 messages with a 20,000-character
    key: 4 MB of stems). Its stem is left out; the message's other words, and a long word a question can ask for,
    keep theirs."""
    from hippo.text import query
    from hippo.text.vocab import vocab

    mem = Memory(None)
    key = "k7" * 2_000
    word = "zq" * (query.MAX_WORD_CHARS // 2)        # the longest word a question asks for
    item = mem.add(f"Zorvuplex keeps the key {key} next to {word} in the drawer.", speaker="Ann", session_id="s1")
    life = mem.engine.state().life()
    terms = lifecycle.message_terms(life, mem.engine.state().index, item.id)
    assert vocab().known_ids([key]) == [-1]
    assert {vocab().known_ids([w])[0] for w in ("zorvuplex", word, "drawer")} <= terms
    mem.close()


def test_document_frequencies_are_kept_for_the_namespace_s_own_stems():
    """Stem ids are numbered for the whole process: a table of document frequencies by id had a slot for every
    stem the process had met, in each loaded namespace (8 bytes a stem, however few the namespace held). A
    namespace's table holds its own stems, each with the number of its messages holding it."""
    import random

    from hippo.text import tokenizer
    from hippo.text.vocab import content_stems

    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    rng = random.Random(9)
    words = sorted({"".join(rng.sample(syllables, 3)) for _ in range(6000)})
    rng.shuffle(words)
    mem = Memory(None)
    big = mem.using("big")
    big.add_many([{"text": " ".join(rng.sample(words[:4000], 12)) + ".", "speaker": "Ann", "session_id": f"s{i // 20}"}
                  for i in range(300)])
    big.recall(words[0], budget_tokens=50)
    small = mem.using("small")
    texts = [" ".join(rng.sample(words[5000:5030], 6)) + "." for _ in range(40)]
    items = small.add_many([{"text": t, "speaker": "Bo", "session_id": f"s{i // 10}"} for i, t in enumerate(texts)])
    small.consolidate("light")
    h = small.engine.state().life().hier
    encoded = [it.text for it in items if it.id in h.msg_slot]   # the messages counted (the open unit's are not)
    assert h.n_docs == len(encoded) >= 20
    want: dict[int, int] = {}
    for t in encoded:  # the oracle: each message's distinct content stems, counted once per message
        for s in set(content_stems(tokenizer.encode(t)).tolist()) - {-1}:
            want[s] = want.get(s, 0) + 1
    assert len(h.df) == len(want)
    ids = np.asarray(sorted(want), dtype=np.int64)
    assert h.df.held().tolist() == ids.tolist()
    assert h.df.get(ids).tolist() == [want[i] for i in ids.tolist()]
    assert h.df.get([-1, int(ids.max()) + 10_000]).tolist() == [0, 0]
    mem.close()


def test_a_stem_id_is_published_after_its_stem():
    """Questions look stem ids up without the vocabulary's lock while a recall in another thread may be adding a
    message's words: an id must never be found before the stem it indexes is stored (the index vector of the id
    reads it)."""
    from hippo.text.vocab import Vocab

    v = Vocab()
    seen: list[tuple[str, int]] = []

    class Watched(list):
        def append(self, stem):
            seen.append((stem, v.stem_index.get(stem, -1)))   # what a reader could find while the stem is added
            super().append(stem)

    v.stems = Watched()
    ids = v.stem_ids(["pottery", "kiln", "pottery"])
    assert ids == [0, 1, 0] and list(v.stems) == ["pottery", "kiln"]
    assert seen == [("pottery", -1), ("kiln", -1)]


def test_message_terms_keep_nothing_per_message_beyond_the_term_table(tmp_path):
    """A message's terms are read from the lifecycle's term table (saved with it): asking for every message of a
    namespace again after a reopen keeps nothing per message (a cache of their sets held about 1 KB a message, up to
    20,000 messages a namespace), and gives the sets computed before."""
    import gc
    import tracemalloc

    path = str(tmp_path / "m.db")
    words = ["lantern", "harbour", "violin", "orchard", "glacier", "saddle", "meadow", "pepper", "quartz", "ribbon"]
    with Memory(path) as mem:
        mem.add_many([{"text": f"{words[i % 10]} {words[(i * 3 + 1) % 10]} {words[(i * 7 + 2) % 10]} and the "
                               f"{words[(i + 5) % 10]} near Somu{i}mi's {words[(i * 9 + 4) % 10]} garden number {i}",
                       "speaker": "Ann", "session_id": f"s{i // 20}"} for i in range(1500)])
        state = mem.engine.state()
        life = state.life()
        ids = [i.id for i in mem.list(limit=2000)]
        before = {mid: lifecycle.message_terms(life, state.index, mid) for mid in ids}
    with Memory(path) as mem:
        state = mem.engine.state()
        life = state.life()
        assert len(life.terms) == len(ids)  # the table came back with the lifecycle
        gc.collect()
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            for mid in ids:
                lifecycle.message_terms(life, state.index, mid)
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - start
        finally:
            tracemalloc.stop()
        assert {mid: lifecycle.message_terms(life, state.index, mid) for mid in ids} == before
        assert kept < 64 * len(ids), kept  # a kept set of a message's ten terms is about 1 KB


def test_the_term_table_finds_every_message_without_a_python_entry_for_each():
    """The term table finds a message's terms through its sorted ids (16 bytes a message) and a dict of the entries
    added since they were last merged, never one of every message (about 100 bytes each); every message added in
    any order reads back its terms (a dict the oracle), after a save and load too, and a message held twice is
    refused."""
    import random

    ids = [10_000_000 + 3 * k for k in range(30_000)]
    random.Random(11).shuffle(ids)
    want = {i: np.arange(i % 11, dtype=np.int32) + (i % 5) for i in ids}
    table = lifecycle.TermTable()
    for start in range(0, len(ids), 7):
        part = ids[start: start + 7]
        table.add(part, [want[i] for i in part])
    table.add(ids[:50], [np.zeros(3, dtype=np.int32)] * 50)  # held already: kept as they were
    assert len(table) == len(ids)
    assert len(table._recent) < lifecycle._TERMS_MERGED
    for i in ids:
        assert np.array_equal(table.get(i), want[i])
    assert table.get(10_000_001) is None and table.get(1) is None and table.get(99_999_999) is None
    back = lifecycle.TermTable.from_arrays(table.arrays(), np.arange(16))
    assert len(back._recent) == 0
    for i in ids[::13]:
        assert np.array_equal(back.get(i), want[i])
    twice = table.arrays()
    twice["ids"] = twice["ids"].copy()
    twice["ids"][5] = twice["ids"][9]
    with pytest.raises(ValueError, match="twice"):
        lifecycle.TermTable.from_arrays(twice, np.arange(16))
