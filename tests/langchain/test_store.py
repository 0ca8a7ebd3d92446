"""HippoStore against LangGraph's own InMemoryStore as the oracle, plus what only hippo does: query search
with scores, index fields, TTL, namespace deletion, persistence and use from a LangGraph graph."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule
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

NAMESPACES = [("a",), ("a", "b"), ("a", "c"), ("a", "b", "d"), ("x", "y"), ("x", "b")]
KEYS = ["k0", "k1", "k2", "k3"]
COLORS = ["red", "green", "blue"]


def _value(rng: random.Random) -> dict[str, Any]:
    return {
        "n": rng.randint(0, 9),
        "color": rng.choice(COLORS),
        "tags": rng.sample(["p", "q", "r"], rng.randint(0, 2)),
        "nested": {"z": rng.randint(0, 2), "w": rng.choice(["s", "t"])},
        "text": f"item {rng.choice(['alpha', 'beta', 'gamma'])}",
    }


def _filter(rng: random.Random) -> dict[str, Any] | None:
    return rng.choice([
        None,
        {"color": rng.choice(COLORS)},
        {"color": {"$ne": rng.choice(COLORS)}},
        {"n": {"$gt": rng.randint(0, 9)}},
        {"n": {"$gte": 3, "$lte": 6}},
        {"n": {"$lt": rng.randint(0, 9)}, "color": {"$eq": rng.choice(COLORS)}},
        {"nested": {"z": rng.randint(0, 2)}},
        {"tags": rng.sample(["p", "q", "r"], rng.randint(0, 2))},
    ])


def _random_op(rng: random.Random):
    roll = rng.random()
    ns = rng.choice(NAMESPACES)
    if roll < 0.5:
        return PutOp(ns, rng.choice(KEYS), _value(rng))
    if roll < 0.6:
        return PutOp(ns, rng.choice(KEYS), None)
    if roll < 0.75:
        return GetOp(ns, rng.choice(KEYS))
    if roll < 0.9:
        prefix = ns[: rng.randint(0, len(ns))]
        return SearchOp(prefix, _filter(rng), limit=rng.randint(0, 6), offset=rng.randint(0, 3))
    conds = []
    if rng.random() < 0.5:
        conds.append(MatchCondition("prefix", rng.choice([("a",), ("a", "*"), ("x",), ("*", "b")])))
    if rng.random() < 0.5:
        conds.append(MatchCondition("suffix", rng.choice([("b",), ("*",), ("b", "d"), ("y",)])))
    return ListNamespacesOp(tuple(conds) or None, max_depth=rng.choice([None, 1, 2]),
                            limit=rng.randint(1, 10), offset=rng.randint(0, 2))


def _drop_empty_namespaces(oracle: InMemoryStore) -> None:
    # InMemoryStore keeps (and lists) a namespace after its last item is deleted, or once a get touched it;
    # stores backed by a table (hippo, Postgres, SQLite) list only namespaces that hold items.
    for ns in [ns for ns, items in oracle._data.items() if not items]:
        del oracle._data[ns]


def _oracle_search(oracle: InMemoryStore, op: SearchOp) -> list:
    # InMemoryStore walks namespaces in first-use order; HippoStore in sorted order. Within a namespace both
    # keep key creation order, so a stable sort on the namespace is the only normalization.
    full = oracle.batch([op._replace(limit=10_000, offset=0)])[0]
    full = sorted(full, key=lambda item: item.namespace)
    return full[op.offset: op.offset + op.limit]


def _view(result: Any) -> Any:
    if result is None:
        return None
    if isinstance(result, list):
        return [_view(r) for r in result]
    if isinstance(result, tuple):
        return result
    return (result.namespace, result.key, result.value)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_results_as_inmemorystore(seed):
    rng = random.Random(seed)
    store, oracle = HippoStore(hippo.Memory(None)), InMemoryStore()
    for step in range(160):
        op = _random_op(rng)
        got = store.batch([op])[0]
        if isinstance(op, SearchOp):
            want = _oracle_search(oracle, op)
        else:
            want = oracle.batch([op])[0]
        _drop_empty_namespaces(oracle)
        assert _view(got) == _view(want), f"step {step}: {op}"


async def test_abatch_same_as_batch():
    rng = random.Random(7)
    ops = [_random_op(rng) for _ in range(80)]
    sync_store, async_store = HippoStore(hippo.Memory(None)), HippoStore(hippo.Memory(None))
    want = [_view(sync_store.batch([op])[0]) for op in ops]
    got = [_view((await async_store.abatch([op]))[0]) for op in ops]
    assert got == want
    both = await async_store.abatch([GetOp(("a",), "k0"), SearchOp(("a",)), ListNamespacesOp()])
    assert [_view(r) for r in both] == [_view(r) for r in sync_store.batch(
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
    assert all(h.namespace[0] == "docs" for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert store.search(("docs", "u2"), query="pizza") == []
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
    assert sorted(h.key for h in hits) == ["k2", "k3", "k4", "k5"]
    page1 = store.search(("n",), query="zebra", limit=2)
    page2 = store.search(("n",), query="zebra", limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 2 and not {h.key for h in page1} & {h.key for h in page2}
    assert store.search(("n",), query="zebra", limit=0) == []


def test_index_false_and_index_fields(store):
    store.put(("p",), "secret", {"text": "the vault code is swordfish"}, index=False)
    store.put(("p",), "titled", {"title": "Gardening", "body": "tomatoes need sun"}, index=["title"])
    assert store.search(("p",), query="swordfish") == []
    assert store.get(("p",), "secret").value == {"text": "the vault code is swordfish"}
    assert {i.key for i in store.search(("p",))} == {"secret", "titled"}
    assert [i.key for i in store.search(("p",), query="gardening")] == ["titled"]
    assert store.search(("p",), query="tomatoes") == []


def test_store_index_fields_config():
    store = HippoStore(hippo.Memory(None), index={"dims": 4, "embed": lambda texts: [[0.0] * 4] * len(texts),
                                                  "fields": ["summary"]})
    store.put(("m",), "a", {"summary": "quarterly revenue report", "body": "penguins"})
    assert [i.key for i in store.search(("m",), query="revenue")] == ["a"]
    assert store.search(("m",), query="penguins") == []
    store.put(("m",), "b", {"summary": "ignored", "body": "penguins"}, index=["body"])
    assert [i.key for i in store.search(("m",), query="penguins")] == ["b"]


def test_update_replaces_and_keeps_created_at(store):
    store.put(("u",), "k", {"v": 1})
    first = store.get(("u",), "k")
    store.put(("u",), "k", {"v": 2})
    second = store.get(("u",), "k")
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert len(store.memory.using("lg.u").list()) == 1


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


def test_ttl_expiry_and_sweep():
    store = HippoStore(hippo.Memory(None), ttl={"default_ttl": 1.0})
    store.put(("c",), "short", {"text": "ephemeral cache line"}, ttl=0.002)  # 120 ms
    store.put(("c",), "default", {"text": "lasts a minute"})
    store.put(("c",), "forever", {"text": "persistent cache line"}, ttl=None)
    assert store.get(("c",), "short") is not None
    time.sleep(0.25)
    assert store.get(("c",), "short") is None
    assert {i.key for i in store.search(("c",))} == {"default", "forever"}
    assert store.search(("c",), query="ephemeral cache") == [] or \
        all(i.key != "short" for i in store.search(("c",), query="ephemeral cache"))
    assert store.sweep_ttl() == 1
    assert len(store.memory.using("lg.c").list()) == 2
    md = store.memory.using("lg.c").list(filter={"store_key": "default"})[0].metadata
    assert md["store_ttl"] == 1.0 and md["expires_at"] > time.time() + 30


def test_ttl_refresh_on_read_when_supported():
    mem = hippo.Memory(None)
    if not callable(getattr(mem, "update", None)):
        pytest.skip("this hippo has no Memory.update(); TTL counts from the last write")
    store = HippoStore(mem)
    store.put(("c",), "k", {"v": 1}, ttl=0.004)  # 240 ms
    for _ in range(4):
        time.sleep(0.1)
        assert store.get(("c",), "k") is not None  # each read pushes expiry back
    time.sleep(0.1)
    assert store.get(("c",), "k", refresh_ttl=False) is not None


def test_ttl_sweeper_thread():
    store = HippoStore(hippo.Memory(None))
    store.put(("c",), "k", {"v": 1}, ttl=0.0005)
    store.start_ttl_sweeper(sweep_interval_minutes=0.001)
    deadline = time.time() + 5
    while store.memory.using("lg.c").count() and time.time() < deadline:
        time.sleep(0.02)
    assert store.stop_ttl_sweeper(timeout=5)
    assert store.memory.using("lg.c").count() == 0


@pytest.mark.parametrize("namespace", [(), ("a.b",), ("",), ("langgraph", "x"), ("ok", 3)])
def test_invalid_namespaces(store, namespace):
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"v": 1})


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
    assert out["recalled"] == ["My passport expires in May."]
    assert graph.invoke({"user": "bob"})["recalled"] == []


# -- stateful: hypothesis drives both stores through the same operations ----------------------------------------


_namespaces = st.sampled_from(NAMESPACES)
_keys = st.sampled_from(KEYS)
_values = st.fixed_dictionaries({
    "n": st.integers(-3, 9),
    "color": st.sampled_from(COLORS),
    "nested": st.fixed_dictionaries({"z": st.integers(0, 2)}),
    "text": st.sampled_from(["alpha note", "beta note", "gamma"]),
})
_filters = st.one_of(
    st.none(),
    st.builds(lambda c: {"color": c}, st.sampled_from(COLORS)),
    st.builds(lambda op, v: {"n": {op: v}}, st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]),
              st.integers(-3, 9)),
    st.builds(lambda z: {"nested": {"z": z}}, st.integers(0, 2)),
)


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store, self.oracle = HippoStore(hippo.Memory(None)), InMemoryStore()

    def _both(self, op):
        got = self.store.batch([op])[0]
        want = _oracle_search(self.oracle, op) if isinstance(op, SearchOp) else self.oracle.batch([op])[0]
        _drop_empty_namespaces(self.oracle)
        assert _view(got) == _view(want), op

    @rule(ns=_namespaces, key=_keys, value=_values)
    def put(self, ns, key, value):
        self._both(PutOp(ns, key, value))

    @rule(ns=_namespaces, key=_keys)
    def delete(self, ns, key):
        self._both(PutOp(ns, key, None))

    @rule(ns=_namespaces, key=_keys)
    def get(self, ns, key):
        self._both(GetOp(ns, key))

    @rule(ns=_namespaces, depth=st.integers(0, 3), flt=_filters, limit=st.integers(0, 8), offset=st.integers(0, 4))
    def search(self, ns, depth, flt, limit, offset):
        self._both(SearchOp(ns[:depth], flt, limit=limit, offset=offset))

    @rule(prefix=st.sampled_from([None, ("a",), ("a", "*"), ("*", "b")]),
          suffix=st.sampled_from([None, ("b",), ("*", "d")]), depth=st.sampled_from([None, 1, 2]),
          limit=st.integers(1, 10), offset=st.integers(0, 3))
    def list_namespaces(self, prefix, suffix, depth, limit, offset):
        conds = tuple(c for c in (prefix and MatchCondition("prefix", prefix),
                                  suffix and MatchCondition("suffix", suffix)) if c)
        self._both(ListNamespacesOp(conds or None, max_depth=depth, limit=limit, offset=offset))

    def teardown(self) -> None:
        self.store.close()


StoreMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=25, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
TestStoreMachine = StoreMachine.TestCase
