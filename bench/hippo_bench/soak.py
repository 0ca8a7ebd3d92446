"""``hippo bench soak``: a long bounded run of adds with interleaved recalls and flushes.

    hippo bench soak [--adds 1000000] [--batch 100] [--quick] [--out bench_results/soak.json]

Phase 1 streams ``--adds`` messages into one on-disk store with ``add_many`` batches, a recall every
``--recall-every`` messages and a flush (sealing) every ``--flush-every``; it is cut into ten windows, each
reporting add throughput, add-batch and recall latency percentiles and the process RSS. Phase 2 runs reads only
(search, recall, get) for ``--read-seconds`` on the full store: RSS must stay flat there (a leak shows up as
growth without new data). The report gives RSS growth per phase, latency drift (last window p50 over first
window p50) and, at the end, checks that a sample of messages is still found by its unique word and that the
store holds exactly what was added.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from hippo.cli import progress
from hippo_bench._common import machine_info, markdown_table, percentile


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--adds", type=int, default=None, help="messages to add (default 1e6; quick 2e4)")
    p.add_argument("--batch", type=int, default=100, help="messages per add_many call")
    p.add_argument("--recall-every", type=int, default=2000, help="a recall after this many added messages")
    p.add_argument("--flush-every", type=int, default=50_000, help="a flush after this many added messages")
    p.add_argument("--read-seconds", type=float, default=None, help="read-only phase length (default 30; quick 3)")
    p.add_argument("--path", default=None, help="store file (default: a temporary file, removed afterwards)")
    p.add_argument("--seed", type=int, default=0)


def rss_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _ms(xs: list[float], q: float) -> float:
    return percentile(xs, q) * 1e3 if xs else float("nan")


def soak(path: str | os.PathLike, *, adds: int, batch: int, recall_every: int, flush_every: int,
         read_seconds: float, seed: int = 0, windows: int = 10) -> dict[str, Any]:
    from hippo import Memory
    from hippo_bench.reliability import _WORDS, make_item, marker

    rng = random.Random(seed)              # the message stream (regenerated at the end to check a sample)
    qrng = random.Random(seed + 1)         # queries, kept apart so the stream stays reproducible
    window_size = max(batch, adds // windows)
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    with Memory(path) as mem:
        mem.recall("warm up the tokenizer and lexicon", budget_tokens=50)
        rss_start = rss_bytes()
        added = 0
        next_recall, next_flush = recall_every, flush_every
        win: dict[str, Any] = {"add": [], "recall": [], "t0": time.perf_counter(), "n0": 0}
        t_all = time.perf_counter()
        bar = progress.start(adds, "soak")
        while added < adds:
            n = min(batch, adds - added)
            items = [make_item(rng, added + j) for j in range(n)]
            t = time.perf_counter()
            mem.add_many(items)
            win["add"].append(time.perf_counter() - t)
            added += n
            bar.update(n)
            if added >= next_recall:
                next_recall += recall_every
                q = " ".join(qrng.sample(_WORDS, 2))
                t = time.perf_counter()
                mem.recall(q, budget_tokens=500)
                win["recall"].append(time.perf_counter() - t)
            if added >= next_flush:
                next_flush += flush_every
                mem.flush()
            if added - win["n0"] >= window_size or added == adds:
                secs = time.perf_counter() - win["t0"]
                rows.append({"messages": added, "adds_per_s": (added - win["n0"]) / secs,
                             "add_batch_p50_ms": _ms(win["add"], 50), "add_batch_p95_ms": _ms(win["add"], 95),
                             "recall_p50_ms": _ms(win["recall"], 50), "recall_p95_ms": _ms(win["recall"], 95),
                             "rss_mb": rss_bytes() / 2**20})
                win = {"add": [], "recall": [], "t0": time.perf_counter(), "n0": added}
        bar.close()
        ingest_s = time.perf_counter() - t_all
        rss_after_ingest = rss_bytes()
        # Phase 2: reads only. Memory must not grow without new data.
        reads: list[float] = []
        t_end = time.perf_counter() + read_seconds
        rss_read_start = rss_bytes()
        n_reads = 0
        while time.perf_counter() < t_end:
            q = " ".join(qrng.sample(_WORDS, 2))
            t = time.perf_counter()
            kind = n_reads % 3
            if kind == 0:
                mem.recall(q, budget_tokens=500)
            elif kind == 1:
                mem.search(q, k=10)
            else:
                mem.search(marker(qrng.randrange(adds)), k=3)
            reads.append(time.perf_counter() - t)
            n_reads += 1
        rss_read_end = rss_bytes()
        # Consistency at the end of the run.
        if mem.count() != adds:
            failures.append(f"the store holds {mem.count()} messages, {adds} were added")
        sample = set(qrng.sample(range(adds), min(50, adds)))
        check = random.Random(seed)
        texts = {}
        for k in range(adds):  # regenerate the stream to know the texts of the sample
            it = make_item(check, k)
            if k in sample:
                texts[k] = it["text"]
        for k, text in texts.items():
            if not any(h.text == text for h in mem.search(marker(k), k=5)):
                failures.append(f"message {k} is not found by its unique word")
        file_bytes = sum(Path(str(path) + s).stat().st_size for s in ("", "-wal") if Path(str(path) + s).exists())
    first, last = rows[0], rows[-1]
    return {
        "adds": adds, "batch": batch, "ingest_seconds": round(ingest_s, 2), "windows": rows,
        "rss_start_mb": rss_start / 2**20, "rss_after_ingest_mb": rss_after_ingest / 2**20,
        "rss_growth_ingest_mb": (rss_after_ingest - rss_start) / 2**20,
        "rss_growth_per_100k_messages_mb": (rss_after_ingest - rss_start) / 2**20 / max(1, adds / 1e5),
        "read_phase": {"seconds": read_seconds, "reads": n_reads, "p50_ms": _ms(reads, 50), "p95_ms": _ms(reads, 95),
                       "rss_growth_mb": (rss_read_end - rss_read_start) / 2**20},
        "latency_drift": {
            "recall_p50": last["recall_p50_ms"] / first["recall_p50_ms"] if first["recall_p50_ms"] else None,
            "add_batch_p50": last["add_batch_p50_ms"] / first["add_batch_p50_ms"] if first["add_batch_p50_ms"]
            else None},
        "store_file_bytes": file_bytes,
        "failures": failures,
    }


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    adds = args.adds if args.adds is not None else (20_000 if args.quick else 1_000_000)
    read_seconds = args.read_seconds if args.read_seconds is not None else (3.0 if args.quick else 30.0)
    with tempfile.TemporaryDirectory(prefix="hippo-soak-") as tmp:
        path = args.path or os.path.join(tmp, "soak.db")
        res = soak(path, adds=adds, batch=args.batch, recall_every=args.recall_every, flush_every=args.flush_every,
                   read_seconds=read_seconds, seed=args.seed)
    res.update(benchmark="soak", machine=machine_info(), checks={"all_passed": not res["failures"]})
    rows = [[f"{w['messages']:,}", f"{w['adds_per_s']:,.0f}", f"{w['add_batch_p50_ms']:.2f}",
             f"{w['add_batch_p95_ms']:.2f}", f"{w['recall_p50_ms']:.2f}", f"{w['recall_p95_ms']:.2f}",
             f"{w['rss_mb']:.0f}"] for w in res["windows"]]
    drift = res["latency_drift"]
    rp = res["read_phase"]
    md = "\n".join([
        f"## hippo soak: {adds:,} adds in batches of {args.batch}, recall every {args.recall_every:,}, "
        f"flush every {args.flush_every:,}", "",
        markdown_table(["messages", "adds/s", "add p50 ms", "add p95 ms", "recall p50 ms", "recall p95 ms",
                        "RSS MB"], rows), "",
        f"- ingest: {res['ingest_seconds']} s; RSS {res['rss_start_mb']:.0f} -> {res['rss_after_ingest_mb']:.0f} MB "
        f"({res['rss_growth_per_100k_messages_mb']:.1f} MB per 100k messages); store file "
        f"{res['store_file_bytes'] / 2**20:.1f} MB",
        f"- latency drift (last window p50 / first window p50): recall {drift['recall_p50'] or float('nan'):.2f}x, "
        f"add batch {drift['add_batch_p50'] or float('nan'):.2f}x",
        f"- read-only phase: {rp['reads']:,} reads in {rp['seconds']:.0f} s, p50 {rp['p50_ms']:.2f} ms, "
        f"p95 {rp['p95_ms']:.2f} ms, RSS growth {rp['rss_growth_mb']:+.1f} MB",
        f"- failures: {len(res['failures'])}" + "".join(f"\n  - {f}" for f in res["failures"][:10]),
    ])
    return res, md


__all__ = ["add_arguments", "run", "soak", "rss_bytes"]
