"""A history imported after newer messages exist (a backfill, an export read newest first): the time-and-truth
annotations look at each earlier-said message's statements once, not at every statement stored before it, and link as
the same history added in order."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

import hippo
from hippo.engine.truth import state as truth_state
from hippo.text import attributes

PEOPLE = [f"Speaker{k}" for k in range(6)]
CITIES = ["Boston", "Denver", "Seattle", "Austin", "Porto", "Lyon", "Oslo", "Lima"]


def _history(n: int) -> list[dict]:
    """``n`` messages a day apart: every fourth states where its speaker lives or changes a budget, the rest chat."""
    rng = random.Random(5)
    start = datetime(2021, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(n):
        who = PEOPLE[i % len(PEOPLE)]
        if i % 8 == 0:
            text = f"I moved to {rng.choice(CITIES)} last week."
        elif i % 8 == 4:
            text = f"I've adjusted my relocation budget to ${rng.randint(10, 99)}00."
        else:
            text = f"We talked about the garden and message {i} for a while."
        out.append({"text": text, "speaker": who, "timestamp": start + timedelta(days=i)})
    return out


def _links(mem: hippo.Memory) -> list[tuple[str, str, str]]:
    return sorted((c["old_text"], c["new_text"], c["kind"]) for c in mem.contradictions(include_updates=True))


class _Counts:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows = self.heads = 0
        said_at, head = truth_state.said_at, attributes.restated_head

        def counted_said_at(idx, rows):
            self.rows += len(rows)
            return said_at(idx, rows)

        def counted_head(st):
            self.heads += 1
            return head(st)

        monkeypatch.setattr(truth_state, "said_at", counted_said_at)
        monkeypatch.setattr(attributes, "restated_head", counted_head)


@pytest.mark.parametrize("order", ["reverse", "shuffled"])
def test_a_backfill_reads_each_statement_a_bounded_number_of_times(monkeypatch, order):
    n = 480  # 120 statements, 60 of them updates
    items = _history(n)
    ref = hippo.Memory()
    ref.add_many(items)
    want = _links(ref)
    assert len(want) > 40
    todo = items[::-1] if order == "reverse" else random.Random(3).sample(items, n)
    counts = _Counts(monkeypatch)
    mem = hippo.Memory()
    mem.add_many(todo)
    assert _links(mem) == want
    statements = n // 4
    # each statement's time is read a few times (its own check, the links made again once after the batch), never
    # once for every statement stored before it (about statements**2 / 2 = 7,200 rows, and as many head words)
    assert counts.rows <= 4 * n
    assert counts.heads <= 4 * statements


def test_a_backfill_in_batches_links_as_in_order(tmp_path):
    items = _history(400)
    ref = hippo.Memory()
    ref.add_many(items)
    want = _links(ref)
    path = str(tmp_path / "m.db")
    mem = hippo.Memory(path)
    backwards = items[::-1]
    for k in range(0, len(backwards), 50):  # the newest first, each batch in order
        mem.add_many(backwards[k:k + 50][::-1])
    assert _links(mem) == want
    mem.close()
    with hippo.Memory(path) as again:
        assert _links(again) == want


def _said(rng: random.Random, who: str) -> str:
    city, city2 = rng.sample(CITIES, 2)
    firm = rng.choice(["Globex", "Initech", "Acme", "Umbrella"])
    return rng.choice([
        f"I moved to {city}.", f"I live in {city} now.", f"I work at {firm}.", f"I quit {firm}.",
        f"I moved to {city} and I work at {firm} now.", f"I am not in {city2} anymore.",
        f"My favorite food is {rng.choice(['pizza', 'ramen', 'tacos'])}.",
        f"{rng.choice(['Sushi', 'Pho'])} is my favorite now.",
        f"My favorite band is {rng.choice(['Muse', 'Blur'])}.", f"My dog is called {rng.choice(['Rex', 'Bo'])}.",
        f"The Apollo deadline moved to June {rng.randint(1, 28)}.",
        f"I've budgeted ${rng.randint(2, 9)},000 for relocation expenses.",
        f"I've adjusted my relocation budget to ${rng.randint(2, 9)},500.",
        f"We had lunch with {who}'s cousin, nothing new.",
    ])


def _truth_state(truth) -> tuple:
    return (list(zip(truth.links, truth.link_rows)), truth.superseded_by.view.tolist(),
            dict(sorted(truth.update_of.items())), {r: list(v) for r, v in sorted(truth.stated.items())},
            {r: list(v) for r, v in sorted(truth.facts_of.items())},
            {k: list(v) for k, v in sorted(truth.facts.items())})


@pytest.mark.parametrize("seed", range(6))
def test_relinking_the_groups_a_batch_touched_gives_the_links_of_relinking_everything(monkeypatch, seed):
    """The same batches, out of order, into two memories: one relinks only the statements the batch can change
    (the default), the reference relinks every statement each time. After every batch the links, marks, facts and
    the links' order are the same."""
    from hippo.engine.truth.state import Truth

    rng = random.Random(seed)
    start = datetime(2022, 1, 1, tzinfo=timezone.utc)
    people = PEOPLE[: 3 + seed % 4]
    items = [{"text": _said(rng, who := rng.choice(people)), "speaker": who,
              "timestamp": start + timedelta(hours=rng.randint(0, 2000))} for _ in range(300)]
    cuts = sorted(rng.sample(range(1, 300), 40))
    batches = [items[a:b] for a, b in zip([0, *cuts], [*cuts, 300])]
    mem, ref = hippo.Memory(), hippo.Memory()
    part = Truth._relink_part
    partial_calls = []

    def counted(self, ids, idx):
        done = part(self, ids, idx)
        partial_calls.append(done)
        return done

    for batch in batches:
        monkeypatch.setattr(Truth, "_relink_part", counted)
        mem.add_many(batch)
        monkeypatch.setattr(Truth, "_relink_part", lambda self, ids, idx: False)  # every statement, every time
        ref.add_many(batch)
        a, b = mem.engine.state(), ref.engine.state()
        a.truth.sync(a.index)
        b.truth.sync(b.index)
        assert _truth_state(a.truth) == _truth_state(b.truth)
    assert True in partial_calls  # some batch was relinked in part
    monkeypatch.setattr(Truth, "_relink_part", part)
    assert [(c["old_id"], c["new_id"]) for c in mem.contradictions(include_updates=True)] == \
        [(c["old_id"], c["new_id"]) for c in ref.contradictions(include_updates=True)]
