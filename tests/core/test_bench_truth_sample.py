"""``hippo bench truth-sample`` on synthetic conversations written in the LoCoMo and BEAM formats (never the real
data): the populations it draws from, the draw, the review sheet and the precision of hand verdicts."""

from __future__ import annotations

import json
import random

import pytest
from hippo_bench import main as bench_main
from hippo_bench.truth_sample import dialogues, draw, excerpt, populations, score, wilson

LOCOMO = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Maya", "speaker_b": "Tom",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Maya", "dia_id": "D1:1", "text": "I live in Boston with my sister."},
            {"speaker": "Tom", "dia_id": "D1:2", "text": "Let's work together on the garden!"},
            {"speaker": "Maya", "dia_id": "D1:3", "text": "I went to a support group yesterday."},
            {"speaker": "Tom", "dia_id": "D1:4", "text": "I'm training for the Dublin half marathon in October."},
        ],
        "session_2_date_time": "10:00 am on 10 June, 2023",
        "session_2": [
            {"speaker": "Maya", "dia_id": "D2:1", "text": "We finally relocated to Denver last month!"},
            {"speaker": "Tom", "dia_id": "D2:2", "text": "Great news. The weather is nice today."},
        ],
    },
    "qa": [],
}]

BEAM = [
    {"batch_number": 1, "time_anchor": "March-15-2024", "turns": [[
        {"role": "user", "id": 0, "content": "I've increased my snack budget to $65 for the movie night."},
        {"role": "assistant", "id": 1, "content": "I live in Paris. Great, $65 works well for snacks."},
    ]]},
    {"batch_number": 2, "time_anchor": "April-02-2024", "turns": [[
        {"role": "user", "id": 2, "content": "I've adjusted the snack budget to $75, any drink ideas?"},
        {"role": "assistant", "id": 3, "content": "I moved to Rome. Sure: lemonade and iced tea."},
    ]]},
]


@pytest.fixture()
def data(tmp_path):
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps(LOCOMO))
    beam = tmp_path / "beam"
    (beam / "1").mkdir(parents=True)
    (beam / "1" / "chat.json").write_text(json.dumps(BEAM))
    return locomo, beam


def test_populations_of_the_synthetic_conversations(data):
    convs = dialogues(data)
    assert [d.name for d in convs] == ["locomo:conv-x", "beam:1"]
    marks, times = populations(convs[0])
    # one mark: Boston -> Denver, said by Maya; Tom's "work together" is no statement
    assert [(m.old_ref, m.new_ref, m.attribute, m.kind) for m in marks] == [("D1:1", "D2:1", "residence", "update")]
    # three shown dates: "yesterday" (7 May), the coming October of a plan, "last month" (May); "today" is the day
    # the message was said, which the context header already shows
    assert sorted((t.ref, t.phrase, t.resolved) for t in times) == [
        ("D1:3", "yesterday", "7 May 2023"), ("D1:4", "in October", "October 2023"),
        ("D2:1", "last month", "May 2023")]
    marks, times = populations(convs[1])
    # the assistant's first-person lines make no mark; the user's budget does
    assert [(m.old_ref, m.new_ref, m.attribute, m.old_value, m.new_value) for m in marks] == \
        [("chat 0", "chat 2", "snack_budget", "65", "75")]


def test_sheet_and_verdicts(data, tmp_path):
    locomo, beam = data
    out = tmp_path / "sample.json"
    assert bench_main(["truth-sample", "--data", str(locomo), "--data", str(beam), "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["population"] == {"marks": 2, "times": 3, "updates": 2}
    assert len(result["marks"]) == 2 and len(result["times"]) == 3  # fewer than asked: all of them
    sheet = (tmp_path / "sample.md").read_text()
    assert all(f"`{m['key']}`" in sheet for m in result["marks"] + result["times"])
    verdicts = {m["key"]: "ok" for m in result["marks"]}
    keys = [t["key"] for t in result["times"]]
    verdicts[keys[0]] = {"verdict": "wrong", "note": "synthetic"}
    verdicts[keys[1]] = "ok"  # keys[2] left unreviewed
    vfile = tmp_path / "verdicts.json"
    vfile.write_text(json.dumps(verdicts))
    assert bench_main(["truth-sample", "--data", str(locomo), "--data", str(beam), "--out", str(out),
                       "--verdicts", str(vfile)]) == 0
    scores = json.loads(out.read_text())["scores"]
    assert scores["marks"] == {"reviewed": 2, "ok": 2, "wrong": 0, "unreviewed": 0, "precision": 1.0,
                               "wilson95": pytest.approx(list(wilson(2, 2)))}
    assert (scores["times"]["ok"], scores["times"]["wrong"], scores["times"]["unreviewed"]) == (1, 1, 1)
    assert scores["times"]["precision"] == 0.5


def test_a_missing_data_path_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        dialogues([tmp_path / "nope.json"])


def test_wilson_interval_against_published_values():
    # 9 of 10 and 0 of 100 (Wilson 1927; the usual 95% score interval, z = 1.96)
    lo, hi = wilson(9, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.596, 0.982)
    lo, hi = wilson(0, 100)
    assert lo == 0.0 and round(hi, 3) == 0.037


def test_draw_is_uniform_without_replacement_and_keeps_population_order():
    pop = list(range(50))
    assert draw(pop, 80, random.Random(1)) == pop
    got = draw(pop, 10, random.Random(1))
    assert len(set(got)) == 10 and got == sorted(got) and set(got) <= set(pop)
    assert got == draw(pop, 10, random.Random(1)) and got != draw(pop, 10, random.Random(2))


def test_score_counts_unreviewed_items_as_such():
    s = score(["a", "b", "c"], {"a": "ok", "b": {"verdict": "wrong"}, "z": "ok"})
    assert (s["ok"], s["wrong"], s["unreviewed"], s["precision"]) == (1, 1, 1, 0.5)
    assert score([], {})["precision"] is None


def test_excerpt_centres_on_the_phrase():
    text = "x " * 400 + "I moved to Denver last month" + " y" * 400
    ex = excerpt(text, "Denver", width=30)
    assert "Denver" in ex and ex.startswith("...") and ex.endswith("...") and len(ex) < 80
    assert excerpt("short text", "nothing") == "short text"
