"""What docs/*.md state about the code is what the code has: signatures, defaults and the names they refer to.

The reference is the code itself (``inspect.signature``, the modules' attributes), read at test time, so a renamed
parameter or a moved function fails here instead of in a user's first copy of the docs.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

import hippo

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _resolve(dotted: str):
    """The object a dotted name such as ``hippo.engine.rank.rank`` names (import the longest module prefix)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def _documented_signatures(text: str):
    """(label, callable, parameters) of every signature the python blocks of a doc write out: a call of ``mem.NAME``,
    ``Memory`` or ``hippo.X`` followed by ``->`` or with annotated parameters (examples are neither)."""
    code = "\n".join(_PYTHON_BLOCK.findall(text))
    code = "\n".join("" if line.lstrip().startswith("#") else re.sub(r"\s+#.*$", "", line)
                     for line in code.splitlines())
    for m in re.finditer(r"\b(mem|Memory|hippo(?:\.\w+)+?)(?:\.(\w+))?\(", code):
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        params, after = code[m.end():i - 1], code[i:i + 5]
        try:
            args = ast.parse(f"def f({params}): pass").body[0].args
        except SyntaxError:
            continue
        if "->" not in after and not any(a.annotation for a in args.args + args.kwonlyargs):
            continue
        owner, name = m.group(1), m.group(2)
        if owner == "mem":
            yield f"mem.{name}", getattr(hippo.Memory, name), args
        elif owner == "Memory":
            yield "Memory", hippo.Memory.__init__, args
        else:
            label = owner + (f".{name}" if name else "")
            yield label, _resolve(label), args


def _signature_problems(label: str, func, args: ast.arguments) -> list[str]:
    real = {k: p for k, p in inspect.signature(func).parameters.items() if k != "self" and not k.startswith("_")}
    positional = args.posonlyargs + args.args
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    problems = []
    for arg in positional + args.kwonlyargs:
        p = real.get(arg.arg)
        if p is None:
            problems.append(f"{label}: documented parameter {arg.arg!r} does not exist ({list(real)})")
            continue
        if (arg in args.kwonlyargs) != (p.kind is inspect.Parameter.KEYWORD_ONLY):
            kind = "keyword-only" if arg in args.kwonlyargs else "positional"
            problems.append(f"{label}: {arg.arg!r} is documented {kind}")
        doc_default = defaults.get(arg.arg)
        if doc_default is None:
            if p.default is not inspect.Parameter.empty:
                problems.append(f"{label}: {arg.arg!r} is documented without a default, the code has {p.default!r}")
            continue
        try:
            value = ast.literal_eval(doc_default)
        except ValueError:  # "light" | "deep": the choices, not a default to compare
            continue
        if value is not Ellipsis and (p.default is inspect.Parameter.empty or p.default != value):
            problems.append(f"{label}: {arg.arg!r} documented default {value!r}, the code's {p.default!r}")
    return problems


def test_api_md_signatures_match_the_code():
    """Every signature docs/api.md writes out names the parameters the code has, with the code's defaults."""
    found = list(_documented_signatures((ROOT / "docs" / "api.md").read_text(encoding="utf-8")))
    assert len(found) > 40, "the signature reader found too few signatures to be checking anything"
    problems = [p for label, func, args in found for p in _signature_problems(label, func, args)]
    assert problems == []


@pytest.mark.parametrize("signature, problem", [
    ("mem.search(query: str, *, k: int = 5) -> list[Hit]", "documented default 5"),
    ("mem.search(query: str, *, limit: int = 10) -> list[Hit]", "'limit' does not exist"),
    ("mem.search(query: str, k: int = 10) -> list[Hit]", "documented positional"),
    ("hippo.storable(text, limit) -> str", "documented without a default"),
])
def test_the_signature_check_sees_a_wrong_signature(signature, problem):
    (label, func, args), = _documented_signatures(f"```python\n{signature}\n```")
    assert any(problem in p for p in _signature_problems(label, func, args))
