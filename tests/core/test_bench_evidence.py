"""``hippo bench beam`` and ``hippo bench locomo`` on tiny synthetic conversations in each data format.

Expected figures are computed by hand from the conversations below (cl100k lengths come from the encoder itself);
no real data is used."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

from hippo_bench import evidence, main  # noqa: E402
from hippo_bench._common import cl100k_encoder  # noqa: E402

FILLER = "Here is a long general answer about planning, budgets, schedules and many other things. " * 12


def _beam_dir(tmp_path, n_convs: int = 2):
    root = tmp_path / "beam"
    for n in range(1, n_convs + 1):
        d = root / str(n) / "probing_questions"
        d.mkdir(parents=True)
        chat = [
            {"batch_number": 1, "time_anchor": "March-15-2024", "turns": [
                [{"role": "user", "id": 1, "content": f"My greyhound is called Biscuit{n} and she loves the beach."},
                 {"role": "assistant", "id": 2, "content": FILLER}],
                # each chat's words its own: a context holds one copy of a text, and the copy would not be this id
                [{"role": "user", "id": 3, "content": f"I moved to Lisbon in May for a new job at bakery {n}."},
                 {"role": "assistant", "id": 4, "content": FILLER}],
            ]},
            {"batch_number": 2, "time_anchor": "April-02-2024", "turns": [
                [{"role": "user", "id": 5, "content": f"Always answer in metric units when I ask about distances {n}."},
                 {"role": "assistant", "id": 6, "content": "Understood, metric units from now on."}],
            ]},
        ]
        (root / str(n) / "chat.json").write_text(json.dumps(chat))
        qs = {
            "information_extraction": [
                {"question": "What is the name of my greyhound?", "answer": "Biscuit", "source_chat_ids": [1]},
                {"question": "Where did I move for the bakery job?", "answer": "Lisbon", "source_chat_ids": "[3]"},
            ],
            "instruction_following": [
                {"question": "How far is the beach in metric units?", "answer": "km", "source_chat_ids": {"a": [5]}},
            ],
            "abstention": [{"question": "What is my cat called?", "answer": "unknown"}],  # no evidence: skipped
        }
        (d / "probing_questions.json").write_text(json.dumps(qs))
    return root


def _locomo_file(tmp_path):
    data = [{
        "sample_id": f"toy-{k}",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat named Pixel."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "I went hiking in the Alps.", "blip_caption": "snow"},
            ],
            "session_2_date_time": "9:05 am on 10 June, 2023",
            "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "I started learning the cello last week."}],
        },
        "qa": [
            {"question": "What is the name of Ann's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
            {"question": "Where did Bob go hiking?", "answer": "Alps", "evidence": ["D1:2", "D9:9"], "category": 1},
            {"question": "What instrument?", "answer": "cello", "evidence": ["D2:1; D1:1"], "category": 2},
            {"question": "What did Bob adopt?", "adversarial_answer": "cat", "evidence": ["D1:1"], "category": 5},
        ],
    } for k in (1, 2, 3)]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    return path


def test_beam_loader_and_halves(tmp_path):
    convs = evidence.load_beam(_beam_dir(tmp_path, 3))
    assert [c.number for c in convs] == [1, 2, 3]
    c = convs[0]
    assert [q.evidence for q in c.questions] == [(1,), (3,), (5,)]  # list, repr string and dict forms
    assert c.messages[4].session == "batch-2" and c.messages[4].when.month == 4
    assert c.lines[0].startswith("user: My greyhound")
    assert [x.number for x in evidence.select(convs, "odd")] == [1, 3]
    assert [x.number for x in evidence.select(convs, "even")] == [2]
    assert [x.number for x in evidence.select(convs, "3,1")] == [1, 3]
    with pytest.raises(SystemExit):
        evidence.select(convs, "first")


def test_beam_loader_reads_the_released_layout(tmp_path):
    """chats/<split>/<n>/ as the released splits lay it out: the split's folder, or the root holding one split."""
    flat = _beam_dir(tmp_path / "flat", 2)
    root = tmp_path / "released"
    (root / "chats").mkdir(parents=True)
    flat.rename(root / "chats" / "500K")
    want = [(c.number, [m.text for m in c.messages], c.questions) for c in evidence.load_beam(root / "chats" / "500K")]
    assert [c.number for c in evidence.load_beam(root / "chats" / "500K")] == [1, 2]
    assert [(c.number, [m.text for m in c.messages], c.questions) for c in evidence.load_beam(root)] == want
    (root / "chats" / "1M").mkdir()
    with pytest.raises(SystemExit, match="1M"):  # two splits: the caller chooses
        evidence.load_beam(root)


def test_locomo_loader_follows_the_reference_scorer(tmp_path):
    convs = evidence.load_locomo(_locomo_file(tmp_path))
    c = convs[0]
    assert c.messages[1].text == "I went hiking in the Alps. [image: snow]"
    # category 5 is not scored; a malformed id ("D2:1; D1:1") names no turn, so that question has no evidence
    assert [(q.kind, q.evidence) for q in c.questions] == [("single-hop", ("D1:1",)), ("multi-hop", ("D1:2",))]


def _realtalk_chat(k: int) -> dict:
    """A chat in REALTALK's layout (LoCoMo's without the "conversation" wrapper; ``clean_text``, a time per
    message, categories 1-3), written out by hand."""
    return {
        "name": {"speaker_1": "Fahim Khan", "speaker_2": "Maya Lee"},
        "session_1_date_time": "29.12.2023, 14:02:11",
        "session_1": [
            {"clean_text": "hey!! guess what", "speaker": "Fahim Khan", "date_time": "29.12.2023, 14:02:11",
             "dia_id": "D1:1"},
            {"clean_text": "i got the job at the aquarium", "speaker": "Fahim Khan",
             "date_time": "29.12.2023, 14:02:30", "dia_id": "D1:2"},
            {"clean_text": "omg congrats 🎉", "speaker": "Maya Lee", "date_time": "29.12.2023, 14:10:02",
             "dia_id": "D1:3"},
        ],
        "session_2_date_time": "30.12.2023, 09:15:00",
        "session_2": [{"clean_text": f"first day tmrw, chat {k}", "speaker": "Fahim Khan", "date_time": "garbled",
                       "dia_id": "D2:1"}],
        "qa": [{"question": "Where did Fahim get a job?", "answer": "the aquarium", "evidence": ["D1:2"],
                "category": 1},
               {"question": "When is Fahim's first day?", "answer": "31 December", "evidence": ["D2:1"],
                "category": 2},
               {"question": "Unscored", "answer": "-", "evidence": ["D1:1"], "category": 9},
               {"question": "What did Maya say?", "answer": "congrats", "evidence": [["D1:3"], 7, None],
                "category": 3}],
    }


def test_locomo_loader_reads_realtalk_chats_a_file_a_list_or_a_directory(tmp_path):
    from datetime import datetime

    one = tmp_path / "Chat_1_Fahim_Maya.json"
    one.write_text(json.dumps(_realtalk_chat(1)), encoding="utf-8")
    (c,) = evidence.load_locomo(one)
    assert [m.text for m in c.messages] == ["hey!! guess what", "i got the job at the aquarium", "omg congrats 🎉",
                                           "first day tmrw, chat 1"]
    assert [m.speaker for m in c.messages][:3] == ["Fahim Khan", "Fahim Khan", "Maya Lee"]
    # each message its own time; one that does not read keeps its session's
    assert [m.when for m in c.messages] == [datetime(2023, 12, 29, 14, 2, 11), datetime(2023, 12, 29, 14, 2, 30),
                                            datetime(2023, 12, 29, 14, 10, 2), datetime(2023, 12, 30, 9, 15)]
    assert [m.session for m in c.messages] == ["session_1"] * 3 + ["session_2"]
    assert [(q.kind, q.evidence) for q in c.questions] == [("fact", ("D1:2",)), ("date", ("D2:1",)),
                                                          ("inference", ("D1:3",))]
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([_realtalk_chat(1), _realtalk_chat(2)]), encoding="utf-8")
    assert [len(x.messages) for x in evidence.load_locomo(listed)] == [4, 4]
    folder = tmp_path / "chats"
    folder.mkdir()
    for k in (1, 2, 3):
        (folder / f"Chat_{k}.json").write_text(json.dumps(_realtalk_chat(k)), encoding="utf-8")
    convs = evidence.load_locomo(folder)
    assert [x.cid for x in convs] == ["Chat_1", "Chat_2", "Chat_3"]
    assert [x.messages[-1].text for x in convs] == [f"first day tmrw, chat {k}" for k in (1, 2, 3)]
    out = tmp_path / "rt.json"
    assert main(["locomo", "--data", str(folder), "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["hippo"]["failed_calls"] == 0 and res["questions"] == 9


def test_fill_and_density_order():
    assert evidence.fill([2, 0, 1], [5, 3, 4], 9) == [2, 0]  # 4 + 5 tokens fill the budget; the 3 is left out
    assert evidence.fill([0, 1, 2], [5, 6, 4], 9) == [0, 2]  # the 6-token line is skipped, not a stop
    # scores 4 and 3 over 16 and 1 tokens: per sqrt(token) 1.0 and 3.0, so the second goes first
    assert evidence.by_density([7, 8], [4.0, 3.0], {7: 16, 8: 1}) == [8, 7]


def test_beam_bench_end_to_end(tmp_path):
    enc = cl100k_encoder()
    root = _beam_dir(tmp_path)
    out = tmp_path / "beam.json"
    assert main(["beam", "--data", str(root), "--budgets", "60,4000", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["questions"] == 6 and res["kinds"] == ["information_extraction", "instruction_following"]
    r = res["results"]
    # every evidence line is shorter than 60 tokens: the oracle holds all of them at both budgets
    assert all(len(enc.encode(line + "\n")) < 60 for c in evidence.load_beam(root) for line in c.lines[::2])
    assert r["oracle"]["60"]["all"] == 1.0 and r["oracle"]["4000"]["all"] == 1.0
    # the whole conversation fits in 4000 tokens: every system that fills the budget recalls everything
    total = sum(len(enc.encode(line + "\n")) for line in evidence.load_beam(root)[0].lines)
    assert total < 4000
    assert r["bm25s"]["4000"]["all"] == 1.0 and r["bm25s-d"]["4000"]["all"] == 1.0
    assert r["hippo"]["4000"]["all"] == 1.0
    # at 60 tokens only one short line fits; each question names its evidence, and hippo finds it
    assert r["hippo"]["60"]["information_extraction"] == 1.0
    assert res["hippo"]["failed_calls"] == 0 and res["hippo"]["over_budget"] == 0
    assert res["hippo"]["ingest_tokens"] > 0 and "p50_ms" in r["hippo"]
    md = out.with_suffix(".md").read_text()
    assert "hippo / best" in md and "bm25s-d" in md
    ratio = r["hippo"]["p50_ms"] / r["bm25s"]["p50_ms"]  # latency beside the peer's, as a ratio
    assert f"hippo / bm25s p50 {ratio:.2f}x" in md
    # a question's first recall, timed on its own (one per question) and reported beside the peer
    assert 0 < r["hippo"]["first_p50_ms"] <= r["hippo"]["first_p95_ms"]
    assert f"first recall p50 / bm25s p50 {r['hippo']['first_p50_ms'] / r['bm25s']['p50_ms']:.2f}x" in md


def test_agent_loop_recalls_while_the_conversation_is_written(tmp_path):
    root = _beam_dir(tmp_path)
    out = tmp_path / "loop.json"
    assert main(["beam", "--data", str(root), "--budgets", "60,4000", "--agent-loop", "--out", str(out)]) == 0
    loop = json.loads(out.read_text())["agent_loop"]
    # six messages per chat: the last three are added while timed, a question recalled after the second of them
    assert loop["budget"] == 4000 and loop["adds"] == 2 * 3 and loop["recalls"] == 2 * 1
    assert 0 < loop["recall_p50_ms"] <= loop["recall_p95_ms"] and 0 < loop["add_p50_ms"]
    assert "hippo in an agent loop" in out.with_suffix(".md").read_text()


def test_locomo_bench_end_to_end_on_a_half(tmp_path):
    out = tmp_path / "locomo.json"
    assert main(["locomo", "--data", str(_locomo_file(tmp_path)), "--conversations", "even", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["conversations"] == ["toy-2"] and res["questions"] == 2
    assert res["results"]["oracle"]["500"]["all"] == 1.0
    assert res["results"]["hippo"]["500"]["all"] == 1.0  # three short turns: everything fits
    assert res["hippo"]["failed_calls"] == 0


def test_failed_calls_are_counted_and_score_zero(tmp_path, monkeypatch):
    import hippo

    def broken(self, *a, **k):
        raise hippo.base.errors.CorruptData("stored token ids do not decode to text")

    monkeypatch.setattr(hippo.Memory, "recall", broken)
    convs = evidence.load_beam(_beam_dir(tmp_path, 1))
    res = evidence.evaluate(convs, [4000], id_key="chat_id")
    assert res["hippo"]["failed_calls"] == 3
    assert res["results"]["hippo"]["4000"]["all"] == 0.0
    assert res["results"]["bm25s"]["4000"]["all"] == 1.0
    assert "CorruptData" in res["hippo"]["failures"][0]


def test_merged_conversations_keep_every_question_and_its_evidence(tmp_path):
    convs = evidence.load_beam(_beam_dir(tmp_path, 2))
    m = evidence.merge(convs)
    assert len(m.messages) == sum(len(c.messages) for c in convs) and len(m.questions) == 6
    assert m.questions[3].evidence == ("2:1",) and m.messages[6].id == "2:1"
    assert m.messages[6].text.startswith("My greyhound is called Biscuit2")
    res = evidence.evaluate([m], [4000], id_key="chat_id")
    assert res["results"]["hippo"]["4000"]["all"] == 1.0  # both conversations together still fit in 4000
    halves = evidence.evaluate(convs, [4000], id_key="chat_id", hippo=False)["halves"]
    assert halves["odd"]["questions"] == 3 and halves["even"]["questions"] == 3


def test_an_id_listed_twice_counts_twice_for_systems_and_once_for_the_oracle():
    # as the reference scorers do (eval_beam.py keeps repeats; oracle_ceiling.py packs the set)
    msgs = [evidence.Message(i, "user", "user", t, None, "s") for i, t in
            enumerate(["the red kite flew over the hill", "lunch was soup and bread " * 20])]
    q = evidence.Question("x", "What flew over the hill?", (0, 0, 1))
    conv = evidence.Conversation("c", 1, msgs, [q])
    one_line = len(cl100k_encoder().encode(conv.lines[0] + "\n"))
    res = evidence.evaluate([conv], [one_line], id_key="chat_id", hippo=False)["results"]
    assert res["bm25s"][str(one_line)]["all"] == pytest.approx(2 / 3)   # the kite line, counted twice of three
    assert res["oracle"][str(one_line)]["all"] == pytest.approx(1 / 2)  # one of the two distinct messages


def test_phone_typing_curls_apostrophes_inside_words_and_quotes():
    assert evidence.phone_typed('It\'s Sara\'s "Galgos Felizes" rescue') == \
        "It\u2019s Sara\u2019s \u201cGalgos Felizes\u201d rescue"
    assert evidence.phone_typed("rock 'n' roll, 'quoted', 5'11") == "rock 'n' roll, 'quoted', 5\u201911"
    assert evidence.phone_typed("no quotes here") == "no quotes here"
    conv = evidence.Conversation("c", 1, [evidence.Message(1, "user", "Ann", "Ann's cat", None, "s1")],
                                 [evidence.Question("single-hop", "What is Ann's cat called?", (1,))])
    typed = evidence.as_phone_typed([conv])[0]
    assert typed.messages[0].text == "Ann\u2019s cat" and conv.messages[0].text == "Ann's cat"
    assert typed.questions == conv.questions  # questions keep the annotator's straight punctuation


def test_locomo_bench_with_phone_typing(tmp_path):
    out = tmp_path / "locomo.json"
    assert main(["locomo", "--data", str(_locomo_file(tmp_path)), "--conversations", "1", "--phone-typing",
                 "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["phone_typing"] is True and res["hippo"]["failed_calls"] == 0
    assert res["results"]["hippo"]["500"]["all"] == 1.0
    assert "typed as on a phone" in out.with_suffix(".md").read_text()


def test_pause_after_ingest_is_recorded_and_validated(tmp_path):
    root = _beam_dir(tmp_path)
    out = tmp_path / "paused.json"
    assert main(["beam", "--data", str(root), "--budgets", "60", "--pause", "0.01", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["pause_s"] == 0.01 and res["hippo"]["failed_calls"] == 0
    assert "questions 0.01 s after each ingest" in out.with_suffix(".md").read_text()
    with pytest.raises(SystemExit):
        main(["beam", "--data", str(root), "--budgets", "60", "--pause", "-1", "--out", str(out)])
    with pytest.raises(ValueError):
        evidence.evaluate([], [60], id_key="id", pause=float("nan"))


def test_misspelling_slips_one_letter_of_long_words_and_keeps_the_first():
    import random

    rng = random.Random(7)
    words = ["restaurant", "greyhound", "marathon", "painting", "yesterday"] * 40
    typed = [evidence.misspelled(w, 1.0, rng) for w in words]
    for w, t in zip(words, typed):
        assert t != w and t[0] == w[0]
        # one slip: a letter left out, doubled, two neighbours swapped or one letter replaced (edit distance 1)
        if len(t) == len(w):
            diff = [k for k in range(len(w)) if w[k] != t[k]]
            assert len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                      and (w[diff[0]], w[diff[1]]) == (t[diff[1]], t[diff[0]]))
        else:
            longer, shorter = (t, w) if len(t) > len(w) else (w, t)
            assert len(longer) == len(shorter) + 1
            assert any(longer[:k] + longer[k + 1:] == shorter for k in range(len(longer)))
    assert evidence.misspelled("cats and dogs", 1.0, rng) == "cats and dogs"  # words under five letters stay
    assert evidence.misspelled("A long sentence of words", 0.0, rng) == "A long sentence of words"
    conv = evidence.Conversation("c", 1, [evidence.Message(1, "user", "Ann", "Wonderful restaurant", None, "s1")],
                                 [evidence.Question("single-hop", "Which restaurant?", (1,))])
    once, again = evidence.as_misspelled([conv], 1.0)[0], evidence.as_misspelled([conv], 1.0)[0]
    assert once.messages == again.messages and once.messages[0].text != conv.messages[0].text  # seeded
    assert once.questions == conv.questions
    asked, asked_again = (evidence.as_questions_misspelled([conv], 1.0)[0],
                          evidence.as_questions_misspelled([conv], 1.0)[0])
    assert asked.messages == conv.messages and asked.questions == asked_again.questions  # seeded
    assert asked.questions[0].text != "Which restaurant?" and asked.questions[0].text[0] == "W"  # "Which" is five letters
    assert asked.questions[0].evidence == conv.questions[0].evidence


def test_locomo_bench_without_session_ids_and_with_typos(tmp_path):
    out = tmp_path / "bare.json"
    assert main(["locomo", "--data", str(_locomo_file(tmp_path)), "--conversations", "1", "--no-sessions",
                 "--typos", "0.2", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["no_sessions"] is True and res["typos"] == 0.2 and res["hippo"]["failed_calls"] == 0
    md = out.with_suffix(".md").read_text()
    assert "no session ids" in md and "0.2 of long words mistyped" in md
    assert main(["locomo", "--data", str(_locomo_file(tmp_path)), "--conversations", "1", "--question-typos", "0.3",
                 "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["question_typos"] == 0.3 and res["hippo"]["failed_calls"] == 0
    assert "0.3 of the questions' long words mistyped" in out.with_suffix(".md").read_text()
    conv = evidence.load_locomo(str(_locomo_file(tmp_path)))[0]
    bare = evidence.without_sessions([conv])[0]
    assert all(m.session is None for m in bare.messages) and conv.messages[0].session is not None
    assert [m.when for m in bare.messages] == [m.when for m in conv.messages]
    with pytest.raises(SystemExit):
        main(["locomo", "--data", str(_locomo_file(tmp_path)), "--typos", "1.5", "--out", str(out)])


def test_turns_retimed_as_a_messaging_chat():
    from datetime import datetime, timedelta

    day1, day2 = datetime(2024, 5, 1, 10, 0), datetime(2024, 5, 9, 18, 0)
    msgs = [evidence.Message(k, "user", "Ann" if k % 2 else "Bo", f"turn {k}", day1 if k < 4 else day2,
                             "s1" if k < 4 else "s2") for k in range(7)]
    msgs.append(evidence.Message(7, "user", "Bo", "undated", None, "s2"))
    conv = evidence.Conversation("c", 1, msgs, [evidence.Question("single-hop", "turn?", (1,))])
    got = evidence.retimed([conv], 60.0, 0.0)[0].messages  # sigma 0: every pause exactly the median
    assert [m.when for m in got] == [day1 + timedelta(minutes=k) for k in range(4)] + \
        [day2 + timedelta(minutes=k) for k in range(3)] + [None]
    spaced = evidence.retimed([conv], 60.0, 0.0, spacing_h=3.0)[0].messages
    assert spaced[4].when == day1 + timedelta(minutes=3, hours=3)  # three hours after the first session's last turn
    again = evidence.retimed([conv], 60.0, 1.5)[0].messages
    assert again == evidence.retimed([conv], 60.0, 1.5)[0].messages  # seeded
    pauses = [(b.when - a.when).total_seconds() for a, b in zip(again[:3], again[1:4])]
    assert all(p > 0 for p in pauses) and len(set(pauses)) == 3
    assert [m.session for m in again] == [m.session for m in msgs]


def test_turn_times_are_parsed_and_validated(tmp_path):
    out = tmp_path / "timed.json"
    assert main(["locomo", "--data", str(_locomo_file(tmp_path)), "--conversations", "1", "--no-sessions",
                 "--turn-times", "30,1.5,3", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["turn_times"] == [30.0, 1.5, 3.0] and res["hippo"]["failed_calls"] == 0
    assert "turns timed apart (median 30 s, sigma 1.5, sessions 3 h apart)" in out.with_suffix(".md").read_text()
    for bad in ("30", "30,x", "-1,1", "30,1,2,3", "nan,1"):
        with pytest.raises(SystemExit):
            main(["locomo", "--data", str(_locomo_file(tmp_path)), "--turn-times", bad, "--out", str(out)])


def test_british_spelling_rewrites_messages_only_and_keeps_case():
    assert evidence.british("My Favorite COLOR is gray; we traveled to the theater center.") == \
        "My Favourite COLOUR is grey; we travelled to the theatre centre."
    assert evidence.british("A program, a tire, a colorist") == "A program, a tire, a colorist"  # not in the list
    conv = evidence.Conversation("c", 1, [evidence.Message(1, "user", "Ann", "My favorite color", None, "s1")],
                                 [evidence.Question("single-hop", "What is Ann's favorite color?", (1,))])
    uk = evidence.as_british([conv])[0]
    assert uk.messages[0].text == "My favourite colour" and uk.questions == conv.questions


def test_chat_words_rewrite_messages_only_seeded_and_keep_a_capital():
    import random

    text = "Happy Birthday! The pictures of the children are great, see you tomorrow at the University."
    assert evidence.chat_typed(text, 1.0, random.Random(0)) == \
        "Happy Bday! The pics of the kids are gr8, see u tmrw at the Uni."
    assert evidence.chat_typed(text, 0.0, random.Random(0)) == text
    assert evidence.chat_typed("A birthdays-free zone, a childhood", 1.0, random.Random(0)) == \
        "A bdays-free zone, a childhood"  # whole words only
    half = [evidence.chat_typed("birthday " * 40, 0.5, random.Random(k)) for k in range(3)]
    assert all(10 < h.count("bday") < 30 for h in half)
    conv = evidence.Conversation("c", 1, [evidence.Message(1, "user", "Ann", "my birthday photos", None, "s1")],
                                 [evidence.Question("single-hop", "What did Ann post for her birthday?", (1,))])
    once, again = evidence.as_chat_typed([conv], 1.0)[0], evidence.as_chat_typed([conv], 1.0)[0]
    assert once.messages[0].text == "my bday pics" and once == again and once.questions == conv.questions


def test_held_letters_stretch_words_of_three_letters_or_more_seeded_and_questions_kept():
    import random

    from hippo.text import lexicon

    text = "Happy birthday to you, the pizza was so good and I love it."
    out = evidence.held(text, 1.0, random.Random(5))
    words, typed = text.split(), out.split()
    assert len(words) == len(typed)
    for w, t in zip(words, typed):
        core, got = w.strip(",."), t.strip(",.")
        if len(core) >= 3:  # one letter held three to five times, the last or the last vowel
            assert lexicon.stretched_from(core.lower(), got.lower()) and 2 <= len(got) - len(core) <= 4, (w, t)
        else:
            assert got == core
    assert evidence.held(text, 0.0, random.Random(5)) == text
    conv = evidence.Conversation("c", 1, [evidence.Message(1, "user", "Ann", "my birthday", None, "s1")],
                                 [evidence.Question("single-hop", "When is Ann's birthday?", (1,))])
    once, again = evidence.as_held([conv], 1.0)[0], evidence.as_held([conv], 1.0)[0]
    assert once.messages[0].text != "my birthday" and once == again and once.questions == conv.questions


def test_split_turns_send_one_sentence_a_message_and_the_evidence_is_every_part():
    conv = evidence.Conversation("c", 1, [
        evidence.Message("D1:1", "user", "Ann", "Guess what! I got the job. It starts in May. [image: a badge]", None,
                         "s1"),
        evidence.Message("D1:2", "user", "Bo", "Congrats!", None, "s1"),
        evidence.Message("D1:3", "user", "Ann", "Thanks, e.g. the pay is fine.", None, "s1")],
        [evidence.Question("single-hop", "Where did Ann get a job?", ("D1:1", "D1:2"))])
    (split,) = evidence.as_split([conv])
    assert [m.text for m in split.messages] == ["Guess what!", "I got the job.", "It starts in May. [image: a badge]",
                                               "Congrats!", "Thanks, e.g. the pay is fine."]
    assert [m.id for m in split.messages] == ["D1:1#0", "D1:1#1", "D1:1#2", "D1:2", "D1:3"]
    assert all(m.speaker == "Ann" and m.session == "s1" for m in split.messages[:3])
    assert split.questions[0].evidence == ("D1:1#0", "D1:1#1", "D1:1#2", "D1:2")
    assert split.questions[0].text == conv.questions[0].text and conv.messages[0].id == "D1:1"  # not changed


def test_one_pair_renames_each_conversations_people_as_the_firsts(tmp_path):
    a = evidence.Conversation("a", 1, [evidence.Message("D1:1", "user", "Ann", "Hi Bob, I adopted a cat.", None, "s1"),
                                       evidence.Message("D1:2", "user", "Bob", "Nice, Ann!", None, "s1")],
                              [evidence.Question("single-hop", "What did Ann adopt?", ("D1:1",))])
    b = evidence.Conversation("b", 2, [evidence.Message("D1:1", "user", "Cyrus", "Di, Cyrusville is far.", None, "s1"),
                                       evidence.Message("D1:2", "user", "Di", "Cyrus, go anyway.", None, "s1")],
                              [evidence.Question("single-hop", "Where is Cyrusville, Cyrus?", ("D1:1",))])
    one, two = evidence.as_one_pair([a, b])
    assert one == a
    assert [(m.speaker, m.text) for m in two.messages] == [("Ann", "Bob, Cyrusville is far."),
                                                           ("Bob", "Ann, go anyway.")]  # whole words only
    assert two.questions[0].text == "Where is Cyrusville, Ann?" and two.questions[0].evidence == ("D1:1",)
    out = tmp_path / "pair.json"
    assert main(["locomo", "--data", str(_locomo_file(tmp_path)), "--merge", "--one-pair", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["one_pair"] is True
    with pytest.raises(SystemExit):
        main(["locomo", "--data", str(_locomo_file(tmp_path)), "--one-pair", "--out", str(out)])


def test_fillers_go_before_a_share_of_the_turns_by_their_speaker_seeded():
    msgs = [evidence.Message(f"D1:{k}", "user", "Ann" if k % 2 else "Bo", f"turn {k}", None, "s1")
            for k in range(1, 201)]
    conv = evidence.Conversation("c", 1, msgs, [evidence.Question("single-hop", "turn 7?", ("D1:7",))])
    (got,) = evidence.as_with_fillers([conv], 0.3)
    assert got == evidence.as_with_fillers([conv], 0.3)[0]
    fillers = [k for k, m in enumerate(got.messages) if str(m.id).endswith("#f")]
    assert 40 < len(fillers) < 80 and got.messages[0].id == "D1:1"
    for k in fillers:  # a filler opens its turn's burst: same speaker and session as the turn it precedes
        nxt = got.messages[k + 1]
        assert got.messages[k].id == f"{nxt.id}#f" and got.messages[k].speaker == nxt.speaker
        assert got.messages[k].text in evidence._FILLERS
    assert [m for m in got.messages if not str(m.id).endswith("#f")] == msgs and got.questions == conv.questions
    assert evidence.as_with_fillers([conv], 0.0)[0].messages == msgs


def test_interruptions_go_between_a_bursts_messages_by_the_other_person():
    msgs = [evidence.Message(f"D1:{k}", "user", "Ann" if k < 100 or k % 2 else "Bo", f"piece {k}", None, "s1")
            for k in range(1, 201)]
    conv = evidence.Conversation("c", 1, msgs, [evidence.Question("single-hop", "piece 7?", ("D1:7",))])
    (got,) = evidence.as_interrupted([conv], 0.5)
    assert got == evidence.as_interrupted([conv], 0.5)[0]
    cuts = [k for k, m in enumerate(got.messages) if str(m.id).endswith("#i")]
    assert 25 < len(cuts) < 75  # Ann's burst of 99 messages; after it the two alternate and nothing is cut
    for k in cuts:
        before, cut, after = got.messages[k - 1], got.messages[k], got.messages[k + 1]
        assert before.speaker == after.speaker == "Ann" and cut.speaker == "Bo" and cut.text in evidence._REACTIONS
        assert cut.id == f"{after.id}#i"
    assert [m for m in got.messages if not str(m.id).endswith("#i")] == msgs and got.questions == conv.questions
    three = evidence.Conversation("g", 2, msgs + [evidence.Message("x", "user", "Cy", "hi", None, "s1")], [])
    assert evidence.as_interrupted([three], 1.0)[0] == three


def test_nicknames_rewrite_questions_only():
    conv = evidence.Conversation("c", 1, [evidence.Message(1, "user", "Melanie", "Melanie here", None, "s1")],
                                 [evidence.Question("single-hop", "What did Melanie tell John about Melanie's cat?",
                                                    (1,))])
    nick = evidence.as_nicknamed([conv])[0]
    assert nick.questions[0].text == "What did Mel tell Johnny about Mel's cat?"
    assert nick.messages == conv.messages and nick.questions[0].evidence == (1,)


def test_locomo_bench_with_british_spelling_and_nicknames(tmp_path):
    out = tmp_path / "uk.json"
    assert main(["locomo", "--data", str(_locomo_file(tmp_path)), "--conversations", "1", "--british",
                 "--nicknames", "--emoji", "0.5", "--chat-words", "0.5", "--held-letters", "0.1", "--split-turns",
                 "--fillers", "0.2", "--interruptions", "0.3", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["british"] is True and res["nicknames"] is True and res["emoji"] == 0.5 and res["chat_words"] == 0.5
    assert res["hippo"]["failed_calls"] == 0
    md = out.with_suffix(".md").read_text()
    assert "British spellings" in md and "questions with nicknames" in md and "0.5 of messages with emoji" in md
    assert "0.5 of the words chats shorten in their short form" in md and "0.1 of words with a letter held" in md
    assert res["held_letters"] == 0.1 and res["split_turns"] is True and "one sentence at a time" in md
    assert res["fillers"] == 0.2 and "a filler before 0.2 of the turns" in md and res["interruptions"] == 0.3
    with pytest.raises(SystemExit):
        main(["locomo", "--data", str(_locomo_file(tmp_path)), "--emoji", "2", "--out", str(out)])


def test_emoji_are_typed_against_a_word_seeded_and_questions_kept():
    import random

    rng = random.Random(3)
    out = [evidence.emojified("Congrats on the new job.", 1.0, rng) for _ in range(50)]
    assert all(t != "Congrats on the new job." for t in out)
    assert all(t.startswith("Congrats on the new job") or t.endswith("Congrats on the new job.") for t in out)
    assert any(t.startswith("Congrats") for t in out) and any(t.endswith("job.") for t in out)
    assert evidence.emojified("Hello there", 0.0, rng) == "Hello there"
    conv = evidence.Conversation("c", 1, [evidence.Message(1, "user", "Ann", "Great party", None, "s1")],
                                 [evidence.Question("single-hop", "Which party?", (1,))])
    once, again = evidence.as_emojified([conv], 1.0)[0], evidence.as_emojified([conv], 1.0)[0]
    assert once.messages == again.messages and once.messages[0].text != "Great party"
    assert once.questions == conv.questions
