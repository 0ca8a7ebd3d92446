"""Fixtures for the LangChain / LangGraph adapter tests: in-memory hippo stores and a recording fake model."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage

import hippo
from tests.conversation import CONVERSATION as ALL
from tests.conversation import T0

CONVERSATION = ALL[:10]


def seed(memory: hippo.Memory) -> list[hippo.MemoryItem]:
    """Add the sample conversation: one message per minute, sessions s1..s3."""
    return memory.add_many(
        {"text": text, "speaker": who, "role": "user", "session_id": sid,
         "timestamp": T0 + timedelta(minutes=i), "metadata": {"turn": i}}
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


class RecordingChatModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` that accepts tools and records the messages of every call."""

    calls: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> RecordingChatModel:
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def recording_model(responses: list) -> RecordingChatModel:
    return RecordingChatModel(messages=iter(responses), calls=[])
