"""Turns (NamespaceIndex.turns) and the neighbour smoothing over them: a burst of short messages of one voice is
one turn, whose messages lend each other as neighbours do, and the steps count turns. Checked against a hand-computed
case and a brute-force reference over random conversations; a conversation whose every message is a turn of its own
gives exactly the message-level rule."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from hippo import Memory
from hippo.index import channels
from hippo.index.coindex import CONTINUER_TOKENS
from hippo.text import tokenizer
from hippo.text.query import analyze


def _store(rows: list[tuple[str | None, str, str]], **retrieval) -> Memory:
    """A namespace of ``(session, speaker, text)`` rows, in that order. A message lends the score it ranks by
    (``neighbor_b`` = ``bm25_b``), so that the references here check the turns alone; what a message lends under
    standard BM25's b is tested in test_memory.py."""
    retrieval.setdefault("neighbor_b", 0.3)
    mem = Memory(None, config={"retrieval": retrieval})
    mem.add_many({"text": t, "speaker": sp, "role": "user", "session_id": s} for s, sp, t in rows)
    return mem


def test_turns_hand_computed():
    rows = [("s1", "Ann", "hi"), ("s1", "Ann", "so"), ("s1", "Bo", "yes"), ("s1", "Bo", "ok"), ("s2", "Bo", "new day"),
            ("s2", "Ann", "hey"), ("s2", "Bo", "there you are"), (None, "Ann", "note one"), (None, "Ann", "note two")]
    with _store(rows, sitting_gap_s=0) as mem:  # no sittings: the last two are in no unit, turns of their own
        turn, start, place = mem.engine.state().index.turns()
        assert turn.tolist() == [0, 0, 1, 1, 2, 3, 4, 5, 6]
        assert start.tolist() == [0, 2, 4, 5, 6, 7, 8, 9]
        # Ann's "hey" between two of Bo's turns in s2 is a continuer: half a place from either
        assert place.tolist() == [1, 2, 3, 3.5, 4, 5, 6]


def _turns_of(rows) -> tuple[list[list[int]], list[float]]:
    """The turns and their places written from their definition: runs of one speaker in one session (messages
    without a session: a turn each); a place more per turn, but half a place to and from a continuer, a turn of one
    message of at most ``CONTINUER_TOKENS`` tokens, shorter than the messages on either side, between two turns of
    one other speaker in its session."""
    turns: list[list[int]] = []
    for r, (s, sp, _) in enumerate(rows):
        if turns and s is not None and rows[turns[-1][0]][0] == s and rows[turns[-1][0]][1] == sp:
            turns[-1].append(r)
        else:
            turns.append([r])
    size = [len(tokenizer.encode(t)) for _, _, t in rows]

    def continuer(k: int) -> bool:
        if not 0 < k < len(turns) - 1 or len(turns[k]) != 1:
            return False
        r, before, after = turns[k][0], turns[k - 1][-1], turns[k + 1][0]
        return (rows[r][0] is not None and rows[before][0] == rows[r][0] == rows[after][0]
                and rows[before][1] == rows[after][1] and size[r] <= CONTINUER_TOKENS
                and size[r] < size[before] and size[r] < size[after])

    places, at = [], 0.0
    for k in range(len(turns)):
        at += 0.5 if continuer(k) or continuer(k - 1) else 1.0
        places.append(at)
    return turns, places


def _reference(rows, acc: np.ndarray, weight: float, span: int) -> np.ndarray:
    """The smoothing written from its definition, turn by turn: a message keeps its score and gains the most of
    ``weight`` x the best score of another message of its turn and ``weight / 2**(k-1)`` x the best score of a turn
    ``k`` steps away in the same session, a step being a place or less (messages without a session lend and borrow
    nothing)."""
    turns, places = _turns_of(rows)
    of = {r: k for k, t in enumerate(turns) for r in t}
    out = acc.copy()
    for r, (s, _, _) in enumerate(rows):
        if s is None:
            continue
        k = of[r]
        lent = [weight * acc[o] for o in turns[k] if o != r]
        for j in range(len(turns)):
            step = max(1, math.ceil(abs(places[j] - places[k])))
            if j != k and step <= span and rows[turns[j][0]][0] == s:
                lent.append(weight / 2 ** (step - 1) * max(acc[o] for o in turns[j]))
        out[r] += max(lent, default=0.0)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_smoothing_over_turns_matches_the_reference(seed):
    rng = random.Random(seed)
    words = ["kiln", "glaze", "pottery", "river", "tent", "hike", "cake", "party"]
    rows = []
    for _ in range(rng.randint(8, 40)):
        session = rng.choice(["s1", "s2", "s3", None])
        last = rows[-1][1] if rows else "Bo"
        speaker = ("Bo" if last == "Ann" else "Ann") if rng.random() < 0.75 else last
        text = (rng.choice(["lol", "omg", "ok", "kiln!"]) if rng.random() < 0.3 else
                " ".join(rng.choice(words + ["and", "the", "we", "so"]) for _ in range(rng.randint(2, 8))))
        rows.append((session if rng.random() < 0.2 or not rows else rows[-1][0], speaker, text))
    weight, span = 0.8, 2
    with _store(rows, sitting_gap_s=0, neighbor_weight=weight, neighbor_span=span) as mem:
        idx = mem.engine.state().index
        turns, places = _turns_of(rows)
        assert idx.turns()[0].tolist() == [k for k, t in enumerate(turns) for _ in t]
        assert idx.turns()[2].tolist() == places
        for question in ("kiln glaze", "tent", "party cake river"):
            q = analyze(question)
            plain = channels.lexical(idx, q, mem.config)
            acc = np.zeros(len(rows))
            acc[plain.rows] = plain.scores
            want = _reference(rows, acc, weight, span)
            got = channels.lexical(idx, q, mem.config, smooth=True)
            assert got.rows.tolist() == np.flatnonzero(want > 0).tolist(), question
            assert np.allclose(got.scores, want[got.rows], rtol=1e-12, atol=0), question


def test_a_burst_is_one_turn_and_a_reply_after_it_is_one_step_away():
    rows = [("s1", "Ann", "how was the weekend?"), ("s1", "Bo", "guess what"), ("s1", "Bo", "we went camping"),
            ("s1", "Bo", "by the lake"), ("s1", "Bo", "three nights"), ("s1", "Ann", "wow, I am so jealous of you"),
            ("s1", "Bo", "next time you come")]
    # the smoothing alone: the question names Bo, whose partner's messages would otherwise count half
    with _store(rows, neighbor_weight=0.8, neighbor_span=2, unnamed_speakers=1.0) as mem:
        idx = mem.engine.state().index
        q = analyze("Where did Bo go camping?")
        plain = channels.lexical(idx, q, mem.config)
        s = dict(zip(plain.rows.tolist(), plain.scores.tolist()))
        camping = 2
        got = dict(zip(*(a.tolist() for a in (lambda g: (g.rows, g.scores))(channels.lexical(
            idx, q, mem.config, smooth=True)))))
        # the burst's other messages, "by the lake" three messages on, borrow as a neighbour one step away would
        for r in (1, 3, 4):
            assert got[r] == pytest.approx(s.get(r, 0.0) + 0.8 * s[camping])
        # the turns before and after the burst are one step away, the one after that two
        assert got[0] == pytest.approx(s.get(0, 0.0) + 0.8 * s[camping])
        assert got[5] == pytest.approx(s.get(5, 0.0) + 0.8 * s[camping])
        assert got[6] == pytest.approx(s.get(6, 0.0) + max(0.4 * s[camping], 0.8 * s.get(5, 0.0)))


def test_a_continuer_takes_no_place():
    rows = [("s1", "Ann", "how was the weekend?"), ("s1", "Bo", "we went camping"), ("s1", "Ann", "omg"),
            ("s1", "Bo", "by the lake"), ("s1", "Ann", "that sounds like so much fun"),
            ("s1", "Bo", "it really was, thanks"), ("s1", "Ann", "I am glad you had a good time")]
    with _store(rows, neighbor_weight=0.8, neighbor_span=2, unnamed_speakers=1.0) as mem:  # the smoothing alone
        idx = mem.engine.state().index
        # "omg" between two of Bo's turns is a continuer; "we went camping" is no shorter than both its neighbours
        assert idx.turns()[2].tolist() == [1, 2, 2.5, 3, 4, 5, 6]
        q = analyze("Where did Bo go camping?")
        plain = channels.lexical(idx, q, mem.config)
        s = dict(zip(plain.rows.tolist(), plain.scores.tolist()))
        smoothed = channels.lexical(idx, q, mem.config, smooth=True)
        got = dict(zip(smoothed.rows.tolist(), smoothed.scores.tolist()))
        camping = s[1]
        # "by the lake" is one step from "we went camping", as if Bo had not been interrupted (two turns on)
        assert got[3] == pytest.approx(s.get(3, 0.0) + 0.8 * camping)
        assert got[2] == pytest.approx(s.get(2, 0.0) + 0.8 * camping)  # the continuer: half a place
        # two places on: the reply to "by the lake" borrows the camping message's score at the second step's share
        assert got[4] == pytest.approx(s.get(4, 0.0) + max(0.4 * camping, 0.8 * s.get(3, 0.0)))
        assert got[5] == pytest.approx(s.get(5, 0.0) + max(0.8 * s.get(4, 0.0), 0.4 * s.get(3, 0.0),
                                                          0.8 * s.get(6, 0.0)))
    long = [(s_, sp, "wow that is wonderful news" if t == "omg" else t) for s_, sp, t in rows]
    with _store(long) as mem:
        # a longer reaction takes the floor; Bo's two terse replies between Ann's longer turns take half places,
        # and the places still grow with every other turn (no run of continuers: each is shorter than its neighbours)
        assert mem.engine.state().index.turns()[2].tolist() == [1, 1.5, 2, 2.5, 3, 4, 5]


def test_every_message_a_turn_gives_the_message_level_rule():
    rows = [("s1", "Ann" if k % 2 else "Bo", t) for k, t in enumerate(
        ["the kiln is hot now", "that is nice to hear", "glaze it in the morning", "when will it be ready",
         "fire the kiln on Friday", "ok, see you then", "done with it all"])]
    with _store(rows, neighbor_weight=0.5, neighbor_span=2) as mem:
        idx = mem.engine.state().index
        q = analyze("kiln glaze")
        plain = channels.lexical(idx, q, mem.config)
        acc = np.zeros(len(rows))
        acc[plain.rows] = plain.scores
        want = acc.copy()  # each message: the best of its neighbours one (x0.5) and two (x0.25) messages away
        for r in range(len(rows)):
            want[r] += max([0.5 * acc[j] for j in (r - 1, r + 1) if 0 <= j < len(rows)]
                           + [0.25 * acc[j] for j in (r - 2, r + 2) if 0 <= j < len(rows)])
        got = channels.lexical(idx, q, mem.config, smooth=True)
        assert np.allclose(got.scores, want[got.rows], rtol=1e-12, atol=0)
        assert got.rows.tolist() == np.flatnonzero(want > 0).tolist()


def test_recall_brings_the_burst_that_answers_a_question_whole():
    with Memory(None) as mem:
        for k in range(25):
            mem.add(f"Day {k}: the weather was fine and we stayed home.", speaker="Ann", session_id=f"d{k}")
            mem.add(f"My old job was dull on day {k}.", speaker="Bo", session_id=f"d{k}")
        # the last two are three and four messages after the one that matches: too far for a message's neighbours
        burst = ["I finally got the new job", "guess where", "at the aquarium", "the big one downtown",
                 "starting in May!!"]
        mem.add("Any news?", speaker="Ann", session_id="news")
        for t in burst:
            mem.add(t, speaker="Bo", session_id="news")
        mem.add("Congrats!!", speaker="Ann", session_id="news")
        rc = mem.recall("Where is the new job?", budget_tokens=60)
        assert set(burst) <= {m.text for m in rc.messages}
