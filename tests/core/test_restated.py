"""An update names its attribute ("I've adjusted my relocation budget to $3,500"); the statement it updates was often
said in other words ("I've budgeted $3,000 for relocation expenses"). The earlier messages of the same speaker that
hold the attribute's head word are read again for it (hippo.text.attributes.restated, Truth._reread), and the two are
linked as any update is. Checked by hand on sentences, end to end through contradictions(), the superseded mark in a
recall, a reopen, a removal and a snapshot replay."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

import hippo
from hippo.base.errors import InvalidInput
from hippo.text import attributes


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=timezone.utc)


def _update(text: str, attribute: str) -> attributes.Statement:
    got = [st for st in attributes.extract(text, "user") if st.attribute == attribute]
    assert len(got) == 1 and got[0].update, got
    return got[0]


RELOCATION = "I've adjusted my relocation budget to $3,500 to cover the visa fees."
RESTATED = [
    # (earlier text, the value read again, or None)
    ("I've budgeted $3,000 for relocation expenses, including visa and flights.", "$3,000"),
    ("Our relocation budget is at $2,800 for now, and the movers cost extra.", "$2,800"),
    ("The relocation was exhausting, and the budget for the party was $200.", None),   # "party" is another budget
    ("I've budgeted $3,500 for relocation expenses.", None),                           # the same value
    ("Should I set my relocation budget to $4,000?", None),                            # a question about oneself
    ("I might raise the relocation budget to $4,000 if the visa is late.", None),      # a hypothetical
    ("I spent three hours on the relocation budget spreadsheet yesterday.", None),     # no amount of money
    ("The relocation budget spreadsheet has 12 tabs.", None),                          # a count, not money
]


@pytest.mark.parametrize("earlier,value", RESTATED)
def test_an_earlier_sentence_restates_the_updated_amount_by_hand(earlier: str, value: str | None) -> None:
    st = _update(RELOCATION, "relocation_budget")
    got = attributes.restated(earlier, st)
    if value is None:
        assert got is None
    else:
        assert got is not None and got.value == value and got.attribute == "relocation_budget"
        assert earlier[got.span[0]:got.span[1]] == value and not got.update and got.entity == st.entity


def test_counts_need_their_unit_or_the_head_word_right_after_them() -> None:
    st = _update("I've extended my reading challenge goal to 12 books by March 1.", "reading_challenge_goal")
    assert attributes.restated("I've set my reading challenge goal at 10 books by March 1.", st).value == "10"
    assert attributes.restated("My reading challenge goal includes 10 minutes a day.", st) is None
    practice = _update("I've increased my practice sessions to 12 this month.", "practice_sessions")
    assert attributes.restated("My speed improved over the 10 practice sessions.", practice).value == "10"
    assert attributes.restated("The practice sessions start at 10.", practice) is None


def test_what_is_not_read_again() -> None:
    # a bare kind ("budget"), an amount for a period, a time of day and a unit as the head name no attribute alone
    assert attributes.restated_head(_update("I've increased my snack budget to $65.", "snack_budget")) == "budget"
    assert attributes.restated_head(attributes.Statement("u", "budget", "$5", True, False, True, "", (0, 2))) is None
    period = attributes.Statement("u", "book_budget_for_april_june", "$75", True, False, True, "", (0, 3))
    assert attributes.restated_head(period) is None
    hours = attributes.Statement("u", "work_hours", "42 weekly", True, False, True, "", (0, 2))
    assert attributes.restated_head(hours) is None
    call = attributes.Statement("u", "call_with_sam_time", "April 22 at 11 AM", True, False, True, "", (0, 5))
    assert attributes.restated_head(call) is None
    stated = attributes.Statement("u", "snack_budget", "$65", False, False, True, "", (0, 3))  # no update cue
    assert attributes.restated_head(stated) is None
    with pytest.raises(InvalidInput):
        attributes.restated(None, stated)  # type: ignore[arg-type]


def _history(mem: hippo.Memory):
    first = mem.add("I've budgeted $3,000 for relocation expenses, including visa and flights.", role="user",
                    timestamp=utc(2024, 3, 1))
    mem.add("That sounds reasonable. Visa fees vary, so keep a buffer of 10% for the budget.", role="assistant",
            timestamp=utc(2024, 3, 1))
    mem.add("The movers quoted $900 for the relocation, is that a fair price?", role="user",
            timestamp=utc(2024, 3, 2))
    mem.add("I've budgeted $250 for the farewell party.", role="user", timestamp=utc(2024, 3, 3))
    second = mem.add(RELOCATION, role="user", timestamp=utc(2024, 3, 10))
    return first, second


def test_the_update_links_the_earlier_statement_said_in_other_words(tmp_path) -> None:
    path = tmp_path / "m.db"
    mem = hippo.Memory(str(path))
    first, second = _history(mem)
    links = mem.contradictions(include_updates=True)
    assert [(c["old_id"], c["new_id"], c["kind"], c["old_value"], c["new_value"]) for c in links] == \
        [(first.id, second.id, "update", "3,000", "3,500")]
    text = mem.recall("What is my relocation budget?", budget_tokens=400).text
    assert "(superseded 10 March 2024): I've budgeted $3,000 for relocation expenses" in text
    mem.close()
    again = hippo.Memory(str(path))  # the snapshot keeps the statement read again
    assert again.contradictions(include_updates=True) == links
    # a later message that holds the head word does not move the link, and a removal replays it
    movers = [h.id for h in again.search("movers quoted", k=1)]
    again.delete(movers)
    assert [(c["old_id"], c["new_id"]) for c in again.contradictions(include_updates=True)] == \
        [(first.id, second.id)]
    again.delete([second.id])
    assert again.contradictions(include_updates=True) == []
    again.close()


def test_only_the_speakers_own_earlier_messages_are_read_again() -> None:
    mem = hippo.Memory()
    mem.add("I've budgeted $3,000 for relocation expenses.", speaker="Bo", role="user")
    mem.add(RELOCATION, speaker="Ann", role="user")
    assert mem.contradictions(include_updates=True) == []
    mem2 = hippo.Memory()
    mem2.add("Budget $3,000 for relocation expenses, at least.", role="assistant")  # advice, not the user's fact
    mem2.add(RELOCATION, role="user")
    assert mem2.contradictions(include_updates=True) == []


def _links(mem: hippo.Memory) -> list[tuple[str, str]]:
    return [(c["old_value"], c["new_value"]) for c in mem.contradictions(include_updates=True)]


def test_a_removal_reads_again_as_a_rebuild_over_the_surviving_messages_would() -> None:
    texts = [("I've budgeted $2,500 for relocation expenses.", 1), ("I've budgeted $3,000 for relocation expenses.", 2),
             (RELOCATION, 10)]
    mem = hippo.Memory()
    items = [mem.add(t, role="user", timestamp=utc(2024, 3, d)) for t, d in texts]
    assert _links(mem) == [("3,000", "3,500")]
    mem.delete([items[1].id])
    rebuilt = hippo.Memory()
    for t, d in (texts[0], texts[2]):
        rebuilt.add(t, role="user", timestamp=utc(2024, 3, d))
    assert _links(mem) == _links(rebuilt) == [("2,500", "3,500")]


def test_a_snapshot_written_before_statements_were_read_again_still_loads() -> None:
    from hippo.engine.truth.state import Truth

    mem = hippo.Memory()
    _history(mem)
    state = mem.engine.state()
    state.truth.sync(state.index)
    meta, arrays = state.truth.to_snapshot()
    assert arrays["facts.reread"].tolist().count(True) == 1
    old = {k: v for k, v in arrays.items() if k != "facts.reread"}
    loaded = Truth.from_snapshot(meta, old, state.index)
    assert [(x.old, x.new) for x in loaded.links] == [(x.old, x.new) for x in state.truth.links]
    assert not any(st.reread for sts in loaded.stated.values() for st in sts)
    again = Truth.from_snapshot(meta, arrays, state.index)
    assert [st.reread for sts in again.stated.values() for st in sts].count(True) == 1
