"""The LlamaIndex example of docs/adapters.md (and README.md once merged there), run verbatim."""

from __future__ import annotations

import pytest

from tests.readme_examples import examples, run


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("where, code", examples("llamaindex"))
def test_llamaindex_example(where, code, capsys):
    ns = run(code, where)
    out = capsys.readouterr().out
    # the context postprocessor widened the salmon hit to the two messages before it
    assert "named her Biscuit" in out and "What does Biscuit like to eat?" in out and "salmon pate" in out
    # the memory block stored the flushed turn and recalled it for the question
    assert "Friday at 10" in out.split("salmon pate", 1)[1]
    assert any(m.session_id == "mia" for m in ns["memory"].list())
    ns["memory"].close()
