"""A question that asks for a span of time ("How long has Nate had his turtles?") is answered by a message that
states one ("I've had them for 3 years now"), which carries no date: such messages get the temporal factor that
messages with a time expression get (hippo.text.timeexpr.states_span, hippo.engine.truth.rank.adjust). Checked
against hand-labelled sentences and questions, against the same store with the factor at 1, and through a
snapshot written before the spans were kept and a removal."""

from __future__ import annotations

import numpy as np
import pytest

from hippo import Memory
from hippo.engine.truth.state import Truth
from hippo.text import timeexpr

SPANS = [
    ("I've had them for 3 years now and they bring me tons of joy!", True),
    ("I've known these friends for 4 years, since I moved", True),
    ("We were married a few months ago.", True),
    ("It was a two-week trip.", True),
    ("Give it half an hour to cool.", True),
    ("It takes a couple of weeks.", True),
    ("I have 3 cats and a dog.", False),
    ("We moved in 2019.", False),
    ("See you on Friday!", False),
    ("The meeting is at 3 PM on May 4.", False),
    ("Those years were the best.", False),
]

QUESTIONS = [
    ("How long has Nate had his turtles?", True),
    ("For how long has Caroline known her friends?", True),
    ("How many years did John play basketball?", True),
    ("How many days passed between the two meetings?", True),
    ("How many turtles does Nate have?", False),
    ("When did Nate get his turtles?", False),
    ("What does Nate like about turtles?", False),
]


@pytest.mark.parametrize("text,expected", SPANS)
def test_a_span_of_time_is_read_by_hand(text: str, expected: bool) -> None:
    assert timeexpr.states_span(text) is expected


@pytest.mark.parametrize("question,expected", QUESTIONS)
def test_a_question_asks_for_a_span_by_hand(question: str, expected: bool) -> None:
    assert timeexpr.analyze_query(question).span is expected


def test_states_span_refuses_what_is_not_a_str() -> None:
    assert timeexpr.states_span(None) is False  # type: ignore[arg-type]


TURNS = [
    ("Joanna", "Your turtles are so cute! How long have you had them?"),
    ("Nate", "I've had them for 3 years now and they bring me tons of joy!"),
    ("Joanna", "Turtles are great pets, Nate, I love their shells."),
    ("Nate", "My turtles love the new tank, and the turtles eat lettuce every day."),
    ("Joanna", "I went hiking with my sister last weekend."),
]


def _store(**temporal) -> Memory:
    mem = Memory(None, config={"temporal": temporal} if temporal else None)
    mem.add_many({"text": t, "speaker": s} for s, t in TURNS)
    return mem


def test_a_span_question_lifts_the_messages_that_state_a_span_by_the_temporal_factor() -> None:
    question = "How long has Nate had his turtles?"
    on, off = _store(), _store(temporal_boost=1.0)
    boost = on.config.temporal.temporal_boost
    assert boost > 1.0
    a = {h.text: h.score for h in on.search(question, k=10)}
    b = {h.text: h.score for h in off.search(question, k=10)}
    assert set(a) == set(b)
    span = TURNS[1][1]
    for text in a:
        # "every day" is no span and no date: only the span's message changes
        expected = b[text] * boost if text == span else b[text]
        assert a[text] == pytest.approx(expected, rel=1e-9), text
    # a question that does not ask for a span leaves the span's message as it was
    q2 = "What does Nate like about his turtles?"
    assert {h.text: h.score for h in on.search(q2, k=10)} == pytest.approx(
        {h.text: h.score for h in off.search(q2, k=10)})


def _truth_of(mem: Memory):
    state = mem.engine.state()
    state.truth.sync(state.index)
    return state


def test_spans_survive_a_snapshot_written_before_they_were_kept_and_a_removal() -> None:
    mem = _store()
    state = _truth_of(mem)
    truth, idx = state.truth, state.index
    rows = np.arange(len(idx))
    reference = np.array([timeexpr.states_span(idx.text_of(r)) for r in rows.tolist()])
    assert reference.tolist() == [False, True, False, False, False]
    assert truth.states_span(idx, rows).tolist() == reference.tolist()
    meta, arrays = truth.to_snapshot()
    # an older snapshot: no span column, no marker
    old_arrays = {k: v for k, v in arrays.items() if k != "has_span"}
    old_meta = {k: v for k, v in meta.items() if k != "spans_unread"}
    loaded = Truth.from_snapshot(old_meta, old_arrays, idx)
    assert loaded.spans_unread == len(idx)
    assert loaded.has_span.view.tolist() == [False] * len(idx)
    assert loaded.states_span(idx, rows[::-1]).tolist() == reference[::-1].tolist()
    # written again and read back, the marker says which rows are still to be read
    meta2, arrays2 = loaded.to_snapshot()
    again = Truth.from_snapshot(meta2, arrays2, idx)
    assert again.spans_unread == len(idx)
    assert again.states_span(idx, rows).tolist() == reference.tolist()
    fresh = Truth.from_snapshot(meta, arrays, idx)
    assert fresh.spans_unread == 0
    with pytest.raises(ValueError, match="spans_unread"):
        Truth.from_snapshot({**meta, "spans_unread": len(idx) + 1}, arrays, idx)


def test_spans_follow_a_removal() -> None:
    mem = _store()
    first = mem.search("hiking sister", k=1)[0]
    mem.delete([first.id])
    state = _truth_of(mem)
    idx = state.index
    rows = np.arange(len(idx))
    expected = [timeexpr.states_span(idx.text_of(r)) for r in rows.tolist()]
    assert state.truth.states_span(idx, rows).tolist() == expected
    assert sum(expected) == 1
