"""``Memory.recall(..., exclude=...)``: messages the caller already shows its model are left out of the context.

They are ranked as any other and only skipped where the context is filled. References: the same recall without
``exclude`` (nothing excluded gives the same bytes), and the full packing order of the recall without ``exclude``,
captured from the engine, with the excluded messages removed and packed again into the same budget."""

from __future__ import annotations

import asyncio
import random
import re
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.engine import evidence
from hippo.engine import pack as pack_mod
from hippo.engine import topdown
from hippo.text.vocab import text_stems, vocab

WORDS = ("trip japan kyoto sister vegetarian budget flight osaka train hotel station tokyo food pack april passport "
         "shellfish cello lesson teacher lisbon commute tram river beagle pixel slippers novel lighthouse tap kitchen "
         "garden tomato bike marathon knee doctor dentist appointment monday friday coffee tea bakery bread recipe "
         "soup camera photo museum painting guitar concert ticket rent apartment landlord boss meeting project").split()
TEMPLATES = ["I {v} the {a} and the {b} yesterday.", "My {a} is near the {b}.", "Did you {v} the {a}?",
             "We talked about {a}, {b} and {c} for hours.", "Always mention the {a} when I ask about {b}.",
             "I prefer {a} over {b} because of the {c}.", "ok", "The {a} was great, thanks!",
             "Remind me about the {a} on {b} please.", "{a} {b} {c} {a}"]
VERBS = ["saw", "fixed", "booked", "bought", "loved", "cancelled", "visited"]
FORMS = ["What did I say about the {a}?", "When is the {a}?", "{a} {b}", "Tell me about my {a} and {b}.",
         "What do I prefer for {a}?", "Did I {v} the {a} last week?", "What happened in April with the {a}?"]
T0 = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)


def conversation(seed: int = 7, n: int = 400) -> list[dict]:
    """Sessions of 25 turns a few days apart; the assistant's turns often long; copies ("ok"), standing
    instructions and stated preferences among them."""
    rng = random.Random(seed)
    items, t = [], T0
    for i in range(n):
        if i % 25 == 0:
            t += timedelta(days=rng.randint(1, 9))
        t += timedelta(minutes=rng.randint(1, 30))
        role = "user" if i % 2 == 0 else "assistant"
        text = rng.choice(TEMPLATES).format(v=rng.choice(VERBS), a=rng.choice(WORDS), b=rng.choice(WORDS),
                                            c=rng.choice(WORDS))
        if role == "assistant" and rng.random() < 0.5:
            text += " " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
        items.append({"text": text, "role": role, "speaker": "Ann" if role == "user" else "assistant",
                      "session_id": f"s{i // 25}", "timestamp": t})
    return items


def questions(seed: int = 11, n: int = 300) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    return [(rng.choice(FORMS).format(a=rng.choice(WORDS), b=rng.choice(WORDS), v=rng.choice(VERBS)),
             rng.choice([40, 120, 300, 800])) for _ in range(n)]


def _same(a, b) -> None:
    assert (a.text, [m.id for m in a.messages], a.tokens, a.repeats, a.units) == \
        (b.text, [m.id for m in b.messages], b.tokens, b.repeats, b.units)


@pytest.mark.parametrize("config", [None, {"hierarchy": {"recall": "flat"}, "decay": {"enabled": False}},
                                    {"hierarchy": {"recall": "units"}}, {"hierarchy": {"recall": "stage1"}},
                                    {"hierarchy": {"recall": "stage2"}}, {"hierarchy": {"recall": "full"}}])
def test_nothing_excluded_is_the_recall_without_exclude(config):
    # two stores with the same history and the same calls: recall reinforces what it returned, so each store sees
    # the same reinforcements as long as the answers agree
    plain, other = Memory(None, config=config), Memory(None, config=config)
    try:
        for mem in (plain, other):
            mem.add_many(conversation())
            if config is not None:  # the default store is recalled with its messages unconsolidated
                mem.consolidate()
        absent = [10**9, 10**9 + 1]
        for k, (q, budget) in enumerate(questions()):
            want = plain.recall(q, budget_tokens=budget)
            got = other.recall(q, budget_tokens=budget, exclude=[] if k % 2 else absent)
            _same(want, got)
    finally:
        plain.close()
        other.close()


@pytest.fixture
def store():
    mem = Memory(None, config={"decay": {"reinforce_on_recall": False}})  # every recall sees the same strengths
    mem.add_many(conversation())
    yield mem
    mem.close()


def _reference(mem: Memory, monkeypatch, query: str, budget: int, shown: set[int]):
    """The recall of ``query`` without ``exclude`` in every respect but two: where the engine keeps the candidates
    that can reach the context (in the order of their value per estimated token, until their estimated cost reaches
    three budgets, and at least 48, a copy of a text kept before it taking no reach), the messages of ``shown``
    are passed over; and where a channel lists one copy of each text, a text whose best copy is ``shown`` lists its
    best other copy too. Returns that recall's context packed
    with the ``shown`` messages removed, a repeated line counting the copies of its text in its voice that are not
    ``shown``, from the stored messages: (text, ids, tokens)."""
    seen = {}
    said: dict[tuple, list[tuple[int, float]]] = {}
    voice: dict[int, tuple] = {}
    for item in mem.list():
        said.setdefault((item.text, item.role, item.speaker), []).append((item.id, item.timestamp.timestamp()))
        voice[item.id] = (item.text, item.role, item.speaker)

    def unshown_copies(p):
        return [ts for k, ts in said[(p.text, p.role, p.speaker)] if k != p.key and k not in shown]
    real_shortlist, real_pack = evidence.shortlist, pack_mod.pack

    def shortlist(state, rows, scores, budget, excluded=None):
        exponent = real_shortlist(state, rows, scores, budget)[2]
        costs = state.index.doc_lengths()[rows] + 4.0
        prior = evidence.prior_of(state, rows)
        keep, reach, kept, texts = [], 0.0, 0, set()
        for j in evidence.packing_order(scores, costs, prior, exponent).tolist():
            if kept >= 48 and reach >= 3 * budget:
                break
            key = int(state.index.ids.view[rows[j]])
            if key in shown:
                continue
            keep.append(j)
            if voice[key] in texts:
                continue  # a copy of a text kept before it: packed as that text's line, it takes no reach
            texts.add(voice[key])
            kept += 1
            reach += float(costs[j])
        keep.sort()
        return rows[keep], scores[keep], exponent

    def capture(ranked, budget, load_texts, copies=None, newest=None):  # its texts hold no machine outputs
        seen["order"] = [p for p in ranked if p.key not in shown]
        return real_pack(seen["order"], budget, load_texts, unshown_copies if copies is not None else None)

    real_rank = topdown.rank

    def rank(state, ask, limit, **kw):
        rows = sorted(state.index.row_of[k] for k in shown if k in state.index.row_of)
        kw["left_out"] = np.asarray(rows, dtype=np.int64) if rows else None
        return real_rank(state, ask, limit, **kw)

    with monkeypatch.context() as m:
        m.setattr(topdown, "rank", rank)
        m.setattr(evidence, "shortlist", shortlist)
        m.setattr(pack_mod, "pack", capture)
        out = mem.recall(query, budget_tokens=budget)
    assert not shown & {p.key for p in seen["order"]}
    return out.text, sorted(m.id for m in out.messages), out.tokens


def test_excluded_messages_leave_the_context_and_the_budget_refills(store, monkeypatch):
    rng = random.Random(5)
    ids = [m.id for m in store.list()]
    refilled = 0
    for q, budget in questions(n=150):
        plain = store.recall(q, budget_tokens=budget)
        recalled = [m.id for m in plain.messages]
        assert _reference(store, monkeypatch, q, budget, set())[0] == plain.text  # the reference is recall's own
        # what the model already has: some or all of what was recalled, and a few other messages
        shown = set(rng.sample(recalled, rng.randint(0, len(recalled)))) | set(rng.sample(ids, 5))
        got = store.recall(q, budget_tokens=budget, exclude=shown)
        assert not shown & {m.id for m in got.messages}
        assert (got.text, sorted(m.id for m in got.messages), got.tokens) == \
            _reference(store, monkeypatch, q, budget, shown)
        assert got.tokens <= budget
        refilled += bool({m.id for m in got.messages} - set(recalled))
    assert refilled > 50  # the freed budget went to messages the recall without exclude had no room for


def test_exclusion_with_a_filter_and_in_every_recall_mode():
    for config in (None, {"hierarchy": {"recall": "flat"}, "decay": {"enabled": False}},
                   {"hierarchy": {"recall": "full"}}, {"hierarchy": {"recall": "units"}}):
        mem = Memory(None, config=config)
        try:
            mem.add_many(conversation())
            mem.consolidate()
            for q, budget in questions(n=40):
                for flt in (None, {"role": "user"}):
                    before = mem.recall(q, budget_tokens=budget, filter=flt)
                    shown = {m.id for m in before.messages}
                    after = mem.recall(q, budget_tokens=budget, filter=flt, exclude=shown)
                    assert not shown & {m.id for m in after.messages}, (config, q)
                    assert after.tokens <= budget
                    if flt is not None:
                        assert all(m.role == "user" for m in after.messages)
        finally:
            mem.close()


def test_exclude_is_validated_by_name(store):
    for bad in ("12", b"1", 1.5, [1, "x"], [-1], [True], {"id": 1}, object()):
        with pytest.raises(InvalidInput, match="exclude"):
            store.recall("trip", exclude=bad)
    with pytest.raises(InvalidInput, match="exclude"):
        asyncio.run(store.arecall("trip", exclude="12"))
    first = store.recall("trip", budget_tokens=200).messages[0].id
    assert first not in {m.id for m in store.recall("trip", budget_tokens=200, exclude=first).messages}
    assert first not in {m.id for m in asyncio.run(store.arecall("trip", budget_tokens=200, exclude=(first,))).messages}


@pytest.mark.parametrize("config", [None, {"hierarchy": {"recall": "flat"}, "decay": {"enabled": False}},
                                    {"hierarchy": {"recall": "full"}}, {"hierarchy": {"recall": "stage1"}}])
def test_a_repeated_line_counts_only_the_copies_not_excluded(config):
    # one text said on six days; the count and the span of days a line carries are of the copies left in
    mem = Memory(None, config=config)
    try:
        items = []
        for d in range(6):
            items.append({"text": "The door code is 4471", "speaker": "Ann", "session_id": f"s{d}",
                          "timestamp": T0 + timedelta(days=d)})
            items.append({"text": f"Noted, the weather on day {d} was fine", "role": "assistant",
                          "session_id": f"s{d}", "timestamp": T0 + timedelta(days=d, minutes=1)})
        copies = [m.id for m in mem.add_many(items) if m.text.startswith("The door")]
        mem.consolidate()
        line = "Ann ({}): The door code is 4471"
        whole = mem.recall("door code", budget_tokens=200)
        assert line.format("6 times, 6 January 2025 to 11 January 2025") in whole.text.splitlines()
        got = mem.recall("door code", budget_tokens=200, exclude=copies[:2])
        assert line.format("4 times, 8 January 2025 to 11 January 2025") in got.text.splitlines()
        (shown,) = [m.id for m in got.messages if m.id in copies]
        assert got.repeats == {shown: 4} and shown in copies[2:]
        got = mem.recall("door code", budget_tokens=200, exclude=[copies[0], *copies[2:]])
        assert "Ann: The door code is 4471" in got.text.splitlines() and not got.repeats
        assert [m.id for m in got.messages if m.id in copies] == [copies[1]]
    finally:
        mem.close()


def _without(units, shown):
    """``units`` with the messages of ``shown`` removed by hand: a unit left with none is dropped."""
    out = []
    for u in units:
        kept = [m for m in u["message_ids"] if m not in shown]
        if kept:
            out.append(dict(u, message_ids=kept))
    return out


def _described(units):
    return [{k: v for k, v in u.items() if k not in ("event_start", "event_end")} for u in units]


def _shows_only(unit, texts, shown) -> None:
    """A unit's text is made of messages it lists and ``shown`` does not hold: a semantic is a sentence of its first
    message, a theme its terms (stems of its messages' words) and the sentence of one of them."""
    kept = [texts[m] for m in unit["message_ids"] if m not in shown]
    stems = {vocab().stems[k] for t in kept for k in text_stems(t).tolist()}
    if unit["level"] == "semantic":
        sentence = unit["text"].split(": ", 1)[1]
        assert unit["message_ids"][0] not in shown and sentence in texts[unit["message_ids"][0]], unit
        return
    terms, _, sentence = unit["text"].partition(" — ")
    if not sentence:
        terms, sentence = "", terms
    assert any(sentence.split(": ", 1)[1] in t for t in kept), unit
    for term in filter(None, terms.split(", ")):
        assert term in stems, (term, unit)


@pytest.mark.parametrize("mode", ["units", "stage1", "stage2", "full"])
def test_units_do_not_list_or_show_excluded_messages(mode):
    # the units guiding a top-down recall never list an excluded message, and their texts show none: a semantic
    # quoting one is no candidate, a theme is summed up by its other semantics
    mem = Memory(None, config={"hierarchy": {"recall": mode}, "decay": {"reinforce_on_recall": False}})
    try:
        mem.add_many(conversation())
        mem.consolidate()
        texts = {m.id: m.text for m in mem.list()}
        rng = random.Random(3)
        listed_any = 0
        for q, budget in questions(n=60):
            for flt in (None, {"role": "user"}):
                plain = mem.recall(q, budget_tokens=budget, filter=flt)
                listed = sorted({m for u in plain.units for m in u["message_ids"]})
                if not listed:
                    continue
                for u in plain.units:
                    _shows_only(u, texts, set())
                # what the model already has: the recalled messages, a unit's messages whole, a share of the rest
                shown = {m.id for m in plain.messages} | set(rng.choice(plain.units)["message_ids"])
                shown |= set(rng.sample(listed, len(listed) // 3))
                got = mem.recall(q, budget_tokens=budget, filter=flt, exclude=shown)
                assert not shown & {m.id for m in got.messages}
                for u in got.units:
                    assert u["message_ids"] and not shown & set(u["message_ids"]), (q, u)
                    _shows_only(u, texts, shown)
                listed_any += bool(got.units)
        assert listed_any > 30
    finally:
        mem.close()


def test_a_theme_is_summed_up_without_the_excluded_messages():
    # one message of a theme about kayaks is excluded: the theme's summary (its terms and its central sentence)
    # read the theme's other semantics, and no semantic quoting the excluded message is listed
    items = []
    t = T0
    fill = "weather lunch traffic meeting email printer coffee parking laundry groceries podcast movie".split()
    rng = random.Random(2)
    for s in range(12):
        t += timedelta(days=2)
        for i in range(12):
            t += timedelta(minutes=5)
            a, b, c = rng.sample(fill, 3)
            text = f"The {a} and the {b} were fine, then {c}."
            if s == 0 and i == 5:
                text = "I moored the kayak at the marina near the old pier."
            elif s in (3, 6, 9) and i == 7:
                text = f"My kayak paddle broke on trip {s}."
            items.append({"text": text, "speaker": "Ann", "session_id": f"s{s}", "timestamp": t})
    for mode in ("stage2", "full", "evidence"):
        mem = Memory(None, config={"hierarchy": {"recall": mode}, "decay": {"reinforce_on_recall": False}})
        try:
            ids = [m.id for m in mem.add_many(items)]
            mem.consolidate()
            texts = {m.id: m.text for m in mem.list()}
            for budget in (60, 300):
                got = mem.recall("kayak marina pier", budget_tokens=budget, exclude=[ids[5]])
                assert got.units and ids[5] not in {m.id for m in got.messages}
                excluded_words = {"mo", "moor", "mar", "marina", "near", "old", "pier"}
                for u in got.units:
                    assert not excluded_words & set(re.findall(r"\w+", u["text"].lower())), u
                    _shows_only(u, texts, {ids[5]})
        finally:
            mem.close()


def test_units_of_an_evidence_recall_do_not_list_excluded_messages():
    mem = Memory(None, config={"decay": {"reinforce_on_recall": False}})
    try:
        mem.add_many(conversation())
        mem.consolidate()
        listed_any = 0
        for q, budget in questions(n=60):
            plain = mem.recall(q, budget_tokens=budget)
            shown = {m for u in plain.units for m in u["message_ids"][::2]}
            got = mem.recall(q, budget_tokens=budget, exclude=shown)
            assert not shown & {m.id for m in got.messages}
            for u in got.units:
                assert u["message_ids"] and not shown & set(u["message_ids"]), (q, u)
            listed_any += bool(got.units)
        assert listed_any
    finally:
        mem.close()


def test_a_zero_dimensional_array_is_one_id(store):
    # numpy's scalar arrays (what indexing with () or summing an id column gives) are iterable in type only
    first = store.recall("trip", budget_tokens=200).messages[0].id
    want = store.recall("trip", budget_tokens=200, exclude=first)
    got = store.recall("trip", budget_tokens=200, exclude=np.array(first))
    assert first not in {m.id for m in got.messages} and _same(got, want) is None
    for bad in (np.array(1.0), np.array(True), np.array("1")):
        with pytest.raises(InvalidInput, match="exclude"):
            store.recall("trip", exclude=bad)
    assert store.delete(np.array(first)) == 1
    assert first not in {m.id for m in store.list()}


@pytest.mark.parametrize("mode", ["units", "stage1"])
def test_without_stage_two_exclusion_is_the_order_without_the_excluded_messages(mode, monkeypatch):
    # the episodes of the selected units, then the flat ranking: the messages are packed in that order, the
    # excluded ones passed over, repeated lines counting the copies not excluded
    mem = Memory(None, config={"hierarchy": {"recall": mode}, "decay": {"reinforce_on_recall": False}})
    try:
        mem.add_many(conversation())
        mem.consolidate()
        rng = random.Random(9)
        ids = [m.id for m in mem.list()]
        for q, budget in questions(n=60):
            recalled = [m.id for m in mem.recall(q, budget_tokens=budget).messages]
            shown = set(rng.sample(recalled, rng.randint(0, len(recalled)))) | set(rng.sample(ids, 5))
            got = mem.recall(q, budget_tokens=budget, exclude=shown)
            assert (got.text, sorted(m.id for m in got.messages), got.tokens) == \
                _reference(mem, monkeypatch, q, budget, shown)
    finally:
        mem.close()


@pytest.mark.parametrize("mode", ["stage2", "full"])
def test_stage_two_is_guided_by_units_of_what_the_context_can_include(mode):
    # Stage II spends the budget on what its semantics support: the semantics guiding it are chosen through the
    # messages the context can include, so excluding messages frees their slots for others (stage1_semantics of
    # them whenever the recall without exclude had as many) instead of leaving them to units of excluded messages
    mem = Memory(None, config={"hierarchy": {"recall": mode}, "decay": {"reinforce_on_recall": False}})
    slots = mem.config.hierarchy.stage1_semantics
    try:
        mem.add_many(conversation())
        mem.consolidate()
        texts = {m.id: m.text for m in mem.list()}
        full = 0
        for q, budget in questions(n=60):
            plain = mem.recall(q, budget_tokens=budget)
            sems = [u for u in plain.units if u["level"] == "semantic"]
            if len(sems) < slots:
                continue
            full += 1
            shown = {m.id for m in plain.messages} | {u["message_ids"][0] for u in sems[: slots // 2]}
            got = mem.recall(q, budget_tokens=budget, exclude=shown)
            listed = [u for u in got.units if u["level"] == "semantic"]
            assert len(listed) == slots, (q, len(listed))
            for u in got.units:
                _shows_only(u, texts, shown)
        assert full > 30
    finally:
        mem.close()
