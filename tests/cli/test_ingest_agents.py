"""``hippo ingest`` of agents' own histories: OpenAI Responses API items, Claude Code session transcripts, LangChain
and LlamaIndex message dumps, each against hand-written expectations (and, where the upstream package is installed,
against what it writes and reads itself)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import hippo
from tests.cli.conftest import assert_one_line_error, cli
from tests.cli.test_ingest import namespaces, stored, utc


def jsonl(path: Path, lines: list) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def ingested_both_ways(tmp_path: Path, capsys, stem: str, items: list) -> Iterator[Path]:
    """The store of ``items`` ingested as a JSON list, then that of them ingested as JSONL (a store each)."""
    for name, write in ((f"{stem}.json", lambda p: p.write_text(json.dumps(items), encoding="utf-8")),
                        (f"{stem}.jsonl", lambda p: jsonl(p, items))):
        f = tmp_path / name
        write(f)
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db)
        assert run.code == 0, run.err
        yield db


def ids(db: Path) -> list[tuple[str | None, str | None]]:
    with hippo.Memory(db) as mem:
        return [(m.metadata.get("source_id"), m.metadata.get("source_digest")) for m in mem.list()]


# --------------------------------------------------------------------------------------------------- Responses API

# A turn of the Responses API as its reference documents the items (and as the openai package's types read them):
# the request's input, then the response's output: reasoning, a function call, its output sent back, web search,
# an MCP call, the answer.
RESPONSES_ITEMS = [
    {"type": "message", "role": "developer", "content": "Answer in one line."},
    {"role": "user", "content": [{"type": "input_text", "text": "Weather in Porto?"},
                                 {"type": "input_image", "image_url": "https://x.test/porto.png", "detail": "auto"}]},
    {"type": "reasoning", "id": "rs_01", "summary": [{"type": "summary_text", "text": "Call the tool."}]},
    {"type": "function_call", "id": "fc_01", "call_id": "call_01", "name": "get_weather",
     "arguments": '{"city":"Porto"}', "status": "completed"},
    {"type": "function_call_output", "call_id": "call_01", "output": "18 C, sunny"},
    {"type": "web_search_call", "id": "ws_01", "status": "completed",
     "action": {"type": "search", "query": "Porto weather tomorrow"}},
    {"type": "mcp_call", "id": "mcp_01", "server_label": "calendar", "name": "free_slots",
     "arguments": '{"day":"2025-03-09"}', "output": "10:00-12:00"},
    {"type": "code_interpreter_call", "id": "ci_01", "status": "completed", "container_id": "cntr_01",
     "code": "print(18 * 9 / 5 + 32)", "outputs": [{"type": "logs", "logs": "64.4\n"}]},
    {"type": "message", "id": "msg_01", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "18 C and sunny; free 10-12.", "annotations": []}]},
]
RESPONSES_EXPECTED = [
    ("Answer in one line.", "system", {}),
    ("Weather in Porto?\n[image: https://x.test/porto.png]", "user", {}),
    ('[tool call get_weather({"city":"Porto"})]', "assistant",
     {"tool_calls": [{"id": "call_01", "type": "function",
                      "function": {"name": "get_weather", "arguments": '{"city":"Porto"}'}}]}),
    ("18 C, sunny", "tool", {"tool_call_id": "call_01"}),
    ('[tool call web_search({"type": "search", "query": "Porto weather tomorrow"})]', "assistant", {}),
    ('[tool call free_slots({"day":"2025-03-09"})]', "assistant", {}),
    ("10:00-12:00", "tool", {"tool_call_id": "mcp_01"}),
    ("[tool call code_interpreter(print(18 * 9 / 5 + 32))]", "assistant", {}),
    ("64.4\n", "tool", {"tool_call_id": "ci_01"}),
    ("18 C and sunny; free 10-12.", "assistant", {}),
]


def test_responses_items_are_the_schema_the_openai_package_reads() -> None:
    """The samples below are items of the Responses API as the openai package itself validates them."""
    pytest.importorskip("openai", reason="the openai package (the Responses API's types) is not installed")
    from openai.types.responses import ResponseInputItem, ResponseOutputItem
    from pydantic import TypeAdapter

    inputs, outputs = TypeAdapter(ResponseInputItem), TypeAdapter(ResponseOutputItem)
    for item in RESPONSES_ITEMS:
        if "id" in item:
            outputs.validate_python(item)
        else:
            inputs.validate_python(item)


def test_responses_api_items_as_a_list_and_as_jsonl(tmp_path, capsys) -> None:
    """A list (or JSONL) of Responses API items was refused at its first item without a role ("field 'role' must be
    one of ..."), so an agent's history could not be ingested. Each item is now read as the chat completions reader
    reads its messages: a function call is the assistant's line ``[tool call name(arguments)]`` with the call in
    ``metadata["tool_calls"]``, its output a message of role tool with the ``call_id``; reasoning is left out."""
    for db in ingested_both_ways(tmp_path, capsys, "items", RESPONSES_ITEMS):
        got = stored(db)
        assert [(m["text"], m["role"], m["metadata"]) for m in got] == RESPONSES_EXPECTED
        assert {(m["speaker"], m["timestamp"], m["session_id"]) for m in got} == {(None, None, None)}
        # the items with an id (or a call id) have their identity, each its own; those without have none, and a
        # digest of their place (before the first item with an id)
        idents = [i for i, _ in ids(db)]
        assert idents[:2] == [None, None] and None not in idents[2:] and len(set(idents[2:])) == 8
        digests = [d for _, d in ids(db)]
        assert None not in digests and len(set(digests)) == 10


def test_responses_api_items_read_again_are_stored_once(tmp_path, capsys) -> None:
    """A later request's input repeats the items of the turns before it: ingested after them, only its new items
    are stored."""
    first = tmp_path / "turn1.json"
    first.write_text(json.dumps(RESPONSES_ITEMS[2:]), encoding="utf-8")
    later = RESPONSES_ITEMS[2:] + [
        {"type": "message", "id": "msg_02", "role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
        {"type": "message", "id": "msg_03", "role": "assistant",
         "content": [{"type": "output_text", "text": "You're welcome.", "annotations": []}]}]
    second = tmp_path / "turn2.json"
    second.write_text(json.dumps(later), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", first, "--path", db).code == 0
    run = cli(capsys, "ingest", second, "--path", db)
    assert run.code == 0, run.err
    assert [m["text"] for m in stored(db)] == [t for t, _, _ in RESPONSES_EXPECTED[2:]] + ["Thanks", "You're welcome."]


def test_an_item_saved_in_progress_and_again_completed_is_stored_once(tmp_path, capsys) -> None:
    """An item's ``status`` is ``in_progress`` while a response streams and ``completed`` after: the same item,
    saved at both times, was stored twice. It is the same message."""
    item = {"type": "message", "id": "msg_07", "role": "assistant", "status": "in_progress",
            "content": [{"type": "output_text", "text": "Hi.", "annotations": []}]}
    first = tmp_path / "a.json"
    first.write_text(json.dumps([item]), encoding="utf-8")
    second = tmp_path / "b.json"
    second.write_text(json.dumps([{**item, "status": "completed"}, RESPONSES_ITEMS[-1]]), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", first, "--path", db).code == 0
    assert cli(capsys, "ingest", second, "--path", db).code == 0
    assert [m["text"] for m in stored(db)] == ["Hi.", "18 C and sunny; free 10-12."]


def ingested_in_turn(tmp_path: Path, capsys, first: list, second: list) -> list[list[tuple]]:
    """What the store holds (text, role, speaker, metadata) after each ingest of ``first``, ``second``, ``first``,
    ``second`` as JSON documents, and then of the same in the other order into a new store."""
    seen = []
    for k, order in enumerate(((first, second), (second, first))):
        db = tmp_path / f"s{k}.db"
        for j, doc in enumerate(order * 2):
            path = tmp_path / f"{k}-{j}.json"
            path.write_text(json.dumps(doc), encoding="utf-8")
            assert cli(capsys, "ingest", path, "--path", db).code == 0
            seen.append([(m["text"], m["role"], m["speaker"], m["metadata"]) for m in stored(db)])
    return seen


def test_an_item_one_list_writes_with_more_fields_than_another_is_stored_once(tmp_path, capsys) -> None:
    """A response's output item as the API returned it (``annotations``, ``logprobs``, ``status``) and as a later
    request's input repeats it, built by hand with its id and words alone: another digest, the same message."""
    answer = {"type": "message", "id": "msg_21", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "Tuesday.", "annotations": [], "logprobs": []}]}
    again = {"type": "message", "id": "msg_21", "role": "assistant",
             "content": [{"type": "output_text", "text": "Tuesday."}]}
    then = {"type": "message", "id": "msg_22", "role": "assistant",
            "content": [{"type": "output_text", "text": "At ten."}]}
    one = [("Tuesday.", "assistant", None, {})]
    two = [*one, ("At ten.", "assistant", None, {})]
    assert ingested_in_turn(tmp_path, capsys, [answer], [again, then]) == [one, two, two, two] + [two] * 4


def ingested_files_in_turn(tmp_path: Path, capsys, first: Path, second: Path) -> list[list[tuple]]:
    """What the store holds (text, role) after each ingest of ``first``, ``second``, ``first``, ``second``, and then
    of the same in the other order into a new store."""
    seen = []
    for k, order in enumerate(((first, second), (second, first))):
        db = tmp_path / f"turns{k}.db"
        for path in order * 2:
            assert cli(capsys, "ingest", path, "--path", db).code == 0
            seen.append([(m["text"], m["role"]) for m in stored(db)])
    return seen


# A conversation kept without previous_response_id: each request's input is the one before with the response's
# output and the caller's next message appended. The caller's messages and the developer's instructions have no id.
TURN_1 = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "When is the dentist?"},
          {"type": "reasoning", "id": "rs_31", "summary": []},
          {"type": "message", "id": "msg_31", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "Tuesday.", "annotations": []}]},
          {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "At what time?"}]}]
TURN_2 = [*TURN_1, {"type": "message", "id": "msg_32", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "At ten.", "annotations": []}]},
          {"role": "user", "content": "Thanks"}]


@pytest.mark.parametrize("write", [
    lambda path, items: path.with_suffix(".json").write_text(json.dumps(items), encoding="utf-8"),
    lambda path, items: jsonl(path.with_suffix(".jsonl"), items)], ids=["list", "jsonl"])
def test_a_longer_list_stores_the_items_without_an_id_it_repeats_once(tmp_path, capsys, write) -> None:
    """The messages a request's caller wrote have no id, and every later request's input repeats them: each
    re-import of a longer list stored them again. Such an item is named by its place, after the item with an id
    before it (or before the first one), which the API named once for all."""
    write(tmp_path / "turn1", TURN_1)
    write(tmp_path / "turn2", TURN_2)
    first, second = sorted(p for p in tmp_path.iterdir() if p.stem.startswith("turn"))
    one = [("Be brief.", "system"), ("When is the dentist?", "user"), ("Tuesday.", "assistant"),
           ("At what time?", "user")]
    two = [*one, ("At ten.", "assistant"), ("Thanks", "user")]
    assert ingested_files_in_turn(tmp_path, capsys, first, second) == [one, two, two, two] + [two] * 4


def test_a_jsonl_opening_too_long_to_hold_is_read_in_order(tmp_path, capsys, monkeypatch) -> None:
    """A JSONL file is read as a stream: the items before its first one with an id are held back only up to a
    bound; past it they are given in their order, without a place."""
    monkeypatch.setattr("hippo.cli.sources._RESPONSES_OPENING", 2)
    f = jsonl(tmp_path / "long.jsonl", [{"role": "user", "content": w} for w in ("a", "b", "c")] + TURN_1[3:4])
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [m["text"] for m in stored(db)] == ["a", "b", "c", "Tuesday."]
    assert [d is None for _, d in ids(db)] == [True, True, True, False]


def test_the_same_opening_of_two_conversations_is_stored_for_each(tmp_path, capsys) -> None:
    """Two conversations that open with the same instructions and question are two: the answer that follows each
    (of an id of its own) tells their openings apart."""
    first = tmp_path / "a.json"
    first.write_text(json.dumps(TURN_1[:4]), encoding="utf-8")
    other = [*TURN_1[:2], {"type": "message", "id": "msg_41", "role": "assistant",
                           "content": [{"type": "output_text", "text": "Friday."}]}]
    second = tmp_path / "b.json"
    second.write_text(json.dumps(other), encoding="utf-8")
    one = [("Be brief.", "system"), ("When is the dentist?", "user"), ("Tuesday.", "assistant")]
    two = [*one, ("Be brief.", "system"), ("When is the dentist?", "user"), ("Friday.", "assistant")]
    owt = [*two[3:], *one]
    assert ingested_files_in_turn(tmp_path, capsys, first, second) == [one, two, two, two, two[3:], owt, owt, owt]


def test_a_function_call_written_again_without_its_id_is_stored_once(tmp_path, capsys) -> None:
    """A function call as a response gave it (``id`` and ``call_id``) and as an input built by hand writes it again
    (its ``call_id`` alone, which its output answers) is one call."""
    call = {"type": "function_call", "id": "fc_51", "call_id": "call_51", "name": "lookup",
            "arguments": '{"q":"dentist"}', "status": "completed"}
    output = {"type": "function_call_output", "call_id": "call_51", "output": "Tuesday 10:00"}
    first = tmp_path / "a.json"
    first.write_text(json.dumps([call, output]), encoding="utf-8")
    second = tmp_path / "b.json"
    second.write_text(json.dumps([{k: v for k, v in call.items() if k not in ("id", "status")}, output,
                                  {"type": "message", "id": "msg_51", "role": "assistant",
                                   "content": [{"type": "output_text", "text": "Tuesday at ten."}]}]),
                      encoding="utf-8")
    one = [('[tool call lookup({"q":"dentist"})]', "assistant"), ("Tuesday 10:00", "tool")]
    two = [*one, ("Tuesday at ten.", "assistant")]
    assert ingested_files_in_turn(tmp_path, capsys, first, second) == [one, two, two, two] + [two] * 4


def test_a_response_object_gives_its_output_at_its_time(tmp_path, capsys) -> None:
    """A response saved whole (``response.model_dump_json()``), alone or a line of JSONL each, is its output items,
    at the response's ``created_at``."""
    response = {"id": "resp_01", "object": "response", "created_at": 1741476777, "status": "completed",
                "model": "gpt-4.1", "output": [RESPONSES_ITEMS[3], RESPONSES_ITEMS[-1]]}
    when = utc(2025, 3, 8, 23, 32, 57)
    for name, text in (("r.json", json.dumps(response, indent=2)), ("r.jsonl", json.dumps(response) + "\n")):
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db)
        assert run.code == 0, run.err
        assert [(m["text"], m["role"], m["timestamp"]) for m in stored(db)] == [
            ('[tool call get_weather({"city":"Porto"})]', "assistant", when),
            ("18 C and sunny; free 10-12.", "assistant", when)]


def test_a_list_of_anthropic_messages_keeps_hippos_own_keys(tmp_path, capsys) -> None:
    """Anthropic's API answers a Message whose ``type`` is ``message``, as a Responses API message's is: a list of
    them, with hippo's own keys on the messages (a speaker's ``name``, a ``timestamp``, a ``session_id``), keeps them
    as an OpenAI-style list does."""
    messages = [
        {"role": "user", "content": "What's the capital of Portugal?", "name": "Ann",
         "timestamp": "2025-03-08T10:00:00+00:00", "session_id": "trip"},
        {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
         "content": [{"type": "text", "text": "Lisbon."}], "stop_reason": "end_turn", "stop_sequence": None,
         "usage": {"input_tokens": 12, "output_tokens": 4}, "timestamp": "2025-03-08T10:00:02+00:00",
         "session_id": "trip"},
    ]
    f = tmp_path / "anthropic.json"
    f.write_text(json.dumps(messages), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "What's the capital of Portugal?", "speaker": "Ann", "role": "user",
         "timestamp": utc(2025, 3, 8, 10), "session_id": "trip", "metadata": {}},
        {"text": "Lisbon.", "speaker": None, "role": "assistant", "timestamp": utc(2025, 3, 8, 10, 0, 2),
         "session_id": "trip", "metadata": {}},
    ]


@pytest.mark.parametrize("bad, needles", [
    ({"type": "function_call", "call_id": "c", "arguments": "{}"}, ["[1]", "'name'"]),
    ({"type": "function_call", "name": "f", "arguments": "{}"}, ["[1]", "'call_id'"]),
    ({"type": "function_call_output", "call_id": "c", "output": 5}, ["[1]", "'output'"]),
    ({"type": "function_call_output", "call_id": "c"}, ["[1]", "'output'"]),
    ({"type": "message", "role": "tool", "content": "x"}, ["[1]", "'role'"]),
    ({"type": "message", "role": "user", "content": [{"type": "input_text", "text": 3}]}, ["[1]", "content[0].text"]),
    ({"type": "banana_split", "id": "b"}, ["[1]", "'type'", "banana_split"]),
])
def test_a_bad_responses_item_is_refused_naming_the_field(tmp_path, capsys, bad, needles) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps([RESPONSES_ITEMS[3], bad]), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "bad.json:", *needles)
    f = jsonl(tmp_path / "bad.jsonl", [RESPONSES_ITEMS[3], bad])
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "bad.jsonl:2",
                          *(n for n in needles[1:] if n != "banana_split"))  # a line of no known kind: its fields
    assert namespaces(tmp_path / "b.db") == []


# --------------------------------------------------------------------------------------------------- Claude Code

SESSION = "4f35e220-c435-4cf7-b9b9-f40426042847"


def cc_line(kind: str, uuid: str, parent: str | None, when: str, message: dict, **extra) -> dict:
    """A line of a Claude Code transcript (~/.claude/projects/<project>/<session>.jsonl) with the fields its user and
    assistant lines carry."""
    return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/ann/app",
            "sessionId": SESSION, "version": "1.0.3", "gitBranch": "main", "type": kind, "message": message,
            "uuid": uuid, "timestamp": when, **extra}


def assistant(mid: str, *blocks: dict) -> dict:
    return {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
            "content": list(blocks), "stop_reason": None, "usage": {"input_tokens": 4, "output_tokens": 9}}


def claude_code_transcript() -> list[dict]:
    return [
        {"type": "permission-mode", "permissionMode": "default"},
        {"type": "summary", "summary": "Adding a config file", "leafUuid": "u7"},
        {"type": "last-prompt", "lastPrompt": "Please add a config file"},
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {"trackedFileBackups": {}},
         "isSnapshotUpdate": False},
        cc_line("user", "u0", None, "2025-05-26T07:27:39.000Z",
                {"role": "user", "content": "Caveat: The messages below were generated by the user while running "
                                            "local commands."}, isMeta=True),
        cc_line("user", "u1", "u0", "2025-05-26T07:27:40.079Z",
                {"role": "user", "content": "Please add a config file"}),
        cc_line("assistant", "u2", "u1", "2025-05-26T07:27:43.100Z",
                assistant("msg_01", {"type": "thinking", "thinking": "Look first.", "signature": "Eq0"}),
                requestId="req_01"),
        # an empty text block, which Claude Code writes as an endpoint streams it
        cc_line("assistant", "u2e", "u2", "2025-05-26T07:27:43.200Z", assistant("msg_01", {"type": "text", "text": ""}),
                requestId="req_01"),
        cc_line("assistant", "u3", "u2e", "2025-05-26T07:27:43.900Z",
                assistant("msg_01", {"type": "text", "text": "I'll look at the project first."}), requestId="req_01"),
        cc_line("assistant", "u4", "u3", "2025-05-26T07:27:44.500Z",
                assistant("msg_01", {"type": "tool_use", "id": "toolu_01", "name": "LS",
                                     "input": {"path": "/home/ann/app"}}), requestId="req_01"),
        cc_line("user", "u5", "u4", "2025-05-26T07:27:44.800Z",
                {"role": "user", "content": [{"tool_use_id": "toolu_01", "type": "tool_result",
                                              "content": "- /home/ann/app/\n  - main.py\n"}]},
                toolUseResult="- /home/ann/app/\n  - main.py\n"),
        {"parentUuid": "u5", "isSidechain": False, "type": "system", "subtype": "informational",
         "content": "Running PostToolUse hooks", "level": "info", "uuid": "u5s", "sessionId": SESSION,
         "timestamp": "2025-05-26T07:27:44.900Z"},
        cc_line("user", "u6", "u5", "2025-05-26T07:27:45.000Z",
                {"role": "user", "content": [{"type": "text", "text": "Look for yaml files"}]}, isSidechain=True),
        cc_line("assistant", "u7", "u6", "2025-05-26T07:27:47.250+00:00",
                assistant("msg_02", {"type": "text", "text": "Created config.yaml."})),
    ]


CLAUDE_CODE_EXPECTED = [
    {"text": "Please add a config file", "speaker": None, "role": "user",
     "timestamp": "2025-05-26T07:27:40.079000+00:00", "session_id": SESSION, "metadata": {}},
    {"text": "I'll look at the project first.", "speaker": None, "role": "assistant",
     "timestamp": "2025-05-26T07:27:43.900000+00:00", "session_id": SESSION, "metadata": {}},
    {"text": '[tool call LS({"path": "/home/ann/app"})]', "speaker": None, "role": "assistant",
     "timestamp": "2025-05-26T07:27:44.500000+00:00", "session_id": SESSION, "metadata": {}},
    {"text": "- /home/ann/app/\n  - main.py\n", "speaker": None, "role": "tool",
     "timestamp": "2025-05-26T07:27:44.800000+00:00", "session_id": SESSION, "metadata": {"tool_call_id": "toolu_01"}},
    {"text": "Look for yaml files", "speaker": None, "role": "user", "timestamp": utc(2025, 5, 26, 7, 27, 45),
     "session_id": SESSION, "metadata": {"sidechain": True}},
    {"text": "Created config.yaml.", "speaker": None, "role": "assistant",
     "timestamp": "2025-05-26T07:27:47.250000+00:00", "session_id": SESSION, "metadata": {}},
]


def test_claude_code_transcript(tmp_path, capsys) -> None:
    """A Claude Code session transcript was refused at its first line ("unknown field(s) ['leafUuid', 'summary',
    'type']"), and then at a line of Claude Code's own of a kind without a session or uuid (``permission-mode``,
    ``last-prompt``) or at an assistant line of an empty text block ("field 'content' is empty"). Its prompts, answers, tool calls and tool results are now messages with their time and session; the
    lines Claude Code writes for itself, the meta lines and the thinking are left out; a sub-agent's lines are kept
    and marked."""
    f = jsonl(tmp_path / f"{SESSION}.jsonl", claude_code_transcript())
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert "default: 6 messages" in run.out
    assert stored(db) == CLAUDE_CODE_EXPECTED
    idents = [i for i, _ in ids(db)]
    assert None not in idents and len(set(idents)) == 6
    # the times are instants: --timezone is for chat apps' wall clocks
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "z.db", "--timezone", "Europe/Lisbon"),
                          "--timezone", "claude-code")


def test_a_resumed_claude_code_session_stores_the_lines_it_repeats_once(tmp_path, capsys) -> None:
    """A session resumed into a new file repeats the lines before (their uuids, a new session id): ingested after
    the first file, only the new lines are stored."""
    lines = claude_code_transcript()
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", jsonl(tmp_path / "a.jsonl", lines), "--path", db).code == 0
    resumed = [dict(line, sessionId="b0c1") if "sessionId" in line else line for line in lines] + [
        dict(cc_line("user", "u8", "u7", "2025-05-27T09:00:00Z", {"role": "user", "content": "Thanks!"}),
             sessionId="b0c1")]
    run = cli(capsys, "ingest", jsonl(tmp_path / "b.jsonl", resumed), "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == CLAUDE_CODE_EXPECTED + [
        {"text": "Thanks!", "speaker": None, "role": "user", "timestamp": utc(2025, 5, 27, 9), "session_id": "b0c1",
         "metadata": {}}]


@pytest.mark.parametrize("change, needles", [
    ({"message": None}, ["'message'"]),
    ({"message": {"role": "assistant", "content": "x"}}, ["'message.role'"]),
    ({"message": {"role": "user", "content": 5}}, ["'message.content'"]),
    ({"message": {"role": "user", "content": [{"type": "text", "text": 5}]}}, ["message", "content[0].text"]),
    ({"timestamp": "yesterday"}, ["'timestamp'"]),
    ({"timestamp": None}, ["'timestamp'"]),
    ({"sessionId": 7}, ["'sessionId'"]),
    ({"isMeta": "yes"}, ["'isMeta'"]),
    ({"type": 5}, ["'type'"]),
])
def test_a_bad_claude_code_line_is_refused_naming_the_field(tmp_path, capsys, change, needles) -> None:
    lines = claude_code_transcript()
    assert lines[5]["uuid"] == "u1"
    lines[5] = {**lines[5], **change}
    f = jsonl(tmp_path / "bad.jsonl", lines)
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "bad.jsonl:6", *needles)
    assert namespaces(tmp_path / "b.db") == []


# --------------------------------------------------------------------------------------------------- LangChain


def langchain_messages() -> list:
    messages = pytest.importorskip("langchain_core.messages", reason="langchain-core (the langchain extra) is not "
                                                                     "installed")
    return [
        messages.SystemMessage("Be brief."),
        messages.HumanMessage("Weather in Porto?", name="Maya", id="h1"),
        messages.AIMessage("", id="run-1", tool_calls=[{"name": "get_weather", "args": {"city": "Porto é"},
                                                        "id": "call_1"}]),
        messages.ToolMessage("18 C, sunny", tool_call_id="call_1"),
        messages.AIMessage([{"type": "text", "text": "18 C and sunny."}], id="run-2"),
        messages.ChatMessage("Noted.", role="developer"),
        # as ChatAnthropic answers: the call a block of its content and in tool_calls
        messages.AIMessage([{"type": "text", "text": "Checking."},
                            {"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}}],
                           tool_calls=[{"name": "get_time", "args": {}, "id": "toolu_1"}]),
    ]


LANGCHAIN_EXPECTED = [
    {"text": "Be brief.", "speaker": None, "role": "system", "timestamp": None, "session_id": None, "metadata": {}},
    {"text": "Weather in Porto?", "speaker": "Maya", "role": "user", "timestamp": None, "session_id": None,
     "metadata": {}},
    {"text": '[tool call get_weather({"city": "Porto é"})]', "speaker": None, "role": "assistant", "timestamp": None,
     "session_id": None, "metadata": {"tool_calls": [{"id": "call_1", "type": "function", "function": {
         "name": "get_weather", "arguments": '{"city": "Porto é"}'}}]}},
    {"text": "18 C, sunny", "speaker": None, "role": "tool", "timestamp": None, "session_id": None,
     "metadata": {"tool_call_id": "call_1"}},
    {"text": "18 C and sunny.", "speaker": None, "role": "assistant", "timestamp": None, "session_id": None,
     "metadata": {}},
    {"text": "Noted.", "speaker": None, "role": "system", "timestamp": None, "session_id": None, "metadata": {}},
    {"text": "Checking.\n[tool call get_time({})]", "speaker": None, "role": "assistant", "timestamp": None,
     "session_id": None, "metadata": {"tool_calls": [{"id": "toolu_1", "type": "function", "function": {
         "name": "get_time", "arguments": "{}"}}]}},
]


def test_langchain_messages_to_dict_and_dumpd(tmp_path, capsys) -> None:
    """LangChain's dumps of messages (``messages_to_dict``, ``dumpd``) were refused as "not a message". Each is read as
    the same messages given to LangChain's own ``convert_to_openai_messages`` and ingested as OpenAI messages."""
    msgs = langchain_messages()
    from langchain_core.load import dumpd
    from langchain_core.messages import convert_to_openai_messages, messages_to_dict

    reference = tmp_path / "openai.json"
    reference.write_text(json.dumps(convert_to_openai_messages(msgs)), encoding="utf-8")
    assert cli(capsys, "ingest", reference, "--path", tmp_path / "ref.db").code == 0
    assert stored(tmp_path / "ref.db") == LANGCHAIN_EXPECTED
    for name, data, write in (("dict.json", messages_to_dict(msgs), json.dumps),
                              ("dumpd.json", [dumpd(m) for m in msgs], json.dumps),
                              # a LangGraph state's messages, the state as dumpd writes it
                              ("state.json", dumpd({"messages": msgs}), json.dumps),
                              ("dict.jsonl", messages_to_dict(msgs), None)):
        f = tmp_path / name
        if write is None:
            jsonl(f, data)
        else:
            f.write_text(write(data), encoding="utf-8")
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db)
        assert run.code == 0, (name, run.err)
        assert stored(db) == LANGCHAIN_EXPECTED, name
        # the messages LangChain gave an id have their identity; the others none
        assert [i is not None for i, _ in ids(db)] == [False, True, True, False, True, False, False], name
        run = cli(capsys, "ingest", f, "--path", db)  # again: nothing added
        assert run.code == 0 and len(stored(db)) == 7, name


def test_a_langchain_message_of_the_same_id_replaced_keeps_none_of_the_earlier_tool_calls(tmp_path, capsys) -> None:
    """A message of an id stored before with other words replaces it, and the metadata a user set on the earlier one
    goes with it; its tool calls, which the file wrote, were carried too, and the new words came with calls they
    never made."""
    first = tmp_path / "a.json"
    first.write_text(json.dumps([{"type": "ai", "data": {"content": "", "id": "run-1", "tool_calls": [
        {"name": "get_time", "args": {}, "id": "call_9", "type": "tool_call"}]}}]), encoding="utf-8")
    second = tmp_path / "b.json"
    second.write_text(json.dumps([{"type": "ai", "data": {"content": "It's noon.", "id": "run-1",
                                                          "tool_calls": []}}]), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", first, "--path", db).code == 0
    with hippo.Memory(db) as mem:
        mem.update(mem.list()[0].id, metadata={**mem.list()[0].metadata, "starred": True})
    assert cli(capsys, "ingest", second, "--path", db).code == 0
    assert [(m["text"], m["metadata"]) for m in stored(db)] == [("It's noon.", {"starred": True})]


def test_a_langchain_message_dumped_again_with_other_response_metadata_is_stored_once(tmp_path, capsys) -> None:
    """The same AI message (its id, its words) dumped once as it streamed and once with the provider's
    ``response_metadata`` filled in: another digest, no time to match it by; it is the stored message."""
    human = {"type": "human", "data": {"content": "When?", "id": "run-1-h"}}
    streamed = {"type": "ai", "data": {"content": "Tuesday.", "id": "run-1-a", "response_metadata": {}}}
    done = {"type": "ai", "data": {"content": "Tuesday.", "id": "run-1-a",
                                   "response_metadata": {"finish_reason": "stop", "model_name": "gpt-4o"},
                                   "usage_metadata": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}}
    more = {"type": "human", "data": {"content": "Thanks", "id": "run-2-h"}}
    two = [("When?", "user", None, {}), ("Tuesday.", "assistant", None, {})]
    three = [*two, ("Thanks", "user", None, {})]
    assert ingested_in_turn(tmp_path, capsys, [human, streamed], [human, done, more]) == [two, three, three, three] + [three] * 4


@pytest.mark.parametrize("bad, needles", [
    ({"type": "robot", "data": {"content": "x"}}, ["'type'", "robot"]),
    ({"type": "human", "data": {"content": 5}}, ["data.content"]),
    ({"type": "chat", "data": {"content": "x", "role": "boss"}}, ["data.role"]),
    ({"type": "ai", "data": {"content": "", "tool_calls": [{"args": {}}]}}, ["data.tool_calls[0].name"]),
    # a provider's block of the call beside a call whose id is no string
    ({"type": "ai", "data": {"content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                             "tool_calls": [{"name": "f", "args": {}, "id": ["t"]}]}}, ["data.tool_calls[0].id"]),
    ({"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "Foo"], "kwargs": {"content": "x"}},
     ["'id'", "Foo"]),
    ({"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"], "kwargs": None},
     ["'kwargs'"]),
])
def test_a_bad_langchain_message_is_refused_naming_the_field(tmp_path, capsys, bad, needles) -> None:
    good = {"type": "human", "data": {"content": "hi", "type": "human"}}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps([good, bad]), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "bad.json:", "[1]", *needles)
    assert namespaces(tmp_path / "b.db") == []


# --------------------------------------------------------------------------------------------------- LlamaIndex


def test_llamaindex_chat_messages(tmp_path, capsys) -> None:
    """LlamaIndex's ``ChatMessage.model_dump()`` keeps the text in ``blocks``: it was refused as "field 'content' is
    empty". Its text is now the text LlamaIndex's own ``ChatMessage.content`` gives, its media and tool calls a line
    each; a tool message's call id and name kept."""
    pytest.importorskip("llama_index.core", reason="llama-index-core (the llamaindex extra) is not installed")
    from llama_index.core.base.llms.types import ImageBlock, TextBlock, ThinkingBlock, ToolCallBlock
    from llama_index.core.llms import ChatMessage

    msgs = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", blocks=[TextBlock(text="Weather in Porto?"),
                                         ImageBlock(url="https://x.test/porto.png")]),
        ChatMessage(role="assistant", blocks=[ThinkingBlock(content="Call it."), TextBlock(text="Checking."),
                                              ToolCallBlock(tool_call_id="c1", tool_name="get_weather",
                                                            tool_kwargs={"city": "Porto"})]),
        ChatMessage(role="tool", content="18 C, sunny", additional_kwargs={"tool_call_id": "c1",
                                                                           "name": "get_weather"}),
        ChatMessage(role="chatbot", content="18 C and sunny."),
    ]
    dumped = [m.model_dump(mode="json") for m in msgs]
    for db in ingested_both_ways(tmp_path, capsys, "li", dumped):
        got = stored(db)
        assert [(m["text"], m["role"], m["speaker"], m["metadata"]) for m in got] == [
            ("Be brief.", "system", None, {}),
            ("Weather in Porto?\n[image: https://x.test/porto.png]", "user", None, {}),
            ('[thinking]\nChecking.\n[tool call get_weather({"city": "Porto"})]', "assistant", None,
             {"tool_calls": [{"id": "c1", "type": "function",
                              "function": {"name": "get_weather", "arguments": '{"city": "Porto"}'}}]}),
            ("18 C, sunny", "tool", "get_weather", {"tool_call_id": "c1"}),
            ("18 C and sunny.", "assistant", None, {}),
        ]
        # the words are LlamaIndex's own reading of the message
        for message, row in zip(msgs, got):
            assert ChatMessage.model_validate(message.model_dump(mode="json")).content in row["text"]
    bad = dumped[:1] + [{"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": 3}]}]
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "bad.json:", "[1]",
                          "blocks[0].text")
    bad[1] = {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": ["c1"], "tool_name": "f", "tool_kwargs": {}}]}
    f.write_text(json.dumps(bad), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "bad.json:", "[1]",
                          "blocks[0].tool_call_id")
    bad[1] = {"role": "boss", "additional_kwargs": {}, "blocks": []}
    f.write_text(json.dumps(bad), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "bad.json:", "[1]", "'role'")
    assert namespaces(tmp_path / "b.db") == []
