"""Questions that name speakers.

Names that address (NamespaceIndex.addressees and the lexical channel): in a dialogue of two, a message that names
the other party is written to them ("Thanks, Ann!"), so a question's word naming a speaker does not count there; the
speaker's own messages match through the speaker field. Checked against a hand-computed case, a reference written
from the definition over random conversations, and a textbook BM25 for the term's share of each score.

The named speaker's messages first (hippo.index.channels.names_as_written and the lexical channel): the messages of
the speakers a question does not name are valued at a share of their score. Checked against the same scores without
the share and on a recall whose context holds the named speaker's answers only with it."""

from __future__ import annotations

import random
import re

import pytest

from hippo import Memory
from hippo.base.config import Config
from hippo.base.errors import InvalidInput
from hippo.index import channels
from hippo.text.query import analyze
from tests.core.bm25ref import bm25

T0 = 1_700_000_000.0


def _store(rows: list[tuple[str | None, str | None, str]], **retrieval) -> Memory:
    """A namespace of ``(session, speaker, text)`` rows in that order, an hour apart (each message without a
    session id is then in the same sitting as its neighbours)."""
    mem = Memory(None, config={"retrieval": retrieval} if retrieval else None)
    mem.add_many({"text": t, "speaker": sp, "role": "user", "session_id": s, "timestamp": T0 + 3600 * k}
                 for k, (s, sp, t) in enumerate(rows))
    return mem


def test_addressees_hand_computed():
    rows = [("s1", "Ann", "hi Bo"), ("s1", "Bo", "hi Ann"), ("s1", "Ann", "how are you?"),
            ("s2", "Ann", "hello all"), ("s2", "Bo", "hey"), ("s2", "Cy", "hi both"),   # three speakers: a group
            ("s3", "Ann", "a note to myself"),                                          # one speaker alone
            (None, "Bo", "no session"), (None, "Cy", "a sitting of two")]               # a sitting of Bo and Cy
    with _store(rows) as mem:
        idx = mem.engine.state().index
        ann, bo, cy = (idx.speakers.index(n) for n in ("Ann", "Bo", "Cy"))
        assert idx.addressees().tolist() == [bo, ann, bo, -1, -1, -1, -1, cy, bo]
    with _store(rows, sitting_gap_s=0) as mem:  # no sittings: the last two are in no unit
        assert mem.engine.state().index.addressees().tolist()[-2:] == [-1, -1]


def _reference(sessions: list[str | None], speakers: list[str | None], names: list[str | None]) -> list[int]:
    """The addressee of each message from the definition: the other speaker of its session when the session has
    exactly two speakers (``None``, a message without a speaker name, is a speaker like the others), else -1;
    messages without a session (no sittings here) have none."""
    out = []
    for s, sp in zip(sessions, speakers):
        who = {speakers[k] for k, t in enumerate(sessions) if t == s}
        out.append(names.index(next(iter(who - {sp}))) if s is not None and len(who) == 2 else -1)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_addressees_match_the_definition(seed):
    rnd = random.Random(seed)
    rows = [(rnd.choice(["s1", "s2", "s3", "s4", None]), rnd.choice(["Ann", "Bo", "Cy", None]), f"line {k}")
            for k in range(rnd.randint(2, 40))]
    with _store(rows, sitting_gap_s=0) as mem:
        idx = mem.engine.state().index
        got = idx.addressees().tolist()
        assert got == _reference([s for s, _, _ in rows], [sp for _, sp, _ in rows], list(idx.speakers))
        # appending a message to a session of two makes it a group: the cache follows
        two = [s for s in ("s1", "s2", "s3", "s4") if len({sp for t, sp, _ in rows if t == s}) == 2]
        if two:
            mem.add("one more voice", speaker="Dee", session_id=two[0], timestamp=T0 + 3600 * len(rows))
            assert all(a == -1 for a, (s, _, _) in zip(idx.addressees().tolist(), rows) if s == two[0])


DIALOGUE = [
    ("s1", "Ann", "I finished a painting of the harbour at dawn."),
    ("s1", "Bo", "Wow, Ann, that painting is gorgeous!"),
    ("s1", "Ann", "Thanks! The harbour is my favourite place."),
    ("s1", "Bo", "Ann! You should paint the lighthouse next."),
    ("s2", "Cy", "Ann painted the old mill for the fair."),  # a group: Cy talks about Ann to the others
    ("s2", "Bo", "It sold in an hour."),
    ("s2", "Ann", "It did, Cy."),
]


def _lexical(question: str, **retrieval) -> dict[int, float]:
    with _store(DIALOGUE, **retrieval) as mem:
        got = channels.lexical(mem.engine.state().index, analyze(question), mem.config)
        return dict(zip(got.rows.tolist(), got.scores.tolist()))


def _named(index, question: str) -> list[int]:
    """Codes of the speakers ``question`` names as names are written."""
    q = analyze(question)
    return [c for _, codes in channels.names_as_written(q, channels.speakers_named(index, q)) for c in codes]


def test_the_other_partys_address_does_not_count():
    question = "What did Ann paint?"
    # the named speakers' share is left out here: this is the address alone
    on = _lexical(question, unnamed_speakers=1.0)
    off = _lexical(question, addressed_names=False, unnamed_speakers=1.0)
    with _store(DIALOGUE) as mem:
        idx = mem.engine.state().index
        lengths = idx.doc_lengths()[:len(DIALOGUE)].tolist()
    rc = Config().retrieval
    # the word "Ann" as a textbook BM25 scores it in each message (its document frequency counts every message
    # that holds it), and the messages where it addresses Ann: Bo's in the dialogue of two
    tf = [len(re.findall(r"\bAnn\b", t)) for _, _, t in DIALOGUE]
    share = bm25([tf], lengths, rc.bm25_k1, rc.bm25_b)
    addressed = {1, 3}
    assert set(off) == set(on)  # both of Bo's messages still match "paint"
    for row in off:
        expected = off[row] - share[row] if row in addressed else off[row]
        assert on[row] == pytest.approx(expected, rel=1e-9), row
    assert share[4] > 0 and on[4] == pytest.approx(off[4], rel=1e-12)  # Cy's mention in the group counts
    # Ann's own painting now ranks above Bo's compliment, which said her name to her
    assert on[0] > on[1] and off[1] > off[0]


def test_search_finds_the_named_speakers_own_message_first():
    with _store(DIALOGUE) as mem:
        assert mem.search("What did Ann paint?", k=1)[0].text == DIALOGUE[0][2]
    with _store(DIALOGUE, addressed_names=False, unnamed_speakers=1.0) as mem:
        assert mem.search("What did Ann paint?", k=1)[0].text == DIALOGUE[1][2]


def test_the_session_still_counts_the_name():
    # the session's match (its lift) counts every occurrence: a session where one party names the other is a
    # session with that speaker
    for retrieval in ({}, {"addressed_names": False}):
        with _store(DIALOGUE, **retrieval) as mem:
            idx = mem.engine.state().index
            by_unit = channels.sessions(idx, analyze("Ann"), mem.config)
            s1 = int(idx.units()[0][0])
            assert by_unit[s1] > 0


def test_the_switch_is_validated():
    with pytest.raises(InvalidInput, match="addressed_names"):
        Memory(None, config={"retrieval": {"addressed_names": "yes"}})


# -- the named speaker's messages first -----------------------------------------------------------------------

def test_named_speakers_are_names_as_written():
    rows = [("s1", "Melanie Hart", "hi"), ("s1", "Caroline", "hello"), ("s2", "user", "my user table"),
            ("s2", "assistant", "here is the schema")]
    with _store(rows) as mem:
        idx = mem.engine.state().index
        mel, car = (idx.speakers.index(n) for n in ("Melanie Hart", "Caroline"))
        assert _named(idx, "What did Caroline paint?") == [car]
        assert sorted(_named(idx, "What did Mel say to Caroline?")) == sorted([mel, car])
        assert _named(idx, "Hart's trip") == [mel]
        # a speaker label written in lower case is a word of the question, not a name
        assert _named(idx, "How should the user table be indexed?") == []
        assert _named(idx, "What did Zed paint?") == []


def test_the_other_speakers_messages_count_a_share():
    # against the same scores without the share, the addresses left in (the share alone)
    for question, named in (("What did Ann paint?", {"Ann"}), ("What did Ann and Cy paint?", {"Ann", "Cy"})):
        on = _lexical(question, addressed_names=False)
        off = _lexical(question, addressed_names=False, unnamed_speakers=1.0)
        assert set(on) == set(off)
        for row in off:
            share = 1.0 if DIALOGUE[row][1] in named else 0.5
            assert on[row] == pytest.approx(off[row] * share, rel=1e-12), (question, row)
    # a question naming every speaker of the namespace leaves every score as it was
    both = "What did Ann, Bo and Cy paint?"
    assert _lexical(both, addressed_names=False) == _lexical(both, addressed_names=False, unnamed_speakers=1.0)


# Ann's two answers about her weekends are short; Bo's replies repeat the question's words at length.
WEEKENDS = [
    ("s1", "Ann", "I climb at the gym on weekends."),
    ("s1", "Bo", "Climbing on weekends sounds fun, Ann! I spend my weekends gardening and my weekends are busy."),
    ("s1", "Ann", "Sundays I also bake bread."),
    ("s1", "Bo", "Weekends with fresh bread and weekends at the gym, what a life, Ann!"),
    ("s1", "Ann", "I rest on weekends too."),
    ("s1", "Bo", "My weekends are for the garden, weekends are precious."),
]


def test_recall_packs_the_named_speakers_answers_first():
    question = "What does Ann do on weekends?"
    budget = 30
    with _store(WEEKENDS) as mem:
        got = [m.text for m in mem.recall(question, budget_tokens=budget).messages]
    with _store(WEEKENDS, unnamed_speakers=1.0) as mem:
        without = [m.text for m in mem.recall(question, budget_tokens=budget).messages]
    ann = {t for _, s, t in WEEKENDS if s == "Ann"}
    assert set(got) == {WEEKENDS[0][2], WEEKENDS[4][2]}  # both of Ann's weekend answers
    assert not ann & set(without)  # valued by their words alone, Bo's replies fill the budget


def test_the_share_is_validated():
    for bad in (-0.1, 1.5, "half"):
        with pytest.raises(InvalidInput, match="unnamed_speakers"):
            Memory(None, config={"retrieval": {"unnamed_speakers": bad}})


def test_speaker_names_follow_appends_and_removals():
    with Memory(None) as mem:
        ann = mem.add("I paint.", speaker="Ann", session_id="s1")
        mem.add("I bake.", speaker="Bo", session_id="s1")
        idx = mem.engine.state().index
        assert channels.speakers_named(idx, analyze("What does Ann do?")) == [("ann", [0])]
        mem.delete([ann.id])  # Ann's only message: her name leaves the tables, Bo is renumbered
        mem.add("I sing.", speaker="Cy", session_id="s1")
        idx = mem.engine.state().index
        assert list(idx.speakers) == ["Bo", "Cy"]
        assert channels.speakers_named(idx, analyze("What does Ann do?")) == []
        assert channels.speakers_named(idx, analyze("What does Cy do?")) == [("cy", [1])]
        assert _named(idx, "What does Cy do?") == [1]


def test_a_question_in_the_first_person_keeps_every_message_as_it_was():
    # the asker is one of the people a first-person question is about: "What did I tell Ann?" asks for the
    # asker's own lines to Ann, which name her to address her
    for question in ("What did I tell Ann about the lake?", "What did Ann say about my painting?"):
        assert _lexical(question) == pytest.approx(_lexical(question, addressed_names=False), rel=1e-12)
        with _store(DIALOGUE) as mem:
            assert _named(mem.engine.state().index, question) == []
    with _store(DIALOGUE) as mem:
        assert _named(mem.engine.state().index, "What did Ann say about the painting?") == [0]


def test_a_speaker_label_in_lower_case_is_a_word():
    # a user / assistant chat whose speakers are its roles: "user" in a question is a word of it, and the
    # assistant's lines about the user table keep their match
    rows = [("s1", "user", "How do I index the user table?"),
            ("s1", "assistant", "Index the user table on its email column; user lookups then take one probe."),
            ("s1", "user", "Thanks, that worked.")]
    question = "How should the user table be indexed?"
    with _store(rows) as mem:
        on = channels.lexical(mem.engine.state().index, analyze(question), mem.config)
        assert _named(mem.engine.state().index, question) == []
    with _store(rows, addressed_names=False) as mem:
        off = channels.lexical(mem.engine.state().index, analyze(question), mem.config)
    assert on.rows.tolist() == off.rows.tolist() and on.scores.tolist() == pytest.approx(off.scores.tolist())
    assert 1 in on.rows.tolist()


def test_a_name_is_found_where_one_stem_stands_for_two_words():
    # "time" and "Tim" share a stem; the question keeps one keyword for both, and still names Tim
    rows = [("s1", "Tim", "I study with the pomodoro method."), ("s1", "John", "Nice, Tim! I never have time.")]
    with _store(rows) as mem:
        q = analyze("Which time management technique does Tim use?")
        assert q.keywords[0] == "time"
        idx = mem.engine.state().index
        assert _named(idx, "Which time management technique does Tim use?") == [idx.speakers.index("Tim")]


def test_search_many_without_priors_leaves_the_named_speakers_alone():
    # priors=False ranks by the channels alone: the same hits as a store without the speaker rules
    question = "What did Ann paint?"
    with _store(DIALOGUE) as mem:
        plain = [(h.id, h.score) for h in mem.search_many(["default"], question, k=7, priors=False)]
        ruled = [(h.id, h.score) for h in mem.search_many(["default"], question, k=7)]
    with _store(DIALOGUE, addressed_names=False, unnamed_speakers=1.0) as mem:
        off = [(h.id, h.score) for h in mem.search_many(["default"], question, k=7, priors=False)]
    assert plain == off
    assert ruled[0][0] == 1 and plain[0][0] != 1  # ids count from 1: Ann's painting first only with the rules
