"""``hippo bench context --quick``: the scripted 42-turn agent session with a scripted model, through LangChain's
create_agent with and without HippoContextMiddleware. Asserts what the session must show; timings are only
reported by the bench."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langchain.agents")

from hippo_bench import BENCHMARKS, main  # noqa: E402
from hippo_bench.context import evaluate, make_session, message_tokens  # noqa: E402


@pytest.fixture(scope="module")
def quick():
    session = make_session(0, 42)
    return session, evaluate(session)


def test_session_is_deterministic_and_shaped_as_specified():
    a, b = make_session(0, 42), make_session(0, 42)
    assert [(t.text, t.output, t.value) for t in a] == [(t.text, t.output, t.value) for t in b]
    assert make_session(1, 42)[0].output != a[0].output
    questions = [t for t in a if t.kind == "question"]
    assert len(a) == 42 and len(questions) == 10
    for q in questions:  # every needed value sits in the output of an earlier task turn
        src = a[q.source_turn]
        assert src.kind == "task" and src.index < q.index and q.value in src.output
    assert {t.tool for t in a if t.kind == "task"} == {"get_orders", "browser_snapshot", "read_logs", "read_file",
                                                      "run_tests"}


def test_values_reach_the_model_with_far_fewer_tokens(quick):
    session, res = quick
    assert res["baseline_reachable_share"] == 1.0
    assert res["reachable_share"] == 1.0
    assert res["direct_share"] >= 0.9
    assert res["expand_share"] == pytest.approx(1.0 - res["direct_share"])
    assert res["deep_questions"] >= 1
    assert res["tokens_sent"]["ratio"] >= 5.0
    base, hippo_calls = res["tokens_per_call"]["baseline"], res["tokens_per_call"]["hippo"]
    assert res["tokens_sent"]["baseline"] == sum(base) and res["tokens_sent"]["hippo"] == sum(hippo_calls)
    assert base == sorted(base)  # without hippo the context only grows
    # every task's output is sent verbatim at least once without hippo: the last call holds them all
    assert base[-1] >= sum(res["output_tokens"])
    assert max(hippo_calls) < base[-1] / 5
    assert res["entries"] == res["tasks"] - 1  # all but the last task's output were compacted
    assert res["compression"]["min"] > 1.0


def test_message_tokens_counts_text_calls_and_framing():
    from langchain_core.messages import AIMessage, HumanMessage

    from hippo.text.tokenizer import count_tokens

    cache: dict = {}
    assert message_tokens(HumanMessage("hello world"), cache) == count_tokens("hello world") + 4
    call = AIMessage("", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "c"}])
    calls = json.dumps(call.tool_calls, sort_keys=True)
    assert message_tokens(call, cache) == count_tokens(" ") + count_tokens(calls) + 4


def test_registered_and_runs_from_the_cli(tmp_path, capsys):
    assert "context" in BENCHMARKS
    out = tmp_path / "context.json"
    code = main(["context", "--quick", "--turns", "14", "--overhead-entries", "4", "--overhead-turns", "2",
                 "--out", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["benchmark"] == "context" and data["turns"] == 14 and data["overhead"]["entries"] == 4
    assert set(data["targets"]) == {"tokens_5x_lower", "all_values_reachable", "90pct_without_expand",
                                    "overhead_under_5ms"}
    assert "hippo bench context" in capsys.readouterr().out
