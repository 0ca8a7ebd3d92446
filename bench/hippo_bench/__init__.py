"""``hippo bench``: reproducible benchmarks of the C core and the memory engine.

    hippo bench kernels [--quick] [--out bench_results/kernels.json]
    hippo bench locomo --data locomo_dev.json [--budgets 500,1000,2000] [--conversations odd] [--embed minilm]
    hippo bench beam --data beam100k [--budgets 2000,4000,8000] [--conversations even] [--embed minilm]
    hippo bench scale [--sizes 1e5,1e6,1e7] [--quick]
    hippo bench reliability [--quick] [--kill-points N]
    hippo bench soak [--adds 1000000] [--quick]
    hippo bench temporal [--quick] [--seed S] [--conversations N] [--budget 1000]
    hippo bench context [--seed 0] [--turns 56] [--quick]
    hippo bench truth-sample --data FILE_OR_DIR [--data ...] [--marks 100] [--times 100] [--seed 1] [--verdicts F]
    hippo bench postgres [--url postgresql://...] [--processes 1,4,16] [--sqlite-processes 1,4] [--quick]

Each benchmark prints a markdown table and writes JSON to ``--out`` plus the same table as ``.md`` next to it
(``scale`` also writes a ``.png`` plot). Peers and plotting come from the ``bench`` extra:
``pip install 'hippo-memory[bench]'``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from pathlib import Path

from hippo_bench._common import MissingDependency, write_results

# name -> one-line help. Each benchmark is the module ``hippo_bench.<name>`` with ``add_arguments(parser)`` and
# ``run(args, out=...)`` returning ``(result_dict, markdown)``.
BENCHMARKS: dict[str, str] = {
    "kernels": "Hamming top-k and dynamic wavelet matrix vs faiss, numpy and wavelet-matrix",
    "locomo": "LoCoMo evidence recall under token budgets: hippo, bm25s, bm25s-d and the oracle",
    "beam": "BEAM evidence recall (long agent chats) under token budgets: hippo, bm25s, bm25s-d and the oracle",
    "scale": "ingest speed, latency, store size and RSS on synthetic streams of growing size",
    "reliability": "crash (SIGKILL), concurrency and hostile-input campaigns; failures must be zero",
    "soak": "a long run of adds with interleaved recalls and flushes: RSS growth and latency drift",
    "temporal": "facts that change and events told out of order: current-value accuracy and Kendall tau of order",
    "context": "an agent session with large tool outputs, with and without HippoContextMiddleware: tokens sent, "
               "entry compression, values reached, overhead per turn",
    "truth-sample": "a random sample of supersede marks and resolved event times from real conversations, written "
                    "as a review sheet; with --verdicts, their precision",
    "postgres": "1, 4 and 16 processes adding and recalling on one PostgreSQL server, beside LangGraph's "
                "PostgresStore and the SQLite store",
}


def _module(name: str):
    return importlib.import_module(f"hippo_bench.{name.replace('-', '_')}")


class _Parser(argparse.ArgumentParser):
    """A usage error is one line on stderr (exit 2), as for every other ``hippo`` command, not the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hippo bench", description="Benchmarks of hippo against its peers.")
    sub = parser.add_subparsers(dest="benchmark", metavar="{" + ",".join(BENCHMARKS) + "}", required=True)
    for name, help_ in BENCHMARKS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("--out", default=f"bench_results/{name}.json",
                       help=f"JSON result path; a .md table is written next to it (default bench_results/{name}.json)")
        p.add_argument("--quick", action="store_true", help="small sizes, for smoke tests")
        _module(name).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark; returns a process exit code (0 ok, 1 failed checks, 2 usage / missing dependency)."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = Path(args.out)
    try:
        module = _module(args.benchmark)
        if "out" in inspect.signature(module.run).parameters:
            result, markdown = module.run(args, out=out)
        else:
            result, markdown = module.run(args)
    except MissingDependency as exc:
        print(f"hippo bench {args.benchmark}: {exc}", file=sys.stderr)
        return 2
    json_path, md_path = write_results(out, result, markdown)
    print(markdown)
    print(f"wrote {json_path} and {md_path}")
    checks = result.get("checks")
    if isinstance(checks, dict) and not checks.get("all_passed", True):
        print("equality checks FAILED; see 'checks' in the JSON", file=sys.stderr)
        return 1
    return 0


__all__ = ["BENCHMARKS", "main"]
