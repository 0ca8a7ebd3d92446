"""Encoding gate (seed 002 §4.1 stage 1): off by default; novelty, salience, prediction error; reported rejections."""

from __future__ import annotations

import zlib

import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.base.config import GateConfig
from hippo.engine import gate


def _deflate(b: bytes) -> int:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return len(c.compress(b) + c.flush())


def test_novelty_is_the_gzip_cost_against_memory():
    text = "The quarterly budget review moved to the fourteenth of March at the Berlin office."
    assert gate.novelty(text, []) == 1.0                                 # empty memory
    assert gate.novelty("ok", ["anything"]) == 0.05                       # trivially short
    memory = ["Lunch was pasta.", "The weather is grey."]
    m = "\n".join(memory).encode()
    e = text.encode()
    want = (_deflate(m + b"\n" + e) - _deflate(m)) / _deflate(e)
    assert gate.novelty(text, memory) == pytest.approx(min(1.0, want))
    assert gate.novelty(text, [text]) < 0.5 < gate.novelty(text, memory)  # a repeat compresses away


@pytest.mark.parametrize("text,score,category", [
    ("I'll send the report tomorrow.", 0.8, "decision"),
    ("Actually, it's on Tuesday.", 0.6, "correction"),
    ("ok thanks", 0.02, "noise"),
    ("How was the trip?", 0.2, "question"),
])
def test_salience_of_short_messages_by_speech_act(text, score, category):
    assert gate.salience(text) == (score, category)


def test_salience_of_longer_messages_rises_with_facts():
    plain = "it was a long day and I mostly stayed inside reading and resting on the sofa for hours"
    facts = "On March 14 2024 I signed the lease for the flat in Lisbon, rent 1450 euros a month!"
    assert gate.salience(facts)[0] > gate.salience(plain)[0]


def test_prediction_error_needs_a_related_memory():
    h = Memory(None)
    h.add_many({"text": t} for t in ["Our team standup is at 9:30 every morning in room B."] * 2)
    code_of = h.engine.state().life().hier.code_of_stems
    near = "Our team standup is at 9:30 every morning in room B."
    update = "Our team standup moved to 10:15 every morning in the big hall."
    assert gate.prediction_error(code_of, update, near, "other", -1.0) > 0.0
    assert gate.prediction_error(code_of, update, None, "other", 0.1) == 0.0
    assert gate.prediction_error(code_of, update, near, "noise", 0.1) == 0.0
    assert gate.prediction_error(code_of, "Volcanoes erupt lava and ash.", near, "other", 0.5) == 0.0


def test_gate_is_off_by_default():
    mem = Memory(None)
    item = mem.add("ok")
    assert item.id >= 0 and "gate" not in item.metadata


def test_rejections_are_reported_and_admissions_carry_their_scores():
    mem = Memory(None, config={"gate": {"enabled": True}})
    first = mem.add("I moved to Lisbon in March 2023 and started at the design studio on Rua Augusta.")
    assert first.id >= 0 and first.metadata["gate"]["admitted"]
    scores = first.metadata["gate"]
    assert set(scores) >= {"novelty", "salience", "prediction_error", "score", "threshold", "category"}
    assert mem.get(first.id).metadata["gate"] == scores                  # stored with the message
    out = mem.add_many([{"text": "ok"}, {"text": "I'll call the landlord on Monday about the heating."},
                        {"text": "lol"}])
    assert [isinstance(o, gate.RejectedItem) for o in out] == [True, False, True]
    rejected = out[0]
    assert rejected.id == -1 and not rejected.admitted and rejected.text == "ok"
    assert rejected.gate["category"] == "noise" and rejected.gate["salience"] < 0.1
    assert len(mem) == 2                                                  # nothing rejected was stored
    assert out[1].metadata["gate"]["category"] == "decision"


def test_gate_settings_are_validated():
    with pytest.raises(InvalidInput, match="weights"):
        GateConfig(w_novelty=0, w_salience=0, w_prediction=0)
    with pytest.raises(InvalidInput, match="salience_floor"):
        Memory(None, config={"gate": {"salience_floor": 2.0}})


OLD = "I moved to Lisbon in March 2021 with my sister Ana, and I work at the port authority there."
EDITED = "I moved to Lisbon in March 2022 with my sister Ana, and I work at the port authority there."
OTHER = "My favourite band is Radiohead, I saw them live in Porto in 2017."


@pytest.mark.parametrize("replacing", ["ids", "filter"])
def test_an_edited_version_is_judged_without_the_version_it_replaces(replacing):
    """A replacing write's new message is not redundant with the message it replaces: the gate judges it against
    the other messages, as it would have been judged had the old version never been stored. Before, the old version
    was its nearest neighbour, the edit was rejected as a repeat of it, and the old version was deleted anyway."""
    mem = Memory(None, config={"gate": {"enabled": True}})
    old, other = mem.add_many([{"text": OLD, "metadata": {"key": "move"}}, {"text": OTHER}])
    assert old.id >= 0 and other.id >= 0
    fresh = Memory(None, config={"gate": {"enabled": True}})
    fresh.add(OTHER)
    alone = fresh.add(EDITED)  # the reference: the old version never stored
    assert alone.id >= 0
    by = [old.id] if replacing == "ids" else {"key": "move"}
    got = mem.add_many([{"text": EDITED}], replacing=by)
    assert got[0].id >= 0 and got[0].metadata["gate"] == alone.metadata["gate"]
    assert [m.text for m in mem.list()] == [OTHER, EDITED]


def test_a_message_is_not_deleted_when_the_gate_rejects_what_replaces_it():
    """``replacing``: an old message goes only with its new version stored. A new message the gate rejects on its
    own (noise) leaves every message the call replaces; the admitted ones are stored."""
    mem = Memory(None, config={"gate": {"enabled": True}})
    old, other = mem.add_many([{"text": OLD}, {"text": OTHER}])
    got = mem.add_many([{"text": "ok"}], replacing=[old.id])
    assert isinstance(got[0], gate.RejectedItem)
    assert [m.id for m in mem.list()] == [old.id, other.id]
    got = mem.add_many([{"text": EDITED}, {"text": "lol"}], replacing=[old.id, other.id])
    assert [isinstance(o, gate.RejectedItem) for o in got] == [False, True]
    assert [m.text for m in mem.list()] == [OLD, OTHER, EDITED]
    # all admitted: the replaced ones go, in the same call
    got = mem.add_many([{"text": "On Friday I start the new job at the harbour office in Setubal, 9am sharp."}],
                       replacing=[old.id])
    assert got[0].id >= 0
    assert [m.text for m in mem.list()] == [OTHER, EDITED, got[0].text]
    # a deletion alone (no new message) is not the gate's to judge
    assert mem.add_many([], replacing=[other.id]) == [] and [m.text for m in mem.list()] == [EDITED, got[0].text]
