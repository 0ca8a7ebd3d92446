"""The LangChain and LangGraph examples of docs/adapters.md (and README.md once merged there), run verbatim."""

from __future__ import annotations

import pytest
from langchain_core.messages import SystemMessage

from tests.readme_examples import examples, run


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples create their SQLite file in the working directory


@pytest.mark.parametrize("where, code", examples("langchain"))
def test_langchain_example(where, code, capsys):
    ns = run(code, where)
    lines = capsys.readouterr().out.splitlines()
    assert "1 ann I live in Lisbon now, I moved there last spring." in lines
    memory = ns["memory"]
    assert [m.session_id for m in memory.using("user.ann").list()] == ["1", "1", "2", "2"]
    memory.close()


@pytest.mark.parametrize("where, code", examples("langchain"))
def test_langchain_example_injects_memory(where, code, monkeypatch):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    seen = []
    original = GenericFakeChatModel._generate

    def spy(self, messages, *args, **kwargs):
        seen.append([m for m in messages if isinstance(m, SystemMessage)])
        return original(self, messages, *args, **kwargs)

    monkeypatch.setattr(GenericFakeChatModel, "_generate", spy)
    ns = run(code, where)
    assert len(seen) == 2 and seen[0] == [] and "Lisbon" in seen[1][0].text
    ns["memory"].close()


@pytest.mark.parametrize("where, code", examples("langgraph"))
def test_langgraph_example(where, code, capsys):
    ns = run(code, where)
    assert capsys.readouterr().out.strip() == "['My passport expires in May.']"
    assert ns["store"].list_namespaces() == [("notes", "ann")]
    ns["store"].memory.close()


@pytest.mark.parametrize("where, code", examples("message-time"))
def test_message_time_example(where, code, capsys):
    run(code, where)
    assert capsys.readouterr().out.strip() == "2023-05-08T23:30:00-05:00 2023-05-07"


@pytest.mark.parametrize("where, code", examples("time-zone"))
def test_time_zone_example(where, code, capsys):
    run(code, where)
    assert capsys.readouterr().out.strip() == "2024-03-05T21:00:00-05:00"
