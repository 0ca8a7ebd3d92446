"""Nicknames (hippo.text.names): a question naming a speaker by a nickname finds that speaker's messages exactly
as the full name does; months, short words and other names do not."""

from __future__ import annotations

import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.engine.profiles import ProfileIndex
from hippo.index import channels
from hippo.text.names import is_nickname
from hippo.text.query import analyze

# Diminutives as English speakers use them, written out by hand.
NICKNAMES = [
    ("Mel", "Melanie"), ("Sam", "Samantha"), ("Sammy", "Samuel"), ("Chris", "Christopher"), ("Alex", "Alexandra"),
    ("Johnny", "John"), ("Timmy", "Tim"), ("Danny", "Daniel"), ("Jenny", "Jennifer"), ("Andy", "Andrew"),
    ("Katie", "Katherine"), ("Dave", "David"), ("Steve", "Steven"), ("Nate", "Nathan"), ("Carrie", "Caroline"),
    ("Bob", "Robert"), ("Bill", "William"), ("Mike", "Michael"), ("Liz", "Elizabeth"), ("Peggy", "Margaret"),
    ("Tony", "Anthony"), ("Jack", "John"), ("Sue", "Susan"), ("Becky", "Rebecca"), ("Jim", "James"),
]
NOT_NICKNAMES = [
    ("May", "Maya"), ("Jan", "Janet"), ("Mar", "Mario"), ("Sun", "Sunny"), ("Tom", "Tim"), ("Jo", "Joanna"),
    ("Al", "Alan"), ("Melanie", "Melanie"), ("Mike", "Mia"), ("Kate", "Karen"), ("Ben", "Bernard"),
    ("Nina", "Nick"), ("Sara", "Samantha"),
]


@pytest.mark.parametrize("short,full", NICKNAMES)
def test_nicknames(short: str, full: str) -> None:
    assert is_nickname(short, full)
    assert is_nickname(short.lower(), full.upper())


@pytest.mark.parametrize("short,full", NOT_NICKNAMES)
def test_not_nicknames(short: str, full: str) -> None:
    assert not is_nickname(short, full)


def test_is_nickname_refuses_what_is_not_a_str() -> None:
    with pytest.raises(InvalidInput):
        is_nickname(None, "Melanie")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="full"):
        is_nickname("Mel", 3)  # type: ignore[arg-type]


CHAT = [
    ("Melanie Hart", "I finished a painting of the lake at sunrise."),
    ("Caroline Ross", "That sounds lovely! I went hiking on the ridge."),
    ("Melanie Hart", "The kids loved the museum trip."),
    ("Caroline Ross", "My painting class starts next week."),
    ("Maya Stone", "I started a new job at the bakery."),
]


def _lexical(question: str) -> dict[int, float]:
    mem = Memory(None, namespace="names")
    try:
        mem.add_many({"text": t, "speaker": s} for s, t in CHAT)
        got = channels.lexical(mem.engine.state().index, analyze(question), mem.config)
        return dict(zip(got.rows.tolist(), got.scores.tolist()))
    finally:
        mem.close()


def test_a_nickname_scores_like_the_full_name() -> None:
    # the reference is the same question with the name written out; neither name occurs in the texts
    full, nick = _lexical("What did Melanie paint?"), _lexical("What did Mel paint?")
    assert full.keys() == nick.keys() == {0, 2, 3}
    assert all(full[r] == pytest.approx(nick[r], rel=1e-12) for r in full)
    assert nick[0] > nick[3]  # Melanie's painting above Caroline's
    assert _lexical("What did Carrie paint?") == pytest.approx(_lexical("What did Caroline paint?"), rel=1e-12)


def test_months_first_words_and_strangers_name_nobody() -> None:
    mem = Memory(None, namespace="names")
    try:
        mem.add_many({"text": t, "speaker": s} for s, t in CHAT)
        idx = mem.engine.state().index
        for q in ("What did Caroline paint in May?", "Mel, what did Caroline paint?", "What did Zed paint?",
                  "Which car did Caroline drive?"):
            named = {st for st, _ in channels.speakers_named(idx, analyze(q))}
            assert named <= {"carolin"}, q  # the stem of "Caroline"
        assert channels.speakers_named(idx, analyze("What did Mel paint?")) == [("mel", [0])]
    finally:
        mem.close()


def test_profile_questions_take_a_nickname() -> None:
    p = ProfileIndex()
    p.know_speakers(["Melanie Hart", "Caroline Ross", "Maya Stone"])
    assert p.query_intent("What is Mel's job?")[0] == "Melanie Hart"
    assert p.query_intent("What is Melanie's job?")[0] == "Melanie Hart"
    assert p.query_intent("What did Caroline do in May?")[0] == "Caroline Ross"
    assert p.query_intent("Where does Zed work?")[0] is None


def test_nicknames_beyond_ascii() -> None:
    assert is_nickname("Zoé", "Zoéline") and is_nickname("Łuki", "Łukasz")  # any script: "Łuk" + a pet ending
    p = ProfileIndex()
    p.know_speakers(["Chloé Martin", "Ann Lee"])
    assert p.query_intent("Where does Chlo work?")[0] == "Chloé Martin"
    assert p.query_intent("Chlo works where?")[0] is None  # the question's first word is not read as a name
