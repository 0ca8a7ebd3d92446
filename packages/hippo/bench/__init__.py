"""``hippo bench``: reproducible benchmarks of the C core and the memory engine.

    hippo bench kernels [--quick] [--out bench_results/kernels.json]
    hippo bench locomo --data locomo_dev.json [--budgets 500,1000,2000] [--limit-conversations N] [--ablation]
    hippo bench scale [--sizes 1e5,1e6,1e7] [--quick]
    hippo bench reliability [--quick] [--kill-points N]
    hippo bench soak [--adds 1000000] [--quick]

Each benchmark prints a markdown table and writes JSON to ``--out`` plus the same table as ``.md`` next to it
(``scale`` also writes a ``.png`` plot). Peers and plotting come from the ``bench`` extra:
``pip install 'hippo-memory[bench]'``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hippo.bench._common import MissingDependency, write_results

BENCHMARKS = ("kernels", "locomo", "scale", "reliability", "soak")


def build_parser() -> argparse.ArgumentParser:
    from hippo.bench import kernels, locomo, reliability, scale, soak

    parser = argparse.ArgumentParser(prog="hippo bench", description="Benchmarks of hippo against its peers.")
    sub = parser.add_subparsers(dest="benchmark", metavar="{kernels,locomo,scale,reliability,soak}", required=True)
    helps = {
        "kernels": "Hamming top-k and dynamic wavelet matrix vs faiss, numpy and wavelet-matrix",
        "locomo": "LoCoMo evidence recall under token budgets, hippo vs bm25s",
        "scale": "ingest speed, latency, store size and RSS on synthetic streams of growing size",
        "reliability": "crash (SIGKILL), concurrency and hostile-input campaigns; failures must be zero",
        "soak": "a long run of adds with interleaved recalls and flushes: RSS growth and latency drift",
    }
    for name, module in (("kernels", kernels), ("locomo", locomo), ("scale", scale),
                         ("reliability", reliability), ("soak", soak)):
        p = sub.add_parser(name, help=helps[name], description=helps[name])
        p.add_argument("--out", default=f"bench_results/{name}.json",
                       help=f"JSON result path; a .md table is written next to it (default bench_results/{name}.json)")
        p.add_argument("--quick", action="store_true", help="small sizes, for smoke tests")
        module.add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark; returns a process exit code (0 ok, 1 failed checks, 2 usage / missing dependency)."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    out = Path(args.out)
    try:
        if args.benchmark == "kernels":
            from hippo.bench import kernels

            result, markdown = kernels.run(args)
        elif args.benchmark == "locomo":
            from hippo.bench import locomo

            result, markdown = locomo.run(args)
        elif args.benchmark in ("reliability", "soak"):
            import importlib

            result, markdown = importlib.import_module(f"hippo.bench.{args.benchmark}").run(args)
        else:
            from hippo.bench import scale

            result, markdown = scale.run(args, out=out)
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
