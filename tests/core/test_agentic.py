"""Agentic recall (seed 003 §3.4) against a real OpenAI-compatible HTTP server on 127.0.0.1 (see llm_server.py).

The server plays the model: each test scripts its tool calls, then checks what hippo sent back (tool results,
prompt sizes) and what it returned (evidence messages, packed text, trace).
"""

from __future__ import annotations

import json
import logging
import re

import pytest
from llm_server import llm_server  # noqa: F401 - pytest fixture

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.engine import agentic
from hippo.engine.llm import LLM
from hippo.text import tokenizer

FAST = {"backoff_s": 0.001, "max_backoff_s": 0.005}
TOOL_NAMES = {"search", "grep", "list_topics", "read_topic", "read", "answer"}

LINES = [
    ("s1", "Ann", "I bought new hiking boots at the outlet in Denver."),
    ("s1", "Bob", "Nice, were they expensive?"),
    ("s1", "Ann", "About ninety dollars, and they are waterproof."),
    ("s1", "Bob", "My sister Mia started a pottery class at the community center."),
    ("s2", "Ann", "We hiked Mount Elbert with the new boots."),
    ("s2", "Bob", "The weather forecast says snow in the mountains."),
    ("s2", "Ann", "Pixel the border collie chewed the garden hose again."),
    ("s2", "Bob", "Mia glazed her first teapot in blue enamel."),
]


def make_llm(server, **kw) -> LLM:
    return LLM(base_url=server.base_url, model="test-model", **{**FAST, **kw})


@pytest.fixture
def mem():
    m = Memory(None)
    items = m.add_many({"text": t, "speaker": sp, "session_id": s, "timestamp": f"2024-05-0{1 + k // 4}T10:0{k}:00"}
                       for k, (s, sp, t) in enumerate(LINES))
    m.ids = [i.id for i in items]  # ids in insertion order, for the scripts
    yield m
    m.close()


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "tool"]


def prompt_tokens(request: dict) -> int:
    """Tokens of every text the request carries (contents and tool-call arguments)."""
    total = 0
    for m in request["messages"]:
        total += tokenizer.count_tokens(m.get("content") or "")
        for c in m.get("tool_calls") or ():
            total += tokenizer.count_tokens(c["function"]["arguments"])
    return total


def test_search_read_answer_returns_exactly_the_evidence(mem, llm_server):
    ids = mem.ids
    llm_server.push_tool_calls({"name": "search", "arguments": {"query": "hiking boots", "k": 3}})
    llm_server.push_tool_calls({"name": "read", "arguments": {"message_id": ids[0], "before": 0, "after": 2}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [ids[4], ids[0], ids[2]]}})
    r = mem.agentic_recall("Where did Ann buy her boots and how much were they?", llm=make_llm(llm_server))

    # The evidence is exactly the cited messages, laid out by session and time like Memory.recall.
    assert [m.id for m in r.messages] == [ids[0], ids[2], ids[4]]
    assert [m.text for m in r.messages] == [LINES[0][2], LINES[2][2], LINES[4][2]]
    assert r.text.splitlines() == ["[1 May 2024]", f"Ann: {LINES[0][2]}", f"Ann: {LINES[2][2]}",
                                   "[2 May 2024]", f"Ann: {LINES[4][2]}"]
    assert r.tokens == tokenizer.count_tokens(r.text) <= r.budget_tokens == 2000
    assert [(e["round"], e["tool"], e["status"]) for e in r.trace] == [
        (1, "search", "ok"), (2, "read", "ok"), (3, "answer", "ok")]
    assert r.trace[-1]["ids"] == [ids[4], ids[0], ids[2]]

    reqs = llm_server.tool_requests()
    assert len(reqs) == 3
    assert {t["function"]["name"] for t in reqs[0]["tools"]} == TOOL_NAMES
    assert reqs[0]["messages"][0]["content"].startswith("You are a memory-search agent.")  # Prompt E
    assert "Where did Ann buy her boots" in reqs[0]["messages"][1]["content"]
    # What the model saw is what Memory.search and Memory.read give.
    expected_search = [h.id for h in mem.search("hiking boots", k=3)]
    seen = [int(x) for x in re.findall(r"^\[id=(\d+)\]", tool_messages(reqs[1])[0], re.M)]
    assert seen == expected_search and r.trace[0]["ids"] == expected_search
    read_lines = tool_messages(reqs[2])[-1].splitlines()
    assert [int(re.match(r"\[id=(\d+)\]", ln).group(1)) for ln in read_lines] == ids[0:3]
    assert read_lines[1].endswith(f"Bob: {LINES[1][2]}")
    assert reqs[1]["messages"][2]["tool_calls"][0]["function"]["name"] == "search"


def test_snippets_expand_to_neighbours_within_the_session(mem, llm_server):
    ids = mem.ids
    llm_server.push_tool_calls({"name": "answer", "arguments": {
        "message_ids": [], "snippets": [{"message_id": ids[3], "before": 1, "after": 3}]}})
    r = mem.agentic_recall("What does Mia do?", llm=make_llm(llm_server))
    # ids[3] is the last message of session s1: neighbours never cross into s2.
    assert [m.id for m in r.messages] == [ids[2], ids[3]]


def test_round_bound_then_lexical_fallback(mem, llm_server):
    for _ in range(5):
        llm_server.push_tool_calls({"name": "search", "arguments": {"query": "pottery"}})
    r = mem.agentic_recall("Who takes a pottery class?", llm=make_llm(llm_server), max_rounds=3,
                           budget_tokens=200)
    assert len(llm_server.tool_requests()) == 3 and len(llm_server.agent_queue) == 2
    assert agentic.FINAL_ROUND in llm_server.tool_requests()[-1]["messages"][-1]["content"]
    assert [e.get("event") for e in r.trace if "event" in e] == ["round_limit", "fallback"]
    assert [e["tool"] for e in r.trace if "tool" in e] == ["search"] * 3
    lexical = mem.recall("Who takes a pottery class?", budget_tokens=200)
    assert [m.id for m in r.messages] == [m.id for m in lexical.messages] and r.text == lexical.text
    assert mem.ids[3] in [m.id for m in r.messages]


def test_malformed_calls_unknown_tools_and_bad_arguments_are_reported_to_the_model(mem, llm_server):
    ids = mem.ids
    before = mem.count()
    llm_server.push_tool_calls({"name": "search", "arguments": "{not json", "id": "c1"},
                               {"name": "delete_everything", "arguments": {}, "id": "c2"},
                               {"name": "read", "arguments": {"message_id": "abc"}, "id": "c3"},
                               {"name": "search", "arguments": [1, 2], "id": "c4"},
                               {"name": "grep", "arguments": {"pattern": "boots"}, "id": "c5"})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [ids[6], "nope", 10 ** 9]}})
    r = mem.agentic_recall("What did the dog chew?", llm=make_llm(llm_server))
    assert [m.id for m in r.messages] == [ids[6]]
    errors = [(e["tool"], e["error"]) for e in r.trace if e.get("status") == "error"]
    assert [t for t, _ in errors] == ["search", "delete_everything", "read", "search", "grep"]
    assert "not valid JSON" in errors[0][1] and "unknown tool 'delete_everything'" in errors[1][1]
    assert "message_id must be an integer" in errors[2][1] and "JSON object" in errors[3][1]
    assert f"more than {agentic.CALLS_PER_ROUND} calls" in errors[4][1]
    assert r.trace[-1]["dropped"] == ["nope", 10 ** 9]
    # Every call got an answer with its own id, and each error went back to the model.
    second = llm_server.tool_requests()[1]
    results = {m["tool_call_id"]: m["content"] for m in second["messages"] if m.get("role") == "tool"}
    assert set(results) == {"c1", "c2", "c3", "c4", "c5"} and all(v.startswith("error:") for v in results.values())
    assert mem.count() == before


def test_rounds_without_a_usable_action_end_in_the_fallback(mem, llm_server):
    for _ in range(agentic.MAX_STRIKES):
        llm_server.push_agent(content="Let me think about where the boots came from.")
    r = mem.agentic_recall("Where did Ann buy boots?", llm=make_llm(llm_server), max_rounds=7)
    assert len(llm_server.tool_requests()) == agentic.MAX_STRIKES
    assert [e["event"] for e in r.trace] == ["malformed"] * agentic.MAX_STRIKES + ["no_progress", "fallback"]
    assert llm_server.tool_requests()[1]["messages"][-1]["content"] == agentic.CORRECTION
    assert [m.id for m in r.messages] == [m.id for m in mem.recall("Where did Ann buy boots?").messages]


def test_plain_text_json_actions_are_accepted(mem, llm_server):
    ids = mem.ids
    llm_server.push_agent(content='```json\n{"done": false, "tool_calls": [{"name": "grep", "arguments": '
                                  '{"pattern": "Denver|Elbert"}}]}\n```')
    llm_server.push_agent(content=json.dumps({"done": True, "relevant_snippets": [
        {"message_id": ids[0], "before": 0, "after": 1}], "relevant_messages": [ids[4]]}))
    r = mem.agentic_recall("Where did Ann buy boots?", llm=make_llm(llm_server))
    assert [m.id for m in r.messages] == [ids[0], ids[1], ids[4]]
    fed_back = llm_server.tool_requests()[1]["messages"][-1]["content"]
    assert fed_back.startswith("Tool results:") and f"[id={ids[0]}]" in fed_back and f"[id={ids[4]}]" in fed_back
    assert r.trace[0]["ids"] == [ids[0], ids[4]]


def test_endpoint_without_tool_support_is_driven_by_the_json_protocol(mem, llm_server):
    ids = mem.ids
    llm_server.push_agent(status=400)
    llm_server.push(content=json.dumps({"done": False, "tool_calls": [
        {"name": "search", "arguments": {"query": "teapot"}}]}))
    llm_server.push(content=json.dumps({"done": True, "relevant_messages": [ids[7]]}))
    r = mem.agentic_recall("What did Mia glaze?", llm=make_llm(llm_server))
    assert [m.id for m in r.messages] == [ids[7]]
    assert r.trace[0]["event"] == "json_protocol" and "HTTP 400" in r.trace[0]["error"]
    bodies = [q["body"] for q in llm_server.requests]
    assert len(bodies) == 3 and "tools" in bodies[0] and not any("tools" in b for b in bodies[1:])


def test_grep_is_bounded_against_hostile_patterns(mem, llm_server):
    mem.add("a" * 40 + "!", speaker="Eve", session_id="s3", timestamp="2024-05-03T10:00:00")
    pattern_ok = r"\bboots?\b"
    llm_server.push_tool_calls({"name": "grep", "arguments": {"pattern": r"^(a|aa)+$"}},
                               {"name": "grep", "arguments": {"pattern": "(x+)" * 1000}},
                               {"name": "grep", "arguments": {"pattern": "(unclosed"}},
                               {"name": "grep", "arguments": {"pattern": pattern_ok, "ignore_case": False}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [mem.ids[0]]}})
    r = mem.agentic_recall("boots", llm=make_llm(llm_server))
    hostile, long_, invalid, good = r.trace[:4]
    assert hostile["status"] == "ok"
    results = tool_messages(llm_server.tool_requests()[1])
    assert "time bound reached" in results[0] and "backtracks" in results[0]
    assert long_["status"] == "error" and f"limit is {agentic.GREP_MAX_PATTERN}" in long_["error"]
    assert invalid["status"] == "error" and "not a valid regular expression" in invalid["error"]
    # A normal pattern finds exactly what Python's re finds, oldest first.
    oracle = [m.id for m in mem.list() if re.search(pattern_ok, m.text)]
    assert good["ids"] == oracle == [mem.ids[0], mem.ids[4]]
    assert results[3].startswith(f"2 match(es) in {mem.count()} of {mem.count()} message(s) scanned")
    assert [m.id for m in r.messages] == [mem.ids[0]]


def test_grep_scans_a_bounded_number_of_characters(mem, llm_server, monkeypatch):
    monkeypatch.setattr(agentic, "GREP_MAX_CHARS", 130)
    llm_server.push_tool_calls({"name": "grep", "arguments": {"pattern": "teapot"}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [mem.ids[7]]}})
    mem.agentic_recall("teapot", llm=make_llm(llm_server))
    result = tool_messages(llm_server.tool_requests()[1])[0]
    # The first messages' lengths decide how many fit in 130 characters.
    fit, used = 0, 0
    for _, _, t in LINES:
        if used + len(t) > 130:
            break
        fit, used = fit + 1, used + len(t)
    assert result == f"0 match(es) in {fit} of {len(LINES)} message(s) scanned; size bound reached (130 characters scanned)"


def test_llm_errors_after_retries_fall_back_to_lexical_recall(mem, llm_server, caplog):
    for _ in range(3):
        llm_server.push_agent(status=500)
    llm = LLM(base_url=llm_server.base_url, model="m", api_key="sk-very-secret-key", max_retries=2, **FAST)
    with caplog.at_level(logging.DEBUG):
        r = mem.agentic_recall("Who chewed the garden hose?", llm=llm, budget_tokens=120)
    assert llm_server.calls() == 3
    assert [e["event"] for e in r.trace] == ["llm_error", "fallback"]
    assert "after 3 attempt(s)" in r.trace[0]["error"] and "HTTP 500" in r.trace[0]["error"]
    lexical = mem.recall("Who chewed the garden hose?", budget_tokens=120)
    assert [m.id for m in r.messages] == [m.id for m in lexical.messages] and r.text == lexical.text
    assert r.tokens <= 120 and mem.ids[6] in [m.id for m in r.messages]
    assert "sk-very-secret-key" not in repr(r) and "sk-very-secret-key" not in caplog.text


def test_token_budgets_for_context_tool_results_and_prompt(llm_server, monkeypatch):
    m = Memory(None)
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    long_items = m.add_many({"text": f"Note {k}: " + " ".join(words * 10), "speaker": "Ann", "session_id": "s",
                             "timestamp": f"2024-05-01T10:{k:02d}:00"} for k in range(12))
    huge = m.add("Log dump: " + " ".join(f"{w}{k}" for k in range(3000) for w in ("x", "y")), speaker="Ann",
                 session_id="s", timestamp="2024-05-01T11:00:00")
    ids = [i.id for i in long_items]
    monkeypatch.setattr(agentic, "PROMPT_BUDGET_TOKENS", 2200)
    llm_server.push_tool_calls({"name": "read", "arguments": {"message_id": huge.id, "before": 0, "after": 0}})
    for _ in range(3):
        llm_server.push_tool_calls({"name": "grep", "arguments": {"pattern": "Note", "limit": 20}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": ids}})
    r = m.agentic_recall("Which notes mention kilo?", llm=make_llm(llm_server), budget_tokens=500)

    # The context: at most 500 tokens, whole cited messages in citation order while they fit.
    n_tok = long_items[0].n_tokens
    assert all(i.n_tokens == n_tok for i in long_items)
    assert r.tokens == tokenizer.count_tokens(r.text) <= 500
    assert 0 < len(r.messages) < len(ids) and [x.id for x in r.messages] == ids[:len(r.messages)]
    assert all(x.text in r.text for x in r.messages)
    assert len(r.messages) == (500 - 6) // (n_tok + 3)  # header "[1 May 2024]" + newline, "Ann: " + newline

    reqs = llm_server.tool_requests()
    read_result = tool_messages(reqs[1])[0]
    assert tokenizer.count_tokens(read_result) <= agentic.MESSAGE_TOKENS + 40 and "more tokens]" in read_result
    for req in reqs[2:]:
        assert tokenizer.count_tokens(tool_messages(req)[-1]) <= agentic.TOOL_RESULT_TOKENS
    assert all(prompt_tokens(req) <= 2200 for req in reqs)
    assert any(agentic.ELIDED in tool_messages(req) for req in reqs)   # older results made room
    m.close()


def test_tools_never_see_another_namespace(llm_server):
    a = Memory(None, namespace="a")
    b = a.using("b")
    a.add_many([{"text": "The garden gate code changed in May.", "speaker": "Ann"},
                {"text": "Bob repainted the garden gate green.", "speaker": "Bob"}])
    secret = b.add("The vault code is 4417 and the garden gate code is 9902.", speaker="Zed")
    assert secret.id not in {x.id for x in a.list()}
    llm_server.push_tool_calls({"name": "grep", "arguments": {"pattern": "vault|4417|9902"}},
                               {"name": "search", "arguments": {"query": "vault code garden gate"}},
                               {"name": "read", "arguments": {"message_id": secret.id}},
                               {"name": "list_topics", "arguments": {}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [secret.id]}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"snippets": [{"message_id": secret.id}]}})
    r = a.agentic_recall("What is the garden gate code?", llm=make_llm(llm_server), max_rounds=3)
    for req in llm_server.requests:
        body = json.dumps(req["body"])
        for own in ("vault|4417|9902", "vault code garden gate"):  # the model's own words aside
            body = body.replace(own, "")
        assert "4417" not in body and "9902" not in body and "vault" not in body and "Zed" not in body
    grep, search, read, _ = r.trace[:4]
    assert grep["ids"] == [] and secret.id not in search["ids"] and read["status"] == "error"
    assert r.trace[4]["dropped"] == [secret.id] and r.trace[5]["dropped"] == [secret.id]
    assert r.trace[-1]["event"] == "fallback"
    assert r.messages and all(x.namespace == "a" for x in r.messages) and "4417" not in r.text
    a.close()


def test_filter_scopes_every_tool_and_the_evidence(mem, llm_server):
    ids = mem.ids
    llm_server.push_tool_calls({"name": "search", "arguments": {"query": "Mia pottery teapot boots"}},
                               {"name": "read", "arguments": {"message_id": ids[2], "before": 2, "after": 2}},
                               {"name": "list_topics", "arguments": {}},
                               {"name": "grep", "arguments": {"pattern": "boots|Mia"}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [ids[3], ids[0]]}})
    r = mem.agentic_recall("What is Mia doing?", llm=make_llm(llm_server), filter={"speaker": "Ann"})
    first = llm_server.tool_requests()[0]
    assert {t["function"]["name"] for t in first["tools"]} == TOOL_NAMES - {"list_topics", "read_topic"}
    search, read, topics, grep, answer = r.trace
    ann = {i for i, (_, sp, _) in zip(ids, LINES) if sp == "Ann"}
    assert search["ids"] and set(search["ids"]) <= ann
    assert read["ids"] == [ids[0], ids[2]]  # session s1 around ids[2], Ann's messages only
    assert topics["status"] == "error" and "filtered" in topics["error"]
    assert grep["ids"] == [i for i in ids if i in ann and re.search("boots|Mia", mem.get(i).text)] == [ids[0], ids[4]]
    assert answer["dropped"] == [ids[3]] and [x.id for x in r.messages] == [ids[0]]


def test_topic_documents_are_tagged_with_message_ids(mem, llm_server):
    mem.consolidate("light")
    catalog = mem.topics()
    theme = next(t["id"] for t in catalog if t["id"] != "current")
    llm_server.push_tool_calls({"name": "list_topics", "arguments": {}})
    llm_server.push_tool_calls({"name": "read_topic", "arguments": {"topic_id": str(theme)}})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [mem.ids[5]]}})
    r = mem.agentic_recall("What does the forecast say?", llm=make_llm(llm_server))
    reqs = llm_server.tool_requests()
    for t in catalog:  # the catalog is in the first prompt and in list_topics' result
        assert f"topic {t['id']} (" in reqs[0]["messages"][1]["content"]
        assert f"topic {t['id']} (" in tool_messages(reqs[1])[0]
    doc = tool_messages(reqs[2])[-1]
    tags = re.findall(r"<id=(\d+), seq=(\d+),", doc)
    assert tags and [int(mid) for mid, _ in tags] == r.trace[1]["ids"]
    for mid, seq in tags:
        assert mem.get(int(mid)).seq == int(seq)
    assert [x.id for x in r.messages] == [mem.ids[5]]


def test_memory_llm_is_the_default_and_inputs_are_validated(llm_server):
    m = Memory(None, llm={"base_url": llm_server.base_url, "model": "m", **FAST})
    items = m.add_many([{"text": "Ann adopted a beagle named Biscuit.", "speaker": "Ann"},
                        {"text": "Bob bought a kayak.", "speaker": "Bob"}])
    llm_server.push_tool_calls({"name": "search", "arguments": {"query": "beagle"}})
    llm_server.push_tool_calls({"name": "done", "arguments": {"message_ids": [items[0].id]}})
    r = m.agentic_recall("Which dog did Ann adopt?")
    assert [x.id for x in r.messages] == [items[0].id]
    n = llm_server.calls()
    for kwargs, match in [({"max_rounds": 0}, "max_rounds"), ({"max_rounds": True}, "max_rounds"),
                          ({"budget_tokens": float("nan")}, "budget_tokens"), ({"budget_tokens": 0}, "budget_tokens"),
                          ({"filter": "speaker"}, "filter"), ({"llm": "http://x"}, "llm")]:
        with pytest.raises(InvalidInput, match=match):
            m.agentic_recall("dog?", **kwargs)
    with pytest.raises(InvalidInput, match="query"):
        m.agentic_recall("   ")
    assert llm_server.calls() == n  # nothing reached the endpoint
    m.close()
    offline = Memory(None)
    offline.add("Ann adopted a beagle.")
    with pytest.raises(InvalidInput, match="llm"):
        offline.agentic_recall("Which dog?")
    offline.close()


async def test_async_twin_matches_the_sync_call(mem, llm_server):
    ids = mem.ids
    script = [{"name": "grep", "arguments": {"pattern": "Mia"}},
              {"name": "answer", "arguments": {"message_ids": [ids[7], ids[3]]}}]
    for call in script:
        llm_server.push_tool_calls(call)
    r = await mem.aagentic_recall("What does Mia do?", llm=make_llm(llm_server), budget_tokens=300)
    for call in script:
        llm_server.push_tool_calls(call)
    s = mem.agentic_recall("What does Mia do?", llm=make_llm(llm_server), budget_tokens=300)
    assert [x.id for x in r.messages] == [x.id for x in s.messages] == [ids[3], ids[7]]
    assert r.text == s.text
    assert [(e["tool"], e["ids"]) for e in r.trace] == [(e["tool"], e["ids"]) for e in s.trace]


def test_arguments_no_parser_or_number_can_read_are_reported_to_the_model(mem, llm_server):
    """A superscript digit is a digit to ``str.isdigit`` and no number to ``int``; JSON nested past the parser's
    depth raises RecursionError: each is an error sent back to the model, not an exception out of the recall."""
    ids = mem.ids
    llm_server.push_tool_calls({"name": "read", "arguments": {"message_id": "\u00b2"}, "id": "c1"},
                               {"name": "search", "arguments": {"query": "boots", "k": "\u00b3"}, "id": "c2"},
                               {"name": "search", "arguments": "[" * 100_000, "id": "c3"})
    llm_server.push_tool_calls({"name": "answer", "arguments": {"message_ids": [ids[6]]}})
    r = mem.agentic_recall("What did the dog chew?", llm=make_llm(llm_server))
    assert [m.id for m in r.messages] == [ids[6]]
    errors = [e["error"] for e in r.trace if e.get("status") == "error"]
    assert errors == ["message_id must be an integer, got '²'", "k must be an integer, got '³'",
                      "arguments are JSON that cannot be read (RecursionError)"]


def test_asked_at_reaches_the_tools_searches_and_the_fallback(llm_server):
    # Sunday's tennis, Monday's chess; asked on Tuesday, "yesterday" is Monday in the agent's searches and in the
    # lexical fallback (counted from the latest message, it was Sunday)
    with Memory(None) as m:
        m.add("I played tennis in the park", timestamp="2026-11-22T18:00:00+00:00")
        chess = m.add("I played chess in the park", timestamp="2026-11-23T18:00:00+00:00")
        q = "What did I play in the park yesterday?"
        llm_server.push_tool_calls({"name": "search", "arguments": {"query": q, "k": 1}})
        for _ in range(3):
            llm_server.push_tool_calls({"name": "search", "arguments": {"query": q, "k": 1}})
        r = m.agentic_recall(q, llm=make_llm(llm_server), max_rounds=2, budget_tokens=20,
                             asked_at="2026-11-24T09:00:00Z")
        assert "I played chess in the park" in tool_messages(llm_server.tool_requests()[1])[0]
        assert [e.get("event") for e in r.trace if "event" in e][-1] == "fallback"
        assert [x.id for x in r.messages] == [chess.id]
        with pytest.raises(InvalidInput, match="asked_at"):
            m.agentic_recall(q, llm=make_llm(llm_server), asked_at="tomorrow")
