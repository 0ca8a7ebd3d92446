"""Speaker profiles (seed 002 §4.1 stage 5): attribute maps, style vectors, query intent and the boost prior."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from hippo import InvalidInput, Memory, NotFound
from hippo.engine.profiles import ProfileIndex, style_vector
from hippo.text.attributes import extract
from hippo.engine.rank import profile_factors

T0 = 1_700_000_000.0
DAY = 86_400.0

# (speaker, text) in time order, one day apart; attribute statements by hand below.
CONVERSATION = [
    ("Ann", "Hi Bo! I am a nurse. I live in Boston, near the harbour."),
    ("Bo", "Nice to meet you. I'm from Sweden and I prefer tea over coffee."),
    ("Ann", "My favourite colour is green. My dog's name is Rex."),
    ("Bo", "I love hiking and I love painting. I don't like jazz."),
    ("Ann", "Big news: I moved to Denver last month!"),
    ("Bo", "That sounds great, the mountains must be lovely."),
    ("Ann", "I'm a big fan of pottery - it calms me."),
    ("Bo", "I work at Volvo as an engineer."),
]

EXPECTED = {
    "Ann": {
        "occupation": [("nurse", 0)],
        "residence": [("Boston", 0), ("Denver", 4)],
        "favorite_color": [("green", 2)],
        "dog_name": [("Rex", 2)],
        "likes": [("pottery", 6)],
    },
    "Bo": {
        "origin": [("Sweden", 1)],
        "prefers": [("tea", 1)],
        "likes": [("hiking", 3), ("painting", 3)],
        "dislikes": [("jazz", 3)],
        "employer": [("Volvo", 7)],
    },
}


def _fill(mem: Memory, conversation=CONVERSATION, t0: float = T0) -> list[int]:
    items = mem.add_many([{"text": text, "speaker": who, "timestamp": t0 + k * DAY}
                          for k, (who, text) in enumerate(conversation)])
    return [it.id for it in items]


def _expected(ids: list[int], t0: float = T0) -> dict:
    return {who: {a: [{"value": v, "message_id": ids[k], "timestamp": t0 + k * DAY} for v, k in vals]
                  for a, vals in sorted(attrs.items())}
            for who, attrs in EXPECTED.items()}


# -- extraction -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("I am a nurse.", [("occupation", "nurse")]),
    ("I'm an introvert, honestly.", [("identity", "introvert")]),
    ("I'm from Sweden!", [("origin", "Sweden")]),
    ("My favourite colour is green.", [("favorite_color", "green")]),
    ("my favorite kind of music is jazz", [("favorite_music", "jazz")]),
    ("Harry Potter is my favorite book.", [("favorite_book", "Harry Potter")]),
    ("My dog's name is Rex.", [("dog_name", "Rex")]),
    ("I have a cat named Tom and two dogs.", [("cat_name", "Tom")]),
    ("I prefer tea over coffee.", [("prefers", "tea")]),
    ("I love hiking and I love painting.", [("likes", "hiking"), ("likes", "painting")]),
    ("I work at Volvo as an engineer.", [("employer", "Volvo")]),
    ("I work as a software engineer.", [("occupation", "software engineer")]),
    ("I live in Boston, it's nice.", [("residence", "Boston")]),
    ("I don't like jazz.", [("dislikes", "jazz")]),
    ("I hate rain but I love snow.", [("dislikes", "rain"), ("likes", "snow")]),
    ("I'm not really into games.", [("dislikes", "games")]),
    ("I'm a big fan of pottery - it calms me.", [("likes", "pottery")]),
    ("I'm really into classical music but keen to try jazz.", [("likes", "classical music")]),
    ("I'm allergic to cats.", [("allergy", "cats")]),
    ("I am 32 years old.", [("age", "32")]),
    ("I was born in 1990.", [("birth_year", "1990")]),
    ("I grew up in Lyon.", [("origin", "Lyon")]),
    ("I play the guitar.", [("plays", "guitar")]),
    ("I have two kids.", [("family", "two kids")]),
    # not attributes: opinions about the listener, feelings, referential objects, events
    ("I love that you chose pottery.", []),
    ("I'm so proud of you!", []),
    ("I'm a bit nervous.", []),
    ("I love it when you call.", []),
    ("I like having them around.", []),
    ("She loves hiking.", []),
    ("We went to the lake yesterday.", []),
    ("Lost my job as a banker, so I'm gonna start a business.", []),
])
def test_extract_table(text, want):
    # a profile holds first-person values that hold; statements that a value stopped holding are truth's
    assert [(s.attribute, s.value) for s in extract(text) if not s.negated] == want


def test_a_value_that_stopped_holding_is_a_negated_statement_not_a_profile_value():
    st = extract("Lost my job as a banker, so I'm gonna start a business.", "Jon")
    assert [(s.entity, s.attribute, s.value, s.negated) for s in st] == [("jon", "occupation", "banker", True)]
    p = ProfileIndex()
    p.append([1], ["Jon"], ["Lost my job as a banker, so I'm gonna start a business."], [T0])
    assert p.current("Jon") == {}


def test_extract_rejects_non_str():
    with pytest.raises(InvalidInput, match="text"):
        extract(b"I love tea")  # type: ignore[arg-type]


# -- Memory.profile ---------------------------------------------------------------------------------------------

def test_profile_exact_maps_with_provenance():
    mem = Memory(None)
    ids = _fill(mem)
    want = _expected(ids)
    for who in ("Ann", "Bo"):
        p = mem.profile(who)
        assert p["speaker"] == who
        assert p["n_messages"] == 4
        assert p["attributes"] == want[who]
        assert p["current"] == {a: vals[-1]["value"] for a, vals in want[who].items()}
    assert mem.profile("Ann")["current"]["residence"] == "Denver"  # newest is current after a move
    assert mem.speakers() == ["Ann", "Bo"]


def test_repeated_value_is_not_stored_twice_but_a_change_back_is():
    mem = Memory(None)
    ids = _fill(mem, [("Cy", "I live in Oslo."), ("Cy", "I still live in Oslo."), ("Cy", "I moved to Rome."),
                      ("Cy", "I moved to Oslo again.")])
    vals = mem.profile("Cy")["attributes"]["residence"]
    assert [(v["value"], v["message_id"]) for v in vals] == [("Oslo", ids[0]), ("Rome", ids[2]), ("Oslo", ids[3])]
    assert mem.profile("Cy")["current"] == {"residence": "Oslo"}


def test_values_ordered_by_timestamp_not_arrival():
    p = ProfileIndex()
    p.append([10, 11], ["Di", "Di"], ["I live in Paris.", "I live in Nice."], [T0 + 5 * DAY, T0])
    vals = p.attributes("Di")["residence"]
    assert [(v["value"], v["message_id"]) for v in vals] == [("Nice", 11), ("Paris", 10)]
    assert p.current("Di") == {"residence": "Paris"}


def test_missing_timestamps_count_as_latest_seen():
    p = ProfileIndex()
    p.append([1, 2, 3], ["Ed"] * 3, ["I live in Rome.", "I live in Oslo.", "I live in Pisa."],
             [T0 + DAY, None, T0])
    # id 2 has no time: it is placed at the latest time seen (T0 + DAY), after id 1; id 3 is older than both
    assert [v["message_id"] for v in p.attributes("Ed")["residence"]] == [3, 1, 2]
    assert p.attributes("Ed")["residence"][1]["timestamp"] == T0 + DAY
    assert p.attributes("Ed")["residence"][2]["timestamp"] is None


def test_memory_is_bounded_per_speaker():
    p = ProfileIndex(max_values=3, max_attributes=2)
    cities = ["Rome", "Oslo", "Pisa", "Nice", "Lima"]
    p.append(list(range(5)), ["Fi"] * 5, [f"I live in {c}." for c in cities], [T0 + k for k in range(5)])
    p.append([5, 6, 7], ["Fi"] * 3, ["I love tea.", "I'm from Peru.", "I hate rain."], [T0 + 9] * 3)
    attrs = p.attributes("Fi")
    assert [v["value"] for v in attrs["residence"]] == ["Pisa", "Nice", "Lima"]  # the oldest dropped
    assert sorted(attrs) == ["likes", "residence"]  # a third attribute is not opened
    # evicted values no longer boost: message 0 (Rome) was dropped, message 4 (Lima) still counts
    f = p.boost("Where does Fi live?", np.array([0, 4]))
    assert f.tolist() == [1.0, 1.3]


def test_profile_errors():
    mem = Memory(None)
    _fill(mem)
    with pytest.raises(NotFound, match="Zed"):
        mem.profile("Zed")
    for bad in (None, 3, "", "   ", ["Ann"]):
        with pytest.raises(InvalidInput, match="speaker"):
            mem.profile(bad)  # type: ignore[arg-type]
    mem.close()
    with pytest.raises(Exception, match="closed"):
        mem.profile("Ann")


def test_messages_without_speaker_are_skipped():
    mem = Memory(None)
    mem.add("I love tea.")
    mem.add("I love coffee.", speaker="Gil")
    assert mem.speakers() == ["Gil"]
    assert mem.profile("Gil")["current"] == {"likes": "coffee"}


def test_aprofile_matches_profile():
    mem = Memory(None)
    _fill(mem)
    assert asyncio.run(mem.aprofile("Bo")) == mem.profile("Bo")
    assert asyncio.run(mem.aspeakers()) == ["Ann", "Bo"]


def test_namespace_isolation():
    mem = Memory(None)
    a, b = mem.using("a"), mem.using("b")
    _fill(a)
    b.add("I live in Lima.", speaker="Ann")
    assert b.speakers() == ["Ann"]
    assert b.profile("Ann")["attributes"] == {"residence": [
        {"value": "Lima", "message_id": b.list()[0].id, "timestamp": None}]}
    assert a.profile("Ann")["current"]["residence"] == "Denver"
    with pytest.raises(NotFound):
        b.profile("Bo")


def test_incremental_updates_after_more_adds():
    mem = Memory(None)
    ids = _fill(mem, CONVERSATION[:4])
    first = mem.profile("Ann")
    assert first["current"]["residence"] == "Boston" and first["n_messages"] == 2
    ids += _fill(mem, CONVERSATION[4:], t0=T0 + 4 * DAY)
    whole = Memory(None)
    whole_ids = _fill(whole)
    for who in ("Ann", "Bo"):
        got, ref = mem.profile(who), whole.profile(who)
        assert got["attributes"] == _expected(ids)[who]
        assert got["style"] == ref["style"]  # incremental == from scratch
        assert got["n_messages"] == ref["n_messages"] == 4
        assert got["current"] == ref["current"]
    assert mem.profile("Ann")["attributes"]["residence"][1]["message_id"] == ids[4]
    assert whole.profile("Ann")["attributes"]["residence"][1]["message_id"] == whole_ids[4]


def test_delete_rebuilds_the_profile():
    mem = Memory(None)
    ids = _fill(mem)
    mem.profile("Ann")
    mem.delete(ids[4])  # "I moved to Denver"
    p = mem.profile("Ann")
    assert [v["value"] for v in p["attributes"]["residence"]] == ["Boston"]
    assert p["n_messages"] == 3


def test_reload_from_file_gives_the_same_profile(tmp_path):
    path = tmp_path / "p.db"
    with Memory(path, namespace="n") as mem:
        _fill(mem)
        before = {w: mem.profile(w) for w in mem.speakers()}
    with Memory(path, namespace="n") as mem:
        after = {w: mem.profile(w) for w in mem.speakers()}
    assert after == before
    assert list(after) == ["Ann", "Bo"]


def test_append_validation():
    p = ProfileIndex()
    with pytest.raises(InvalidInput, match="same length|one length"):
        p.append([1, 2], ["a"], ["x", "y"], None)
    with pytest.raises(InvalidInput, match=r"ids\[0\]"):
        p.append(["1"], ["a"], ["x"])
    with pytest.raises(InvalidInput, match=r"speakers\[0\]"):
        p.append([1], [5], ["x"])
    with pytest.raises(InvalidInput, match=r"texts\[0\]"):
        p.append([1], ["a"], [None])
    with pytest.raises(InvalidInput, match=r"timestamps\[0\]"):
        p.append([1], ["a"], ["x"], [float("inf")])
    with pytest.raises(InvalidInput, match="texts"):
        p.append([1], ["a"], "x")
    with pytest.raises(InvalidInput, match="dim"):
        ProfileIndex(dim=3)
    with pytest.raises(InvalidInput, match="max_boost"):
        ProfileIndex(max_boost=-1)
    assert len(p) == 0  # nothing was consumed by the failed calls


def test_building_is_deterministic():
    a, b = ProfileIndex(), ProfileIndex()
    ids = list(range(len(CONVERSATION)))
    for p in (a, b):
        p.append(ids, [w for w, _ in CONVERSATION], [t for _, t in CONVERSATION], [T0 + k for k in ids])
    for who in ("Ann", "Bo"):
        assert a.profile(who) == b.profile(who)


# -- style vectors ----------------------------------------------------------------------------------------------

CASUAL = ["omg lol that's sooo cool!!! 😂", "haha yeah ikr!!! lol", "omg no way!!! tell me more lol",
          "lol yesss i'm sooo in!!!", "haha that's wild!!! omg", "yeah ikr lol sooo fun!!!", "omg haha yesss!!!",
          "lol no way, sooo jealous!!!", "haha omg ikr!!!", "yesss lol that's sooo me!!!"]
FORMAL = ["Indeed; however, I would suggest a different approach.", "Certainly. The proposal, however, requires revision.",
          "I would, nevertheless, recommend caution; the data are incomplete.", "Regrettably, the meeting is postponed.",
          "Furthermore, the committee's decision was unanimous.", "Accordingly, I shall prepare the documentation.",
          "Nevertheless, the results are encouraging; further study is warranted.", "However, one must consider the costs.",
          "Consequently, the schedule requires adjustment.", "Indeed, the analysis was thorough; however, gaps remain."]


def test_style_vector_properties():
    v = style_vector("Hello there, friend.")
    assert v is not None and v.dtype == np.float32 and v.shape == (512,)
    assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-5
    assert np.array_equal(v, style_vector("Hello there, friend."))
    assert style_vector("Hello there, friend.", dim=1024).shape == (1024,)
    assert style_vector("") is None  # padded to two spaces: no 3-gram
    assert style_vector("ab") is not None  # " ab", "ab " and " ab "
    assert style_vector("ab", ngrams=(5, 5)) is None


def test_style_centroid_is_the_normalized_mean_of_message_vectors():
    p = ProfileIndex(dim=256)
    p.append([1, 2, 3], ["Al"] * 3, FORMAL[:3])
    mean = np.mean([style_vector(t, dim=256).astype(np.float64) for t in FORMAL[:3]], axis=0)
    ref = mean / np.linalg.norm(mean)
    assert np.allclose(np.array(p.profile("Al")["style"]), ref, atol=1e-6)


def test_style_separates_two_speakers_on_held_out_messages():
    p = ProfileIndex()
    p.append(list(range(14)), ["Kim"] * 7 + ["Lee"] * 7, CASUAL[:7] + FORMAL[:7])
    for text in CASUAL[7:]:
        assert p.style_similarity("Kim", text) > p.style_similarity("Lee", text)
    for text in FORMAL[7:]:
        assert p.style_similarity("Lee", text) > p.style_similarity("Kim", text)


# -- query intent and boost -------------------------------------------------------------------------------------

def _index() -> ProfileIndex:
    p = ProfileIndex()
    convo = CONVERSATION + [("Tim Ray", "I'm mostly into classical music but keen to try jazz."),
                            ("Tim Ray", "We went to the lake yesterday.")]
    p.append(list(range(len(convo))), [w for w, _ in convo], [t for _, t in convo],
             [T0 + k for k in range(len(convo))])
    return p


@pytest.mark.parametrize("query, want", [
    ("What does Ann like?", ("Ann", True)),
    ("Where is Bo from?", ("Bo", True)),
    ("What is Ann's job?", ("Ann", True)),
    ("What kind of music does Tim enjoy?", ("Tim Ray", True)),
    ("What is Ann's favorite color?", ("Ann", True)),
    ("Where does Ann live?", ("Ann", True)),
    ("What is the name of Ann's dog?", ("Ann", True)),
    ("Does Bo like jazz?", ("Bo", True)),
    ("What are Bo's hobbies?", ("Bo", True)),
    ("When did Ann move to Denver?", ("Ann", False)),
    ("What did Bo receive from his friend?", ("Bo", False)),
    ("When did Tim go to the lake?", ("Tim Ray", False)),
    ("What does Zed like?", (None, True)),
    ("What happened at the meeting?", (None, False)),
])
def test_query_intent_table(query, want):
    assert _index().query_intent(query) == want


def test_boost_targets_and_bounds():
    p = _index()
    ids = np.arange(10)
    f = p.boost("Where does Ann live?", ids)
    # residence statements by Ann: messages 0 (Boston) and 4 (Denver); nothing else moves
    assert f.tolist() == [1.3, 1, 1, 1, 1.3, 1, 1, 1, 1, 1]
    f = p.boost("What kind of music does Tim enjoy?", ids)
    assert f.tolist() == [1] * 8 + [1.3, 1]
    f = p.boost("What does Bo like?", ids)
    assert f.tolist() == [1, 1.3, 1, 1.3, 1, 1, 1, 1, 1, 1]  # "prefers tea" and "likes hiking, painting"
    # a topic that the statement does not share gets half the boost
    f = p.boost("What kind of food does Bo like?", ids)
    assert f.tolist() == [1, 1.15, 1, 1.15, 1, 1, 1, 1, 1, 1]
    # Bo's statements never boost a question about Ann, and events never boost
    assert p.boost("What does Ann like?", np.array([1, 3])).tolist() == [1.0, 1.0]
    assert p.boost("When did Ann move to Denver?", ids).tolist() == [1.0] * 10
    assert p.boost("What does Zed like?", ids).tolist() == [1.0] * 10
    # unknown ids and the empty candidate list
    assert p.boost("Where does Ann live?", np.array([999])).tolist() == [1.0]
    assert p.boost("Where does Ann live?", np.array([], dtype=np.int64)).shape == (0,)


def test_boost_bounds_hold_for_any_max_boost():
    for mb in (0.0, 0.1, 0.3, 1.0):
        p = ProfileIndex(max_boost=mb)
        p.append(list(range(len(CONVERSATION))), [w for w, _ in CONVERSATION], [t for _, t in CONVERSATION])
        for q in ("What does Bo like?", "Where does Ann live?", "What is Ann's job?", "Hi"):
            f = p.boost(q, np.arange(12))
            assert f.min() >= 1.0 and f.max() <= 1.0 + mb + 1e-12


def test_boost_validation():
    p = _index()
    with pytest.raises(InvalidInput, match="row_ids"):
        p.boost("What does Ann like?", np.array([[1, 2]]))
    with pytest.raises(InvalidInput, match="row_ids"):
        p.boost("What does Ann like?", np.array([0.5]))
    with pytest.raises(InvalidInput, match="query"):
        p.boost(None, np.array([1]))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="query"):
        p.query_intent(3)  # type: ignore[arg-type]


def test_memory_profile_factors_map_rows_to_ids():
    mem = Memory(None)
    ids = _fill(mem)
    state = mem.engine.state()
    idx = state.index
    with mem.engine.rt.lock.read():
        f = profile_factors(state, "Where does Ann live?", np.arange(len(ids)))
        rows_of = [idx.row_of[i] for i in (ids[0], ids[4])]
    want = np.ones(len(ids))
    want[rows_of] = 1.3
    assert f.tolist() == want.tolist()


def test_huge_text_and_odd_speaker_names():
    p = ProfileIndex()
    huge = "I love tea. " + "blah " * 2_000_000  # 10 MB: only the head is read for statements and style
    p.append([1, 2], ["A+B (x)", "A+B (x)"], [huge, "I'm from Oslo."], [T0, T0 + 1])
    assert p.current("A+B (x)") == {"likes": "tea", "origin": "Oslo"}
    assert p.style("A+B (x)").shape == (512,)
    assert p.query_intent("Where is A+B (x) from?") == ("A+B (x)", True)
    assert p.boost("Where is A+B (x) from?", np.array([1, 2])).tolist() == [1.0, 1.3]
    assert p.query_intent("Where is AB from?") == (None, True)


def test_a_reopened_long_history_answers_speakers_and_profiles_in_full(tmp_path, monkeypatch):
    """A stored history longer than SYNC_ROWS without a profiles snapshot has its profiles rebuilt in the
    background (the ranker's prior is neutral meanwhile); speakers() and profile() ask about the speakers themselves
    and answer from every message, not from the empty stand-in (which named no speaker at all)."""
    from hippo.engine import state as state_mod

    monkeypatch.setattr(state_mod, "SYNC_ROWS", 5)
    rows = [(name, text, T0 + k * DAY) for k in range(4) for name, text in CONVERSATION]  # 32 messages
    with Memory(tmp_path / "long.db") as mem:
        mem.add_many([{"text": t, "speaker": s, "timestamp": ts} for s, t, ts in rows])
        ids = [it.id for it in mem.list()]
    ref = ProfileIndex()  # the reference: one profile index fed every message
    ref.append(ids, [s for s, _, _ in rows], [t for _, t, _ in rows], [ts for _, _, ts in rows])
    with Memory(tmp_path / "long.db") as mem:
        assert mem.speakers() == ["Ann", "Bo"]
        assert mem.profile("Ann") == ref.profile("Ann")
    with Memory(tmp_path / "long.db") as mem:
        assert mem.profile("Bo") == ref.profile("Bo")
        assert mem.speakers() == ref.speakers()


def test_docs_profiles_example_returns_what_it_shows():
    """docs/profiles.md's example runs as written and returns the profile its comments show (timestamps by hand:
    2024-01-01 and 2024-03-01 at midnight UTC)."""
    from tests.readme_examples import examples, run

    (where, code), = examples("profiles")
    mem = run(code, where)["mem"]
    assert mem.speakers() == ["Ann"]
    profile = mem.profile("Ann")
    assert len(profile.pop("style")) == 512
    assert profile == {
        "speaker": "Ann", "n_messages": 2,
        "attributes": {"occupation": [{"value": "nurse", "message_id": 1, "timestamp": 1704067200.0}],
                       "residence": [{"value": "Boston", "message_id": 1, "timestamp": 1704067200.0},
                                     {"value": "Denver", "message_id": 2, "timestamp": 1709251200.0}]},
        "current": {"occupation": "nurse", "residence": "Denver"},
    }
