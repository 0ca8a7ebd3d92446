"""hippo.base.lru.LRU against a plain list model of least-recently-used eviction under two bounds."""

from __future__ import annotations

import random

import pytest

from hippo.base.lru import LRU


class Model:
    """The definition: entries in order of use; after a put, the least recently used are dropped while more than
    ``entries`` are held or their costs add up to more than ``budget``."""

    def __init__(self, entries, budget, cost):
        self.entries, self.budget, self.cost, self.items = entries, budget, cost, []

    def _find(self, key):
        return next((k for k, (kk, _) in enumerate(self.items) if kk == key), None)

    def get(self, key, touch):
        k = self._find(key)
        if k is None:
            return None
        item = self.items[k]
        if touch:
            del self.items[k]
            self.items.append(item)
        return item[1]

    def pop(self, key):
        k = self._find(key)
        return None if k is None else self.items.pop(k)[1]

    def put(self, key, value):
        self.pop(key)
        self.items.append((key, value))
        while self.items and ((self.entries is not None and len(self.items) > self.entries) or (
                self.budget is not None and sum(self.cost(v) for _, v in self.items) > self.budget)):
            self.items.pop(0)


@pytest.mark.parametrize("entries,budget", [(5, None), (None, 40), (6, 30), (None, None)])
@pytest.mark.parametrize("seed", range(5))
def test_lru_matches_the_list_model(entries, budget, seed):
    rng = random.Random(seed)
    cost = len
    lru, model = LRU(entries, budget, cost if budget is not None else None), Model(entries, budget, cost)
    for _ in range(2000):
        key = rng.randrange(12)
        op = rng.random()
        if op < 0.4:
            value = "x" * rng.randrange(0, 15)
            lru.put(key, value)
            model.put(key, value)
        elif op < 0.6:
            assert lru.get(key) == model.get(key, True)
        elif op < 0.75:
            assert lru.peek(key) == model.get(key, False)
        elif op < 0.85:
            if key in lru:
                lru.touch(key)
                model.get(key, True)
        elif op < 0.97:
            assert lru.pop(key) == model.pop(key)
        else:
            lru.clear()
            model.items.clear()
        assert lru.values() == [v for _, v in model.items]
        assert len(lru) == len(model.items)
        if budget is not None:
            assert lru.held == sum(map(len, lru.values())) <= budget


def test_a_budget_needs_a_cost():
    with pytest.raises(ValueError):
        LRU(None, 10)
