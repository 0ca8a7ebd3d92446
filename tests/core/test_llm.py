"""The optional LLM path against a real OpenAI-compatible HTTP server on 127.0.0.1 (see llm_server.py)."""

from __future__ import annotations

import json
import math
import socket

import pytest
from llm_server import llm_server  # noqa: F401 - pytest fixture

from hippo import Memory
from hippo.base.errors import InvalidInput, LLMError
from hippo.engine.llm import LLM, as_llm, parse_json

FAST = {"backoff_s": 0.001, "max_backoff_s": 0.005}


def make(server, **kw) -> LLM:
    return LLM(base_url=server.base_url, model="test-model", **{**FAST, **kw})


def test_keywords_over_real_http(llm_server):
    llm = make(llm_server)
    assert llm.keywords("What did Caroline research last spring?") == ["Caroline", "research", "last", "spring"]
    body = llm_server.requests[0]["body"]
    assert llm_server.requests[0]["path"].endswith("/chat/completions")
    assert body["model"] == "test-model" and body["response_format"] == {"type": "json_object"}


def test_retries_rate_limits_and_server_errors_then_succeeds(llm_server):
    llm_server.push(status=429)
    llm_server.push(status=500)
    llm_server.push(status=503)
    assert make(llm_server, max_retries=3).keywords("hiking boots") == ["hiking", "boots"]
    assert llm_server.calls() == 4


def test_gives_up_after_the_retry_budget_with_a_clear_error(llm_server):
    for _ in range(3):
        llm_server.push(status=500)
    with pytest.raises(LLMError, match=r"after 3 attempt\(s\).*HTTP 500"):
        make(llm_server, max_retries=2).keywords("anything here")
    assert llm_server.calls() == 3


def test_client_errors_are_not_retried(llm_server):
    llm_server.push(status=400)
    with pytest.raises(LLMError, match="HTTP 400"):
        make(llm_server, max_retries=5).keywords("anything here")
    assert llm_server.calls() == 1


def test_timeouts_are_retried_then_reported(llm_server):
    llm_server.push(delay=0.6, content=json.dumps({"keywords": ["late"]}))
    llm_server.push(delay=0.6, content=json.dumps({"keywords": ["late"]}))
    with pytest.raises(LLMError, match="Timeout"):
        make(llm_server, timeout=0.15, max_retries=1).keywords("slow question")
    assert llm_server.calls() == 2


def test_malformed_json_is_an_llm_error(llm_server):
    llm_server.push(content="sure! keywords are: boots, hiking")
    with pytest.raises(LLMError, match="malformed JSON"):
        make(llm_server).keywords("hiking boots")
    llm_server.push(content=json.dumps({"words": 3}))
    with pytest.raises(LLMError, match="not a list"):
        make(llm_server).keywords("hiking boots")


def test_parse_json_accepts_a_code_fence():
    assert parse_json('```json\n{"a": [1, 2]}\n```') == {"a": [1, 2]}
    with pytest.raises(LLMError):
        parse_json("   ")


def test_summary_and_facts_with_provenance(llm_server):
    llm = make(llm_server)
    assert llm.summarize(["Ann: I adopted a beagle.", "Bob: Nice!"]).startswith("Summary: Ann")
    llm_server.push(content=json.dumps({"facts": [
        {"fact": "Ann adopted a beagle.", "sources": [7, 99]},   # 99 is not one of the messages
        {"fact": "Nobody said this.", "sources": [42]},
        {"fact": "", "sources": [7]},
        "junk",
    ]}))
    facts = llm.facts([(7, "Ann", "I adopted a beagle."), (8, "Bob", "Nice!")])
    assert facts == [("Ann adopted a beagle.", [7])]


def test_facts_whose_sources_are_not_message_ids_are_skipped(llm_server):
    llm = make(llm_server)
    msgs = [(1, "Ann", "I adopted a beagle."), (2, "Ann", "Hi."), (12, "Ann", "Rex is two.")]
    for sources in (None, 1, "12", ["\u00b2"], ["1" * 5000], [True], [1.5], {"1": 1}):
        llm_server.push(content=json.dumps({"facts": [{"fact": "Ann adopted a beagle.", "sources": sources}]}))
        assert llm.facts(msgs) == [], sources
    llm_server.push(content=json.dumps({"facts": [{"fact": "Rex is two.", "sources": [" 12", 2, "x"]}]}))
    assert llm.facts(msgs) == [("Rex is two.", [12, 2])]


def test_deep_consolidation_survives_facts_without_a_source_list(llm_server):
    llm_server.responder = lambda body: json.dumps({"summary": "A beagle.",
                                                    "facts": [{"fact": "Ann has a dog.", "sources": None}]})
    mem = Memory(None, llm=make(llm_server), config={"hierarchy": {"llm_keywords": False}})
    for i in range(12):
        mem.add(f"I adopted a beagle named Rex number {i}.", speaker="Ann", session_id="s1")
    report = mem.consolidate("deep")
    assert report["llm_failures"] == 0 and report["llm_facts"] == 0 and report["llm_episodes"] >= 1


@pytest.mark.parametrize("logprob", [1000.0, 0.5])
def test_uncertainty_refuses_values_that_are_no_log_probabilities(llm_server, logprob):
    llm_server.push(content="Sweden", logprobs=[[logprob, -1.0]])
    with pytest.raises(LLMError, match="log-probabilities"):
        make(llm_server).uncertainty("Where did she move from?", "Caroline: I moved from Sweden.")


def test_uncertainty_is_mean_token_entropy_of_the_logprobs(llm_server):
    alts = [[math.log(0.5), math.log(0.5)], [math.log(0.9), math.log(0.1)]]
    llm_server.push(content="Sweden", logprobs=alts)
    got = make(llm_server).uncertainty("Where did she move from?", "Caroline: I moved from Sweden.")
    h1 = math.log(2)
    h2 = -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))
    assert got == pytest.approx((h1 + h2) / 2)
    assert llm_server.requests[-1]["body"]["logprobs"] is True


def test_as_llm_normalizes_what_memory_accepts(llm_server):
    assert as_llm(None) is None
    llm = make(llm_server)
    assert as_llm(llm) is llm
    settings = {"base_url": llm_server.base_url, "model": "m"}
    assert as_llm(settings) is as_llm(settings)
    with pytest.raises(InvalidInput, match="llm settings"):
        as_llm({"base_url": llm_server.base_url, "temperatur": 0})
    with pytest.raises(InvalidInput, match="not a str"):
        as_llm("http://127.0.0.1:1/v1")
    with pytest.raises(InvalidInput, match="chat.completions"):
        LLM(object())
    with pytest.raises(InvalidInput, match="max_retries"):
        LLM(base_url=llm_server.base_url, max_retries=-1)


class _Completions:
    def create(self, **kw):
        raise AssertionError("not called")


class _Client:
    def __init__(self) -> None:
        self.chat = type("Chat", (), {"completions": _Completions()})()


class _SlottedClient:
    __slots__ = ("chat",)  # not weak-referenceable

    def __init__(self) -> None:
        self.chat = type("Chat", (), {"completions": _Completions()})()


def test_settings_dicts_made_per_handle_keep_no_client_each():
    """``Memory(path, llm={...})`` opened per request builds its settings dict each time: equal settings give the
    one LLM (and its client) instead of a new one that the process kept forever, and other clients handed in
    are not all kept either."""
    import gc
    import weakref

    from hippo.engine import llm as llm_mod

    first = as_llm({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    for _ in range(50):
        mem = Memory(None, llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
        mem.close()
        assert as_llm({"model": "m", "base_url": "http://127.0.0.1:9/v1"}) is first
    refs = []
    for _ in range(200):
        client = _Client()
        refs.append(weakref.ref(client))
        assert as_llm({"client": client, "model": "m"}).client is client
        del client
    slotted = _SlottedClient()
    assert as_llm(slotted) is as_llm(slotted)
    for _ in range(200):
        as_llm(_SlottedClient())
    gc.collect()
    assert sum(r() is not None for r in refs) <= llm_mod._KEPT
    assert len(llm_mod._kept) <= llm_mod._KEPT


PETS = [
    ("Ann", "s1", "We adopted a beagle named Rufus from the shelter."),
    ("Bob", "s1", "Congratulations, that sounds lovely."),
    ("Ann", "s1", "My sister is visiting from Lisbon next week."),
    ("Bob", "s2", "The pottery class starts on Monday."),
]


def _fill(mem: Memory) -> None:
    mem.add_many({"text": t, "speaker": sp, "session_id": sid} for sp, sid, t in PETS)


def test_memory_uses_llm_keywords_and_no_llm_on_ingest(llm_server):
    llm_server.responder = lambda req: json.dumps({"keywords": ["beagle", "dog"]})
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST})
    _fill(mem)
    assert llm_server.calls() == 0  # zero LLM calls on the write path
    offline = Memory(None)
    _fill(offline)
    question = "Which animal did Ann bring home?"  # no word of the answer, no attribute the offline facts know
    assert "beagle" not in offline.search(question, k=1)[0].text
    assert "beagle" in mem.search(question, k=1)[0].text
    assert "beagle" in mem.recall(question, budget_tokens=60).text
    assert llm_server.calls() == 1  # the keywords of one question are asked once


def test_a_question_asked_while_the_llm_failed_is_asked_again_once_it_answers(llm_server):
    """A failed keyword request falls back offline for that call only: once the endpoint answers, the question gets
    the LLM's keywords, as in a process that never saw the failure."""
    llm_server.responder = lambda req: json.dumps({"keywords": ["beagle", "dog"]})
    question = "Which animal did Ann bring home?"  # no word of the answer: only the LLM's keywords find it
    settings = {"base_url": llm_server.base_url, "model": "m", "max_retries": 0, **FAST}
    fresh = Memory(None, llm=settings)
    _fill(fresh)
    want = fresh.search(question, k=1)[0].text
    assert "beagle" in want
    mem = Memory(None, llm=settings)
    _fill(mem)
    llm_server.push(status=503)
    assert "beagle" not in mem.search(question, k=1)[0].text  # the offline keywords, this once
    assert mem.stats()["hierarchy"]["llm_fallbacks"] == 1
    assert mem.search(question, k=1)[0].text == want
    asked = llm_server.calls()
    assert mem.search(question, k=1)[0].text == want and llm_server.calls() == asked  # kept once answered


def test_memory_falls_back_offline_on_malformed_answers(llm_server):
    llm_server.responder = lambda req: "no json here"
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST})
    _fill(mem)
    rec = mem.recall("Where is the sister visiting from?", budget_tokens=60)
    assert "Lisbon" in rec.text
    assert mem.stats()['hierarchy']["llm_fallbacks"] == 1


def test_memory_falls_back_offline_when_the_endpoint_is_down():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    mem = Memory(None, llm={"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "max_retries": 1, **FAST})
    _fill(mem)
    assert "pottery" in mem.recall("When does the pottery class start?", budget_tokens=60).text.lower()


def test_fallbacks_counted_before_a_namespace_is_unloaded_stay_counted(tmp_path):
    """``stats()["hierarchy"]["llm_fallbacks"]`` counts the process's fallbacks for the namespace, also after the
    namespace was unloaded and loaded again (its state object is then a new one)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    mem = Memory(str(tmp_path / "m.db"), config={"max_loaded_namespaces": 1},
                 llm={"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "max_retries": 0, **FAST})
    a = mem.using("a")
    _fill(a)
    a.recall("When does the pottery class start?", budget_tokens=60)
    assert a.stats()["hierarchy"]["llm_fallbacks"] == 1
    mem.using("b").add("another user")
    assert "a" not in mem.engine.rt.states()
    assert a.stats()["hierarchy"]["llm_fallbacks"] == 1
    mem.close()


def test_deep_consolidation_uses_llm_summaries_and_facts(llm_server):
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST})
    items = mem.add_many({"text": t, "speaker": sp, "session_id": "s1"} for sp, _, t in PETS[:3])
    report = mem.consolidate("deep")
    assert report["llm_episodes"] >= 1 and report["llm_failures"] == 0 and report["llm_facts"] >= 1
    h = mem.engine.state().life().hier
    llm_facts = [s for s in h.semantics.values() if s.llm]
    assert llm_facts and all(set(s.message_ids) <= {i.id for i in items} for s in llm_facts)
    assert any(e.llm_summary and e.summary.startswith("Summary:") for e in h.episodes.values())
    topic = next(t for t in mem.topics() if t["id"] != "current")
    assert "said:" in mem.topic(topic["id"])


def test_deep_consolidation_keeps_offline_units_when_the_llm_fails(llm_server):
    llm_server.responder = lambda req: "{broken"
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST})
    mem.add_many({"text": t, "speaker": sp, "session_id": "s1"} for sp, _, t in PETS[:3])
    report = mem.consolidate("deep")
    assert report["llm_failures"] >= 1 and report["llm_facts"] == 0
    h = mem.engine.state().life().hier
    assert h.semantics and not any(s.llm for s in h.semantics.values())


def test_llm_on_write_summarizes_and_extracts_facts_as_units_are_built(llm_server):
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST},
                 config={"hierarchy": {"llm_on_write": True, "batch_messages": 1}})
    mem.add_many({"text": t, "speaker": sp, "session_id": "s1"} for sp, _, t in PETS[:3])
    assert llm_server.calls() == 0                   # the session's flush unit is still open: no unit yet
    mem.add("A new session starts here.", session_id="s2")  # closes it: its units are built by this write
    h = mem.engine.state().life().hier
    assert llm_server.calls() >= 2 and any(s.llm for s in h.semantics.values())


def test_stage2_stops_when_the_readers_entropy_stops_falling(llm_server):
    import math as m_

    flat = [[m_.log(0.5), m_.log(0.5)]]                # entropy ln 2
    sharp = [[m_.log(0.99), m_.log(0.01)]]             # much lower
    for alts in (flat, sharp, sharp, sharp):
        llm_server.push(content="answer", logprobs=alts)
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST},
                 config={"hierarchy": {"llm_uncertainty": True, "llm_keywords": False, "recall": "stage2"}})
    mem.add_many({"text": f"Note {k}: the quarterly budget review covers item {k}.", "session_id": "s"}
                 for k in range(12))
    offline = Memory(None, config={"hierarchy": {"recall": "stage2"}})
    offline.add_many({"text": f"Note {k}: the quarterly budget review covers item {k}.", "session_id": "s"}
                     for k in range(12))
    full = offline.recall("budget review", budget_tokens=400)
    rec = mem.recall("budget review", budget_tokens=400)
    assert 0 < len(rec.messages) < len(full.messages)  # stopped after the second slice: no further drop
    assert llm_server.calls() == 3 and "llm_ms" in rec.timings
    llm_server.responder = lambda req: "no logprobs"   # endpoint without logprobs -> offline selection
    again = mem.recall("budget review items", budget_tokens=400)
    assert len(again.messages) >= len(rec.messages) and mem.stats()['hierarchy']["llm_fallbacks"] >= 1


def test_the_encoding_gate_never_calls_the_llm(llm_server):
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST}, config={"gate": {"enabled": True}})
    _fill(mem)
    mem.add("I will renew the passport at the consulate on 3 June.")
    assert llm_server.calls() == 0


def test_json_past_the_parsers_limits_is_an_llm_error():
    with pytest.raises(LLMError, match="cannot be read"):
        parse_json("[" * 100_000)                    # nested past the parser's recursion depth
    with pytest.raises(LLMError, match="cannot be read"):
        parse_json("1" * 5_000)                      # an integer past Python's 4,300 digits


def test_model_text_that_cannot_be_stored_is_refused_or_skipped(llm_server):
    llm = make(llm_server)
    for bad in ("Build log \ud800 of the run", "Build log\u0000 of the run"):
        llm_server.push(content=json.dumps({"summary": bad}))
        with pytest.raises(LLMError, match="cannot be stored"):
            llm.summarize(["step 1 ok", "step 2 FAILED"])
    llm_server.push(content=json.dumps({"facts": [
        {"fact": "Ann adopted a \ud800 beagle.", "sources": [7]},
        {"fact": "Ann adopted a beagle.", "sources": [7]},
    ]}))
    assert llm.facts([(7, "Ann", "I adopted a beagle.")]) == [("Ann adopted a beagle.", [7])]


def test_index_entry_falls_back_when_the_llm_summary_cannot_be_stored(llm_server):
    mem = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST})
    llm_server.push(content=json.dumps({"summary": "Build log \ud800 of the run"}))
    entry = mem.index_entry("step 1 ok\nstep 2 ok\nstep 3 FAILED: disk full\n" * 50, type="tool_result")
    plain = Memory(None)
    offline = plain.index_entry("step 1 ok\nstep 2 ok\nstep 3 FAILED: disk full\n" * 50, type="tool_result")
    assert entry.summary_by == "extractive" and entry.summary == offline.summary
    assert llm_server.calls() == 1 and mem.count() == plain.count() > 0
