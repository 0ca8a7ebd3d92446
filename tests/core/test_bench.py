"""Smoke tests of ``hippo bench`` and unit tests of the LoCoMo evaluation logic.

The LoCoMo tests use a tiny hand-written conversation in the LoCoMo JSON schema, with the expected scores
computed by hand; they need neither the real data set nor the engine.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from types import SimpleNamespace

import pytest
from hippo_bench import locomo
from hippo_bench._common import cl100k_encoder, count_tokens

CAPTION = "a photo of snowy mountains"
TOY = [
    {
        "sample_id": "toy-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat named Pixel."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely! I went hiking in the Alps.",
                 "blip_caption": CAPTION},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "My sister lives in Lisbon."},
            ],
            "session_2_date_time": "9:05 am on 10 June, 2023",
            "session_2": [
                {"speaker": "Bob", "dia_id": "D2:1", "text": "I started learning the cello last week."},
                {"speaker": "Ann", "dia_id": "D2:2", "text": "Pixel knocked over my coffee this morning."},
            ],
            # A date key without a session (LoCoMo has these): must be ignored.
            "session_3_date_time": "10:00 am on 1 July, 2023",
        },
        "qa": [
            {"question": "What is the name of Ann's cat?", "answer": "Pixel", "evidence": ["D1:1", "D2:2"],
             "category": 4},
            {"question": "Where did Bob go hiking?", "answer": "the Alps", "evidence": ["D:1:2"], "category": 1},
            {"question": "When did Bob start the cello?", "answer": 2023, "evidence": ["D2:01; D9:9"],
             "category": 2},
            {"question": "Where does Ann's sister live?", "answer": "Lisbon", "evidence": ["D7:3", "D"],
             "category": 3},
            {"question": "What did Bob adopt?", "adversarial_answer": "a cat", "evidence": ["D1:1"],
             "category": 5},
        ],
    }
]


@pytest.fixture()
def toy(tmp_path):
    path = tmp_path / "toy_locomo.json"
    path.write_text(json.dumps(TOY), encoding="utf-8")
    return locomo.load_locomo(path)


# --------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("raw", "want"),
    [("D1:3", "D1:3"), ("D:11:26", "D11:26"), ("D30:05", "D30:5"), (" D2:1 ", "D2:1"), ("D", None),
     ("", None), ("D8:6; D9:17", None), ("S1:2", None)],
)
def test_normalize_evidence_id(raw, want):
    assert locomo.normalize_evidence_id(raw) == want


def test_split_evidence():
    assert locomo.split_evidence(["D8:6; D9:17", "D:11:26", "D", "D30:05", "D8:6"]) == [
        "D8:6", "D9:17", "D11:26", "D30:5"]
    assert locomo.split_evidence([]) == []
    assert locomo.split_evidence(["D1:2 D1:3"]) == ["D1:2", "D1:3"]


def test_parse_locomo_datetime():
    assert locomo.parse_locomo_datetime("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert locomo.parse_locomo_datetime("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9)
    assert locomo.parse_locomo_datetime("12:30 pm on 1 Jan, 2022") == datetime(2022, 1, 1, 12, 30)
    with pytest.raises(ValueError):
        locomo.parse_locomo_datetime("yesterday")


def test_load_toy(toy):
    (conv,) = toy
    assert conv.sample_id == "toy-1"
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert conv.by_id["D1:2"].text == f"Lovely! I went hiking in the Alps. [image: {CAPTION}]"
    assert [t.timestamp for t in conv.turns[:3]] == [
        datetime(2023, 5, 8, 13, 56, 0), datetime(2023, 5, 8, 13, 56, 1), datetime(2023, 5, 8, 13, 56, 2)]
    assert conv.turns[3].timestamp == datetime(2023, 6, 10, 9, 5)
    # cat 3 question has no valid evidence -> skipped; cat 5 not scored; "D9:9" names no turn -> dropped.
    assert [q.category for q in conv.qa] == [4, 1, 2]
    assert conv.skipped_no_evidence == 1 and conv.adversarial == 1
    assert conv.qa[1].evidence == ("D1:2",)
    assert conv.qa[2].evidence == ("D2:1",) and conv.qa[2].dropped_evidence == ("D9:9",)
    items = locomo.conversation_items(conv)
    assert items[1] == {"text": f"Lovely! I went hiking in the Alps. [image: {CAPTION}]", "speaker": "Bob",
                        "timestamp": datetime(2023, 5, 8, 13, 56, 1), "session_id": "session_1",
                        "metadata": {"dia_id": "D1:2"}}
    assert items[4]["session_id"] == "session_2"


# ---------------------------------------------------------------------------------------- metric


def test_evidence_recall():
    assert locomo.evidence_recall("a\nb c", ["a", "b c"]) == 1.0
    assert locomo.evidence_recall("a\nb", ["a", "b c"]) == 0.5
    assert locomo.evidence_recall("", ["a"]) == 0.0
    with pytest.raises(ValueError):
        locomo.evidence_recall("a", [])


def test_pack_by_budget_stop_and_skip():
    enc = cl100k_encoder()
    texts = ["alpha beta", "gamma " * 40, "delta"]
    budget = count_tokens(enc, "alpha beta\ndelta")
    text, tokens, chosen = locomo.pack_by_budget(texts, budget, enc, overflow="stop")
    assert (text, chosen) == ("alpha beta", [0]) and tokens == count_tokens(enc, "alpha beta")
    text, tokens, chosen = locomo.pack_by_budget(texts, budget, enc, overflow="skip")
    assert (text, chosen, tokens) == ("alpha beta\ndelta", [0, 2], budget)
    assert locomo.pack_by_budget(texts, 0, enc) == ("", 0, [])


class FakeMemory:
    """Stands in for hippo.Memory: returns a fixed choice of turns per budget (hand-computed scores below)."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.items = []
        self.closed = False

    def add_many(self, items):
        self.items = list(items)
        return self.items

    def stats(self):
        return {"content_dwm_bytes": 600, "signature_dwm_bytes": 400, "tokens": 250, "store": {"x": 1}}

    def close(self):
        self.closed = True

    def recall(self, query, *, budget_tokens):
        by_id = {it["metadata"]["dia_id"]: it for it in self.items}
        if budget_tokens == 10:
            text = "x " * 50  # deliberately over budget
            chosen = []
        else:
            chosen = ["D1:1", "D1:2"] + (["D2:1"] if budget_tokens >= 1000 else [])
            parts = []
            for d in chosen:
                t = by_id[d]["text"]
                if budget_tokens < 1000:  # drop the image caption: no longer the verbatim turn
                    t = t.split(" [image: ")[0]
                parts.append(f"{by_id[d]['speaker']}: {t}")
            text = "\n".join(parts)
        msgs = [SimpleNamespace(metadata=by_id[d]["metadata"]) for d in chosen]
        return SimpleNamespace(text=text, tokens=len(text.split()), messages=msgs)


def test_evaluate_with_fake_memory(toy):
    made = []

    def factory(ns):
        made.append(FakeMemory(ns))
        return made[-1]

    res = locomo.evaluate(factory, toy, budgets=(10, 500, 1000))
    assert [m.namespace for m in made] == ["toy-1"] and made[0].closed
    assert len(made[0].items) == 5
    b500, b1000, b10 = res["budgets"]["500"], res["budgets"]["1000"], res["budgets"]["10"]
    # Q(cat 4): D1:1 in, D2:2 out -> 0.5. Q(cat 1): D1:2 without caption at 500 -> 0, with caption -> 1.
    # Q(cat 2): D2:1 only at 1000.
    assert b500["overall"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert b500["by_category"] == pytest.approx({"1": 0.0, "2": 0.0, "3": math.nan, "4": 0.5}, nan_ok=True)
    assert b1000["overall"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert b1000["by_category"]["1"] == 1.0 and b1000["by_category"]["2"] == 1.0
    assert b1000["n_by_category"] == {"1": 1, "2": 1, "3": 0, "4": 1} and b1000["n_qa"] == 3
    # By dia_id, the 500 context does include D1:2 (only its text was altered).
    assert b500["id_recall"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert b10["budget_violations"] == 3 and b10["overall"] == 0.0
    assert b500["budget_violations"] == 0
    assert b500["engine_token_mismatches"] == 3  # the fake counts words, not cl100k tokens
    assert res["index_bytes_per_token"] == 4.0 and res["store_bytes_per_token"] is None
    assert set(res["ingest_seconds"]) == {"toy-1"}
    assert res["errors"]["count"] == 0


def test_bm25_baseline_toy(toy):
    pytest.importorskip("bm25s")
    pytest.importorskip("Stemmer")
    enc = cl100k_encoder()
    (conv,) = toy
    one_turn = count_tokens(enc, f"Bob: {conv.by_id['D1:2'].text}")
    res = locomo.bm25_baseline(toy, budgets=(one_turn, 2000), encoder=enc)
    small, big = res["budgets"][str(one_turn)], res["budgets"]["2000"]
    # "Where did Bob go hiking?" -> the hiking turn ranks first and exactly fits the budget.
    assert small["by_category"]["1"] == 1.0
    assert small["budget_violations"] == 0 and small["max_tokens"] <= one_turn
    # Everything fits in 2000 tokens: every evidence turn is present.
    assert big["overall"] == 1.0


def test_locomo_ablation_without_presets_is_clear(tmp_path, monkeypatch):
    import hippo.base.config

    monkeypatch.delattr(hippo.base.config, "ABLATIONS", raising=False)
    with pytest.raises(SystemExit, match="ABLATIONS"):
        locomo._ablation_configs()


# ------------------------------------------------------------------------------------- smoke runs


def test_kernels_quick(tmp_path):
    pytest.importorskip("faiss")
    pytest.importorskip("wavelet_matrix")
    from hippo_bench import main

    out = tmp_path / "kernels.json"
    assert main(["kernels", "--quick", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert out.with_suffix(".md").read_text().startswith("## hippo bench kernels")
    assert {"machine", "active_kernel", "read_bandwidth", "hamming", "dwm", "targets", "checks"} <= set(res)
    assert res["checks"]["all_passed"] is True and res["checks"]["total"] > 10
    assert res["read_bandwidth"]["gb_per_second"] > 0
    assert {(r["bits"], r["queries"]) for r in res["hamming"]} == {(64, 1), (64, 8), (256, 1), (256, 8)}
    for r in res["hamming"]:
        assert r["hippo_s"]["min"] > 0 and r["speedup_vs_faiss"] > 0
    assert [d["distribution"] for d in res["dwm"]] == ["uniform", "zipf"]
    for d in res["dwm"]:
        assert d["space"]["bytes_per_symbol"] > 0
        assert all(row["speedup"] > 0 for row in d["rows"])


def test_scale_quick(tmp_path):
    pytest.importorskip("psutil")
    pytest.importorskip("matplotlib")
    pytest.importorskip("bm25s")
    pytest.importorskip("Stemmer")
    from hippo_bench import main

    out = tmp_path / "scale.json"
    assert main(["scale", "--quick", "--sizes", "2000,5000", "--needles", "5", "--alternating", "20",
                 "--short-messages", "1500", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["sizes"] == [2000, 5000]
    assert out.with_suffix(".png").stat().st_size > 0 and out.with_suffix(".md").exists()
    table = out.with_suffix(".md").read_text()
    for column in ("1st recall after reopen s", "bm25s query p50 / p95 ms", "add, 2 processes, p50 / p95 ms",
                   "delete 1 id / 1% s", "deep consolidate s", "Restart after many short messages"):
        assert column in table
    for r in res["results"]:
        assert r["tokens"] >= r["target_tokens"] and r["queries"] == 5
        assert r["ingest_tokens_per_s"] > 0 and r["store_bytes"] > 0 and r["peak_rss_mb"] > 0
        assert r["recall_ms"]["p50"] > 0 and 0.0 <= r["needle_hit_rate"] <= 1.0
        ro = r["reopen"]  # a real restart: a fresh process that loaded the snapshots and answered at once
        assert ro["open_seconds"] > 0 and ro["first_recall_seconds"] > 0 and ro["first_recall_hit"]
        assert ro["rss_after_first_recall_mb"] > 0 and ro["background_catch_up_seconds"] >= 0
        assert r["bm25s"]["build_seconds"] > 0 and r["bm25s"]["query_ms"]["p95"] > 0
        alt = r["alternating"]
        assert alt["adds"] == 20 and alt["two_processes_ms"]["p50"] > 0 and alt["one_process_ms"]["p50"] > 0
        mt = r["maintenance"]
        assert mt["delete_one_seconds"] > 0 and mt["delete_many"] >= 1 and mt["deep_seconds"] > 0
    short = res["short"]
    assert short["messages"] == 1500 and short["reopen"]["first_recall_seconds"] > 0 and short["rss_ratio"] > 0


def test_synthetic_stream_is_deterministic():
    from hippo_bench.scale import SyntheticConversation

    a = SyntheticConversation(3).generate(3000, n_needles=4)
    b = SyntheticConversation(3).generate(3000, n_needles=4)
    assert a.items == b.items and a.needles == b.needles
    assert a.tokens >= 3000 and len(a.needles) == 4
    for nd in a.needles:
        assert a.items[nd.position]["text"] == nd.text and nd.answer in nd.text


def test_main_reports_missing_peer(tmp_path, monkeypatch, capsys):
    from hippo_bench import _common, main

    real = _common.importlib.import_module

    def fake_import(name, *a, **k):
        if name == "faiss":
            raise ImportError("No module named 'faiss'")
        return real(name, *a, **k)

    monkeypatch.setattr(_common.importlib, "import_module", fake_import)
    assert main(["kernels", "--quick", "--out", str(tmp_path / "k.json")]) == 2
    assert "pip install 'hippo-memory[bench]'" in capsys.readouterr().err


def test_postgres_bench_on_the_session_server(tmp_path, pg_server):
    """``hippo bench postgres --url``: every worker's calls counted, every planted fact found by hippo's recall, the
    cell's schema dropped afterwards (the run leaves the server as it found it)."""
    import importlib.util

    import psycopg

    from hippo_bench import main

    out = tmp_path / "pg.json"
    args = ["postgres", "--url", pg_server.url("hippo"), "--processes", "1", "--sqlite-processes", "1", "--adds", "6",
            "--queries", "3", "--repeats", "1", "--out", str(out)]
    if importlib.util.find_spec("langgraph.store.postgres") is None:
        args.append("--no-langgraph")
    assert main(args) == 0
    res = json.loads(out.read_text())
    systems = {c["system"] for c in res["cells"]}
    assert {"hippo-postgres", "hippo-sqlite"} <= systems
    for c in res["cells"]:
        assert c["add"]["n"] == 6 and c["search"]["n"] == 3 and c["add"]["p95_ms"] >= c["add"]["p50_ms"] > 0
        if c["system"].startswith("hippo"):
            assert c["found_recall"] == 1.0 and c["recall"]["n"] == 3
    with psycopg.connect(pg_server.url("hippo"), autocommit=True) as conn:
        assert conn.execute("SELECT COUNT(*) FROM pg_namespace WHERE nspname LIKE 'bench_%'").fetchone()[0] == 0
