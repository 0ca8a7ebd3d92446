"""``hippo ingest`` of a person's history with an assistant: ChatGPT's data export and Claude.ai's, the zip each
hands over (``conversations.json`` beside the export's other files) or that file alone. Each shape the readers take
is written here by hand, and what is stored is checked field by field: speaker, role, time, session, text."""

from __future__ import annotations

import json
import os
import tracemalloc
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hippo.cli import sources
from tests.cli.conftest import assert_one_line_error, cli
from tests.cli.test_ingest import namespaces, stored

T = 1710230000.0  # 2024-03-12 07:53:20 UTC


def utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat()


def node(key: str, parent: str | None, role: str | None = None, content: dict | None = None, t: float | None = None,
         *, name: str | None = None, metadata: dict | None = None, recipient: str = "all") -> tuple[str, dict]:
    """A node of a ChatGPT conversation's ``mapping``, as the export writes it (its children filled in by
    :func:`conversation`)."""
    msg = None if role is None else {
        "id": key, "author": {"role": role, "name": name, "metadata": {}}, "create_time": t, "update_time": None,
        "content": content, "status": "finished_successfully", "end_turn": True, "weight": 1.0,
        "metadata": metadata or {}, "recipient": recipient, "channel": None}
    return key, {"id": key, "message": msg, "parent": parent, "children": []}


def conversation(cid: str, title: str | None, nodes: list[tuple[str, dict]], current: str | None,
                 create_time: float = T) -> dict:
    mapping = dict(nodes)
    for key, n in mapping.items():
        if n["parent"] is not None:
            mapping[n["parent"]]["children"].append(key)
    return {"title": title, "create_time": create_time, "update_time": create_time + 600, "mapping": mapping,
            "moderation_results": [], "current_node": current, "plugin_ids": None, "conversation_id": cid,
            "conversation_template_id": None, "gizmo_id": None, "is_archived": False, "safe_urls": [], "id": cid}


def text(*parts: object) -> dict:
    return {"content_type": "text", "parts": list(parts)}


def porto() -> dict:
    """A conversation with what a ChatGPT export holds besides words: the hidden system message and custom
    instructions, a regenerated answer (two branches), the model's reasoning, an image, code run by the python tool
    and its output, a file attached."""
    return conversation("c-porto", "Trip to Porto", [
        node("root", None),
        node("sys", "root", "system", text(""), None, metadata={"is_visually_hidden_from_conversation": True}),
        node("ctx", "sys", "user", {"content_type": "user_editable_context", "user_profile": "I am Ann.",
                                    "user_instructions": "Be brief."}, None,
             metadata={"is_visually_hidden_from_conversation": True, "user_context_message_data": {}}),
        node("u1", "ctx", "user", text("Plan two days in Porto"), T + 1.25),
        node("a1-old", "u1", "assistant", text("An answer regenerated since"), T + 5),
        node("th", "u1", "assistant", {"content_type": "thoughts", "thoughts": [{"summary": "Days", "content": "x"}],
                                       "source_analysis_msg_id": "z"}, T + 6),
        node("rr", "th", "assistant", {"content_type": "reasoning_recap", "content": "Thought for 4s"}, T + 8),
        node("a1", "rr", "assistant", text("Day 1: Ribeira.", "Day 2: Foz."), T + 9,
             metadata={"model_slug": "gpt-4o", "finish_details": {"type": "stop"}}),
        node("u2", "a1", "user", {"content_type": "multimodal_text", "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-1", "width": 8},
            "What bridge is this?"]}, T + 100, metadata={"attachments": [{"id": "file-1", "name": "bridge.jpg"}]}),
        node("code", "u2", "assistant", {"content_type": "code", "language": "unknown", "text": "print(1 + 1)"}, T + 101,
             recipient="python"),
        node("out", "code", "tool", {"content_type": "execution_output", "text": "2"}, T + 102, name="python"),
        node("a2", "out", "assistant", text("The Dom Luís I bridge."), None, metadata={"model_slug": "gpt-4o"}),
    ], "a2")


def chatgpt_zip(path: Path, conversations: list[dict]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("conversations.json", json.dumps(conversations))
        z.writestr("user.json", json.dumps({"id": "user-1", "email": "ann@example.com"}))
        z.writestr("message_feedback.json", "[]")
        z.writestr("shared_conversations.json", "[]")
        z.writestr("chat.html", "<html></html>")
        z.writestr("file-1-bridge.jpg", b"\xff\xd8")
    return path


PORTO = [
    {"text": "Plan two days in Porto", "speaker": None, "role": "user", "timestamp": utc(T + 1.25),
     "session_id": "c-porto", "metadata": {"title": "Trip to Porto", "chatgpt_id": "u1"}},
    {"text": "Day 1: Ribeira.\nDay 2: Foz.", "speaker": None, "role": "assistant", "timestamp": utc(T + 9),
     "session_id": "c-porto", "metadata": {"title": "Trip to Porto", "chatgpt_id": "a1", "model": "gpt-4o"}},
    {"text": "[image]\nWhat bridge is this?", "speaker": None, "role": "user", "timestamp": utc(T + 100),
     "session_id": "c-porto", "metadata": {"title": "Trip to Porto", "chatgpt_id": "u2",
                                           "attachments": ["bridge.jpg"]}},
    {"text": "[tool call python(print(1 + 1))]", "speaker": None, "role": "assistant", "timestamp": utc(T + 101),
     "session_id": "c-porto", "metadata": {"title": "Trip to Porto", "chatgpt_id": "code"}},
    {"text": "2", "speaker": "python", "role": "tool", "timestamp": utc(T + 102), "session_id": "c-porto",
     "metadata": {"title": "Trip to Porto", "chatgpt_id": "out"}},
    # no create_time: the time of the message before it
    {"text": "The Dom Luís I bridge.", "speaker": None, "role": "assistant", "timestamp": utc(T + 102),
     "session_id": "c-porto", "metadata": {"title": "Trip to Porto", "chatgpt_id": "a2", "model": "gpt-4o"}},
]


def test_a_chatgpt_export_stores_the_branch_the_conversation_shows(tmp_path, capsys) -> None:
    """The zip ChatGPT hands over holds conversations.json beside user.json, message_feedback.json, chat.html and
    the images; it was refused as "a zip archive with several chat files". Each conversation is now read along the
    branch from its current_node back to its root (the regenerated answer left out), hidden messages and the
    model's reasoning left out, each message with its role, time and the conversation as session."""
    f = chatgpt_zip(tmp_path / "chatgpt-export.zip", [porto()])
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db, "-n", "ann")
    assert run.code == 0, run.err
    assert stored(db, "ann") == PORTO


def test_conversations_json_alone_and_one_conversation_alone(tmp_path, capsys) -> None:
    """The export's conversations.json unzipped, and one conversation as a JSON file of its own (on one line, as
    JSON is written, or indented), are read as the zip is."""
    whole = tmp_path / "conversations.json"
    whole.write_text(json.dumps([porto()]), encoding="utf-8")
    one = tmp_path / "one.json"
    one.write_text(json.dumps(porto()), encoding="utf-8")
    indented = tmp_path / "indented.json"
    indented.write_text(json.dumps(porto(), indent=2), encoding="utf-8")
    for k, f in enumerate((whole, one, indented)):
        db = tmp_path / f"{k}.db"
        assert cli(capsys, "ingest", f, "--path", db).code == 0
        assert stored(db) == PORTO


def test_chatgpt_conversations_share_one_time_line_and_split(tmp_path, capsys) -> None:
    """Several conversations: one time line (a conversation's own messages in their order), and ``--split`` a
    namespace per conversation, named by its title; two of one title told apart by their ids, one without a title
    by its id."""
    a = conversation("c-a", "New chat", [node("r", None), node("a1", "r", "user", text("first of a"), T),
                                         node("a2", "a1", "user", text("second of a"), T + 20)], "a2")
    b = conversation("c-b", "New chat", [node("r", None), node("b1", "r", "user", text("only of b"), T + 10)], "b1")
    c = conversation("c-c", None, [node("r", None), node("c1", "r", "user", text("untitled"), T + 30)], "c1")
    f = chatgpt_zip(tmp_path / "e.zip", [c, b, a])  # the export lists the newest first
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["text"], m["session_id"]) for m in stored(db)] == [
        ("first of a", "c-a"), ("only of b", "c-b"), ("second of a", "c-a"), ("untitled", "c-c")]
    split = tmp_path / "split.db"
    assert cli(capsys, "ingest", f, "--path", split, "-n", "gpt", "--split").code == 0
    assert namespaces(split) == ["gpt.New chat (c-a)", "gpt.New chat (c-b)", "gpt.conversation c-c"]
    assert [m["text"] for m in stored(split, "gpt.New chat (c-a)")] == ["first of a", "second of a"]
    assert stored(split, "gpt.conversation c-c")[0]["metadata"] == {"chatgpt_id": "c1"}


def test_a_chatgpt_export_ingested_again_stores_each_message_once(tmp_path, capsys) -> None:
    """The same export twice adds nothing; a later export, its conversation gone on (two more turns), a new
    conversation and the title renamed, adds the new messages only; a message of the same node whose words changed
    is stored once, in its new words."""
    db = tmp_path / "s.db"
    first = chatgpt_zip(tmp_path / "1.zip", [porto()])
    assert cli(capsys, "ingest", first, "--path", db).code == 0
    run = cli(capsys, "ingest", first, "--path", db)
    assert run.code == 0 and "nothing added" in run.out
    later = porto()
    later["title"] = "Porto in March"
    later["mapping"]["a1"]["message"]["content"] = text("Day 1: Ribeira and the bridge.", "Day 2: Foz.")
    later["mapping"].update([node("u3", "a2", "user", text("And a third day?"), T + 200),
                             node("a3", "u3", "assistant", text("Go to Guimarães."), T + 205)])
    later["mapping"]["a2"]["children"].append("u3")
    later["mapping"]["u3"]["children"].append("a3")
    later["current_node"] = "a3"
    other = conversation("c-new", "Soup", [node("r", None), node("s1", "r", "user", text("A soup recipe?"), T + 300)],
                         "s1")
    run = cli(capsys, "ingest", chatgpt_zip(tmp_path / "2.zip", [other, later]), "--path", db)
    assert run.code == 0, run.err
    got = stored(db)
    assert [m["text"] for m in got] == [
        "Plan two days in Porto", "[image]\nWhat bridge is this?", "[tool call python(print(1 + 1))]", "2",
        "The Dom Luís I bridge.", "Day 1: Ribeira and the bridge.\nDay 2: Foz.", "And a third day?",
        "Go to Guimarães.", "A soup recipe?"]
    assert [m["metadata"].get("chatgpt_id") for m in got].count("a1") == 1


def test_a_chatgpt_prompt_edited_after_an_import_is_a_new_branch(tmp_path, capsys) -> None:
    """Editing a prompt makes a new branch of new nodes: ingested again, the export's current branch adds the
    edited prompt and what follows it, and the messages stored from the branch shown before stay."""
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", chatgpt_zip(tmp_path / "1.zip", [porto()]), "--path", db).code == 0
    edited = porto()
    edited["mapping"].update([node("u2b", "a1", "user", text("Which bridge is the tallest?"), T + 400),
                              node("a2b", "u2b", "assistant", text("The Arrábida bridge."), T + 404)])
    edited["mapping"]["a1"]["children"].append("u2b")
    edited["mapping"]["u2b"]["children"].append("a2b")
    edited["current_node"] = "a2b"
    assert cli(capsys, "ingest", chatgpt_zip(tmp_path / "2.zip", [edited]), "--path", db).code == 0
    assert [m["text"] for m in stored(db)] == [m["text"] for m in PORTO] + [
        "Which bridge is the tallest?", "The Arrábida bridge."]


def claude_conversation() -> dict:
    """A Claude.ai conversation: a file attached with its extracted text, an answer with the model's thinking, a
    web search and its result, an image without words, and a prompt edited (two messages answering the first
    answer; the list's last message is on the branch shown)."""
    root = "00000000-0000-4000-8000-000000000000"

    def msg(uuid: str, parent: str, sender: str, at: str, content: list, **extra) -> dict:
        said = "\n".join(b["text"] for b in content if b.get("type") == "text")
        return {"uuid": uuid, "text": said, "content": content, "sender": sender, "created_at": at,
                "updated_at": at, "attachments": [], "files": [], "parent_message_uuid": parent, **extra}

    return {"uuid": "cl-1", "name": "Rust lifetimes", "summary": "", "created_at": "2024-03-12T09:00:00.000000Z",
            "updated_at": "2024-03-12T09:30:00.000000Z", "account": {"uuid": "acc-1"}, "chat_messages": [
        msg("m1", root, "human", "2024-03-12T09:00:01.500000Z",
            [{"type": "text", "text": "Why does this not compile?", "citations": []}],
            attachments=[{"file_name": "main.rs", "file_size": 12, "file_type": "rs",
                          "extracted_content": "fn main() {}"}]),
        msg("m2", "m1", "assistant", "2024-03-12T09:00:09.000000Z", [
            {"type": "thinking", "thinking": "The borrow checker..."},
            {"type": "text", "text": "The borrow ends too late."},
            {"type": "tool_use", "name": "web_search", "input": {"query": "non-lexical lifetimes"}},
            {"type": "tool_result", "name": "web_search", "content": [{"type": "text", "text": "NLL, explained"}],
             "is_error": False},
            {"type": "text", "text": "See NLL."}]),
        msg("m3-old", "m2", "human", "2024-03-12T09:01:00.000000Z", [{"type": "text", "text": "A prompt edited since"}]),
        msg("m4-old", "m3-old", "assistant", "2024-03-12T09:01:05.000000Z", [{"type": "text", "text": "Its answer"}]),
        msg("m3", "m2", "human", "2024-03-12T09:02:00+00:00", [],
            files=[{"file_name": "screenshot.png"}]),
        msg("m4", "m3", "assistant", "2024-03-12T09:02:07Z", [{"type": "text", "text": "The screenshot shows E0502."}]),
    ]}


CLAUDE = [
    {"text": "Why does this not compile?\n\n[file: main.rs]\nfn main() {}", "speaker": None, "role": "user",
     "timestamp": "2024-03-12T09:00:01.500000+00:00", "session_id": "cl-1",
     "metadata": {"title": "Rust lifetimes", "claude_id": "m1", "attachments": ["main.rs"]}},
    {"text": "The borrow ends too late.\n[tool call web_search({\"query\": \"non-lexical lifetimes\"})]\nNLL, "
             "explained\nSee NLL.", "speaker": None, "role": "assistant", "timestamp": "2024-03-12T09:00:09+00:00",
     "session_id": "cl-1", "metadata": {"title": "Rust lifetimes", "claude_id": "m2"}},
    {"text": "[file: screenshot.png]", "speaker": None, "role": "user", "timestamp": "2024-03-12T09:02:00+00:00",
     "session_id": "cl-1", "metadata": {"title": "Rust lifetimes", "claude_id": "m3",
                                        "attachments": ["screenshot.png"]}},
    {"text": "The screenshot shows E0502.", "speaker": None, "role": "assistant",
     "timestamp": "2024-03-12T09:02:07+00:00", "session_id": "cl-1",
     "metadata": {"title": "Rust lifetimes", "claude_id": "m4"}},
]


def claude_zip(path: Path, conversations: list[dict]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("conversations.json", json.dumps(conversations, indent=2))
        z.writestr("users.json", json.dumps([{"uuid": "acc-1", "full_name": "Ann"}]))
        z.writestr("projects.json", "[]")
    return path


def test_a_claude_export_stores_its_conversations(tmp_path, capsys) -> None:
    """Claude.ai's export zip (conversations.json beside users.json and projects.json) was refused as a zip of
    several chat files, and its conversations.json alone as "not a message". Each message is now stored with its
    role, time and conversation, the words of its content blocks (the model's thinking left out, a tool's use and
    result kept), the text extracted from its files, along the branch of the conversation's last message."""
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", claude_zip(tmp_path / "claude.zip", [claude_conversation()]), "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == CLAUDE
    again = cli(capsys, "ingest", claude_zip(tmp_path / "claude.zip", [claude_conversation()]), "--path", db)
    assert again.code == 0 and "nothing added" in again.out
    later = claude_conversation()
    later["chat_messages"].append({"uuid": "m5", "text": "Thanks!", "content": [], "sender": "human",
                                   "created_at": "2024-03-12T09:05:00Z", "parent_message_uuid": "m4"})
    assert cli(capsys, "ingest", claude_zip(tmp_path / "later.zip", [later]), "--path", db).code == 0
    assert [m["text"] for m in stored(db)] == [m["text"] for m in CLAUDE] + ["Thanks!"]


def test_a_claude_export_without_parents_is_read_in_its_order(tmp_path, capsys) -> None:
    """Exports written before messages named their parents: the list is the conversation."""
    conv = {"uuid": "cl-2", "name": "", "created_at": "2023-08-01T10:00:00Z", "updated_at": "2023-08-01T10:00:00Z",
            "chat_messages": [
                {"uuid": "x1", "text": "Hello", "sender": "human", "created_at": "2023-08-01T10:00:00Z",
                 "attachments": [], "files": []},
                {"uuid": "x2", "text": "Hi! How can I help?", "sender": "assistant",
                 "created_at": "2023-08-01T10:00:02Z", "attachments": [], "files": []}]}
    f = tmp_path / "conversations.json"
    f.write_text(json.dumps([conv]), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db, "-n", "cl", "--split").code == 0
    assert namespaces(db) == ["cl.conversation cl-2"]
    assert stored(db, "cl.conversation cl-2") == [
        {"text": "Hello", "speaker": None, "role": "user", "timestamp": "2023-08-01T10:00:00+00:00",
         "session_id": "cl-2", "metadata": {"claude_id": "x1"}},
        {"text": "Hi! How can I help?", "speaker": None, "role": "assistant",
         "timestamp": "2023-08-01T10:00:02+00:00", "session_id": "cl-2", "metadata": {"claude_id": "x2"}}]


@pytest.mark.parametrize("change, needles", [
    (lambda c: c.update(current_node="nowhere"), ["'current_node'", "nowhere", "[0]"]),
    (lambda c: c["mapping"]["u1"]["message"]["author"].update(role="robot"), ["author.role", "robot"]),
    (lambda c: c["mapping"]["u1"]["message"].update(create_time="yesterday"), ["create_time", "[0].mapping.u1"]),
    (lambda c: c["mapping"]["u1"].update(parent="lost"), ["parent", "lost"]),
    (lambda c: c.update(mapping=[]), ["'mapping'", "a list"]),
    (lambda c: c["mapping"]["u1"]["message"].update(content="words"), ["'content'", "a string"]),
    (lambda c: c["mapping"]["u1"]["message"]["content"].update(content_type=["text"]), ["content_type", "a list"]),
])
def test_a_bad_chatgpt_conversation_is_refused_naming_it(tmp_path, capsys, change, needles) -> None:
    conv = porto()
    change(conv)
    f = tmp_path / "conversations.json"
    f.write_text(json.dumps([conv], indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert_one_line_error(run, "conversations.json:", *needles)
    assert not db.exists()


@pytest.mark.parametrize("change, needles", [
    (lambda c: c["chat_messages"][0].update(sender="user"), ["'sender'", "'user'"]),
    (lambda c: c["chat_messages"][1].update(created_at=None), ["created_at", "chat_messages[1]"]),
    (lambda c: c["chat_messages"][1].update(content={"type": "text"}), ["'content'"]),
    (lambda c: c.update(chat_messages=None), ["'chat_messages'"]),
])
def test_a_bad_claude_conversation_is_refused_naming_it(tmp_path, capsys, change, needles) -> None:
    conv = claude_conversation()
    change(conv)
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", claude_zip(tmp_path / "claude.zip", [conv]), "--path", db)
    assert_one_line_error(run, "claude.zip (conversations.json)", *needles)
    assert not db.exists()


def test_a_broken_conversations_json_names_its_line(tmp_path, capsys) -> None:
    f = tmp_path / "conversations.json"
    good = json.dumps(porto())
    bad = good.replace('"title": ', '"title" ', 1)
    column = bad.index('"title" ') + len('"title" ') + 1
    f.write_text("[\n" + good + ",\n" + bad + "\n]\n", encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", tmp_path / "s.db")
    assert_one_line_error(run, "conversations.json:3:", "not valid JSON", f"column {column}")
    f.write_text("[\n" + good + ",\n" + good + "\n]\n]", encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "s.db"), "conversations.json:5:", "extra data")


def test_a_large_export_is_read_a_conversation_at_a_time(tmp_path) -> None:
    """A conversations.json is read one conversation after another: besides its text and the messages read from it,
    what reading holds is one conversation, not the whole document as Python objects (which json.loads makes
    several times the size of the text)."""
    convs = []
    for c in range(60):
        nodes = [node("r", None)]
        for i in range(20):
            nodes.append(node(f"{c}-{i}", nodes[-1][0], "user" if i % 2 == 0 else "assistant",
                              text(f"message {i} of {c} " + "words " * 300), T + c * 100 + i,
                              metadata={"citations": [], "content_references": [{"x": "y" * 40}] * 30}))
        convs.append(conversation(f"c{c}", f"chat {c}", nodes, nodes[-1][0]))
    f = tmp_path / "conversations.json"
    f.write_text(json.dumps(convs), encoding="utf-8")
    size = f.stat().st_size
    tracemalloc.start()
    try:
        src = sources.read_source(str(f))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(src.records) == 60 * 20
    # the file's text (held for error positions) and the records, plus one conversation's objects at a time
    assert peak - held < size, (peak, held, size)  # the whole document as objects: 3.5 times the size


def test_a_large_chatgpt_export_cut_into_several_files(tmp_path, capsys) -> None:
    """A large export is cut into conversations-000.json, conversations-001.json, ... (each a list of
    conversations), possibly inside a folder of the zip: read in their order as one file; an error names the file
    inside the archive."""
    a = conversation("c-a", "A", [node("r", None), node("a1", "r", "user", text("in the first file"), T + 10)], "a1")
    b = conversation("c-b", "B", [node("r", None), node("b1", "r", "user", text("in the second file"), T)], "b1")
    f = tmp_path / "export.zip"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("export/conversations-001.json", json.dumps([b]))
        z.writestr("export/conversations-000.json", json.dumps([a]))
        z.writestr("export/user.json", "{}")
        z.writestr("__MACOSX/export/._conversations-000.json", "junk")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db, "-n", "gpt", "--split").code == 0
    assert namespaces(db) == ["gpt.A", "gpt.B"]
    assert [(m["text"], m["timestamp"]) for m in stored(db, "gpt.B")] == [("in the second file", utc(T))]
    b["mapping"]["b1"]["message"]["author"]["role"] = "robot"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("conversations-000.json", json.dumps([a]))
        z.writestr("conversations-001.json", json.dumps([b], indent=1))
    run = cli(capsys, "ingest", f, "--path", tmp_path / "bad.db")
    assert_one_line_error(run, "export.zip (conversations-001.json):", "[0].mapping.b1.message", "'robot'")


def test_timezone_gives_an_assistant_exports_instants_the_zones_calendar(tmp_path, capsys) -> None:
    """ChatGPT's and Claude.ai's times are instants: --timezone keeps each instant and gives it the zone's offset of
    its day, as it does a Slack or Discord export's."""
    db = tmp_path / "s.db"
    f = chatgpt_zip(tmp_path / "e.zip", [porto()])
    assert cli(capsys, "ingest", f, "--path", db, "--timezone", "America/New_York").code == 0
    got = stored(db)
    assert got[0]["timestamp"] == "2024-03-12T03:53:21.250000-04:00"
    assert [datetime.fromisoformat(m["timestamp"]) for m in got] == [
        datetime.fromisoformat(m["timestamp"]) for m in PORTO]


def test_a_claude_tool_result_of_any_blocks_keeps_their_words(tmp_path, capsys) -> None:
    """A tool's result in a Claude.ai export holds what the tool gave back: pages a web search found (a title, a
    link, words, under a type of the app's own or none), images. Such blocks were refused as content parts without a
    'type', and with them the whole export; their titles and words are now kept, the rest left out."""
    conv = claude_conversation()
    conv["chat_messages"][1]["content"][3]["content"] = [
        {"type": "knowledge", "title": "NLL", "url": "https://x.test/nll", "text": "Borrows end at last use."},
        {"title": "Rust book", "url": "https://x.test/book"},
        {"type": "image", "source": {"type": "base64", "data": "AAAA"}}]
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", claude_zip(tmp_path / "c.zip", [conv]), "--path", db).code == 0
    assert stored(db)[1]["text"] == ("The borrow ends too late.\n[tool call web_search({\"query\": \"non-lexical "
                                     "lifetimes\"})]\nNLL\nBorrows end at last use.\nRust book\nSee NLL.")


def test_a_claude_conversation_shows_the_branch_of_its_latest_message(tmp_path, capsys) -> None:
    """The export does not say which branch a conversation shows: the branch stored is that of its latest message,
    the one written last, wherever the list puts it (here before a message of the branch left earlier)."""
    conv = claude_conversation()
    msgs = conv["chat_messages"]
    msgs[2:] = [msgs[4], msgs[5], msgs[2], msgs[3]]  # the branch left, written earlier, listed last
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", claude_zip(tmp_path / "c.zip", [conv]), "--path", db).code == 0
    assert stored(db) == CLAUDE


def test_the_images_of_an_export_zip_are_not_read(tmp_path, capsys) -> None:
    """ChatGPT's zip holds every image uploaded or made in its conversations (gigabytes, beside a conversations.json
    of megabytes), and the whole archive was read into memory to find conversations.json. It is now opened where
    it lies: reading it holds conversations.json and its messages, not the images."""
    f = tmp_path / "export.zip"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("conversations.json", json.dumps([porto()]))
        z.writestr("user.json", "{}")
        for k in range(8):
            z.writestr(f"file-{k}-image.png", os.urandom(4 << 20))
    for opened in (False, True):
        tracemalloc.start()
        try:
            if opened:
                with sources.open_source(str(f)) as src:
                    _, peak = tracemalloc.get_traced_memory()
            else:
                src = sources.read_source(str(f))
                _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(src.records) == len(PORTO)
        assert peak < 4 << 20, peak  # less than one of the images
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert stored(db) == PORTO


def test_a_claude_message_whose_blocks_have_no_words_is_its_text(tmp_path, capsys) -> None:
    """A message whose content blocks hold no words (the model's thinking alone, a text block left empty) while its
    'text' holds them was left out as a message without words; it is now its text."""
    conv = claude_conversation()
    conv["chat_messages"][5]["content"] = [{"type": "thinking", "thinking": "E0502 again"},
                                           {"type": "text", "text": ""}]
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", claude_zip(tmp_path / "c.zip", [conv]), "--path", db).code == 0
    assert stored(db) == CLAUDE
