"""LoCoMo evidence recall under a token budget, hippo against a bm25s baseline in the same run.

The metric (see the project brief, "Quality: how retrieval is measured"): every conversation is ingested into
its own namespace, every question of category 1-4 is recalled at budgets of B cl100k tokens, and a question
scores the share of its evidence turns whose verbatim text (as ingested) occurs in the returned context.
The mean over questions is reported overall and per category. The baseline ranks turns rendered as
``"<speaker>: <text>"`` with bm25s (English stopwords, Snowball English stemmer) and packs whole turns,
best first, until the next one would overflow B.

Everything here is importable: notebooks and tuning loops call :func:`load_locomo`, :func:`evaluate` and
:func:`bm25_baseline` directly.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hippo_bench._common import (
    cl100k_encoder,
    count_tokens,
    fmt_num,
    fmt_ratio,
    machine_info,
    markdown_table,
    percentile,
    require,
)

CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5
DEFAULT_BUDGETS = (500, 1000, 2000)

# ----------------------------------------------------------------------------------------------- parsing

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
         "november", "december"],
        start=1,
    )
}
_DATETIME_RE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.IGNORECASE
)
_SESSION_RE = re.compile(r"^session_(\d+)$")
_EVIDENCE_RE = re.compile(r"^D:?0*(\d+):0*(\d+)$")
_EVIDENCE_SPLIT_RE = re.compile(r"[;,\s]+")


def parse_locomo_datetime(value: str) -> datetime:
    """Parse LoCoMo's session stamp, e.g. ``"1:56 pm on 8 May, 2023"`` -> ``datetime(2023, 5, 8, 13, 56)``.

    The result is naive (read as UTC by :meth:`hippo.Memory.add`). Month names may be abbreviated.
    """
    m = _DATETIME_RE.match(value)
    if not m:
        raise ValueError(f"unrecognised LoCoMo date_time {value!r}")
    hour, minute, half, day, month_name, year = m.groups()
    month = _MONTHS.get(month_name.lower()) or next(
        (n for name, n in _MONTHS.items() if name.startswith(month_name.lower()[:3])), None
    )
    if month is None:
        raise ValueError(f"unrecognised month in LoCoMo date_time {value!r}")
    h = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month, int(day), h, int(minute))


def normalize_evidence_id(raw: str) -> str | None:
    """Canonical ``"D<session>:<turn>"`` for one evidence token, or None when it is not an id at all.

    ``"D:11:26"`` -> ``"D11:26"``, ``"D30:05"`` -> ``"D30:5"``, ``"D"`` -> None.
    """
    m = _EVIDENCE_RE.match(raw.strip())
    if not m:
        return None
    return f"D{int(m.group(1))}:{int(m.group(2))}"


def split_evidence(raw: Iterable[Any]) -> list[str]:
    """Normalise a QA's ``evidence`` list: split entries on ``;``/``,``/whitespace, canonicalise, de-duplicate.

    ``["D8:6; D9:17", "D:11:26", "D"]`` -> ``["D8:6", "D9:17", "D11:26"]``. Existence is not checked here.
    """
    out: list[str] = []
    for entry in raw or ():
        for token in _EVIDENCE_SPLIT_RE.split(str(entry)):
            if not token:
                continue
            ident = normalize_evidence_id(token)
            if ident is not None and ident not in out:
                out.append(ident)
    return out


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str  # exactly as ingested: turn text plus " [image: <caption>]" when the turn shares an image
    timestamp: datetime


@dataclass(frozen=True)
class QA:
    question: str
    category: int
    evidence: tuple[str, ...]  # canonical ids that exist in the conversation
    dropped_evidence: tuple[str, ...] = ()  # raw tokens that were malformed or name no turn
    answer: Any = None


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    qa: list[QA]  # category 1-4 questions with at least one valid evidence turn
    skipped_no_evidence: int = 0  # category 1-4 questions left out because no evidence id was valid
    adversarial: int = 0  # category 5 questions (not scored)
    by_id: dict[str, Turn] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.by_id:
            self.by_id = {t.dia_id: t for t in self.turns}


def turn_text(turn: Mapping[str, Any]) -> str:
    """The text ingested for one LoCoMo turn: its text plus ``" [image: <blip_caption>]"`` when present."""
    text = str(turn.get("text", ""))
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [image: {caption}]"
    return text


def _parse_conversation(sample: Mapping[str, Any]) -> Conversation:
    conv = sample["conversation"]
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION_RE.match(key)) and isinstance(conv[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        stamp = conv.get(f"{key}_date_time")
        base = parse_locomo_datetime(stamp) if stamp else datetime(2000, 1, 1) + timedelta(days=number)
        for i, raw in enumerate(conv[key]):
            dia = normalize_evidence_id(str(raw.get("dia_id", ""))) or f"D{number}:{i + 1}"
            # One second per turn keeps the order of a session's turns in their timestamps.
            turns.append(Turn(dia, number, str(raw.get("speaker", "")), turn_text(raw), base + timedelta(seconds=i)))
    by_id = {t.dia_id: t for t in turns}
    qa: list[QA] = []
    skipped = adversarial = 0
    for item in sample.get("qa", []):
        category = int(item.get("category", 0))
        if category == ADVERSARIAL:
            adversarial += 1
            continue
        ids = split_evidence(item.get("evidence", []))
        valid = tuple(e for e in ids if e in by_id)
        dropped = tuple(e for e in ids if e not in by_id)
        if not valid:
            skipped += 1
            continue
        qa.append(QA(str(item["question"]), category, valid, dropped, item.get("answer")))
    return Conversation(str(sample.get("sample_id", "")), turns, qa, skipped, adversarial, by_id)


def load_locomo(source: str | Path | Sequence[Mapping[str, Any]]) -> list[Conversation]:
    """Load LoCoMo-format data (a path to the JSON file, or the already-parsed list of samples)."""
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf-8") as fh:
            data = json.load(fh)
    else:
        data = source
    if not isinstance(data, list):
        raise ValueError("LoCoMo data must be a JSON list of samples")
    return [_parse_conversation(sample) for sample in data]


def conversation_items(conv: Conversation) -> list[dict[str, Any]]:
    """The ``add_many`` payload for one conversation, in dialogue order."""
    return [
        {
            "text": t.text,
            "speaker": t.speaker,
            "timestamp": t.timestamp,
            "session_id": f"session_{t.session}",
            "metadata": {"dia_id": t.dia_id},
        }
        for t in conv.turns
    ]


# ------------------------------------------------------------------------------------------------ metric


def evidence_recall(context: str, evidence_texts: Sequence[str]) -> float:
    """Share of ``evidence_texts`` that occur verbatim (as substrings) in ``context``."""
    if not evidence_texts:
        raise ValueError("evidence_texts must not be empty")
    return sum(1 for t in evidence_texts if t in context) / len(evidence_texts)


def pack_by_budget(
    texts: Iterable[str], budget: int, encoder: Any, *, overflow: str = "stop", sep: str = "\n"
) -> tuple[str, int, list[int]]:
    """Join ranked ``texts`` with ``sep`` while the result fits ``budget`` tokens.

    Returns ``(text, tokens, chosen)`` where ``chosen`` are the positions (in ``texts``) of the included texts.
    ``overflow="stop"`` ends at the first text that would not fit; ``"skip"`` leaves it out and tries the next.
    Whole texts only. The final count is exact (the joined text is encoded once more at the end).
    """
    if overflow not in ("stop", "skip"):
        raise ValueError("overflow must be 'stop' or 'skip'")
    sep_tokens = count_tokens(encoder, sep) if sep else 0
    chosen: list[int] = []
    parts: list[str] = []
    used = 0
    for i, text in enumerate(texts):
        cost = count_tokens(encoder, text) + (sep_tokens if parts else 0)
        if used + cost > budget:
            if overflow == "stop":
                break
            continue
        chosen.append(i)
        parts.append(text)
        used += cost
    joined = sep.join(parts)
    exact = count_tokens(encoder, joined)
    # BPE may merge across a separator, so the sum is an upper bound in practice; verify anyway.
    while exact > budget and parts:
        parts.pop()
        chosen.pop()
        joined = sep.join(parts)
        exact = count_tokens(encoder, joined)
    return joined, exact, chosen


# ------------------------------------------------------------------------------------------ evaluation


@dataclass
class Answer:
    """What one system returned for one question at one budget."""

    text: str
    engine_tokens: int | None = None  # the system's own token count, when it reports one
    dia_ids: tuple[str, ...] | None = None  # ids of the messages it says it included, when it reports them


QueryFn = Callable[[str, int], Answer]
Prepare = Callable[[Conversation], tuple[QueryFn, dict[str, Any]]]


def score_system(
    name: str,
    prepare: Prepare,
    conversations: Sequence[Conversation],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    *,
    encoder: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Evidence recall of one system. ``prepare(conv)`` ingests a conversation and returns
    ``(query_fn, info)``; ``info`` may hold ``ingest_seconds``, ``store_bytes_per_token``,
    ``index_bytes_per_token`` and ``close`` (called once the conversation's questions are done)."""
    encoder = encoder or cl100k_encoder()
    budgets = [int(b) for b in budgets]
    per_qa: list[dict[str, Any]] = []
    ingest: dict[str, float] = {}
    conv_info: dict[str, dict[str, Any]] = {}
    latencies: dict[int, list[float]] = {b: [] for b in budgets}
    errors: list[str] = []
    n_errors = 0
    for conv in conversations:
        query_fn, info = prepare(conv)
        ingest[conv.sample_id] = float(info.get("ingest_seconds", math.nan))
        conv_info[conv.sample_id] = {k: v for k, v in info.items() if k != "close"}
        try:
            for qi, qa in enumerate(conv.qa):
                evidence_texts = [conv.by_id[e].text for e in qa.evidence]
                row: dict[str, Any] = {"sample_id": conv.sample_id, "qa": qi, "category": qa.category}
                for b in budgets:
                    t0 = time.perf_counter()
                    try:
                        ans = query_fn(qa.question, b)
                    except Exception as exc:  # one failing query must not hide the rest of the run
                        n_errors += 1
                        if len(errors) < 10:
                            errors.append(f"{conv.sample_id} q{qi} B={b}: {type(exc).__name__}: {exc}")
                        ans = Answer("")
                    latencies[b].append(time.perf_counter() - t0)
                    tokens = count_tokens(encoder, ans.text)
                    rec = evidence_recall(ans.text, evidence_texts)
                    cell: dict[str, Any] = {"recall": rec, "tokens": tokens}
                    if ans.engine_tokens is not None:
                        cell["engine_tokens"] = ans.engine_tokens
                    if ans.dia_ids is not None:
                        got = set(ans.dia_ids)
                        cell["id_recall"] = sum(1 for e in qa.evidence if e in got) / len(qa.evidence)
                    row[str(b)] = cell
                per_qa.append(row)
        finally:
            closer = info.get("close")
            if callable(closer):
                closer()
        if progress:
            progress(f"{name}: {conv.sample_id} done ({len(conv.qa)} questions)")

    by_budget: dict[str, Any] = {}
    for b in budgets:
        key = str(b)
        cells = [(r["category"], r[key]) for r in per_qa]
        recs = [c["recall"] for _, c in cells]
        by_cat = {}
        n_by_cat = {}
        for cat in CATEGORIES:
            vals = [c["recall"] for k, c in cells if k == cat]
            n_by_cat[str(cat)] = len(vals)
            by_cat[str(cat)] = sum(vals) / len(vals) if vals else math.nan
        toks = [c["tokens"] for _, c in cells]
        lat_ms = [x * 1e3 for x in latencies[b]]
        entry: dict[str, Any] = {
            "overall": sum(recs) / len(recs) if recs else math.nan,
            "by_category": by_cat,
            "n_qa": len(recs),
            "n_by_category": n_by_cat,
            "mean_tokens": sum(toks) / len(toks) if toks else math.nan,
            "max_tokens": max(toks) if toks else 0,
            "budget_violations": sum(1 for t in toks if t > b),
            "latency_ms": {"p50": percentile(lat_ms, 50), "p95": percentile(lat_ms, 95),
                           "mean": sum(lat_ms) / len(lat_ms) if lat_ms else math.nan},
        }
        eng = [(c["engine_tokens"], c["tokens"]) for _, c in cells if "engine_tokens" in c]
        if eng:
            entry["engine_token_mismatches"] = sum(1 for e, t in eng if e != t)
        ids = [c["id_recall"] for _, c in cells if "id_recall" in c]
        if ids:
            entry["id_recall"] = sum(ids) / len(ids)
        by_budget[key] = entry

    all_lat = [x * 1e3 for b in budgets for x in latencies[b]]
    ingest_vals = [v for v in ingest.values() if not math.isnan(v)]

    def mean_of(key: str) -> float | None:
        vals = [i[key] for i in conv_info.values() if i.get(key) is not None]
        return sum(vals) / len(vals) if vals else None

    return {
        "name": name,
        "budgets": by_budget,
        "latency_ms": {"p50": percentile(all_lat, 50), "p95": percentile(all_lat, 95)},
        "ingest_seconds": ingest,
        "ingest_seconds_mean": sum(ingest_vals) / len(ingest_vals) if ingest_vals else math.nan,
        "ingest_seconds_max": max(ingest_vals) if ingest_vals else math.nan,
        "store_bytes_per_token": mean_of("store_bytes_per_token"),
        "index_bytes_per_token": mean_of("index_bytes_per_token"),
        "conversations": conv_info,
        "errors": {"count": n_errors, "first": errors},
        "per_qa": per_qa,
    }


def _size_per_token(stats: Mapping[str, Any]) -> dict[str, float]:
    """Bytes per stored token from ``Memory.stats()``, using whichever keys the engine provides.

    ``store_bytes_per_token``: the store file all-in (only for on-disk stores); ``index_bytes_per_token``: the
    in-memory structures (every top-level ``*_bytes`` figure) divided by the stored tokens.
    """
    out: dict[str, float] = {}
    for key in ("store_bytes_per_token", "bytes_per_token"):
        v = stats.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out["store_bytes_per_token"] = float(v)
            break
    tokens = next((stats[k] for k in ("tokens", "n_tokens", "stored_tokens")
                   if isinstance(stats.get(k), (int, float))), None)
    index_bytes = [v for k, v in stats.items()
                   if k.endswith("_bytes") and isinstance(v, (int, float)) and not isinstance(v, bool)]
    if tokens and index_bytes:
        out["index_bytes_per_token"] = float(sum(index_bytes)) / float(tokens)
    return out


def _scalars(obj: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            out[k] = v
        elif isinstance(v, Mapping):
            out[k] = _scalars(v)
    return out


def default_memory_factory(config: Any = None, *, store_dir: str | Path | None = None) -> Callable[[str], Any]:
    """``namespace -> Memory``: a fresh store per conversation, optionally with ``config``.

    In memory by default; with ``store_dir``, one SQLite file per conversation in that directory (so the
    store's bytes per token are measured too).
    """
    from hippo import Memory  # the engine is imported only when a benchmark needs it

    def factory(namespace: str) -> Any:
        path = None if store_dir is None else Path(store_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', namespace)}.db"
        kwargs: dict[str, Any] = {"namespace": namespace}
        if config is not None:
            kwargs["config"] = config
        return Memory(path, **kwargs)

    return factory


def hippo_prepare(memory_factory: Callable[[str], Any]) -> Prepare:
    """Adapter from a ``namespace -> Memory`` factory to :func:`score_system`'s ``prepare``."""

    def prepare(conv: Conversation) -> tuple[QueryFn, dict[str, Any]]:
        mem = memory_factory(conv.sample_id)
        items = conversation_items(conv)
        t0 = time.perf_counter()
        mem.add_many(items)
        ingest_seconds = time.perf_counter() - t0
        info: dict[str, Any] = {"ingest_seconds": ingest_seconds, "turns": len(items)}
        stats_fn = getattr(mem, "stats", None)
        if callable(stats_fn):
            try:
                stats = stats_fn()
            except Exception as exc:  # stats are informative only
                stats = {"error": f"{type(exc).__name__}: {exc}"}
            if isinstance(stats, Mapping):
                info["stats"] = _scalars(stats)
                info.update(_size_per_token(stats))
        closer = getattr(mem, "close", None)
        if callable(closer):
            info["close"] = closer

        def query(question: str, budget: int) -> Answer:
            rec = mem.recall(question, budget_tokens=budget)
            ids: list[str] = []
            for m in getattr(rec, "messages", None) or ():
                md = getattr(m, "metadata", None) or {}
                if "dia_id" in md:
                    ids.append(str(md["dia_id"]))
            return Answer(rec.text, getattr(rec, "tokens", None), tuple(ids))

        return query, info

    return prepare


def evaluate(
    memory_factory: Callable[[str], Any] | None,
    conversations: Sequence[Conversation],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    *,
    name: str = "hippo",
    encoder: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Evidence recall of :class:`hippo.Memory` (or any object with ``add_many`` and ``recall``).

    ``memory_factory(namespace)`` returns an empty memory for one conversation; None means a fresh
    ``Memory(None, namespace=...)`` each time.
    """
    factory = memory_factory or default_memory_factory()
    return score_system(name, hippo_prepare(factory), conversations, budgets, encoder=encoder, progress=progress)


def bm25_prepare(encoder: Any, *, overflow: str = "stop") -> Prepare:
    """bm25s over ``"<speaker>: <text>"`` turns, packing whole top-ranked turns into the budget."""
    bm25s = require("bm25s", "the bm25s LoCoMo baseline")
    stemmer_mod = require("Stemmer", "the bm25s baseline's English stemmer (PyStemmer)")
    np = require("numpy", "ranking")
    stemmer = stemmer_mod.Stemmer("english")

    def prepare(conv: Conversation) -> tuple[QueryFn, dict[str, Any]]:
        docs = [f"{t.speaker}: {t.text}" for t in conv.turns]
        ids = [t.dia_id for t in conv.turns]
        t0 = time.perf_counter()
        corpus = bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        ingest_seconds = time.perf_counter() - t0

        def query(question: str, budget: int) -> Answer:
            q = bm25s.tokenize([question], stopwords="en", stemmer=stemmer, show_progress=False,
                               return_ids=False)[0]
            scores = np.asarray(retriever.get_scores(q), dtype=np.float64)
            # Stable sort: equal scores keep dialogue order, so runs are reproducible.
            order = np.argsort(-scores, kind="stable")
            text, tokens, chosen = pack_by_budget((docs[i] for i in order), budget, encoder, overflow=overflow)
            return Answer(text, tokens, tuple(ids[order[j]] for j in chosen))

        return query, {"ingest_seconds": ingest_seconds, "turns": len(docs)}

    return prepare


def bm25_baseline(
    conversations: Sequence[Conversation],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    *,
    overflow: str = "stop",
    encoder: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Evidence recall of the bm25s baseline (``overflow``: see :func:`pack_by_budget`)."""
    encoder = encoder or cl100k_encoder()
    name = "bm25s" if overflow == "stop" else "bm25s-skip"
    return score_system(name, bm25_prepare(encoder, overflow=overflow), conversations, budgets,
                        encoder=encoder, progress=progress)


# ---------------------------------------------------------------------------------------------- report


def _ratio(a: float, b: float) -> float:
    if a is None or b is None or math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return a / b


def render_markdown(result: Mapping[str, Any]) -> str:
    budgets = result["budgets"]
    base = result["baseline"]
    parts: list[str] = [f"## LoCoMo evidence recall ({result['data']})", ""]
    parts.append(
        f"{result['n_conversations']} conversations, {result['n_qa']} scored questions "
        f"(category 1-4; {result['skipped_no_evidence']} skipped without valid evidence, "
        f"{result['adversarial']} adversarial not scored). Baseline: bm25s, whole top-ranked turns, "
        f"stop at the first turn that would overflow the budget."
    )
    for sysres in result["systems"]:
        name = sysres["name"]
        parts += ["", f"### {name} vs {base['name']}", ""]
        rows = []
        for b in budgets:
            h = sysres["budgets"][str(b)]
            r = base["budgets"][str(b)]
            cats = [("all", h["overall"], r["overall"], h["n_qa"])]
            cats += [(f"{c} {CATEGORIES[c]}", h["by_category"][str(c)], r["by_category"][str(c)],
                      h["n_by_category"][str(c)]) for c in CATEGORIES]
            for label, hv, rv, n in cats:
                rows.append([b, label, n, fmt_num(hv), fmt_num(rv), fmt_ratio(_ratio(hv, rv))])
        parts.append(markdown_table(["budget", "category", "n", name, base["name"], "ratio"], rows))
        parts += [""]
        rows = []
        for b in budgets:
            h = sysres["budgets"][str(b)]
            r = base["budgets"][str(b)]
            rows.append([
                b,
                fmt_num(h["mean_tokens"], 0), fmt_num(r["mean_tokens"], 0),
                f"{h['budget_violations']} (max {h['max_tokens']})",
                h.get("engine_token_mismatches", "-"),
                fmt_num(h.get("id_recall"), 3) if h.get("id_recall") is not None else "-",
                fmt_num(h["latency_ms"]["p50"], 2), fmt_num(h["latency_ms"]["p95"], 2),
                fmt_num(r["latency_ms"]["p50"], 2),
            ])
        parts.append(markdown_table(
            ["budget", f"{name} tokens/query", "bm25s tokens/query", "over budget", "token count mismatch",
             "recall by dia_id", "p50 ms", "p95 ms", "bm25s p50 ms"], rows))
        sbpt, ibpt = sysres.get("store_bytes_per_token"), sysres.get("index_bytes_per_token")
        parts += [
            "",
            f"- ingest: mean {fmt_num(sysres['ingest_seconds_mean'], 3)} s, max "
            f"{fmt_num(sysres['ingest_seconds_max'], 3)} s per conversation "
            f"(bm25s index build mean {fmt_num(base['ingest_seconds_mean'], 3)} s)",
            f"- recall latency over all budgets: p50 {fmt_num(sysres['latency_ms']['p50'], 2)} ms, "
            f"p95 {fmt_num(sysres['latency_ms']['p95'], 2)} ms",
            f"- bytes per stored token: in-memory index {fmt_num(ibpt, 2) if ibpt is not None else '-'}; "
            f"store file all-in {fmt_num(sbpt, 2) if sbpt is not None else '- (run with --on-disk)'}",
        ]
        if sysres["errors"]["count"]:
            parts.append(f"- recall errors: {sysres['errors']['count']} (first: {sysres['errors']['first'][:3]})")
    return "\n".join(parts) + "\n"


def _ablation_configs() -> Mapping[str, Any]:
    try:
        import hippo.base.config as cfg_mod
    except ImportError as exc:
        raise SystemExit(f"--ablation needs hippo.base.config.ABLATIONS, but hippo.base.config cannot be imported: {exc}")
    ablations = getattr(cfg_mod, "ABLATIONS", None)
    if not isinstance(ablations, Mapping) or not ablations:
        raise SystemExit("--ablation needs hippo.base.config.ABLATIONS (a mapping of name -> config); it is not defined")
    return ablations


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="LoCoMo-format JSON (e.g. ../shared/data/locomo_dev.json)")
    from hippo_bench import evidence

    evidence.add_common_arguments(p, ",".join(map(str, DEFAULT_BUDGETS)))
    p.add_argument("--ablation", action="store_true",
                   help="also evaluate every named config in hippo.base.config.ABLATIONS (as hippo[<name>])")


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Evidence recall on LoCoMo with the shared harness (:mod:`hippo_bench.evidence`): bm25s, bm25s-d, the
    oracle and hippo (and with ``--ablation`` every configuration of ``hippo.base.config.ABLATIONS``) in one run."""
    from hippo_bench import evidence

    convs = evidence.load_locomo(args.data)
    out, md = evidence.run_dataset(args, convs, id_key="dia_id", title="LoCoMo")
    if args.ablation and not args.no_hippo:
        chosen = evidence.select(convs, args.conversations)[: 1 if args.quick else None]
        for name, cfg in _ablation_configs().items():
            sub = evidence.evaluate(chosen, out["budgets"], id_key="dia_id", hippo=True, config=cfg)
            out["results"][f"hippo[{name}]"] = sub["results"]["hippo"]
            out["systems"].append(f"hippo[{name}]")
            out[f"hippo[{name}]"] = sub["hippo"]
        md = evidence.render(f"LoCoMo evidence recall ({args.data}, conversations: {args.conversations})", out)
    return out, md


__all__ = [
    "CATEGORIES",
    "QA",
    "Answer",
    "Conversation",
    "Turn",
    "bm25_baseline",
    "bm25_prepare",
    "conversation_items",
    "default_memory_factory",
    "evaluate",
    "evidence_recall",
    "hippo_prepare",
    "load_locomo",
    "normalize_evidence_id",
    "pack_by_budget",
    "parse_locomo_datetime",
    "render_markdown",
    "score_system",
    "split_evidence",
]
