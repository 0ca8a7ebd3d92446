"""Isolation and privacy: namespaces never leak, deletion leaves no trace, files are private, no network,
no secrets at rest.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest

from hippo import Memory, NotFound, WaveletMatrix
from hippo.text import tokenizer

# Every API that reads one namespace, as (name, call(view, probe_word, foreign_id) -> texts it returned).
READS = {
    "search": lambda m, w, i: [h.text for h in m.search(w, k=50)],
    "search filter": lambda m, w, i: [h.text for h in m.search(w, k=50, filter={"tag": "shared"})],
    "recall": lambda m, w, i: [x.text for x in m.recall(w, budget_tokens=4000).messages],
    "recall text": lambda m, w, i: [m.recall(w, budget_tokens=4000).text],
    "list": lambda m, w, i: [x.text for x in m.list()],
    "list filter": lambda m, w, i: [x.text for x in m.list(filter={"tag": "shared"})],
    "read own": lambda m, w, i: [x.text for x in m.read(m.list()[0].id, before=50, after=50)],
}


def _fill(mem: Memory, who: str) -> list[int]:
    items = [{"text": f"{who} shared word lighthouse {who}secret{i}", "speaker": who, "session_id": "s1",
              "metadata": {"tag": "shared", "owner": who}} for i in range(30)]
    got = mem.using(who).add_many(items[:20])
    mem.using(who).flush()
    got += mem.using(who).add_many(items[20:])  # a sealed part and an unsealed tail
    return [g.id for g in got]


@pytest.fixture()
def two_tenants(tmp_path):
    path = tmp_path / "tenants.db"
    with Memory(path, config={"seal_tokens": 64}) as mem:
        ids = {who: _fill(mem, who) for who in ("alice", "bob")}
        yield mem, ids


@pytest.mark.parametrize("api", sorted(READS))
def test_reads_never_cross_namespaces(two_tenants, api) -> None:
    mem, ids = two_tenants
    for me, other in (("alice", "bob"), ("bob", "alice")):
        view = mem.using(me)
        for probe in ("lighthouse", f"{other}secret3", other, "shared word"):
            texts = READS[api](view, probe, ids[other][0])
            assert not any(other in t for t in texts), (api, me, probe, texts[:3])


def test_ids_of_another_namespace_do_not_exist_here(two_tenants) -> None:
    mem, ids = two_tenants
    alice = mem.using("alice")
    for i in ids["bob"][:5] + ids["bob"][-5:]:
        with pytest.raises(NotFound):
            alice.get(i)
        with pytest.raises(NotFound):
            alice.read(i)
    assert alice.delete(ids["bob"]) == 0
    assert alice.forget({"owner": "bob"}) == 0
    assert mem.using("bob").count() == 30


def test_writes_and_deletes_stay_in_their_namespace(two_tenants, tmp_path) -> None:
    mem, ids = two_tenants
    alice, bob = mem.using("alice"), mem.using("bob")
    assert alice.forget({"tag": "shared"}) == 30
    assert bob.count() == 30 and alice.count() == 0
    assert all(h.namespace == "bob" for h in bob.search("lighthouse", k=50))
    alice.add("alice again")
    assert alice.clear() == 1
    assert bob.count() == 30
    assert mem.delete_namespace("alice") == 0
    assert mem.namespaces() == ["bob"]
    n = bob.export(tmp_path / "bob.jsonl")
    lines = (tmp_path / "bob.jsonl").read_text(encoding="utf-8").splitlines()
    assert n == 30 and len(lines) == 31 and not any("alice" in line for line in lines)
    assert bob.stats()["messages"] == 30


def test_bytes_per_token_are_the_files_over_every_namespace_loaded_or_not(tmp_path) -> None:
    """The store file holds every namespace: its bytes per stored token are the same in a process that has read only
    one namespace and in one that has read them all."""
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        a = mem.using("a").add_many({"text": f"alice note {i} about the orchard"} for i in range(40))
        b = mem.using("b").add_many({"text": f"bob writes a longer note {i} about the harbour"} for i in range(60))
    tokens = sum(it.n_tokens for it in a + b)
    got = []
    for touch_b in (False, True):
        with Memory(path) as mem:
            if touch_b:
                mem.using("b").search("harbour")
            stats = mem.using("a").stats()
            assert stats["store"]["tokens"] == tokens
            got.append(stats["store_bytes_per_token"])
    assert got[0] == got[1] == pytest.approx(stats["store"]["file_bytes"] / tokens)


def test_export_holds_only_its_namespace(two_tenants, tmp_path) -> None:
    mem, _ = two_tenants
    mem.using("alice").export(tmp_path / "a.jsonl")
    body = (tmp_path / "a.jsonl").read_text(encoding="utf-8")
    assert "bob" not in body and body.count("alicesecret") == 30
    with Memory(None) as fresh:
        assert fresh.using("x").import_(tmp_path / "a.jsonl") == 30
        assert fresh.namespaces() == ["x"]


def test_langgraph_store_namespaces_do_not_leak() -> None:
    pytest.importorskip("langgraph")
    from langchain_hippo import HippoStore

    with Memory(None) as mem:
        mem.using("plain").add("a conversation message about tulips")
        store = HippoStore(mem)
        store.put(("users", "1"), "a", {"note": "tulips for user one"})
        store.put(("users", "10"), "b", {"note": "tulips for user ten"})
        store.put(("users", "1", "prefs"), "c", {"note": "tulips nested under one"})
        assert store.list_namespaces() == [("users", "1"), ("users", "1", "prefs"), ("users", "10")]
        one = store.search(("users", "1"), query="tulips", limit=10)
        assert {i.value["note"] for i in one} == {"tulips for user one", "tulips nested under one"}
        assert [i.value["note"] for i in store.search(("users", "10"), query="tulips")] == ["tulips for user ten"]
        assert store.get(("users", "1"), "b") is None
        store.delete(("users", "1"), "a")
        assert store.get(("users", "10"), "b") is not None
        assert "plain" in mem.namespaces()
        assert all(not n.startswith("lg.") for n in mem.using("plain").list() and ["plain"])


def test_adapter_retrievers_read_only_their_namespace() -> None:
    pytest.importorskip("langchain_core")
    from langchain_hippo import HippoRetriever

    with Memory(None) as mem:
        mem.using("a").add("alpha note about kayaks")
        mem.using("b").add("beta note about kayaks")
        docs = HippoRetriever(memory=mem, namespace="a", k=10).invoke("kayaks")
        assert [d.page_content for d in docs] == ["alpha note about kayaks"]
        try:
            from llamaindex_hippo.retrievers import HippoRetriever as LI
        except ImportError:
            return
        nodes = LI(mem, namespace="b", similarity_top_k=10).retrieve("kayaks")
        assert [n.node.get_content() for n in nodes] == ["beta note about kayaks"]


# ---------------------------------------------------------------------------- deletion leaves no trace

SECRET = "Quixotry7Zebulon"


def _file_bytes(path: Path) -> bytes:
    return b"".join(Path(str(path) + s).read_bytes() for s in ("", "-wal", "-shm")
                    if Path(str(path) + s).exists())


def _token_bytes(text: str) -> bytes:
    return np.asarray(tokenizer.encode(text), "<u4").tobytes()


def _chunks_hold(path: Path, tokens: np.ndarray) -> bool:
    db = sqlite3.connect(path)
    try:
        blobs = [b for (b,) in db.execute("SELECT blob FROM chunks")]
    finally:
        db.close()
    needle = tokens.tobytes()
    # a sealed chunk is a deflated, serialized wavelet matrix
    return any(needle in WaveletMatrix.from_bytes(zlib.decompress(b)).access_range().astype("<u4").tobytes()
               for b in blobs)


def _secret_items(tag: str) -> list[dict]:
    return [{"text": f"my {tag} password hint is {SECRET} {i}", "speaker": f"{SECRET}-speaker",
             "session_id": f"{SECRET}-session", "metadata": {"note": f"{SECRET}-meta", "tag": tag}}
            for i in range(3)]


@pytest.mark.parametrize("how", ["delete", "forget", "clear", "delete_namespace"])
def test_deleted_content_leaves_no_bytes_after_vacuum(tmp_path, how) -> None:
    path = tmp_path / "trace.db"
    ns = "tenant-ns"
    with Memory(path, config={"seal_tokens": 200}) as mem:
        keep = mem.using("keep")
        keep.add_many([{"text": f"innocent filler message {i} about gardening"} for i in range(60)])
        view = mem.using(ns)
        view.add_many([{"text": f"neighbour message {i} about bread"} for i in range(30)])
        sealed = view.add_many(_secret_items("sealed"))
        view.flush()
        view.add_many([{"text": f"more filler {i}"} for i in range(5)])
        tail = view.add_many(_secret_items("tail"))
        mem.engine.rt.store.checkpoint()
        raw = _file_bytes(path)
        assert SECRET.encode() in raw                       # positive controls: the scan can see them
        assert _token_bytes(tail[0].text) in raw
        assert _chunks_hold(path, tokenizer.encode(sealed[0].text))

        victims = [it.id for it in sealed + tail]
        if how == "delete":
            assert view.delete(victims) == 6
        elif how == "forget":
            assert view.forget({"note": f"{SECRET}-meta"}) == 6
        elif how == "clear":
            view.clear()
        else:
            mem.delete_namespace(ns)
        assert not view.search(SECRET, k=10)
        assert not view.search("password hint", k=10) or how in ("delete", "forget") and all(
            SECRET not in h.text for h in view.search("password hint", k=10))
        mem.vacuum()
        assert SECRET not in json.dumps(view.stats())
    raw = _file_bytes(path)
    assert SECRET.encode() not in raw, "a deleted string is still in the store file"
    for it in sealed + tail:
        assert _token_bytes(it.text) not in raw
        assert not _chunks_hold(path, tokenizer.encode(it.text))
    with Memory(path) as mem:
        assert mem.using("keep").count() == 60
        if how in ("delete", "forget"):
            assert mem.using(ns).count() == 35


def test_deleted_namespace_name_leaves_no_bytes(tmp_path) -> None:
    """The namespace name is often a user id: deleting the namespace removes it from the file."""
    path = tmp_path / "ns.db"
    name = f"user-{SECRET}@example.org"
    with Memory(path) as mem:
        mem.using(name).add("a message of a departing user")
        mem.using("other").add("someone else")
        mem.delete_namespace(name)
        mem.vacuum()
        assert name not in mem.namespaces()
    assert SECRET.encode() not in _file_bytes(path)


# ------------------------------------------------------------------------------------- file permissions


def test_store_and_sidecar_files_are_private_under_a_loose_umask(tmp_path) -> None:
    old = os.umask(0)
    try:
        path = tmp_path / "private.db"
        with Memory(path) as mem:
            mem.add_many([{"text": f"private message {i}"} for i in range(50)])
            mem.search("private", k=3)
            files = [Path(str(path) + s) for s in ("", "-wal", "-shm")]
            present = [f for f in files if f.exists()]
            assert len(present) == 3
            for f in present:
                assert f.stat().st_mode & 0o777 == 0o600, (f.name, oct(f.stat().st_mode))
            mem.export(tmp_path / "out.jsonl")
        assert (tmp_path / "out.jsonl").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


# ------------------------------------------------------------------------------------------- no network


# pytest-socket warns as it refuses the connection; the refusal is what this test asserts
@pytest.mark.filterwarnings("ignore:A test tried to use socket:UserWarning")
def test_sockets_to_public_addresses_are_blocked_in_this_suite() -> None:
    # pytest-socket must be active (pyproject addopts) before anything here tries to connect; without it
    # this test fails without sending a packet.
    import pytest_socket

    assert socket.socket is not pytest_socket._true_socket or socket.socket.connect is not \
        pytest_socket._true_connect, "pytest-socket is not active: run with --disable-socket"
    with pytest.raises((pytest_socket.SocketBlockedError, pytest_socket.SocketConnectBlockedError)):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.settimeout(0.5)
            s.connect(("192.0.2.1", 443))  # TEST-NET-1: documentation range, never routed
        finally:
            s.close()


def test_hippo_makes_no_network_call(tmp_path) -> None:
    """A full workload in a fresh interpreter, with every way to reach the network replaced by a recorder."""
    code = textwrap.dedent("""
        import json, socket, sys
        calls = []
        def record(name):
            def f(*a, **k):
                calls.append(name)
                raise OSError("network disabled by the test")
            return f
        socket.socket.connect = record("connect")
        socket.socket.connect_ex = record("connect_ex")
        socket.getaddrinfo = record("getaddrinfo")
        socket.create_connection = record("create_connection")
        from hippo import Memory
        from hippo.cli import main
        with Memory(sys.argv[1]) as m:
            m.add_many([{"text": f"offline message {i} about rivers"} for i in range(100)])
            m.search("rivers", k=3); m.recall("rivers", budget_tokens=100); m.export(sys.argv[1] + ".jsonl")
        main(["demo", "--budget", "80"])
        print(json.dumps(calls))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HTTP", "HTTPS", "http"))}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "net.db")], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


# ------------------------------------------------------------------------------------------- no secrets


class _FakeLLM:
    """The shape of an OpenAI client: hippo may hold it, but its key must never be persisted or logged."""

    def __init__(self, key: str) -> None:
        self.api_key = key
        self.base_url = "http://127.0.0.1:9/v1"
        self.calls = 0

        class _Completions:
            def create(inner, **kwargs):  # noqa: N805
                self.calls += 1
                raise RuntimeError("no LLM in tests")

        self.chat = type("Chat", (), {"completions": _Completions()})()

    def __repr__(self) -> str:  # a careless repr is exactly what must not end up anywhere
        return f"FakeLLM(api_key={self.api_key!r})"


def test_api_keys_never_reach_the_store_or_logs(tmp_path, caplog, capsys) -> None:
    key = "sk-test-" + "K3yNeverStored" * 3
    path = tmp_path / "keys.db"
    caplog.set_level(logging.DEBUG)
    with Memory(path, llm=_FakeLLM(key), config={"seal_tokens": 64}) as mem:
        mem.add_many([{"text": f"message {i} about the orchard", "metadata": {"i": i}} for i in range(80)])
        mem.search("orchard", k=3)
        mem.recall("orchard", budget_tokens=200)
        stats = json.dumps(mem.stats(), default=str)
        mem.export(tmp_path / "e.jsonl")
        shown = repr(mem) + str(mem.config)
        mem.vacuum()
    out = capsys.readouterr()
    for where, blob in (("store file", _file_bytes(path)), ("export", (tmp_path / "e.jsonl").read_bytes()),
                        ("stats", stats.encode()), ("repr", shown.encode()), ("logs", caplog.text.encode()),
                        ("stdout", out.out.encode()), ("stderr", out.err.encode())):
        assert key.encode() not in blob, f"the API key reached the {where}"


def test_a_namespace_deleted_and_refilled_elsewhere_is_reloaded(tmp_path) -> None:
    """Another process deletes a namespace and writes the same number of messages into it again: this process
    must not keep serving the deleted ones from its cache."""
    path = tmp_path / "aba.db"
    with Memory(path) as mem:
        view = mem.using("x")
        view.add_many([{"text": "old message about comets"}, {"text": "old message about planets"}])
        assert "old message about comets" in [h.text for h in view.search("comets", k=5)]
        code = textwrap.dedent("""
            import sys
            from hippo import Memory
            with Memory(sys.argv[1]) as m:
                m.delete_namespace("x")
                m.using("x").add_many([{"text": "new message about comets"}, {"text": "new message about moons"}])
        """)
        subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
        texts = [h.text for h in view.search("comets", k=5)]
        assert "new message about comets" in texts and not any(t.startswith("old") for t in texts)
        assert [it.text for it in view.list()] == ["new message about comets", "new message about moons"]
