"""Evidence-per-token packing (hippo.engine.evidence) and dense re-scoring (hippo.index.embedding).

References are hand-computed values, brute force over small cases, and numpy float cosines."""

from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pytest

from hippo import Memory
from hippo.engine import evidence
from hippo.index.embedding import EmbeddingCodes, quantize
from hippo.base.errors import HippoError, InvalidInput


def test_verbosity_prior_by_hand():
    # overall median 10; group 0 median 4 (terse: 1), group 1 median 40 (verbose: sqrt(10 / 40) = 0.5)
    lengths = [4, 4, 40, 40, 10, 4, 40]
    groups = [0, 0, 1, 1, 0, 0, 1]
    assert np.median(lengths) == 10
    p = evidence.verbosity_prior(lengths, groups)
    assert p.tolist() == pytest.approx([1, 1, 0.5, 0.5, 1, 1, 0.5])
    assert evidence.verbosity_ratio(lengths, groups) == pytest.approx(4.0)
    # everyone alike: no prior, ratio 1
    assert evidence.verbosity_prior([5, 5, 5], [0, 1, 2]).tolist() == [1, 1, 1]
    assert evidence.verbosity_prior([5, 6, 7], [0, 1, 2]).tolist() == pytest.approx([1, 1, (6 / 7) ** 0.5])
    assert evidence.verbosity_ratio([5, 5], [0, 1]) == 1.0
    assert evidence.verbosity_prior([], []).size == 0


def test_cost_exponent_follows_peakedness():
    flat = np.full(30, 2.0)
    peaked = np.r_[10.0, np.full(29, 1.0)]
    # k = 20: flat scores -> the ceiling; peaked -> ceiling * s_21 / s_1
    assert evidence.cost_exponent(flat) == pytest.approx(evidence.MAX_EXPONENT)
    assert evidence.cost_exponent(peaked) == pytest.approx(evidence.MAX_EXPONENT * 0.1)
    assert evidence.cost_exponent(flat, ratio=math.e) == pytest.approx(2 * evidence.MAX_EXPONENT)
    assert evidence.cost_exponent(flat, ratio=1e9) == 1.0  # capped
    # fewer positive candidates than k: nothing to choose among, rank order
    assert evidence.cost_exponent(np.r_[np.ones(5), np.zeros(40)]) == 0.0
    with pytest.raises(InvalidInput, match="ratio"):
        evidence.cost_exponent(flat, ratio=0.5)
    with pytest.raises(InvalidInput, match="k"):
        evidence.cost_exponent(flat, k=0)


def test_peak_rank_grows_with_the_conversation_past_the_sizes_it_was_chosen_on():
    assert [evidence.peak_rank(n) for n in (0, 1, 600, 629, 700, 1200, 6000)] == [20, 20, 20, 21, 23, 40, 200]
    for bad in (-1, 1.5, "600", True, None):
        with pytest.raises(InvalidInput, match="n_messages"):
            evidence.peak_rank(bad)
    # A history ten times longer with the same score distribution (each score held by ten messages) gets the
    # exponent of the short one; the 21st best of the long one would read it as flatter (the ceiling).
    rng = np.random.default_rng(3)
    short = np.sort(rng.exponential(1.0, 600))[::-1] + 0.01
    long = np.repeat(short, 10)
    a_short = evidence.cost_exponent(short, k=evidence.peak_rank(short.size))
    assert evidence.cost_exponent(long, k=evidence.peak_rank(long.size)) == pytest.approx(a_short)
    # with a fixed k its 21st best is the short history's 3rd: a flatter reading, a larger exponent
    fixed = evidence.cost_exponent(long, k=evidence.PEAK_K)
    assert fixed == pytest.approx(evidence.cost_exponent(short, k=2)) and fixed > 1.3 * a_short


def test_a_namespace_compares_the_best_score_with_the_rank_its_size_gives():
    mem = Memory(None)
    mem.add_many([{"text": f"note {i} about the garden and the weather"} for i in range(1300)])
    state = mem.engine.state()
    assert evidence.peak_rank(1300) == 43
    ratio = evidence._verbosity(state)[2]
    scores = 1.0 / np.arange(1, 101)  # 100 positive candidates: read at the 44th
    assert evidence._exponent(state, scores) == pytest.approx(evidence.cost_exponent(scores, ratio=ratio, k=43))
    few = np.r_[scores[:30], np.zeros(10)]  # 30 positive: read at the last of them, not packed in rank order
    expected = evidence.cost_exponent(few, ratio=ratio, k=29)
    assert expected > 0 and evidence._exponent(state, few) == pytest.approx(expected)
    assert evidence._exponent(state, np.r_[scores[:20], np.zeros(30)]) == 0.0  # at most 20: rank order, as ever
    mem.close()


def test_the_peak_rank_counts_a_text_and_its_near_duplicates_once():
    """A health check polled 1,200 times (near-duplicates: one line in a context, a few places in a candidate list)
    and a status line sent 300 times do not make the history longer for the peak rank. Oracle: the same conversation
    with one check and one status line reads the same scores at the same rank. Before, the copies made it 1,600
    messages, whose scores were read at the 54th best instead of the 21st: as more peaked than they are (an exponent
    of 0.10 instead of 0.16), packing longer messages."""
    def history(mem: Memory, copies: int) -> None:
        mem.add_many([{"text": f"note {i} about the garden and the weather", "role": "user"} for i in range(100)])
        mem.add_many([{"text": '{"status":"ok","ts":"2026-03-01T%02d:%02d:%02dZ","uptime_s":%d,"req":"%08x"}' % (
            11 + k // 3600, k // 60 % 60, k % 60, 3600 + k, 0x9f1c2ab3 + 7919 * k), "role": "tool"}
            for k in range(4 * copies)])
        mem.add_many([{"text": "build finished, all green", "role": "tool"} for _ in range(copies)])

    scores = 1.0 / np.arange(1, 101) ** 0.5
    with Memory(None) as once, Memory(None) as polled:
        history(once, 1)
        history(polled, 300)
        want, got = evidence._exponent(once.engine.state(), scores), evidence._exponent(polled.engine.state(), scores)
        assert want == pytest.approx(evidence.cost_exponent(scores, ratio=evidence._verbosity(once.engine.state())[2],
                                                            k=evidence.PEAK_K))
        assert got == pytest.approx(want)
        # messages added since the statistics were made count one each until they are made again
        polled.add_many([{"text": f"remark {i} on the roses and the rain", "role": "user"} for i in range(5)])
        assert evidence._distinct_messages(polled.engine.state()) == 100 + 2 + 5


def test_packing_order_is_rank_order_without_cost_and_value_per_token_with_it():
    scores = [3.0, 2.0, 2.0, 1.0]
    costs = [100, 10, 50, 1]
    assert evidence.packing_order(scores, costs, exponent=0).tolist() == [0, 1, 2, 3]  # ties keep input order
    # exponent 1: 0.03, 0.2, 0.04, 1.0 per token
    assert evidence.packing_order(scores, costs, exponent=1).tolist() == [3, 1, 2, 0]
    # a prior halves item 1: 0.1 per token, still above 0.04
    assert evidence.packing_order(scores, costs, [1, 0.5, 1, 1], exponent=1).tolist() == [3, 1, 2, 0]
    for bad in ({"costs": [1, 0, 1, 1]}, {"costs": [1, 2]}, {"exponent": -1}):
        kw = {"scores": scores, "costs": costs, "exponent": 1, **bad}
        with pytest.raises(InvalidInput):
            evidence.packing_order(**kw)
    with pytest.raises(HippoError):
        evidence.verbosity_prior([1, 2], [0])


def _best_subset(values, costs, budget):
    best = 0.0
    for r in range(len(values) + 1):
        for sub in itertools.combinations(range(len(values)), r):
            if sum(costs[i] for i in sub) <= budget:
                best = max(best, sum(values[i] for i in sub))
    return best


def test_greedy_by_value_per_token_is_near_the_knapsack_optimum():
    # The greedy order with exponent 1 is the fractional-knapsack solution: packing it (skipping what does not fit)
    # is within the largest single value of the 0/1 optimum (brute force over 10 items).
    rng = np.random.default_rng(7)
    for _ in range(40):
        v = rng.random(10)
        c = rng.integers(1, 30, 10)
        budget = int(rng.integers(20, 80))
        used = got = 0.0
        for i in evidence.packing_order(v, c, exponent=1).tolist():
            if used + c[i] <= budget:
                used += c[i]
                got += v[i]
        assert got >= _best_subset(v.tolist(), c.tolist(), budget) - v.max() - 1e-9


def _convo(mem: Memory) -> dict[str, int]:
    ids = {}
    filler = "Sure, here are some general thoughts about gardens, soil, water, light and seasons. " * 15
    for k in range(12):
        ids[f"u{k}"] = mem.add(f"I planted tomatoes in bed {k} and watered the garden soil.", role="user").id
        ids[f"a{k}"] = mem.add(f"About bed {k}: tomatoes in the garden soil need water. " + filler, role="assistant").id
    return ids


def test_recall_spends_the_budget_on_short_statements_when_the_ranking_is_flat():
    mem = Memory(None)
    ids = _convo(mem)
    r = mem.recall("tomatoes garden soil", budget_tokens=600)
    got = {m.id for m in r.messages}
    users = {v for k, v in ids.items() if k.startswith("u")}
    # every message matches about equally; the terse side's statements are the better bet per token
    assert len(got & users) >= 8 and r.tokens <= 600
    mem.close()


def test_recall_takes_a_long_message_when_it_is_the_clear_match():
    mem = Memory(None)
    _convo(mem)
    long_id = mem.add("The greyhound adoption paperwork from the rescue in Porto: " + "details " * 300,
                      role="assistant").id
    r = mem.recall("greyhound adoption paperwork Porto rescue", budget_tokens=800)
    assert long_id in {m.id for m in r.messages}
    mem.close()


def test_quantized_cosines_match_float_cosines():
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((50, 384)).astype(np.float32)
    q = rng.standard_normal(384).astype(np.float32)
    dense = EmbeddingCodes(256)
    dense.add(list(range(100, 150)), np.hstack([np.zeros((50, 32), np.uint8), quantize(vecs).view(np.uint8)]))
    want = vecs @ q / np.linalg.norm(vecs, axis=1) / np.linalg.norm(q)
    got = dense.cosines([100, 149, 120, 7], q)
    assert got[:3] == pytest.approx(want[[0, 49, 20]], abs=0.01)
    assert math.isnan(got[3])  # unknown id


def _embed(texts):
    # a deterministic bag-of-letters embedding: enough to order messages by shared vocabulary
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, zlib.crc32(w.strip(".,?!").encode()) % 64] += 1.0  # deterministic across processes
    return out + 1e-3


def test_dense_vectors_survive_a_reopen(tmp_path):
    path = tmp_path / "m.db"
    mem = Memory(path, embed=_embed)
    a = mem.add("the violin lesson is on tuesday").id
    mem.add("we bought apples and pears")
    mem.recall("violin lesson", budget_tokens=100)
    mem.close()
    mem = Memory(path, embed=_embed)
    mem.recall("violin lesson", budget_tokens=100)
    dense = mem.engine.state().codes
    cos = dense.cosines([a], _embed(["violin lesson"])[0])
    assert np.isfinite(cos).all() and cos[0] > 0.5
    mem.close()


def test_quantize_rejects_bad_vectors():
    with pytest.raises(HippoError):
        quantize([[1.0, float("nan")]])
    assert quantize([[0.0, 0.0]]).tolist() == [[0, 0]]


def test_the_verbosity_prior_follows_deletes_and_growth():
    mem = Memory(None)
    short = [mem.add(f"I keep bees in hive {k}.", role="user").id for k in range(6)]
    long_ = [mem.add(f"Bees in hive {k}: " + "inspect frames, check the queen, add supers. " * 30,
                     role="assistant").id for k in range(6)]
    state = mem.engine.state()
    idx = state.index
    rows = np.asarray([idx.row_of[i] for i in short + long_])
    p = evidence.prior_of(state, rows)
    lengths = idx.doc_lengths()[rows].astype(float)
    want = (np.median(lengths) / np.median(lengths[6:])) ** 0.5  # about sqrt(1/2): half the messages are long
    assert (p[:6] == 1).all() and p[6:] == pytest.approx(np.full(6, want)) and want < 0.75
    mem.delete(long_)                                    # only the terse speaker is left: no discount
    state = mem.engine.state()
    idx = state.index
    rows = np.asarray([idx.row_of[i] for i in short])
    assert (evidence.prior_of(state, rows) == 1).all()
    mem.close()


def test_the_verbosity_prior_discounts_a_verbose_role_not_a_verbose_person():
    mem = Memory(None)
    terse = [mem.add(f"ok, hive {k} done", speaker="Ann").id for k in range(6)]
    chatty = [mem.add(f"Hive {k}: " + "the frames looked full and the queen was laying well. " * 6,
                      speaker="Ben").id for k in range(6)]
    state = mem.engine.state()
    idx = state.index
    rows = np.asarray([idx.row_of[i] for i in terse + chatty])
    assert (evidence.prior_of(state, rows) == 1).all()  # two people: whoever writes more also says more
    ids = [mem.add(f"Hive {k}: " + "inspect frames, check the queen, add supers. " * 20, speaker="Ben",
                   role="assistant").id for k in range(12)]
    state = mem.engine.state()
    idx = state.index
    lengths = idx.doc_lengths()
    rows = np.asarray([idx.row_of[i] for i in ids])
    want = (np.median(lengths) / np.median(lengths[rows])) ** 0.5  # the assistant's role, named Ben or not
    assert evidence.prior_of(state, rows) == pytest.approx(np.full(12, want)) and want < 0.95
    assert (evidence.prior_of(state, np.asarray([idx.row_of[i] for i in terse + chatty])) == 1).all()
    mem.close()


def _bees(mem: Memory, copies: int) -> tuple[list[str], list[str]]:
    """Six short user messages and six long assistant replies; the first reply sent again ``copies`` times (a tool
    output returned after every call) and a user message ``copies`` times, after the others."""
    short = [mem.add(f"I keep bees in hive {k}.", role="user").id for k in range(6)]
    long_ = [mem.add(f"Bees in hive {k}: " + "inspect frames, check the queen, add supers. " * (10 + 5 * k),
                     role="assistant").id for k in range(6)]
    for _ in range(copies):
        mem.add("Bees in hive 0: " + "inspect frames, check the queen, add supers. " * 10, role="assistant")
        mem.add("I keep bees in hive 3.", role="user")
    return short, long_


def test_the_verbosity_prior_counts_each_text_once():
    """Copies of a text say nothing of how much its role writes. Oracle: the same conversation without the copies
    gives every message the same prior and the packing the same cost ceiling."""
    with Memory(None) as plain, Memory(None) as repeated:
        want_ids = _bees(plain, 0)
        got_ids = _bees(repeated, 25)
        for mem, (short, long_) in ((plain, want_ids), (repeated, got_ids)):
            state = mem.engine.state()
            rows = np.asarray([state.index.row_of[i] for i in short + long_])
            if mem is plain:
                want = evidence.prior_of(state, rows), evidence._verbosity(state)[2]
            else:
                got = evidence.prior_of(state, rows), evidence._verbosity(state)[2]
        assert got[0] == pytest.approx(want[0]) and got[1] == pytest.approx(want[1])
        assert want[0][6:].max() < 0.8 and want[1] > 1.5  # the replies are discounted, the ratio is above 1
        state = repeated.engine.state()
        copies = [i for i in repeated.list() if i.id not in got_ids[0] + got_ids[1]]
        assert len(copies) == 50
        rows = np.asarray([state.index.row_of[i.id] for i in copies])
        roles = np.asarray([i.role == "assistant" for i in copies])
        p = evidence.prior_of(state, rows)  # a copy has its role's prior
        assert p[roles] == pytest.approx(np.full(25, want[0][6])) and (p[~roles] == 1).all()


def test_the_verbosity_prior_counts_a_machine_outputs_near_duplicates_once():
    """A health check polled 300 times (its time, uptime and request id changing: near-duplicates, one line in a
    context) says no more of how much the tool writes than one check. Oracle: the same conversation with one check
    gives every message the same prior and the packing the same cost ceiling. Before, the 300 short checks made the
    conversation's median: the replies' prior fell from 0.89 to 0.71, the ratio rose from 1.27 to 2.0."""
    def history(mem: Memory, checks: int) -> list[str]:
        ids = [mem.add(f"Hive {k} needs a check today.", role="user").id for k in range(6)]
        ids += [mem.add(f"Hive {k}: " + "inspect frames, check the queen, add supers. " * (4 + k),
                        role="assistant").id for k in range(6)]
        ids += [mem.add('{"hive":%d,"ts":"2026-03-01T10:00:%02dZ","weight_g":%d,"temp_c":35,"humidity":61,'
                        '"battery_mv":%d,"fw":"3.2.1","sensor":"%08x"}' % (k, k, 40000 + k, 3700 + k, 0xa0000000 + k),
                        role="tool").id for k in range(4)]
        for k in range(checks):
            mem.add('{"status":"ok","ts":"2026-03-01T%02d:%02d:%02dZ","uptime_s":%d,"req":"%08x"}' % (
                11 + k // 3600, k // 60 % 60, k % 60, 3600 + k, 0x9f1c2ab3 + 7919 * k), role="tool")
        return ids

    with Memory(None) as plain, Memory(None) as polled:
        want_ids, got_ids = history(plain, 1), history(polled, 300)
        (want_state, got_state) = plain.engine.state(), polled.engine.state()
        assert int(got_state.index.masked_rows().sum()) >= 300  # the checks are near-duplicates, not copies
        want = evidence.prior_of(want_state, np.asarray([want_state.index.row_of[i] for i in want_ids]))
        got = evidence.prior_of(got_state, np.asarray([got_state.index.row_of[i] for i in got_ids]))
        assert got == pytest.approx(want)
        assert evidence._verbosity(got_state)[2] == pytest.approx(evidence._verbosity(want_state)[2])
        assert want[6:].min() < 0.9  # the replies and the tool's long outputs are discounted


def test_messages_added_since_the_prior_was_computed_get_their_roles_prior():
    """The prior is computed again only after the conversation grew by a hundredth; the messages added in between
    get the prior of their role. Oracle: the prior of the same messages once it is computed again."""
    with Memory(None) as mem:
        _bees(mem, 0)
        for k in range(200):
            mem.add(f"I checked hive {k % 6} today.", role="user", speaker="Ann")
            mem.add(f"Hive {k % 6}: " + "inspect frames, check the queen, add supers. " * 12, role="assistant",
                    speaker="Bot")
        state = mem.engine.state()
        evidence._verbosity(state)  # computed now
        new = [mem.add("Hive 1: " + "inspect frames, check the queen, add supers. " * 12, role="assistant",
                       speaker="Bot").id, mem.add("I checked hive 2 today.", role="user", speaker="Ann").id]
        state = mem.engine.state()
        rows = np.asarray([state.index.row_of[i] for i in new])
        assert rows.max() >= evidence._verbosity(state)[0].size  # not in the cached prior
        got = evidence.prior_of(state, rows)
        state.verbosity = None
        want = evidence.prior_of(state, rows)
        assert got == pytest.approx(want) and want[0] < 0.9 and want[1] == 1.0


def test_the_shortlist_packs_the_same_context_as_the_whole_candidate_list(monkeypatch):
    mem = Memory(None)
    _convo(mem)
    for k in range(30):
        mem.add(f"Note {k}: the compost bin needs brown leaves and kitchen scraps for the tomatoes.", role="user")
    queries = ["tomatoes compost", "garden soil water", "brown leaves kitchen scraps", "bed 3 tomatoes"]
    got = {q: [m.id for m in mem.recall(q, budget_tokens=300).messages] for q in queries}
    monkeypatch.setattr(evidence, "_SHORTLIST_MIN", 10_000)  # every candidate described and ordered
    for q in queries:
        assert [m.id for m in mem.recall(q, budget_tokens=300).messages] == got[q]
    mem.close()
