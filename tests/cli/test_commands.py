"""The read and management commands against ``hippo.Memory`` on the same store: ``--json`` output equals the API's
own results (in the shape of ``hippo.records``), destructive commands ask first, errors are one line."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import math
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

import hippo
from hippo.records import jsonable
from tests.cli.conftest import CONVERSATION, Run, assert_one_line_error, cli, hippo_cmd, hippo_tty
from tests.unwritable import unwritable_store


def as_json(run) -> object:
    assert run.code == 0, run.err
    return json.loads(run.out)


def expected(value) -> object:
    """The API's value through an independent JSON rendering: dataclass fields by name, datetimes as ISO-8601."""
    def leaf(v):
        if isinstance(v, datetime):
            return v.isoformat()
        if dataclasses.is_dataclass(v):
            return {f.name: leaf(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if isinstance(v, dict):
            return {k: leaf(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [leaf(x) for x in v]
        return v
    return json.loads(json.dumps(leaf(value)))


def test_records_shape() -> None:
    when = datetime(2024, 5, 1, 10, 30, tzinfo=timezone.utc)
    item = hippo.MemoryItem(id=3, text="t", timestamp=when, metadata={"a": (1, 2), "b": np.float32(0.5)})
    assert jsonable(item) == {"id": 3, "text": "t", "speaker": None, "role": "user",
                              "timestamp": "2024-05-01T10:30:00+00:00", "session_id": None,
                              "metadata": {"a": [1, 2], "b": 0.5}, "namespace": "default", "seq": 0,
                              "n_tokens": 0, "created_at": None}
    assert jsonable({"x": math.nan, "y": [np.int64(7), {3: math.inf}]}) == {"x": None, "y": [7, {"3": None}]}
    json.dumps(jsonable(hippo.Hit(id=1, text="h", event_time=when, channels={"lexical": 0.1})), allow_nan=False)


def test_search_recall_list_read_match_the_api(store, capsys) -> None:
    with hippo.Memory(store, namespace="ann") as mem:
        hits = mem.search("beagle Pixel", k=3)
        ctx = mem.recall("Where did Ann move?", budget_tokens=60)
        listed = mem.list(filter={"speaker": "Bob"}, limit=3, offset=1)
        around = mem.read(hits[0].id, before=1, after=1)
        in_s2 = mem.search("cello", k=5, filter={"session_id": "s2"})
    got = as_json(cli(capsys, "search", "beagle Pixel", "-k", "3", "--path", store, "-n", "ann", "--json"))
    assert got == expected(hits)
    assert set(got[0]) == {f.name for f in dataclasses.fields(hippo.Hit)}
    got = as_json(cli(capsys, "recall", "Where did Ann move?", "--budget", "60", "--path", store, "-n", "ann",
                      "--json"))
    assert got["text"] == ctx.text and got["tokens"] == ctx.tokens <= 60
    assert got["messages"] == expected(ctx.messages)
    got = as_json(cli(capsys, "list", "--speaker", "Bob", "--limit", "3", "--offset", "1", "--path", store, "-n",
                      "ann", "--json"))
    assert got == expected(listed) and [m["text"] for m in got] == [CONVERSATION[k][2] for k in (3, 5, 7)]
    got = as_json(cli(capsys, "read", hits[0].id, "--before", "1", "--after", "1", "--path", store, "-n", "ann",
                      "--json"))
    assert got == expected(around)
    got = as_json(cli(capsys, "search", "cello", "-k", "5", "--session", "s2", "--path", store, "-n", "ann",
                      "--json"))
    assert got == expected(in_s2) and {h["session_id"] for h in got} == {"s2"}
    # the people's view lists the same ids
    plain = cli(capsys, "search", "beagle Pixel", "-k", "3", "--path", store, "-n", "ann")
    assert [int(line.split()[0]) for line in plain.out.splitlines()] == [h.id for h in hits]
    plain = cli(capsys, "recall", "Where did Ann move?", "--budget", "60", "--path", store, "-n", "ann")
    assert plain.out == ctx.text + "\n" and "tokens" in plain.err


def test_timeline_topics_namespaces_stats_consolidate(store, capsys) -> None:
    with hippo.Memory(store, namespace="ann") as mem:
        timeline = mem.timeline("Ann", limit=5)
        topics = mem.topics()
        stats = mem.stats()
    assert as_json(cli(capsys, "timeline", "Ann", "--limit", "5", "--path", store, "-n", "ann", "--json")) == \
        expected(timeline)
    assert as_json(cli(capsys, "topics", "--path", store, "-n", "ann", "--json")) == expected(topics)
    first = topics[0]["id"]
    with hippo.Memory(store, namespace="ann") as mem:
        markdown = mem.topic(first)
    got = as_json(cli(capsys, "topics", str(first), "--path", store, "-n", "ann", "--json"))
    assert got == {"id": first, "markdown": markdown}
    assert as_json(cli(capsys, "namespaces", "--path", store, "--json")) == ["ann", "other"]
    assert cli(capsys, "namespaces", "--path", store).out.split() == ["ann", "other"]
    got = as_json(cli(capsys, "stats", "--path", store, "-n", "ann", "--json"))
    assert got["messages"] == stats["messages"] == 12 and got["tokens"] == stats["tokens"]
    report = as_json(cli(capsys, "consolidate", "--level", "deep", "--path", store, "-n", "ann", "--json"))
    assert report["level"] == "deep" and report["messages"] == 12
    assert_one_line_error(cli(capsys, "consolidate", "--level", "heavy", "--path", store), "--level", "heavy")


def test_forget_needs_confirmation_and_deletes_exactly_the_selection(store, capsys) -> None:
    bob = [k for k, (_, speaker, _) in enumerate(CONVERSATION) if speaker == "Bob"]
    run = cli(capsys, "forget", "--speaker", "Bob", "--path", store, "-n", "ann", "--dry-run", "--json")
    dry = as_json(run)
    assert dry["would_forget"] == len(bob)
    # stdin is not a terminal here: refused, nothing deleted
    refused = hippo_cmd("forget", "--speaker", "Bob", "--path", store, "-n", "ann")
    assert_one_line_error(refused, "--yes", "6 messages")
    with hippo.Memory(store, namespace="ann") as mem:
        assert mem.count() == 12
    assert_one_line_error(cli(capsys, "forget", "--path", store, "-n", "ann"), "--id", "--filter")
    run = cli(capsys, "forget", "--filter", '{"speaker": "Bob"}', "--path", store, "-n", "ann", "--yes")
    assert run.code == 0 and "forgot 6 messages" in run.out
    with hippo.Memory(store, namespace="ann") as mem:
        assert [m.text for m in mem.list()] == [CONVERSATION[k][2] for k in range(12) if k not in bob]
        ids = [m.id for m in mem.list()][:2]
        assert mem.using("other").count() == 2
    run = cli(capsys, "forget", "--id", ids[0], "--id", ids[1], "--id", 10**9, "--path", store, "-n", "ann", "-y")
    assert run.code == 0 and "forgot 2 messages" in run.out
    run = cli(capsys, "forget", "--speaker", "Nobody", "--path", store, "-n", "ann")
    assert run.code == 0 and "nothing forgotten" in run.out
    assert_one_line_error(cli(capsys, "forget", "--filter", "{speaker", "--path", store), "--filter")
    for bad in (-1, 2**70):  # not a message id: refused, not reported as "no message matches"
        assert_one_line_error(cli(capsys, "forget", "--id", ids[0], "--id", bad, "--path", store, "-n", "ann", "-y"),
                              "--id")
    with hippo.Memory(store, namespace="ann") as mem:
        assert mem.count() == 4


def test_forget_deletes_only_the_messages_it_asked_about(store, capsys, monkeypatch) -> None:
    # The store is shared (an MCP server, the library, another command may write while the prompt waits): a message
    # the filter matches that arrives after the listing was never confirmed. It was deleted with the rest
    # ("forget 6 messages?" -> "forgot 7 messages").
    from hippo.cli import manage

    asked: list[str] = []

    def confirm_while_another_process_writes(action: str, yes: bool) -> None:
        asked.append(action)
        with hippo.Memory(store, namespace="ann") as other:
            other.add("Bob again: written while the prompt waited.", speaker="Bob")

    monkeypatch.setattr(manage, "confirm", confirm_while_another_process_writes)
    run = cli(capsys, "forget", "--speaker", "Bob", "--path", store, "-n", "ann", "--json")
    assert asked == [f"forget 6 messages of namespace 'ann' in {store}"]
    assert as_json(run) == {"namespace": "ann", "forgotten": 6}
    with hippo.Memory(store, namespace="ann") as mem:
        assert [m.text for m in mem.list() if m.speaker == "Bob"] == ["Bob again: written while the prompt waited."]
        assert mem.count() == 12 - 6 + 1


def test_confirmation_on_a_terminal(store) -> None:
    declined = hippo_tty("delete-namespace", "other", "--path", store, answer="n\n", stdin_tty=True)
    assert declined.code == 1 and "[y/N]" in declined.err and "nothing was changed" in declined.err
    with hippo.Memory(store) as mem:
        assert mem.namespaces() == ["ann", "other"]
    accepted = hippo_tty("delete-namespace", "other", "--path", store, answer="y\n", stdin_tty=True)
    assert accepted.code == 0, accepted.err
    assert "deleted namespace 'other': 2 messages" in accepted.out
    with hippo.Memory(store) as mem:
        assert mem.namespaces() == ["ann"]
    forgot = hippo_tty("forget", "--session", "s1", "--path", store, "-n", "ann", answer="yes\n", stdin_tty=True)
    assert forgot.code == 0 and "forgot 4 messages" in forgot.out


def test_delete_namespace(store, capsys) -> None:
    assert_one_line_error(hippo_cmd("delete-namespace", "other", "--path", store), "--yes")
    assert_one_line_error(cli(capsys, "delete-namespace", "ghost", "--path", store, "--yes"), "ghost")
    got = as_json(cli(capsys, "delete-namespace", "other", "--path", store, "--yes", "--json"))
    assert got == {"namespace": "other", "deleted": 2}
    with hippo.Memory(store) as mem:
        assert mem.namespaces() == ["ann"] and mem.using("ann").count() == 12


def test_commands_that_read_or_delete_do_not_create_a_store(tmp_path, capsys) -> None:
    missing = tmp_path / "typo.db"
    for argv in (["search", "x"], ["recall", "x"], ["list"], ["namespaces"], ["stats"], ["topics"],
                 ["timeline", "x"], ["read", "1"], ["forget", "--id", "1", "-y"], ["delete-namespace", "a", "-y"],
                 ["consolidate"], ["export", tmp_path / "out.jsonl"]):
        assert_one_line_error(cli(capsys, *argv, "--path", missing), "typo.db")
    assert not missing.exists()


@pytest.mark.parametrize("argv", [["search", "cello"], ["recall", "cello"], ["list"], ["timeline", "Ann"], ["topics"],
                                  ["export", "out.jsonl"]])
def test_a_read_of_a_namespace_without_messages_names_the_store_s_namespaces(store, capsys, argv, tmp_path,
                                                                              monkeypatch) -> None:
    """`-n` left out (or mistyped) after `hippo ingest -n ann`: the empty answer says why on stderr; stdout and the
    exit status stay those of an empty answer. A namespace that holds messages answers without the note."""
    monkeypatch.chdir(tmp_path)
    for namespace in ("default", "anne"):
        run = cli(capsys, *argv, "--path", store, "-n", namespace)
        assert run.code == 0, run.err
        note = [line for line in run.err.splitlines() if line.startswith("hippo:")]
        assert note == [f"hippo: namespace {namespace!r} holds no messages in {store} (its namespaces: 'ann', "
                        "'other'; choose one with -n)"], run.err
        assert "cello" not in run.out
    if argv[0] in ("search", "recall"):  # nothing matches, but the namespace holds messages: no note
        run = cli(capsys, argv[0], "zzzyx", "--path", store, "-n", "ann")
        assert run.code == 0 and "holds no messages" not in run.err, run.err


@pytest.mark.parametrize("argv, needles", [
    (["search"], ["query"]),
    (["search", "x", "-k", "0"], ["-k", ">= 1"]),
    (["recall", "x", "--budget", "-3"], ["--budget", ">= 1"]),  # the option's name, not the API's budget_tokens
    (["recall", "x", "--budget", "lots"], ["--budget", "lots"]),
    (["read", "999999"], ["999999"]),
    (["read", "many"], ["id"]),
    (["topics", "12345"], ["12345"]),
    (["topics", "²"], ["topic_id", "²"]),  # a digit int() cannot read: was "unexpected ValueError", exit 1
    (["timeline", " "], ["query"]),
    (["search", "x", "--since", "yesterday-ish"], ["since"]),
    (["list", "--filter", "[1]"], ["--filter"]),
    (["search", "x", "--speaker", "A", "--filter", '{"speaker": "B"}'], ["speaker"]),
    (["list", "--role", "assitant"], ["--role", "assitant"]),  # matched nothing, printed nothing, exit 0
    (["forget", "--role", "robot", "--yes"], ["--role", "robot"]),
    (["frobnicate"], ["frobnicate"]),
    (["mcp", "--transport", "pigeon"], ["transport"]),
])
def test_errors_are_one_line_without_traceback(store, argv, needles) -> None:
    assert_one_line_error(hippo_cmd(*argv, "--path", store, "-n", "ann") if argv[0] not in ("frobnicate", "mcp")
                          else hippo_cmd(*argv), *needles)


def test_version(capsys) -> None:
    """`hippo --version` was taken for a missing command ("the following arguments are required: COMMAND")."""
    run = cli(capsys, "--version")
    assert run.code == 0 and run.out == f"hippo {hippo.__version__}\n" and run.err == ""


@pytest.mark.parametrize("budget", ["0", "-1"])
def test_demo_refuses_a_budget_below_one_before_it_starts(capsys, budget) -> None:
    """As ``recall --budget``: the option's name in the error, and nothing ingested or printed first."""
    run = cli(capsys, "demo", "--budget", budget)
    assert_one_line_error(run, "--budget", ">= 1")
    assert run.out == ""


@pytest.mark.parametrize("argv, needles", [
    (["bench", "frobnicate"], ["hippo bench", "frobnicate"]),
    (["bench"], ["hippo bench", "required"]),
    (["bench", "kernels", "--frobnicate"], ["--frobnicate"]),
    (["bench", "truth-sample", "--data", "no-such-dir"], ["no-such-dir"]),
])
def test_bench_errors_are_one_line_and_returned(argv, needles, tmp_path) -> None:
    """``hippo bench`` keeps the contract of every command: ``main`` returns the exit code (it raised SystemExit),
    a usage error is one line (it was argparse's usage block and the error), a missing data file no traceback."""
    bench = Path(__file__).resolve().parents[2] / "bench"  # this checkout's benchmarks, not an installed copy
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(bench), env.get("PYTHONPATH")) if p)
    code = f"from hippo.cli import main\nprint('returned', main({argv!r}))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.stdout == "returned 2\n", (proc.stdout, proc.stderr)
    assert_one_line_error(Run(2, proc.stdout, proc.stderr), *needles)


def test_output_on_a_stream_that_cannot_encode_the_text(tmp_path) -> None:
    """Standard output in a narrow encoding (a Windows code page when redirected; here PYTHONIOENCODING=latin-1):
    a Chinese message failed the whole command with an UnicodeEncodeError. --json stays lossless (\\u escapes),
    text shows what it cannot encode as backslash escapes."""
    path = tmp_path / "zh.db"
    with hippo.Memory(path) as mem:
        mem.add("\u6211\u4eec\u660e\u5929\u89c1 \U0001F602", speaker="\u674e")
        mem.add("caf\u00e9 ol\u00e9", speaker="Zo\u00eb")
        want = jsonable(mem.list())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "TQDM_"))}
    env["PYTHONIOENCODING"] = "latin-1"

    def narrow(*argv: object) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hippo.cli", *map(str, argv), "--path", str(path)], env=env,
                              capture_output=True, encoding="latin-1", timeout=120, stdin=subprocess.DEVNULL)

    run = narrow("list", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == want
    for argv in (["list"], ["search", "\u89c1"], ["recall", "\u89c1"], ["timeline", "\u674e"]):
        run = narrow(*argv)
        assert run.returncode == 0 and "error" not in run.stderr, (argv, run.stderr)
        assert "\\u674e" in run.stdout, (argv, run.stdout)
    assert "Zo\u00eb: caf\u00e9 ol\u00e9" in narrow("list").stdout  # what the encoding holds is printed as it is


def test_every_command_has_help_and_ingest_names_its_formats(capsys) -> None:
    """`hippo COMMAND --help` for every command: exit 0, the usage on standard output, nothing on standard error.
    The ingest help named neither of the messaging apps it reads."""
    from hippo.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"ingest", "export", "import", "search", "recall", "mcp", "bench"} <= set(commands)
    for name in commands:
        run = cli(capsys, name, "--help")
        assert run.code == 0 and run.err == "" and run.out.startswith(f"usage: hippo {name}"), (name, run)
    listing = cli(capsys, "--help").out
    text = " ".join(cli(capsys, "ingest", "--help").out.split())
    for fmt in ("JSONL", "OpenAI", "WhatsApp", "zip", "Telegram", "BEAM", "LoCoMo", "export"):
        assert fmt in text, fmt
    assert "WhatsApp" in listing and "Telegram" in listing


def test_a_closed_pipe_is_not_a_traceback(store) -> None:
    proc = subprocess.run(f"'{sys.executable}' -m hippo.cli list --path '{store}' -n ann | head -c 10",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and len(proc.stdout) == 10


def test_mcp_without_the_sdk_names_the_extra(tmp_path) -> None:
    code = ("import sys; sys.modules['mcp'] = None\n"
            "from hippo.cli import main\n"
            f"sys.exit(main(['mcp', '--path', {str(tmp_path / 'm.db')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "hippo-memory[mcp]" in proc.stderr and "Traceback" not in proc.stderr


def test_json_shapes_the_api_md_command_table_gives(store, capsys) -> None:
    """The keys docs/api.md's command table gives for ``--json`` (``{"namespace", "forgotten"}``...) are the keys
    the commands print."""
    import re

    table = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    documented = {}
    for row in re.findall(r"^\| `hippo ([\w-]+)[^|]*(?:\\\|[^|]*)*\|[^|]*\| (.*) \|$", table, re.M):
        documented[row[0]] = [set(re.findall(r'"(\w+)"', shape)) for shape in re.findall(r"`\{[^`]*\}`", row[1])]
    with hippo.Memory(store, namespace="ann") as mem:
        mem.consolidate("deep")
        topic = mem.topics()[-1]["id"]
    runs = {
        "forget": [["forget", "--speaker", "Bob", "--yes"], ["forget", "--speaker", "Ann", "--dry-run"]],
        "delete-namespace": [["delete-namespace", "ann", "--yes"]],
        "topics": [["topics", str(topic)]],
    }
    for command in ("topics", "forget", "delete-namespace"):  # topics before the deletions empty the store
        printed = [set(as_json(cli(capsys, *argv, "--path", store, "-n", "ann", "--json"))
                       if argv[0] != "delete-namespace" else
                       as_json(cli(capsys, *argv, "--path", store, "--json"))) for argv in runs[command]]
        assert printed == documented[command], command


def test_asked_at_counts_a_question_s_days_from_when_it_is_asked(tmp_path, capsys) -> None:
    path = tmp_path / "games.db"
    with hippo.Memory(path) as mem:
        mem.add("I played tennis in the park", timestamp="2026-11-22T18:00:00+00:00")  # Sunday
        mem.add("I played chess in the park", timestamp="2026-11-23T18:00:00+00:00")   # Monday
    q = "What did I play in the park yesterday?"
    first = {}
    for when in (None, "2026-11-24T09:00:00Z", "now"):
        extra = [] if when is None else ["--asked-at", when]
        run = cli(capsys, "search", q, "-k", "1", "--path", path, "--json", *extra)
        assert run.code == 0, run.err
        first[when] = json.loads(run.out)[0]["text"]
    assert first[None] == "I played tennis in the park"        # from the latest message: Monday's yesterday
    assert first["2026-11-24T09:00:00Z"] == "I played chess in the park"
    run = cli(capsys, "recall", q, "--budget", "20", "--path", path, "--asked-at", "2026-11-24T09:00:00Z")
    assert run.code == 0 and "chess" in run.out and "tennis" not in run.out
    run = cli(capsys, "search", q, "--path", path, "--asked-at", "tomorrow")
    assert run.code != 0 and "--asked-at" in run.err


_READ_WITHOUT_WRITE = """
import contextlib, io, os, sys
from hippo.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main(["demo", "--budget", "50"])  # every module a read imports lazily, loaded while they are readable
{drop}
for argv in (["search", "kayak", "-k", "1", "--json"], ["list", "--limit", "1", "--json"],
             ["forget", "--id", "1", "--yes"]):
    print("exit", argv[0], main([*argv, "--path", sys.argv[1], "-n", "ann"]), flush=True)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="permissions as on Linux")
def test_read_commands_answer_from_a_store_this_user_cannot_write(tmp_path) -> None:
    """A store on read-only media, or one the user may read but not write: `hippo search` failed with "open it
    with read_only=True", which no option of the command line gives; the reads answer as Memory(read_only=True)
    does, and a write is refused without changing the file."""
    seen: dict[str, object] = {}

    def build(path: Path) -> None:
        with hippo.Memory(path, namespace="ann") as mem:
            mem.add_many([{"text": f"day {i}: Ann took the red kayak to the lake", "speaker": "Ann"} for i in range(30)])
            seen["first"] = jsonable(mem.list(limit=1))
            seen["best"] = jsonable(mem.search("kayak", k=1))

    with unwritable_store("hippo-ro-cli-", build) as (path, drop):
        first, best = seen["first"], seen["best"]
        before = path.read_bytes()
        proc = subprocess.run([sys.executable, "-c", _READ_WITHOUT_WRITE.format(drop=drop), str(path)],
                              capture_output=True, text=True, timeout=300,
                              env={k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "TQDM_"))})
        exits = [line for line in proc.stdout.splitlines() if line.startswith("exit ")]
        assert exits == ["exit search 0", "exit list 0", "exit forget 2"], proc.stdout + proc.stderr
        documents = json.JSONDecoder()
        out, found = proc.stdout, []
        while "[" in out:
            value, end = documents.raw_decode(out, out.index("["))
            found.append(value)
            out = out[end:]
        assert found == [best, first]
        assert "read-only" in proc.stderr and "delete" in proc.stderr
        assert path.read_bytes() == before and sorted(os.listdir(path.parent)) == ["store.db"]


_HAS_MCP = importlib.util.find_spec("mcp") is not None


@pytest.mark.parametrize("argv, opens", [
    (["search", "x", "--asked-at", "tomorrow"], "--asked-at 'tomorrow' is not an ISO-8601"),
    (["recall", "x", "--as-of", "soon"], "--as-of 'soon' is not an ISO-8601"),
    (["search", "x", "--until", "3000-01-01"], "--until 3000-01-01T00:00:00+00:00 is out of range"),
    (["search", "x", "--since", "2024-05-01", "--until", "2024-01-01"],
     "--since ('2024-05-01') must be earlier than --until ('2024-01-01')"),
    (["timeline", "Ann", "--since", "noon"], "--since 'noon' is not"),
    (["timeline", "Ann", "--limit", "0"], "--limit must be >= 1"),
    (["timeline", " "], "QUERY must not be empty"),
    (["recall", " "], "QUERY must not be empty"),
    (["list", "--limit", "-1"], "--limit must be >= 0"),
    (["list", "--offset", "-1"], "--offset must be >= 0"),
    (["read", "-1"], "ID must be >= 0"),
    (["read", "1", "--before", "-1"], "--before must be >= 0"),
    (["read", "1", "--after", str(2 ** 70)], "--after must be <="),
    (["topics", "soon"], "TOPIC_ID must be an int or 'current'"),
    (["export", ""], "OUT must not be empty"),
    (["search", "x", "-n", ""], "--namespace must be a non-empty str"),
    (["search", "x", "--filter", '{"speaker": {"$in": "Ann"}}'], "--filter['speaker']['$in'] must be a list"),
    (["list", "--filter", '{"$near": 1}'], "--filter: unknown operator '$near'"),
    # a message that opens with a noun, not an argument, is left as it is
    (["topics", "424242"], "topic 424242 does not exist"),
    (["read", "424242"], "id 424242 is not a message"),
    (["ingest", "session"], "session: no such file"),  # a file named as an option is the file
])
def test_errors_name_the_option_the_user_typed(store, capsys, argv, opens) -> None:
    """An error of the API call a command makes named the API's argument (asked_at, message_id, as_of, limit of
    Memory.read's before ...), which the command line does not have; it names the option or argument typed."""
    path = ["--path", str(store)] + ([] if "-n" in argv else ["-n", "ann"])
    run = cli(capsys, *argv, *path)
    assert_one_line_error(run)
    assert run.err.startswith(f"hippo: error: {opens}"), run.err


def test_errors_of_files_name_the_argument(store, tmp_path, capsys) -> None:
    missing = tmp_path / "no-such-folder" / "x.db"
    run = cli(capsys, "backup", missing, "--path", store)
    assert run.err == f"hippo: error: OUT {str(missing)!r}: its folder does not exist\n", run.err
    run = cli(capsys, "restore", store, "--path", missing, "--yes")
    assert run.err == f"hippo: error: --path {str(missing)!r}: its folder does not exist\n", run.err
    run = cli(capsys, "export", missing, "--path", store, "-n", "ann")
    assert run.err.startswith(f"hippo: error: cannot write the export file at OUT {str(missing)!r}: "), run.err
    not_a_store = tmp_path / "notes.txt"
    not_a_store.write_text("not a store", encoding="utf-8")
    run = cli(capsys, "restore", not_a_store, "--path", tmp_path / "r.db", "--yes")
    assert run.err.startswith(f"hippo: error: BACKUP {str(not_a_store)!r} is not a readable SQLite store"), run.err
    run = cli(capsys, "export", store, "--path", store, "-n", "ann")
    assert run.err.startswith(f"hippo: error: OUT {str(store)!r} is the store file itself"), run.err
    run = cli(capsys, "backup", store, "--path", store)
    assert run.err.startswith(f"hippo: error: OUT {str(store)!r} is the store file itself"), run.err
    run = cli(capsys, "delete-namespace", "nobody", "--path", store, "--yes")
    assert run.err.startswith("hippo: error: namespace 'nobody' holds no messages"), run.err


@pytest.mark.skipif(not _HAS_MCP, reason="the MCP SDK (extra 'mcp') is not installed")
@pytest.mark.parametrize("argv, opens", [
    (["--user", " "], "--user must be a non-empty str"),
    (["--port", "0"], "--port must be an int in 1..65535"),
    (["--mount", "mcp"], "--mount must be a path starting with '/'"),
    (["--timezone", "Mars/Olympus"], "--timezone must be an IANA time zone name"),
])
def test_mcp_errors_name_the_option_the_user_typed(tmp_path, capsys, argv, opens) -> None:
    run = cli(capsys, "mcp", *argv, "--path", tmp_path / "s.db")
    assert_one_line_error(run)
    assert run.err.startswith(f"hippo: error: {opens}"), run.err
    assert not (tmp_path / "s.db").exists()


def test_forget_keeps_a_message_updated_so_that_it_no_longer_matches_before_the_deletion(location, capsys,
                                                                                          monkeypatch) -> None:
    """``hippo forget`` lists the matches, asks, reads them again and deletes them by id: an update that landed
    between that last read and the deletion (another process marking a draft "keep") was not looked at, and the
    message was deleted. The filter is now judged in the deleting transaction, as ``Memory.forget`` judges it.
    Reference: the same forget run after the update."""
    with hippo.Memory(location, namespace="ann") as mem:
        drafts = mem.add_many([{"text": f"draft note {k}", "metadata": {"status": "draft"}} for k in range(3)])
    from hippo.store.postgres import PostgresStore
    from hippo.store.sqlite import SQLiteStore

    updated: list[int] = []

    def racing(real):
        def delete(self, namespace, ids, *args, **kwargs):
            if not updated:  # right before the deletion's transaction
                updated.append(drafts[1].id)
                with hippo.Memory(location, namespace="ann") as other:
                    other.update(drafts[1].id, metadata={"status": "keep"})
            return real(self, namespace, ids, *args, **kwargs)
        return delete

    for cls in (SQLiteStore, PostgresStore):
        monkeypatch.setattr(cls, "delete", racing(cls.delete))
    run = cli(capsys, "forget", "--filter", '{"status": "draft"}', "--path", location, "-n", "ann", "--yes", "--json")
    monkeypatch.undo()
    assert updated == [drafts[1].id]
    assert json.loads(run.out) == {"namespace": "ann", "forgotten": 2}
    with hippo.Memory(location, namespace="ann") as mem:
        assert [(m.text, m.metadata) for m in mem.list()] == [("draft note 1", {"status": "keep"})]
