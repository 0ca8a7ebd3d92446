"""The temporal probe set (truth consistent with its own script) and ``hippo bench temporal`` (metrics, Kendall
tau). Accuracy figures are reported by the bench, never asserted here."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import date, timedelta

import pytest
from hippo_bench import main as bench_main
from hippo_bench.temporal import kendall_tau, marked_superseded, positions_in_list, positions_in_text
from hippo_bench.temporal_probes import ProbeSet, contains, generate, read_expression

SEED = 11


@pytest.fixture(scope="module")
def probes() -> ProbeSet:
    return generate(seed=SEED, conversations=3)


# ------------------------------------------------------------------------------------------- generator


def test_same_seed_same_probes_and_another_seed_differs(probes: ProbeSet) -> None:
    again = generate(seed=SEED, conversations=3)
    assert again == probes
    other = generate(seed=SEED + 1, conversations=3)
    assert other != probes
    assert [t.text for t in other.conversations[0].turns] != [t.text for t in probes.conversations[0].turns]


def test_probe_counts_and_variety() -> None:
    full = generate()
    assert 40 <= len(full.updates) + len(full.orders) <= 100
    assert {len(p.superseded) for p in full.updates} == {1, 2, 3}
    assert len({p.attribute for p in full.updates}) >= 8
    assert {len(c.speakers) for c in full.conversations} == {2, 3}
    told_late = [o for o in full.orders if o.told_order != o.true_order]
    assert 0 < len(told_late) < len(full.orders)
    mentions = [t for c in full.conversations for t in c.turns if t.kind == "mention"]
    assert len(mentions) >= len(full.updates)


def test_current_value_is_the_last_one_said(probes: ProbeSet) -> None:
    for p in probes.updates:
        conv = probes.conversation(p.conversation)
        said = sorted((t for t in conv.turns if t.kind == "statement" and t.ref == p.id), key=lambda t: t.timestamp)
        assert [t.index for t in said] == [s.turn for s in p.statements]
        assert all(t.speaker == p.person for t in said)
        assert contains(said[-1].text, p.current)
        assert p.current not in p.superseded and len(set(p.superseded)) == len(p.superseded)
        first_current = next(t for t in said if contains(t.text, p.current))
        for old in p.superseded:
            assert any(contains(t.text, old) for t in said if t.timestamp < first_current.timestamp), (p.id, old)
        # superseded values are listed oldest first: the order of their first statements
        firsts = [next(t.timestamp for t in said if contains(t.text, v)) for v in p.superseded]
        assert firsts == sorted(firsts)


def test_hand_checked_update_cases() -> None:
    ps = generate(seed=SEED, conversations=1)
    p = ps.updates[0]
    turns = ps.conversation(p.conversation).turns
    # One probe, read by hand from its script: every statement, oldest first, and the values they carry.
    script = [(turns[s.turn].timestamp, turns[s.turn].text) for s in p.statements]
    assert script == sorted(script)
    values_in_order = []
    for _, text in script:
        named = [v for v in p.values if contains(text, v)]
        # a change may name the old value too ("I'm not in X anymore ..."); the new one is the last in the script
        new = [v for v in named if v not in values_in_order]
        values_in_order.extend(new)
    assert values_in_order[-1] == p.current
    assert tuple(values_in_order[:-1]) == p.superseded


_WEEKDAY = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                        "sunday"))}
_MONTH = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                      "september", "october", "november", "december"), start=1)}
_COUNT = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}


def _event_day(text: str, said: date) -> date:
    """An independent reading of the time expressions the generator uses (canonical day)."""
    low = text.lower()
    if "this morning" in low or "earlier today" in low:
        return said
    if "the day before yesterday" in low:
        return said - timedelta(days=2)
    if "yesterday" in low:
        return said - timedelta(days=1)
    if "a couple of days ago" in low:
        return said - timedelta(days=2)
    if m := re.search(r"\b(\d+|two|three|four|five|six|ten) days ago", low):
        n = m.group(1)
        return said - timedelta(days=int(n) if n.isdigit() else _COUNT[n])
    if m := re.search(r"\b(two|three) weeks ago", low):
        return said - timedelta(weeks=_COUNT[m.group(1)])
    if "a fortnight ago" in low:
        return said - timedelta(weeks=2)
    if "a month ago" in low:
        return said - timedelta(days=30)
    if "last weekend" in low:
        d = said - timedelta(days=1)
        while d.weekday() != 6:   # the latest Sunday strictly before the day it was said
            d -= timedelta(days=1)
        return d - timedelta(days=1)
    if "last week" in low:
        return said - timedelta(days=7)
    if m := re.search(r"\b(?:last|on) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)", low):
        d = said - timedelta(days=1)
        while d.weekday() != _WEEKDAY[m.group(1)]:
            d -= timedelta(days=1)
        return d
    if m := re.search(r"\bon the (\d{1,2})(st|nd|rd|th)\b", low):
        return said.replace(day=int(m.group(1)))
    if m := re.search(r"\bback in ([a-z]+)", low):
        month = _MONTH[m.group(1)]
        return date(said.year if month < said.month else said.year - 1, month, 15)
    if m := re.search(r"\bon (\d{1,2}) ([a-z]+)", low):
        d = date(said.year, _MONTH[m.group(2)], int(m.group(1)))
        return d if d <= said else d.replace(year=said.year - 1)
    raise AssertionError(f"no time expression in {text!r}")


def test_true_order_matches_the_event_times_of_the_script(probes: ProbeSet) -> None:
    for o in probes.orders:
        turns = probes.conversation(o.conversation).turns
        days = {e.key: _event_day(turns[e.turn].text, turns[e.turn].timestamp.date()) for e in o.events}
        for e in o.events:
            assert days[e.key] == e.event_time.date(), (o.id, e.key)
            assert e.earliest <= days[e.key] <= e.latest
        assert list(o.true_order) == sorted(days, key=days.get)
        assert list(o.told_order) == sorted(days, key=lambda k: next(e.turn for e in o.events if e.key == k))
        for e in o.events:   # the key phrase identifies exactly one turn: the event's own
            assert [t.index for t in turns if e.key.lower() in t.text.lower()] == [e.turn]
        assert o.entity == o.person and o.person in o.question


def test_time_expression_windows_by_hand() -> None:
    tuesday = date(2023, 4, 11)
    r = read_expression("yesterday", tuesday)
    assert (r.expression, r.canonical, r.earliest, r.latest) == ("yesterday", date(2023, 4, 10), date(2023, 4, 10),
                                                                  date(2023, 4, 10))
    assert read_expression("days", tuesday, 2).canonical == date(2023, 4, 9)
    r = read_expression("last_week", tuesday)
    assert (r.canonical, r.earliest, r.latest) == (date(2023, 4, 4), date(2023, 4, 3), date(2023, 4, 9))
    r = read_expression("weeks", tuesday, 2)
    assert (r.expression, r.canonical, r.earliest, r.latest) == ("two weeks ago", date(2023, 3, 28),
                                                                  date(2023, 3, 25), date(2023, 3, 31))
    r = read_expression("weekday", tuesday, 4)
    assert (r.expression, r.canonical, r.earliest) == ("last Friday", date(2023, 4, 7), date(2023, 3, 31))
    r = read_expression("weekday", tuesday, 1)   # "last Tuesday" said on a Tuesday: a week back
    assert (r.canonical, r.earliest) == (date(2023, 4, 4), date(2023, 3, 28))
    r = read_expression("date", tuesday, 30)
    assert (r.expression, r.canonical) == ("on 12 March", date(2023, 3, 12))
    assert read_expression("today", tuesday).expression == "this morning"
    assert read_expression("day_before", tuesday).canonical == date(2023, 4, 9)
    r = read_expression("couple", tuesday)
    assert (r.canonical, r.earliest, r.latest) == (date(2023, 4, 9), date(2023, 4, 8), date(2023, 4, 9))
    r = read_expression("weekend", tuesday)         # the weekend of 8-9 April
    assert (r.expression, r.canonical, r.earliest, r.latest) == ("last weekend", date(2023, 4, 8),
                                                                  date(2023, 4, 8), date(2023, 4, 9))
    r = read_expression("weekend", date(2023, 4, 16))   # said on a Sunday: the weekend before, or the one before it
    assert (r.canonical, r.earliest, r.latest) == (date(2023, 4, 8), date(2023, 4, 1), date(2023, 4, 9))
    r = read_expression("on_weekday", tuesday, 0)
    assert (r.expression, r.canonical, r.earliest, r.latest) == ("on Monday", date(2023, 4, 10),
                                                                  date(2023, 4, 10), date(2023, 4, 10))
    assert read_expression("ordinal", tuesday, 8).expression == "on the 3rd"
    assert read_expression("ordinal", date(2023, 4, 22), 9).expression == "on the 13th"
    with pytest.raises(ValueError):
        read_expression("ordinal", tuesday, 11)          # 31 March is not "the 31st" of April
    r = read_expression("back_in", date(2023, 1, 20), 2)  # across a year boundary
    assert (r.expression, r.canonical, r.earliest, r.latest) == ("back in November", date(2022, 11, 15),
                                                                  date(2022, 11, 1), date(2022, 11, 30))
    r = read_expression("month_ago", tuesday)
    assert (r.canonical, r.earliest, r.latest) == (date(2023, 3, 12), date(2023, 3, 5), date(2023, 3, 18))
    with pytest.raises(ValueError):
        read_expression("someday", tuesday)


def test_validate_rejects_a_probe_that_contradicts_its_script(probes: ProbeSet) -> None:
    p = probes.updates[0]
    wrong = dataclasses.replace(p, current=p.superseded[-1], superseded=(*p.superseded[:-1], p.current))
    with pytest.raises(ValueError, match="current"):
        dataclasses.replace(probes, updates=(wrong, *probes.updates[1:])).validate()
    o = probes.orders[0]
    swapped = dataclasses.replace(o, events=(o.events[1], o.events[0], *o.events[2:]))
    with pytest.raises(ValueError, match="order"):
        dataclasses.replace(probes, orders=(swapped, *probes.orders[1:])).validate()


def test_generate_rejects_bad_sizes() -> None:
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError):
            generate(conversations=bad)


def test_contains_matches_whole_words_only() -> None:
    assert contains("I moved to Lyon.", "Lyon") and contains("i moved to lyon", "Lyon")
    assert not contains("Lyons is nice", "Lyon")
    assert contains("up to 9 houseplants now", "9 houseplants") and not contains("19 houseplants", "9 houseplants")
    assert contains("pay from 82,000 to 91,000", "91,000") and not contains("191,000", "91,000")


# ------------------------------------------------------------------------------------------ Kendall tau


def test_kendall_tau_hand_computed() -> None:
    abc = ["a", "b", "c"]
    assert kendall_tau(abc, {"a": 0, "b": 1, "c": 2}) == 1.0
    assert kendall_tau(abc, {"a": 2, "b": 1, "c": 0}) == -1.0
    # pairs (a,b) +1, (a,c) +1, (b,c) -1  -> 1/3
    assert kendall_tau(abc, {"a": 0, "c": 1, "b": 2}) == pytest.approx(1 / 3)
    # four items, one adjacent swap: 5 concordant, 1 discordant of 6
    assert kendall_tau(list("abcd"), {"a": 10, "b": 30, "c": 20, "d": 40}) == pytest.approx(4 / 6)
    # positions are compared, not required to be ranks
    assert kendall_tau(abc, {"a": 5.5, "b": 70, "c": 900}) == 1.0


def test_kendall_tau_missing_items_and_ties_score_zero() -> None:
    abc = ["a", "b", "c"]
    # c missing: (a,b) +1, (a,c) 0, (b,c) 0 -> 1/3; a memory that loses an event cannot reach 1
    assert kendall_tau(abc, {"a": 0, "b": 1}) == pytest.approx(1 / 3)
    assert kendall_tau(abc, {"b": 0, "a": 1}) == pytest.approx(-1 / 3)
    # a and b tied (same message): (a,b) 0, (a,c) +1, (b,c) +1 -> 2/3
    assert kendall_tau(abc, {"a": 3, "b": 3, "c": 9}) == pytest.approx(2 / 3)
    assert kendall_tau(abc, {}) == 0.0
    assert kendall_tau(abc, {"b": 4}) == 0.0
    assert kendall_tau(abc, {"a": 0, "b": 1, "c": 2, "zzz": -1}) == 1.0   # items outside the truth are ignored
    with pytest.raises(ValueError):
        kendall_tau(["a"], {"a": 0})
    with pytest.raises(ValueError):
        kendall_tau(["a", "a"], {"a": 0})


def test_positions_and_superseded_marks() -> None:
    text = "Maya (3 May 2023): I ran my First Marathon.\nMaya: we adopted a puppy"
    assert positions_in_text(text, ["first marathon", "adopted a puppy", "piano lessons"]) == {
        "first marathon": text.lower().index("first marathon"), "adopted a puppy": text.index("adopted a puppy")}
    assert positions_in_list(["x adopted a puppy", "first marathon", "adopted a puppy again"],
                             ["first marathon", "adopted a puppy"]) == {"adopted a puppy": 0, "first marathon": 1}
    ctx = ("[5 April 2023]\nHana (superseded 11 April 2023): My salary is 44,500.\n"
           "Hana: My new salary is 82,000 a year.\nTom (superseded): I drive a Yaris.")
    assert marked_superseded(ctx, "My salary is 44,500.") is True
    assert marked_superseded(ctx, "My new salary is 82,000 a year.") is False
    assert marked_superseded(ctx, "I drive a Yaris.") is False          # no date with the mark
    assert marked_superseded(ctx, "Never said.") is None
    # a date inside the message itself does not count as the mark's date
    assert marked_superseded("Ana (superseded): Due on March 14.", "Due on March 14.") is False


# ----------------------------------------------------------------------------------------------- bench


def test_quick_bench_reports_every_metric(tmp_path) -> None:
    out = tmp_path / "temporal.json"
    assert bench_main(["temporal", "--quick", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert (tmp_path / "temporal.md").read_text().startswith("## hippo bench temporal")
    data = result["data"]
    assert data["conversations"] == 2 and data["update_probes"] > 0 and data["order_probes"] > 0
    ps = generate(seed=data["seed"], conversations=2)
    assert data["messages"] == sum(len(c.turns) for c in ps.conversations)
    assert set(result["configs"]) == {"default", "temporal_off"}
    keys = {"update_accuracy", "current_in_recall", "search_current_first", "newest_statement_first",
            "stale_marked", "newest_marked", "stale_superseded_by", "stale_superseded_by_correct",
            "newest_superseded_by", "until_accuracy", "order_recall_tau", "order_recall_exact",
            "order_recall_found", "order_timeline_tau", "order_timeline_exact", "order_timeline_found",
            "event_time_in_window", "ingest_s_per_message", "search_p50_s", "recall_p50_s", "open_contradictions",
            "links", "link_precision"}
    for name, metrics in result["configs"].items():
        if metrics is None:   # the engine has no temporal switch: noted, not measured
            assert name == "temporal_off" and result["notes"][name]
            continue
        assert keys <= set(metrics)
        rows = result["probes"][name]["updates"]
        assert len(rows) == data["update_probes"]
        # update accuracy is the conjunction of its two parts, probe by probe
        assert all(r["accurate"] == (r["in_recall"] and r["search"]) for r in rows)
        assert metrics["update_accuracy"] == pytest.approx(sum(r["accurate"] for r in rows) / len(rows))
        assert metrics["update_accuracy"] <= min(metrics["current_in_recall"], metrics["search_current_first"])
        for r in result["probes"][name]["orders"]:
            assert -1.0 <= r["recall_tau"] <= 1.0
            assert r["recall_tau"] < 1.0 or r["recall_found"] == 1.0
        assert metrics["ingest_s_per_message"] > 0
        assert metrics["links"] >= 0 and (metrics["link_precision"] is None or 0 <= metrics["link_precision"] <= 1)
