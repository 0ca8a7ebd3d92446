"""Standing instructions ("Always ... when I ask about ...") in recall contexts.

References: hand-labelled sentences for the detector; a brute-force scan of every stored message for the cached,
incrementally extended set of instruction rows (through appends, deletions and a reopen); hand-computed choices
for the share of the budget the packer lifts."""

from __future__ import annotations

import numpy as np
import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.engine import evidence
from hippo.text.directives import is_standing_instruction

RULES = [
    "Always include version numbers when I ask about software dependencies or libraries used.",
    "Never use emoji when I ask for code reviews.",
    "Please always answer in metric units whenever I ask about distances.",
    "Always tailor resumes to the country's ATS standards when I ask about job applications.",
    "always be concise for all future answers",
]
NOT_RULES = [
    "Always good to hear! See you later!",
    "Always happy when I see you",
    "Never been happier than when I ask you out",
    "I always include version numbers when I write changelogs.",
    "Always include version numbers.",               # no scope: a remark as much as a rule
    "Thanks! Always a pleasure.",
    "",
]


@pytest.mark.parametrize("text", RULES)
def test_rules_are_recognised(text):
    assert is_standing_instruction(text)


@pytest.mark.parametrize("text", NOT_RULES)
def test_remarks_are_not_rules(text):
    assert not is_standing_instruction(text)


def test_non_text_is_not_a_rule():
    assert not is_standing_instruction(None)  # type: ignore[arg-type]


def _brute(mem: Memory) -> list[int]:
    """Rows of stored non-assistant messages that are instructions, by reading every message."""
    idx = mem.engine.state().index
    roles = {it.id: it.role for it in mem.list()}
    out = []
    for r in range(len(idx)):
        role = roles[int(idx.ids.view[r])]
        if role not in ("assistant", "tool") and is_standing_instruction(idx.text_of(r)):
            out.append(r)
    return out


def _chat(mem: Memory, k0: int, n: int) -> dict[str, list[int]]:
    ids: dict[str, list[int]] = {"rule": [], "other": []}
    for k in range(k0, k0 + n):
        user = f"I'm building the budget tracker, step {k}: the transactions table."
        ids["other"].append(mem.add(user, role="user").id)
        answer = f"Here is step {k} of the tracker. " + "Details follow. " * 40
        ids["other"].append(mem.add(answer, role="assistant").id)
        if k % 4 == 0:
            ids["rule"].append(mem.add(RULES[k // 4 % len(RULES)], role="user").id)
        if k % 5 == 0:  # the assistant saying "Always ..." is not the user's rule
            ids["other"].append(mem.add(RULES[0], role="assistant").id)
    return ids


def test_instruction_rows_follow_appends_deletes_and_reopen(tmp_path):
    path = tmp_path / "rules.db"
    with Memory(path) as mem:
        ids = _chat(mem, 0, 12)
        state = mem.engine.state()
        assert evidence.standing_rows(state).tolist() == _brute(mem)
        _chat(mem, 12, 9)                                       # extended with the appended rows only
        assert evidence.standing_rows(mem.engine.state()).tolist() == _brute(mem)
        mem.delete([ids["rule"][1], ids["other"][0]])         # rows renumbered: rebuilt
        assert evidence.standing_rows(mem.engine.state()).tolist() == _brute(mem)
        n = len(_brute(mem))
        assert n == len(ids["rule"]) - 1 + 3                    # 3 more rules came with the second _chat
    with Memory(path) as mem:
        assert evidence.standing_rows(mem.engine.state()).tolist() == _brute(mem)


def test_a_question_that_matches_nothing_gets_every_rule_that_fits():
    mem = Memory(None)
    ids = _chat(mem, 0, 40)                                  # 10 rules of 15-20 tokens each
    state = mem.engine.state()
    rule_rows = evidence.standing_rows(state)
    assert rule_rows.size == 10
    costs = state.index.doc_lengths()[rule_rows] + 4
    budget = 1200
    # a question that matches nothing leaves the whole budget to the rules: all ten fit in 1200 tokens; the five
    # rules were each stated twice, and a context holds a text once, with the times it was written
    r = mem.recall("Which Flask release is stable?", budget_tokens=budget)
    got = {m.id for m in r.messages}
    assert costs.sum() <= budget
    assert sorted(mem.get(i).text for i in ids["rule"] if i in got) == sorted(RULES)
    assert all(f"user (2 times): {rule}" in r.text for rule in RULES)
    assert r.tokens <= budget
    # a question about a rule's subject lifts that rule first
    r = mem.recall("emoji in code reviews", budget_tokens=200)
    assert any("emoji" in m.text for m in r.messages)
    mem.close()


def test_rules_may_take_what_the_other_candidates_leave_of_the_budget():
    """The share keeps rules from crowding out evidence; a question whose matches cannot fill the budget leaves the
    rest to the rules (hand-computed from the candidates' and rules' token counts)."""
    mem = Memory(None)
    _chat(mem, 0, 40)
    state = mem.engine.state()
    rules = evidence.standing_rows(state)
    lengths = state.index.doc_lengths()
    cost = {int(r): float(lengths[r]) + 4.0 for r in rules.tolist()}
    others = np.setdiff1d(np.arange(len(state.index)), rules)
    budget, share = 1200, mem.config.retrieval.standing_share

    def lifted(rows: np.ndarray) -> list[int]:
        scores = np.linspace(1.0, 0.5, rows.size)
        got_rows, got_scores = evidence.with_standing(state, rows, scores, budget)
        top = float(scores.max()) if rows.size else 1.0
        return sorted(int(r) for r, v in zip(got_rows.tolist(), got_scores.tolist()) if r in cost and v == top)

    def newest_within(cap: float) -> list[int]:
        out, used = [], 0.0
        for r in sorted(cost, reverse=True):  # no rule matches: every weight is 1, the newest first
            if used + cost[r] <= cap:
                out.append(r)
                used += cost[r]
        return sorted(out)

    many = others[lengths[others] > 50][:20]  # candidates worth more than the budget
    assert lengths[many].sum() > budget
    assert lifted(many) == newest_within(share * budget) and len(newest_within(share * budget)) < rules.size
    few = others[:3]  # three short candidates: the rest of the budget is the rules'
    room = budget - float(lengths[few].sum() + 4 * few.size)
    assert room > share * budget
    assert lifted(few) == newest_within(room)
    assert lifted(np.zeros(0, dtype=np.int64)) == newest_within(budget) == sorted(cost)
    mem.close()


def test_a_filter_still_applies_to_rules():
    mem = Memory(None)
    mem.add(RULES[0], role="user", metadata={"project": "a"})
    for k in range(20):
        mem.add(f"Project b note {k}: the garden beds need compost.", role="user", metadata={"project": "b"})
    r = mem.recall("garden compost", budget_tokens=400, filter={"project": "b"})
    assert all(m.metadata["project"] == "b" for m in r.messages)
    r = mem.recall("garden compost", budget_tokens=400)
    assert any(m.text == RULES[0] for m in r.messages)
    mem.close()


def test_without_rules_the_candidates_are_unchanged():
    mem = Memory(None)
    for k in range(10):
        mem.add(f"Note {k}: compost and leaves.", role="user")
    state = mem.engine.state()
    rows, scores = np.arange(5), np.linspace(1, 0.2, 5)
    got_rows, got_scores = evidence.with_standing(state, rows, scores, 500)
    assert got_rows.tolist() == rows.tolist() and got_scores.tolist() == scores.tolist()
    mem.close()


def test_standing_share_zero_turns_it_off_and_bad_values_are_refused():
    mem = Memory(None, config={"retrieval": {"standing_share": 0}})
    ids = _chat(mem, 0, 12)
    r = mem.recall("Which Flask release is stable?", budget_tokens=1200)
    assert not {m.id for m in r.messages} & set(ids["rule"])
    mem.close()
    for bad in (-0.1, 0.6):
        with pytest.raises(InvalidInput, match="standing_share"):
            Memory(None, config={"retrieval": {"standing_share": bad}})


def _two_projects() -> Memory:
    mem = Memory(None)
    mem.add("Always include version numbers when I ask about software dependencies.", role="user", session_id="dev")
    for k in range(6):
        mem.add(f"Flask release {k} is stable and Django {k} works with it.", role="user", session_id="dev")
    mem.add("Never use imperial units when I ask about my plot.", role="user", session_id="yard")
    for k in range(6):
        mem.add(f"The garden beds need compost, batch {k} of the tomatoes ripened.", role="user", session_id="yard")
    return mem


def test_rule_weights_follow_the_question_words_and_the_sessions():
    from hippo.engine.scope import scope_of
    from hippo.index import channels

    with _two_projects() as mem:
        st = mem.engine.state()
        idx = st.index
        rules = evidence.standing_rows(st)
        assert rules.size == 2
        for question in ("Which Flask release is stable?", "How is the garden compost?", "garden Flask"):
            ask = mem._ns.ask(st, question, scope_of(mem.config, question, None, None, None))
            lex = channels.lexical(idx, ask.terms, mem.config)
            by_session = channels.sessions(idx, ask.terms, mem.config, lex)
            got = evidence.standing_weights(st, rules, lex, by_session)
            # reference: 1 for a rule holding a question word, else its session's score over the best session's
            words = {w for w in question.lower().replace("?", "").split()}
            want = []
            for r in rules.tolist():
                text = idx.text_of(r).lower()
                if any(w in text.split() for w in words if len(w) > 3):
                    want.append(1.0)
                else:
                    want.append(by_session[int(idx.session.view[r])] / by_session.max())
            assert got.tolist() == pytest.approx(want)
        # the Flask question is about the rule of its own project, not the yard's
        ask = mem._ns.ask(st, "Which Flask release is stable?",
                          scope_of(mem.config, "Which Flask release is stable?", None, None, None))
        lex = channels.lexical(idx, ask.terms, mem.config)
        w = evidence.standing_weights(st, rules, lex, channels.sessions(idx, ask.terms, mem.config, lex))
        assert w.tolist() == [1.0, 0.0]
        # without session evidence every rule weighs 1
        assert evidence.standing_weights(st, rules, lex, None).tolist() == [1.0, 1.0]


def test_lifted_rules_are_valued_by_their_weight():
    from hippo.engine.scope import scope_of
    from hippo.index import channels

    with _two_projects() as mem:
        st = mem.engine.state()
        idx = st.index
        rules = evidence.standing_rows(st)
        q = "Which Flask release is stable?"
        ask = mem._ns.ask(st, q, scope_of(mem.config, q, None, None, None))
        lex = channels.lexical(idx, ask.terms, mem.config)
        by_session = channels.sessions(idx, ask.terms, mem.config, lex)
        rows = np.array([1, 2, 3], dtype=np.int64)
        scores = np.array([2.0, 1.0, 0.5])
        got_rows, got_scores = evidence.with_standing(st, rows, scores, 1000, lex, by_session)
        got = dict(zip(got_rows.tolist(), got_scores.tolist()))
        dev_rule, yard_rule = rules.tolist()
        assert got[dev_rule] == pytest.approx(2.0)      # weight 1 x the best candidate
        assert yard_rule not in got                     # its session says nothing of Flask: not lifted
        assert got_rows.tolist()[0] in (1, dev_rule) and (np.diff(got_scores) <= 0).all()
