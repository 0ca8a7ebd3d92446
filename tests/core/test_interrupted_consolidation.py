"""A consolidation that raised half-way (an interrupt, memory running out, an LLM client's error) has changed
nothing: the handle answers as one that never ran it, and as the reopened store does."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from hippo import Memory
from hippo.engine import maintenance
from hippo.engine.lifecycle import Life
from hippo.engine.llm import LLM
from hippo.engine.hierarchy import decay as decay_mod
from hippo.engine.hierarchy import persist as hier_persist
from hippo.engine.hierarchy.knn import KnnGraph
from hippo.engine.hierarchy.state import Hierarchy
from hippo.engine.hierarchy.themes import ThemeSet

# top-down recall ("full"), so recall reads the themes, semantics and episodes
CFG = {"hierarchy": {"episode_min_messages": 2, "episode_max_messages": 4, "theme_cap": 6, "recall": "full"}}
NOUNS = ("beagle pottery kiln teapot garden tomato bicycle marathon violin guitar recipe lasagna passport flight "
         "hotel museum camera lens novel chapter printer laptop budget invoice").split()
VERBS = "bought fixed painted cooked booked visited repaired sold borrowed finished".split()
NAMES = "Ann Bob Carla Dev Emma Farid".split()


@pytest.fixture(autouse=True)
def _one_moment(monkeypatch):
    """Messages are ingested and read at one moment: handles built apart have the same strengths."""
    import hippo.engine.prepare as prepare

    class Clock:
        def time(self):
            return 1_700_000_000.0

    monkeypatch.setattr(prepare, "time", Clock())
    monkeypatch.setattr(decay_mod, "now", Clock().time)


class Interrupt(BaseException):
    """Stands for KeyboardInterrupt / MemoryError arriving inside a step."""


def _fill(mem: Memory, n: int = 243) -> None:
    rng = np.random.default_rng(3)
    mem.add_many([{"text": f"{rng.choice(NAMES)} {rng.choice(VERBS)} the {rng.choice(NOUNS)} and the "
                           f"{rng.choice(NOUNS)} near the {rng.choice(NOUNS)} on day {k}.",
                   "speaker": NAMES[k % 2], "session_id": f"s{k // 20}"} for k in range(n)])


def _view(mem: Memory) -> tuple:
    """What a user sees of the lifecycle, and the whole hierarchy as it would be saved."""
    stats = {k: v for k, v in mem.stats()["hierarchy"].items() if k not in ("consolidation_seconds", "mean_strength")}
    life = mem.engine.state().life()
    with life.lock:
        life._record_units()
        meta, arrays = hier_persist.dump(life.hier)
        units = {level: (t.key[t.live_slots()].tolist(), t.flags[t.live_slots()].tolist(),
                         t.base_rate[t.live_slots()].tolist()) for level, t in life.units.items()}
        msgs = (life.decay.flags[life.decay.live_slots()].tolist(), life.decay.base_rate[life.decay.live_slots()].tolist())
    return (stats, mem.topics(), mem.recall("beagle kiln teapot", budget_tokens=300).text,
            mem.recall("Who repaired the violin?", budget_tokens=300).text,
            meta, {k: v.tobytes() for k, v in arrays.items()}, units, msgs)


def _fails(monkeypatch, owner, name: str, after: int = 0):
    """Make ``owner.name`` raise :class:`Interrupt` at its call number ``after`` (counted from 0)."""
    real = getattr(owner, name)
    calls = [0]

    def step(*args, **kwargs):
        calls[0] += 1
        if calls[0] > after:
            raise Interrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, step)
    return calls


STEPS = [
    (Hierarchy, "_consolidate_batch", 0),   # flushing the CURRENT buffer
    (Hierarchy, "_insert_semantics", 0),    # its episodes made, their semantics not yet
    (Life, "_record_units", 0),             # the new units made, their strength records not yet
    (ThemeSet, "consider_move", 1),         # moving semantics between themes, after one move was weighed
    (ThemeSet, "consider_merge", 0),        # merging tiny themes, after every move
    (KnnGraph, "rebuild", 1),               # the theme graph rebuilt, not the semantic one
    (maintenance, "_mark_persist", 0),      # after the units were recorded
    (maintenance, "light", 0),              # the report, the last step
]


@pytest.mark.parametrize("owner,name,after", STEPS, ids=[f"{s[1]}-{s[2]}" for s in STEPS])
def test_an_interrupted_deep_consolidation_leaves_the_handle_as_it_was(monkeypatch, owner, name, after):
    ref = Memory(None, config=CFG)
    _fill(ref)
    mem = Memory(None, config=CFG)
    _fill(mem)
    mem.recall("beagle kiln", budget_tokens=200)  # accesses: reinforced records must come back as they were
    ref.recall("beagle kiln", budget_tokens=200)
    want = _view(ref)
    with pytest.MonkeyPatch.context() as mp:
        calls = _fails(mp, owner, name, after)
        with pytest.raises(Interrupt):
            mem.consolidate("deep")
    assert calls[0] > after  # the step did run and raise
    assert _view(mem) == want
    # the next deep consolidation builds what the one of a handle never interrupted builds
    assert {k: v for k, v in mem.consolidate("deep").items() if k != "mean_strength"} == \
        {k: v for k, v in ref.consolidate("deep").items() if k != "mean_strength"}
    assert _view(mem) == _view(ref)


def test_an_interrupted_deep_consolidation_of_a_reopened_store_saves_nothing(tmp_path, monkeypatch):
    """A lifecycle loaded from its snapshot (units built on first read) is put back as loaded, and what the handle
    saves at close is the store as it was: a reopen equals a handle that never ran the call."""
    with Memory(tmp_path / "built.db", config=CFG) as mem:
        _fill(mem)
    for name in ("ref.db", "m.db"):  # two copies of the closed store: reads reinforce, and close saves that
        shutil.copyfile(tmp_path / "built.db", tmp_path / name)
    with Memory(tmp_path / "ref.db", config=CFG) as ref:
        want = _view(ref)
        ref.add("Ann repaired the teapot near the kiln.", session_id="s99")
        want_after = _view(ref)
    with Memory(tmp_path / "m.db", config=CFG) as mem:
        with pytest.MonkeyPatch.context() as mp:
            _fails(mp, KnnGraph, "rebuild", 0)
            with pytest.raises(Interrupt):
                mem.consolidate("deep")
        assert _view(mem) == want
        mem.add("Ann repaired the teapot near the kiln.", session_id="s99")  # a write saves what the handle holds
        assert _view(mem) == want_after
    with Memory(tmp_path / "ref.db", config=CFG) as ref, Memory(tmp_path / "m.db", config=CFG) as again:
        assert _view(again) == _view(ref)
        assert again.stats()["hierarchy"]["current_buffer"] == want[0]["current_buffer"] + 1


def test_an_interrupted_light_consolidation_leaves_the_buffer_as_it_was(monkeypatch):
    """A light pass folds in the complete flush units waiting in the CURRENT buffer; raising half-way it left
    some of them consolidated and still in the buffer, so the next pass made their episodes again."""
    handles = []
    for _ in range(2):
        m = Memory(None, config=CFG)
        _fill(m)
        m.add_many([{"text": t, "speaker": "Ann", "session_id": s} for t, s in [
            ("Ann fixed the violin near the museum.", "s50"), ("The violin sounds fine again.", "s50"),
            ("Bob cooked the lasagna for the marathon.", "s51")]])  # s50 is a complete flush unit, not a batch
        handles.append(m)
    ref, mem = handles
    assert mem.engine.state().life().hier.ready > 0
    want = _view(ref)
    with pytest.MonkeyPatch.context() as mp:
        _fails(mp, Hierarchy, "_insert_semantics", 0)
        with pytest.raises(Interrupt):
            mem.consolidate("light")
    assert _view(mem) == want
    mem.consolidate("light")
    ref.consolidate("light")
    assert _view(mem) == _view(ref)
    h = mem.engine.state().life().hier
    owners = [m for e in h.episodes.values() for m in e.message_ids]
    assert len(owners) == len(set(owners))  # every message in one episode


def _aged(monkeypatch, mem_of):
    """A store with units dormant past the retention age and a note a ``prune`` policy dooms (test_decay's)."""
    import hippo.engine.prepare as prepare

    class Clock:
        t = 1_700_000_000.0

        def time(self):
            return self.t

    clock = Clock()
    monkeypatch.setattr(prepare, "time", clock)
    monkeypatch.setattr(decay_mod, "now", lambda: clock.t)
    policies = [{"match": {"contains": "scratch"}, "action": {"prune": True, "decay_rate": 0.5,
                                                              "expires_after_seconds": 86400.0}}]
    mem = mem_of({**CFG, "decay": {"policies": policies, "rates": {"semantic": 0.5, "episode": 0.5}}})
    mem.add("scratch: the temporary door code is 5512", session_id="s-1")
    _fill(mem, 120)
    mem.consolidate("deep")
    clock.t += 3 * 365 * 86400.0
    mem.add("Bob sold the guitar near the museum today.", session_id="later")
    return mem


@pytest.mark.parametrize("where", ["drop_episode", "delete"])
def test_an_interrupted_archival_consolidation_prunes_nothing(monkeypatch, tmp_path, where):
    ref = _aged(monkeypatch, lambda cfg: Memory(tmp_path / "ref.db", config=cfg))
    mem = _aged(monkeypatch, lambda cfg: Memory(tmp_path / "m.db", config=cfg))
    want, n = _view(ref), len(ref)
    failing = [True]
    if where == "delete":  # the store refuses to delete the doomed note, after the units were pruned
        store = mem.engine.rt.store
        real = store.delete

        def delete(*args, **kwargs):
            if failing[0]:
                raise Interrupt
            return real(*args, **kwargs)

        monkeypatch.setattr(store, "delete", delete)
    else:
        real = Hierarchy.drop_episode
        calls = [0]

        def drop_episode(self, eid):
            calls[0] += 1
            if failing[0] and calls[0] > 2:
                raise Interrupt
            return real(self, eid)

        monkeypatch.setattr(Hierarchy, "drop_episode", drop_episode)
    with pytest.raises(Interrupt):
        mem.consolidate("archival")
    failing[0] = False
    assert len(mem) == n
    assert _view(mem) == want
    got, expected = mem.consolidate("archival"), ref.consolidate("archival")
    assert got == expected and got["pruned_units"] > 0 and got["deleted_messages"] == 1
    assert _view(mem) == _view(ref)
    mem.close()
    ref.close()


def _counters(mem: Memory) -> dict:
    return {k: v for k, v in mem.stats()["hierarchy"].items() if k != "mean_strength"}


def test_a_cleared_namespace_keeps_no_counters_and_builds_what_a_new_store_builds(tmp_path):
    """After ``clear()`` the handle's stats kept the splits, merges and reassignments of the units that were gone
    (35 splits, 128 reassignments) where the reopened store showed 0, and its document frequencies still counted
    the deleted text, so messages added next got other codes and themes than in a new store."""
    with Memory(tmp_path / "m.db", config=CFG) as mem:
        _fill(mem)
        mem.consolidate("deep")
        assert mem.stats()["hierarchy"]["splits"] > 0 and mem.stats()["hierarchy"]["reassignments"] > 0
        mem.clear()
        cleared = _counters(mem)
    with Memory(tmp_path / "m.db", config=CFG) as again:
        assert _counters(again) == cleared
    assert cleared == _counters(Memory(None, config=CFG))
    with Memory(tmp_path / "m.db", config=CFG) as mem:
        _fill(mem)
        mem.clear()
        _fill(mem, 120)
        fresh = Memory(None, config=CFG)
        _fill(fresh, 120)
        assert _view(mem)[:4] == _view(fresh)[:4]  # stats, topics, recall (message ids differ)


def test_reassigned_semantics_count_only_the_semantics_still_held(tmp_path):
    """Deleting three quarters of the messages left ``reassigned_semantics`` at 108 for 51 semantics (a
    ``reassignment_ratio`` of 2.1): semantics that were gone still counted as moved."""
    with Memory(tmp_path / "m.db", config=CFG) as mem:
        _fill(mem)
        mem.consolidate("deep")
        h = mem.engine.state().life().hier
        moved = set(h.themes.moved)
        ids = [m.id for m in mem.list()]
        mem.delete(ids[: len(ids) * 3 // 4])
        stats = mem.stats()["hierarchy"]
        want = len(moved & set(h.semantics))
        assert 0 < stats["semantics"] < len(moved)
        assert stats["reassigned_semantics"] == want
        assert stats["reassignment_ratio"] == want / stats["semantics"] <= 1.0
    with Memory(tmp_path / "m.db", config=CFG) as again:
        assert again.stats()["hierarchy"]["reassigned_semantics"] == want


class _Scribe(LLM):
    """An LLM answering from the text it is given: a summary of the first line, one fact of the first message; the
    call number ``fail_at`` of ``summarize`` raises :class:`Interrupt` (None: none)."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__(base_url="http://127.0.0.1:9", max_retries=0)
        self.fail_at, self.calls = fail_at, 0

    def summarize(self, lines, *, words: int = 40) -> str:
        self.calls += 1
        if self.fail_at is not None and self.calls > self.fail_at:
            raise Interrupt
        return "summary: " + list(lines)[0][:60]

    def facts(self, messages):
        mid, speaker, text = messages[0]
        return [(f"{speaker or 'someone'} said {text[:40]}", [mid])]


def test_a_deep_consolidation_interrupted_in_its_llm_refresh_leaves_the_handle_as_it_was():
    """The LLM refresh rewrites episode summaries and replaces their offline facts one episode at a time: an
    interrupt after a few episodes leaves none of them rewritten, and the next pass builds what an uninterrupted
    one builds."""
    ref = Memory(None, config=CFG, llm=_Scribe())
    mem = Memory(None, config=CFG, llm=_Scribe(fail_at=3))
    for m in (ref, mem):
        _fill(m, 120)
    want = _view(ref)
    with pytest.raises(Interrupt):
        mem.consolidate("deep")
    assert mem._rt.llm.calls > 3  # episodes were refreshed before the interrupt
    assert _view(mem) == want
    mem._rt.llm.fail_at = None
    assert {k: v for k, v in mem.consolidate("deep").items() if k != "mean_strength"} == \
        {k: v for k, v in ref.consolidate("deep").items() if k != "mean_strength"}
    assert _view(mem) == _view(ref)
