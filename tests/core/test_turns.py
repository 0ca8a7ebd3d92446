"""Turns (NamespaceIndex.turns) and the neighbour smoothing over them: a burst of short messages of one voice is
one turn, whose messages lend each other as neighbours do, and the steps count turns. Checked against a hand-computed
case and a brute-force reference over random conversations; a conversation whose every message is a turn of its own
gives exactly the message-level rule."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hippo import Memory
from hippo.index import channels
from hippo.text.query import analyze


def _store(rows: list[tuple[str | None, str, str]], **retrieval) -> Memory:
    """A namespace of ``(session, speaker, text)`` rows, in that order."""
    mem = Memory(None, config={"retrieval": retrieval} if retrieval else None)
    mem.add_many({"text": t, "speaker": sp, "role": "user", "session_id": s} for s, sp, t in rows)
    return mem


def test_turns_hand_computed():
    rows = [("s1", "Ann", "hi"), ("s1", "Ann", "so"), ("s1", "Bo", "yes"), ("s1", "Bo", "ok"), ("s2", "Bo", "new day"),
            ("s2", "Ann", "hey"), ("s2", "Bo", "there"), (None, "Ann", "note one"), (None, "Ann", "note two")]
    with _store(rows, sitting_gap_s=0) as mem:  # no sittings: the last two are in no unit, turns of their own
        turn, start = mem.engine.state().index.turns()
        assert turn.tolist() == [0, 0, 1, 1, 2, 3, 4, 5, 6]
        assert start.tolist() == [0, 2, 4, 5, 6, 7, 8, 9]


def _reference(rows, acc: np.ndarray, weight: float, span: int) -> np.ndarray:
    """The smoothing written from its definition, turn by turn: a message keeps its score and gains the most of
    ``weight`` x the best score of another message of its turn and ``weight / 2**(k-1)`` x the best score of the
    turn ``k`` turns away in the same session (messages without a session lend and borrow nothing)."""
    turns: list[list[int]] = []
    for r, (s, sp, _) in enumerate(rows):
        if turns and s is not None and rows[turns[-1][0]][0] == s and rows[turns[-1][0]][1] == sp:
            turns[-1].append(r)
        else:
            turns.append([r])
    of = {r: k for k, t in enumerate(turns) for r in t}
    out = acc.copy()
    for r, (s, _, _) in enumerate(rows):
        if s is None:
            continue
        k = of[r]
        lent = [weight * acc[o] for o in turns[k] if o != r]
        for step in range(1, span + 1):
            for j in (k - step, k + step):
                if 0 <= j < len(turns) and rows[turns[j][0]][0] == s:
                    lent.append(weight / 2 ** (step - 1) * max(acc[o] for o in turns[j]))
        out[r] += max(lent, default=0.0)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_smoothing_over_turns_matches_the_reference(seed):
    rng = random.Random(seed)
    words = ["kiln", "glaze", "pottery", "river", "tent", "hike", "cake", "party"]
    rows = []
    for _ in range(rng.randint(8, 40)):
        session = rng.choice(["s1", "s2", "s3", None])
        speaker = rng.choice(["Ann", "Bo"]) if rng.random() < 0.6 else (rows[-1][1] if rows else "Ann")
        rows.append((session if rng.random() < 0.8 or not rows else rows[-1][0], speaker,
                     " ".join(rng.choice(words + ["and", "the", "we", "so"]) for _ in range(rng.randint(1, 6)))))
    weight, span = 0.8, 2
    with _store(rows, sitting_gap_s=0, neighbor_weight=weight, neighbor_span=span) as mem:
        idx = mem.engine.state().index
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
            ("s1", "Bo", "by the lake"), ("s1", "Bo", "three nights"), ("s1", "Ann", "wow, jealous"),
            ("s1", "Bo", "next time you come")]
    with _store(rows, neighbor_weight=0.8, neighbor_span=2) as mem:
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


def test_every_message_a_turn_gives_the_message_level_rule():
    rows = [("s1", "Ann" if k % 2 else "Bo", t) for k, t in enumerate(
        ["the kiln", "nice", "glaze it", "when", "fire the kiln", "ok", "done"])]
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
