"""Decay (seed 004 §8, §14.2): the power law against its closed form, modifiers, reinforcement, dormancy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.base.config import DecayConfig
from hippo.engine.hierarchy import decay as decay_mod
from hippo.engine.hierarchy.decay import DecayTable, closed_form
from tests.decay_clock import CONVO, decay_clock

TURNS = {"clock": "turns", "turn_weight": 1.0}  # one added message = one turn of seed 004 §8.1


def test_closed_form_reproduces_the_seed_table():
    # seed 004 §8.1, tool_result (rate 0.1): turns since access -> strength
    table = {0: 1.00, 5: 0.82, 10: 0.71, 20: 0.58, 50: 0.41, 100: 0.30}
    for dt, want in table.items():
        assert round(closed_form(0.1, dt), 2) == want


@pytest.mark.parametrize("priority,mod", [("critical", 0.0), ("high", 0.3), ("normal", 1.0), ("low", 2.0)])
@pytest.mark.parametrize("manual", [False, True])
def test_table_strength_follows_the_power_law_with_modifiers(priority, mod, manual):
    cfg = DecayConfig(**TURNS)
    t = DecayTable()
    slot = t.add(1, type="tool_result", priority=priority, base_rate=0.1, manual=manual, turn=10, at=0.0)
    rate = 0.1 * mod * (0.5 if manual else 1.0)
    for turn in (10, 11, 15, 60, 1010):
        got = t.strength(np.array([slot]), cfg, turn, 0.0)[0]
        assert got == pytest.approx(closed_form(rate, turn - 10), rel=1e-12)
    if priority == "critical":
        assert t.strength(np.array([slot]), cfg, 10**9, 0.0)[0] == 1.0


def test_floor_association_expiry_and_unknown_entries():
    cfg = DecayConfig(**TURNS, association_mod=0.7)
    t = DecayTable()
    a = t.add(1, type="message", base_rate=0.05, floor=0.4, turn=0, at=0.0)
    b = t.add(2, type="message", base_rate=0.05, turn=0, at=0.0, expires_turn=30)
    c = t.add(3, type="message", base_rate=0.05, turn=0, at=0.0)
    t.set_flag(np.array([c]), decay_mod.F_ASSOC)
    s = t.strength(np.array([a, b, c, -1]), cfg, 1000, 0.0)
    assert s[0] == pytest.approx(0.4)                                   # floor
    assert s[1] == 0.0                                                  # expired (hard expiry beats the floor)
    assert s[2] == pytest.approx(closed_form(0.05 * 0.7, 1000))         # strong association x0.7
    assert s[3] == 1.0                                                  # unknown: no record, no decay
    assert t.strength(np.array([b]), cfg, 29, 0.0)[0] == pytest.approx(closed_form(0.05, 29))


def test_wall_clock_and_both_clocks():
    day = 86400.0
    t = DecayTable()
    slot = np.array([t.add(1, type="message", base_rate=0.05, turn=0, at=0.0)])
    assert t.strength(slot, DecayConfig(clock="time"), 50, 2 * day)[0] == pytest.approx(closed_form(0.05, 2))
    both = DecayConfig(clock="both", turn_weight=1.0, time_weight=3.0)
    assert t.strength(slot, both, 50, 2 * day)[0] == pytest.approx(closed_form(0.05, 50 + 3 * 2))
    hours = DecayConfig(clock="time", time_unit_s=3600.0)
    assert t.strength(slot, hours, 0, 5 * 3600.0)[0] == pytest.approx(closed_form(0.05, 5))


def test_reinforcement_resets_the_clock():
    cfg = DecayConfig(**TURNS)
    t = DecayTable()
    slot = np.array([t.add(1, type="message", base_rate=0.05, turn=0, at=0.0)])
    assert t.strength(slot, cfg, 100, 0.0)[0] == pytest.approx(closed_form(0.05, 100))
    t.reinforce(slot, 100, 0.0)
    assert t.strength(slot, cfg, 100, 0.0)[0] == 1.0
    assert t.strength(slot, cfg, 120, 0.0)[0] == pytest.approx(closed_form(0.05, 20))
    assert t.accesses[slot[0]] == 1


def test_merging_another_handles_saved_records_keeps_both_handles_accesses():
    """Hand-computed: the saved count plus this table's own accesses since it last matched the store, the later last
    access, the flags an access or a promotion set, the promoted rate; records the saved ones do not hold, or hold
    under another identity (a unit id another hierarchy gave to other messages), stay as they are."""
    from hippo.engine.hierarchy.decay import F_ASSOC, F_MANUAL, F_PERSIST

    def table() -> DecayTable:
        t = DecayTable()
        for key in (1, 2, 3):
            t.add(key, type="episode", base_rate=0.05, turn=key, at=100.0 * key)
        return t

    theirs = table()
    theirs.reinforce(theirs.slots([1, 1]), 10, 1000.0)  # one access (an id named twice is one use)
    theirs.reinforce(theirs.slots([1]), 12, 1200.0)
    theirs.flags[theirs.slots([2])] |= F_ASSOC | F_PERSIST | F_MANUAL
    theirs.base_rate[theirs.slots([2])] = 0.01  # promoted by their deep consolidation
    theirs.created_turn[theirs.slots([3])] = 99  # their unit 3 is another unit
    theirs.reinforce(theirs.slots([3]), 13, 1300.0)
    saved = theirs.arrays()

    ours = table()
    ours.reinforce(ours.slots([1]), 11, 1500.0)
    merged = ours.merge(saved)
    assert sorted(ours.key[merged].tolist()) == [1, 2]
    one, two, three = ours.slots([1, 2, 3]).tolist()
    assert (int(ours.accesses[one]), int(ours.last_turn[one]), float(ours.last_time[one])) == (3, 12, 1500.0)
    assert int(ours.flags[two]) == F_ASSOC | F_PERSIST and float(ours.base_rate[two]) == 0.01  # not their F_MANUAL
    assert (int(ours.accesses[three]), int(ours.last_turn[three])) == (0, 3)  # another unit: untouched
    assert ours.merge(saved).tolist() == merged.tolist() and int(ours.accesses[one]) == 3  # merging is idempotent
    ours.own[:] = 0  # saved: the store now holds these 3 accesses
    stored = ours.arrays()
    ours.reinforce(ours.slots([1]), 14, 1600.0)
    ours.merge(stored)  # merging what it saved itself adds only the access since
    assert int(ours.accesses[one]) == 4
    assert ours.merge(saved, identity=False).tolist() == [0, 1, 2]  # messages: one id, one record
    assert int(ours.accesses[three]) == 1


def test_config_validation():
    with pytest.raises(InvalidInput, match="rates"):
        DecayConfig(rates={"tweet": 0.1})
    with pytest.raises(InvalidInput, match="clock"):
        DecayConfig(clock="sundial")
    with pytest.raises(InvalidInput, match="priority_mods"):
        DecayConfig(priority_mods={"urgent": 0.1})
    assert DecayConfig(rates={"message": 0.2}).rates["tool_result"] == 0.1  # others keep their defaults


# -- inside Memory ------------------------------------------------------------------------------------------------
def test_memory_strengths_follow_turns_and_priorities():
    mem = Memory(None, config={"decay": TURNS})
    first = mem.add("The router admin password is stored in the vault.", priority="critical")
    tool = mem.add("ls output: a.txt b.txt", role="tool")
    for k in range(40):
        mem.add(f"filler message number {k} about the weather")
    s = mem.strength([first.id, tool.id, 99999])
    assert set(s) == {first.id, tool.id}                                # unknown ids are left out
    assert s[first.id] == 1.0                                           # critical: no decay
    assert s[tool.id] == pytest.approx(closed_form(0.1, 41))            # tool result: 0.1 per turn
    mem.get(tool.id)                                                    # explicit retrieval reinforces
    assert mem.strength(tool.id)[tool.id] == 1.0
    assert mem.reinforce([first.id, 123456]) == 1


def test_get_reinforces_also_as_the_first_call_after_an_open(tmp_path, monkeypatch):
    """``get`` is an access (seed 004 §4.1). As the first call of a reopened handle (lifecycle not loaded yet) it was
    not recorded: the message kept its decayed strength, in the handle and after the next open. It now counts as
    the same ``get`` made after the lifecycle was loaded does (strength 1, one access), its neighbour untouched."""
    clock = [1_760_000_000.0]
    monkeypatch.setattr(decay_mod, "now", lambda: clock[0])
    path = tmp_path / "get.db"
    with Memory(path) as mem:
        ids = [it.id for it in mem.add_many({"text": f"note {i} about the orchard ladder", "session_id": "s"}
                                            for i in range(6))]
    clock[0] += 30 * 86400.0
    with Memory(path) as mem:
        decayed = mem.strength(ids[1])[ids[1]]
    assert decayed < 1.0
    with Memory(path) as mem:
        mem.get(ids[0])  # the first call of this handle
        assert mem.strength([ids[0], ids[1]]) == {ids[0]: 1.0, ids[1]: decayed}
    with Memory(path) as mem:
        assert mem.strength([ids[0], ids[1]]) == {ids[0]: 1.0, ids[1]: decayed}
        life = mem.engine.state().life()
        assert life.decay.accesses[life.decay.slots([ids[0], ids[1]])].tolist() == [1, 0]


def test_an_id_named_twice_in_one_reinforce_is_one_use():
    """reinforce returns how many messages were known and counts one access each: an id repeated in one call is
    not several uses (three uses make a message persist-worthy at deep consolidation)."""
    mem = Memory(None)
    a = mem.add("The launch code is kept in the blue folder.")
    for k in range(5):
        mem.add(f"filler message number {k} about the weather")
    assert mem.reinforce([a.id, a.id, a.id, 424242]) == 1
    life = mem.engine.state().life()
    assert life.decay.accesses[life.decay.slots([a.id])].tolist() == [1]
    assert mem.consolidate("deep")["persist_marked"] == 0
    assert mem.reinforce([a.id]) == 1 and mem.reinforce([a.id]) == 1     # three separate uses: persist-worthy
    assert mem.consolidate("deep")["persist_marked"] == 1


def test_a_metadata_update_keeps_the_long_term_promotion_its_accesses_earned(monkeypatch):
    """Deep consolidation makes a record used ``persist_accesses`` times long-term memory (decaying at the ``memory``
    rate). Updating an unrelated metadata key of such a message re-derived its record from the metadata alone: the
    promotion was gone (base rate 0.05 again; strength 0.30 instead of 0.58 two hundred days later) although the
    update keeps its accesses. It now decays as its twin, promoted the same way and never updated, does."""
    import time

    clock = [time.time() + 3600.0]  # past the messages' creation: the uses below are the last accesses
    monkeypatch.setattr(decay_mod, "now", lambda: clock[0])
    mem = Memory(None)
    a = mem.add("The launch code is kept in the blue folder.")
    b = mem.add("The spare key is under the red pot.")
    for k in range(5):
        mem.add(f"filler message number {k} about the weather")
    for _ in range(3):
        mem.reinforce([a.id, b.id])
    assert mem.consolidate("deep")["persist_marked"] == 2
    mem.update(a.id, metadata={"topic": "codes"})
    clock[0] += 200 * 86400.0
    s = mem.strength([a.id, b.id])
    assert s[b.id] == pytest.approx(closed_form(0.01, 200), rel=1e-6)  # the memory rate, 200 days since the last use
    assert s[a.id] == pytest.approx(s[b.id], rel=1e-9)
    mem.update(a.id, metadata={"priority": "low"})  # what the update itself changes still applies
    assert mem.strength(a.id)[a.id] == pytest.approx(closed_form(0.01 * 2, 200), rel=1e-6)  # low: rate x2


def test_a_rebuilt_lifecycle_keeps_the_turn_clock_past_deleted_messages(tmp_path):
    """Turns count the messages ever added (the namespace's next seq): deleting the latest ones does not turn the
    clock back, also when the lifecycle is rebuilt from the surviving messages (its snapshot unusable)."""
    cfg = {"decay": {**TURNS, "policies": [{"match": {"contains": "scratch"}, "action": {"expires_after_turns": 5}}]}}
    path = tmp_path / "turns.db"
    with Memory(path, config=cfg) as mem:
        a = mem.add("scratch: the temporary door code is 5512")
        b = mem.add("The garden hose is in the shed.")
        mem.delete([x.id for x in mem.add_many([{"text": f"status update {k}"} for k in range(10)])])
        live = mem.strength([a.id, b.id])
        assert live == {a.id: 0.0, b.id: pytest.approx(closed_form(0.05, 11))}  # 12 turns, b added at turn 1
        blob = bytearray(mem.engine.rt.store.get_units("default", "derived.life"))
        blob[len(blob) // 2] ^= 0xFF  # unusable: the reopened handle rebuilds the lifecycle from the messages
        mem.engine.rt.store.put_units("default", "derived.life", bytes(blob))
        mem.engine.state()._life = None  # nothing is saved over it on close
    with Memory(path, config=cfg) as mem:
        assert mem.strength([a.id, b.id]) == live
        assert mem.consolidate("light")["expired"] == 1


def test_dormant_memories_leave_normal_recall_and_come_back_on_demand():
    cfg = {"decay": {**TURNS, "rates": {"message": 0.5}, "dormant_threshold": 0.3}, "hierarchy": {"recall": "flat"}}
    mem = Memory(None, config=cfg)
    old = mem.add("The spare house key is under the blue flowerpot.", session_id="s1")
    for k in range(80):
        mem.add(f"Status update {k}: the build is green and the house is quiet.", session_id="s2")
    assert mem.strength(old.id)[old.id] < 0.3
    assert mem.consolidate("light")["dormant"] >= 1
    query = "Where did we put the house key?"                             # a partial cue: "put" is not in it
    assert old.id not in [m.id for m in mem.recall(query, budget_tokens=400).messages]
    assert old.id in [m.id for m in mem.recall(query, budget_tokens=400, include_dormant=True).messages]
    assert mem.get(old.id).text.startswith("The spare house key")       # never deleted
    assert len(mem) == 81
    # a strong exact cue (every query term) completes the pattern without include_dormant
    assert old.id in [m.id for m in mem.recall("spare house key flowerpot", budget_tokens=400).messages]


def test_recall_reinforces_what_it_returns():
    mem = Memory(None, config={"decay": TURNS})
    a = mem.add("Our wedding anniversary is on June 12th.")
    for k in range(30):
        mem.add(f"Unrelated chatter {k} about groceries.")
    before = mem.strength(a.id)[a.id]
    rec = mem.recall("When is the anniversary?", budget_tokens=50)
    assert a.id in [m.id for m in rec.messages]
    assert before < 1.0 and mem.strength(a.id)[a.id] == 1.0


QUESTIONS = {"What is the name of Ann's dog?": 0, "What is Bob making for his grandmother?": 5,
             "Which trail did they hike?": 6, "What happened in the kiln?": 7}


def test_an_aged_store_still_recalls_its_evidence(monkeypatch):
    """Every item years old: all strengths fall together, and ranking must not collapse with them."""
    mem = Memory(None)  # default clock: turns and wall-clock days
    items = mem.add_many({"text": t, "speaker": sp, "session_id": f"s{k // 4}"} for k, (sp, t) in enumerate(CONVO))
    mem.consolidate("light")
    fresh = {q: [m.id for m in mem.recall(q, budget_tokens=60).messages] for q in QUESTIONS}
    created = max(i.created_at.timestamp() for i in items)
    monkeypatch.setattr(decay_mod, "now", lambda: created + 10 * 365 * 86400.0)  # ten years later
    s = mem.strength([i.id for i in items])
    assert max(s.values()) < mem.config.decay.dormant_threshold           # every absolute strength fell
    assert mem.consolidate("light")["dormant"] == 0                       # but none fell behind the others
    for q, k in QUESTIONS.items():
        got = [m.id for m in mem.recall(q, budget_tokens=60).messages]
        assert items[k].id in got and got == fresh[q]


def test_unused_parts_fade_relative_to_the_used_ones(monkeypatch):
    mem = Memory(None, config={"decay": {"dormant_threshold": 0.25}})
    base = decay_mod.now()
    monkeypatch.setattr(decay_mod, "now", lambda: base)
    old = mem.add("The old office was on Elm Street.")
    monkeypatch.setattr(decay_mod, "now", lambda: base + 400 * 86400.0)
    life = mem.engine.state().life()
    life.last_add_time = base + 400 * 86400.0                             # the store keeps being written to
    assert life.reference(base + 400 * 86400.0) == 1.0
    # one message added since (0.02 of a turn by default) and 400 days
    assert mem.strength(old.id)[old.id] == pytest.approx(closed_form(0.05, 0.02 + 400), rel=1e-4)
    assert mem.consolidate("light")["dormant"] == 1


def test_decay_disabled_keeps_every_strength_at_one():
    mem = Memory(None, config={"decay": {"enabled": False}})
    a = mem.add("hello there, general")
    for k in range(50):
        mem.add(f"message {k}")
    assert mem.strength(a.id) == {a.id: 1.0}
    assert not math.isnan(mem.recall("general", budget_tokens=30).tokens)


def test_by_default_a_long_store_keeps_its_old_messages_active():
    """Fifty messages make one seed turn by default: thousands of later messages do not silence a memory."""
    mem = Memory(None)
    first = mem.add("The safe combination is 31-07-94.")
    mem.add_many({"text": f"Log line {k}: heartbeat ok."} for k in range(3000))
    assert mem.consolidate("light")["dormant"] == 0
    assert first.id in [m.id for m in mem.recall("What is the combination?", budget_tokens=80).messages]


@pytest.mark.parametrize("ordered", [True, False])
def test_slot_lookup_matches_a_dict_through_adds_drops_and_a_reload(ordered):
    """The table finds slots by binary search while its keys increase and by a dict once they do not; either way
    every lookup agrees with a plain dict kept beside it, also after a round trip through :meth:`arrays`."""
    rng = np.random.default_rng(7 if ordered else 8)
    keys = np.arange(0, 3000, 3) if ordered else rng.permutation(3000)[:1000]
    t, ref = DecayTable(), {}

    def add(k):
        slot = t.add(int(k), type="message", base_rate=0.1, turn=0, at=0.0)
        ref[int(k)] = slot

    def check(table, reference):
        probe = np.concatenate([keys, [-1, 5000]]).astype(np.int64)
        want = np.array([reference.get(int(k), -1) for k in probe])
        assert table.slots(probe).tolist() == want.tolist()
        assert table.slots(probe.tolist()).tolist() == want.tolist()
        assert [table.find(int(k)) for k in probe] == want.tolist()
        assert [int(k) in table for k in probe] == [int(k) in reference for k in probe]
        assert len(table) == len(reference)
        assert sorted(table.live_keys().tolist()) == sorted(reference)
        assert table.slot_of == reference

    for k in keys[:600]:
        add(k)
    gone = rng.choice(keys[:600], 150, replace=False)
    t.drop(gone.tolist())
    for k in gone:
        del ref[int(k)]
    for k in keys[600:]:
        add(k)
    add(keys[10])  # an existing key keeps its slot
    check(t, ref)
    # reload: slots are renumbered over the live records, in slot order
    back = DecayTable.from_arrays(t.arrays())
    live_keys = t.live_keys().tolist()
    check(back, {k: i for i, k in enumerate(live_keys)})
    assert back._ordered == ordered  # the binary search serves a table whose keys increase
    add_after = DecayTable.from_arrays(t.arrays())
    add_after.add(-5, type="message", base_rate=0.1, turn=0, at=0.0)  # breaks the order: the dict takes over
    expect = {k: i for i, k in enumerate(live_keys)}
    expect[-5] = len(live_keys)
    check(add_after, expect)


def test_a_snapshot_with_repeated_keys_is_refused():
    t = DecayTable()
    for k in (4, 2, 9):
        t.add(k, type="message", base_rate=0.1, turn=0, at=0.0)
    arrays = t.arrays()
    arrays = {name: np.concatenate([col, col[:1]]) for name, col in arrays.items()}
    with pytest.raises(ValueError):
        DecayTable.from_arrays(arrays)


@pytest.mark.parametrize("mode", ["evidence", "flat"])
def test_recall_as_of_reads_strengths_as_they_stood_then(monkeypatch, mode):
    """``as_of`` answers as the memory stood at that moment, but strengths were read by today's clock: a note
    ingested six years ago and dormant today (strength 0.095) was left out of a recall asked as of a month after it
    was written, when it was the freshest memory there was (strength 0.63, the reference's own). Strengths,
    turns and the dormancy reference are now those of the ``as_of`` moment; without ``as_of`` nothing changes."""
    clock = decay_clock(monkeypatch, 1_600_000_000.0)
    mem = Memory(None, config={"hierarchy": {"recall": mode}})
    t0 = clock.t
    key = mem.add("The spare house key is under the blue flowerpot.", session_id="s0")
    for month in range(72):  # six years of monthly notes: the store is in use, so dormancy is absolute
        clock.t += 30.4 * 86400.0
        mem.add(f"Monthly status {month}: the build is green and the garden is quiet.", session_id=f"m{month}")
    assert mem.strength(key.id)[key.id] < mem.config.decay.dormant_threshold
    query = "Where did we put the house key?"  # a partial cue: "put" is not in the note
    assert key.id not in [m.id for m in mem.recall(query, budget_tokens=200).messages]  # dormant today
    as_of = t0 + 30 * 86400.0  # before the first monthly note
    state = mem.engine.state()
    life = state.life()
    turn, at, ref = life.moment(state.index, as_of)
    assert (turn, at) == (1, as_of) and ref == pytest.approx(closed_form(0.05, 30.0), rel=1e-9)
    got = mem.recall(query, budget_tokens=200, as_of=as_of)
    assert [m.id for m in got.messages] == [key.id]
    # the recall was a use: today the note is fresh again
    assert mem.strength(key.id)[key.id] == 1.0


def test_with_decay_switched_off_nothing_is_dormant_and_archival_deletes_nothing(monkeypatch):
    """``decay.enabled=False`` keeps every strength at one (``strength()`` and recall say so), but the light
    report, ``stats()`` and archival consolidation computed strengths all the same: a note under a ``prune`` policy,
    three years old, was reported dormant and deleted by ``consolidate("archival")``, and year-old units were pruned.
    With decay off nothing is dormant, expired or pruned now; with it on, the same store prunes both, as before."""
    clock = decay_clock(monkeypatch, 0.0)
    policies = [{"match": {"contains": "scratch"}, "action": {"prune": True, "decay_rate": 0.5,
                                                              "expires_after_seconds": 86400.0}}]
    reports = {}
    for enabled in (True, False):
        clock.t = 1_700_000_000.0
        mem = Memory(None, config={"decay": {"enabled": enabled, "policies": policies,
                                             "rates": {"semantic": 0.5, "episode": 0.5}}})
        note = mem.add("scratch: the temporary door code is 5512", session_id="s0")
        mem.add_many({"text": t, "speaker": sp, "session_id": f"s{k // 4}"} for k, (sp, t) in enumerate(CONVO))
        mem.consolidate("deep")
        units = mem.stats()["hierarchy"]["semantics"] + mem.stats()["hierarchy"]["episodes"]
        clock.t += 3 * 365 * 86400.0
        mem.add("The barn door was painted red today.", session_id="later")  # the store is in use again
        light = mem.consolidate("light")
        archival = mem.consolidate("archival")
        after = mem.stats()["hierarchy"]
        reports[enabled] = (mem.strength(note.id).get(note.id), light["dormant"], light["expired"],
                            light["mean_strength"], after["dormant_messages"], archival["deleted_messages"],
                            archival["pruned_units"], len(mem), after["semantics"] + after["episodes"] == units)
    assert reports[False] == (1.0, 0, 0, 1.0, 0, 0, 0, 2 + len(CONVO), True)
    strength, dormant, expired, _mean, _stats, deleted, pruned, n, kept = reports[True]
    assert (strength, expired, deleted, n, kept) == (None, 1, 1, 1 + len(CONVO), False) and dormant >= 1 and pruned > 0


@pytest.mark.parametrize("config", [{}, {"decay": {"enabled": False}}, {"hierarchy": {"enabled": False}},
                                    {"decay": {"enabled": False}, "hierarchy": {"enabled": False}}])
def test_reinforce_counts_the_known_messages_whatever_is_switched_off(config):
    """``reinforce`` returns how many of the ids are messages of the namespace; with decay and the hierarchy both
    switched off it returned 0 for a stored message (while ``strength`` listed it), now 1 as in every other
    configuration."""
    mem = Memory(None, config=config)
    a = mem.add("The barn door was painted red.")
    assert mem.reinforce([a.id, a.id, 424242]) == 1
    assert mem.strength([a.id, 424242]) == {a.id: pytest.approx(1.0, abs=1e-6)}


def test_a_table_grown_record_by_record_keeps_no_map_of_its_keys() -> None:
    """Records arrive with increasing keys: a binary search finds them, and the table holds its columns alone (a
    dict of every key took about a hundred bytes a record beside them)."""
    import tracemalloc

    n = 40_000
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        t = DecayTable()
        for k in range(n):
            t.add(10 + 2 * k, type="message", base_rate=0.1, turn=k, at=1e9 + k)
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    columns = sum(getattr(t, name).nbytes for name in DecayTable._FIELDS) + t.touched.nbytes + t.own.nbytes
    assert held - columns < 24 * n
    assert t.find(10 + 2 * 777) == 777 and t.find(11) == -1 and len(t) == n


def test_keys_out_of_order_are_found_as_a_dict_would() -> None:
    rng = np.random.default_rng(5)
    t = DecayTable()
    ref: dict[int, int] = {}
    for step in range(6_000):
        key = int(rng.integers(0, 9_000))
        if rng.random() < 0.25 and ref:
            gone = int(rng.choice(list(ref)))
            t.drop([gone])
            del ref[gone]
            continue
        slot = t.add(key, type="message", base_rate=0.1, turn=step, at=1e9 + step)
        assert ref.setdefault(key, slot) == slot
        if step % 500 == 0:
            probe = rng.integers(0, 9_000, 200).tolist()
            assert t.slots(probe).tolist() == [ref.get(k, -1) for k in probe]
    assert all(t.find(k) == s for k, s in ref.items()) and len(t) == len(ref)
    again = DecayTable.from_arrays(t.arrays())  # what a snapshot reloads
    assert all(int(again.key[again.find(k)]) == k for k in ref) and len(again) == len(ref)
