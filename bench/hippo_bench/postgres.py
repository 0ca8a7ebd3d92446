"""``hippo bench postgres``: many processes adding to and recalling from one PostgreSQL server.

Each cell of the run is a number of worker processes against one store; every worker is one app server with its
own user (namespace) by default, or all share one namespace (``--shared-namespace``). A worker adds its messages
one call at a time (phase 1), then asks its questions (phase 2); the phases of all workers start together behind a
barrier, so throughput is the operations of every worker over the phase's wall time, and p50 / p95 are over every
single call of the phase. Process start-up and connecting are not timed.

Systems, on the same generated data (``SyntheticConversation`` of ``hippo bench scale``: multi-session chat with
planted facts; the questions ask for those facts):

* ``hippo-postgres``: ``hippo.Memory("postgresql://...")``: ``add``, then ``search(k=10)`` and ``recall`` per
  question.
* ``langgraph-postgres``: LangGraph's ``PostgresStore`` (``langgraph-checkpoint-postgres``): ``put`` of the same
  messages, then ``search(limit=10)`` with the question. Without an ``index`` (pgvector is not on the server) its
  search is a namespace-prefix listing in recency order: no ranking, the least work a search can be; "found" says
  how often the planted fact was among the results anyway.
* ``hippo-sqlite``: ``hippo.Memory`` on one SQLite file, at 1 and 4 processes.

Without ``--url`` a throwaway server is started for the run (initdb + pg_ctl on a unix socket, ``fsync`` on, so a
commit costs what it costs in production), and removed afterwards. With ``--url`` the run uses that server; every
cell works in a schema of its own (``CREATE SCHEMA`` privilege needed), dropped at the end.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from hippo_bench._common import fmt_ratio, machine_info, markdown_table, percentile, require

ENCODER_TOKENS_PER_ADD = 30  # generated text per message, roughly (the generator counts real cl100k tokens)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", help="an existing PostgreSQL database to run against (default: a throwaway server)")
    p.add_argument("--processes", default="1,4,16", help="worker counts against PostgreSQL (default 1,4,16)")
    p.add_argument("--sqlite-processes", default="1,4", help="worker counts against one SQLite file (default 1,4)")
    p.add_argument("--adds", type=int, default=120, help="messages each worker adds (default 120)")
    p.add_argument("--queries", type=int, default=40, help="questions each worker asks (default 40)")
    p.add_argument("--budget", type=int, default=1000, help="recall budget in cl100k tokens (default 1000)")
    p.add_argument("--shared-namespace", action="store_true",
                   help="every worker adds to and asks the same namespace (one agent's memory on many servers)")
    p.add_argument("--no-langgraph", action="store_true", help="leave out LangGraph's PostgresStore")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--repeats", type=int, default=3,
                   help="runs of every cell, interleaved across systems; each figure is the median (default 3)")


# -- one worker -----------------------------------------------------------------------------------------------------
def _workload(worker: int, adds: int, queries: int, seed: int) -> tuple[list[dict], list[tuple[str, str]]]:
    """The worker's messages and its questions, each with the planted message that answers it."""
    from hippo_bench.scale import SyntheticConversation

    stream = SyntheticConversation(seed=seed * 1000 + worker).generate(
        adds * ENCODER_TOKENS_PER_ADD * 2, n_needles=max(queries, 1))
    items = stream.items[:adds]
    needles = [(nd.question, nd.text) for nd in stream.needles if nd.position < adds]
    if not needles:
        needles = [(it["text"], it["text"]) for it in items[:1]]
    asked = [needles[k % len(needles)] for k in range(queries)]
    return items, asked


def _worker(system: str, location: str, worker: int, namespace: str, adds: int, queries: int, budget: int,
            seed: int, barrier: Any, results: Any) -> None:
    try:
        items, asked = _workload(worker, adds, queries, seed)
        out: dict[str, Any] = {"worker": worker, "add": [], "search": [], "recall": [], "found_search": 0,
                               "found_recall": 0}
        if system == "langgraph-postgres":
            from langgraph.store.postgres import PostgresStore

            with PostgresStore.from_conn_string(location) as store:
                prefix = ("bench", namespace)
                barrier.wait()
                out["add_start"] = time.monotonic()
                for k, it in enumerate(items):
                    t0 = time.perf_counter()
                    store.put(prefix, f"{worker}-{k}", {"text": it["text"], "speaker": it["speaker"],
                                                         "session_id": it["session_id"]})
                    out["add"].append(time.perf_counter() - t0)
                out["add_end"] = time.monotonic()
                barrier.wait()
                out["query_start"] = time.monotonic()
                for question, answer in asked:
                    t0 = time.perf_counter()
                    hits = store.search(prefix, query=question, limit=10)
                    out["search"].append(time.perf_counter() - t0)
                    out["found_search"] += any(h.value.get("text") == answer for h in hits)
                out["query_end"] = time.monotonic()
        else:
            import hippo

            with hippo.Memory(location, namespace=namespace) as mem:
                barrier.wait()
                out["add_start"] = time.monotonic()
                for it in items:
                    t0 = time.perf_counter()
                    mem.add(**it)
                    out["add"].append(time.perf_counter() - t0)
                out["add_end"] = time.monotonic()
                barrier.wait()
                out["query_start"] = time.monotonic()
                for question, answer in asked:
                    t0 = time.perf_counter()
                    hits = mem.search(question, k=10)
                    t1 = time.perf_counter()
                    ctx = mem.recall(question, budget_tokens=budget)
                    t2 = time.perf_counter()
                    out["search"].append(t1 - t0)
                    out["recall"].append(t2 - t1)
                    out["found_search"] += any(h.text == answer for h in hits)
                    out["found_recall"] += answer in ctx.text
                out["query_end"] = time.monotonic()
        results.put(out)
    except BaseException as exc:  # reported by the parent; the barrier is broken so the others stop too
        barrier.abort()
        results.put({"worker": worker, "error": f"{type(exc).__name__}: {exc}"})


def run_cell(system: str, location: str, processes: int, *, adds: int, queries: int, budget: int, seed: int,
             shared: bool) -> dict[str, Any]:
    """One system at one process count: every worker's timings, merged."""
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(processes)
    results = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(system, location, w, "shared" if shared else f"user{w}", adds,
                                               queries, budget, seed, barrier, results), daemon=True)
             for w in range(processes)]
    for p in procs:
        p.start()
    outs = [results.get(timeout=3600) for _ in procs]
    for p in procs:
        p.join(60)
    errors = [o["error"] for o in outs if "error" in o]
    if errors:
        raise RuntimeError(f"{system} x{processes}: " + "; ".join(errors[:3]))
    cell: dict[str, Any] = {"system": system, "processes": processes, "adds": adds * processes,
                            "queries": queries * processes}
    for phase, ops in (("add", ["add"]), ("query", ["search", "recall"])):
        wall = max(o[f"{phase}_end"] for o in outs) - min(o[f"{phase}_start"] for o in outs)
        cell[f"{phase}_wall_s"] = wall
        lat_by_op = {op: [x for o in outs for x in o[op]] for op in ops if any(o[op] for o in outs)}
        busy = sum(sum(lat) for lat in lat_by_op.values())
        for op, lat in lat_by_op.items():
            # the operations of a phase run back to back in every worker: each one's share of the phase's wall
            # time is its share of the summed latencies
            share = sum(lat) / busy if busy > 0 else 1.0
            cell[op] = {"ops_per_s": len(lat) / (wall * share) if wall > 0 else None,
                        "p50_ms": percentile(lat, 50) * 1e3, "p95_ms": percentile(lat, 95) * 1e3, "n": len(lat)}
    total = queries * processes
    cell["found_search"] = sum(o["found_search"] for o in outs) / total if total else None
    cell["found_recall"] = sum(o["found_recall"] for o in outs) / total if "recall" in cell and total else None
    return cell


# -- locations --------------------------------------------------------------------------------------------------
class Locations:
    """Where each cell runs: a fresh schema of the PostgreSQL database per cell, a fresh SQLite file per cell."""

    def __init__(self, url: str | None) -> None:
        self.server = None
        self.tmp = Path(tempfile.mkdtemp(prefix="hippo-bench-pg-"))
        if url is None:
            from hippo_bench.pgserver import PgServer, unavailable_reason

            reason = unavailable_reason()
            if reason:
                raise RuntimeError(f"cannot start a throwaway PostgreSQL server ({reason}); pass --url")
            self.server = PgServer(durable=True, max_connections=300)
            self.server.create_database("bench")
            url = self.server.url("bench")
        self.url = url
        self.schemas: list[str] = []

    def _schema(self, tag: str) -> str:
        import psycopg

        name = f"bench_{tag}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self._plain(), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        self.schemas.append(name)
        return name

    def _plain(self) -> str:
        from hippo.store.postgres import parse_url

        return parse_url(self.url)[0]

    def _join(self, url: str, param: str) -> str:
        return url + ("&" if "?" in url else "?") + param

    def hippo(self, processes: int) -> str:
        name = self._schema(f"hippo{processes}")
        return self._join(self.url, f"hippo_schema={name}&hippo_pool_max=2")

    def langgraph(self, processes: int) -> str:
        name = self._schema(f"lg{processes}")
        url = self._join(self._plain(), f"options=-csearch_path%3D{name}")
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(url) as store:
            store.setup()
        return url

    def sqlite(self, processes: int) -> str:
        return str(self.tmp / f"sqlite{processes}.db")

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        else:
            import psycopg

            with psycopg.connect(self._plain(), autocommit=True) as conn:
                for name in self.schemas:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        shutil.rmtree(self.tmp, ignore_errors=True)


def _median_cell(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Every figure of a cell as the median over its runs (the runs themselves are kept under ``runs``)."""
    import statistics

    out = dict(runs[0])
    for op in ("add", "search", "recall"):
        if op in out:
            out[op] = {k: statistics.median(r[op][k] for r in runs) if k != "n" else sum(r[op]["n"] for r in runs)
                       for k in out[op]}
    for key in ("found_search", "found_recall"):
        if out.get(key) is not None:
            out[key] = statistics.median(r[key] for r in runs)
    out["runs"] = runs
    return out


# -- report -----------------------------------------------------------------------------------------------------
def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def render_markdown(result: dict[str, Any]) -> str:
    rows = []
    for c in result["cells"]:
        q = c.get("recall") or {}
        rows.append([c["system"], c["processes"], _fmt(c["add"]["ops_per_s"]), _fmt(c["add"]["p50_ms"], 2),
                     _fmt(c["add"]["p95_ms"], 2), _fmt(c["search"]["ops_per_s"]), _fmt(c["search"]["p50_ms"], 2),
                     _fmt(c["search"]["p95_ms"], 2), _fmt(q.get("ops_per_s")), _fmt(q.get("p50_ms"), 2),
                     _fmt(q.get("p95_ms"), 2), _fmt(c["found_search"], 2), _fmt(c["found_recall"], 2)])
    table = markdown_table(["system", "procs", "add/s", "add p50 ms", "add p95 ms", "search/s", "search p50 ms",
                            "search p95 ms", "recall/s", "recall p50 ms", "recall p95 ms", "found (search)",
                            "found (recall)"], rows)
    ratios = markdown_table(["processes", "what", "ratio"],
                            [[r["processes"], r["what"], fmt_ratio(r["ratio"])] for r in result["ratios"]])
    cfg = result["config"]
    return (f"## hippo bench postgres\n\n{cfg['adds']} adds and {cfg['queries']} questions per worker process, "
            f"median of {cfg['repeats']} interleaved runs, "
            f"{'one shared namespace' if cfg['shared_namespace'] else 'one namespace per worker'}; recall budget "
            f"{cfg['budget']} tokens; server: {result['server']}.\n\n{table}\n\n"
            "Ratios (throughput of the first over the second, same run):\n\n" + ratios + "\n")


def _ratios(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by = {(c["system"], c["processes"]): c for c in cells}
    out = []
    for (system, n), c in sorted(by.items(), key=lambda kv: kv[0][1]):
        if system != "hippo-postgres":
            continue
        lg = by.get(("langgraph-postgres", n))
        if lg:
            out.append({"processes": n, "what": "hippo add / LangGraph put",
                        "ratio": c["add"]["ops_per_s"] / lg["add"]["ops_per_s"]})
            out.append({"processes": n, "what": "hippo search / LangGraph search",
                        "ratio": c["search"]["ops_per_s"] / lg["search"]["ops_per_s"]})
        sq = by.get(("hippo-sqlite", n))
        if sq:
            out.append({"processes": n, "what": "hippo add: PostgreSQL / SQLite",
                        "ratio": c["add"]["ops_per_s"] / sq["add"]["ops_per_s"]})
            out.append({"processes": n, "what": "hippo recall: PostgreSQL / SQLite",
                        "ratio": c["recall"]["ops_per_s"] / sq["recall"]["ops_per_s"]})
    return out


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    require("psycopg", "the PostgreSQL store")
    pg_counts = [int(x) for x in str(args.processes).split(",") if x.strip()]
    sqlite_counts = [int(x) for x in str(args.sqlite_processes).split(",") if x.strip()]
    adds, queries = args.adds, args.queries
    if args.quick:
        pg_counts, sqlite_counts, adds, queries = [1, 2], [1], min(adds, 20), min(queries, 8)
    with_langgraph = not args.no_langgraph
    if with_langgraph:
        require("langgraph.store.postgres", "LangGraph's PostgresStore (langgraph-checkpoint-postgres)")
    locations = Locations(args.url)
    opts = {"adds": adds, "queries": queries, "budget": args.budget, "seed": args.seed,
            "shared": args.shared_namespace}
    plan = [("hippo-postgres", n) for n in pg_counts] + \
        ([("langgraph-postgres", n) for n in pg_counts] if with_langgraph else []) + \
        [("hippo-sqlite", n) for n in sqlite_counts]
    plan.sort(key=lambda cell: (cell[1], cell[0]))  # systems side by side at each process count
    repeats = 1 if args.quick else max(1, args.repeats)
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {cell: [] for cell in plan}
    try:
        server = "throwaway (initdb, fsync on, unix socket)" if locations.server else "given by --url"
        for _ in range(repeats):  # interleaved: a burst of load on the shared machine hits every system alike
            for system, n in plan:
                where = {"hippo-postgres": locations.hippo, "langgraph-postgres": locations.langgraph,
                         "hippo-sqlite": locations.sqlite}[system](n)
                runs[(system, n)].append(run_cell(system, where, n, **opts))
    finally:
        locations.close()
    cells = [_median_cell(runs[cell]) for cell in plan]
    result = {"benchmark": "postgres", "machine": machine_info(), "server": server,
              "config": {"adds": adds, "queries": queries, "budget": args.budget, "processes": pg_counts,
                         "sqlite_processes": sqlite_counts, "shared_namespace": args.shared_namespace,
                         "seed": args.seed, "cpus": os.cpu_count(), "repeats": repeats},
              "cells": cells, "ratios": _ratios(cells)}
    return result, render_markdown(result)
