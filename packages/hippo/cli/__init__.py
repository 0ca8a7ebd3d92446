"""The ``hippo`` command line: demo, ingest, search, recall, stats, export, import, bench.

One module per group of commands: ``ingest`` (ingest, import, export), ``query`` (search, recall, stats), ``demo``.
"""

from __future__ import annotations

import argparse
import sys

from hippo.cli._common import _store_args
from hippo.cli.demo import cmd_demo
from hippo.cli.ingest import cmd_export, cmd_import, cmd_ingest, locomo_items
from hippo.cli.query import cmd_recall, cmd_search, cmd_stats
from hippo.errors import HippoError

__all__ = ["build_parser", "locomo_items", "main"]


def cmd_bench(argv: list[str]) -> int:
    try:
        from hippo import bench
    except ImportError:
        print("hippo: error: the benchmarks are not part of the installed package; run `make bench` or "
              "`hippo bench` from a source checkout", file=sys.stderr)
        return 2
    return bench.main(argv)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hippo", description="Succinct, offline-first memory for AI agents.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="ingest a sample conversation and answer questions from memory")
    d.add_argument("--budget", type=int, default=160)
    d.set_defaults(func=cmd_demo)

    i = sub.add_parser("ingest", help="add messages from a JSONL file or a LoCoMo-format JSON file")
    i.add_argument("file")
    _store_args(i)
    i.add_argument("--batch", type=int, default=500)
    i.add_argument("--split", action="store_true", help="LoCoMo: one namespace per conversation")
    i.set_defaults(func=cmd_ingest)

    s = sub.add_parser("search", help="ranked messages for a query")
    s.add_argument("query")
    _store_args(s)
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_search)

    r = sub.add_parser("recall", help="a prompt-ready context for a query under a token budget")
    r.add_argument("query")
    _store_args(r)
    r.add_argument("--budget", type=int, default=2000)
    r.set_defaults(func=cmd_recall)

    st = sub.add_parser("stats", help="sizes and bytes per token")
    _store_args(st)
    st.set_defaults(func=cmd_stats)

    e = sub.add_parser("export", help="write a namespace to a JSONL export file")
    e.add_argument("out")
    _store_args(e)
    e.set_defaults(func=cmd_export)

    im = sub.add_parser("import", help="add the messages of a JSONL export file")
    im.add_argument("file")
    _store_args(im)
    im.set_defaults(func=cmd_import)

    sub.add_parser("bench", help="benchmarks: kernels, locomo, scale (see `hippo bench --help`)", add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        return cmd_bench(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HippoError as exc:
        print(f"hippo: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"hippo: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
