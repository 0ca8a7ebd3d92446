"""Fixtures for the LlamaIndex adapter tests: in-memory hippo stores with a small sample conversation."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import hippo

T0 = datetime(2024, 5, 6, 18, 30, tzinfo=timezone.utc)

CONVERSATION = [
    ("s1", "Mia", "We adopted a tabby kitten and named her Biscuit."),
    ("s1", "Leo", "Cute! What does Biscuit like to eat?"),
    ("s1", "Mia", "Biscuit only eats salmon pate, nothing else."),
    ("s1", "Leo", "My brother is training for the Berlin marathon."),
    ("s2", "Mia", "I repainted the kitchen a pale sage green."),
    ("s2", "Leo", "Sage green sounds calm. Did you paint the cabinets too?"),
    ("s2", "Mia", "No, the cabinets stay walnut brown."),
    ("s2", "Leo", "The marathon is in late September."),
]


def seed(memory: hippo.Memory) -> list[hippo.MemoryItem]:
    return memory.add_many(
        {"text": text, "speaker": who, "session_id": sid, "timestamp": T0 + timedelta(minutes=i),
         "metadata": {"turn": i}}
        for i, (sid, who, text) in enumerate(CONVERSATION)
    )


@pytest.fixture
def memory():
    mem = hippo.Memory(None)
    yield mem
    mem.close()


@pytest.fixture
def seeded(memory):
    seed(memory)
    return memory
