"""Episodes' summary spans, kept as one flat tuple of ints an episode: the triples round trip, and a store's spans
against a list of triples per episode kept beside it through random deletions, a save and a reopen (the summary is
the text of its spans)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo import Memory
from hippo.engine.hierarchy import episodes as ep_mod
from tests.conversation import NOUNS, VERBS

triple = st.tuples(st.integers(0, 2**62), st.integers(0, 4000), st.integers(0, 4000))


@given(st.lists(triple, max_size=20))
def test_flat_spans_round_trip(spans):
    flat = ep_mod.flat_spans(spans)
    assert type(flat) is tuple and len(flat) == 3 * len(spans)
    assert ep_mod.span_triples(flat) == spans
    assert ep_mod.flat_spans([list(sp) for sp in spans]) == flat


def _text(rng, k: int) -> str:
    return f"{rng.choice(['Ann', 'Bob'])} {rng.choice(VERBS)} the {rng.choice(NOUNS)} for {k * 7} dollars on " \
           f"Monday. It was {rng.choice(NOUNS)} time."


def _spans(h) -> dict[int, list[tuple[int, int, int]]]:
    return {eid: ep_mod.span_triples(h.episodes[eid].summary_spans) for eid in sorted(h.episodes)}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**32 - 1), st.integers(60, 200), st.lists(st.integers(0, 10**6), max_size=3))
def test_spans_through_deletions_save_and_reopen(tmp_path_factory, seed, n, deletions):
    rng = np.random.default_rng(seed)
    path = str(tmp_path_factory.mktemp("spans") / "m.db")
    cfg = {"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 5}}
    mem = Memory(path, config=cfg)
    items = mem.add_many([{"text": _text(rng, k), "speaker": "Ann" if k % 2 else "Bob",
                           "session_id": f"s{k // 25}"} for k in range(n)])
    mem.consolidate()
    h = mem.engine.state().life().hier
    oracle = _spans(h)
    assert oracle and all(oracle.values())
    alive = {it.id for it in items}
    for d in deletions:
        gone = sorted(alive)[d % len(alive):: 5][:8]
        mem.delete(gone)
        alive -= set(gone)
        # the oracle: each episode keeps the spans of the messages that survive, in order; an episode left without
        # any opens with its first surviving message
        h = mem.engine.state().life().hier
        for eid in list(oracle):
            if eid not in h.episodes:
                del oracle[eid]
                continue
            kept = [sp for sp in oracle[eid] if sp[0] in alive]
            if not kept:
                first = h.episodes[eid].message_ids[0]
                kept = [(first, 0, ep_mod.span_triples(h.episodes[eid].summary_spans)[0][2])]
            oracle[eid] = kept
        assert _spans(h) == oracle
    texts = {it.id: it for it in mem.list(limit=n + 10)}
    mem.close()
    mem = Memory(path, config=cfg)
    h = mem.engine.state().life().hier
    assert _spans(h) == oracle
    for eid, spans in oracle.items():
        e = h.episodes[eid]
        assert type(e.summary_spans) is tuple
        assert all(mid in texts for mid, _, _ in spans)
        assert e.summary  # the text of its spans
    mem.close()


def test_a_facts_further_fields_survive_a_save_and_a_fact_without_any_holds_none():
    from hippo.engine.hierarchy import persist as hier_persist

    rng = np.random.default_rng(1)
    mem = Memory(None, config={"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 5}})
    mem.add_many([{"text": _text(rng, k), "speaker": "Ann", "session_id": f"s{k // 25}"} for k in range(120)])
    mem.consolidate()
    life = mem.engine.state().life()
    with life.lock:
        life._record_units()
        h = life.hier
        sids = sorted(h.semantics)
        assert len(sids) > 2 and all(h.semantics[s].extra is None for s in sids)
        h.semantics[sids[1]].extra = {"source": "tool", "n": 3}
        meta, arrays = hier_persist.dump(h)
        got = hier_persist.load(life.hcfg, meta, arrays, lambda mid: None)
    assert got.semantics[sids[1]].extra == {"source": "tool", "n": 3}
    assert all(got.semantics[s].extra is None for s in sids if s != sids[1])
    import copy
    assert copy.deepcopy(got.semantics[sids[0]]).extra is None
    assert copy.deepcopy(got.semantics[sids[1]]).extra == {"source": "tool", "n": 3}
    mem.close()
