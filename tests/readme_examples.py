"""Extract the marked examples (``<!-- example: NAME -->`` followed by a python block) from README.md and
docs/*.md, so tests run exactly what users copy."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"<!--\s*example:\s*([\w-]+)\s*-->\s*```python\n(.*?)```", re.S)


def examples(name: str) -> list[tuple[str, str]]:
    """(where, code) of every example called ``name``; at least one must exist."""
    found = []
    for path in SOURCES:
        if path.exists():
            for match in _BLOCK.finditer(path.read_text(encoding="utf-8")):
                if match.group(1) == name:
                    found.append((f"{path.relative_to(ROOT)}:{name}", match.group(2)))
    if not found:
        raise AssertionError(f"no example {name!r} in {[str(p.relative_to(ROOT)) for p in SOURCES]}")
    return found


def run(code: str, where: str) -> dict:
    namespace: dict = {"__name__": "__readme_example__"}
    exec(compile(code, where, "exec"), namespace)  # noqa: S102 - our own documentation
    return namespace
