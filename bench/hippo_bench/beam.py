"""BEAM evidence recall (long user/assistant work chats), hippo beside bm25s, bm25s-d and the oracle in one run.

    hippo bench beam --data ../shared/data/beam100k [--conversations odd|even|all|1,2] [--embed minilm]

Each conversation goes into its own store in order (``add(content, role=role, speaker=role,
timestamp=<latest time_anchor>, session_id="batch-<n>", metadata={"chat_id": id})``); questions are asked at
B = 2000, 4000 and 8000 cl100k tokens. See :mod:`hippo_bench.evidence` for the measure and the peers.
"""

from __future__ import annotations

import argparse
from typing import Any

from hippo_bench import evidence

DEFAULT_BUDGETS = "2000,4000,8000"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="BEAM directory of <n>/chat.json (e.g. ../shared/data/beam100k)")
    evidence.add_common_arguments(p, DEFAULT_BUDGETS)


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    return evidence.run_dataset(args, evidence.load_beam(args.data), id_key="chat_id", title="BEAM")
