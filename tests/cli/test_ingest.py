"""``hippo ingest`` / ``import`` / ``export``: every input format against hand-written expectations, all-or-nothing
per file, retries that do not duplicate, encodings, nesting, and errors that name file, line and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import datetime, timezone, tzinfo
from pathlib import Path

import pytest

import hippo
from hippo import StoreError
from hippo.cli.sources import READ_KEYS
from tests.cli.conftest import assert_one_line_error, cli, hippo_cmd, hippo_tty

BEAM = Path(__file__).resolve().parents[3] / "shared" / "data" / "beam100k"


def stored(path: Path, namespace: str = "default", *, digests: bool = False) -> list[dict]:
    """The namespace's messages as plain dicts (the fields an ingest sets); a chat app message's source digest and
    identity (``metadata["source_digest"]``, ``metadata["source_id"]``, which their own tests check) left out unless
    ``digests``."""
    with hippo.Memory(path, namespace=namespace) as mem:
        return [{"text": m.text, "speaker": m.speaker, "role": m.role,
                 "timestamp": m.timestamp.isoformat() if m.timestamp else None, "session_id": m.session_id,
                 "metadata": m.metadata if digests else {k: v for k, v in m.metadata.items()
                                                         if k not in ("source_digest", "source_id")}}
                for m in mem.list()]


def namespaces(path: Path) -> list[str]:
    if not path.exists():
        return []
    with hippo.Memory(path) as mem:
        return mem.namespaces()


def utc(*args: int) -> str:
    return datetime(*args, tzinfo=timezone.utc).isoformat()


# --------------------------------------------------------------------------------------------------- formats


def test_jsonl_of_hippo_messages_and_openai_lines(tmp_path, capsys) -> None:
    f = tmp_path / "mixed.jsonl"
    f.write_text("\n".join([
        json.dumps({"text": "I adopted a greyhound.", "speaker": "Maya", "timestamp": "2024-05-01T10:00:00",
                    "session_id": "s1", "metadata": {"mood": "happy"}}),
        "",
        json.dumps({"role": "assistant", "content": "Congratulations on the greyhound!"}),
        json.dumps({"role": "user", "content": [{"type": "text", "text": "Her name is Juno."},
                                                {"type": "image_url", "image_url": {"url": "https://x.test/j.png"}}],
                    "name": "Maya"}),
    ]) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert "default: 3 messages" in run.out
    assert stored(db) == [
        {"text": "I adopted a greyhound.", "speaker": "Maya", "role": "user", "timestamp": utc(2024, 5, 1, 10),
         "session_id": "s1", "metadata": {"mood": "happy"}},
        {"text": "Congratulations on the greyhound!", "speaker": None, "role": "assistant", "timestamp": None,
         "session_id": None, "metadata": {}},
        {"text": "Her name is Juno.\n[image: https://x.test/j.png]", "speaker": "Maya", "role": "user",
         "timestamp": None, "session_id": None, "metadata": {}},
    ]


def test_anthropic_content_blocks_keep_the_tools_calls_and_outputs(tmp_path, capsys) -> None:
    """Anthropic's messages API writes a tool call as a ``tool_use`` block of an assistant message and the tool's
    output as a ``tool_result`` block of a user message. Both used to be stored as a bare marker (``[tool_use]``,
    ``[tool_result]``), the output's text lost. The call is now the line an OpenAI tool call gives, the output its
    text, in a message of role ``tool`` as OpenAI's tool message is."""
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "What's the weather in Porto?"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should call the tool.", "signature": "x"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Porto"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                      "content": [{"type": "text", "text": "18 C, sunny"}]}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_02", "content": "ok"},
            {"type": "text", "text": "And this photo?"},
            {"type": "image", "source": {"type": "url", "url": "https://x.test/p.png"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]},
    ]
    f = tmp_path / "claude.json"
    f.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert [(m["text"], m["role"], m["metadata"]) for m in stored(db)] == [
        ("What's the weather in Porto?", "user", {}),
        ('[thinking]\nLet me check.\n[tool call get_weather({"city": "Porto"})]', "assistant", {}),
        ("18 C, sunny", "tool", {"tool_call_id": "toolu_01"}),
        ("ok\nAnd this photo?\n[image: https://x.test/p.png]\n[image]", "user", {}),
    ]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": 3}]}]}]}), encoding="utf-8")
    run = cli(capsys, "ingest", bad, "--path", tmp_path / "t.db")
    assert run.code != 0 and "content[0].content[0].text" in run.err, run.err


def test_openai_message_list_and_messages_object(tmp_path, capsys) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Porto"}'}}
    messages = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Weather in Porto?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "18 C and sunny."}]},
    ]
    expected = [
        {"text": "Be brief.", "speaker": None, "role": "system", "timestamp": None, "session_id": "chat-7",
         "metadata": {}},
        {"text": "Weather in Porto?", "speaker": None, "role": "user", "timestamp": None, "session_id": "chat-7",
         "metadata": {}},
        {"text": '[tool call get_weather({"city": "Porto"})]', "speaker": None, "role": "assistant",
         "timestamp": None, "session_id": "chat-7", "metadata": {"tool_calls": [call]}},
        {"text": "18 C, sunny", "speaker": None, "role": "tool", "timestamp": None, "session_id": "chat-7",
         "metadata": {"tool_call_id": "call_1"}},
        {"text": "18 C and sunny.", "speaker": None, "role": "assistant", "timestamp": None, "session_id": "chat-7",
         "metadata": {}},
    ]
    as_list, as_object = tmp_path / "list.json", tmp_path / "object.json"
    as_list.write_text(json.dumps(messages, indent=2), encoding="utf-8")
    as_object.write_text(json.dumps({"model": "x", "messages": messages}), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", as_list, "--path", db, "-n", "a", "--session", "chat-7").code == 0
    assert cli(capsys, "ingest", as_object, "--path", db, "-n", "b", "--session", "chat-7").code == 0
    assert stored(db, "a") == expected
    assert stored(db, "b") == expected


def beam_chat() -> list[dict]:
    """A synthetic conversation in BEAM's chat.json layout (two batches, anchors on batch and message)."""
    return [
        {"batch_number": 1, "time_anchor": "March-15-2024", "turns": [
            [{"role": "user", "id": 0, "content": "Plan my thesis schedule.", "index": "1,1",
              "question_type": "main_question"},
             {"role": "assistant", "id": 1, "content": "Start with the literature review."}],
            [{"role": "user", "id": 2, "content": "The defence is on June 3.", "time_anchor": "April-02-2024"},
             {"role": "assistant", "id": 3, "content": "Then draft chapter two by May."}],
        ]},
        {"batch_number": 2, "time_anchor": None, "turns": [
            [{"role": "user", "id": 4, "content": "Chapter two is done."},
             {"role": "assistant", "id": 5, "content": "Well done; now the experiments."}],
        ]},
    ]


def beam_reference(chat: list[dict]) -> list[dict]:
    """The BEAM evidence measure's ingestion rule (shared/data/README.md), written out independently."""
    out, latest = [], None
    for batch in chat:
        if batch.get("time_anchor"):
            latest = datetime.strptime(batch["time_anchor"], "%B-%d-%Y").replace(tzinfo=timezone.utc)
        for turn in batch["turns"]:
            for msg in turn:
                if msg.get("time_anchor"):
                    latest = datetime.strptime(msg["time_anchor"], "%B-%d-%Y").replace(tzinfo=timezone.utc)
                out.append({"text": msg["content"], "speaker": msg["role"], "role": msg["role"],
                            "timestamp": latest.isoformat() if latest else None,
                            "session_id": f"batch-{batch['batch_number']}", "metadata": {"chat_id": msg["id"]}})
    return out


def test_beam_chat_json(tmp_path, capsys) -> None:
    chat = beam_chat()
    f = tmp_path / "chat.json"
    f.write_text(json.dumps(chat, indent=2), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    got = stored(db)
    assert got == beam_reference(chat)
    assert [m["timestamp"] for m in got] == [utc(2024, 3, 15)] * 2 + [utc(2024, 4, 2)] * 4


@pytest.mark.skipif(not (BEAM / "1" / "chat.json").exists(), reason="BEAM data not present")
def test_beam_conversation_from_the_evaluation_data(tmp_path, capsys) -> None:
    f = BEAM / "1" / "chat.json"
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert stored(db) == beam_reference(json.loads(f.read_text(encoding="utf-8")))


def locomo_sample(sample_id: str, names: tuple[str, str]) -> dict:
    a, b = names
    return {"sample_id": sample_id, "conversation": {
        "speaker_a": a, "speaker_b": b,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": a, "dia_id": "D1:1", "text": f"Hi {b}, I painted a lake."},
                      {"speaker": b, "dia_id": "D1:2", "text": "Show me!", "blip_caption": "a photo of a lake"}],
        "session_2_date_time": "10:00 am on 9 June, 2023",
        "session_2": [{"speaker": a, "dia_id": "D2:1", "text": "I sold the painting."}],
        "session_3_date_time": "9:00 am on 1 July, 2023",  # a date without a session, as in conv-26
    }, "qa": []}


def test_locomo_split_into_one_namespace_per_conversation(tmp_path, capsys) -> None:
    f = tmp_path / "locomo.json"
    f.write_text(json.dumps([locomo_sample("c1", ("Ann", "Bob")), locomo_sample("c2", ("Cy", "Di"))]),
                 encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db, "-n", "lc", "--split").code == 0
    assert namespaces(db) == ["lc.c1", "lc.c2"]
    assert stored(db, "lc.c2") == [
        {"text": "Hi Di, I painted a lake.", "speaker": "Cy", "role": "user", "timestamp": utc(2023, 5, 8, 13, 56),
         "session_id": "session_1", "metadata": {"dia_id": "D1:1"}},
        {"text": "Show me! [image: a photo of a lake]", "speaker": "Di", "role": "user",
         "timestamp": utc(2023, 5, 8, 13, 56, 1), "session_id": "session_1", "metadata": {"dia_id": "D1:2"}},
        {"text": "I sold the painting.", "speaker": "Cy", "role": "user", "timestamp": utc(2023, 6, 9, 10),
         "session_id": "session_2", "metadata": {"dia_id": "D2:1"}},
    ]
    run = cli(capsys, "ingest", f, "--path", db, "-n", "one")
    assert run.code == 0 and len(stored(db, "one")) == 6
    unnamed = [locomo_sample("c1", ("Ann", "Bob")), locomo_sample("", ("Cy", "Di")), locomo_sample("c3", ("Ed", "Flo"))]
    del unnamed[2]["sample_id"]
    f.write_text(json.dumps(unnamed), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", tmp_path / "u.db", "-n", "lc", "--split").code == 0
    assert namespaces(tmp_path / "u.db") == ["lc.c1", "lc.sample-2", "lc.sample-3"]  # never merged into "lc"


def test_a_split_file_ingested_again_adds_nothing_and_returns(tmp_path) -> None:
    """A file read with --split (LoCoMo, a Telegram account, a Slack export) ingested a second time: the check of
    whether a namespace already ends with its records closed each pass over the records, which for --split were
    plain list iterators, so it raised AttributeError while it still held the namespace's read lock, and closing
    the store then waited for that lock forever. Run as a command (a hang fails by the timeout)."""
    f = tmp_path / "locomo.json"
    f.write_text(json.dumps([locomo_sample("c1", ("Ann", "Bob")), locomo_sample("c2", ("Cy", "Di"))]),
                 encoding="utf-8")
    db = tmp_path / "s.db"
    assert hippo_cmd("ingest", f, "--path", db, "-n", "lc", "--split", timeout=120).code == 0
    before = {ns: stored(db, ns) for ns in ("lc.c1", "lc.c2")}
    run = hippo_cmd("ingest", f, "--path", db, "-n", "lc", "--split", timeout=120)
    assert run.code == 0, run.err
    assert "lc.c1: already ends with these 3 messages" in run.out and "lc.c2: already ends with" in run.out, run.out
    assert {ns: stored(db, ns) for ns in ("lc.c1", "lc.c2")} == before


def test_a_namespace_split_makes_too_long_is_named_as_split_s(tmp_path, capsys) -> None:
    """--namespace of 500 characters is a valid namespace; --split appending '.<sample_id>' made one over the 512
    allowed, refused as "--namespace must be at most 512 printable characters", of the option the user gave right."""
    f = tmp_path / "locomo.json"
    f.write_text(json.dumps([locomo_sample("conversation-one", ("Ann", "Bob"))]), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db, "-n", "n" * 500, "--split")
    assert_one_line_error(run, "--split", "'conversation-one'", "512")
    assert not run.err.startswith("hippo: error: --namespace"), run.err
    assert namespaces(db) == []
    assert cli(capsys, "ingest", f, "--path", db, "-n", "n" * 495, "--split").code == 0
    assert namespaces(db) == ["n" * 495 + ".conversation-one"]


def test_export_then_import_round_trip(store, tmp_path, capsys) -> None:
    out = tmp_path / "ann.jsonl"
    run = cli(capsys, "export", out, "--path", store, "-n", "ann")
    assert run.code == 0 and "exported 12 messages" in run.out
    db = tmp_path / "copy.db"
    assert cli(capsys, "import", out, "--path", db, "-n", "copy").code == 0
    assert stored(db, "copy") == stored(store, "ann")
    # an export file is also accepted by ingest; anything else is refused by import
    assert cli(capsys, "ingest", out, "--path", db, "-n", "again").code == 0
    assert stored(db, "again") == stored(store, "ann")
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"text": "hello"}\n', encoding="utf-8")
    assert_one_line_error(cli(capsys, "import", plain, "--path", db), "plain.jsonl", "not a hippo export")


# ------------------------------------------------------------------------------------- all or nothing, retries


def numbered(n: int, bad: int | None = None, field: str = "text") -> str:
    lines = []
    for k in range(1, n + 1):
        rec = {"text": f"note number {k} about the harbour", "speaker": "Ann", "metadata": {"k": k}}
        if k == bad:
            rec[field] = "   " if field == "text" else "sometime"
        lines.append(json.dumps(rec))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("field, message", [("text", "text"), ("timestamp", "timestamp")])
def test_a_bad_line_anywhere_stores_nothing_and_is_named(tmp_path, capsys, field, message) -> None:
    f = tmp_path / "notes.jsonl"
    f.write_text(numbered(1200, bad=1103, field=field), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db, "--batch", "500")
    assert_one_line_error(run, "notes.jsonl:1103:", message)
    assert namespaces(db) == []
    f.write_text(numbered(1200), encoding="utf-8")  # fixed: the retry stores every line exactly once
    assert cli(capsys, "ingest", f, "--path", db, "--batch", "500").code == 0
    assert [m["metadata"]["k"] for m in stored(db)] == list(range(1, 1201))


def test_bad_record_in_a_json_document_names_the_line_of_the_field(tmp_path, capsys) -> None:
    chat = beam_chat()
    chat[1]["turns"][0][1]["content"] = ""
    f = tmp_path / "chat.json"
    f.write_text(json.dumps(chat, indent=2), encoding="utf-8")
    line = next(k for k, text in enumerate(f.read_text().splitlines(), 1) if text.strip() == '"content": ""')
    run = cli(capsys, "ingest", f, "--path", tmp_path / "s.db")
    assert_one_line_error(run, f"chat.json:{line}:", "[1].turns[0][1]", "content")
    chat = beam_chat()
    chat[0]["turns"][1][0]["time_anchor"] = "Smarch-40-2024"
    f.write_text(json.dumps(chat, indent=2), encoding="utf-8")
    line = next(k for k, text in enumerate(f.read_text().splitlines(), 1) if "Smarch" in text)
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "s.db"), f"chat.json:{line}:", "time_anchor")
    assert namespaces(tmp_path / "s.db") == []


def test_a_failed_write_is_undone_and_the_retry_does_not_duplicate(tmp_path, capsys, monkeypatch) -> None:
    f = tmp_path / "notes.jsonl"
    f.write_text(numbered(1200), encoding="utf-8")
    db = tmp_path / "s.db"
    real = hippo.Memory.add_many
    calls = []

    def failing(self, items):
        calls.append(len(items))
        if len(calls) == 3:
            raise StoreError("database or disk is full")
        return real(self, items)

    monkeypatch.setattr(hippo.Memory, "add_many", failing)
    run = cli(capsys, "ingest", f, "--path", db, "--batch", "500")
    assert_one_line_error(run, "notes.jsonl", "nothing was stored", "disk is full")
    assert calls == [500, 500, 200]
    monkeypatch.setattr(hippo.Memory, "add_many", real)
    with hippo.Memory(db) as mem:
        assert mem.count() == 0
    assert cli(capsys, "ingest", f, "--path", db, "--batch", "500").code == 0
    assert [m["metadata"]["k"] for m in stored(db)] == list(range(1, 1201))


def ingest_with_add_many(tmp_path, on_batch: str, *, sigint_ignored: bool = False,
                         ) -> tuple[subprocess.CompletedProcess, Path, Path]:
    """``hippo ingest`` of 1,200 numbered messages in batches of 500, in a process whose ``Memory.add_many`` runs
    ``on_batch`` (Python, with ``calls`` the batches so far, ``real`` the real method and ``self, items``) in place
    of the real call: (the process, the file, the store). ``sigint_ignored``: the process starts with SIGINT ignored,
    as a shell starts a background job (``hippo ingest ... &`` in a script)."""
    f = tmp_path / "notes.jsonl"
    f.write_text(numbered(1200), encoding="utf-8")
    db = tmp_path / "s.db"
    script = "\n".join([
        "import os, signal, sys", "import hippo", "real, calls = hippo.Memory.add_many, []",
        # set either way: a test run started in the background (SIGINT ignored) must not decide what is tested
        "signal.signal(signal.SIGINT, signal.SIG_IGN if %r else signal.default_int_handler)" % sigint_ignored,
        "def add_many(self, items):", "    calls.append(1)", textwrap.indent(textwrap.dedent(on_batch), "    "),
        "hippo.Memory.add_many = add_many", "from hippo.cli import main", "sys.exit(main(sys.argv[1:]))"])
    proc = subprocess.run([sys.executable, "-c", script, "ingest", str(f), "--path", str(db), "--batch", "500"],
                          capture_output=True, text=True, timeout=300)
    return proc, f, db


def test_a_killed_ingest_resumes_where_it_stopped(tmp_path) -> None:
    """A process killed between two batches cannot undo anything; running the command again finishes the file
    without writing the first batches twice."""
    proc, f, db = ingest_with_add_many(tmp_path, """
        if len(calls) == 3:
            os._exit(9)  # like SIGKILL: no undo, no close
        return real(self, items)
    """)
    assert proc.returncode == 9
    assert [m["metadata"]["k"] for m in stored(db)] == list(range(1, 1001))
    run = hippo_cmd("ingest", f, "--path", db, "--batch", "500")
    assert run.code == 0, run.err
    assert "200 messages added after the 1000" in run.out
    assert [m["metadata"]["k"] for m in stored(db)] == list(range(1, 1201))
    again = hippo_cmd("ingest", f, "--path", db, "--batch", "500")
    assert again.code == 0 and "nothing added" in again.out
    assert len(stored(db)) == 1200


def test_ctrl_c_after_a_batch_committed_undoes_that_batch_too(tmp_path) -> None:
    """Ctrl-C that lands after ``add_many`` committed a batch but before it returned (while the index is updated):
    the run still learns the batch's ids, so 'nothing was stored' is true."""
    proc, _, db = ingest_with_add_many(tmp_path, """
        got = real(self, items)  # committed
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # before add_many returns
        return got
    """)
    assert proc.returncode == 130 and "nothing of" in proc.stderr and "was stored" in proc.stderr, proc.stderr
    assert stored(db) == []


def test_ctrl_c_is_ignored_by_an_ingest_started_with_sigint_ignored(tmp_path) -> None:
    """A shell script's background job (``hippo ingest big.jsonl &``) starts with SIGINT ignored, so a Ctrl-C meant
    for the script's foreground command leaves it running: the ingest keeps to that and stores the whole file."""
    proc, _, db = ingest_with_add_many(tmp_path, """
        got = real(self, items)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # in the middle of the batch
        return got
    """, sigint_ignored=True)
    assert proc.returncode == 0, proc.stderr
    assert [m["metadata"]["k"] for m in stored(db)] == list(range(1, 1201))


def test_checking_a_files_records_holds_nothing_per_record(tmp_path) -> None:
    """Every record is checked before anything is written; what the check works out for a resume (each record's
    text, speaker, time and metadata as a key) was kept for every record of the file, 80 to 160 bytes a message
    beside the messages themselves, though a resume compares no more records than the namespace holds."""
    import tracemalloc

    from hippo.cli import ingest
    from hippo.cli.sources import Record, Source

    n = 10000
    src = Source("chat.jsonl", "jsonl", "", [Record({"text": f"message number {k} about the trip", "speaker": "Ann"},
                                                    (), k + 1) for k in range(n)])
    config = hippo.Config()
    ingest._validate(config, src, ingest._groups(src, "default", False, src.each))  # the tokenizer's caches filled
    groups = ingest._groups(src, "default", False, src.each)
    tracemalloc.start()
    try:
        ingest._validate(config, src, groups)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 16 * n


def test_resume_needs_the_whole_prefix_not_a_coincidence(tmp_path, capsys) -> None:
    """A namespace that happens to end with the file's first message is not taken for an earlier run."""
    db = tmp_path / "s.db"
    with hippo.Memory(db) as mem:
        mem.add("note number 1 about the harbour", speaker="Ann", metadata={"k": 1})
    f = tmp_path / "notes.jsonl"
    f.write_text(numbered(3), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db, "--batch", "1").code == 0
    assert [m["metadata"]["k"] for m in stored(db)] == [1, 1, 2, 3]


# ------------------------------------------------------------------------------------ encodings and nesting


def test_latin1_file_is_named_and_decoded_with_encoding(tmp_path, capsys) -> None:
    f = tmp_path / "latin.jsonl"
    f.write_bytes('{"text": "ok"}\n{"text": "Caf\u00e9 am Stra\u00dfenrand"}\n'.encode("latin-1"))
    db = tmp_path / "s.db"
    assert_one_line_error(cli(capsys, "ingest", f, "--path", db), "latin.jsonl:2:", "--encoding")
    assert namespaces(db) == []
    assert cli(capsys, "ingest", f, "--path", db, "--encoding", "latin-1").code == 0
    assert [m["text"] for m in stored(db)] == ["ok", "Caf\u00e9 am Stra\u00dfenrand"]
    assert_one_line_error(cli(capsys, "ingest", f, "--path", db, "--encoding", "klingon"), "--encoding", "klingon")


def test_utf8_byte_order_mark_is_not_text(tmp_path, capsys) -> None:
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + '{"text": "h\u00e9llo"}\n'.encode())
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [m["text"] for m in stored(db)] == ["h\u00e9llo"]


def test_utf16_files_are_read_by_their_byte_order_mark(tmp_path, capsys) -> None:
    """Windows tools save a chat as "Unicode": UTF-16 with a byte-order mark, which names the encoding. Without the
    mark, the NUL bytes of its ASCII characters give it away: the error names UTF-16, not latin-1 (which would read
    the file as text with a NUL after every letter)."""
    chat = "12/03/2024, 09:02 - Ann: Caf\u00e9 at ten?\r\n13/03/2024, 10:00 - Bo: S\u00ed \U0001F44D\r\n"
    db = tmp_path / "s.db"
    for name, data in {"le.txt": chat.encode("utf-16"), "be.txt": b"\xfe\xff" + chat.encode("utf-16-be"),
                       "32.txt": chat.encode("utf-32")}.items():
        f = tmp_path / name
        f.write_bytes(data)
        run = cli(capsys, "ingest", f, "--path", db, "--namespace", name)
        assert run.code == 0, run.err
        assert [(m["speaker"], m["text"]) for m in stored(db, name)] == [("Ann", "Caf\u00e9 at ten?"),
                                                                        ("Bo", "S\u00ed \U0001F44D")]
    bare = tmp_path / "bare.txt"
    bare.write_bytes(chat.encode("utf-16-le"))
    assert_one_line_error(cli(capsys, "ingest", bare, "--path", tmp_path / "b.db"), "bare.txt:1:", "utf-16-le")
    ascii_only = tmp_path / "ascii.txt"
    ascii_only.write_bytes("12/03/2024, 09:02 - Ann: hi\n".encode("utf-16-be"))
    assert_one_line_error(cli(capsys, "ingest", ascii_only, "--path", tmp_path / "b.db"), "ascii.txt:1:", "NUL",
                          "utf-16-be")
    assert namespaces(tmp_path / "b.db") == []
    assert cli(capsys, "ingest", bare, "--path", tmp_path / "b.db", "--encoding", "utf-16-le").code == 0


def test_deeply_nested_json_gives_a_clear_error(tmp_path, capsys) -> None:
    deep_line = tmp_path / "deep.jsonl"
    deep_line.write_text('{"text": "ok"}\n{"text": "x", "metadata": {"a": ' + "[" * 50_000 + "]" * 50_000 + "}}\n")
    deep_doc = tmp_path / "deep.json"
    deep_doc.write_text("[\n" + "[" * 50_000 + "]" * 50_000 + "\n]")
    deep_meta = tmp_path / "meta.jsonl"
    deep_meta.write_text('{"text": "x", "metadata": {"a": ' + "[" * 150 + "]" * 150 + "}}\n")
    fine = tmp_path / "fine.jsonl"
    fine.write_text('{"text": "x", "metadata": {"a": ' + "[" * 98 + "]" * 98 + "}}\n")
    db = tmp_path / "s.db"
    assert_one_line_error(cli(capsys, "ingest", deep_line, "--path", db), "deep.jsonl:2:", "nested")
    assert_one_line_error(cli(capsys, "ingest", deep_doc, "--path", db), "deep.json:2:", "nested")
    assert_one_line_error(cli(capsys, "ingest", deep_meta, "--path", db), "meta.jsonl:1:", "metadata", "nested")
    assert namespaces(db) == []
    assert cli(capsys, "ingest", fine, "--path", db).code == 0  # 99 levels of metadata are fine


@pytest.mark.parametrize("content, needles", [
    ("", ["empty"]),
    ('{"text": "fine"}\n[1, 2]\n', ["bad.json", ":2:", "JSON object per line"]),
    ('{"text": "fine", "colour": "red"}\n', ["bad.json", ":1:", "colour"]),
    ('{"text": "fine", "role": "robot"}\n', ["bad.json", ":1:", "role"]),
    ('[{"role": "wizard", "content": "hi"}]', ["bad.json", ":1:", "[0]", "role"]),
    ('{"messages": {"role": "user"}}', ["bad.json", "messages"]),
    ('[{"sample_id": "c", "conversation": {"session_1": [{"speaker": "A"}]}}]', ["bad.json", "text"]),
    ('[{"batch_number": 1, "turns": [[{"role": "user", "content": 3}]]}]', ["bad.json", "content"]),
    ('[{"weird": 1}]', ["bad.json", "not a message"]),
    ('{"text": "fine"}\n{"text": "cut off', ["bad.json", ":2:", "not json"]),
    # a text file that is neither JSON nor a chat export hippo knows (notes, a CSV): named as such, not "not valid
    # JSON (Expecting value)"
    ("\nHello there\nmore notes\n", ["bad.json", ":2:", "not a format", "WhatsApp", "Hello there"]),
    ("text,speaker\nhi,Ann\n", ["bad.json", ":1:", "not a format", "text,speaker"]),
    # DiscordChatExporter's CSV, whose dates follow the exporter's date format or locale: named, with the JSON to
    # export instead
    ('\ufeffAuthorID,Author,Date,Content,Attachments,Reactions\n"1","ann","3/12/2024 9:05 AM","hi","",""\n',
     ["bad.json:1:", "DiscordChatExporter as CSV", "--format Json"]),
    # exports of apps hippo does not read, {"messages": [...]} of other fields: named as such, not as an OpenAI-style
    # file whose first message lacks a valid 'role'
    ('{"chat": "x", "messages": [{"sender": "Bo", "body": "hi"}]}', ["bad.json", "not a format", "body", "sender"]),
    # a Messenger thread with a message of no time, a Discord channel whose message has no author
    ('{"participants": [{"name": "Bo"}], "messages": [{"sender_name": "Bo", "timestamp_ms": null, '
     '"content": "hi"}], "title": "Bo", "thread_path": "inbox/bo_1"}', ["bad.json:1:", "messages[0]", "timestamp_ms"]),
    ('{"guild": {"id": "1"}, "channel": {"id": "2"}, "messages": [{"id": "3", "type": "Default", "timestamp": '
     '"2024-03-12T09:00:00+00:00", "content": "hi", "author": {"id": "4", "name": "ann"}}, {"id": "5", "timestamp": '
     '"2024-03-12T09:00:00+00:00", "content": "hi"}]}', ["bad.json:1:", "messages[1]", "author"]),
    # a role that is a list or an object (unhashable: the check of the role raised TypeError, "unexpected")
    ('{"messages": [{"role": [], "content": "Be brief."}, {"role": "user", "content": "Hi"}]}',
     ["bad.json:1:", "messages[0]", "'role'", "got []"]),
    ('[{"role": {"name": "user"}, "content": "Hi"}]', ["bad.json:1:", "[0]", "'role'", "got {'name': 'user'}"]),
])
def test_malformed_files_are_one_line_errors(tmp_path, capsys, content, needles) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content, encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "s.db"), *needles)
    assert namespaces(tmp_path / "s.db") == []


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_is_refused_and_a_pipe_is_read(tmp_path) -> None:
    # /dev/zero was read whole like a file: it never ends, so ingest ran until memory ran out
    refused = hippo_cmd("ingest", "/dev/zero", "--path", tmp_path / "s.db", timeout=60)
    assert_one_line_error(refused, "/dev/zero", "device")
    assert namespaces(tmp_path / "s.db") == []
    fifo = tmp_path / "chat.pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", 'printf \'{"text": "through a pipe"}\\n\' > "$0"', str(fifo)])
    run = hippo_cmd("ingest", fifo, "--path", tmp_path / "s.db", timeout=120)
    writer.wait(timeout=60)
    assert run.code == 0, run.err
    assert [m["text"] for m in stored(tmp_path / "s.db")] == ["through a pipe"]


# ------------------------------------------------------------------------------------------- progress bars


def test_progress_bars_only_on_a_terminal(tmp_path) -> None:
    f = tmp_path / "notes.jsonl"
    f.write_text(numbered(600), encoding="utf-8")
    on_tty = hippo_tty("ingest", f, "--path", tmp_path / "a.db", "--batch", "100")
    assert on_tty.code == 0, on_tty.err
    assert "600/600" in on_tty.err and "100%" in on_tty.err and "ingest" in on_tty.err
    piped = hippo_cmd("ingest", f, "--path", tmp_path / "b.db", "--batch", "100")
    assert piped.code == 0 and piped.err == ""
    exported = hippo_tty("export", tmp_path / "out.jsonl", "--path", tmp_path / "a.db")
    assert exported.code == 0 and "600/600" in exported.err
    imported = hippo_tty("import", tmp_path / "out.jsonl", "--path", tmp_path / "c.db")
    assert imported.code == 0 and "600/600" in imported.err
    assert stored(tmp_path / "c.db") == stored(tmp_path / "a.db")


# ------------------------------------------------------------------------------------------- messaging apps


def test_whatsapp_android_export(tmp_path, capsys) -> None:
    f = tmp_path / "WhatsApp Chat with Bo.txt"
    f.write_text(textwrap.dedent("""\
        12/03/2024, 09:01 - Messages and calls are end-to-end encrypted. No one outside of this chat can read them.
        12/03/2024, 09:02 - Ann: Did you book the resturant for Friday?
        12/03/2024, 09:05 - Bo: Yes! The one by the harbour.
        It has a blue door: you can't miss it
        12/03/2024, 09:06 - Bo: <Media omitted>
        13/03/2024, 21:40 - Ann: Great, see you there
        """), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "Did you book the resturant for Friday?", "speaker": "Ann", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 2), "session_id": None, "metadata": {}},
        {"text": "Yes! The one by the harbour.\nIt has a blue door: you can't miss it", "speaker": "Bo",
         "role": "user", "timestamp": utc(2024, 3, 12, 9, 5), "session_id": None, "metadata": {}},
        {"text": "Great, see you there", "speaker": "Ann", "role": "user", "timestamp": utc(2024, 3, 13, 21, 40),
         "session_id": None, "metadata": {}},
    ]
    # the reply that names no restaurant comes with the question it answers (the two are one sitting), which the
    # question finds through its misspelling
    question = "Which restaurant is booked for Friday?"
    with hippo.Memory(db) as mem:
        assert "harbour" in mem.recall(question, budget_tokens=60).text
    with hippo.Memory(db, config={"retrieval": {"sitting_gap_s": 0}}) as mem:
        assert "harbour" not in mem.recall(question, budget_tokens=60).text


def test_whatsapp_ios_export_with_twelve_hour_times(tmp_path, capsys) -> None:
    f = tmp_path / "_chat.txt"
    f.write_text("\u200e[3/4/24, 9:05:33\u202fPM] Ann: Dinner on Friday?\n"
                 "[3/4/24, 9:07:01\u202fPM] Bo: \u200eimage omitted\n"
                 "[3/4/24, 11:59:59\u202fAM] Bo: Sure\n"
                 "\u200e[3/4/24, 12:00:10\u202fAM] Ann: Night\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    got = stored(db)  # every date reads either way, and the times are 12-hour: a US phone, month first
    assert [(m["speaker"], m["text"], m["timestamp"]) for m in got] == [
        ("Ann", "Dinner on Friday?", utc(2024, 3, 4, 21, 5, 33)),
        ("Bo", "Sure", utc(2024, 3, 4, 11, 59, 59)),
        ("Ann", "Night", utc(2024, 3, 4, 0, 0, 10)),
    ]


def test_whatsapp_message_text_is_kept_as_written(tmp_path, capsys) -> None:
    """Only the line's head (date, time, name) is the app's: French text puts a no-break space (U+00A0) or a narrow
    one (U+202F) before "?" and ":", Hebrew text may open with a right-to-left mark (U+200F); the export holds them
    as the chat file does. The head itself may use either space before PM (Android 14 writes "2:05\u202fPM")."""
    f = tmp_path / "WhatsApp Chat with Bo.txt"
    said = ["Tu viens\u00a0? Prix\u202f: 10\u00a0\u20ac", "\u200f\u05e9\u05dc\u05d5\u05dd", "see\u00a0you"]
    f.write_text(f"13/03/2024, 2:05\u202fPM - Ann: {said[0]}\n"
                 f"13/03/2024, 2:06\u00a0PM - ~\u202fBo: {said[1]}\n"
                 f"13/03/2024, 2:07 PM - Ann: {said[2]}\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    out = tmp_path / "out.jsonl"
    assert cli(capsys, "export", out, "--path", db).code == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert [r["text"] for r in records] == said
    assert [r["speaker"] for r in records] == ["Ann", "~ Bo", "Ann"]
    assert [datetime.fromtimestamp(r["timestamp"], timezone.utc).isoformat() for r in records] == [
        utc(2024, 3, 13, 14, 5), utc(2024, 3, 13, 14, 6), utc(2024, 3, 13, 14, 7)]


def test_whatsapp_ios_notices_have_a_sender_and_a_direction_mark(tmp_path, capsys) -> None:
    """An iOS export (_chat.txt) gives the app's own lines a sender, the group's name in a group, the other person
    in a chat of two, and opens their text with U+200E, whatever the phone's language; Android and iOS append
    "<This message was edited>" (iOS after a U+200E) to an edited message. None of that is anyone's words."""
    f = tmp_path / "_chat.txt"
    f.write_text(
        "[12/03/2024, 09:01:00] Trip: \u200eMessages and calls are end-to-end encrypted. No one outside of this "
        "chat, not even WhatsApp, can read or listen to them.\n"
        "[12/03/2024, 09:01:00] Trip: \u200eAnn created group \u201cTrip\u201d\n"
        "[12/03/2024, 09:01:05] Trip: \u200eAnn a cr\u00e9\u00e9 le groupe \u00ab\u00a0Trip\u00a0\u00bb\n"
        "[12/03/2024, 09:02:11] Ann: Who brings the tent?\n"
        "\u200e[12/03/2024, 09:03:00] Bo: \u200eimage omitted\n"
        "[12/03/2024, 09:04:00] Bo: I do, it sleeps four \u200e<This message was edited>\n"
        "[12/03/2024, 09:05:00] Bo: \u200eThis message was deleted.\n"
        "[12/03/2024, 09:06:00] Ann: \u200eMissed voice call\n"
        "[12/03/2024, 09:07:00] Ann: \u200ePOLL:\n\u200eWhen?\n\u200eOPTION: Friday (1 vote)\n"
        "[12/03/2024, 09:08:00] Ann: Great\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"], m["timestamp"], m["metadata"]) for m in stored(db)] == [
        ("Ann", "Who brings the tent?", utc(2024, 3, 12, 9, 2, 11), {}),
        ("Bo", "I do, it sleeps four", utc(2024, 3, 12, 9, 4), {"edited": True}),
        ("Ann", "Great", utc(2024, 3, 12, 9, 8), {}),
    ]
    g = tmp_path / "android.txt"
    g.write_text("12/03/2024, 09:04 - Bo: I do <This message was edited>\n", encoding="utf-8")
    assert cli(capsys, "ingest", g, "--path", tmp_path / "a.db").code == 0
    assert [(m["text"], m["metadata"]) for m in stored(tmp_path / "a.db")] == [("I do", {"edited": True})]


def test_whatsapp_notices_that_quote_a_colon_in_their_own_quotation_marks(tmp_path, capsys) -> None:
    """An Android export in German or French writes a renamed group's notice with „...“ or « ... » (French with a
    space before the colon): a notice, not a message of a sender named 'Ann hat den Betreff zu „Trip'."""
    f = tmp_path / "WhatsApp Chat mit Trip.txt"
    f.write_text("12.03.24, 14:05 - Ann hat den Betreff von \u201eTrip\u201c zu \u201eTrip: Lissabon\u201c "
                 "ge\u00e4ndert\n"
                 "12.03.24, 14:06 - Ann a chang\u00e9 le sujet de \u00ab Trip \u00bb en \u00ab Trip : Lisbonne "
                 "\u00bb\n"
                 "12.03.24, 14:07 - Bo: Super: bis dann\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"]) for m in stored(db)] == [("Bo", "Super: bis dann")]


def test_a_whatsapp_export_as_the_zip_ios_writes(tmp_path, capsys) -> None:
    """iOS's "Export Chat" hands over a zip: _chat.txt, the media when asked for, and macOS's __MACOSX entries when
    it went through a Mac. The zip was refused with a hint to pass --encoding latin-1."""
    import zipfile

    chat = "[12/03/2024, 09:02:11] Ann: Who brings the tent?\n[12/03/2024, 09:04:00] Bo: I do\n"
    f = tmp_path / "WhatsApp Chat - Bo.zip"
    with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_chat.txt", chat.encode("utf-8"))
        archive.writestr("00000012-PHOTO-2024-03-12-09-07-00.jpg", b"\xff\xd8\xff\xe0")
        archive.writestr("__MACOSX/._chat.txt", b"\x00\x05\x16\x07")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert [(m["speaker"], m["text"], m["timestamp"]) for m in stored(db)] == [
        ("Ann", "Who brings the tent?", utc(2024, 3, 12, 9, 2, 11)), ("Bo", "I do", utc(2024, 3, 12, 9, 4))]
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("_chat.txt", "[12/03/2024, 09:02:11] Ann: fine\n[31/02/2024, 09:03:00] Bo: no such day\n")
    assert_one_line_error(cli(capsys, "ingest", bad, "--path", tmp_path / "b.db"), "bad.zip (_chat.txt):2:", "date")
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("a.txt", chat)
        archive.writestr("b.json", "[]")
    assert_one_line_error(cli(capsys, "ingest", bad, "--path", tmp_path / "b.db"), "bad.zip", "a.txt", "b.json")
    bad.write_bytes(b"PK\x03\x04 cut short")
    assert_one_line_error(cli(capsys, "ingest", bad, "--path", tmp_path / "b.db"), "bad.zip", "zip")
    assert namespaces(tmp_path / "b.db") == []


def test_a_whatsapp_zip_with_a_text_document_sent_in_the_chat(tmp_path, capsys) -> None:
    """A chat exported with its media holds the documents sent in it, a .txt among them: iOS's zip beside its
    _chat.txt, Android's beside the chat named as the zip. Such an export was refused as "a zip archive with several
    chat files"."""
    import zipfile

    chat = ("[12/03/2024, 09:02:11] Ann: The packing list\n"
            "[12/03/2024, 09:02:12] Ann: \u200e<attached: 00000003-list.txt>\n")
    android = "12/03/2024, 09:02 - Ann: The packing list\n12/03/2024, 09:02 - Ann: list.txt (file attached)\n"
    for name, member, text in (("WhatsApp Chat - Bo.zip", "_chat.txt", chat),
                               ("WhatsApp Chat with Bo.zip", "WhatsApp Chat with Bo.txt", android)):
        f = tmp_path / name
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("00000003-list.txt" if member == "_chat.txt" else "list.txt", "tent\nstove\n")
            archive.writestr(member, text)
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db)
        assert run.code == 0, run.err
        assert [(m["speaker"], m["text"]) for m in stored(db)][0] == ("Ann", "The packing list"), name


def _declare_size(path: Path, size: int) -> None:
    """Make every header of the zip at ``path`` (local and central) declare ``size`` unpacked bytes for its member,
    whatever the member really unpacks to."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.find(signature)
        while at >= 0:
            data[at + offset:at + offset + 4] = size.to_bytes(4, "little")
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))


def test_a_zip_is_unpacked_only_up_to_a_cap(tmp_path, capsys, monkeypatch) -> None:
    """A zip's chat file was unpacked whole into memory whatever its size: a zip bomb, or a member declaring 4 GiB,
    was read (a few KiB of deflate make gigabytes). An archive may unpack to at most MAX_UNZIPPED bytes: the sizes it
    declares are checked first, and no member is read past its declared size, so one lying about it is refused as
    damaged. The error names the file inside the archive and the cap; nothing is stored."""
    import zipfile

    from hippo.cli import sources

    lines = [f"[12/03/2024, 09:{m:02d}:00] Ann: note number {m} about the tent" for m in range(60)]
    chat = ("\n".join(lines) + "\n").encode("utf-8")
    f = tmp_path / "chat.zip"

    def whatsapp() -> None:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("_chat.txt", chat)

    whatsapp()
    _declare_size(f, 0xFFFFFFF0)  # about 4 GiB, from a file of a few hundred bytes
    db = tmp_path / "s.db"
    assert_one_line_error(cli(capsys, "ingest", f, "--path", db), "chat.zip (_chat.txt)", "4 GiB", "512 MiB")
    assert namespaces(db) == []
    # honest sizes against a small cap: over it refused, under it read
    monkeypatch.setattr(sources, "MAX_UNZIPPED", len(chat) - 1)
    whatsapp()
    assert_one_line_error(cli(capsys, "ingest", f, "--path", db), "chat.zip (_chat.txt)", f"{len(chat) - 1:,} bytes")
    assert namespaces(db) == []
    monkeypatch.setattr(sources, "MAX_UNZIPPED", len(chat))
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert len(stored(db)) == 60
    # a member declaring less than it unpacks to: read no further than declared, then refused as damaged
    monkeypatch.setattr(sources, "MAX_UNZIPPED", 1000)
    _declare_size(f, 900)
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "chat.zip", "damaged")
    assert namespaces(tmp_path / "b.db") == []


def test_a_slack_export_is_unpacked_only_up_to_a_cap(tmp_path, capsys, monkeypatch) -> None:
    """A Slack export's files together may unpack to at most MAX_UNZIPPED bytes: by the sizes they declare before
    any is read, and by what they unpack to."""
    import zipfile

    from hippo.cli import sources

    users = json.dumps([{"id": "U01ANN", "name": "ann", "profile": {"display_name": "Ann"}}]).encode()
    channels = json.dumps([{"id": "C01GEN", "name": "general"}]).encode()
    days = {f"general/2024-03-{d:02d}.json": json.dumps([{"type": "message", "user": "U01ANN", "text": f"day {d}",
                                                          "ts": f"{1710150000 + 86400 * d}.000100"}]).encode()
            for d in range(10, 14)}
    f = tmp_path / "slack.zip"
    with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", users)
        archive.writestr("channels.json", channels)
        for name, data in days.items():
            archive.writestr(name, data)
    total = len(users) + len(channels) + sum(map(len, days.values()))
    db = tmp_path / "s.db"
    monkeypatch.setattr(sources, "MAX_UNZIPPED", total)
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [m["text"] for m in stored(db)] == ["day 10", "day 11", "day 12", "day 13"]
    monkeypatch.setattr(sources, "MAX_UNZIPPED", total - 1)  # every file under the cap, all of them over it
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "slack.zip", f"{total:,} bytes",
                          f"{total - 1:,} bytes")
    assert namespaces(tmp_path / "b.db") == []


def test_whatsapp_dates_tell_their_order(tmp_path, capsys) -> None:
    f = tmp_path / "chat.txt"
    f.write_text("03.04.24, 18:00 - Ann: one\n25.04.24, 18:01 - Bo: two\n", encoding="utf-8")  # 25 is a day
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [m["timestamp"] for m in stored(db)] == [utc(2024, 4, 3, 18), utc(2024, 4, 25, 18, 1)]
    g = tmp_path / "us.txt"
    g.write_text("4/3/24, 18:00 - Ann: one\n4/25/24, 18:01 - Bo: two\n", encoding="utf-8")  # 25 is a day: month first
    assert cli(capsys, "ingest", g, "--path", tmp_path / "us.db").code == 0
    assert [m["timestamp"] for m in stored(tmp_path / "us.db")] == [utc(2024, 4, 3, 18), utc(2024, 4, 25, 18, 1)]


def test_whatsapp_dates_that_read_either_way_keep_time_moving_forward(tmp_path, capsys) -> None:
    """No field above 12, so each date reads as day/month or month/day; the export lists messages in the order they
    were sent, which settles it. An Indian Android phone writes day first with a 12-hour clock ("11/03/24, 9:00 pm"),
    a US one set to 24 hours month first ("3/11/24, 21:00")."""
    cases = {"in.txt": "11/03/24, 9:00 pm - Ann: tickets booked\n02/04/24, 9:00 pm - Bo: we fly tomorrow\n",
             "us.txt": "3/11/24, 21:00 - Ann: tickets booked\n4/2/24, 21:00 - Bo: we fly tomorrow\n"}
    for name, text in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        assert cli(capsys, "ingest", f, "--path", db).code == 0
        assert [m["timestamp"] for m in stored(db)] == [utc(2024, 3, 11, 21), utc(2024, 4, 2, 21)], name


def test_whatsapp_twelve_hour_clocks_of_day_first_phones(tmp_path, capsys) -> None:
    """A chat of one day leaves the order to the clock. Phones write a 12-hour clock in their locale's words
    (CLDR's day periods): a US phone "PM" in capitals, month first; a British or Indian one "pm" in small letters
    and a Spanish one "p. m.", day first. Every 12-hour clock was taken for a US phone: 11 March was stored as
    3 November."""
    cases = {"us.txt": ("11/03/24, 9:00 PM - Ann: hi\n", utc(2024, 11, 3, 21)),
             "in.txt": ("11/03/24, 9:00 pm - Ann: hi\n", utc(2024, 3, 11, 21)),
             "es.txt": ("11/3/24, 9:00\u202fp.\u00a0m. - Ana: hola\n", utc(2024, 3, 11, 21)),
             "ios-gb.txt": ("[11/03/2024, 9:00:00\u202fpm] Ann: hi\n", utc(2024, 3, 11, 21)),
             # "AM" / "PM" are German, Russian and Bengali phones' words too, whose dates are day first: these were
             # stored as 8 May and 3 November
             "ios-de.txt": ("[05.08.23, 5:52:02\u202fPM] Hana: Hallo\n", utc(2023, 8, 5, 17, 52, 2)),
             "bn.txt": ("১১/৩/২৪, ৯:০০ PM - রহিম: হ্যালো\n", utc(2024, 3, 11, 21))}
    for name, (text, want) in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        assert cli(capsys, "ingest", f, "--path", db).code == 0
        assert [m["timestamp"] for m in stored(db)] == [want], name


def test_whatsapp_dates_that_read_either_way_take_the_day_from_the_field_that_changes(tmp_path, capsys) -> None:
    """Dates of a few days in one month read forward as day/month and as month/day ("3/5", "3/6", "3/7" as 5, 6
    and 7 March or as 3 May, 3 June and 3 July); the field that changes from one date to the next is the day. A US
    phone on a 24-hour clock was read day first (its chat moved to May-July), and a day-first chat with a message
    listed after a later one (delivered late) went by the clock's "PM" to month first."""
    cases = {"us-24h.txt": ("3/5/24, 21:00 - Ann: booked the flights\n3/6/24, 08:15 - Bo: great\n"
                            "3/7/24, 19:30 - Ann: see you at the airport\n",
                            [utc(2024, 3, 5, 21), utc(2024, 3, 6, 8, 15), utc(2024, 3, 7, 19, 30)]),
             "late.txt": ("[05/03/24, 11:59:00 PM] Ann: one\n[06/03/24, 12:01:00 AM] Bo: two\n"
                          "[05/03/24, 11:59:30 PM] Ann: delivered late\n[07/03/24, 9:00:00 AM] Bo: three\n",
                          [utc(2024, 3, 5, 23, 59), utc(2024, 3, 6, 0, 1), utc(2024, 3, 5, 23, 59, 30),
                           utc(2024, 3, 7, 9)])}
    for name, (text, want) in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        assert cli(capsys, "ingest", f, "--path", db).code == 0
        assert [m["timestamp"] for m in stored(db)] == want, name


def test_a_long_whatsapp_export_is_read_without_holding_its_lines_and_heads(tmp_path) -> None:
    """Reading an export holds its text and the messages read, no more: every line of the file as a list and every
    line's parsed head besides made the reading of a 200 MB export peak at 3.5 GB (17 times the file), where the
    messages it returns take 1.3 GB."""
    import tracemalloc

    from hippo.cli.sources import read_source

    f = tmp_path / "chat.txt"
    lines = []
    for k in range(6000):
        day, minute = 1 + k // 1440, k % 1440
        lines.append(f"{day:02d}/03/2024, {minute // 60:02d}:{minute % 60:02d} - {'Ann' if k % 3 else 'Bo'}: "
                     f"message number {k} about the trip to Lisbon")
        if k % 10 == 0:
            lines.append("and a second line")
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    size = f.stat().st_size
    tracemalloc.start()
    try:
        src = read_source(str(f))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(src.records) == 6000
    assert src.records[10].item["text"] == "message number 10 about the trip to Lisbon\nand a second line"
    assert src.records[-1].item["timestamp"] == datetime(2024, 3, 5, 3, 59)
    assert peak - held < size  # what reading holds beyond its result: less than the file's size once more


def test_a_long_jsonl_file_is_read_without_holding_its_lines(tmp_path) -> None:
    """Reading JSONL holds its text and the messages read; every line of the file was held as a list besides."""
    import tracemalloc

    from hippo.cli.sources import read_source

    f = tmp_path / "chat.jsonl"
    f.write_text("".join(json.dumps({"text": f"message number {k} about the trip to Lisbon", "speaker": "Ann"}) + "\n"
                         for k in range(6000)), encoding="utf-8")
    size = f.stat().st_size
    tracemalloc.start()
    try:
        src = read_source(str(f))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.item["text"] for r in src.records[::2999]] == [f"message number {k} about the trip to Lisbon"
                                                             for k in (0, 2999, 5998)]
    assert [r.line for r in src.records[::2999]] == [1, 3000, 5999]
    assert peak - held < size / 2  # what reading holds beyond its result


def test_a_whatsapp_sender_whose_name_holds_quotation_marks(tmp_path, capsys) -> None:
    """A contact saved with a nickname in quotation marks ('Robert "Bob" Smith') had every message left out as the
    app's notice, since notices quote; a notice quotes what holds the colon, a name closes its quotes before it."""
    f = tmp_path / "group.txt"
    f.write_text('12/03/2024, 09:02 - Robert "Bob" Smith: hi all\n'
                 '12/03/2024, 09:03 - Ann changed the subject from "Trip" to "Trip: Lisbon"\n'
                 "12/03/2024, 09:04 - Ann hat den Betreff zu „Trip: Lisbon“ geändert\n"
                 "12/03/2024, 09:05 - Ann a changé le sujet en « Trip : Lisbonne »\n"
                 "12/03/2024, 09:06 - Ana „Nana“ Silva: olá\n"
                 "12/03/2024, 09:07 - Ann «Nana» B: ok\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"]) for m in stored(db)] == [
        ('Robert "Bob" Smith', "hi all"), ("Ana „Nana“ Silva", "olá"), ("Ann «Nana» B", "ok")]


def test_whatsapp_files_sent_with_a_caption_keep_the_caption(tmp_path, capsys) -> None:
    """A chat exported with its media names each file sent on the message's line ("IMG-....jpg (file attached)",
    iOS "\u200e<attached: ...>") and puts its caption on the lines after. iOS's caption was left out with the line
    the app marked as its own, and Android's was stored behind the file's name as if Ann had typed it."""
    cases = {"android.txt": ("12/03/2024, 09:02 - Ann: IMG-20240312-WA0001.jpg (file attached)\nThe view from the "
                             "ferry\n12/03/2024, 09:03 - Ann: \u200eIMG-20240312-WA0002.jpg (file attached)\n"
                             "12/03/2024, 09:04 - Bo: wow\n", "IMG-20240312-WA0001.jpg"),
             "ios.txt": ("[12/03/2024, 09:02:00] Ann: \u200e<attached: 00000012-PHOTO-2024-03-12-09-02-00.jpg>\n"
                         "The view from the ferry\n[12/03/2024, 09:03:00] Ann: \u200e<attached: "
                         "00000013-PHOTO-2024-03-12-09-03-00.jpg>\n[12/03/2024, 09:04:00] Bo: wow\n",
                         "00000012-PHOTO-2024-03-12-09-02-00.jpg")}
    for name, (text, file) in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        assert cli(capsys, "ingest", f, "--path", db).code == 0
        assert [(m["speaker"], m["text"], m["metadata"]) for m in stored(db)] == [
            ("Ann", "The view from the ferry", {"attachments": [file]}), ("Bo", "wow", {})], name


def test_whatsapp_placeholders_of_android_phones_in_other_languages(tmp_path, capsys) -> None:
    """Android writes the media it left out and the deleted messages in the phone's language, without the U+200E iOS
    marks them with; only the English ones were left out, so a German chat held "<Medien ausgeschlossen>" as Bo's
    words."""
    cases = {"de.txt": "12.03.24, 09:02 - Ann: Hast du reserviert?\n12.03.24, 09:03 - Bo: <Medien ausgeschlossen>\n"
                       "12.03.24, 09:04 - Bo: Diese Nachricht wurde gelöscht.\n12.03.24, 09:05 - Bo: Ja!\n",
             "es.txt": "12/3/24, 09:02 - Ann: ¿Reservaste?\n12/3/24, 09:03 - Bo: <Multimedia omitido>\n"
                       "12/3/24, 09:04 - Bo: Se eliminó este mensaje.\n12/3/24, 09:05 - Bo: ¡Sí!\n",
             "fr.txt": "12/03/2024 09:02 - Ann: Tu as réservé ?\n12/03/2024 09:03 - Bo: <Médias omis>\n"
                       "12/03/2024 09:04 - Bo: Ce message a été supprimé\n12/03/2024 09:05 - Bo: Oui !\n",
             "pt.txt": "12/03/2024 09:02 - Ann: Reservaste?\n12/03/2024 09:03 - Bo: <Mídia oculta>\n"
                       "12/03/2024 09:04 - Bo: Esta mensagem foi apagada\n12/03/2024 09:05 - Bo: Sim!\n",
             # a message the phone could not decrypt yet, in English
             "en.txt": "12/03/2024, 09:02 - Ann: Did you book?\n12/03/2024, 09:03 - Bo: Waiting for this message. "
                       "This may take a while.\n12/03/2024, 09:04 - Bo: Waiting for this message\n"
                       "12/03/2024, 09:05 - Bo: Yes!\n"}
    for name, text in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        assert cli(capsys, "ingest", f, "--path", db).code == 0
        assert [m["speaker"] for m in stored(db)] == ["Ann", "Bo"], name


def test_whatsapp_exports_of_phones_in_other_languages(tmp_path, capsys) -> None:
    """Heads as phones in other languages write them: Finnish puts "klo" between date and time and a dot between
    hours and minutes, Indonesian the dot alone, Spanish "p. m." with a no-break space. Each was refused as "not
    valid JSON"."""
    cases = {
        "fi.txt": ("13.6.2018 klo 21.25 - Aino: Moi!\n14.6.2018 klo 9.05 - Eero: Huomenta\n",
                   [("Aino", "Moi!", utc(2018, 6, 13, 21, 25)), ("Eero", "Huomenta", utc(2018, 6, 14, 9, 5))]),
        "fi-ios.txt": ("[13.6.2018 klo 21.25.15] Aino: Moi!\n",
                       [("Aino", "Moi!", utc(2018, 6, 13, 21, 25, 15))]),
        "id.txt": ("13/03/24 14.05 - Budi: Halo\n13/03/24 14.06 - Sari: Oke, jam 7.30 ya\n",
                   [("Budi", "Halo", utc(2024, 3, 13, 14, 5)), ("Sari", "Oke, jam 7.30 ya", utc(2024, 3, 13, 14, 6))]),
        "es.txt": ("13/3/24, 2:05\u202fp.\u00a0m. - Ana: Hola\n",
                   [("Ana", "Hola", utc(2024, 3, 13, 14, 5))]),
    }
    for name, (text, want) in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db)
        assert run.code == 0, (name, run.err)
        assert [(m["speaker"], m["text"], m["timestamp"]) for m in stored(db)] == want, name
    bad = tmp_path / "bad.txt"
    bad.write_text("13.6.2018 klo 21.25 - Aino: Moi!\n14.6.2018 klo 21.75 - Eero: no such minute\n", encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", bad, "--path", tmp_path / "bad.db"), "bad.txt:2:", "date")


def test_whatsapp_heads_of_phones_in_korean_chinese_japanese_arabic_persian_and_more(tmp_path, capsys) -> None:
    """Each phone writes the head in its language's short date and time: Korean "2024. 3. 11. 오후 9:00" (year
    first, dots with spaces, day period before the time), Chinese "2024/3/11 下午9:00" (iOS: a thin space, the
    flexible day periods 晚上 "evening" and 凌晨 "before dawn"), Japanese "午後0:30" (a 12-hour clock from 0),
    Arabic digits with right-to-left marks and the Arabic comma, Persian digits, Turkish "ÖS 9:00", Greek
    "μ.μ.", Vietnamese "CH" or the time before the date, Hungarian "2024. 03. 11. du. 9:00", Croatian "11. 03.
    2024." and Bulgarian "11.03.24 г., 21:00". Such files were refused as "not a format hippo ingest reads" or
    "not valid JSON", and Turkish "ÖS 9:00" was stored at 09:00."""
    rlm = "\u200f"
    cases = {
        "ko.txt": ("2024. 3. 11. 오후 8:59 - 메시지와 전화는 종단간 암호화됩니다. 자세히 알아보려면 누르세요.\n"
                   "2024. 3. 11. 오후 9:00 - 민준: 내일 몇 시에 만나?\n"
                   "2024. 3. 12. 오전 1:05 - 서연: 10시 어때?\n역 앞에서\n",
                   [("민준", "내일 몇 시에 만나?", utc(2024, 3, 11, 21)),
                    ("서연", "10시 어때?\n역 앞에서", utc(2024, 3, 12, 1, 5))]),
        "ko-ios.txt": ("[24. 3. 11. 오후 9:00:05] 민준: 안녕\n[24. 3. 12. 오전 12:10:00] 서연: 잘 자\n",
                       [("민준", "안녕", utc(2024, 3, 11, 21, 0, 5)), ("서연", "잘 자", utc(2024, 3, 12, 0, 10))]),
        "zh.txt": ("2024/3/11 下午9:00 - 张伟: 明天见\n2024/3/12 上午8:15 - 李娜: 好的\n",
                   [("张伟", "明天见", utc(2024, 3, 11, 21)), ("李娜", "好的", utc(2024, 3, 12, 8, 15))]),
        "zh-ios.txt": ("[2024/3/11\u2009晚上9:00:05] 张伟: 明天见\n[2024/3/12\u2009凌晨1:02:00] 李娜: 还没睡\n"
                       "[2024/3/12\u2009中午12:30:00] 张伟: 午饭\n",
                       [("张伟", "明天见", utc(2024, 3, 11, 21, 0, 5)), ("李娜", "还没睡", utc(2024, 3, 12, 1, 2)),
                        ("张伟", "午饭", utc(2024, 3, 12, 12, 30))]),
        "ja.txt": ("[2024/03/11 午前11:59:00] 翔太: お昼どこ?\n[2024/03/11 午後0:30:00] 美咲: 駅前\n",
                   [("翔太", "お昼どこ?", utc(2024, 3, 11, 11, 59)), ("美咲", "駅前", utc(2024, 3, 11, 12, 30))]),
        "ar.txt": (f"٢٤{rlm}/٤{rlm}/٢٠٢٢، ٢:٠٦ م - الرسائل والمكالمات مشفرة تمامًا بين الطرفين.\n"
                   f"٢٤{rlm}/٤{rlm}/٢٠٢٢، ٢:٠٧ م - عمار لبنان: السلام عليكم\n"
                   f"٢٥{rlm}/٤{rlm}/٢٠٢٢، ٩:٠٠ ص - أحمد: صباح الخير\n",
                   [("عمار لبنان", "السلام عليكم", utc(2022, 4, 24, 14, 7)),
                    ("أحمد", "صباح الخير", utc(2022, 4, 25, 9))]),
        "ar-no-comma.txt": (f"١١{rlm}/٣{rlm}/٢٠٢٤ ٩:٠٠ م - أحمد: مرحبا\n",
                            [("أحمد", "مرحبا", utc(2024, 3, 11, 21))]),
        "fa.txt": ("۲۰۲۱/۵/۳۰، ۱۸:۴۴ - پیام‌ها و تماس‌ها سرتاسر رمزگذاری شده‌اند.\n"
                   "۲۰۲۱/۵/۳۰، ۱۸:۴۴ - Sattar-b: سلام،خسته نباشید\n"
                   "۲۰۲۱/۵/۳۰، ۱۸:۴۵ - شطرنج: سلام مچکرم\n",
                   [("Sattar-b", "سلام،خسته نباشید", utc(2021, 5, 30, 18, 44)),
                    ("شطرنج", "سلام مچکرم", utc(2021, 5, 30, 18, 45))]),
        "tr.txt": ("11.03.2024 ÖS 9:00 - Ali: Merhaba\n12.03.2024 ÖÖ 8:30 - Ayşe: Günaydın\n",
                   [("Ali", "Merhaba", utc(2024, 3, 11, 21)), ("Ayşe", "Günaydın", utc(2024, 3, 12, 8, 30))]),
        "el.txt": ("11/3/24, 9:00 μ.μ. - Νίκος: Γεια\n12/3/24, 8:00 π.μ. - Μαρία: Καλημέρα\n",
                   [("Νίκος", "Γεια", utc(2024, 3, 11, 21)), ("Μαρία", "Καλημέρα", utc(2024, 3, 12, 8))]),
        "vi.txt": ("11/03/2024, 9:00 CH - Minh: Xin chào\n12/03/2024, 7:00 SA - Lan: Chào buổi sáng\n",
                   [("Minh", "Xin chào", utc(2024, 3, 11, 21)), ("Lan", "Chào buổi sáng", utc(2024, 3, 12, 7))]),
        "vi-time-first.txt": ("21:00, 11/03/2024 - Minh: Xin chào\n",
                              [("Minh", "Xin chào", utc(2024, 3, 11, 21))]),
        "hu.txt": ("2024. 03. 11. du. 9:00 - Bence: Szia\n2024. 03. 12. 14:00 - Anna: Helló\n",
                   [("Bence", "Szia", utc(2024, 3, 11, 21)), ("Anna", "Helló", utc(2024, 3, 12, 14))]),
        "hr.txt": ("11. 03. 2024. 21:00 - Ivan: Bok\n", [("Ivan", "Bok", utc(2024, 3, 11, 21))]),
        "bg.txt": ("11.03.24 г., 21:00 - Иван: Здравей\n", [("Иван", "Здравей", utc(2024, 3, 11, 21))]),
        # a day period matched ignoring case is looked up case-folded: the long s "ſ" matches "s"
        "folded.txt": ("11.03.2024 ÖS 9:00 - Ali: Merhaba\n11.03.2024 Öſ 9:05 - Ali: ...\n",
                       [("Ali", "Merhaba", utc(2024, 3, 11, 21)), ("Ali", "...", utc(2024, 3, 11, 21, 5))]),
    }
    for name, (text, want) in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db)
        assert run.code == 0, (name, run.err)
        assert [(m["speaker"], m["text"], m["timestamp"]) for m in stored(db)] == want, name


def test_whatsapp_dates_of_the_buddhist_and_japanese_calendars(tmp_path, capsys) -> None:
    """Thai phones date by the Buddhist era (2567 BE is 2024; Android may write it "67"), an iPhone in English on the
    Buddhist calendar adds "BE", one on the Japanese calendar writes the era ("R4" is Reiwa 4, 2022). The Thai
    chat was stored in the year 2567, the iPhones' exports were refused as "not valid JSON"."""
    cases = {
        "th.txt": ("11/3/2567 21:00 - สมชาย: สวัสดี\n12/3/2567 08:05 - สมหญิง: อรุณสวัสดิ์\n",
                   [("สมชาย", "สวัสดี", utc(2024, 3, 11, 21)), ("สมหญิง", "อรุณสวัสดิ์", utc(2024, 3, 12, 8, 5))]),
        "th-short.txt": ("11/3/67 21:00 - สมชาย: สวัสดี\n", [("สมชาย", "สวัสดี", utc(2024, 3, 11, 21))]),
        "buddhist-ios.txt": ("[3/18/2565 BE, 14:56:01] Elon: \u200eMessages and calls are end-to-end encrypted.\n"
                             "[3/27/2565 BE, 21:41:35] Dmitry: Hello World\n"
                             "[1/12/2566 BE, 15:34:36] Elon: Happy new year\n",
                             [("Dmitry", "Hello World", utc(2022, 3, 27, 21, 41, 35)),
                              ("Elon", "Happy new year", utc(2023, 1, 12, 15, 34, 36))]),
        "japanese-ios.txt": ("[3/27/R4, 21:41:35] Dmitry: Hello World\n[1/7/R5, 23:32:30] Elon: Hi\n",
                             [("Dmitry", "Hello World", utc(2022, 3, 27, 21, 41, 35)),
                              ("Elon", "Hi", utc(2023, 1, 7, 23, 32, 30))]),
        "heisei.txt": ("[H31/04/30 23:59:00] 翔太: 平成最後\n", [("翔太", "平成最後", utc(2019, 4, 30, 23, 59))]),
    }
    for name, (text, want) in cases.items():
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db)
        assert run.code == 0, (name, run.err)
        assert [(m["speaker"], m["text"], m["timestamp"]) for m in stored(db)] == want, name


def test_whatsapp_exports_of_ios_before_2017_and_heads_of_another_form_inside_a_message(tmp_path, capsys) -> None:
    """iOS exports before 2017 put a colon after the time ("12.07.2017, 22:35:22: Ann: text"); such a file was refused
    as "not a format hippo ingest reads". A file holds one form of head, so a line of another form is the person's
    text (a pasted iOS line inside an Android export), not a message of its own."""
    old = tmp_path / "old.txt"
    old.write_text("12.07.2017, 22:35:22: Johannes Gruber: Was it good?\nThe food, I mean\n"
                   "13.07.2017, 09:12:44: R: Yes, it was\n", encoding="utf-8")
    assert cli(capsys, "ingest", old, "--path", tmp_path / "old.db").code == 0
    assert [(m["speaker"], m["text"], m["timestamp"]) for m in stored(tmp_path / "old.db")] == [
        ("Johannes Gruber", "Was it good?\nThe food, I mean", utc(2017, 7, 12, 22, 35, 22)),
        ("R", "Yes, it was", utc(2017, 7, 13, 9, 12, 44))]
    us = tmp_path / "us.txt"
    us.write_text("3/24/14, 1:59:59 PM: Sender Name: Message\n3/24/14, 2:01:00 PM: Ann: Reply\n", encoding="utf-8")
    assert cli(capsys, "ingest", us, "--path", tmp_path / "us.db").code == 0
    assert [(m["speaker"], m["text"], m["timestamp"]) for m in stored(tmp_path / "us.db")] == [
        ("Sender Name", "Message", utc(2014, 3, 24, 13, 59, 59)), ("Ann", "Reply", utc(2014, 3, 24, 14, 1))]
    mixed = tmp_path / "android.txt"
    mixed.write_text("12/03/2024, 09:02 - Ann: the log says\n[12/03/2024, 09:01:00] server: started\n"
                     "12/03/2024, 09:03 - Bo: ok\n", encoding="utf-8")
    assert cli(capsys, "ingest", mixed, "--path", tmp_path / "m.db").code == 0
    assert [(m["speaker"], m["text"]) for m in stored(tmp_path / "m.db")] == [
        ("Ann", "the log says\n[12/03/2024, 09:01:00] server: started"), ("Bo", "ok")]


def test_whatsapp_errors_name_the_line(tmp_path, capsys) -> None:
    f = tmp_path / "bad.txt"
    f.write_text("12/03/2024, 09:02 - Ann: fine\n31/02/2024, 09:03 - Bo: no such day\n", encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "s.db"), "bad.txt:2:", "date")
    g = tmp_path / "notices.txt"
    g.write_text("12/03/2024, 09:01 - Messages and calls are end-to-end encrypted.\n", encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", g, "--path", tmp_path / "s.db"), "notices.txt", "no messages")
    assert namespaces(tmp_path / "s.db") == []


def test_telegram_export(tmp_path, capsys) -> None:
    export = {"name": "Bo", "type": "personal_chat", "id": 42, "messages": [
        {"id": 1, "type": "service", "date": "2024-03-12T09:00:00", "actor": "Ann", "action": "phone_call"},
        {"id": 2, "type": "message", "date": "2024-03-12T09:02:10", "from": "Ann", "from_id": "user1",
         "text": "Did you book the resturant?"},
        {"id": 3, "type": "message", "date": "2024-03-12T09:05:00", "from": "Bo", "from_id": "user2",
         "text": ["Yes, ", {"type": "bold", "text": "Marisco"}, " by the ", {"type": "link", "text": "harbour"}]},
        {"id": 4, "type": "message", "date": "2024-03-12T09:06:00", "from": "Bo", "photo": "photos/1.jpg",
         "text": ""},
    ]}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert stored(db) == [
        {"text": "Did you book the resturant?", "speaker": "Ann", "role": "user", "timestamp": utc(2024, 3, 12, 9, 2, 10),
         "session_id": None, "metadata": {"telegram_id": 2, "from_id": "user1"}},
        {"text": "Yes, Marisco by the harbour", "speaker": "Bo", "role": "user", "timestamp": utc(2024, 3, 12, 9, 5),
         "session_id": None, "metadata": {"telegram_id": 3, "from_id": "user2"}},
    ]
    export["messages"][2]["date"] = "yesterday"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "t.db"), "result.json", "[2]", "date")
    assert namespaces(tmp_path / "t.db") == []


def test_telegram_forwards_replies_and_edits_keep_what_the_export_says(tmp_path, capsys) -> None:
    """Telegram Desktop's result.json: a forwarded message carries "forwarded_from" (its author; "from" is who
    forwarded it), a reply "reply_to_message_id", an edited one "edited". They were dropped, so a forward of Carl's
    words was Bo's with nothing to tell otherwise."""
    export = {"name": "Trip", "type": "private_group", "id": 7, "messages": [
        {"id": 10, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000", "from": "Bo",
         "from_id": "user2", "forwarded_from": "Carl", "text": "The ferry leaves at 7"},
        {"id": 11, "type": "message", "date": "2024-03-12T09:01:00", "date_unixtime": "1710234060", "from": "Ann",
         "from_id": "user1", "reply_to_message_id": 10, "edited": "2024-03-12T09:02:00",
         "edited_unixtime": "1710234120", "text": "Too early!"},
        {"id": 12, "type": "message", "date": "2024-03-12T09:03:00", "date_unixtime": "1710234180", "from": "Bo",
         "from_id": "user2", "text": "ok"}]}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"], m["metadata"]) for m in stored(db)] == [
        ("Bo", "The ferry leaves at 7", {"telegram_id": 10, "from_id": "user2", "forwarded_from": "Carl"}),
        ("Ann", "Too early!", {"telegram_id": 11, "from_id": "user1", "reply_to": 10, "edited": True}),
        ("Bo", "ok", {"telegram_id": 12, "from_id": "user2"}),
    ]


def test_telegram_deleted_accounts_are_told_apart_by_their_ids(tmp_path, capsys) -> None:
    """A deleted account's messages have "from": null and only "from_id" ("user123"): they were stored with no
    speaker, so two deleted accounts were one, and one nobody at all. Each speaks as Telegram shows it, "Deleted
    Account", with its id, and every message keeps its sender's id in metadata["from_id"]."""
    export = {"name": "Trip", "type": "private_group", "id": 7, "messages": [
        {"id": 1, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000", "from": None,
         "from_id": "user123", "text": "I'll bring the tent"},
        {"id": 2, "type": "message", "date": "2024-03-12T09:01:00", "date_unixtime": "1710234060", "from": None,
         "from_id": "user456", "text": "I'll bring the stove"},
        {"id": 3, "type": "message", "date": "2024-03-12T09:02:00", "date_unixtime": "1710234120", "from": "Ann",
         "from_id": "user1", "text": "Great"},
        {"id": 4, "type": "message", "date": "2024-03-12T09:03:00", "date_unixtime": "1710234180", "from": None,
         "from_id": "user123", "text": "And the lamp"},
        {"id": 5, "type": "message", "date": "2024-03-12T09:04:00", "date_unixtime": "1710234240", "from": None,
         "text": "no id at all"}]}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"], m["metadata"]) for m in stored(db)] == [
        ("Deleted Account user123", "I'll bring the tent", {"telegram_id": 1, "from_id": "user123"}),
        ("Deleted Account user456", "I'll bring the stove", {"telegram_id": 2, "from_id": "user456"}),
        ("Ann", "Great", {"telegram_id": 3, "from_id": "user1"}),
        ("Deleted Account user123", "And the lamp", {"telegram_id": 4, "from_id": "user123"}),
        (None, "no id at all", {"telegram_id": 5}),
    ]


def test_a_telegram_link_under_words_keeps_its_address(tmp_path, capsys) -> None:
    """A link written under words of its own is an entity {"type": "text_link", "text", "href"}: only its words were
    kept and the address was lost, where Slack's <https://...|words> keeps it."""
    export = {"name": "Trip", "type": "private_group", "id": 7, "messages": [
        {"id": 1, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000", "from": "Ann",
         "from_id": "user1", "text": ["Booked ", {"type": "text_link", "text": "this place",
                                                 "href": "https://example.com/marisco"},
                                     ", see ", {"type": "link", "text": "https://example.com/map"}]}]}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [m["text"] for m in stored(db)] == [
        "Booked this place (https://example.com/marisco), see https://example.com/map"]


def test_a_telegram_poll_keeps_its_question_and_answers(tmp_path, capsys) -> None:
    """Telegram Desktop writes a poll as a message with empty text and a "poll" object; it was left out as a message
    without words, where a WhatsApp export's poll is stored with its question and options."""
    export = {"name": "Trip", "type": "private_group", "id": 7, "messages": [
        {"id": 1, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000", "from": "Ann",
         "from_id": "user1", "text": "", "poll": {"question": "Where do we eat?", "closed": False,
                                                   "total_voters": 2, "answers": [
                                                       {"text": "Marisco", "voters": 2, "chosen": True},
                                                       {"text": "Ramiro", "voters": 0, "chosen": False}]}},
        {"id": 2, "type": "message", "date": "2024-03-12T09:01:00", "date_unixtime": "1710234060", "from": "Bo",
         "from_id": "user2", "text": "Marisco!"}]}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"]) for m in stored(db)] == [
        ("Ann", "Where do we eat?\n- Marisco\n- Ramiro"), ("Bo", "Marisco!")]


def test_telegram_export_of_a_whole_account(tmp_path, capsys) -> None:
    """Telegram Desktop's "Export Telegram data" writes result.json too, its chats under "chats" and "left_chats",
    each chat as the export of one chat writes it. It was refused: "a JSON object must hold 'messages' (OpenAI
    style) or 'conversation' (LoCoMo)"."""
    def chat(name, kind, ident, *msgs):
        return {"name": name, "type": kind, "id": ident, "messages": [
            {"id": i, "type": "message", "date": f"2024-03-12T09:{m:02d}:00", "date_unixtime": str(1710234000 + 60 * m),
             "from": who, "from_id": "user1", "text": text} for i, (m, who, text) in enumerate(msgs, 1)]}

    export = {"about": "Here is the data you requested.", "personal_information": {"first_name": "Ann"},
              "contacts": {"about": "...", "list": []},
              "chats": {"about": "This page lists all chats from this export.", "list": [
                  chat("Bo", "personal_chat", 42, (0, "Ann", "Lunch at one?"), (5, "Bo", "Yes, Marisco")),
                  chat("Trip", "private_group", 7, (2, "Cy", "The ferry leaves at 7"))]},
              "left_chats": {"about": "...", "list": [chat("Old club", "private_supergroup", 9, (3, "Dee", "bye"))]}}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"], m["timestamp"], m["metadata"]["chat"]) for m in stored(db)] == [
        ("Ann", "Lunch at one?", utc(2024, 3, 12, 9, 0), "Bo"),
        ("Cy", "The ferry leaves at 7", utc(2024, 3, 12, 9, 2), "Trip"),
        ("Dee", "bye", utc(2024, 3, 12, 9, 3), "Old club"),
        ("Bo", "Yes, Marisco", utc(2024, 3, 12, 9, 5), "Bo")]
    split = tmp_path / "split.db"
    assert cli(capsys, "ingest", f, "--path", split, "-n", "tg", "--split").code == 0
    assert namespaces(split) == ["tg.Bo", "tg.Old club", "tg.Trip"]
    assert [m["text"] for m in stored(split, "tg.Bo")] == ["Lunch at one?", "Yes, Marisco"]
    export["chats"]["list"][1]["messages"][0]["date"] = "yesterday"
    del export["chats"]["list"][1]["messages"][0]["date_unixtime"]
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    bad = json.dumps(export, indent=1).splitlines()
    line = next(k for k, text in enumerate(bad, 1) if '"yesterday"' in text)
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "t.db"), f"result.json:{line}",
                          "chats.list[1].messages[0]", "date")
    assert namespaces(tmp_path / "t.db") == []


def test_whatsapp_messages_that_open_with_a_line_break_and_notices_over_several_lines(tmp_path, capsys) -> None:
    f = tmp_path / "group.txt"
    f.write_text("12/03/2024, 09:01 - Ann changed the group description\n"
                 "Line two of the description\n"
                 "12/03/2024, 09:02 - Ann: \n"
                 "the text starts on the next line\n"
                 "12/03/2024, 09:03 - Bo: This message was deleted\n"
                 "12/03/2024, 09:05 - +351 912 345 678: who is this?\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"]) for m in stored(db)] == [
        ("Ann", "the text starts on the next line"), ("+351 912 345 678", "who is this?")]


def test_a_whatsapp_sender_shown_by_number_is_named_without_the_apps_direction_marks(tmp_path, capsys) -> None:
    """Android writes a sender who is no contact as the number inside a left-to-right embedding (U+202A ... U+202C),
    newer versions inside an isolate (U+2068 ... U+2069): the speaker kept them, so the same person was two speakers
    in two exports, and "+351 912 345 678" found neither."""
    f = tmp_path / "group.txt"
    f.write_text("12/03/2024, 09:05 - \u202a+351 912 345 678\u202c: who is this?\n"
                 "12/03/2024, 09:06 - \u2068+351 912 345 678\u2069: it is Carl\n"
                 "12/03/2024, 09:07 - Ann: hi Carl\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [m["speaker"] for m in stored(db)] == ["+351 912 345 678", "+351 912 345 678", "Ann"]


def test_messy_exports_of_real_chats(tmp_path, capsys) -> None:
    """What exporters write: Telegram's 'date' is the exporting machine's local time and 'date_unixtime' the instant;
    JSON strings and chat messages may hold U+2028 unescaped; a WhatsApp notice may quote a colon; a message may carry
    'session_id': null for --session to fill; an OpenAI-style list names the line of a bad record."""
    export = {"name": "Bo", "type": "personal_chat", "id": 42, "messages": [
        {"id": 2, "type": "message", "date": "2024-03-12T14:05:33", "date_unixtime": "1710245133", "from": "Ann",
         "text": "Lunch at one?"}]}
    tg = tmp_path / "result.json"
    tg.write_text(json.dumps(export), encoding="utf-8")
    assert cli(capsys, "ingest", tg, "--path", tmp_path / "tg.db").code == 0
    assert [m["timestamp"] for m in stored(tmp_path / "tg.db")] == [utc(2024, 3, 12, 12, 5, 33)]  # exported at UTC+2

    jl = tmp_path / "notes.jsonl"
    jl.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in (
        {"text": "first\u2028still the first", "session_id": None}, {"text": "second\u2029end"},
        {"text": "third", "session_id": "own"})) + "\n", encoding="utf-8")
    assert cli(capsys, "ingest", jl, "--path", tmp_path / "jl.db", "--session", "S1").code == 0
    assert [(m["text"], m["session_id"]) for m in stored(tmp_path / "jl.db")] == [
        ("first\u2028still the first", "S1"), ("second\u2029end", "S1"), ("third", "own")]

    wa = tmp_path / "WhatsApp Chat with Bo.txt"
    wa.write_text('12/03/2024, 09:01 - Ann changed the subject from "Trip" to "Trip: Lisbon"\n'
                  "12/03/2024, 09:02 - Bo: hi all\u2028second line of it\n", encoding="utf-8")
    assert cli(capsys, "ingest", wa, "--path", tmp_path / "wa.db").code == 0
    assert [(m["speaker"], m["text"]) for m in stored(tmp_path / "wa.db")] == [("Bo", "hi all\u2028second line of it")]

    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                                {"role": "user", "content": "when?", "timestamp": "garbage"}], indent=1),
                    encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", chat, "--path", tmp_path / "c.db"), "chat.json:10:2:", "[2]",
                          "timestamp")
    assert_one_line_error(cli(capsys, "ingest", jl, "--path", tmp_path / "x.db", "--encoding", "rot13"),
                          "--encoding", "not a text encoding")


def test_tool_call_ids_of_any_server_and_no_second_tool_calls(tmp_path, capsys) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "tool", "content": "42", "tool_call_id": 17}]), encoding="utf-8")
    assert cli(capsys, "ingest", chat, "--path", tmp_path / "a.db").code == 0
    assert [m["metadata"] for m in stored(tmp_path / "a.db")] == [{"tool_call_id": "17"}]
    chat.write_text(json.dumps([{"role": "assistant", "content": "x", "metadata": {"tool_calls": ["mine"]},
                                 "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", chat, "--path", tmp_path / "b.db"), "[0]", "tool_calls")
    assert namespaces(tmp_path / "b.db") == []


def test_jsonl_of_openai_conversations(tmp_path, capsys) -> None:
    """OpenAI's fine-tuning and batch files are JSONL with a conversation {"messages": [...]} on each line. Such a
    file of two lines or more was refused as "not valid JSON (Extra data)"; its messages are read line after line,
    and a bad one is named by its line and its place in that line's conversation."""
    f = tmp_path / "train.jsonl"
    f.write_text("\r\n".join(json.dumps(c) for c in [
        {"messages": [{"role": "system", "content": "You are terse."},
                      {"role": "user", "content": "Capital of France?"},
                      {"role": "assistant", "content": "Paris."}]},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
                      {"role": "assistant", "content": None, "tool_calls": [
                          {"id": "c1", "type": "function",
                           "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
                      {"role": "tool", "tool_call_id": "c1", "content": "-3 C"}]},
    ]) + "\r\n", encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert [(m["role"], m["text"]) for m in stored(db)] == [
        ("system", "You are terse."), ("user", "Capital of France?"), ("assistant", "Paris."),
        ("user", "Weather in Oslo?"), ("assistant", '[tool call weather({"city": "Oslo"})]'), ("tool", "-3 C")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n\n'
                   '{"messages": [{"role": "user", "content": "a"}, {"role": "wizard", "content": "b"}]}\n',
                   encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", bad, "--path", tmp_path / "b.db"), "bad.jsonl:3:", "messages[1]",
                          "role")
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n{"text": "a hippo message"}\n', encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", bad, "--path", tmp_path / "b.db"), "bad.jsonl:2:", "messages")
    assert namespaces(tmp_path / "b.db") == []


def test_openai_assistant_messages_that_refuse_or_speak(tmp_path, capsys) -> None:
    """The Chat Completions API's assistant message has content null when it refuses ("refusal" holds the words)
    or answers with audio ("audio.transcript" holds them); a file of such messages was refused whole for an empty
    content."""
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([
        {"role": "user", "content": "How do I pick my neighbour's lock?"},
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
        {"role": "user", "content": "Then say hi"},
        {"role": "assistant", "content": None, "audio": {"id": "audio_abc123", "expires_at": 1729018505,
                                                         "data": "UklGRg==", "transcript": "Hi there!"}},
    ], indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", chat, "--path", db)
    assert run.code == 0, run.err
    assert [(m["role"], m["text"]) for m in stored(db)] == [
        ("user", "How do I pick my neighbour's lock?"), ("assistant", "I can't help with that."),
        ("user", "Then say hi"), ("assistant", "Hi there!")]
    chat.write_text(json.dumps([{"role": "assistant", "content": None, "refusal": " "}]), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", chat, "--path", tmp_path / "b.db"), "[0]", "content")


def test_a_telegram_export_that_opens_with_an_undated_service_message(tmp_path, capsys) -> None:
    export = {"name": "Bo", "type": "personal_chat", "id": 42, "messages": [
        {"id": 1, "type": "service", "action": "create_group"},
        {"id": 2, "type": "message", "date": "2024-03-12T09:02:10", "date_unixtime": "1710234130", "from": "Ann",
         "text": "hi"}]}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", tmp_path / "s.db").code == 0
    assert [(m["speaker"], m["text"], m["metadata"]) for m in stored(tmp_path / "s.db")] == \
        [("Ann", "hi", {"telegram_id": 2})]
    # an OpenAI-style object with its own "type" and "id" stays OpenAI-style
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"id": "c1", "type": "conversation", "messages": [{"role": "user", "content": "yo"}]}),
                    encoding="utf-8")
    assert cli(capsys, "ingest", chat, "--path", tmp_path / "c.db").code == 0
    assert [(m["role"], m["text"]) for m in stored(tmp_path / "c.db")] == [("user", "yo")]


def test_locomo_and_beam_dates_are_read_as_strptime_reads_them_in_english():
    """The dates of LoCoMo ("1:56 pm on 8 May, 2023") and BEAM ("March-15-2024") files, every day of a leap year
    at several times. Oracle: ``strptime`` in the C locale, which the files are written in."""
    from datetime import date, timedelta

    from hippo.cli import sources

    day = date(2024, 1, 1)
    while day.year == 2024:
        for hour, minute in ((0, 0), (9, 5), (12, 30), (13, 56), (23, 59)):
            h12 = hour % 12 or 12
            text = f"{h12}:{minute:02d} {'am' if hour < 12 else 'pm'} on {day.day} {day.strftime('%B')}, {day.year}"
            assert sources._parse_locomo_date(text) == datetime.strptime(text, "%I:%M %p on %d %B, %Y")
        for name in (day.strftime("%B"), day.strftime("%b")):
            anchor = f"{name}-{day.day:02d}-{day.year}"
            assert sources.parse_beam_anchor(anchor, ()) == datetime.strptime(anchor, f"%{'B' if len(name) > 3 else 'b'}-%d-%Y")
        day += timedelta(days=1)
    for bad in ("13:00 pm on 8 May, 2023", "1:56 pm on 31 April, 2023", "1:56 pm on 8 Mai, 2023"):
        with pytest.raises(ValueError):
            sources._parse_locomo_date(bad)
    with pytest.raises(sources.SourceError):
        sources.parse_beam_anchor("Mai-15-2024", ())


def test_locomo_and_beam_dates_are_read_whatever_the_locale(tmp_path):
    """An application may set LC_TIME (here German, where strptime's %B wants "Mai" and %p nothing): the files'
    English dates are read all the same."""
    import os
    import shutil
    import subprocess
    import sys

    if shutil.which("localedef") is None or not os.path.exists("/usr/share/i18n/locales/de_DE"):
        pytest.skip("no German locale can be compiled here")
    subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(tmp_path / "de_DE.UTF-8")],
                   capture_output=True, text=True, timeout=120)
    if not (tmp_path / "de_DE.UTF-8").exists():
        pytest.skip("no German locale can be compiled here")
    code = ("import locale\n"
            "locale.setlocale(locale.LC_TIME, 'de_DE.UTF-8')\n"
            "from hippo.cli import sources\n"
            "print(sources._parse_locomo_date('1:56 pm on 8 May, 2023').isoformat())\n"
            "print(sources.parse_beam_anchor('March-15-2024', ()).isoformat())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "LOCPATH": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2023-05-08T13:56:00", "2024-03-15T00:00:00"]


def facebook(text: str) -> str:
    """A string as Facebook's "Download your information" JSON writes it: each UTF-8 byte escaped as a character."""
    return text.encode("utf-8").decode("latin-1")


def messenger_thread(messages: list[dict]) -> dict:
    """A Messenger message_<n>.json around ``messages`` (newest first, as the export lists them). The shape, media
    entries included, follows the Messenger sample of mlomb/chat-analytics (tests/samples/messenger/2A_7M.json)."""
    return {"participants": [{"name": facebook("Zoë")}, {"name": "Bo"}], "messages": messages,
            "title": facebook("Zoë"), "is_still_participant": True, "thread_type": "Regular",
            "thread_path": "inbox/zoe_aaaaaaaaaa", "magic_words": []}


def test_facebook_messenger_thread(tmp_path, capsys) -> None:
    """Facebook Messenger's (and Instagram's) JSON export was refused as "not a format hippo ingest reads". Its text
    is UTF-8 escaped byte by byte ("café" written "cafÃ©"), its messages newest first, and the app's records of
    calls, photos without words and unsent messages sit among them."""
    ms = 1710234000000  # 2024-03-12 09:00:00 UTC
    thread = messenger_thread([
        {"sender_name": "Bo", "timestamp_ms": ms + 9 * 60_000, "content": "Bo unsent a message.", "is_unsent": True},
        {"sender_name": "Bo", "timestamp_ms": ms + 8 * 60_000, "content": "Bo sent an attachment."},
        {"sender_name": "Bo", "timestamp_ms": ms + 7 * 60_000, "content": "Bo called you.", "type": "Call",
         "call_duration": 125},
        {"sender_name": facebook("Zoë"), "timestamp_ms": ms + 6 * 60_000,
         "photos": [{"uri": "messages/inbox/zoe_aaaaaaaaaa/photos/123123123123123.jpg",
                     "creation_timestamp": 1710234360}], "ip": "1.1.1.1"},
        {"sender_name": "Bo", "timestamp_ms": ms + 5 * 60_000, "content": "https://example.org/menu",
         "share": {"link": "https://example.org/menu"}},
        {"sender_name": "Bo", "timestamp_ms": ms + 60_000, "content": facebook("Sounds good, see you at 7 👍"),
         "reactions": [{"reaction": facebook("❤"), "actor": facebook("Zoë")}]},
        {"sender_name": facebook("Zoë"), "timestamp_ms": ms, "content": facebook("café 🎉"),
         "files": [{"uri": "messages/inbox/zoe_aaaaaaaaaa/files/menu.pdf", "creation_timestamp": 1710234000}]},
    ])
    f = tmp_path / "message_1.json"
    f.write_text(json.dumps(thread, indent=2), encoding="utf-8")  # ensure_ascii: "\u00c3\u00a9", as Facebook writes
    assert "\\u00c3\\u00a9" in f.read_text(encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "café 🎉", "speaker": "Zoë", "role": "user", "timestamp": utc(2024, 3, 12, 9, 0), "session_id": None,
         "metadata": {"attachments": ["menu.pdf"]}},
        {"text": "Sounds good, see you at 7 👍", "speaker": "Bo", "role": "user", "timestamp": utc(2024, 3, 12, 9, 1),
         "session_id": None, "metadata": {"reactions": [{"reaction": "❤", "actor": "Zoë"}]}},
        {"text": "https://example.org/menu", "speaker": "Bo", "role": "user", "timestamp": utc(2024, 3, 12, 9, 5),
         "session_id": None, "metadata": {"link": "https://example.org/menu"}},
    ]
    # A file written as proper UTF-8 (a character above U+00FF in it) is taken as it is: "Ã©" typed stays "Ã©"
    proper = messenger_thread([{"sender_name": "Bo", "timestamp_ms": ms, "content": "Ã© is mojibake, ✓"}])
    f.write_text(json.dumps(proper, ensure_ascii=False), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", tmp_path / "p.db").code == 0
    assert [m["text"] for m in stored(tmp_path / "p.db")] == ["Ã© is mojibake, ✓"]


def test_a_messenger_groups_settings_are_no_messages(tmp_path, capsys) -> None:
    """Messenger writes a group's renames, nicknames, photo, theme, members and pins as messages of the person who
    changed them ("Zoë named the group Trip."); they were stored as Zoë's words. What someone writes in their own
    words ("I left the group early") stays."""
    said = [("Zoë", "Zoë named the group Trip."), ("Bo", "Bo set the nickname for Zoë to Zo."),
            ("Zoë", "Zoë changed the group photo."), ("Bo", "Bo added Cy to the group."),
            ("Cy", "Cy changed the theme to Lo-Fi."), ("Zoë", "Zoë pinned a message."),
            ("Bo", "I left the group early"), ("Zoë", "Bo named the group Trip.")]
    doc = {"participants": [{"name": n} for n in ("Zoë", "Bo", "Cy")], "title": "Trip",
           "messages": [{"sender_name": who.encode().decode("latin-1"), "timestamp_ms": 1710234000000 - 60000 * k,
                         "content": text.encode().decode("latin-1"), "type": "Generic"}
                        for k, (who, text) in enumerate(said)]}
    f = tmp_path / "message_1.json"
    f.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"]) for m in stored(db)] == [("Zoë", "Bo named the group Trip."),
                                                               ("Bo", "I left the group early")]


def test_a_messenger_thread_over_several_files_is_ingested_file_by_file(tmp_path, capsys) -> None:
    """Facebook splits a long thread into message_1.json (the newest messages), message_2.json (older ones), ...
    ``hippo ingest`` reads one file: the files are ingested one after the other, the oldest (highest number) first,
    so the namespace holds the thread in time order; ingested the other way round, every message still has its own
    time, but the namespace lists them as they were added."""
    ms = 1710234000000
    older = messenger_thread([{"sender_name": "Bo", "timestamp_ms": ms + 60_000, "content": "two"},
                              {"sender_name": facebook("Zoë"), "timestamp_ms": ms, "content": "one"}])
    newer = messenger_thread([{"sender_name": "Bo", "timestamp_ms": ms + 180_000, "content": "four"},
                              {"sender_name": facebook("Zoë"), "timestamp_ms": ms + 120_000, "content": "three"}])
    (tmp_path / "message_2.json").write_text(json.dumps(older), encoding="utf-8")
    (tmp_path / "message_1.json").write_text(json.dumps(newer), encoding="utf-8")
    db = tmp_path / "s.db"
    for name in ("message_2.json", "message_1.json"):
        assert cli(capsys, "ingest", tmp_path / name, "--path", db).code == 0
    assert [(m["speaker"], m["text"], m["timestamp"]) for m in stored(db)] == [
        ("Zoë", "one", utc(2024, 3, 12, 9, 0)), ("Bo", "two", utc(2024, 3, 12, 9, 1)),
        ("Zoë", "three", utc(2024, 3, 12, 9, 2)), ("Bo", "four", utc(2024, 3, 12, 9, 3))]
    # a second run of a file already stored adds nothing
    assert cli(capsys, "ingest", tmp_path / "message_1.json", "--path", db).code == 0
    assert len(stored(db)) == 4
    back = tmp_path / "b.db"
    for name in ("message_1.json", "message_2.json"):
        assert cli(capsys, "ingest", tmp_path / name, "--path", back).code == 0
    assert [(m["text"], m["timestamp"]) for m in stored(back)] == [
        ("three", utc(2024, 3, 12, 9, 2)), ("four", utc(2024, 3, 12, 9, 3)),
        ("one", utc(2024, 3, 12, 9, 0)), ("two", utc(2024, 3, 12, 9, 1))]


def test_a_messenger_thread_exported_again_after_a_rename_holds_each_message_once(tmp_path, capsys) -> None:
    """Messenger names every message's sender as the person is called when the thread is exported: after Bo
    renamed himself Bobby, a later export wrote all his messages under the new name, each a record of another
    digest, so the whole thread was added again beside the first. A message is named by its millisecond and its
    words: the later export's version replaces the stored one, and every message is held once, under the name the
    latest export gives."""
    ms = 1710234000000
    def thread(bo: str, more: bool = False) -> dict:
        msgs = [{"sender_name": bo, "timestamp_ms": ms + 60_000, "content": "see you at 7"},
                {"sender_name": facebook("Zoë"), "timestamp_ms": ms, "content": "dinner?"}]
        if more:
            msgs.insert(0, {"sender_name": bo, "timestamp_ms": ms + 120_000, "content": "running late"})
        return messenger_thread(msgs)

    f = tmp_path / "message_1.json"
    db = tmp_path / "s.db"
    f.write_text(json.dumps(thread("Bo")), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    f.write_text(json.dumps(thread("Bobby", more=True)), encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert sorted((m["speaker"], m["text"]) for m in stored(db)) == [
        ("Bobby", "running late"), ("Bobby", "see you at 7"), ("Zoë", "dinner?")]
    # the same words at another millisecond are another message
    f.write_text(json.dumps(messenger_thread([{"sender_name": "Bobby", "timestamp_ms": ms + 180_000,
                                               "content": "see you at 7"}])), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert len(stored(db)) == 4


def test_a_messenger_end_to_end_encrypted_thread(tmp_path, capsys) -> None:
    """Messenger's download of its end-to-end encrypted chats (2024) writes a thread as <Name>_<n>.json in other
    words than "Download your information": participants as names, "threadName", and each message's "senderName",
    "timestamp" (milliseconds), "text", "type" (text, media, link, placeholder), "isUnsent", "media" [{"uri"}] and
    "reactions" [{"actor", "reaction"}]. It was refused as "not a format hippo ingest reads". The shape follows
    timelinize's reader of this export (datasources/facebook, e2ee)."""
    ms = 1710234000000  # 2024-03-12 09:00:00 UTC
    thread = {"participants": ["Zoë Adams", "Bo Lee"], "threadName": "Bo Lee_40", "messages": [
        {"senderName": "Zoë Adams", "timestamp": ms, "text": "café at 7? 🎉", "type": "text", "isUnsent": False,
         "media": [], "reactions": [{"actor": "Bo Lee", "reaction": "❤"}]},
        {"senderName": "Bo Lee", "timestamp": ms + 60_000, "text": "", "type": "media", "isUnsent": False,
         "media": [{"uri": "./media/6f1c2a.jpeg"}], "reactions": []},
        {"senderName": "Bo Lee", "timestamp": ms + 120_000, "text": "here is the menu", "type": "media",
         "isUnsent": False, "media": [{"uri": "./media/77aa01.pdf"}, {"uri": "Failed to download media"}],
         "reactions": []},
        {"senderName": "Zoë Adams", "timestamp": ms + 180_000, "text": "sorry, wrong chat", "type": "text",
         "isUnsent": True, "media": [], "reactions": []},
        {"senderName": "Bo Lee", "timestamp": ms + 240_000, "text": "This message is unavailable",
         "type": "placeholder", "isUnsent": False, "media": [], "reactions": []},
        {"senderName": "Bo Lee", "timestamp": ms + 300_000, "text": "https://example.org/menu", "type": "link",
         "isUnsent": False, "media": [], "reactions": []},
    ]}
    f = tmp_path / "Bo Lee_40.json"
    f.write_text(json.dumps(thread, ensure_ascii=False, indent=2), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "café at 7? 🎉", "speaker": "Zoë Adams", "role": "user", "timestamp": utc(2024, 3, 12, 9, 0),
         "session_id": None, "metadata": {"reactions": [{"reaction": "❤", "actor": "Bo Lee"}]}},
        {"text": "here is the menu", "speaker": "Bo Lee", "role": "user", "timestamp": utc(2024, 3, 12, 9, 2),
         "session_id": None, "metadata": {"attachments": ["77aa01.pdf"]}},
        {"text": "https://example.org/menu", "speaker": "Bo Lee", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 5), "session_id": None, "metadata": {}},
    ]
    assert all(m["metadata"]["source_digest"].startswith("messenger:") for m in stored(db, digests=True))
    # written newest first, and escaped byte by byte as the other download writes its strings: the same messages
    thread["messages"].reverse()
    escaped = {**thread, "messages": [{**m, "text": facebook(m["text"]), "senderName": facebook(m["senderName"]),
                                        "reactions": [{k: facebook(v) for k, v in r.items()} for r in m["reactions"]]}
                                       for m in thread["messages"]]}
    f.write_text(json.dumps(escaped, indent=2), encoding="utf-8")
    other = tmp_path / "e.db"
    assert cli(capsys, "ingest", f, "--path", other).code == 0
    assert stored(other) == stored(db)
    # ingested again: nothing added
    assert cli(capsys, "ingest", f, "--path", other).code == 0
    assert len(stored(other)) == 3
    # a message of a bad time names its field
    thread["messages"][0]["timestamp"] = "yesterday"
    f.write_text(json.dumps(thread), encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", tmp_path / "bad.db")
    assert run.code != 0 and "'timestamp'" in run.err and "messages[0]" in run.err
    assert not (tmp_path / "bad.db").exists()


def test_an_instagram_thread_and_malformed_messenger_files(tmp_path, capsys) -> None:
    """Instagram's export has Messenger's shape, with its own notices ("Liked a message", "Reacted 😂 to your
    message"); a file of that shape with a bad field is refused with one line naming the file, the message and the
    field, and nothing is stored."""
    ms = 1710234000000
    thread = {"participants": [{"name": "ann.k"}, {"name": "bo_b"}], "messages": [
        {"sender_name": "bo_b", "timestamp_ms": ms + 120_000, "content": facebook("Reacted 😂 to your message "),
         "is_geoblocked_for_viewer": False},
        {"sender_name": "ann.k", "timestamp_ms": ms + 60_000, "content": "Liked a message",
         "is_geoblocked_for_viewer": False},
        {"sender_name": "bo_b", "timestamp_ms": ms, "content": facebook("ça va? 😂"),
         "share": {"link": "https://www.instagram.com/p/abc/", "share_text": "a reel"},
         "is_geoblocked_for_viewer": False}],
        "title": "bo_b", "is_still_participant": True, "thread_path": "inbox/bo_b_17848610517479048",
        "magic_words": []}
    f = tmp_path / "message_1.json"
    f.write_text(json.dumps(thread, indent=2), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"], m["metadata"]) for m in stored(db)] == [
        ("bo_b", "ça va? 😂", {"link": "https://www.instagram.com/p/abc/"})]
    for k, (key, value, needles) in enumerate([
            ("timestamp_ms", "yesterday", ["messages[1]", "timestamp_ms", "milliseconds"]),
            ("content", ["hi"], ["messages[1]", "content", "must be a string"]),
            ("reactions", [{"actor": "ann.k"}], ["messages[1].reactions[0]", "reaction"]),
            ("photos", [{"creation_timestamp": 1}], ["messages[1].photos[0]", "uri"])]):
        bad = json.loads(json.dumps(thread))
        bad["messages"][1][key] = value
        f.write_text(json.dumps(bad, indent=2), encoding="utf-8")
        assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "message_1.json:", *needles)
    assert namespaces(tmp_path / "b.db") == []


def discord_message(mid: str, kind: str, when: str, content: str, author: tuple[str, str, str], bot: bool = False,
                    **extra) -> dict:
    """A message as DiscordChatExporter's JsonMessageWriter writes it (fields as in its source and in the Discord
    samples of mlomb/chat-analytics, tests/samples/discord/GC_3A_5M.json)."""
    uid, name, nickname = author
    return {"id": mid, "type": kind, "timestamp": when, "timestampEdited": None, "callEndedTimestamp": None,
            "isPinned": False, "content": content,
            "author": {"id": uid, "name": name, "discriminator": "0000", "nickname": nickname, "color": None,
                       "isBot": bot, "avatarUrl": "https://cdn.discordapp.com/embed/avatars/3.png"},
            "attachments": [], "embeds": [], "stickers": [], "reactions": [], "mentions": [], **extra}


def test_discord_channel_exported_by_discordchatexporter(tmp_path, capsys) -> None:
    """DiscordChatExporter's JSON of a channel was refused as "not a format hippo ingest reads". Its messages are read
    with the name the server shows as speaker; notices (a renamed channel, a pinned message, a call) and messages
    without words are left out; replies, edits, attachments and reactions are kept in metadata."""
    ann, plant, dice = ("111", "ann_k", "Ann"), ("333", "not a plant", "theplant"), ("999", "dice", "dice")
    export = {"guild": {"id": "0", "name": "Direct Messages",
                        "iconUrl": "https://cdn.discordapp.com/embed/avatars/0.png"},
              "channel": {"id": "1064990764406419508", "type": "DirectGroupTextChat", "categoryId": "0",
                          "category": "Group", "name": "a group chat", "topic": None},
              "dateRange": {"after": None, "before": None}, "messages": [
        discord_message("1", "ChannelNameChange", "2023-01-17T19:33:07.489+00:00", "Changed the channel name.", ann),
        discord_message("2", "Default", "2023-01-17T19:33:19.087+00:00", "Should honor nickname over name", plant,
                        timestampEdited="2023-01-17T19:35:00.000+00:00",
                        reactions=[{"emoji": {"id": "", "name": "👍", "isAnimated": False, "imageUrl": ""},
                                    "count": 2}]),
        discord_message("3", "ChannelPinnedMessage", "2023-01-17T19:34:00.000+00:00", "Pinned a message.", ann,
                        reference={"messageId": "2", "channelId": "1064990764406419508", "guildId": None}),
        discord_message("4", "Default", "2023-01-17T19:34:10.215+00:00", "", ann,
                        attachments=[{"id": "5", "url": "attachments/plan.png", "fileName": "plan.png",
                                      "fileSizeBytes": 1024}]),
        discord_message("6", "Reply", "2023-01-17T21:34:17.742+02:00", "agreed, see plan.pdf", ann,
                        attachments=[{"id": "7", "url": "attachments/plan.pdf", "fileName": "plan.pdf",
                                      "fileSizeBytes": 2048}],
                        reference={"messageId": "2", "channelId": "1064990764406419508", "guildId": None}),
        discord_message("8", "Call", "2023-01-17T19:40:00.000+00:00", "Started a call that lasted 3 minutes.", ann,
                        callEndedTimestamp="2023-01-17T19:43:00.000+00:00"),
        discord_message("9", "20", "2023-01-17T19:41:00.000+00:00", "You rolled a 4", dice, bot=True),
    ], "messageCount": 7}
    f = tmp_path / "Direct Messages - a group chat [1064990764406419508].json"
    f.write_text(json.dumps(export, indent=2, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "Should honor nickname over name", "speaker": "theplant", "role": "user",
         "timestamp": utc(2023, 1, 17, 19, 33, 19, 87000), "session_id": None,
         "metadata": {"discord_id": "2", "edited": True, "reactions": [{"emoji": "👍", "count": 2}]}},
        {"text": "agreed, see plan.pdf", "speaker": "Ann", "role": "user",
         "timestamp": "2023-01-17T21:34:17.742000+02:00", "session_id": None,  # the instant, with its offset
         "metadata": {"discord_id": "6", "reply_to": "2", "attachments": ["plan.pdf"]}},
        {"text": "You rolled a 4", "speaker": "dice", "role": "user", "timestamp": utc(2023, 1, 17, 19, 41),
         "session_id": None, "metadata": {"discord_id": "9", "bot": True}},
    ]
    # exported newest first (DiscordChatExporter can be asked for that), the messages still go in time order
    export["messages"].reverse()
    f.write_text(json.dumps(export, indent=2, ensure_ascii=False), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", tmp_path / "r.db").code == 0
    assert stored(tmp_path / "r.db") == stored(db)
    for key, value, needles in [("timestamp", "17/01/2023", ["timestamp", "ISO-8601"]),
                                ("author", "ann", ["author", "must be an object"]),
                                ("content", 5, ["content", "must be a string"]),
                                ("timestampEdited", "later", ["timestampEdited"]),
                                ("reactions", [{"count": 1}], ["reactions[0]", "emoji"])]:
        bad = json.loads(json.dumps(export))
        bad["messages"][2][key] = value
        f.write_text(json.dumps(bad, indent=2), encoding="utf-8")
        assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "[1064990764406419508].json:",
                              "messages[2]", *needles)
    assert namespaces(tmp_path / "b.db") == []


def slack_profile(display: str, real: str) -> dict:
    return {"avatar_hash": "g0f2c3a1b2c3", "image_72": "https://a.slack-edge.com/df10d/img/avatars/ava_0001-72.png",
            "first_name": real.split()[0], "real_name": real, "display_name": display, "team": "T0123ABCD",
            "name": real.split()[0].lower(), "is_restricted": False, "is_ultra_restricted": False}


def slack_day() -> list[dict]:
    """A day file of a Slack workspace export (general/2024-03-12.json), written after Slack's "How to read Slack
    data exports" (a message: type, user, text, ts; an edited one: "edited": {user, ts}) and the fields
    hfaran/slack-export-viewer reads (user_profile, subtype, thread_ts, files, reactions, bot_id, username)."""
    ann, bo = slack_profile("Ann", "Ann Kowalski"), slack_profile("", "Bo Berg")
    return [
        {"type": "message", "subtype": "channel_join", "ts": "1710234000.000100", "user": "U01ANN",
         "text": "<@U01ANN> has joined the channel", "user_profile": ann},
        {"client_msg_id": "5d9c1e0a-0000-4000-8000-000000000001", "type": "message", "user": "U01ANN",
         "text": "Menu for Friday &amp; Saturday: <https://example.org/menu|the menu>, ask <@U02BO> &lt;3",
         "ts": "1710234060.000200", "team": "T0123ABCD", "user_profile": ann, "thread_ts": "1710234060.000200",
         "reply_count": 1, "reply_users": ["U02BO"], "latest_reply": "1710234120.000300",
         "reactions": [{"name": "tada", "users": ["U02BO"], "count": 1}]},
        {"client_msg_id": "5d9c1e0a-0000-4000-8000-000000000002", "type": "message", "user": "U02BO",
         "text": "Fish on Friday, <#C01GEN|general> knows", "ts": "1710234120.000300", "team": "T0123ABCD",
         "user_profile": bo, "thread_ts": "1710234060.000200", "parent_user_id": "U01ANN",
         "edited": {"user": "U02BO", "ts": "1710234180.000000"}},
        {"type": "message", "subtype": "channel_topic", "ts": "1710234200.000400", "user": "U02BO",
         "text": "set the channel topic: Food", "topic": "Food", "user_profile": bo},
        {"type": "message", "user": "U02BO", "text": "", "ts": "1710234300.000500", "user_profile": bo,
         "files": [{"id": "F01", "name": "menu.pdf", "title": "menu.pdf", "mimetype": "application/pdf"}],
         "upload": True},
        {"type": "message", "user": "U02BO", "text": "the full list, <!here>", "ts": "1710234360.000600",
         "user_profile": bo, "files": [{"id": "F02", "name": "list.xlsx", "title": "List"}], "upload": True},
        {"type": "message", "subtype": "bot_message", "text": "Reminder: order by 5pm", "ts": "1710234420.000700",
         "username": "lunchbot", "bot_id": "B01LUNCH"},
        {"type": "message", "subtype": "tombstone", "text": "This message was deleted.", "ts": "1710234480.000800",
         "user": "USLACKBOT", "hidden": True},
    ]


def test_a_day_of_a_slack_channel(tmp_path, capsys) -> None:
    """A Slack export's day file (a JSON list of {"type": "message", "user", "text", "ts", ...}) was taken for a list
    of hippo messages and refused for its unknown fields ['ts', 'type', 'user']."""
    f = tmp_path / "2024-03-12.json"
    f.write_text(json.dumps(slack_day(), indent=4), encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [  # ts 1710234000 is 2024-03-12 09:00:00 UTC
        {"text": "Menu for Friday & Saturday: the menu (https://example.org/menu), ask @Bo Berg <3", "speaker": "Ann",
         "role": "user", "timestamp": utc(2024, 3, 12, 9, 1, 0, 200), "session_id": None,
         "metadata": {"slack_ts": "1710234060.000200", "reactions": [{"emoji": "tada", "count": 1}]}},
        {"text": "Fish on Friday, #general knows", "speaker": "Bo Berg", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 2, 0, 300), "session_id": None,
         "metadata": {"slack_ts": "1710234120.000300", "thread_ts": "1710234060.000200", "edited": True}},
        {"text": "the full list, @here", "speaker": "Bo Berg", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 6, 0, 600), "session_id": None,
         "metadata": {"slack_ts": "1710234360.000600", "attachments": ["list.xlsx"]}},
        {"text": "Reminder: order by 5pm", "speaker": "lunchbot", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 7, 0, 700), "session_id": None,
         "metadata": {"slack_ts": "1710234420.000700", "bot": True}},
    ]
    for key, value, needles in [("ts", "yesterday", ["[2]", "ts", "Slack timestamp"]),
                                ("text", ["x"], ["[2]", "text", "must be a string"]),
                                ("thread_ts", "soon", ["[2]", "thread_ts"]),
                                ("files", [{"name": "a.png"}, 3], ["[2].files[1]", "expected an object"]),
                                ("reactions", [{"count": 1}], ["[2].reactions[0]", "name"])]:
        bad = slack_day()
        bad[2][key] = value
        f.write_text(json.dumps(bad, indent=4), encoding="utf-8")
        assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "2024-03-12.json:", *needles)
    f.write_text(json.dumps([m for m in slack_day() if m.get("subtype") in ("channel_join", "tombstone")]),
                 encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"), "2024-03-12.json", "no messages")
    assert namespaces(tmp_path / "b.db") == []


def test_a_slack_integrations_message_has_its_words_in_attachments(tmp_path, capsys) -> None:
    """An integration's message (GitHub, an alert, a ticket) has no text and its words in legacy "attachments",
    whose "fallback" is the plain text summary Slack asks of them. Such messages were left out as having no words;
    a link's preview beside a person's text stays out of the text."""
    day = [{"type": "message", "subtype": "bot_message", "bot_id": "B1", "username": "GitHub", "text": "",
            "ts": "1710234000.000100", "attachments": [{"fallback": "[trip-app] Pull request opened: #12 Fix login",
                                                        "title": "#12 Fix login", "text": "Fixes the redirect"}]},
           {"type": "message", "subtype": "bot_message", "bot_id": "B2", "username": "Alerts", "text": "",
            "ts": "1710234030.000100", "attachments": [{"pretext": "Disk almost full", "text": "&lt;5% left"}]},
           {"type": "message", "user": "U1", "text": "see <https://example.com|this>", "ts": "1710234060.000200",
            "user_profile": {"display_name": "ann"},
            "attachments": [{"title": "Example Domain", "text": "This domain is for use in examples"}]}]
    f = tmp_path / "2024-03-12.json"
    f.write_text(json.dumps(day, indent=4), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["text"]) for m in stored(db)] == [
        ("GitHub", "[trip-app] Pull request opened: #12 Fix login"), ("Alerts", "Disk almost full\n<5% left"),
        ("ann", "see this (https://example.com)")]


def test_a_slack_workspace_export_as_slack_hands_it_over(tmp_path, capsys) -> None:
    """Slack hands over a workspace export as a zip: users.json, channels.json and a folder per channel with a file
    per day (Slack's "How to read Slack data exports"). It was refused as a zip of several chat files. Every day of
    every channel is read, in one time line, each message with its channel; --split gives each channel its own
    namespace; users.json names the people a message mentions."""
    import zipfile

    users = [{"id": "U01ANN", "team_id": "T0123ABCD", "name": "ann", "real_name": "Ann Kowalski",
              "profile": {"real_name": "Ann Kowalski", "display_name": "Ann"}},
             {"id": "U02BO", "team_id": "T0123ABCD", "name": "bo", "real_name": "Bo Berg",
              "profile": {"real_name": "Bo Berg", "display_name": ""}},
             {"id": "U03CY", "team_id": "T0123ABCD", "name": "cy",
              "profile": {"real_name": "Cy", "display_name": "cy"}}]
    channels = [{"id": "C01GEN", "name": "general", "created": 1700000000, "members": ["U01ANN", "U02BO"]},
                {"id": "C02RND", "name": "random", "created": 1700000000, "members": ["U01ANN", "U02BO"]}]
    random_11 = [{"type": "message", "user": "U02BO", "text": "who is <@U03CY>?", "ts": "1710150000.000100"}]
    random_12 = [{"type": "message", "user": "U01ANN", "text": "lunch in <#C01GEN>", "ts": "1710234090.000100"}]

    def export(path: Path, root: str = "", day: list | None = None) -> None:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(root + "users.json", json.dumps(users, indent=4))
            archive.writestr(root + "channels.json", json.dumps(channels, indent=4))
            archive.writestr(root + "integration_logs.json", json.dumps({"logs": []}))
            archive.writestr(root + "general/2024-03-12.json", json.dumps(day or slack_day(), indent=4))
            archive.writestr(root + "random/2024-03-11.json", json.dumps(random_11, indent=4))
            archive.writestr(root + "random/2024-03-12.json", json.dumps(random_12, indent=4))
            archive.writestr("__MACOSX/._users.json", b"\x00\x05\x16\x07")

    f = tmp_path / "Team Slack export Mar 11 2024 - Mar 12 2024.zip"
    export(f)
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    got = [(m["metadata"]["channel"], m["speaker"], m["text"]) for m in stored(db)]
    assert got == [
        ("random", "Bo Berg", "who is @cy?"),
        ("general", "Ann", "Menu for Friday & Saturday: the menu (https://example.org/menu), ask @Bo Berg <3"),
        ("random", "Ann", "lunch in #general"),
        ("general", "Bo Berg", "Fish on Friday, #general knows"),
        ("general", "Bo Berg", "the full list, @here"),
        ("general", "lunchbot", "Reminder: order by 5pm"),
    ]
    split = tmp_path / "split.db"
    assert cli(capsys, "ingest", f, "--path", split, "-n", "team", "--split").code == 0
    assert sorted(namespaces(split)) == ["team.general", "team.random"]
    assert [m["text"] for m in stored(split, "team.random")] == ["who is @cy?", "lunch in #general"]
    # the export unzipped and zipped again holds it all in one folder
    wrapped = tmp_path / "wrapped.zip"
    export(wrapped, root="Team Slack export/")
    assert cli(capsys, "ingest", wrapped, "--path", tmp_path / "w.db").code == 0
    assert stored(tmp_path / "w.db") == stored(db)
    # a bad message is named by the file inside the archive, its line and its field; nothing is stored
    bad_day = slack_day()
    bad_day[2]["ts"] = "noon"
    export(f, day=bad_day)
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"),
                          "2024.zip (general/2024-03-12.json):", "[2]", "ts")
    export(f)
    with zipfile.ZipFile(f, "a") as archive:
        archive.writestr("random/2024-03-13.json", '[{"ts": ')
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "b.db"),
                          "(random/2024-03-13.json):1:", "not valid JSON")
    # --split divides an export by channel; a single day file is one channel already
    day = tmp_path / "2024-03-12.json"
    day.write_text(json.dumps(slack_day()), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", day, "--path", tmp_path / "b.db", "--split"), "--split",
                          "Slack export")
    assert namespaces(tmp_path / "b.db") == []


# ------------------------------------------------------------------------------------------------- --timezone


def stamps(path: Path) -> list[tuple[str, str, float]]:
    """(text, timestamp with its offset, epoch seconds) of the stored messages."""
    with hippo.Memory(path) as mem:
        return [(m.text, m.timestamp.isoformat(), m.timestamp.timestamp()) for m in mem.list()]


def epoch(*args: int) -> float:
    return datetime(*args, tzinfo=timezone.utc).timestamp()


# New York, 2024: the clocks went forward at 02:00 EST on 10 March (to 03:00 EDT) and back at 02:00 EDT on 3 November
# (to 01:00 EST), so "01:10" after "01:50" that night is the second 01:10, in EST.
NEW_YORK_CHAT = textwrap.dedent("""\
    09/03/2024, 23:30 - Ann: I went hiking in the Catskills yesterday
    10/03/2024, 01:59 - Bo: Nice, which trail?
    10/03/2024, 03:00 - Ann: The Kaaterskill one
    03/11/2024, 01:30 - Ann: Still up?
    03/11/2024, 01:50 - Bo: Yes
    03/11/2024, 01:10 - Ann: The clocks just went back
    03/11/2024, 02:00 - Bo: Good night
    """)


def test_whatsapp_export_read_in_its_time_zone_across_both_daylight_saving_changes(tmp_path, capsys) -> None:
    f = tmp_path / "chat.txt"
    f.write_text(NEW_YORK_CHAT, encoding="utf-8")
    db = tmp_path / "ny.db"
    run = cli(capsys, "ingest", f, "--path", db, "--timezone", "America/New_York")
    assert run.code == 0, run.err
    assert stamps(db) == [
        ("I went hiking in the Catskills yesterday", "2024-03-09T23:30:00-05:00", epoch(2024, 3, 10, 4, 30)),
        ("Nice, which trail?", "2024-03-10T01:59:00-05:00", epoch(2024, 3, 10, 6, 59)),
        ("The Kaaterskill one", "2024-03-10T03:00:00-04:00", epoch(2024, 3, 10, 7, 0)),  # a minute later
        ("Still up?", "2024-11-03T01:30:00-04:00", epoch(2024, 11, 3, 5, 30)),
        ("Yes", "2024-11-03T01:50:00-04:00", epoch(2024, 11, 3, 5, 50)),
        ("The clocks just went back", "2024-11-03T01:10:00-05:00", epoch(2024, 11, 3, 6, 10)),
        ("Good night", "2024-11-03T02:00:00-05:00", epoch(2024, 11, 3, 7, 0)),
    ]
    # said at 04:30 UTC on 10 March, on the speaker's calendar 9 March: its day header and its "yesterday"
    with hippo.Memory(db) as mem:
        text = mem.recall("When did Ann go hiking in the Catskills?", budget_tokens=200).text
    assert "[9 March 2024]" in text and "Ann (8 March 2024): I went hiking" in text, text
    # a fixed offset: no daylight saving
    db = tmp_path / "fixed.db"
    assert cli(capsys, "ingest", f, "--path", db, "--timezone", "+05:30").code == 0
    assert [s for _, s, _ in stamps(db)][:3] == ["2024-03-09T23:30:00+05:30", "2024-03-10T01:59:00+05:30",
                                                 "2024-03-10T03:00:00+05:30"]
    assert stamps(db)[0][2] == epoch(2024, 3, 9, 18, 0)
    db = tmp_path / "west.db"
    assert cli(capsys, "ingest", f, "--path", db, "--timezone=-04:00").code == 0
    assert stamps(db)[0][1:] == ("2024-03-09T23:30:00-04:00", epoch(2024, 3, 10, 3, 30))
    # without --timezone the times are stored as written, read as UTC, as before
    db = tmp_path / "utc.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [s for _, s, _ in stamps(db)] == [utc(2024, 3, 9, 23, 30), utc(2024, 3, 10, 1, 59), utc(2024, 3, 10, 3),
                                             utc(2024, 11, 3, 1, 30), utc(2024, 11, 3, 1, 50),
                                             utc(2024, 11, 3, 1, 10), utc(2024, 11, 3, 2)]


def test_a_time_the_zone_skipped_an_unknown_zone_and_other_formats_are_refused(tmp_path, capsys) -> None:
    f = tmp_path / "chat.txt"
    f.write_text("09/03/2024, 23:30 - Ann: Leaving soon\n10/03/2024, 02:30 - Bo: Still awake\n", encoding="utf-8")
    db = tmp_path / "s.db"
    # 02:30 on 10 March 2024 never showed on a clock in New York (01:59 EST was followed by 03:00 EDT)
    assert_one_line_error(cli(capsys, "ingest", f, "--path", db, "--timezone", "America/New_York"),
                          "chat.txt:2", "--timezone", "2024-03-10 02:30", "does not exist")
    for zone, hint in (("Mars/Olympus", ""), ("america/new_york", "America/New_York"), ("Lisbon", "Europe/Lisbon"),
                       ("", ""), ("America", ""), ("../etc/passwd", ""), ("+24:00", ""), ("UTC+05:75", "")):
        assert_one_line_error(cli(capsys, "ingest", f, "--path", db, "--timezone", zone), "--timezone", hint)
    hippo_list = tmp_path / "messages.json"
    hippo_list.write_text(json.dumps([{"text": "hi", "timestamp": "2024-03-09T23:30:00"}]), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", hippo_list, "--path", db, "--timezone", "Europe/Lisbon"),
                          "--timezone", "messages.json", "offset")
    assert not db.exists()
    # the zone reads the same in the function the command calls
    from hippo.cli.sources import read_source
    from zoneinfo import ZoneInfo
    got = read_source(str(f), timezone=ZoneInfo("Europe/Lisbon")).records[1].item["timestamp"]
    assert got.isoformat() == "2024-03-10T02:30:00+00:00"
    with pytest.raises(hippo.InvalidInput, match="--timezone"):
        read_source(str(f), timezone="Nowhere/Zone")

    class NoOffset(tzinfo):  # a tzinfo of one's own that answers no offset
        def utcoffset(self, dt):
            return None

    with pytest.raises(hippo.InvalidInput, match="--timezone"):
        read_source(str(f), timezone=NoOffset())


def test_the_instants_of_telegram_messenger_discord_and_slack_keep_their_instant_in_the_zone(tmp_path, capsys) -> None:
    """Lisbon is UTC+01:00 in summer and UTC+00:00 in winter. 23:30 UTC on 1 July 2024 is 00:30 on 2 July there."""
    summer, winter = epoch(2024, 7, 1, 23, 30), epoch(2024, 12, 1, 23, 30)
    telegram = {"name": "Bo", "type": "personal_chat", "id": 42, "messages": [
        {"id": 1, "type": "message", "date": "2024-07-01T19:30:00", "date_unixtime": str(int(summer)),
         "from": "Ann", "text": "the instant, whatever 'date' says"},
        {"id": 2, "type": "message", "date": "2024-07-03T00:30:00", "from": "Bo", "text": "a local time alone"},
        {"id": 3, "type": "message", "date": "2024-12-01T23:30:00", "date_unixtime": str(int(winter)),
         "from": "Ann", "text": "winter"}]}
    messenger = {"participants": [{"name": "Ann"}], "messages": [
        {"sender_name": "Ann", "timestamp_ms": int(winter * 1000), "content": "winter"},
        {"sender_name": "Ann", "timestamp_ms": int(summer * 1000), "content": "summer"}]}
    discord = {"guild": {"name": "g"}, "channel": {"name": "c"}, "messages": [
        {"id": "1", "type": "Default", "timestamp": "2024-07-01T19:30:00-04:00", "content": "summer",
         "author": {"name": "ann"}},
        {"id": "2", "type": "Default", "timestamp": "2024-12-01T18:30:00-05:00", "content": "winter",
         "author": {"name": "ann"}}]}
    slack = [{"type": "message", "user": "U1", "text": "summer", "ts": f"{int(summer)}.000005"},
             {"type": "message", "user": "U1", "text": "winter", "ts": f"{int(winter)}.000000"}]
    expected = {
        "result.json": [("the instant, whatever 'date' says", "2024-07-02T00:30:00+01:00", summer),
                        ("a local time alone", "2024-07-03T00:30:00+01:00", epoch(2024, 7, 2, 23, 30)),
                        ("winter", "2024-12-01T23:30:00+00:00", winter)],
        "message_1.json": [("summer", "2024-07-02T00:30:00+01:00", summer),
                           ("winter", "2024-12-01T23:30:00+00:00", winter)],
        "discord.json": [("summer", "2024-07-02T00:30:00+01:00", summer),
                         ("winter", "2024-12-01T23:30:00+00:00", winter)],
        "2024-07-01.json": [("summer", "2024-07-02T00:30:00.000005+01:00", summer + 5e-6),
                            ("winter", "2024-12-01T23:30:00+00:00", winter)],
    }
    for name, doc in (("result.json", telegram), ("message_1.json", messenger), ("discord.json", discord),
                      ("2024-07-01.json", slack)):
        f = tmp_path / name
        f.write_text(json.dumps(doc), encoding="utf-8")
        db = tmp_path / f"{name}.db"
        run = cli(capsys, "ingest", f, "--path", db, "--timezone", "Europe/Lisbon")
        assert run.code == 0, run.err
        assert stamps(db) == expected[name], name
    # the day header of the summer message is Lisbon's day, 2 July (1 July in UTC)
    with hippo.Memory(tmp_path / "message_1.json.db") as mem:
        assert "[2 July 2024]" in mem.recall("summer", budget_tokens=100).text
    # without --timezone Discord keeps the exporting machine's offset, the others are UTC, as before
    db = tmp_path / "plain.db"
    assert cli(capsys, "ingest", tmp_path / "discord.json", "--path", db).code == 0
    assert [s for _, s, _ in stamps(db)] == ["2024-07-01T19:30:00-04:00", "2024-12-01T18:30:00-05:00"]


@pytest.mark.parametrize("name, doc, field", [
    ("discord.json", {"guild": {}, "channel": {}, "messages": [
        {"id": "1", "type": [], "timestamp": "2024-07-01T19:30:00-04:00", "content": "hi", "author": {"name": "a"}}]},
     "type"),
    ("message_1.json", {"participants": [], "messages": [
        {"sender_name": "Ann", "timestamp_ms": 1719876600000, "content": "hi", "type": {"kind": "Generic"}}]}, "type"),
    ("2024-07-01.json", [{"type": "message", "subtype": ["bot_message"], "user": "U1", "text": "hi",
                          "ts": "1719876600.000000"}], "subtype"),
])
def test_a_message_kind_that_is_a_list_or_an_object_is_named(tmp_path, capsys, name, doc, field) -> None:
    """The kind of a Discord, Messenger or Slack message was looked up in a set as it was: a list or an object there
    ended the command with "unexpected TypeError: unhashable type", naming no file, line or field."""
    f = tmp_path / name
    f.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", tmp_path / "s.db")
    assert_one_line_error(run, name, f"field '{field}'")
    assert "TypeError" not in run.err
    assert namespaces(tmp_path / "s.db") == []


# ------------------------------------------------------------------------------------------ files read as streams


def whatsapp_lines(n: int) -> str:
    return "".join(f"{1 + k // 1440 % 28:02d}/03/2024, {k // 60 % 24:02d}:{k % 60:02d} - {('Ann', 'Bo')[k % 2]}: "
                   f"line {k} of the chat about the harbour trip\n" for k in range(n))


def test_a_large_file_is_read_as_a_stream_not_held(tmp_path) -> None:
    """Checking every record of a WhatsApp export or a JSONL file held the whole file's text and every message at
    once, about six times the file's size; read as a stream, a pass holds the record being read."""
    import tracemalloc

    from hippo.cli import ingest
    from hippo.cli.sources import open_source

    chat = tmp_path / "chat.txt"
    chat.write_text(whatsapp_lines(20000), encoding="utf-8")
    notes = tmp_path / "notes.jsonl"
    notes.write_text(numbered(20000), encoding="utf-8")
    config = hippo.Config()
    for f, fmt in ((chat, "whatsapp"), (notes, "jsonl")):
        size = f.stat().st_size
        with open_source(str(f)) as src:
            assert src.format == fmt and src.records == []
            groups = ingest._groups(src, "default", False, src.each)
            ingest._validate(config, src, groups)  # the tokenizer's caches filled
            tracemalloc.start()
            try:
                ingest._validate(config, src, groups)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert groups[0].n == 20000
            # every record is read again in the file's order, the same as a read of the whole file gives
            with_list = read_source_items(f)
            assert [r.item for r in src.each()] == with_list
        assert peak < size // 4, (f.name, peak, size)  # the whole file held (as before) is 6 times its size


def read_source_items(f: Path) -> list[dict]:
    from hippo.cli.sources import read_source
    return [r.item for r in read_source(str(f)).records]


def test_a_bad_message_at_the_end_of_a_whatsapp_export_stores_nothing_and_creates_no_store(tmp_path, capsys) -> None:
    f = tmp_path / "chat.txt"
    f.write_text(whatsapp_lines(1200) + "31/02/2024, 10:00 - Ann: a day February never had\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert_one_line_error(cli(capsys, "ingest", f, "--path", db, "--batch", "500"), "chat.txt:1201:",
                          "not a date")
    assert not db.exists()
    f.write_text(whatsapp_lines(1200), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db, "--batch", "500").code == 0
    assert [m["text"] for m in stored(db)] == [f"line {k} of the chat about the harbour trip" for k in range(1200)]


@pytest.mark.parametrize("change", ["append", "same size and time"])
def test_a_file_that_changes_between_the_check_and_the_writes_stores_nothing(tmp_path, capsys, monkeypatch,
                                                                             change) -> None:
    """The records written are the records checked: a file changed after its check (a line appended; or bytes
    rewritten in place with its size and modification time put back) is refused, and what was written of it is
    deleted again."""
    from hippo.cli import ingest

    f = tmp_path / "notes.jsonl"
    f.write_text(numbered(1200), encoding="utf-8")
    db = tmp_path / "s.db"
    checked = ingest._validate

    def then_change(config, source, groups):
        checked(config, source, groups)
        st = f.stat()
        if change == "append":
            with open(f, "a", encoding="utf-8") as out:
                out.write(json.dumps({"text": "written after the check"}) + "\n")
        else:
            data = f.read_bytes()
            f.write_bytes(data[:-20] + data[-20:].replace(b"1200", b"9999"))  # the last record's k
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
            assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns

    monkeypatch.setattr(ingest, "_validate", then_change)
    run = cli(capsys, "ingest", f, "--path", db, "--batch", "500")
    assert_one_line_error(run, "notes.jsonl", "changed while it was being read")
    assert stored(db) == []
    monkeypatch.setattr(ingest, "_validate", checked)
    assert cli(capsys, "ingest", f, "--path", db, "--batch", "500").code == 0
    assert len(stored(db)) == 1200 + (change == "append")


def test_a_killed_whatsapp_ingest_resumes_from_the_file_read_again(tmp_path) -> None:
    """A run killed between two batches, then run again: the namespace holds the file's messages once each, the
    resume found by reading the file and the namespace as streams."""
    f = tmp_path / "chat.txt"
    f.write_text(whatsapp_lines(1300), encoding="utf-8")
    db = tmp_path / "s.db"
    script = "\n".join([
        "import os, sys", "import hippo", "real, calls = hippo.Memory.add_many, []",
        "def add_many(self, items):", "    calls.append(1)", "    if len(calls) == 3:", "        os._exit(9)",
        "    return real(self, items)",
        "hippo.Memory.add_many = add_many", "from hippo.cli import main", "sys.exit(main(sys.argv[1:]))"])
    proc = subprocess.run([sys.executable, "-c", script, "ingest", str(f), "--path", str(db), "--batch", "500"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr
    assert len(stored(db)) == 1000
    run = hippo_cmd("ingest", f, "--path", db, "--batch", "500")
    assert run.code == 0, run.err
    assert "300 messages added after the 1000" in run.out
    assert [m["text"] for m in stored(db)] == [f"line {k} of the chat about the harbour trip" for k in range(1300)]


def test_a_pipe_is_read_once_and_kept_in_a_temporary_file(tmp_path) -> None:
    """Standard input cannot be read twice: it is copied to a temporary file, checked, then stored from there."""
    f = tmp_path / "chat.txt"
    f.write_text(whatsapp_lines(700) + "12/03/2024, 09:00 - Ann: the last one\n", encoding="utf-8")
    db = tmp_path / "s.db"
    run = hippo_cmd("ingest", "/dev/stdin", "--path", db, "--batch", "300", stdin=f.read_text(encoding="utf-8"))
    assert run.code == 0, run.err
    assert [m["text"] for m in stored(db)][-2:] == ["line 699 of the chat about the harbour trip", "the last one"]
    assert len(stored(db)) == 701
    broken = hippo_cmd("ingest", "/dev/stdin", "--path", tmp_path / "c.db",
                       stdin=numbered(10) + '{"text": "cut off\n')
    assert_one_line_error(broken, "/dev/stdin:11:", "not JSON")
    assert namespaces(tmp_path / "c.db") == []


# ------------------------------------------------------------------------------------ a chat exported again


def test_a_chat_exported_again_adds_only_its_new_messages(tmp_path) -> None:
    """A WhatsApp chat exported in March, then again in April (the March messages and the new ones): the namespace
    holds each message once. 1,234 messages are no whole number of batches, so the resume alone added all 1,500
    again (2,734)."""
    lines = whatsapp_lines(1500).splitlines(keepends=True)
    march, april = tmp_path / "march.txt", tmp_path / "april.txt"
    march.write_text("".join(lines[:1234]), encoding="utf-8")
    april.write_text("".join(lines), encoding="utf-8")
    db = tmp_path / "s.db"
    assert hippo_cmd("ingest", march, "--path", db).code == 0
    run = hippo_cmd("ingest", april, "--path", db)
    assert run.code == 0, run.err
    assert "266 messages added; 1234 messages of the file's 1500 were already stored" in run.out
    assert [m["text"] for m in stored(db)] == [f"line {k} of the chat about the harbour trip" for k in range(1500)]


def test_a_message_said_twice_in_one_minute_is_kept_twice_and_matched_once_each(tmp_path, capsys) -> None:
    """Each stored message stands for one record: a file that says "ok" twice in one minute, ingested over a
    namespace that holds one of them (and another "ok" at another time), gets the second one only; messages with no
    time are never matched this way (two files' untimed "ok" are two messages)."""
    db = tmp_path / "s.db"
    with hippo.Memory(db) as mem:
        mem.add("ok", speaker="Ann", timestamp="2024-03-12T09:00:00+00:00")
        mem.add("ok", speaker="Ann", timestamp="2024-03-12T10:00:00+00:00")
        mem.add("ok", speaker="Ann")
    f = tmp_path / "chat.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in [
        {"text": "ok", "speaker": "Ann", "timestamp": "2024-03-12T09:00:00+00:00"},
        {"text": "ok", "speaker": "Ann", "timestamp": "2024-03-12T09:00:00+00:00"},
        {"text": "ok", "speaker": "Ann"},
        {"text": "see you", "speaker": "Ann", "timestamp": "2024-03-12T09:30:00+00:00"}]), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    got = [(m["text"], m["timestamp"]) for m in stored(db)]
    assert len(got) == 3 + 3
    assert sum(1 for t, ts in got if t == "ok" and ts is not None and ts.startswith("2024-03-12T09:00")) == 2
    assert sum(1 for t, ts in got if t == "ok" and ts is None) == 2
    assert ("see you", "2024-03-12T09:30:00+00:00") in got


# ------------------------------------------------------------------- the same export read otherwise by a later version

REREAD_CHAT = (
    "03/05/2024, 09:00 - Ann: ok\n"
    "03/05/2024, 09:00 - Ann: ok\n"
    "03/05/2024, 09:01 - Bo: see you at the harbour\n"
    "then the ferry\n"
    "04/05/2024, 10:15 - Ann: the tickets are booked\n"
)


def test_a_chat_read_otherwise_by_a_later_version_is_not_added_again(tmp_path, capsys, monkeypatch) -> None:
    """A message was matched as the version ingesting it read it: the same WhatsApp export, read again by a version
    that takes its dates' day and month the other way round, added its 4 messages a second time (8). Each message
    keeps the digest of its lines as written (``metadata["source_digest"]``) and is matched by it: nothing is added,
    and the "ok" written twice stays two messages."""
    from hippo.cli import sources

    f = tmp_path / "chat.txt"
    f.write_text(REREAD_CHAT, encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    first = stored(db, digests=True)
    assert [(m["text"], m["timestamp"][:10]) for m in first] == [
        ("ok", "2024-05-03"), ("ok", "2024-05-03"), ("see you at the harbour\nthen the ferry", "2024-05-03"),
        ("the tickets are booked", "2024-05-04")]  # 03/05 then 04/05: the day changes, day first
    digests = [m["metadata"]["source_digest"] for m in first]
    assert all(d.startswith("whatsapp:") and len(d) == len("whatsapp:") + 32 for d in digests)
    assert digests[0] == digests[1] and len(set(digests)) == 3  # the two "ok" lines are the same record twice

    real = sources._whatsapp_order
    monkeypatch.setattr(sources, "_whatsapp_order", lambda heads: (not real(heads)[0], real(heads)[1]))
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert "0 messages added; 4 messages of the file's 4 were already stored" in run.out
    assert stored(db, digests=True) == first

    # exported again a day later, read the new way: the old messages are held, the new "ok" and the new line added
    f.write_text(REREAD_CHAT + "04/05/2024, 10:15 - Ann: ok\n05/05/2024, 08:00 - Bo: on board\n", encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert "2 messages added; 4 messages of the file's 6 were already stored" in run.out
    got = stored(db)
    assert [m["text"] for m in got] == [m["text"] for m in first] + ["ok", "on board"]
    assert got[-1]["timestamp"] == utc(2024, 5, 5, 8)  # read the new way: 05/05 either way


def test_identical_lines_of_a_chat_exported_again_are_matched_one_for_one(tmp_path, capsys, monkeypatch) -> None:
    """Two "ok" lines said in one minute are two messages; the chat exported again with a third, read otherwise,
    adds the third only."""
    from hippo.cli import sources

    f = tmp_path / "chat.txt"
    f.write_text("12/03/2024, 09:00 - Ann: ok\n12/03/2024, 09:00 - Ann: ok\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    f.write_text("12/03/2024, 09:00 - Ann: ok\n" * 3, encoding="utf-8")
    monkeypatch.setattr(sources, "_plain", lambda name: name.upper())  # the sender's name read otherwise
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert "1 message added; 2 messages of the file's 3 were already stored" in run.out
    assert [(m["text"], m["speaker"]) for m in stored(db)] == [("ok", "Ann"), ("ok", "Ann"), ("ok", "ANN")]


def test_an_edited_message_of_an_export_with_message_ids_replaces_the_one_stored(tmp_path, capsys) -> None:
    """A chat exported again after a message was edited (Telegram's "edited", Discord's "timestampEdited", Slack's
    "edited", Google Chat's new text) has a record of another digest: it was added beside the old text, so the
    namespace said both "at 7" and "at 8". These exports name each message by an id, which the edit keeps: the
    edited version replaces the stored one, keeping the others, and the message of the same id in another chat (a
    Telegram id is a chat's own) is left alone."""
    telegram = {"name": "Bo", "type": "personal_chat", "id": 42, "messages": [
        {"id": 1, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000", "from": "Ann",
         "from_id": "user1", "text": "dinner at 7"},
        {"id": 2, "type": "message", "date": "2024-03-12T09:01:00", "date_unixtime": "1710234060", "from": "Bo",
         "from_id": "user2", "text": "ok"}]}
    other_chat = {"name": "Cy", "type": "personal_chat", "id": 43, "messages": [
        {"id": 1, "type": "message", "date": "2024-03-11T08:00:00", "date_unixtime": "1710144000", "from": "Cy",
         "from_id": "user3", "text": "morning"}]}
    author = {"id": "111", "name": "ann", "nickname": "Ann", "isBot": False}
    discord = {"guild": {"id": "1", "name": "G"}, "channel": {"id": "2", "name": "general"}, "messages": [
        {"id": "900", "type": "Default", "timestamp": "2024-03-12T09:00:00+00:00", "timestampEdited": None,
         "content": "dinner at 7", "author": author},
        {"id": "901", "type": "Default", "timestamp": "2024-03-12T09:01:00+00:00", "timestampEdited": None,
         "content": "ok", "author": author}]}
    slack = [{"type": "message", "user": "U1", "text": "dinner at 7", "ts": "1710234000.000100"},
             {"type": "message", "user": "U2", "text": "ok", "ts": "1710234060.000200"}]
    google = {"messages": [
        {"creator": {"name": "Ann", "email": "ann@x.org", "user_type": "Human"},
         "created_date": "Tuesday, March 12, 2024 at 9:00:00 AM UTC", "text": "dinner at 7", "topic_id": "t0",
         "message_id": "g1/t0/t0"},
        {"creator": {"name": "Bo", "email": "bo@x.org", "user_type": "Human"},
         "created_date": "Tuesday, March 12, 2024 at 9:01:00 AM UTC", "text": "ok", "topic_id": "t0",
         "message_id": "g1/t0/m1"}]}
    files = {"result.json": telegram, "discord.json": discord, "2024-03-12.json": slack, "messages.json": google}
    db = tmp_path / "s.db"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(other_chat), encoding="utf-8")
    assert cli(capsys, "ingest", other, "--path", db, "-n", "result.json").code == 0
    for name, doc in files.items():
        (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
        run = cli(capsys, "ingest", tmp_path / name, "--path", db, "-n", name)
        assert run.code == 0, run.err

    # the first message edited, as each app's export writes an edit
    telegram["messages"][0].update(text="dinner at 8", edited="2024-03-12T09:30:00", edited_unixtime="1710235800")
    discord["messages"][0].update(content="dinner at 8", timestampEdited="2024-03-12T09:30:00+00:00")
    slack[0].update(text="dinner at 8", edited={"user": "U1", "ts": "1710235800.000000"})
    google["messages"][0]["text"] = "dinner at 8"
    for name, doc in files.items():
        (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
        run = cli(capsys, "ingest", tmp_path / name, "--path", db, "-n", name)
        assert run.code == 0, run.err
        assert "1 message added; 1 message of the file's 2 were already stored; 1 message stored before" in run.out, \
            (name, run.out)
        texts = sorted(m["text"] for m in stored(db, name))
        assert texts == (["dinner at 8", "morning", "ok"] if name == "result.json" else ["dinner at 8", "ok"]), name
        # ingested again: nothing changes
        before = stored(db, name, digests=True)
        run = cli(capsys, "ingest", tmp_path / name, "--path", db, "-n", name)
        assert run.code == 0 and "0 messages added" in run.out, (name, run.out)
        assert stored(db, name, digests=True) == before
    edited = next(m for m in stored(db, "discord.json") if m["text"] == "dinner at 8")
    assert edited["metadata"] == {"discord_id": "900", "edited": True}
    # the old export ingested after the new one: its version, not marked edited, is older than the edited one
    # stored (an edit cannot be undone), which stays; it used to replace it, the edit lost
    (tmp_path / "old.json").write_text(json.dumps({**discord, "messages": [
        {**discord["messages"][0], "content": "dinner at 7", "timestampEdited": None}, discord["messages"][1]]}),
        encoding="utf-8")
    before = stored(db, "discord.json", digests=True)
    run = cli(capsys, "ingest", tmp_path / "old.json", "--path", db, "-n", "discord.json")
    assert run.code == 0 and "0 messages added" in run.out, run.out
    assert stored(db, "discord.json", digests=True) == before
    # a later edit of it replaces it as the first did
    discord["messages"][0].update(content="dinner at 9", timestampEdited="2024-03-12T10:00:00+00:00")
    (tmp_path / "discord.json").write_text(json.dumps(discord), encoding="utf-8")
    assert cli(capsys, "ingest", tmp_path / "discord.json", "--path", db, "-n", "discord.json").code == 0
    assert sorted(m["text"] for m in stored(db, "discord.json")) == ["dinner at 9", "ok"]


def _telegram_chat(name: str, chat_id: int, text: str, edited: bool = False) -> dict:
    """A Telegram account export's personal chat of two messages: ``text`` by ``name`` (edited half an hour later
    when ``edited``), then "ok" by the account's owner."""
    first = {"id": 1, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000",
             "from": name, "from_id": f"user{chat_id}", "text": text}
    if edited:
        first.update(edited="2024-03-12T09:30:00", edited_unixtime="1710235800")
    return {"name": name, "type": "personal_chat", "id": chat_id, "messages": [
        first, {"id": 2, "type": "message", "date": "2024-03-12T09:01:00", "date_unixtime": "1710234060",
                "from": "Me", "from_id": "user0", "text": "ok"}]}


@pytest.mark.parametrize("step", ["first", "second", "undo"])
def test_replacing_edited_messages_is_all_or_nothing(tmp_path, location, capsys, monkeypatch, step) -> None:
    """The earlier versions of edited messages are deleted in the transaction that stores the last of a chat's new
    messages. A failure there (the first chat's, or the second's with --split) leaves the namespaces as they were:
    what the run wrote is deleted and what it replaced in the first chat put back, in one transaction. When that
    putting back fails, the first chat keeps its new version whole and the error says so: its earlier version used
    to be lost (deleted, its putting back failed, then its new version deleted by the undo), the error naming only
    the writes left. Running the same command again completes the run."""
    from hippo.store.postgres import PostgresStore
    from hippo.store.sqlite import SQLiteStore

    def account(edited: bool) -> dict:
        return {"chats": {"list": [_telegram_chat("Ann", 1, "at 8" if edited else "at 7", edited),
                                   _telegram_chat("Bo", 2, "Friday" if edited else "Thursday", edited)]}}

    f = tmp_path / "result.json"
    db = location
    f.write_text(json.dumps(account(False)), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db, "--split").code == 0

    def contents() -> dict:
        return {ns: sorted((m["text"], m["speaker"], m["timestamp"], json.dumps(m["metadata"], sort_keys=True))
                           for m in stored(db, ns, digests=True)) for ns in ("default.Ann", "default.Bo")}

    def texts() -> dict:
        return {ns: sorted(t for t, *_ in msgs) for ns, msgs in contents().items()}

    before = contents()
    assert texts() == {"default.Ann": ["at 7", "ok"], "default.Bo": ["Thursday", "ok"]}
    f.write_text(json.dumps(account(True)), encoding="utf-8")
    # the store fails inside a replacing transaction, its last statement (the deletion's record): the first chat's
    # or the second chat's; "undo": the second chat's, and then the putting back of the first chat's earlier version
    deletions = []
    fail_at = 1 if step == "first" else 2

    def failing(real):
        def record(self, cur, namespace, kind, *args, **kwargs):
            if kind == "delete":
                deletions.append(namespace)
                if len(deletions) == fail_at:
                    raise StoreError("disk I/O error")
            return real(self, cur, namespace, kind, *args, **kwargs)
        return record

    for cls in (SQLiteStore, PostgresStore):
        monkeypatch.setattr(cls, "_record", failing(cls._record))
    if step == "undo":
        def refusing(self, writes):  # the undo, putting back the first chat's earlier version ("at 7")
            raise StoreError("the connection was lost")

        monkeypatch.setattr(hippo.Memory, "write_many", refusing)
    run = cli(capsys, "ingest", f, "--path", db, "--split")
    assert run.code != 0 and "disk I/O error" in run.err, run.err
    monkeypatch.undo()
    if step != "undo":
        assert "nothing was stored" in run.err, run.err
        assert contents() == before
    else:
        assert "undoing it failed too" in run.err and "remain" in run.err, run.err
        assert texts() == {"default.Ann": ["at 8", "ok"], "default.Bo": ["Thursday", "ok"]}
    # the same command again completes it
    run = cli(capsys, "ingest", f, "--path", db, "--split")
    assert run.code == 0, run.err
    assert texts() == {"default.Ann": ["at 8", "ok"], "default.Bo": ["Friday", "ok"]}
    run = cli(capsys, "ingest", f, "--path", db, "--split")
    assert run.code == 0 and "0 messages added" in run.out, run.out


def test_a_run_killed_before_its_replacement_is_completed_by_the_next(tmp_path, capsys, monkeypatch) -> None:
    """A run killed after a chat's first batches, before the one that replaces the earlier versions of its edited
    messages: the earlier versions stay beside the batches stored; the same command again resumes after those, stores
    the rest and replaces them."""
    from hippo.cli import ingest

    msgs = [{"id": k, "type": "message", "date": f"2024-03-12T09:0{k}:00", "date_unixtime": str(1710234000 + 60 * k),
             "from": "Ann", "from_id": "user1", "text": f"message {k}"} for k in range(1, 6)]
    f = tmp_path / "result.json"
    db = tmp_path / "s.db"
    f.write_text(json.dumps({"name": "Ann", "type": "personal_chat", "id": 1, "messages": msgs[:2]}), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    msgs[0].update(text="message 1, edited", edited="2024-03-12T09:30:00", edited_unixtime="1710235800")
    f.write_text(json.dumps({"name": "Ann", "type": "personal_chat", "id": 1, "messages": msgs}), encoding="utf-8")
    real = ingest._add

    def killed(w, items, g, kept):
        if kept is not None:
            raise KeyboardInterrupt  # not undone: the process is gone
        return real(w, items, g, kept)

    monkeypatch.setattr(ingest, "_add", killed)
    monkeypatch.setattr(ingest, "_undo", lambda written: None)
    assert cli(capsys, "ingest", f, "--path", db, "--batch", "1").code != 0
    monkeypatch.undo()
    assert [m["text"] for m in stored(db)] == ["message 1", "message 2", "message 1, edited", "message 3",
                                               "message 4"]
    run = cli(capsys, "ingest", f, "--path", db, "--batch", "1")
    assert run.code == 0, run.err
    assert sorted(m["text"] for m in stored(db)) == ["message 1, edited", "message 2", "message 3", "message 4",
                                                     "message 5"]


def test_json_chat_exports_read_otherwise_are_not_added_again(tmp_path, capsys, monkeypatch) -> None:
    """Telegram (a link read otherwise, a deleted account named otherwise), Messenger (its escaped text read
    otherwise) and Discord and Slack (a later export where reactions, the author's picture and the files' signed
    addresses changed): each file ingested again adds nothing."""
    from hippo.cli import sources

    telegram = {"name": "Bo", "type": "personal_chat", "id": 42, "messages": [
        {"id": 2, "type": "message", "date": "2024-03-12T09:02:10", "date_unixtime": "1710234130", "from": "Ann",
         "from_id": "user1", "text": ["see ", {"type": "text_link", "text": "the menu", "href": "https://x.org/m"}]},
        {"id": 3, "type": "message", "date": "2024-03-12T09:05:00", "date_unixtime": "1710234300", "from": None,
         "from_id": "user9", "text": "I left"}]}
    messenger = messenger_thread([
        {"sender_name": facebook("Zoë"), "timestamp_ms": 1710234000000, "content": facebook("Café at 8?")},
        {"sender_name": "Bo", "timestamp_ms": 1710233000000, "content": "hi"}])
    author = {"id": "111", "name": "ann", "nickname": "Ann", "isBot": False, "avatarUrl": "https://cdn/a1.png"}
    discord = {"guild": {"id": "1", "name": "G"}, "channel": {"id": "2", "name": "general"}, "messages": [
        {"id": "900", "type": "Default", "timestamp": "2024-03-12T09:00:00+00:00", "timestampEdited": None,
         "isPinned": False, "content": "lunch?", "author": author, "reactions": [],
         "attachments": [{"id": "5", "url": "https://cdn.discordapp.com/a/5/m.png?ex=1&hm=aa", "fileName": "m.png"}]}]}
    slack = [{"type": "message", "user": "U1", "text": "lunch <@U2>?", "ts": "1710234060.000200",
              "user_profile": {"display_name": "ann", "real_name": "Ann"}}]
    files = {"result.json": telegram, "message_1.json": messenger, "discord.json": discord, "2024-03-12.json": slack}
    db = tmp_path / "s.db"
    for name, doc in files.items():
        f = tmp_path / name
        f.write_text(json.dumps(doc), encoding="utf-8")
        run = cli(capsys, "ingest", f, "--path", db, "-n", name)
        assert run.code == 0, run.err
    before = {name: stored(db, name, digests=True) for name in files}
    assert all(m["metadata"]["source_digest"].startswith(kind + ":")
               for name, kind in zip(files, ("telegram", "messenger", "discord", "slack")) for m in before[name])

    # a later version reads links, deleted accounts and escaped text otherwise
    monkeypatch.setattr(sources, "_telegram_text", lambda value, path: value if isinstance(value, str) else "".join(
        p if isinstance(p, str) else p["text"] for p in value))
    telegram["messages"][1]["from"] = "Deleted Account"
    monkeypatch.setattr(sources, "_facebook_text", lambda value, escaped: value)
    # a later export: a reaction, another picture, file addresses signed again, a new display name
    discord["messages"][0]["reactions"] = [{"emoji": {"id": None, "name": "👍"}, "count": 2}]
    author["avatarUrl"], author["nickname"] = "https://cdn/a2.png", "Annie"
    discord["messages"][0]["attachments"][0]["url"] = "https://cdn.discordapp.com/a/5/m.png?ex=2&hm=bb"
    slack[0]["user_profile"] = {"display_name": "annie", "real_name": "Ann"}
    slack[0]["reactions"] = [{"name": "tada", "users": ["U2"], "count": 1}]
    for name, doc in files.items():
        f = tmp_path / name
        f.write_text(json.dumps(doc), encoding="utf-8")
        run = cli(capsys, "ingest", f, "--path", db, "-n", name)
        assert run.code == 0, run.err
        assert "0 messages added" in run.out, (name, run.out)
        assert stored(db, name, digests=True) == before[name], name


def test_messages_stored_without_a_digest_are_matched_as_they_read(tmp_path, capsys, monkeypatch) -> None:
    """A namespace filled by a version that stored no digest: the same export ingested again adds nothing (its
    messages matched as this version reads them), the chat exported again adds its new messages, with digests."""
    from hippo.cli import ingest

    f = tmp_path / "chat.txt"
    f.write_text(REREAD_CHAT, encoding="utf-8")
    db = tmp_path / "s.db"
    with monkeypatch.context() as m:
        m.setattr(ingest, "_item", lambda rec: rec.item)
        assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert all("source_digest" not in m["metadata"] for m in stored(db, digests=True))
    f.write_text(REREAD_CHAT + "05/05/2024, 08:00 - Bo: on board\n", encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert "1 message added; 4 messages of the file's 5 were already stored" in run.out
    got = stored(db, digests=True)
    assert [m["text"] for m in got][-1] == "on board" and len(got) == 5
    assert "source_digest" in got[-1]["metadata"]


# --------------------------------------------------------------------------------------------- Google Chat


def test_a_google_chat_conversation_from_google_takeout(tmp_path, capsys) -> None:
    """Google Takeout's Google Chat/Groups/<DM or Space>/messages.json was refused as "not a format hippo ingest
    reads". The shape follows Takeout's: the creator's name and email, an English created_date in UTC (a narrow
    no-break space before AM and PM since 2023; a British account's day first, on a 24-hour clock), attached files,
    reactions by the reactors' emails."""
    doc = {"messages": [
        {"creator": {"name": "Ann Lee", "email": "ann@example.com", "user_type": "Human"},
         "created_date": "Tuesday, March 12, 2024 at 12:05:09\u202fAM UTC", "text": "Café at 8?",
         "topic_id": "t1", "message_id": "g1/t1/t1",
         "reactions": [{"emoji": {"unicode": "👍"}, "reactor_emails": ["bo@example.com", "cy@example.com"]},
                       {"emoji": {"custom_emoji": {"uid": "c1", "name": ":harbour:"}},
                        "reactor_emails": ["bo@example.com"]}]},
        {"creator": {"name": "Bo", "email": "bo@example.com", "user_type": "Human"},
         "created_date": "Tuesday, March 12, 2024 at 12:30:00\u202fPM UTC",
         "attached_files": [{"original_name": "menu.png", "export_name": "File-menu.png"}],
         "topic_id": "t1", "message_id": "g1/t1/m2"},
        {"creator": {"name": "Bo", "email": "bo@example.com", "user_type": "Human"},
         "created_date": "Tuesday, March 12, 2024 at 12:31:00 PM UTC", "text": "the menu, see the photo",
         "attached_files": [{"original_name": "menu2.png", "export_name": "File-menu2.png"}],
         "topic_id": "t1", "message_id": "g1/t1/m3"},
        {"creator": {"name": "Ann Lee", "email": "ann@example.com", "user_type": "Human"},
         "created_date": "Tuesday, March 12, 2024 at 1:00:00 PM UTC", "message_state": "DELETED",
         "topic_id": "t1", "message_id": "g1/t1/m4"},
        {"creator": {"name": "Standup", "email": "", "user_type": "Bot"},
         "created_date": "Monday, 11 March 2024 at 09:00:00 UTC", "text": "What did you do yesterday?",
         "topic_id": "t0", "message_id": "g1/t0/t0"},
    ]}
    f = tmp_path / "messages.json"
    f.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert stored(db) == [
        {"text": "What did you do yesterday?", "speaker": "Standup", "role": "user",
         "timestamp": utc(2024, 3, 11, 9), "session_id": None,
         "metadata": {"google_chat_id": "g1/t0/t0", "topic_id": "t0", "bot": True}},
        {"text": "Café at 8?", "speaker": "Ann Lee", "role": "user", "timestamp": utc(2024, 3, 12, 0, 5, 9),
         "session_id": None, "metadata": {"google_chat_id": "g1/t1/t1", "topic_id": "t1",
                                          "reactions": [{"emoji": "👍", "count": 2},
                                                        {"emoji": ":harbour:", "count": 1}]}},
        {"text": "the menu, see the photo", "speaker": "Bo", "role": "user", "timestamp": utc(2024, 3, 12, 12, 31),
         "session_id": None, "metadata": {"google_chat_id": "g1/t1/m3", "topic_id": "t1",
                                          "attachments": ["menu2.png"]}},
    ]
    assert all(m["metadata"]["source_digest"].startswith("google-chat:") for m in stored(db, digests=True))
    # read in a zone: the instant kept, with the zone's offset of that day
    assert cli(capsys, "ingest", f, "--path", db, "-n", "tokyo", "--timezone", "Asia/Tokyo").code == 0
    assert stored(db, "tokyo")[1]["timestamp"] == "2024-03-12T09:05:09+09:00"
    # ingested again: nothing added
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0 and "nothing added" in run.out

    from hippo.cli.sources import _google_chat_time
    assert _google_chat_time("Tuesday, March 12, 2024 at 12:05:33 AM GMT+2", ()).isoformat() == \
        "2024-03-12T00:05:33+02:00"

    doc["messages"][2]["created_date"] = "12.03.2024 12:31"
    f.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "t.db"), "messages.json", "[2]",
                          "created_date", "Tuesday, March 12, 2024 at 9:05:33 AM UTC")
    assert namespaces(tmp_path / "t.db") == []


# --------------------------------------------------------------------------------------------------- LINE

LINE_CHAT = (
    "[LINE] Chat history with Ann\n"
    "Saved on: 2024/03/13 10:00\n"
    "\n"
    "2024/03/12(Tue)\n"
    "09:00\tAnn\tDid you book the table?\n"
    "09:01\tBo\t\"Yes, for 8\n"
    "2024/03/20\n"
    "at the harbour, the \"\"blue\"\" one\"\n"
    "09:02\tAnn\t[Sticker]\n"
    "09:03\t\tCy joined the group.\n"
    "09:04\tBo\tBo unsent a message.\n"
    "21:30\tAnn\tsee you\n"
    "2024/03/13(Wed)\n"
    "00:15\tBo\t☎ Missed call\n"
    "00:16\tBo\t\"ok\" is all\n"
)


def test_a_line_chat_exported_as_text(tmp_path, capsys) -> None:
    """LINE's "Export chat history" text was refused as "not valid JSON" (its title starts with '['). The shape
    follows the app's: a title, a "Saved on:" line, a line per day, a message per line as time, sender and text
    apart by tabs, several lines inside quotation marks, the app's notices without a sender."""
    from hippo.cli import sources

    f = tmp_path / "[LINE] Chat with Ann.txt"
    f.write_text(LINE_CHAT, encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "Did you book the table?", "speaker": "Ann", "role": "user", "timestamp": utc(2024, 3, 12, 9),
         "session_id": None, "metadata": {}},
        {"text": 'Yes, for 8\n2024/03/20\nat the harbour, the "blue" one', "speaker": "Bo", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 1), "session_id": None, "metadata": {}},
        {"text": "see you", "speaker": "Ann", "role": "user", "timestamp": utc(2024, 3, 12, 21, 30),
         "session_id": None, "metadata": {}},
        {"text": '"ok" is all', "speaker": "Bo", "role": "user", "timestamp": utc(2024, 3, 13, 0, 16),
         "session_id": None, "metadata": {}},
    ]
    assert all(m["metadata"]["source_digest"].startswith("line:") for m in stored(db, digests=True))
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0 and "nothing added" in run.out
    # read as a stream, as a WhatsApp export is: the same records, none held
    from hippo.cli.sources import open_source
    with open_source(str(f)) as src:
        assert src.format == "line" and src.records == []
        assert [(r.item, r.digest) for r in src.each()] == [(r.item, r.digest)
                                                            for r in sources.read_source(str(f)).records]
    # the phone's clock in its zone
    assert cli(capsys, "ingest", f, "--path", db, "-n", "tokyo", "--timezone", "Asia/Tokyo").code == 0
    assert stored(db, "tokyo")[0]["timestamp"] == "2024-03-12T09:00:00+09:00"


def test_line_chats_of_phones_in_japanese_chinese_and_english_and_without_a_title(tmp_path, capsys) -> None:
    japanese = ("[LINE] Annとのトーク履歴\n保存日時：2024/03/13 10:00\n\n2024/03/12(火)\n"
                "午前9:05\tAnn\tおはよう\n午後0:30\tBo\t[写真]\n午後9:10\tBo\tまた明日\n")
    chinese = "[LINE] 與Ann的聊天記錄\n保存日期：2024/03/13 10:00\n\n2024/3/12（週二）\n下午09:10\tAnn\t晚安\n"
    english = "Tue, 3/12/2024\n9:05PM\tAnn\tgood night\n9:06 pm\tBo\tnight\n"
    expected = {
        "ja.txt": [("おはよう", "Ann", utc(2024, 3, 12, 9, 5)), ("また明日", "Bo", utc(2024, 3, 12, 21, 10))],
        "zh.txt": [("晚安", "Ann", utc(2024, 3, 12, 21, 10))],
        "en.txt": [("good night", "Ann", utc(2024, 3, 12, 21, 5)), ("night", "Bo", utc(2024, 3, 12, 21, 6))],
    }
    db = tmp_path / "s.db"
    for (name, want), text in zip(expected.items(), (japanese, chinese, english)):
        f = tmp_path / name
        f.write_text(text, encoding="utf-8")
        run = cli(capsys, "ingest", f, "--path", db, "-n", name[:2])
        assert run.code == 0, run.err
        assert [(m["text"], m["speaker"], m["timestamp"]) for m in stored(db, name[:2])] == want

    f = tmp_path / "bad.txt"
    f.write_text(LINE_CHAT.replace("2024/03/13(Wed)", "2024/02/30(Fri)"), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "t.db"), "bad.txt:13", "2024/02/30")
    # a day line of another form: refused, rather than the messages under it dated the day before
    f.write_text(LINE_CHAT.replace("2024/03/13(Wed)", "13.03.2024 (Mi.)"), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "t.db"), "bad.txt:13", "13.03.2024 (Mi.)",
                          "day line")
    f.write_text(LINE_CHAT.replace("21:30\tAnn", "25:30\tAnn"), encoding="utf-8")
    assert_one_line_error(cli(capsys, "ingest", f, "--path", tmp_path / "t.db"), "bad.txt:12", "25:30")
    assert namespaces(tmp_path / "t.db") == []


def test_a_chat_message_annotated_since_is_not_added_again(tmp_path, capsys) -> None:
    """A message whose metadata was updated after the ingest (a tag added with ``Memory.update``) no longer said what
    its record reads as, so the chat ingested again added it a second time; its digest, kept in its metadata, still
    names the record."""
    f = tmp_path / "chat.txt"
    f.write_text(REREAD_CHAT, encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    with hippo.Memory(db) as mem:
        first = mem.list()[2]
        mem.update(first.id, metadata={**first.metadata, "tag": "plans"})
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert [m["text"] for m in stored(db)] == ["ok", "ok", "see you at the harbour\nthen the ferry",
                                               "the tickets are booked"]
    assert stored(db)[2]["metadata"] == {"tag": "plans"}


# ---------------------------------------------------------------------------------- iMessage (imessage-exporter)

IMESSAGE_CHAT = (
    "May 17, 2022  9:29:42 AM (Read by you after 1 hour, 49 seconds)\n"
    "Ann Lee\n"
    "Lunch at the harbour?\n"
    "Reactions:\n"
    "Loved by Me\n"
    "\n"
    "    May 17, 2022  9:31:00 AM\n"
    "    Me\n"
    "    Yes, at noon\n"
    "\n"
    "May 17, 2022  9:31:00 AM\n"
    "Me\n"
    "Yes, at noon\n"
    "This message responded to an earlier message.\n"
    "\n"
    "May 17, 2022 10:02:11 AM Ann Lee renamed the conversation to Harbour\n"
    "\n"
    "May 17, 2022 12:05:00 PM\n"
    "Ann Lee\n"
    "~/Library/Messages/Attachments/ab/11/0F1E/IMG_1234.HEIC\n"
    "the menu\n"
    "\n"
    "May 17, 2022  9:00:00 PM, as we said\n"
    "Sent with Confetti\n"
    "\n"
    "May 17, 2022 12:06:00 PM\n"
    "Me\n"
    "~/Library/Messages/Attachments/cd/12/0F1F/IMG_1235.HEIC\n"
    "\n"
    "May 18, 2022 12:01:09 AM\n"
    "Ann Lee\n"
    "They deleted a message.\n"
    "\n"
    "May 18, 2022  1:00:00 AM\n"
    "Me\n"
    "good night\n"
    "\n"
)


def test_an_imessage_conversation_written_as_text_by_imessage_exporter(tmp_path, capsys) -> None:
    """imessage-exporter's text output was refused as "not a format hippo ingest reads". The shape follows its TXT
    writer: time (the read receipt after it), sender, lines, a blank line; reactions, the replies written again
    inside the message they answer, notes, effects, file paths and the app's notices are not the person's words."""
    f = tmp_path / "Ann Lee.txt"
    f.write_text(IMESSAGE_CHAT, encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "Lunch at the harbour?", "speaker": "Ann Lee", "role": "user",
         "timestamp": utc(2022, 5, 17, 9, 29, 42),
         "session_id": None, "metadata": {}},
        {"text": "Yes, at noon", "speaker": "Me", "role": "user", "timestamp": utc(2022, 5, 17, 9, 31),
         "session_id": None, "metadata": {}},
        {"text": "the menu\n\nMay 17, 2022  9:00:00 PM, as we said", "speaker": "Ann Lee", "role": "user",
         "timestamp": utc(2022, 5, 17, 12, 5), "session_id": None, "metadata": {"attachments": ["IMG_1234.HEIC"]}},
        {"text": "good night", "speaker": "Me", "role": "user", "timestamp": utc(2022, 5, 18, 1),
         "session_id": None, "metadata": {}},
    ]
    assert all(m["metadata"]["source_digest"].startswith("imessage:") for m in stored(db, digests=True))
    # exported again once the last message was read: the same messages, the same records
    from hippo.cli.sources import open_source, read_source
    before = [r.digest for r in read_source(str(f)).records]
    f.write_text(IMESSAGE_CHAT.replace("May 18, 2022  1:00:00 AM\n", "May 18, 2022  1:00:00 AM (Read by them after "
                                       "2 minutes)\n"), encoding="utf-8")
    assert [r.digest for r in read_source(str(f)).records] == before
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0 and "nothing added" in run.out, run.out
    with open_source(str(f)) as src:
        assert src.format == "imessage" and src.records == []
        assert [r.item for r in src.each()] == [r.item for r in read_source(str(f)).records]
    assert cli(capsys, "ingest", f, "--path", db, "-n", "ny", "--timezone", "America/New_York").code == 0
    assert stored(db, "ny")[0]["timestamp"] == "2022-05-17T09:29:42-04:00"


# ----------------------------------------------------------------------------------- Signal (signal-export)

def signal_line(date: str, sender: str, body: str, **fields) -> str:
    """One line of the data.json signal-export (carderne/signal-export) writes: its Message dataclass as JSON, the
    body with the two spaces it adds for Markdown, the quote as "\\n\\n> text\\n\\n", reactions as [name, emoji]."""
    msg = {"date": date, "sender": sender, "body": body + "  ", "quote": "", "sticker": "", "reactions": [],
           "attachments": [], "deleted": False, "call": False, "missed": False}
    msg.update(fields)
    return json.dumps(msg, ensure_ascii=False)


def test_a_signal_chat_exported_by_signal_export(tmp_path, capsys) -> None:
    """signal-export's data.json (a message a line: date as the exporting machine's wall clock, sender, body,
    quote, reactions, attachments, deleted) was refused: its lines have no "text". Calls, deleted messages and
    stickers without words are left out; the answered message's words, the files and the reactions are kept."""
    lines = [
        signal_line("2024-03-12T09:05:33.120000", "Ann", "Are we still on for Friday?", reactions=[["Me", "👍"]]),
        signal_line("2024-03-12T09:06:10.500000", "Me", "Yes! Bring the map\nand the torch",
                    quote="\n\n> Are we still on for Friday?\n\n",
                    attachments=[{"name": "signal-2024-03-12-090610.jpg",
                                  "path": "media/signal-2024-03-12-090610.jpg"}]),
        signal_line("2024-03-12T09:07:00", "Ann", "Missed voice call"),
        signal_line("2024-03-12T09:07:30", "Ann", "Incoming video call (accepted, 3m 2s)"),
        signal_line("2024-03-12T09:08:00", "Ann", "", sticker="😀"),
        signal_line("2024-03-12T09:09:00", "Ann", "oops", deleted=True),
        signal_line("2024-03-12T09:10:00", "No-Sender", "who sent this?"),
    ]
    f = tmp_path / "data.json"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "Are we still on for Friday?", "speaker": "Ann", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 5, 33, 120000), "session_id": None,
         "metadata": {"reactions": [{"reaction": "👍", "actor": "Me"}]}},
        {"text": "Yes! Bring the map\nand the torch", "speaker": "Me", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 6, 10, 500000), "session_id": None,
         "metadata": {"quote": "Are we still on for Friday?", "attachments": ["signal-2024-03-12-090610.jpg"]}},
        {"text": "who sent this?", "speaker": None, "role": "user", "timestamp": utc(2024, 3, 12, 9, 10),
         "session_id": None, "metadata": {}},
    ]
    assert all(m["metadata"]["source_digest"].startswith("signal:") for m in stored(db, digests=True))
    # exported again a day later, a reaction added and a message more: only the new message is added
    lines[0] = signal_line("2024-03-12T09:05:33.120000", "Ann", "Are we still on for Friday?",
                           reactions=[["Me", "👍"], ["Bo", "❤"]])
    lines.append(signal_line("2024-03-13T18:00:00", "Ann", "see you"))
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0 and "1 message added" in run.out, run.out
    assert [m["text"] for m in stored(db)][-2:] == ["who sent this?", "see you"]
    # the wall clock of the zone it was exported in
    assert cli(capsys, "ingest", f, "--path", db, "-n", "ny", "--timezone", "America/New_York").code == 0
    assert stored(db, "ny")[0]["timestamp"] == "2024-03-12T09:05:33.120000-04:00"
    # a bad line stores nothing and names the line and the field
    lines[1] = signal_line("12/03/2024 09:06", "Me", "Yes")
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", tmp_path / "bad.db")
    assert run.code != 0 and "data.json:2:" in run.err and "'date'" in run.err, run.err
    assert not (tmp_path / "bad.db").exists()


SIGNAL_TXT = (
    '[Mar 12, 2024 09:05:33] <Ann Lee> Are we still on for Friday? (Me: 👍; Bo: ❤️)\n'
    '[Mar 12, 2024 09:06:10] *** <Me> sent file "signal-2024-03-12-090610.jpg"\n'
    '[Mar 12, 2024 09:06:10] <Me> Yes! Bring the map\n'
    'and the torch (see: the list)\n'
    '[Mar 12, 2024 09:07:00] *** Missed voice call\n'
    '[Mar 12, 2024 09:07:30] *** Ann Lee set the disappearing message timer to 1 week.\n'
    '[Mar 12, 2024 09:08:00] *** <Ann Lee> sent file "sticker.webp" (Me: 😂)\n'
    '[Mar 12, 2024 09:09:00] <Ann Lee> Poll: Where to?\n'
    '                                             [2] Lake\n'
    '                                             [0] Hills\n')


def test_a_signal_chat_exported_as_text_by_signalbackup_tools(tmp_path, capsys) -> None:
    """signalbackup-tools' --exporttxt (a line per message, "[Mar 12, 2024 09:05:33] <Ann> text", reactions after
    the text, files sent as "*** <Ann> sent file" lines before the message, notices and calls as "*** ..."; the shape
    follows its exporttxt.cc) was refused as "not a format hippo ingest reads"."""
    f = tmp_path / "Ann Lee (_id3).txt"
    f.write_text(SIGNAL_TXT, encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "Are we still on for Friday?", "speaker": "Ann Lee", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 5, 33), "session_id": None,
         "metadata": {"reactions": [{"reaction": "👍", "actor": "Me"}, {"reaction": "❤️", "actor": "Bo"}]}},
        {"text": "Yes! Bring the map\nand the torch (see: the list)", "speaker": "Me", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 6, 10), "session_id": None,
         "metadata": {"attachments": ["signal-2024-03-12-090610.jpg"]}},
        {"text": "Where to?\n- Lake\n- Hills", "speaker": "Ann Lee", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 9), "session_id": None, "metadata": {}},
    ]
    assert all(m["metadata"]["source_digest"].startswith("signal-txt:") for m in stored(db, digests=True))
    # exported again with a reaction more and a message more: the new message only
    f.write_text(SIGNAL_TXT.replace("(Me: 👍; Bo: ❤️)", "(Me: 👍; Bo: ❤️; Cy: 😮)")
                 + "[Mar 13, 2024 18:00:00] <Ann Lee> see you\n", encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0 and "1 message added" in run.out, run.out
    assert [m["text"] for m in stored(db)][-1] == "see you" and len(stored(db)) == 4
    assert cli(capsys, "ingest", f, "--path", db, "-n", "ny", "--timezone", "America/New_York").code == 0
    assert stored(db, "ny")[0]["timestamp"] == "2024-03-12T09:05:33-04:00"


SIGNAL_MD = (
    "[2024-03-12 09:05:33] Ann: Are we still on for Friday?  \n"
    "(- Me: 👍, Bo: ❤️ -)\n"
    "\n"
    "[2024-03-12 09:06:10] Me: \n"
    "\n"
    "> Are we still on for Friday?\n"
    "\n"
    "Yes! Bring the map\n"
    "and the torch  ![signal-2024-03-12-090610.jpg](./media/signal-2024-03-12-090610.jpg)  \n"
    "\n"
    "[2024-03-12 09:07:00] Ann: (This message was deleted)\n"
    "\n"
    "[2024-03-12 09:07:30] Ann: Missed voice call  \n"
    "\n"
    "[2024-03-12 09:08:00] Ann:   \n"
    "(( 😀 ))\n"
    "\n")


def test_a_signal_chat_md_of_signal_export_is_not_read_as_whatsapp(tmp_path, capsys) -> None:
    """signal-export's chat.md (Message.to_md: "[date time] name: " then the quote, the body and two spaces, the
    reactions "(- name: emoji -)" on a line of their own, files as Markdown links, an empty line after each) has
    the heads of a WhatsApp export from an iPhone set to ISO dates, and was read as one: the reactions line, the
    quote's "> " lines, the Markdown links and "(This message was deleted)" were stored as the people's words. It is
    read as Signal's; a WhatsApp export of such dates is still read as WhatsApp's."""
    f = tmp_path / "chat.md"
    f.write_text(SIGNAL_MD, encoding="utf-8")
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert stored(db) == [
        {"text": "Are we still on for Friday?", "speaker": "Ann", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 5, 33), "session_id": None,
         "metadata": {"reactions": [{"reaction": "👍", "actor": "Me"}, {"reaction": "❤️", "actor": "Bo"}]}},
        {"text": "Yes! Bring the map\nand the torch", "speaker": "Me", "role": "user",
         "timestamp": utc(2024, 3, 12, 9, 6, 10), "session_id": None,
         "metadata": {"quote": "Are we still on for Friday?", "attachments": ["signal-2024-03-12-090610.jpg"]}},
    ]
    assert all(m["metadata"]["source_digest"].startswith("signal-md:") for m in stored(db, digests=True))
    # a reaction added since: the same messages
    f.write_text(SIGNAL_MD.replace("(- Me: 👍, Bo: ❤️ -)", "(- Me: 👍, Bo: ❤️, Cy: 😮 -)"), encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0 and "0 messages added" in run.out, run.out
    whatsapp = tmp_path / "_chat.txt"
    whatsapp.write_text("[2024-03-12 09:05:33] Ann: Are we still on?\n[2024-03-12 09:06:10] Bo: Yes\n\nsee you\n",
                        encoding="utf-8")
    assert cli(capsys, "ingest", whatsapp, "--path", db, "-n", "wa").code == 0
    assert [(m["speaker"], m["text"]) for m in stored(db, "wa")] == [("Ann", "Are we still on?"),
                                                                    ("Bo", "Yes\n\nsee you")]
    assert stored(db, "wa", digests=True)[0]["metadata"]["source_digest"].startswith("whatsapp:")


def test_a_signal_text_export_with_a_date_that_does_not_exist_is_refused(tmp_path, capsys) -> None:
    """A message head of signal-export's chat.md or signalbackup-tools' text with a date no calendar has (month 13,
    30 February) escaped as a ValueError from the chat.md reader, and was taken by the text reader as a line of the
    message before; both refuse it, naming the line, and store nothing."""
    md = tmp_path / "chat.md"
    md.write_text("[2024-03-12 09:05:33] Ann: hi  \n\n[2024-13-12 09:06:00] Ann: and?  \n\n", encoding="utf-8")
    txt = tmp_path / "Ann (_id3).txt"
    txt.write_text("[Mar 12, 2024 09:05:33] <Ann> hi\n[Feb 30, 2024 09:06:00] <Ann> and?\n", encoding="utf-8")
    for f, line, date in ((md, 3, "2024-13-12 09:06:00"), (txt, 2, "Feb 30, 2024 09:06:00")):
        run = cli(capsys, "ingest", f, "--path", tmp_path / "s.db")
        assert_one_line_error(run, f"{f.name}:{line}:", repr(date))
    assert not (tmp_path / "s.db").exists()


def test_an_edited_message_keeps_what_the_user_set_on_the_version_it_replaces(tmp_path, capsys) -> None:
    """A message replaced by its edited version on re-import (found by ``metadata["source_id"]``) is a new message:
    the metadata a user set on the old one (a tag, an event time, with ``Memory.update``) used to go with it. Its
    new version now carries the keys the user set, the file's own keys as the file writes them now: an embed the
    edit removed is not carried, an edit's new ``edited`` flag is the file's."""
    author = {"id": "111", "name": "ann", "nickname": "Ann", "isBot": False}
    discord = {"guild": {"id": "1", "name": "G"}, "channel": {"id": "2", "name": "general"}, "messages": [
        {"id": "900", "type": "Default", "timestamp": "2024-03-12T09:00:00+00:00", "timestampEdited": None,
         "content": "dinner at 7 https://x.org/menu", "author": author,
         "embeds": [{"title": "Menu", "url": "https://x.org/menu"}]},
        {"id": "901", "type": "Default", "timestamp": "2024-03-12T09:01:00+00:00", "timestampEdited": None,
         "content": "see you there", "author": author}]}
    f = tmp_path / "discord.json"
    db = tmp_path / "s.db"
    f.write_text(json.dumps(discord), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    with hippo.Memory(db) as mem:
        first, second = mem.list()
        assert first.metadata["embeds"] == ["Menu"]
        mem.update(first.id, metadata={**first.metadata, "tags": ["plans"], "event_time": "2024-03-15T19:00:00"})
        mem.update(second.id, metadata={**second.metadata, "tags": ["reply"]})
    discord["messages"][0].update(content="dinner at 8", timestampEdited="2024-03-12T09:30:00+00:00", embeds=[])
    f.write_text(json.dumps(discord), encoding="utf-8")
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert "1 message stored before, whose edited version the file holds, replaced by it" in run.out, run.out
    got = stored(db)
    assert [m["text"] for m in got] == ["see you there", "dinner at 8"]
    assert got[0]["metadata"] == {"discord_id": "901", "tags": ["reply"]}  # not replaced: as it was
    assert got[1]["metadata"] == {"discord_id": "900", "edited": True, "tags": ["plans"],
                                  "event_time": "2024-03-15T19:00:00"}
    # ingested again: nothing changes (the carried keys do not make the new version another message)
    before = stored(db, digests=True)
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0 and "0 messages added" in run.out, run.out
    assert stored(db, digests=True) == before


def test_a_chat_split_into_a_namespace_stays_there_when_its_name_changes(tmp_path, capsys) -> None:
    """``--split`` names a chat's namespace after the chat, and a chat's name changes between two exports of an
    account: a contact renamed (a personal chat is named after them), a group renamed, or a second chat of the same
    name that now tells the two apart by their ids ("Ann (1)"). The whole chat used to be stored again in a namespace
    of the new name, beside the one holding it: after three exports, four messages were stored nine times in three
    namespaces. A chat whose messages a namespace of the split already holds is now added there."""

    def chat(name: str, chat_id: int, texts: list[str]) -> dict:
        return {"name": name, "type": "personal_chat", "id": chat_id, "messages": [
            {"id": k + 1, "type": "message", "date": f"2024-03-12T09:0{k}:00",
             "date_unixtime": str(1710234000 + 60 * k), "from": name, "from_id": f"user{chat_id}", "text": t}
            for k, t in enumerate(texts)]}

    f = tmp_path / "result.json"
    db = tmp_path / "s.db"

    def ingest(*chats: dict) -> str:
        f.write_text(json.dumps({"chats": {"list": list(chats)}}), encoding="utf-8")
        run = cli(capsys, "ingest", f, "--path", db, "--split")
        assert run.code == 0, run.err
        return run.out

    def contents() -> dict:
        return {ns: [(m["speaker"], m["text"]) for m in stored(db, ns)] for ns in namespaces(db)}

    ingest(chat("Ann", 1, ["hi", "dinner?"]))
    out = ingest(chat("Ann", 1, ["hi", "dinner?", "at 7"]), chat("Ann", 2, ["hello from the other Ann"]))
    assert "default.Ann (1): the chat is in default.Ann" in out, out
    assert contents() == {"default.Ann": [("Ann", "hi"), ("Ann", "dinner?"), ("Ann", "at 7")],
                          "default.Ann (2)": [("Ann", "hello from the other Ann")]}
    ingest(chat("Ann Lee", 1, ["hi", "dinner?", "at 7", "ok"]), chat("Ann", 2, ["hello from the other Ann"]))
    got = contents()
    # the messages stored keep the name they were said under (a sender's rename replaces no message: docs/api.md)
    assert sorted(got["default.Ann"]) == sorted([("Ann", "hi"), ("Ann", "dinner?"), ("Ann", "at 7"),
                                                 ("Ann Lee", "ok")])
    # the second chat, alone of its name now, stays where it is too
    assert got == {"default.Ann": got["default.Ann"], "default.Ann (2)": [("Ann", "hello from the other Ann")]}
    # a new chat, whose messages no namespace holds, gets a namespace of its name
    ingest(chat("Cy", 3, ["morning"]))
    assert contents()["default.Cy"] == [("Cy", "morning")]
    # a new chat named as a namespace that holds another chat is not mixed into it; the next export finds it again
    for _ in range(2):
        out = ingest(chat("Ann Lee", 1, ["hi", "dinner?", "at 7", "ok"]), chat("Ann", 4, ["a new Ann"]))
        got = contents()
        assert sorted(got) == ["default.Ann", "default.Ann (2)", "default.Ann (3)", "default.Cy"], out
        assert len(got["default.Ann"]) == 4 and got["default.Ann (2)"] == [("Ann", "hello from the other Ann")]
        assert got["default.Ann (3)"] == [("Ann", "a new Ann")]


def test_exports_cut_at_dates_ingested_in_any_order_hold_each_message_once_edits_kept(tmp_path, capsys) -> None:
    """Two exports of one chat cut at different dates, overlapping, the later one holding an edit of a message of
    the overlap: ingested in either order, and again, the namespace holds each message once, the edit as edited.
    The earlier export ingested last used to put the unedited version back."""

    def msg(i: int, text: str, edited: bool = False) -> dict:
        m = {"id": i, "type": "message", "date": f"2024-03-12T09:0{i}:00", "date_unixtime": str(1710234000 + 60 * i),
             "from": "Ann", "from_id": "user1", "text": text}
        if edited:
            m.update(edited="2024-03-13T09:00:00", edited_unixtime="1710320400")
        return m

    early = {"name": "Ann", "type": "personal_chat", "id": 1, "messages": [msg(i, f"m{i}") for i in range(1, 6)]}
    late = {"name": "Ann", "type": "personal_chat", "id": 1,
            "messages": [msg(4, "m4, edited", True)] + [msg(i, f"m{i}") for i in range(5, 9)]}
    want = ["m1", "m2", "m3", "m4, edited", "m5", "m6", "m7", "m8"]
    for order in ((early, late, early, late), (late, early, late, early)):
        db = tmp_path / f"{len(order)}-{order[0] is late}.db"
        for doc in order:
            f = tmp_path / "result.json"
            f.write_text(json.dumps(doc), encoding="utf-8")
            run = cli(capsys, "ingest", f, "--path", db)
            assert run.code == 0, run.err
        got = stored(db)
        assert sorted(m["text"] for m in got) == want, order
        assert next(m for m in got if m["text"] == "m4, edited")["metadata"]["edited"] is True


def test_the_bots_of_a_telegram_export_are_marked(tmp_path, capsys) -> None:
    """Telegram's export names a chat with a bot ("type": "bot_chat", its "id" the bot's account) and an inline
    bot's result a person sent ("via_bot"); neither was marked, so a bot's notifications were a person's words and
    never grouped as a tool's outputs are."""
    export = {"name": "DeployBot", "type": "bot_chat", "id": 555, "messages": [
        {"id": 1, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000", "from": "Ann",
         "from_id": "user1", "text": "/status"},
        {"id": 2, "type": "message", "date": "2024-03-12T09:00:01", "date_unixtime": "1710234001",
         "from": "DeployBot", "from_id": "user555", "text": "Deploy 9f1c2ab3 of api-gateway succeeded"},
        {"id": 3, "type": "message", "date": "2024-03-12T09:01:00", "date_unixtime": "1710234060", "from": "Ann",
         "from_id": "user1", "via_bot": "@gif", "text": "cat"}]}
    f = tmp_path / "result.json"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    db = tmp_path / "s.db"
    assert cli(capsys, "ingest", f, "--path", db).code == 0
    assert [(m["speaker"], m["metadata"]) for m in stored(db)] == [
        ("Ann", {"telegram_id": 1, "from_id": "user1"}),
        ("DeployBot", {"telegram_id": 2, "from_id": "user555", "bot": True}),
        ("Ann", {"telegram_id": 3, "from_id": "user1", "via_bot": "@gif", "bot": True})]
    # every key the reader writes is one a re-import of an edit does not carry as the user's (ingest._carried)
    assert all(set(m["metadata"]) <= READ_KEYS for m in stored(db))
    # in a group the same account is no bot the export names; in an account's export the chat says it
    export["type"] = "private_group"
    f.write_text(json.dumps(export, indent=1), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", tmp_path / "g.db").code == 0
    assert ["bot" in m["metadata"] for m in stored(tmp_path / "g.db")] == [False, False, True]
    export["type"] = "bot_chat"
    account = {"chats": {"list": [export]}}
    f.write_text(json.dumps(account, indent=1), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", tmp_path / "a.db").code == 0
    assert ["bot" in m["metadata"] for m in stored(tmp_path / "a.db")] == [False, True, True]


def test_a_slack_apps_message_and_a_bot_users_are_marked(tmp_path, capsys) -> None:
    """An app posts as its bot user: its message has a "user" beside its "bot_id" and "bot_profile", and
    users.json marks that user "is_bot". Only a message of a bot_id without a user was marked a bot's."""
    import zipfile

    day = [{"type": "message", "user": "U09APP", "bot_id": "B09", "text": "Deploy 9f1c2ab3 succeeded",
            "ts": "1710234000.000100", "bot_profile": {"id": "B09", "name": "deploys"}},
           {"type": "message", "user": "U08REL", "text": "Release 2024.3 is out", "ts": "1710234010.000100"},
           {"type": "message", "user": "U01ANN", "text": "thanks!", "ts": "1710234020.000100"}]
    users = [{"id": "U01ANN", "name": "ann", "profile": {"display_name": "Ann"}},
             {"id": "U08REL", "name": "releasebot", "is_bot": True, "profile": {"real_name": "releasebot"}}]
    f = tmp_path / "export.zip"
    with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", json.dumps(users))
        archive.writestr("channels.json", json.dumps([{"id": "C1", "name": "ops"}]))
        archive.writestr("ops/2024-03-12.json", json.dumps(day))
    db = tmp_path / "s.db"
    run = cli(capsys, "ingest", f, "--path", db)
    assert run.code == 0, run.err
    assert [(m["speaker"], m["metadata"].get("bot", False)) for m in stored(db)] == [
        ("deploys", True), ("releasebot", True), ("Ann", False)]


def test_an_undo_that_fails_leaves_every_namespace_as_the_run_wrote_it(tmp_path, location, capsys, monkeypatch) -> None:
    """A run with --split whose third chat fails is undone in every namespace it wrote. The undo was one transaction
    per namespace: when the first chat's failed, the second chat's had gone through, and the store held the second
    chat as before the run and the first as the run wrote it, a state neither run left. Now the undo is one
    transaction: the namespaces are either all as before the run or (the undo failed too, the error says so) all as
    the run wrote them; running the same command again completes the run."""
    from hippo.store.postgres import PostgresStore
    from hippo.store.sqlite import SQLiteStore

    def account(edited: bool) -> dict:
        return {"chats": {"list": [_telegram_chat(name, k, f"{name} {'edited' if edited else 'first'}", edited)
                                   for k, name in enumerate(("Ann", "Bo", "Cy"), 1)]}}

    f = tmp_path / "result.json"
    db = location
    spaces = ("default.Ann", "default.Bo", "default.Cy")

    def texts() -> dict:
        return {ns: sorted(m["text"] for m in stored(db, ns)) for ns in spaces}

    f.write_text(json.dumps(account(False)), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db, "--split").code == 0
    before = texts()
    after = {ns: sorted([f"{ns[8:]} edited", "ok"]) for ns in spaces}
    f.write_text(json.dumps(account(True)), encoding="utf-8")
    deletions = []

    def failing(real):
        # the third chat's replacing write fails; then the undo's deletion in the first chat
        def record(self, cur, namespace, kind, *args, **kwargs):
            if kind == "delete":
                deletions.append(namespace)
                if len(deletions) == 3 or len(deletions) > 3 and namespace == "default.Ann":
                    raise StoreError("disk I/O error")
            return real(self, cur, namespace, kind, *args, **kwargs)
        return record

    for cls in (SQLiteStore, PostgresStore):
        monkeypatch.setattr(cls, "_record", failing(cls._record))
    run = cli(capsys, "ingest", f, "--path", db, "--split")
    monkeypatch.undo()
    assert run.code != 0 and "undoing it failed too" in run.err, run.err
    left = texts()
    assert left == {**after, "default.Cy": before["default.Cy"]}, left
    run = cli(capsys, "ingest", f, "--path", db, "--split")
    assert run.code == 0, run.err
    assert texts() == after


def _formatted_chat(name: str, chat_id: int, bold: bool, more: bool = False) -> dict:
    """A Telegram chat whose first message is, with ``bold``, edited to set its words in bold: the same words, and
    the export writes them as entities and marks the message edited."""
    first = {"id": 1, "type": "message", "date": "2024-03-12T09:00:00", "date_unixtime": "1710234000", "from": name,
             "from_id": f"user{chat_id}", "text": [{"type": "bold", "text": "at 7"}] if bold else "at 7"}
    if bold:
        first.update(edited="2024-03-12T09:30:00", edited_unixtime="1710235800")
    msgs = [first, {"id": 2, "type": "message", "date": "2024-03-12T09:01:00", "date_unixtime": "1710234060",
                    "from": "Me", "from_id": "user0", "text": "ok"}]
    if more:
        msgs.append({"id": 3, "type": "message", "date": "2024-03-12T09:40:00", "date_unixtime": "1710236400",
                     "from": "Me", "from_id": "user0", "text": "see you"})
    return {"name": name, "type": "personal_chat", "id": chat_id, "messages": msgs}


def test_a_message_edited_without_changing_its_words_takes_the_files_metadata_in_place(tmp_path, capsys) -> None:
    """A Telegram message edited to set its words in bold has another digest and is marked edited, its words the
    same: it was deleted and stored again at the end of the namespace, a new id, what a user had set on it carried
    but its strength lost. It is the stored message: its metadata becomes the file's (a user's keys kept), its id
    and place the same. An older export (not marked edited) ingested after it changes nothing."""
    plain, bold = tmp_path / "plain.json", tmp_path / "bold.json"
    plain.write_text(json.dumps(_formatted_chat("Ann", 1, False)), encoding="utf-8")
    bold.write_text(json.dumps(_formatted_chat("Ann", 1, True, more=True)), encoding="utf-8")

    def held(db: Path) -> list[tuple]:
        with hippo.Memory(db) as mem:
            return [(m.id, m.text, {k: v for k, v in m.metadata.items() if k not in ("source_digest", "source_id")})
                    for m in mem.list()]

    unedited = (1, "at 7", {"telegram_id": 1, "from_id": "user1", "tag": "plans"})
    edited = (1, "at 7", {"telegram_id": 1, "from_id": "user1", "tag": "plans", "edited": True})
    ok = (2, "ok", {"telegram_id": 2, "from_id": "user0"})
    later = (3, "see you", {"telegram_id": 3, "from_id": "user0"})
    for order, expected in (((plain, bold), [[unedited, ok]] + [[edited, ok, later]] * 3),
                            ((bold, plain), [[edited, ok, later]] * 4)):
        db = tmp_path / f"{order[0].stem}.db"
        seen = []
        for f in order * 2:
            assert cli(capsys, "ingest", f, "--path", db).code == 0
            if len(seen) == 0:
                with hippo.Memory(db) as mem:
                    mem.update(1, metadata={**mem.get(1).metadata, "tag": "plans"})
            seen.append(held(db))
        assert seen == expected, order


def test_metadata_written_in_place_is_put_back_when_the_run_fails(tmp_path, capsys, monkeypatch) -> None:
    """With --split, the first chat's message takes the file's metadata in place; a failure storing the second
    chat's undoes the run: that message's metadata is as it was before, and running the command again completes it."""
    import hippo.cli.ingest as ingest

    def account(bold: bool) -> dict:
        return {"chats": {"list": [_formatted_chat("Ann", 1, bold), _formatted_chat("Bo", 2, False, more=bold)]}}

    f = tmp_path / "result.json"
    db = tmp_path / "s.db"
    f.write_text(json.dumps(account(False)), encoding="utf-8")
    assert cli(capsys, "ingest", f, "--path", db, "--split").code == 0
    before = {ns: stored(db, ns, digests=True) for ns in ("default.Ann", "default.Bo")}
    f.write_text(json.dumps(account(True)), encoding="utf-8")
    real = ingest._add

    def failing(w, items, g, kept):
        if g.namespace == "default.Bo":
            raise StoreError("disk full")
        return real(w, items, g, kept)

    monkeypatch.setattr(ingest, "_add", failing)
    run = cli(capsys, "ingest", f, "--path", db, "--split")
    assert run.code != 0 and "disk full" in run.err, run.err
    assert {ns: stored(db, ns, digests=True) for ns in before} == before
    monkeypatch.setattr(ingest, "_add", real)
    assert cli(capsys, "ingest", f, "--path", db, "--split").code == 0
    with hippo.Memory(db, namespace="default.Ann") as mem:
        assert [(m.id, m.text, m.metadata.get("edited")) for m in mem.list()] == [(1, "at 7", True), (2, "ok", None)]
    assert [m["text"] for m in stored(db, "default.Bo")] == ["at 7", "ok", "see you"]
