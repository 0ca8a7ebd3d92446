"""Sittings: messages without a session id grouped by the pauses between them (NamespaceIndex.units), so that a
chat imported with its times but no session ids is read as the same dialogue as one with sessions: neighbours
lend to each other and a question's session lift applies. Checked by hand on the codes, and against the same
conversation stored with explicit session ids (the reference)."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from hippo import Memory
from hippo.index import channels
from hippo.base.config import Config

SITTING_GAP_S = Config().retrieval.sitting_gap_s
from hippo.text import tokenizer
from hippo.text.query import analyze

T0 = datetime(2024, 3, 1, 9, 0)

# (day, minute, speaker, text): three sittings a day or more apart, each a dialogue of two people. Answers often
# share no word with the question they answer ("Yep, with coconut milk!"), which only the neighbour they follow finds.
CHAT = [
    (0, 0, "Ann", "Did you finish the lactose-free cake for the party?"),
    (0, 1, "Bo", "Yep, I made it with coconut milk so nobody gets sick!"),
    (0, 2, "Ann", "Clever. Was the oven behaving this time?"),
    (0, 4, "Bo", "Mostly, it burns the left side a little."),
    (2, 0, "Bo", "We adopted a greyhound from the rescue on Saturday."),
    (2, 1, "Ann", "No way! What is the greyhound called?"),
    (2, 3, "Bo", "Biscuit. She sleeps twenty hours a day."),
    (2, 5, "Ann", "Send photos of her please."),
    (5, 0, "Ann", "My marathon training plan starts in October."),
    (5, 2, "Bo", "How many kilometres a week?"),
    (5, 3, "Ann", "Forty at first, then sixty before the race."),
    (5, 9, "Bo", "Rest days matter as much as the long runs."),
]


def _add(mem: Memory, with_sessions: bool) -> None:
    mem.add_many({"text": text, "speaker": who, "timestamp": T0 + timedelta(days=day, minutes=minute),
                  **({"session_id": f"day-{day}"} if with_sessions else {})}
                 for day, minute, who, text in CHAT)


def _tokens(text: str) -> int:
    return len(tokenizer.encode(text))


def test_sittings_by_hand():
    t = T0.timestamp()
    rows = [  # (session id, seconds after T0, speaker)
        ("s1", 0, "Ann"), ("s1", 10, "Bo"),                       # an explicit session keeps its code
        (None, 100, "Ann"), (None, 100 + SITTING_GAP_S, "Bo"),   # exactly the gap apart: one sitting
        ("s1", 5000, "Ann"),                                      # session rows in between do not cut a sitting
        (None, 2 * SITTING_GAP_S + 100, "Ann"),                   # still within the gap of the previous bare row
        (None, 3 * SITTING_GAP_S + 101, "Ann"),                   # one second past it: a new sitting, one voice
        (None, 3 * SITTING_GAP_S + 200, "Ann"),
        (None, 10 * SITTING_GAP_S, "Bo"),                         # a third sitting: Bo, then the assistant
        (None, 10 * SITTING_GAP_S + 5, None),
    ]
    texts = [f"message number {k} about nothing much" for k in range(len(rows))]
    with Memory(None) as mem:
        mem.add_many({"text": texts[k], "speaker": who, "session_id": sid, "timestamp": t + dt,
                      "role": "assistant" if who is None else "user"}
                     for k, (sid, dt, who) in enumerate(rows))
        idx = mem.engine.state().index
        codes, lengths = idx.units()
        s1, none = idx.sessions.index("s1"), idx.sessions.index(None)
        first, third = len(idx.sessions), len(idx.sessions) + 1
        assert codes.tolist() == [s1, s1, first, first, s1, first, none, none, third, third]
        want = np.zeros(len(idx.sessions) + 2)
        for k, c in enumerate(codes.tolist()):
            want[c] += _tokens(texts[k])
        want[none] = 0.0  # a monologue is in no unit
        assert lengths.tolist() == want.tolist()
        with pytest.raises(ValueError):
            codes[0] = 1  # read only: callers share it


def test_messages_added_together_without_times_are_one_sitting():
    with Memory(None) as mem:
        mem.add_many({"text": text, "speaker": who} for _, _, who, text in CHAT)
        codes, lengths = mem.engine.state().index.units()
        assert np.unique(codes).size == 1 and lengths[codes[0]] == sum(_tokens(c[3]) for c in CHAT)


def test_units_follow_appends_and_deletions():
    with Memory(None) as mem:
        _add(mem, with_sessions=False)
        idx = mem.engine.state().index
        assert np.unique(idx.units()[0]).size == 3
        later = T0 + timedelta(days=9)
        mem.add_many([{"text": "New sitting, Ann here.", "speaker": "Ann", "timestamp": later},
                      {"text": "Bo answering.", "speaker": "Bo", "timestamp": later + timedelta(minutes=1)}])
        idx = mem.engine.state().index
        assert np.unique(idx.units()[0]).size == 4
        ids = [h.id for h in mem.search("greyhound Biscuit rescue photos", k=20)]
        day2 = [i for i in ids if "greyhound" in mem.get(i).text or "Biscuit" in mem.get(i).text
                or "photos" in mem.get(i).text or "called" in mem.get(i).text]
        mem.delete(day2)
        idx = mem.engine.state().index
        codes, lengths = idx.units()
        assert np.unique(codes).size == 3 and len(idx) == len(CHAT) + 2 - 4
        assert lengths.sum() == pytest.approx(idx.doc_lengths().sum())


@pytest.mark.parametrize("question", ["What did Bo make the lactose-free cake with?", "What is the greyhound called?",
                                      "How far will Ann run a week for the marathon?"])
def test_a_chat_without_session_ids_is_read_like_the_same_chat_with_them(question):
    with Memory(None) as bare, Memory(None) as named:
        _add(bare, with_sessions=False)
        _add(named, with_sessions=True)
        bi, ni = bare.engine.state().index, named.engine.state().index
        q = analyze(question)
        # the lexical channel with neighbours: the same rows and scores
        b, n = channels.lexical(bi, q, bare.config, smooth=True), channels.lexical(ni, q, named.config, smooth=True)
        assert b.rows.tolist() == n.rows.tolist()
        assert np.allclose(b.scores, n.scores, rtol=1e-12, atol=0)
        # BM25 over sittings equals BM25 over the sessions they stand for (matched by their rows)
        bs, ns = channels.sessions(bi, q, bare.config), channels.sessions(ni, q, named.config)
        bc, nc = bi.units()[0], ni.units()[0]
        assert np.allclose(bs[bc], ns[nc], rtol=1e-12, atol=0) and ns.max() > 0
        for budget in (40, 80, 160):
            got = [m.text for m in bare.recall(question, budget_tokens=budget).messages]
            want = [m.text for m in named.recall(question, budget_tokens=budget).messages]
            assert sorted(got) == sorted(want)


def test_the_answer_that_shares_no_word_is_found_through_its_sitting():
    with Memory(None) as mem:
        _add(mem, with_sessions=False)
        q = analyze("What was in the lactose-free cake?")
        idx = mem.engine.state().index
        answer = next(r for r in range(len(idx)) if "coconut" in idx.text_of(r))
        assert answer not in channels.lexical(idx, q, mem.config).rows.tolist()
        assert answer in channels.lexical(idx, q, mem.config, smooth=True).rows.tolist()
        assert "coconut" in mem.recall("What was in the lactose-free cake?", budget_tokens=60).text


def test_notes_of_one_writer_do_not_lend_to_each_other():
    notes = ["The cake recipe uses coconut milk.", "Buy a new oven thermometer.", "Greyhound adoption form due Friday."]
    with Memory(None) as mem:
        mem.add_many({"text": t, "speaker": "me", "timestamp": T0 + timedelta(minutes=k)} for k, t in enumerate(notes))
        idx = mem.engine.state().index
        codes, lengths = idx.units()
        assert set(codes.tolist()) == {idx.sessions.index(None)} and lengths.sum() == 0
        q = analyze("coconut cake")
        assert (channels.lexical(idx, q, mem.config, smooth=True).rows.tolist()
                == channels.lexical(idx, q, mem.config).rows.tolist() == [0])


def test_the_gap_is_configured_and_validated():
    from hippo.base.errors import InvalidInput

    with Memory(None, config={"retrieval": {"sitting_gap_s": 0}}) as off, \
            Memory(None, config={"retrieval": {"sitting_gap_s": 3 * 86400}}) as wide:
        _add(off, with_sessions=False)
        _add(wide, with_sessions=False)
        oi, wi = off.engine.state().index, wide.engine.state().index
        assert set(oi.units()[0].tolist()) == {oi.sessions.index(None)}  # as before sittings: no unit at all
        assert np.unique(wi.units()[0]).size == 1  # days 0 and 2 within three days, day 5 within three of day 2
        q = analyze("What was in the lactose-free cake?")
        assert channels.lexical(oi, q, off.config, smooth=True).rows.tolist() == \
            channels.lexical(oi, q, off.config).rows.tolist()
    for bad in (-1, 31 * 86400, float("nan")):
        with pytest.raises(InvalidInput, match="sitting_gap_s"):
            Memory(None, config={"retrieval": {"sitting_gap_s": bad}})
