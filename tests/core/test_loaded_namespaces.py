"""A process keeps at most ``Config.max_loaded_namespaces`` namespaces loaded: the least recently used ones are saved
and unloaded, and loaded again on their next use exactly as a new process would load them."""

from __future__ import annotations

import random
import threading

import pytest

import hippo
from hippo.base.errors import InvalidInput

# wall-clock time does not age strengths here: two handles run the same calls a few milliseconds apart
CFG = {"decay": {"time_weight": 0.0}, "hierarchy": {"consolidate_on_add": True}}
TOPICS = ["apples and pears", "the trip to Lisbon", "a broken bicycle", "piano lessons", "the garden fence",
          "a job interview", "the red kite", "chess openings"]


def _loaded(mem: hippo.Memory) -> set[str]:
    return {name for name, st in mem.engine.rt.states().items() if st.loaded}


def _fill(mem: hippo.Memory, ns: str, n: int, salt: int = 0) -> None:
    mem.using(ns).add_many([{"text": f"{ns} says {TOPICS[(i + salt) % len(TOPICS)]} number {i}",
                             "speaker": "Ann" if i % 2 else "Bob", "session_id": f"s{i // 6}"} for i in range(n)])


def _view(m: hippo.Memory) -> dict:
    """What a namespace answers: recall, search, strengths, lifecycle statistics and the hierarchy's topics."""
    rec = m.recall("trip to Lisbon bicycle", budget_tokens=300)
    ids = [i.id for i in m.list()]
    stats = m.engine.lifecycle_stats()
    stats.pop("consolidation_seconds", None)
    return {
        "recall": (rec.text, [i.id for i in rec.messages], rec.units),
        "search": [(h.id, round(h.score, 9)) for h in m.search("apples piano", k=8)],
        "strength": {k: round(v, 9) for k, v in m.strength(ids).items()},
        "stats": stats,
        "topics": m.topics(),
        "episodes": [[i.id for i in m.episode(i)] for i in ids[::5]],
        "count": m.count(),
    }


def test_max_loaded_namespaces_is_validated():
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(InvalidInput, match="max_loaded_namespaces"):
            hippo.Memory(None, config={"max_loaded_namespaces": bad})
    assert hippo.Config().max_loaded_namespaces == 256


def test_loaded_namespaces_stay_within_the_bound(tmp_path):
    path = str(tmp_path / "m.db")
    with hippo.Memory(path, config={"max_loaded_namespaces": 3}) as mem:
        for u in range(10):
            _fill(mem, f"user.{u}", 5)
            assert len(_loaded(mem)) <= 3
        for u in [7, 2, 9, 0, 5, 5, 1]:
            got = mem.using(f"user.{u}").recall("trip to Lisbon", budget_tokens=100)
            assert got.messages and all(i.namespace == f"user.{u}" for i in got.messages)
            assert len(_loaded(mem)) <= 3
            assert f"user.{u}" in _loaded(mem)
        # the least recently used went first
        assert _loaded(mem) == {"user.0", "user.5", "user.1"}


def test_unloaded_and_reloaded_answers_as_never_unloaded(tmp_path):
    """The oracle: the same calls on a handle that unloads after every other namespace (bound 1) and on one that
    never unloads give the same recall, search, strengths (reinforcements included), statistics and hierarchy."""
    small = hippo.Memory(str(tmp_path / "a.db"), config={**CFG, "max_loaded_namespaces": 1})
    big = hippo.Memory(str(tmp_path / "b.db"), config=CFG)
    names = ["alice", "bob", "carol"]
    for mem in (small, big):
        for k, ns in enumerate(names):
            _fill(mem, ns, 30, salt=k)
    rng = random.Random(7)
    for step in range(12):
        ns = rng.choice(names)
        a, b = small.using(ns), big.using(ns)
        for m in (a, b):
            if step % 3 == 0:
                m.reinforce([i.id for i in m.list(limit=4, offset=step)])
            if step % 4 == 1:
                m.add(f"{ns} adds the trip to Lisbon again, step {step}", speaker="Ann")
            if step % 5 == 2:
                m.delete([m.list(limit=1, offset=3)[0].id])
            m.get(m.list(limit=1, offset=step % 7)[0].id)  # an explicit read reinforces
        assert _view(a) == _view(b), f"step {step}, namespace {ns}"
        assert _loaded(small) == {ns}
    # and after both are closed and opened again (what the unloads saved is what close saves)
    small.close()
    big.close()
    with hippo.Memory(str(tmp_path / "a.db"), config=CFG) as a, hippo.Memory(str(tmp_path / "b.db"), config=CFG) as b:
        for ns in names:
            assert _view(a.using(ns)) == _view(b.using(ns)), ns


def test_writes_to_an_unloaded_namespace_are_seen(tmp_path):
    path = str(tmp_path / "m.db")
    mem = hippo.Memory(path, config={"max_loaded_namespaces": 1})
    _fill(mem, "a", 6)
    _fill(mem, "b", 6)
    assert _loaded(mem) == {"b"}
    other = hippo.Memory(path)
    new = other.using("a").add("the walrus sings at midnight", speaker="Cy")
    other.using("a").delete([other.using("a").list(limit=1)[0].id])
    other.close()
    a = mem.using("a")
    assert a.count() == 6
    assert [h.id for h in a.search("walrus midnight", k=1)] == [new.id]
    mem.using("b").count()  # unloads "a" again
    mine = a.add("an otter plays the oboe", speaker="Cy")  # a write that loads it
    assert _loaded(mem) == {"a"}
    mem.using("b").count()
    assert [h.id for h in a.search("otter oboe", k=1)] == [mine.id]
    assert a.count() == 7
    mem.close()
    with hippo.Memory(path) as again:
        assert again.using("a").count() == 7
        assert [h.id for h in again.using("a").search("otter oboe", k=1)] == [mine.id]


def test_threads_using_namespaces_while_others_are_unloaded(tmp_path):
    path = str(tmp_path / "m.db")
    bound = 2
    mem = hippo.Memory(path, config={"max_loaded_namespaces": bound})
    names = [f"user.{u}" for u in range(8)]
    for ns in names:
        _fill(mem, ns, 4)
    added: dict[str, list[int]] = {ns: [] for ns in names}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for k in range(25):
                ns = rng.choice(names)
                m = mem.using(ns)
                if k % 3 == 0:
                    item = m.add(f"thread {seed} note {k} about the red kite", speaker="Ann")
                    with lock:
                        added[ns].append(item.id)
                got = m.recall("red kite", budget_tokens=200)
                assert all(i.namespace == ns for i in got.messages)
                m.search("kite", k=3)
                m.strength([i.id for i in got.messages])
                m.topics()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(_loaded(mem)) <= bound  # what was in use when the bound was passed is unloaded after
    for ns in names:
        m = mem.using(ns)
        assert m.count() == 4 + len(added[ns])
        assert {i.id for i in m.list()} >= set(added[ns])
    mem.close()
    with hippo.Memory(path) as again:
        for ns in names:
            assert again.using(ns).count() == 4 + len(added[ns])


def test_a_store_that_saves_no_derived_state_keeps_every_namespace(tmp_path):
    """In memory or read-only, reinforcements live in the process only: unloading would lose them."""
    mem = hippo.Memory(None, config={**CFG, "max_loaded_namespaces": 1})
    for ns in ("a", "b", "c"):
        _fill(mem, ns, 6)
    a = mem.using("a")
    ids = [i.id for i in a.list()]
    before = a.strength(ids)
    a.reinforce(ids[:2])
    reinforced = a.strength(ids)
    mem.using("b").count()
    mem.using("c").count()
    assert _loaded(mem) == {"a", "b", "c"}
    assert a.strength(ids) == reinforced != before
    path = str(tmp_path / "m.db")
    with hippo.Memory(path, config=CFG) as w:
        for ns in ("a", "b", "c"):
            _fill(w, ns, 6)
    with hippo.Memory(path, read_only=True, config={**CFG, "max_loaded_namespaces": 1}) as ro:
        a = ro.using("a")
        a.reinforce(ids[:2])
        reinforced = a.strength(ids)
        ro.using("b").count()
        ro.using("c").count()
        assert _loaded(ro) == {"a", "b", "c"}
        assert a.strength(ids) == reinforced


def test_a_call_using_more_namespaces_than_the_bound(tmp_path):
    """search_many over more namespaces than the bound holds them all while it runs (they are in use), and the
    process is back within the bound when it returns; so are async calls gathered over many namespaces."""
    import asyncio

    path = str(tmp_path / "m.db")
    mem = hippo.Memory(path, config={"max_loaded_namespaces": 2})
    names = [f"user.{u}" for u in range(6)]
    for ns in names:
        _fill(mem, ns, 6)
    single = {ns: [h.id for h in mem.using(ns).search("trip Lisbon", k=3)] for ns in names}
    hits = mem.search_many(names, "trip Lisbon", k=30)
    assert {h.namespace for h in hits} == set(names)
    assert {ns: [h.id for h in hits if h.namespace == ns][:3] for ns in names} == single
    assert len(_loaded(mem)) <= 2

    async def gathered() -> list[int]:
        async def one(k: int) -> int:
            m = mem.using(names[k % len(names)])
            await m.aadd(f"async note {k} about the red kite", speaker="Bo")
            return len((await m.arecall("red kite", budget_tokens=100)).messages)
        return await asyncio.gather(*[one(k) for k in range(24)])

    assert all(asyncio.run(gathered()))
    assert len(_loaded(mem)) <= 2
    assert [mem.using(ns).count() for ns in names] == [6 + 4] * len(names)
    mem.close()


def test_unloaded_namespaces_leave_no_state_behind(tmp_path):
    """A server that serves many tenants through one handle holds the states of the loaded namespaces only: the
    state object of an unloaded one is dropped (one kept per namespace ever used grew without bound), and its next
    use makes a new one that answers as before."""
    import gc

    from hippo.engine.state import NamespaceState

    path = str(tmp_path / "m.db")
    with hippo.Memory(path, config={"max_loaded_namespaces": 3}) as mem:
        before = {}
        for u in range(40):
            _fill(mem, f"user.{u}", 3)
            before[u] = [h.id for h in mem.using(f"user.{u}").search("trip Lisbon", k=2)]
        assert len(mem.engine.rt.states()) <= 3
        gc.collect()
        alive = [o for o in gc.get_objects() if isinstance(o, NamespaceState) and o.host is mem.engine.rt]
        assert len(alive) <= 3
        for u in (0, 17, 39):
            assert [h.id for h in mem.using(f"user.{u}").search("trip Lisbon", k=2)] == before[u]
            assert mem.using(f"user.{u}").count() == 3


def test_a_state_held_across_its_unload_hands_over_to_the_namespace(tmp_path):
    """A state taken outside a public call (``engine.state()``) and unloaded meanwhile loads nothing of its own:
    catching it up gives the state the runtime holds for the namespace, so one namespace never has two."""
    path = str(tmp_path / "m.db")
    with hippo.Memory(path, config={"max_loaded_namespaces": 1}) as mem:
        _fill(mem, "a", 4)
        held = mem.using("a").engine.state()
        _fill(mem, "b", 4)
        assert _loaded(mem) == {"b"}
        got = held.current()
        assert got is mem.engine.rt.states()["a"] and got.loaded and len(got.index) == 4
        assert not held.loaded


def test_reads_of_namespaces_no_one_wrote_do_not_pile_up_where_nothing_is_saved(tmp_path):
    """In memory or read-only every namespace holding messages stays loaded (its reinforcements live in the process
    only), but one that never held a message has nothing to lose: reads of unknown users' namespaces are unloaded
    past the bound like any other, instead of keeping an empty loaded state each for as long as the process runs."""
    path = str(tmp_path / "m.db")
    with hippo.Memory(path, config=CFG) as w:
        _fill(w, "a", 6)
    mem = hippo.Memory(None, config={**CFG, "max_loaded_namespaces": 2})
    _fill(mem, "a", 6)
    with hippo.Memory(path, read_only=True, config={**CFG, "max_loaded_namespaces": 2}) as ro:
        for m in (mem, ro):
            a = m.using("a")
            ids = [i.id for i in a.list()]
            a.reinforce(ids[:2])
            reinforced = a.strength(ids)
            for u in range(30):
                other = m.using(f"nobody.{u}")
                assert other.count() == 0 and other.search("trip Lisbon", k=3) == []
                assert other.recall("trip Lisbon", budget_tokens=100).messages == []
            assert "a" in _loaded(m) and len(m.engine.rt.states()) <= 3
            assert a.strength(ids) == reinforced
            assert m.using("nobody.3").count() == 0
            late = m.using("nobody.4")
            if m is mem:
                late.add("now someone wrote here")
                for u in range(30, 40):
                    m.using(f"nobody.{u}").count()
                assert late.count() == 1 and "nobody.4" in _loaded(m)
    mem.close()
