"""HippoStore: the regressions of issue 22, what only hippo does (query ranking with scores, index fields and
embeddings, TTL, namespace deletion, persistence) and use from a LangGraph graph. The differential suites against
InMemoryStore are in test_store_differential.py; the semantic-search comparison in test_store_semantic.py."""

from __future__ import annotations

import asyncio
import math
import random
import re
import threading
import time

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

import hippo
from langchain_hippo import HippoStore
from langchain_hippo.store import InvalidStoreNamespace
from tests.langchain.store_reference import Clock, view
from tests.processes import run_together
from tests.store_faults import fail_at, fail_dropping


def _random_ops(rng: random.Random, n: int) -> list:
    namespaces = [("a",), ("a", "b"), ("x", "y")]
    ops = []
    for _ in range(n):
        ns, key = rng.choice(namespaces), rng.choice(["k0", "k1", "k2"])
        roll = rng.random()
        if roll < 0.5:
            ops.append(PutOp(ns, key, {"n": rng.randint(0, 9), "text": rng.choice(["alpha note", "beta"])}))
        elif roll < 0.6:
            ops.append(PutOp(ns, key, None))
        elif roll < 0.75:
            ops.append(GetOp(ns, key))
        elif roll < 0.9:
            ops.append(SearchOp(ns[: rng.randint(0, len(ns))], limit=rng.randint(1, 5), offset=rng.randint(0, 2)))
        else:
            ops.append(ListNamespacesOp(max_depth=rng.choice([None, 1])))
    return ops


async def test_abatch_same_as_batch():
    rng = random.Random(7)
    ops = _random_ops(rng, 80)
    sync_store, async_store = HippoStore(hippo.Memory(None)), HippoStore(hippo.Memory(None))
    want = [view(sync_store.batch([op])[0]) for op in ops]
    got = [view((await async_store.abatch([op]))[0]) for op in ops]
    assert got == want
    both = await async_store.abatch([GetOp(("a",), "k0"), SearchOp(("a",)), ListNamespacesOp()])
    assert [view(r) for r in both] == [view(r) for r in sync_store.batch(
        [GetOp(("a",), "k0"), SearchOp(("a",)), ListNamespacesOp()])]


@pytest.fixture
def store():
    s = HippoStore(hippo.Memory(None))
    yield s
    s.close()


def test_query_search_ranks_by_hippo_score(store):
    store.put(("docs", "u1"), "pizza", {"text": "Ann loves margherita pizza with basil"})
    store.put(("docs", "u1"), "cello", {"text": "Ann practises the cello every morning"})
    store.put(("docs", "u2"), "hike", {"text": "Bob hiked the Dolomites in June"})
    store.put(("other",), "pizza2", {"text": "pizza oven manual"})
    hits = store.search(("docs",), query="pizza basil")
    assert hits and hits[0].key == "pizza" and isinstance(hits[0], SearchItem)
    assert isinstance(hits[0].score, float) and hits[0].score > 0
    assert {h.key for h in hits} == {"pizza", "cello", "hike"}  # every item under the prefix, ranked ones first
    scored = [h.score for h in hits if h.score is not None]
    assert [h.score for h in hits][: len(scored)] == scored == sorted(scored, reverse=True)
    assert [(h.key, h.score) for h in store.search(("docs", "u2"), query="pizza")] == [("hike", None)]
    assert [h.key for h in store.search((), query="Dolomites")][:1] == ["hike"]


async def test_query_search_async(store):
    await store.aput(("docs",), "a", {"text": "the lighthouse keeper"})
    await store.aput(("docs",), "b", {"text": "a beagle named Pixel"})
    hits = await store.asearch(("docs",), query="beagle")
    assert [h.key for h in hits][:1] == ["b"]
    assert (await store.aget(("docs",), "a")).value == {"text": "the lighthouse keeper"}
    await store.adelete(("docs",), "a")
    assert await store.aget(("docs",), "a") is None
    assert await store.alist_namespaces() == [("docs",)]


def test_query_with_filter_limit_offset(store):
    for i in range(6):
        store.put(("n",), f"k{i}", {"text": f"zebra number {i}", "i": i})
    store.put(("n",), "other", {"text": "unrelated giraffe", "i": 99})
    hits = store.search(("n",), query="zebra", filter={"i": {"$gte": 2}}, limit=10)
    assert sorted(h.key for h in hits[:4]) == ["k2", "k3", "k4", "k5"] and all(h.score for h in hits[:4])
    assert [(h.key, h.score) for h in hits[4:]] == [("other", None)]
    page1 = store.search(("n",), query="zebra", limit=2)
    page2 = store.search(("n",), query="zebra", limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2 and not {h.key for h in page1} & {h.key for h in page2}
    assert store.search(("n",), query="zebra", limit=0) == []


def test_index_false_and_index_fields(store):
    store.put(("p",), "secret", {"text": "the vault code is swordfish"}, index=False)
    store.put(("p",), "titled", {"title": "Gardening", "body": "tomatoes need sun"}, index=["title"])
    # an unindexed item is never ranked, but is returned (score None), as InMemoryStore does
    assert {(i.key, i.score) for i in store.search(("p",), query="swordfish")} == {("secret", None), ("titled", None)}
    assert store.get(("p",), "secret").value == {"text": "the vault code is swordfish"}
    assert {i.key for i in store.search(("p",))} == {"secret", "titled"}
    ranked = store.search(("p",), query="gardening")
    assert [i.key for i in ranked] == ["titled", "secret"] and ranked[0].score and ranked[1].score is None
    assert all(i.score is None for i in store.search(("p",), query="tomatoes"))


def test_store_index_fields_config():
    store = HippoStore(None, index={"fields": ["summary"]})
    store.put(("m",), "a", {"summary": "quarterly revenue report", "body": "penguins"})
    assert [(i.key, i.score is not None) for i in store.search(("m",), query="revenue")] == [("a", True)]
    assert [(i.key, i.score) for i in store.search(("m",), query="penguins")] == [("a", None)]
    store.put(("m",), "b", {"summary": "ignored", "body": "penguins"}, index=["body"])
    assert [(i.key, i.score is not None) for i in store.search(("m",), query="penguins")] == [("b", True),
                                                                                            ("a", False)]


def test_update_replaces_and_sets_created_at_as_inmemorystore(store):
    """issue 22 item 9: ``InMemoryStore._apply_put_ops`` gives every put a new ``created_at`` (SqliteStore's
    ``INSERT OR REPLACE`` too); hippo does the same, and an overwrite keeps the item's place in listings."""
    clock = Clock().install()
    try:
        store.put(("u",), "k", {"v": 1})
        store.put(("u",), "other", {"v": 0})
        first = store.get(("u",), "k")
        clock.now += 90
        store.put(("u",), "k", {"v": 2})
        second = store.get(("u",), "k")
    finally:
        clock.restore()
    assert second.value == {"v": 2}
    assert second.created_at == second.updated_at
    assert (second.created_at - first.created_at).total_seconds() == pytest.approx(90)
    assert [i.key for i in store.search(("u",))] == ["k", "other"]
    assert len(store.memory.using("lg.u").list()) == 2  # the old version is gone
    ref = InMemoryStore()
    ref.put(("u",), "k", {"v": 1})
    ref_first = ref.get(("u",), "k")
    ref.put(("u",), "k", {"v": 2})
    assert ref.get(("u",), "k").created_at > ref_first.created_at


def test_namespace_mapping_and_isolation(store):
    store.memory.add("a conversation turn in the default namespace")
    store.put(("users", "42", "prefs"), "food", {"likes": "pizza"})
    assert "lg.users.42.prefs" in store.memory.namespaces()
    assert store.hippo_namespace(("users", "42")) == "lg.users.42"
    assert store.langgraph_namespace("lg.users.42") == ("users", "42")
    assert store.langgraph_namespace("default") is None
    assert store.list_namespaces() == [("users", "42", "prefs")]
    other = HippoStore(store.memory, prefix="app")
    assert other.list_namespaces() == [] and other.get(("users", "42", "prefs"), "food") is None


def test_delete_namespace_removes_subtree(store):
    for ns in [("t",), ("t", "a"), ("t", "a", "b"), ("u",)]:
        store.put(ns, "k", {"ns": list(ns)})
    assert store.delete_namespace(("t", "a")) == 2
    assert store.list_namespaces() == [("t",), ("u",)]
    assert store.get(("t",), "k") is not None


@pytest.fixture
def clock():
    c = Clock().install()
    yield c
    c.restore()


def test_ttl_expiry_and_sweep(clock):
    store = HippoStore(hippo.Memory(None), ttl={"default_ttl": 1.0})
    store.put(("c",), "short", {"text": "ephemeral cache line"}, ttl=0.5)
    store.put(("c",), "default", {"text": "lasts a minute"})
    store.put(("c",), "forever", {"text": "persistent cache line"}, ttl=None)
    store.put(("gone",), "k", {"text": "only a short-lived item here"}, ttl=0.5)
    assert store.get(("c",), "short") is not None
    assert store.list_namespaces() == [("c",), ("gone",)]
    clock.now += 31
    assert store.get(("c",), "short") is None
    assert {i.key for i in store.search(("c",))} == {"default", "forever"}
    assert all(i.key != "short" for i in store.search(("c",), query="ephemeral cache"))
    # issue 22 item 9: a namespace holding only expired items is not listed
    assert store.list_namespaces() == [("c",)]
    assert store.sweep_ttl() == 2
    assert len(store.memory.using("lg.c").list()) == 2
    md = store.memory.using("lg.c").list(filter={"store_key": "default"})[0].metadata
    assert md["store_ttl"] == 1.0 and md["expires_at"] == pytest.approx(clock.now - 31 + 60)


def test_omit_expired_false_keeps_expired_items_until_the_sweep(clock):
    store = HippoStore(None, ttl={"omit_expired": False})
    store.put(("c",), "k", {"v": 1}, ttl=1.0)
    clock.now += 120
    assert store.get(("c",), "k", refresh_ttl=False).value == {"v": 1} and store.list_namespaces() == [("c",)]
    assert store.sweep_ttl() == 1 and store.get(("c",), "k") is None


def test_ttl_refresh_on_read(clock):
    store = HippoStore(hippo.Memory(None))
    store.put(("c",), "k", {"v": 1}, ttl=1.0)
    for _ in range(4):
        clock.now += 45
        assert store.get(("c",), "k") is not None  # each read pushes expiry back by a minute
    clock.now += 45
    assert [i.key for i in store.search(("c",))] == ["k"]
    clock.now += 45
    assert store.get(("c",), "k", refresh_ttl=False) is not None
    clock.now += 45
    assert store.get(("c",), "k") is None
    no_refresh = HippoStore(hippo.Memory(None), ttl={"refresh_on_read": False})
    no_refresh.put(("c",), "k", {"v": 1}, ttl=1.0)
    clock.now += 45
    assert no_refresh.get(("c",), "k") is not None
    clock.now += 45
    assert no_refresh.get(("c",), "k") is None


def test_ttl_sweeper_thread():
    store = HippoStore(hippo.Memory(None))
    store.put(("c",), "k", {"v": 1}, ttl=0.0005)
    store.start_ttl_sweeper(sweep_interval_minutes=0.001)
    deadline = time.time() + 5
    while store.memory.using("lg.c").count() and time.time() < deadline:
        time.sleep(0.02)
    assert store.stop_ttl_sweeper(timeout=5)
    assert store.memory.using("lg.c").count() == 0


def test_a_ttl_sweeper_with_an_interval_past_the_clock_waits_instead_of_dying(monkeypatch):
    """``start_ttl_sweeper(1e300)`` (or a TTL config's ``sweep_interval_minutes`` that long) returned a thread that
    ended at once with ``OverflowError`` (a wait past the platform's clock); it now waits until stopped. An infinite
    interval is refused by name, as the TTL config refuses it."""
    died: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    for store in (HippoStore(hippo.Memory(None)), HippoStore(hippo.Memory(None), ttl={"sweep_interval_minutes": 1e300})):
        store.start_ttl_sweeper(1e300 if store.ttl_config is None else None)
        assert store.stop_ttl_sweeper(timeout=30) and died == []
        with pytest.raises(hippo.InvalidInput, match="sweep_interval_minutes"):
            store.start_ttl_sweeper(float("inf"))
        store.close()


def test_the_ttl_sweeper_survives_a_failed_sweep():
    """One sweep that failed (a store busy with another process's write) ended the sweeper thread: expired items
    were never deleted again. As LangGraph's ``PostgresStore`` sweeper, it logs the failure and sweeps again at
    the next interval; a memory closed under it ends it quietly."""
    store = HippoStore(hippo.Memory(None))
    store.put(("c",), "k", {"v": 1}, ttl=0.0005)
    real, calls, swept = store.sweep_ttl, [], threading.Event()

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise hippo.StoreBusy("database is locked")
        out = real()
        if out:
            swept.set()
        return out

    store.sweep_ttl = flaky
    sweeper = store.start_ttl_sweeper(sweep_interval_minutes=0.0005)
    assert swept.wait(30), "the sweeper stopped after its first sweep failed"
    assert sweeper.is_alive() and len(calls) >= 2 and store.memory.using("lg.c").count() == 0
    assert store.stop_ttl_sweeper(timeout=30)
    store.memory.close()
    closed = store.start_ttl_sweeper(sweep_interval_minutes=0.0005)
    closed.join(30)
    assert not closed.is_alive()


@pytest.mark.parametrize("namespace", [(), ("a.b",), ("",), ("langgraph", "x"), ("ok", 3)])
def test_invalid_namespaces(store, namespace):
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"v": 1})


@pytest.mark.parametrize("namespace", [("a.b",), ("",), ("ok", 3), ("nul\x00",), ("a", "b.c")])
async def test_every_method_raises_a_bad_namespace_as_invalid_input(store, namespace):
    """``BaseStore``'s methods check a namespace's labels before the batch and raised LangGraph's
    ``InvalidNamespaceError``, which no ``except hippo.InvalidInput`` catches, while the same namespace in ``batch``
    raised ``InvalidStoreNamespace``. Where ``InMemoryStore`` raises ``InvalidNamespaceError``, every method, sync
    and async, raises ``InvalidStoreNamespace`` (both) with the same message; nothing is stored."""
    reference = InMemoryStore()
    calls = {
        "put": lambda s, ns: s.put(ns, "k", {"v": 1}), "get": lambda s, ns: s.get(ns, "k"),
        "search": lambda s, ns: s.search(ns), "delete": lambda s, ns: s.delete(ns, "k"),
        "list_namespaces": lambda s, ns: s.list_namespaces(prefix=ns),
    }
    acalls = {
        "aput": lambda s, ns: s.aput(ns, "k", {"v": 1}), "aget": lambda s, ns: s.aget(ns, "k"),
        "asearch": lambda s, ns: s.asearch(ns), "adelete": lambda s, ns: s.adelete(ns, "k"),
        "alist_namespaces": lambda s, ns: s.alist_namespaces(prefix=ns),
    }
    raised = 0
    for name, call in calls.items():
        with pytest.raises(InvalidNamespaceError) as want:
            call(reference, namespace)
        with pytest.raises(InvalidStoreNamespace, match=re.escape(str(want.value))):
            call(store, namespace)
        raised += 1
    for name, call in acalls.items():
        with pytest.raises(InvalidNamespaceError) as want:
            await call(reference, namespace)
        with pytest.raises(InvalidStoreNamespace, match=re.escape(str(want.value))):
            await call(store, namespace)
        raised += 1
    assert raised == 10 and store.search(()) == []


async def test_a_namespace_that_is_no_tuple_is_refused_by_name(store):
    """A string namespace was taken label by character: ``put("users", ...)`` stored the item in
    ``("u", "s", "e", "r", "s")``, where ``search(("users",))`` does not find it, and ``delete_namespace("ab")``
    deleted the subtree ``("a", "b")``; ``delete_namespace(None)`` raised ``TypeError``. Each is refused with
    ``InvalidStoreNamespace`` naming the argument, before anything is stored or deleted."""
    store.put(("a", "b"), "k", {"v": 1})
    store.put(("u", "s", "e", "r", "s"), "k", {"v": 2})
    before = view(store.search(()))
    calls = [
        ("namespace", lambda: store.put("users", "k", {"v": 3})), ("namespace", lambda: store.get("users", "k")),
        ("namespace", lambda: store.delete("users", "k")), ("namespace_prefix", lambda: store.search("users")),
        ("prefix", lambda: store.list_namespaces(prefix="users")),
        ("suffix", lambda: store.list_namespaces(suffix="s")),
        ("namespace", lambda: store.batch([PutOp("users", "k", {"v": 3})])),
        ("namespace_prefix", lambda: store.batch([SearchOp("users")])),
        ("prefix", lambda: store.batch([ListNamespacesOp(match_conditions=(MatchCondition("prefix", "ab"),))])),
        ("namespace", lambda: store.delete_namespace("ab")), ("namespace", lambda: store.delete_namespace(None)),
    ]
    for name, call in calls:
        with pytest.raises(InvalidStoreNamespace, match=f"^{name} must be a tuple of strings"):
            call()
    for name, acall in [("namespace", lambda: store.aput("users", "k", {"v": 3})),
                        ("namespace", lambda: store.adelete_namespace("ab"))]:
        with pytest.raises(InvalidStoreNamespace, match=f"^{name} must be a tuple of strings"):
            await acall()
    assert view(store.search(())) == before
    store.put(["a", "c"], "k", {"v": 4})  # a list of labels is a namespace, as LangGraph's JSON gives it
    assert store.get(("a", "c"), "k").value == {"v": 4}


def test_invalid_labels_in_search_and_list(store):
    with pytest.raises(InvalidNamespaceError):
        store.search(("a.b",))
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=("x.y",))
    with pytest.raises(InvalidNamespaceError):
        store.batch([GetOp(("a", "b.c"), "k")])


@pytest.mark.parametrize(
    "op, name",
    [
        (PutOp(("a",), "k", ["not", "a", "dict"]), "value"),
        (PutOp(("a",), "k", {"bad": object()}), "value"),
        (PutOp(("a",), 5, {"v": 1}), "key"),
        (PutOp(("a",), "k", {"v": 1}, ttl=-1), "ttl"),
        (PutOp(("a",), "k", {"v": 1}, index="text"), "index"),
        (SearchOp(("a",), limit=-1), "limit"),
        (SearchOp(("a",), offset=-3), "offset"),
        (SearchOp(("a",), filter={"n": {"$regex": "x"}}), "filter"),
        (SearchOp(("a",), query=3), "query"),
        (ListNamespacesOp(max_depth=-1), "max_depth"),
        (ListNamespacesOp(offset=-1), "offset"),  # InMemoryStore slices from the end: the last namespace
        (ListNamespacesOp(limit=-1), "limit"),  # InMemoryStore slices: all but the last
        (ListNamespacesOp(match_conditions=(1,)), "match_conditions"),  # was AttributeError: no attribute 'path'
        (ListNamespacesOp(match_conditions=5), "match_conditions"),  # was TypeError: not iterable
        (GetOp(("a",), "keep", refresh_ttl="no"), "refresh_ttl"),  # was taken as True: the expiry pushed back
        (SearchOp(("a",), refresh_ttl=1), "refresh_ttl"),
    ],
)
def test_bad_arguments_raise_invalid_input(store, op, name):
    store.put(("a",), "keep", {"v": 0})
    with pytest.raises(hippo.InvalidInput, match=name):
        store.batch([PutOp(("a",), "first", {"v": 1}), op])
    # a batch is validated before it runs: nothing of it was applied, nothing stored was lost
    assert store.get(("a",), "first") is None and store.get(("a",), "keep").value == {"v": 0}


def test_bad_constructor_arguments():
    with pytest.raises(hippo.InvalidInput, match="memory"):
        HippoStore(42)
    with pytest.raises(hippo.InvalidInput, match="prefix"):
        HippoStore(hippo.Memory(None), prefix="a.b")
    with pytest.raises(hippo.InvalidInput, match="fields"):
        HippoStore(hippo.Memory(None), index={"fields": "text"})


def test_persists_in_a_file(tmp_path):
    path = tmp_path / "store.db"
    with HippoStore(str(path)) as store:
        store.put(("users", "1"), "prefs", {"food": "pizza"})
    with HippoStore(path) as store:
        assert store.get(("users", "1"), "prefs").value == {"food": "pizza"}
        assert [i.key for i in store.search(("users",), query="pizza")] == ["prefs"]


def test_stategraph_node_uses_the_store():
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.runtime import Runtime

    class State(TypedDict, total=False):
        user: str
        note: str
        recalled: list[str]

    def remember(state: State, runtime: Runtime) -> State:
        if state.get("note"):
            runtime.store.put(("notes", state["user"]), f"n{len(state['note'])}", {"text": state["note"]})
        hits = runtime.store.search(("notes", state["user"]), query="passport")
        return {"recalled": [h.value["text"] for h in hits]}

    graph = (StateGraph(State).add_node("remember", remember)
             .add_edge(START, "remember").add_edge("remember", END)
             .compile(store=HippoStore(hippo.Memory(None))))
    graph.invoke({"user": "ann", "note": "My passport expires in May."})
    graph.invoke({"user": "ann", "note": "I like green tea."})
    out = graph.invoke({"user": "ann"})
    assert out["recalled"] == ["My passport expires in May.", "I like green tea."]  # ranked first, then the rest
    assert graph.invoke({"user": "bob"})["recalled"] == []


# -- issue 22 regressions ------------------------------------------------------------------------------------


def test_item3_string_ranges_compare_as_text(store):
    """``InMemoryStore._apply_operator`` compares ``float(value) > float(arg)``: ISO dates raise ValueError there.
    hippo compares two strings as strings (ISO-8601 orders correctly), numbers as numbers (numeric text too, as
    ``float()`` does), and refuses a comparison it cannot make instead of answering ``[]``."""
    days = ["2023-11-30", "2024-01-01", "2024-03-15T09:30:00", "2025-06-01"]
    ref = InMemoryStore()
    for i, day in enumerate(days):
        for s in (store, ref):
            s.put(("log",), f"e{i}", {"date": day, "n": str(i * 5), "tag": "x"})
    got = store.search(("log",), filter={"date": {"$gte": "2024-01-01", "$lt": "2025-01-01"}})
    assert [i.value["date"] for i in got] == ["2024-01-01", "2024-03-15T09:30:00"]
    with pytest.raises(ValueError):
        ref.search(("log",), filter={"date": {"$gte": "2024-01-01"}})
    # numeric text against a number: float() on both sides, exactly as the reference
    assert ([i.key for i in store.search(("log",), filter={"n": {"$gt": 6}})]
            == [i.key for i in ref.search(("log",), filter={"n": {"$gt": 6}})] == ["e2", "e3"])
    with pytest.raises(hippo.InvalidInput, match="tag"):
        store.search(("log",), filter={"tag": {"$gt": 3}})
    with pytest.raises(ValueError):
        ref.search(("log",), filter={"tag": {"$gt": 3}})
    # an absent field matches no range (PostgreSQL / SQLite semantics); the reference raises TypeError
    for s in (store, ref):
        s.put(("other",), "undated", {"tag": "y"})
        s.put(("other",), "dated", {"tag": "y", "n": 1})
    assert [i.key for i in store.search(("other",), filter={"n": {"$lt": 3}})] == ["dated"]
    with pytest.raises(TypeError):
        ref.search(("other",), filter={"n": {"$lt": 3}})


def test_item4_a_query_without_an_index_returns_every_item(store):
    ref = InMemoryStore()
    for i, text in enumerate(["green tea in the morning", "passport expires in May", "likes hiking"]):
        store.put(("notes",), f"n{i}", {"text": text})
        ref.put(("notes",), f"n{i}", {"text": text})
    got = store.search(("notes",), query="quantum chromodynamics")
    assert sorted(view(got)) == sorted(view(ref.search(("notes",), query="quantum chromodynamics")))
    assert len(got) == 3 and all(i.score is None for i in got)
    ranked = store.search(("notes",), query="passport")
    assert ranked[0].key == "n1" and ranked[0].score > 0 and len(ranked) == 3


def test_item5_a_failing_batch_leaves_the_store_as_it_was(store):
    store.put(("a",), "keep", {"v": 0})
    for bad in (math.nan, math.inf, -math.inf, "\udcff"):
        with pytest.raises(hippo.InvalidInput, match="value"):
            store.batch([PutOp(("a",), "ok", {"v": 1}), PutOp(("a",), "keep", {"v": 2}),
                         PutOp(("b",), "bad", {"x": [1, {"y": bad}]})])
        assert store.get(("a",), "ok") is None and store.get(("a",), "keep").value == {"v": 0}
        assert store.list_namespaces() == [("a",)]


def test_item5_a_write_failure_leaves_the_batch_unapplied(store, monkeypatch):

    store.put(("a",), "keep", {"v": 0})
    store.put(("b",), "keep", {"v": 0})
    fail_at(monkeypatch, store.memory.engine.rt.store, "append", "lg.b")
    with pytest.raises(hippo.StoreError):
        store.batch([PutOp(("a",), "keep", {"v": 1}), PutOp(("a",), "new", {"v": 1}),
                     PutOp(("b",), "keep", {"v": 1})])
    monkeypatch.undo()
    assert view(store.search(())) == [(("a",), "keep", {"v": 0}), (("b",), "keep", {"v": 0})]
    assert len(store.memory.using("lg.a").list()) == 1


def test_item7_prefix_scores_are_on_one_scale(store):
    one = HippoStore(hippo.Memory(None))
    store.put(("users", "a"), "exact", {"text": "my favourite colour is ultramarine"})
    store.put(("users", "a"), "chess", {"text": "I play chess on sundays"})
    one.put(("users", "all"), "exact", {"text": "my favourite colour is ultramarine"})
    one.put(("users", "all"), "chess", {"text": "I play chess on sundays"})
    for i in range(20):
        text = {"text": f"note {i}: the favourite colour of item {i} is listed in the catalogue"}
        store.put(("users", "b"), f"b{i}", text)
        one.put(("users", "all"), f"b{i}", text)
    got = store.search(("users",), query="favourite colour ultramarine", limit=25)
    assert got[0].key == "exact" and got[0].namespace == ("users", "a")
    same = one.search(("users",), query="favourite colour ultramarine", limit=25)
    assert [(i.key, i.score) for i in got] == [(i.key, i.score) for i in same]


def test_item9_empty_namespaces_and_their_order(store):
    """``InMemoryStore`` keeps a namespace in its ``defaultdict`` once a get or a delete touched it and lists it
    even when it holds nothing; hippo (like the SQL stores) lists namespaces that hold an item, in the same
    sorted order."""
    ref = InMemoryStore()
    for s in (store, ref):
        for ns in [("b", "z"), ("a",), ("b", "a"), ("a", "c", "d")]:
            s.put(ns, "k", {"v": 1})
        s.delete(("b", "a"), "k")
        s.get(("never", "written"), "k")
    assert store.list_namespaces() == [("a",), ("a", "c", "d"), ("b", "z")]
    assert ref.list_namespaces() == [("a",), ("a", "c", "d"), ("b", "a"), ("b", "z"), ("never", "written")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",)]


def test_item9_unindexed_items_are_returned_for_a_query_as_inmemorystore():
    from tests.langchain.store_reference import DIMS, embed_texts

    index = {"dims": DIMS, "embed": embed_texts, "fields": ["text"]}
    store, ref = HippoStore(None, index=index), InMemoryStore(index=index)
    for s in (store, ref):
        s.put(("d",), "cat", {"text": "a tabby cat"})
        s.put(("d",), "hidden", {"text": "a kitten too"}, index=False)
    got, want = store.search(("d",), query="kitten"), ref.search(("d",), query="kitten")
    assert [(i.key, i.score is None) for i in got] == [(i.key, i.score is None) for i in want] == [
        ("cat", False), ("hidden", True)]


def test_item9_reads_in_a_batch_see_the_state_before_it(store):
    ref = InMemoryStore()
    ops = [PutOp(("a",), "k", {"v": 1}), ListNamespacesOp(), GetOp(("a",), "k"), SearchOp(("a",)),
           PutOp(("a",), "k", {"v": 2}), PutOp(("a",), "j", {"v": 3})]
    assert [view(r) for r in store.batch(ops)] == [view(r) for r in ref.batch(ops)] == [
        None, [], None, [], None, None]
    assert view(store.search(("a",))) == view(ref.search(("a",))) == [(("a",), "k", {"v": 2}),
                                                                      (("a",), "j", {"v": 3})]


@pytest.mark.parametrize("label", ["50%", "tab\there", "%41", "line\nbreak", "unicode ✓ ünï"])
def test_labels_hippo_cannot_name_are_escaped(store, label):
    store.put(("u", label), "k", {"v": label})
    assert store.get(("u", label), "k").value == {"v": label}
    assert store.list_namespaces(prefix=("u",)) == [("u", label)]
    assert store.langgraph_namespace(store.hippo_namespace(("u", label))) == ("u", label)


def test_too_long_namespace_is_refused_by_name(store):
    from langchain_hippo.store import InvalidStoreNamespace

    with pytest.raises(InvalidStoreNamespace, match="too long") as info:
        store.put(("x" * 300, "y" * 300), "k", {"v": 1})
    assert isinstance(info.value, hippo.InvalidInput) and isinstance(info.value, InvalidNamespaceError)


def test_memory_with_the_encoding_gate_is_refused():
    with pytest.raises(hippo.InvalidInput, match="gate"):
        HippoStore(hippo.Memory(None, config={"gate": {"enabled": True}}))


# -- the remaining differences of docs/compatibility.md, each pinned ----------------------------------------------


def test_searches_list_namespaces_in_sorted_order(store):
    """``InMemoryStore`` walks its dict, namespaces in first-use order; hippo sorts them (stable across restarts,
    as the SQL stores' ``ORDER BY prefix``); keys keep their put order inside a namespace in both."""
    ref = InMemoryStore()
    for s in (store, ref):
        s.put(("b",), "k2", {"v": 1})
        s.put(("a",), "k1", {"v": 2})
        s.put(("b",), "k0", {"v": 3})
    assert [(i.namespace, i.key) for i in store.search(())] == [(("a",), "k1"), (("b",), "k2"), (("b",), "k0")]
    assert [(i.namespace, i.key) for i in ref.search(())] == [(("b",), "k2"), (("b",), "k0"), (("a",), "k1")]


def test_values_are_stored_as_json(store):
    """Like the SQL stores (and unlike ``InMemoryStore``, which keeps the Python objects) the value read back is its
    JSON form."""
    store.put(("j",), "k", {"pair": (1, 2), "nested": {3: "three"}, "ok": [True, None, 1.5]})
    assert store.get(("j",), "k").value == {"pair": [1, 2], "nested": {"3": "three"}, "ok": [True, None, 1.5]}
    ref = InMemoryStore()
    ref.put(("j",), "k", {"pair": (1, 2)})
    assert ref.get(("j",), "k").value == {"pair": (1, 2)}


def test_an_index_without_embed_indexes_fields_lexically():
    with pytest.raises(ValueError, match="embed"):
        InMemoryStore(index={"fields": ["text"]})
    store = HippoStore(None, index={"fields": ["text"]})
    store.put(("f",), "a", {"text": "quarterly revenue", "other": "penguins"})
    assert store.search(("f",), query="revenue")[0].score is not None
    assert store.search(("f",), query="penguins")[0].score is None


def test_equal_texts_in_one_batch():
    """``InMemoryStore`` embeds each distinct text once but pairs the vectors with every field holding a text, so
    two equal texts in one batch make it raise; hippo stores both."""
    from tests.concepts import DIMS, embed_texts

    index = {"dims": DIMS, "embed": embed_texts, "fields": ["title", "text"]}
    ops = [PutOp(("d",), "a", {"title": "cat", "text": "cat"}), PutOp(("d",), "b", {"title": "x", "text": "cat"})]
    with pytest.raises(ValueError, match="Number of embeddings"):
        InMemoryStore(index=index).batch(ops)
    store = HippoStore(None, index=index)
    store.batch(ops)
    assert [i.key for i in store.search(("d",), query="kitten")] == ["a", "b"]


def test_text_past_the_message_limit_is_not_indexed_but_kept():
    store = HippoStore(hippo.Memory(None, config={"max_message_chars": 40}))
    value = {"text": "the opening words are indexed " + "filler " * 20 + "zeppelin"}
    store.put(("l",), "long", value)
    assert store.get(("l",), "long").value == value
    assert store.search(("l",), query="opening")[0].score is not None
    assert store.search(("l",), query="zeppelin")[0].score is None


def test_what_a_put_cannot_keep_is_refused_by_name(store):
    """docs/compatibility.md: a key or label with a lone surrogate and a value nested past 99 levels are refused by
    name, before anything is written; a TTL past the calendar means the item never expires."""
    def deep(n):
        value = 1
        for _ in range(n):
            value = {"a": value}
        return value

    store.put(("docs",), "deep", deep(99))
    assert store.get(("docs",), "deep").value == deep(99)
    with pytest.raises(hippo.InvalidInput, match=r"'deeper'.* more than 99 levels"):
        store.put(("docs",), "deeper", deep(100))
    with pytest.raises(hippo.InvalidInput, match="key '\\\\udc80'"):
        store.put(("docs",), "\udc80", {"v": 1})
    with pytest.raises(InvalidStoreNamespace, match="label 'a\\\\udc80'"):
        store.put(("docs", "a\udc80"), "k", {"v": 1})
    store.put(("docs",), "forever", {"v": 1}, ttl=1e307)
    assert store.get(("docs",), "forever").value == {"v": 1}
    assert [i.key for i in store.search(("docs",))] == ["deep", "forever"]


def test_puts_of_one_key_at_the_same_time_leave_one_version(clock):
    """Two writers put the same key at once: the other writer's put lands between this put's read of the old
    versions and its write. The key keeps one version, the newest, as in ``InMemoryStore`` (the last put wins);
    the older version used to stay behind and came back once a TTL sweep deleted the newer one."""
    store = HippoStore(hippo.Memory(None))
    other = HippoStore(store.memory)  # a second writer on the same memory (another task, thread or process)

    class Racing:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def write_many(self, writes):
            other.put(("a",), "k", {"v": "theirs"}, ttl=None)  # lands after this put listed the key
            return self.inner.write_many(writes)

    memory = store.memory
    store.memory = Racing(memory)
    store.put(("a",), "k", {"v": "mine"}, ttl=1)
    store.memory = memory
    assert store.get(("a",), "k").value == {"v": "mine"}  # the put that wrote last wins
    assert len(store.memory.using("lg.a").list()) == 1
    clock.now += 120
    assert store.get(("a",), "k") is None
    assert store.sweep_ttl() == 1
    assert store.get(("a",), "k") is None and store.search(("a",)) == []


async def test_concurrent_aputs_of_one_key_keep_the_newest_version():
    """asyncio tasks putting one key interleave inside ``abatch``: whichever put wins, one version is left, and a
    delete removes the item for good."""
    store = HippoStore(hippo.Memory(None))
    await asyncio.gather(*[store.aput(("a",), "k", {"v": i, "text": f"note {i}"}) for i in range(12)])
    left = store.memory.using("lg.a").list()
    assert len(left) == 1 and (await store.aget(("a",), "k")).value == left[0].metadata["store_value"]
    await store.adelete(("a",), "k")
    assert await store.aget(("a",), "k") is None and store.memory.using("lg.a").list() == []


async def test_gathered_async_operations_take_effect_in_call_order_as_in_inmemorystore():
    """200 puts, overwrites, deletes and gets of a few keys in one ``asyncio.gather``: each answer and the store
    left behind are those of ``InMemoryStore`` running the same gather (the operations one after the other, in call
    order). Run side by side, the puts of one key read it before any of them wrote, and whichever write landed last
    won (``aput(k, 0) .. aput(k, 199)`` kept any of the values, and a get saw any of them)."""
    rng = random.Random(7)
    calls = []
    for i in range(200):
        key = f"k{rng.randrange(4)}"
        roll = rng.random()
        calls.append(("get", key, None) if roll < 0.25 else ("delete", key, None) if roll < 0.35
                     else ("put", key, {"v": i, "text": f"note {i}"}))

    async def run(store):
        def call(kind, key, value):
            if kind == "get":
                return store.aget(("a",), key)
            if kind == "delete":
                return store.adelete(("a",), key)
            return store.aput(("a",), key, value)

        answers = await asyncio.gather(*(call(*c) for c in calls))
        return view(answers), view(await store.asearch(("a",), limit=10))

    ours = HippoStore(hippo.Memory(None))
    got, want = await run(ours), await run(InMemoryStore())
    assert got[0] == want[0]
    assert got[1] == want[1] and len(got[1]) == 4
    assert len(ours.memory.using("lg.a").list()) == len(got[1])  # one version of each key left


async def test_stores_over_one_memory_take_turns_with_each_other():
    """Two ``HippoStore`` objects over one ``hippo.Memory`` (one made per request) see each other's items; their
    async operations take effect in call order too: of 60 gathered puts of one key, alternating between them, the
    last one called wins, as in one ``InMemoryStore`` given both streams. Each store took turns only with itself,
    and the winner was often the put before the last."""
    for _ in range(5):
        memory = hippo.Memory(None)
        stores, reference = (HippoStore(memory), HippoStore(memory)), InMemoryStore()
        await asyncio.gather(*(stores[i % 2].aput(("n",), "k", {"v": i}) for i in range(60)))
        await asyncio.gather(*(reference.aput(("n",), "k", {"v": i}) for i in range(60)))
        assert view(await stores[0].aget(("n",), "k")) == view(await reference.aget(("n",), "k"))
        assert len(memory.using("lg.n").list()) == 1


def test_a_read_that_refreshes_a_ttl_answers_when_a_writer_takes_the_item_away():
    """A get or search with ``refresh_ttl`` reads an item, then pushes its expiry back; another writer deleting or
    overwriting the key in between made the read raise ``NotFound``. The read answers with what it saw, as a read
    that came first, and the writer's change stands."""
    store = HippoStore(hippo.Memory(None), ttl={"default_ttl": 5})
    other = HippoStore(store.memory)

    class Racing:
        def __init__(self, inner, write):
            self.inner, self.write = inner, write

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def update(self, *args, **kwargs):
            self.write()  # lands after the read, before its refresh
            return self.inner.update(*args, **kwargs)

    for write, after in ((lambda: other.delete(("a",), "k"), None),
                         (lambda: other.put(("a",), "k", {"v": 2}), {"v": 2})):
        for read in (lambda: store.get(("a",), "k"), lambda: store.search(("a",))[0]):
            store.put(("a",), "k", {"v": 1})
            store._views["lg.a"] = Racing(store.memory.using("lg.a"), write)
            try:
                assert read().value == {"v": 1}
            finally:
                del store._views["lg.a"]
            assert view(store.get(("a",), "k")) == (after and (("a",), "k", after))


@pytest.mark.parametrize("query", ["locker \x1b[31mcode\x1b[0m", "\x00locker code", "locker \udc80code",
                                   "x" * (hippo.MAX_QUERY_CHARS + 5) + " locker code", "\x00"])
def test_any_text_is_a_query_as_in_inmemorystore(store, query):
    """``InMemoryStore`` takes any text as a query; hippo refused an escape code, a NUL, a lone surrogate and a
    query past ``hippo.MAX_QUERY_CHARS`` with ``InvalidInput``. The query is asked as hippo can take it (as the
    middleware asks a user's message): every item comes back, ranked as for the text hippo can ask."""
    ref = InMemoryStore()
    for s in (store, ref):
        s.put(("a",), "code", {"text": "the locker code is 4417"})
        s.put(("a",), "tea", {"text": "I like green tea"})
    got = store.search(("a",), query=query)
    assert {i.key for i in got} == {i.key for i in ref.search(("a",), query=query)}
    asked = hippo.storable(query, -hippo.MAX_QUERY_CHARS)
    same = store.search(("a",), query=asked) if asked.strip() else store.search(("a",))
    assert [(i.key, i.score) for i in got] == [(i.key, i.score) for i in same]


def test_a_sweep_does_not_bring_back_a_version_a_failed_put_left(clock):
    """A put of an earlier hippo wrote its version, then deleted the old ones in a second call. When it stopped in
    between (the process died, the task was cancelled, the store refused the delete) two versions stayed; reads show
    the newest. Once the newest expired, ``sweep_ttl`` deleted it and the older one came back as the item; the sweep
    now deletes every version of an item whose newest version expired, and the item stays gone."""
    store = HippoStore(hippo.Memory(None))
    store.put(("a",), "k", {"v": "old"})
    store.put(("b",), "k", {"v": "kept"})

    class Dying:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def write_many(self, writes):  # stopped before the old versions were deleted
            return self.inner.write_many({n: {"items": w["items"]} for n, w in writes.items()})

    memory = store.memory
    for name, value in (("a", {"v": "new"}), ("b", {"v": "newer"})):
        store.memory = Dying(memory)
        store.put((name,), "k", value, ttl=1 if name == "a" else None)
        store.memory = memory
        assert store.get((name,), "k").value == value
    assert len(store.memory.using("lg.a").list()) == 2 and store.get(("a",), "k").value == {"v": "new"}
    clock.now += 120
    assert store.get(("a",), "k") is None
    assert store.sweep_ttl() == 1
    assert store.get(("a",), "k") is None and store.search(("a",)) == [] and store.list_namespaces() == [("b",)]
    assert store.memory.using("lg.a").list() == []
    assert store.get(("b",), "k").value == {"v": "newer"}  # a live item keeps its newest version


def test_a_deletion_whose_delete_fails_raises_and_keeps_the_item():
    """A put of None (a deletion) whose write the store refuses did nothing: it raises, and the item stays."""
    store = HippoStore(hippo.Memory(None))
    store.put(("a",), "k", {"v": "old"})

    class Refusing:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def write_many(self, writes):
            raise hippo.StoreError("the store refused the delete")

    memory = store.memory
    store.memory = Refusing(memory)
    with pytest.raises(hippo.StoreError):
        store.delete(("a",), "k")
    store.memory = memory
    assert store.get(("a",), "k").value == {"v": "old"}


async def test_a_cancelled_abatch_applies_its_puts_in_every_namespace_or_none():
    """A batch putting keys in two namespaces is all or none. Cancelled while the first namespace's write was under
    way, the batch stopped there: the first item stored, the second never. It now finishes the batch, then raises
    ``CancelledError``. Reference: the same batch run through ``batch``, uncancelled."""
    store = HippoStore(hippo.Memory(None))
    started = asyncio.Event()

    class Slow:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        async def awrite_many(self, *args, **kwargs):
            out = await self.inner.awrite_many(*args, **kwargs)
            started.set()
            await asyncio.sleep(0.2)  # the write is done; its caller is cancelled before it answers
            return out

    memory = store.memory
    store.memory = Slow(memory)
    ops = [PutOp(("a",), "k", {"text": "the locker code is 4417"}), PutOp(("b",), "k", {"text": "gym on Baker St"})]
    task = asyncio.create_task(store.abatch(ops))
    await asyncio.wait_for(started.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    store.memory = memory
    reference = HippoStore(hippo.Memory(None))
    reference.batch(ops)
    for ns in (("a",), ("b",)):
        assert view(store.get(ns, "k")) == view(reference.get(ns, "k"))
        assert store.get(ns, "k") is not None


def test_the_label_check_without_langgraph_s_own_is_the_same(tmp_path):
    """langgraph-checkpoint before 4.3 (langgraph 1.0) has no ``validate_op_namespace``: HippoStore still imports and
    refuses the labels the newer check refuses, and only those (the newer check is the reference)."""
    import subprocess
    import sys

    script = (
        "import langgraph.store.base as base\n"
        "vars(base).pop('validate_op_namespace', None)\n"
        "from langgraph.store.base import (GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp,\n"
        "                                  SearchOp)\n"
        "import langchain_hippo.store as hs\n"
        "ops = [GetOp(('a.b',), 'k'), PutOp(('',), 'k', None), SearchOp(('ok', 3)), GetOp(('nul\\x00',), 'k'),\n"
        "       ListNamespacesOp((MatchCondition('prefix', ('a', 'b.c')),)), GetOp(('a', 'b'), 'k'),\n"
        "       SearchOp(()), ListNamespacesOp(None)]\n"
        "out = []\n"
        "for op in ops:\n"
        "    try:\n"
        "        hs.validate_op_namespace(op); out.append('ok')\n"
        "    except InvalidNamespaceError:\n"
        "        out.append('bad')\n"
        "print(','.join(out))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

    ops = [GetOp(("a.b",), "k"), PutOp(("",), "k", None), SearchOp(("ok", 3)), GetOp(("nul\x00",), "k"),
           ListNamespacesOp((MatchCondition("prefix", ("a", "b.c")),)), GetOp(("a", "b"), "k"),
           SearchOp(()), ListNamespacesOp(None)]
    want = "bad,bad,bad,bad,bad,ok,ok,ok"
    try:
        from langgraph.store.base import validate_op_namespace as reference
    except ImportError:
        pass
    else:
        verdicts = []
        for op in ops:
            try:
                reference(op)
                verdicts.append("ok")
            except InvalidNamespaceError:
                verdicts.append("bad")
        assert ",".join(verdicts) == want
    assert run.stdout.strip() == want


def test_a_store_serving_many_users_keeps_a_bounded_number_of_views(tmp_path):
    """One HippoStore serving users who come and go (and looks up some who stored nothing) keeps the views of the
    namespaces used last, not one for every namespace it ever touched; what each user stored reads back the same."""
    import gc

    from langchain_hippo import store as store_mod

    mem = hippo.Memory(str(tmp_path / "s.db"), config={"max_loaded_namespaces": 8})
    store = HippoStore(mem)
    kept = getattr(store_mod, "_VIEWS_KEPT", 256)
    n = kept + 200
    for u in range(n):
        if u % 3 == 0:
            store.put(("memories", f"u{u}"), "k", {"text": f"user {u} likes the red kite"})
        assert (store.get(("memories", f"u{u}"), "k") is None) == (u % 3 != 0)
    gc.collect()
    views = [o for o in gc.get_objects() if isinstance(o, hippo.Memory) and o.engine.rt is mem.engine.rt]
    assert len(views) <= kept + 1  # and the handle itself
    for u in (0, 3, (n - 1) // 3 * 3):
        assert store.get(("memories", f"u{u}"), "k").value == {"text": f"user {u} likes the red kite"}
        assert [i.key for i in store.search(("memories", f"u{u}"), query="red kite")] == ["k"]
    store.close()
    mem.close()


def test_a_sweep_keeps_an_item_another_handle_refreshed_after_the_sweep_listed_it(tmp_path, clock):
    """A sweep lists the expired items, then deletes them. Another process that read an item just before it
    expired refreshes its TTL; when that refresh landed between the sweep's listing and its delete, the sweep
    deleted the item the reader had just kept alive. The delete now takes only what is still expired when it
    commits: the refreshed item stays, with every field it was indexed on; an item nobody read goes."""
    path = str(tmp_path / "s.db")
    sweeper = HippoStore(hippo.Memory(path), index={"fields": ["title", "body"]})
    reader = HippoStore(hippo.Memory(path), index={"fields": ["title", "body"]})
    sweeper.put(("c",), "read", {"title": "harbour ferry timetable", "body": "boats leave hourly"}, ttl=1.0)
    sweeper.put(("c",), "unread", {"title": "museum opening hours", "body": "closed on mondays"}, ttl=1.0)
    put_at = clock.now
    clock.now = put_at + 60  # both expired for the sweep
    name = sweeper.hippo_namespace(("c",))
    view = sweeper.memory.using(name)

    class RefreshedBeforeTheDelete:
        """The sweep's view of the namespace: the other handle reads ``read`` (at a time it was still live, a
        second before it expired) right before the sweep's first write."""

        def __init__(self) -> None:
            self.done = False

        def __getattr__(self, attr):
            if attr in ("delete", "forget") and not self.done:
                self.done = True
                clock.now = put_at + 59
                assert reader.get(("c",), "read").value["title"] == "harbour ferry timetable"
                clock.now = put_at + 60
            return getattr(view, attr)

    sweeper._views[name] = RefreshedBeforeTheDelete()
    assert sweeper.sweep_ttl() == 1
    del sweeper._views[name]
    assert reader.get(("c",), "unread") is None
    assert sweeper.get(("c",), "read", refresh_ttl=False).value == {"title": "harbour ferry timetable",
                                                                    "body": "boats leave hourly"}
    assert [i.key for i in sweeper.search(("c",), query="boats leave hourly",
                                                                 refresh_ttl=False)] == ["read"]
    assert {m.metadata["store_key"] for m in view.list()} == {"read"} and len(view.list()) == 2
    clock.now = put_at + 59 + 60
    assert sweeper.sweep_ttl() == 1 and view.list() == []
    sweeper.close()
    reader.close()


class _StoppedAfterItsFirstWrite:
    """A view of a namespace whose calls all fail once one write went through (the process stopped, the
    connection was lost): what an operation of several calls leaves when it stops half way."""

    WRITES = ("add_many", "delete", "forget", "update")

    def __init__(self, inner, fail_the_write: bool = False) -> None:
        self.inner, self.fail_the_write, self.wrote = inner, fail_the_write, False

    def __getattr__(self, attr):
        if self.wrote:
            raise hippo.StoreError(f"{attr}: the connection was lost")
        if attr in self.WRITES:
            if self.fail_the_write:
                raise hippo.StoreError(f"{attr}: the connection was lost")
            self.wrote = True
        return getattr(self.inner, attr)


def check_a_sweep_stopped_half_way_leaves_nothing_behind(target, clock) -> None:
    """A sweep of an item indexed on two fields deleted its head, listed what went, then deleted the other part:
    stopped after its first write (by a lost connection), the sweep left the part of the item's second field,
    invisible to reads but listed and exported, until the next put of that key. The sweep of a namespace is now one
    deletion, judged in its transaction: it takes the whole item or, when it fails, nothing (the next sweep takes
    it whole). ``target``: a path or URL of a store."""
    store = HippoStore(hippo.Memory(target), index={"fields": ["title", "body"]})
    try:
        store.put(("c",), "gone", {"title": "harbour ferry timetable", "body": "boats leave hourly"}, ttl=1.0)
        store.put(("c",), "kept", {"title": "museum opening hours", "body": "closed on mondays"})
        name = store.hippo_namespace(("c",))
        view = store.memory.using(name)
        assert len(view.list()) == 4
        clock.now += 120
        for fail_the_write in (True, False):
            store._views[name] = _StoppedAfterItsFirstWrite(view, fail_the_write)
            try:
                swept = store.sweep_ttl()
            except hippo.StoreError:
                swept = None
            finally:
                del store._views[name]
            left = sorted((m.metadata["store_key"], m.metadata["store_part"]) for m in view.list())
            if fail_the_write:  # nothing was deleted: the item is there whole for the next sweep
                assert swept is None and left == [("gone", 0), ("gone", 1), ("kept", 0), ("kept", 1)]
            else:
                assert swept == 1 and left == [("kept", 0), ("kept", 1)]
        assert store.get(("c",), "gone") is None and [i.key for i in store.search(("c",))] == ["kept"]
        assert store.sweep_ttl() == 0
    finally:
        store.close()


def test_a_sweep_stopped_half_way_leaves_nothing_behind(tmp_path, clock):
    check_a_sweep_stopped_half_way_leaves_nothing_behind(str(tmp_path / "s.db"), clock)


def test_delete_with_choose_decides_in_the_deleting_transaction(tmp_path):
    """``Memory.delete(ids, choose=...)`` deletes what ``choose`` picks from the messages as they are when the
    deletion commits (metadata updated since the caller read them included), and nothing when it raises."""
    mem = hippo.Memory(str(tmp_path / "m.db"))
    try:
        items = mem.add_many([{"text": f"note {i}", "metadata": {"group": i % 2, "stale": True}} for i in range(6)])
        mem.update(items[0].id, metadata={"group": 0, "stale": False})  # after the caller's read
        seen = []

        def whole_groups_still_stale(stored):
            seen.append([(m.id, m.text) for m in stored])
            fresh = {m.metadata["group"] for m in stored if not m.metadata["stale"]}
            return [m.id for m in stored if m.metadata["group"] not in fresh]

        with pytest.raises(ZeroDivisionError):
            mem.delete([i.id for i in items], choose=lambda stored: [1 // 0])
        assert mem.count() == 6
        with pytest.raises(hippo.InvalidInput, match="choose"):
            mem.delete([i.id for i in items], choose=lambda stored: ["x"])
        with pytest.raises(hippo.InvalidInput, match="choose"):
            mem.delete([i.id for i in items], choose="all")
        assert mem.delete([i.id for i in items] + [10_000], choose=whole_groups_still_stale) == 3
        assert seen == [[(i.id, i.text) for i in items]]
        assert [m.text for m in mem.list()] == ["note 0", "note 2", "note 4"]
        assert mem.delete([items[0].id], choose=lambda stored: [99, 98]) == 0 and mem.count() == 3
    finally:
        mem.close()


class _FailingCall:
    """A view of a namespace whose ``fails`` call raises once (its other calls go through)."""

    def __init__(self, inner, fails: str) -> None:
        self.inner, self.fails = inner, fails

    def __getattr__(self, attr):
        if attr == self.fails:
            self.fails = None
            raise hippo.StoreError(f"{attr}: the connection was lost")
        return getattr(self.inner, attr)


@pytest.mark.parametrize("spaces", [("a", "a"), ("b", "a")])
def test_a_batch_whose_deletion_fails_stores_nothing(spaces, monkeypatch):
    """A batch putting one key and deleting another raised when the deletion failed, but kept the value it had put
    (a call that raised had stored something, in the deleting namespace or in another). Reference: the store
    before the batch."""

    put_in, delete_in = spaces
    store = HippoStore(hippo.Memory(None))
    for ns in ("a", "b"):
        store.put((ns,), "k", {"v": "old"})
        store.put((ns,), "gone", {"v": "old"})
    before = {ns: sorted((m.metadata["store_key"], m.metadata["store_value"]["v"])
                         for m in store.memory.using(f"lg.{ns}").list()) for ns in ("a", "b")}
    fail_at(monkeypatch, store.memory.engine.rt.store, "record", f"lg.{delete_in}")
    with pytest.raises(hippo.StoreError):
        store.batch([PutOp((put_in,), "k", {"v": "new"}), PutOp((delete_in,), "gone", None)])
    monkeypatch.undo()
    after = {ns: sorted((m.metadata["store_key"], m.metadata["store_value"]["v"])
                        for m in store.memory.using(f"lg.{ns}").list()) for ns in ("a", "b")}
    assert after == before
    assert store.get((put_in,), "k").value == {"v": "old"} and store.get((delete_in,), "gone").value == {"v": "old"}


def test_a_put_whose_write_committed_returns_normally_when_the_next_read_fails():
    """A put writes its new version, reads the key's versions again (a put at the same time may have added one),
    then deletes the older ones. When the read after the write failed (a lost connection), the put raised although
    its value was stored and every read showed it; it now returns normally, as it does when the deletion of the
    older versions fails, and the next put of the key removes them."""
    store = HippoStore(hippo.Memory(None))
    store.put(("a",), "k", {"v": "old"})
    view = store.memory.using("lg.a")
    store._views["lg.a"] = _StoppedAfterItsFirstWrite(view)
    store.put(("a",), "k", {"v": "new"})
    del store._views["lg.a"]
    assert store.get(("a",), "k").value == {"v": "new"}
    store.put(("a",), "k", {"v": "newer"})
    assert store.get(("a",), "k").value == {"v": "newer"} and len(view.list()) == 1


def _raw(store: HippoStore, ns: str) -> list[tuple[int, str, object]]:
    """Every hippo message of a store namespace: id, key and value (None for a part that is no head)."""
    return [(m.id, m.metadata["store_key"], m.metadata.get("store_value"))
            for m in store.memory.using(f"lg.{ns}").list()]


def _fail_at(monkeypatch, store: HippoStore, step: str) -> None:
    """Make the hippo write a put makes fail at ``step``, inside the store's transaction (or, ``list``, the read
    before it)."""
    from hippo.store import common, sqlite

    st = type(store.memory.engine.rt.store)

    def fail(*args, **kwargs):
        raise hippo.StoreError(f"simulated failure: {step}")

    if step == "list":
        monkeypatch.setattr(hippo.Memory, "list", fail)
    elif step == "append":  # storing the new version's tokens
        monkeypatch.setattr(sqlite, "tail_checksum", fail)
        monkeypatch.setattr(common, "tail_checksum", fail)
    elif step == "judge":  # reading the older versions to delete
        monkeypatch.setattr(st, "_doomed", fail)
    elif step == "chunk":  # rewriting the chunk that holds the older version
        monkeypatch.setattr(store.memory.engine.rt.store.codec, "encode", fail)
    else:  # recording the deletion, the last statement before the commit
        assert step == "record"
        real = st._record

        def record(self, cur, namespace, kind, *args, **kwargs):
            if kind == "delete":
                fail()
            return real(self, cur, namespace, kind, *args, **kwargs)

        monkeypatch.setattr(st, "_record", record)


@pytest.mark.parametrize("step", ["list", "judge", "append", "chunk", "record"])
def test_a_put_failing_at_any_step_keeps_the_old_version_and_only_it(location, monkeypatch, step):
    """A put over a key stores its version and deletes the older ones in one transaction. When the deletion failed,
    the put returned normally with two versions stored (the older one invisible to reads but exported, listed, and
    back once a sweep took the newer); a failure at any step now raises and leaves the key as it was, and a put
    that succeeds leaves the new version alone. Reference: the namespace's messages before the put."""
    store = HippoStore(hippo.Memory(location), index={"fields": ["title", "body"]})
    try:
        store.put(("a",), "k", {"title": "old title", "body": "old body"})
        store.put(("a",), "other", {"title": "another item"})
        store.memory.using("lg.a").flush()  # the older version sits in a sealed chunk, rewritten by the deletion
        before, version = _raw(store, "a"), store.memory.using("lg.a").version()
        _fail_at(monkeypatch, store, step)
        with pytest.raises(hippo.StoreError, match=step):
            store.put(("a",), "k", {"title": "new title", "body": "new body"})
        monkeypatch.undo()
        assert _raw(store, "a") == before and store.memory.using("lg.a").version() == version
        assert store.get(("a",), "k").value == {"title": "old title", "body": "old body"}
        store.put(("a",), "k", {"title": "new title", "body": "new body"})
        assert [(key, value) for _, key, value in _raw(store, "a")] == [
            ("other", {"title": "another item"}), ("k", {"title": "new title", "body": "new body"}), ("k", None)]
        assert [i.key for i in store.search(("a",))] == ["k", "other"]  # the overwrite kept its place
    finally:
        store.close()


@pytest.mark.parametrize("failing", ["a", "b"])
@pytest.mark.parametrize("step", ["judge", "append", "chunk", "record"])
def test_a_batch_failing_in_any_namespace_at_any_step_changes_none(location, monkeypatch, step, failing):
    """A batch wrote each hippo namespace in a transaction of its own and, when a later one failed, put back the
    earlier ones in more transactions (when that failed too, the earlier namespace kept the batch's versions): a
    batch that raised had changed the store. The whole batch is now one transaction. Reference: every namespace's
    messages and version before the batch; then the batch applied, as ``InMemoryStore`` applies it."""

    store, ref = HippoStore(hippo.Memory(location)), InMemoryStore()
    try:
        for s in (store, ref):
            for ns in ("a", "b"):
                s.put((ns,), "k", {"v": f"old {ns}"})
            s.put(("a",), "z", {"v": "old z"})
            s.put(("b",), "y", {"v": "old y"})
        for ns in ("a", "b"):
            store.memory.using(f"lg.{ns}").flush()  # the replaced versions sit in sealed chunks
        before = {ns: _raw(store, ns) for ns in ("a", "b")}
        versions = {ns: store.memory.using(f"lg.{ns}").version() for ns in ("a", "b")}
        order = [i.key for i in store.search(("a",))]
        batch = [PutOp(("a",), "k", {"v": "new a"}), PutOp(("a",), "z", None), PutOp(("b",), "k", {"v": "new b"}),
                 PutOp(("b",), "y", None)]
        fail_at(monkeypatch, store.memory.engine.rt.store, step, f"lg.{failing}")
        with pytest.raises(hippo.StoreError, match=step):
            store.batch(batch)
        monkeypatch.undo()
        assert {ns: _raw(store, ns) for ns in ("a", "b")} == before
        assert {ns: store.memory.using(f"lg.{ns}").version() for ns in ("a", "b")} == versions
        assert [i.key for i in store.search(("a",))] == order
        assert store.get(("a",), "z").value == {"v": "old z"} and store.get(("b",), "y").value == {"v": "old y"}
        store.batch(batch)
        ref.batch(batch)
        assert view(store.search((), limit=20)) == view(ref.search((), limit=20))
        assert [(key, value) for _, key, value in _raw(store, "a")] == [("k", {"v": "new a"})]
    finally:
        store.close()


def test_deleting_a_subtree_whose_second_namespace_fails_deletes_none(location, monkeypatch):
    """``delete_namespace`` of a subtree removed its hippo namespaces one transaction each: when one failed, the
    ones before it were gone and the call raised. Now all go in one transaction, or none. Reference: the items
    before the call; then ``InMemoryStore`` after the same deletions."""
    store, ref = HippoStore(hippo.Memory(location)), InMemoryStore()
    try:
        for s in (store, ref):
            for ns in (("users", "1"), ("users", "1", "prefs"), ("users", "2"), ("other",)):
                s.put(ns, "k", {"v": "/".join(ns)})
        before = view(store.search((), limit=20))
        fail_dropping(monkeypatch, store.memory.engine.rt.store, "lg.users.1.prefs")
        with pytest.raises(hippo.StoreError, match="dropping"):
            store.delete_namespace(("users", "1"))
        monkeypatch.undo()
        assert view(store.search((), limit=20)) == before
        assert store.delete_namespace(("users", "1")) == 2
        for ns in (("users", "1"), ("users", "1", "prefs")):
            ref.delete(ns, "k")
        assert sorted(view(store.search((), limit=20))) == sorted(view(ref.search((), limit=20)))
        assert store.list_namespaces() == [("other",), ("users", "2")]
    finally:
        store.close()


_ROUNDS = 25


def _batches_in_order(location: str, first: str, start, errors) -> None:
    """One process putting key ``k`` in namespaces ``a`` and ``b`` in one batch, ``_ROUNDS`` times, naming
    ``first`` first."""
    try:
        store = HippoStore(hippo.Memory(location))
        second = "b" if first == "a" else "a"
        start.wait()
        try:
            for i in range(_ROUNDS):
                value = {"by": first, "round": i}
                store.batch([PutOp((first,), "k", value), PutOp((second,), "k", value)])
        finally:
            store.close()
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"{type(exc).__name__}: {exc}")


def test_batches_of_two_processes_over_two_namespaces_apply_whole(location):
    """Two processes run batches putting one key in two namespaces, naming them in opposite orders. Each batch is
    one transaction: both finish (neither waits for the other for ever), each namespace keeps one version of the
    key, and both namespaces hold the value of the same batch, the one that committed last (a batch written one
    namespace at a time could leave one process's value in one namespace and the other's in the other)."""
    with hippo.Memory(location) as mem:
        HippoStore(mem).batch([PutOp(("a",), "k", {"by": None}), PutOp(("b",), "k", {"by": None})])
    run_together(_batches_in_order, [(location, "a"), (location, "b")])
    store = HippoStore(hippo.Memory(location))
    try:
        got = {ns: store.get((ns,), "k").value for ns in ("a", "b")}
        assert got["a"] == got["b"] and got["a"]["round"] == _ROUNDS - 1, got
        assert all(len(store.memory.using(f"lg.{ns}").list()) == 1 for ns in ("a", "b"))
    finally:
        store.close()


def test_a_memory_without_the_writes_of_several_namespaces_is_refused_when_the_store_is_made():
    """A memory-like object lacking ``write_many`` (every put) or ``delete_namespaces`` (a subtree's deletion) was
    taken, and the first put raised ``AttributeError``."""
    mem = hippo.Memory(None)

    class Older:
        def __getattr__(self, name):
            if name in ("write_many", "delete_namespaces"):
                raise AttributeError(name)
            return getattr(mem, name)

    with pytest.raises(hippo.InvalidInput, match="memory must be a hippo.Memory"):
        HippoStore(Older())
    mem.close()
