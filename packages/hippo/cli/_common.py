"""Plumbing shared by the commands: store arguments and the progress line."""

from __future__ import annotations

import argparse
import os
import sys
import time


def _store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--path", default=os.environ.get("HIPPO_PATH", "hippo.db"),
                   help="store file (default: $HIPPO_PATH or ./hippo.db)")
    p.add_argument("--namespace", "-n", default="default", help="namespace inside the store")


def _progress(done: int, total: int, started: float, label: str) -> None:
    if not sys.stderr.isatty() and done != total:
        return
    width = 30
    frac = done / total if total else 1.0
    bar = "#" * int(frac * width)
    rate = done / max(time.perf_counter() - started, 1e-9)
    sys.stderr.write(f"\r{label} [{bar:<{width}}] {done}/{total} ({rate:,.0f}/s)")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()
