"""Declarative lifecycle policies (seed 004 §10) from dicts and YAML."""

from __future__ import annotations

import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.base.policies import Entry, compile_policies, load_policies
from hippo.engine.hierarchy.decay import F_PERSIST, closed_form
from tests.decay_clock import CONVO, decay_clock

SEED_EXAMPLE = """
lifecycle_policies:
  # Tool results decay fast unless high priority
  - match:
      type: tool_result
      priority: [normal, low]
    action:
      decay_rate: 0.15
      persist: false
  # User instructions persist
  - match:
      type: message
      contains: ["remember", "always", "never", "important"]
    action:
      priority: high
      persist: true
  # Errors expire after 50 turns
  - match:
      type: tool_result
      source.type: error
    action:
      expires_after_turns: 50
  # Browser snapshots are highly compressible
  - match:
      source.type: browser.snapshot
    action:
      index: true
      compression: aggressive
      decay_rate: 0.2
"""


def test_the_seed_example_loads_and_matches():
    rules = compile_policies(load_policies(SEED_EXAMPLE))
    assert len(rules) == 4
    tool = rules.evaluate(Entry("tool_result", "404 not found", metadata={"source": {"type": "error"}}))
    assert tool.decay_rate == 0.15 and tool.persist is False and tool.expires_after_turns == 50
    assert tool.matched == 2
    note = rules.evaluate(Entry("message", "Please REMEMBER my wife's birthday"))
    assert note.priority == "high" and note.persist is True
    assert rules.evaluate(Entry("message", "remembering is hard")).matched == 0  # whole words only
    snap = rules.evaluate(Entry("tool_result", "<html>", metadata={"source.type": "browser.snapshot"}))
    assert snap.decay_rate == 0.2                                      # later rules override earlier ones
    high_tool = rules.evaluate(Entry("tool_result", "x", priority="high"))
    assert high_tool.decay_rate is None                                 # priority [normal, low] does not match


def test_yaml_from_a_file_and_a_bare_list(tmp_path):
    path = tmp_path / "policies.yaml"
    path.write_text("- match: {role: tool}\n  action: {decay_rate: 0.3}\n", encoding="utf-8")
    assert load_policies(str(path)) == [{"match": {"role": "tool"}, "action": {"decay_rate": 0.3}}]
    assert load_policies(path)[0]["action"]["decay_rate"] == 0.3


@pytest.mark.parametrize("bad,match", [
    ([{"match": {}}], "'match' and 'action'"),
    ([{"match": {}, "action": {"explode": True}}], "unknown action"),
    ([{"match": {}, "action": {"priority": "urgent"}}], "priority"),
    ([{"match": {}, "action": {"decay_rate": -1}}], "decay_rate"),
    ([{"match": {}, "action": {"expires_after_turns": 2.5}}], "expires_after_turns"),
    ([{"match": {}, "action": {"expires_after_turns": 2**70}}], "expires_after_turns"),  # past 64-bit turns
    ([{"match": {}, "action": {"decay_rate": float("inf")}}], "decay_rate"),
    ([{"match": {}, "action": {"persist": "yes"}}], "persist"),
    ([{"match": {"contains": []}, "action": {}}], "contains"),
    ("not a list", "list"),
])
def test_bad_policies_are_rejected_with_a_clear_error(bad, match):
    with pytest.raises(InvalidInput, match=match):
        compile_policies(bad)
    with pytest.raises(InvalidInput):
        Memory(None, config={"decay": {"policies": bad}})


def test_the_largest_expiry_in_turns_a_policy_accepts_still_works():
    mem = Memory(None, config={"decay": {"policies": [{"match": {}, "action": {"expires_after_turns": 2**53}}]}})
    item = mem.add("a note about the harbour")
    assert [h.id for h in mem.search("harbour")] == [item.id]
    assert mem.strength(item.id)[item.id] > 0.9
    assert mem.index_entry("harbour log line").id.startswith("ctx_")


def test_bad_yaml_is_rejected():
    with pytest.raises(InvalidInput, match="YAML"):
        load_policies("- match: [unclosed\n")
    with pytest.raises(InvalidInput, match="list"):
        load_policies("just: a mapping\n")


def test_policies_drive_decay_inside_memory():
    policies = [
        {"match": {"role": "tool"}, "action": {"decay_rate": 0.3}},
        {"match": {"contains": ["remember"]}, "action": {"priority": "high", "persist": True}},
        {"match": {"project": "apollo"}, "action": {"priority": "critical"}},
        {"match": {"contains": "scratch"}, "action": {"expires_after_turns": 3, "prune": True}},
    ]
    mem = Memory(None, config={"decay": {"clock": "turns", "turn_weight": 1.0, "policies": policies}})
    tool = mem.add("grep found 3 matches", role="tool")
    note = mem.add("Remember that the demo is on Friday.")
    explicit = mem.add("remember this, but it is low priority", priority="low")
    project = mem.add("Kickoff notes", metadata={"project": "apollo"})
    scratch = mem.add("scratch: temporary calculation 2+2=4")
    for k in range(10):
        mem.add(f"filler {k}")
    life = mem.engine.state().life()
    s = mem.strength([tool.id, note.id, explicit.id, project.id, scratch.id])
    assert s[tool.id] == pytest.approx(closed_form(0.3, 15))            # 15 turns since it was added
    assert s[note.id] == pytest.approx(closed_form(0.05 * 0.3, 14))     # policy priority high
    assert s[explicit.id] == pytest.approx(closed_form(0.05 * 2.0, 13))  # add(priority=...) wins over policy
    assert s[project.id] == 1.0                                         # critical via metadata
    assert s[scratch.id] == 0.0                                         # expired after 3 turns
    assert life.decay.flags[life.decay.slot_of[note.id]] & F_PERSIST
    # archival deletes only what a policy allowed to prune
    report = mem.consolidate("archival")
    assert report["deleted_messages"] == 1 and len(mem) == 14
    with pytest.raises(Exception):
        mem.get(scratch.id)
    assert mem.get(note.id).text.startswith("Remember")


def test_deep_consolidation_promotes_often_used_and_persist_marked_entries():
    mem = Memory(None, config={"decay": {"clock": "turns", "turn_weight": 1.0, "persist_accesses": 2,
                                         "policies": [{"match": {"contains": "always"}, "action": {"persist": True}}]}})
    a = mem.add("I always take the 7:40 train.")
    b = mem.add("The printer on floor 2 is broken.")
    c = mem.add("Lunch was pasta.")
    mem.reinforce(b.id)
    mem.reinforce(b.id)
    report = mem.consolidate("deep")
    life = mem.engine.state().life()
    rate = {i: life.decay.base_rate[life.decay.slot_of[i]] for i in (a.id, b.id, c.id)}
    assert report["persist_marked"] >= 2
    assert rate[a.id] == rate[b.id] == mem.config.decay.rates["memory"] and rate[c.id] == 0.05




@pytest.mark.parametrize("action, rate", [({"priority": "critical"}, 0.0), ({"decay_rate": 0.5}, 0.5),
                                          ({"priority": "low"}, 0.005 * 2)])
def test_a_policy_on_the_theme_type_applies_to_themes(monkeypatch, action, rate):
    """``type: theme`` is a documented match key, but a theme has no text of its own and policies were only
    evaluated for units with text: a rule on themes never applied (they kept the theme rate, 0.005, and normal
    priority: strength 0.82 after 100 days whatever the rule said). Themes now follow such rules, as episodes and
    semantics do, and rules of other units' types leave them alone."""
    clock = decay_clock(monkeypatch, 1_760_000_000.0)
    policies = [{"match": {"type": "theme"}, "action": action},
                {"match": {"type": "episode"}, "action": {"priority": "critical"}}]
    mem = Memory(None, config={"decay": {"clock": "time", "policies": policies}})
    mem.add_many({"text": t, "speaker": sp, "session_id": f"s{k // 4}"} for k, (sp, t) in enumerate(CONVO * 3))
    mem.consolidate("deep")
    life = mem.engine.state().life()
    themes = life.hier.themes.live().tolist()
    episodes = list(life.hier.episodes)
    assert themes and episodes
    clock.t += 100 * 86400.0
    # every message was added within microseconds of the first: 100 days since each theme was made
    want = closed_form(rate, 100.0)
    assert life.unit_strength("theme", themes).tolist() == pytest.approx([want] * len(themes), rel=1e-6)
    assert [t["strength"] for t in mem.topics() if t["id"] != "current"] == [round(want, 4)] * len(themes)
    assert life.unit_strength("episode", episodes).tolist() == [1.0] * len(episodes)
    semantics = list(life.hier.semantics)
    assert life.unit_strength("semantic", semantics).tolist() == pytest.approx(
        [closed_form(0.01, 100.0)] * len(semantics), rel=1e-6)  # no rule on semantics: their own rate


def test_a_policy_expiry_on_units_expires_them(monkeypatch):
    """Units are matched by policies and follow their priority, rate, floor and persist actions, but the hard expiry
    actions were dropped for them: a semantic under ``expires_after_seconds: 3600`` still read 0.998 two hours
    later, an episode under ``expires_after_turns: 5`` 0.99 eleven turns on. Units now expire as messages do:
    after the given time (from the unit's newest message) or turns, not before."""
    clock = decay_clock(monkeypatch, 1_760_000_000.0)
    policies = [{"match": {"type": "semantic"}, "action": {"expires_after_seconds": 3600}},
                {"match": {"type": "episode"}, "action": {"expires_after_turns": 30}}]
    mem = Memory(None, config={"decay": {"policies": policies}})
    mem.add_many({"text": t, "speaker": sp, "session_id": f"s{k // 4}"} for k, (sp, t) in enumerate(CONVO * 3))
    mem.consolidate("deep")
    life = mem.engine.state().life()
    semantics, episodes = list(life.hier.semantics), list(life.hier.episodes)
    assert semantics and episodes
    made = life.units["episode"].created_turn[life.units["episode"].slots(episodes)]
    last_turn, newest = int(made.max()), episodes[int(made.argmax())]
    clock.t += 3000.0
    assert min(life.unit_strength("semantic", semantics).tolist()) > 0.99  # 50 minutes: not yet
    clock.t += 1200.0
    assert life.unit_strength("semantic", semantics).tolist() == [0.0] * len(semantics)
    more = last_turn + 30 - life.turn  # the turn the newest episode expires at
    mem.add_many({"text": f"status update {k} about the weather"} for k in range(more - 1))
    assert life.unit_strength("episode", [newest]).tolist()[0] > 0.0
    mem.add("one more status update about the weather")
    assert life.unit_strength("episode", episodes).tolist() == [0.0] * len(episodes)
