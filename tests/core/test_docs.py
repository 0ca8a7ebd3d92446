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


class _MissingExtra(ImportError):
    """A documented module needs an optional extra (mcp, psycopg) this environment lacks."""


def _resolve(dotted: str):
    """The object a dotted name such as ``hippo.engine.rank.rank`` names (import the longest module prefix)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name and not dotted.startswith(exc.name):
                raise _MissingExtra(exc.name) from None  # the module exists; a dependency of it is not installed
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
            try:
                yield label, _resolve(label), args
            except _MissingExtra:
                continue


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


def _left_out(text: str) -> list[str]:
    """The parameters of each callable a doc writes out that none of its written signatures names (a signature
    written again in short, as the hierarchy section repeats ``mem.recall``, counts with the complete one)."""
    named: dict[str, tuple[object, set[str]]] = {}
    for label, func, args in _documented_signatures(text):
        if args.vararg or args.kwarg:
            continue
        named.setdefault(label, (func, set()))[1].update(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
    problems = []
    for label, (func, documented) in named.items():
        for name, p in inspect.signature(func).parameters.items():
            if name != "self" and not name.startswith("_") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) \
                    and name not in documented:
                problems.append(f"{label}: parameter {name!r} of the code is not documented")
    return problems


def test_readme_gives_the_signature_channel_s_default_weight():
    """The README describes the Signature DWM's Hamming-ball channel; the default ranking gives it the weight the
    README states (0: the channel is off unless a weight turns it on)."""
    from hippo.base.config import RetrievalConfig

    stated = re.findall(r'"weight_signature": ([0-9.]+)', (ROOT / "README.md").read_text(encoding="utf-8"))
    assert stated and {float(w) for w in stated} == {RetrievalConfig().weight_signature}


def test_api_md_signatures_leave_out_no_parameter():
    """A signature docs/api.md writes out is the whole signature: a parameter added to the code is added there."""
    assert _left_out((ROOT / "docs" / "api.md").read_text(encoding="utf-8")) == []


def test_the_omission_check_sees_a_parameter_left_out():
    text = "```python\nmem.search(query: str, *, k: int = 10) -> list[Hit]\n```"
    assert "mem.search: parameter 'filter' of the code is not documented" in _left_out(text)


@pytest.mark.parametrize("signature, problem", [
    ("mem.search(query: str, *, k: int = 5) -> list[Hit]", "documented default 5"),
    ("mem.search(query: str, *, limit: int = 10) -> list[Hit]", "'limit' does not exist"),
    ("mem.search(query: str, k: int = 10) -> list[Hit]", "documented positional"),
    ("hippo.storable(text, limit) -> str", "documented without a default"),
])
def test_the_signature_check_sees_a_wrong_signature(signature, problem):
    (label, func, args), = _documented_signatures(f"```python\n{signature}\n```")
    assert any(problem in p for p in _signature_problems(label, func, args))


def _module_leaves() -> dict[str, list]:
    """Each hippo module by its last name (``rank`` -> hippo.engine.rank and hippo.engine.truth.rank), as the docs
    write them after a path has been given once."""
    import pkgutil

    leaves: dict[str, list] = {}
    for info in pkgutil.walk_packages(hippo.__path__, "hippo."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed (mcp, psycopg): its names go unchecked
            continue
        leaves.setdefault(info.name.rsplit(".", 1)[1], []).append(module)
    leaves["truth_rank"] = [importlib.import_module("hippo.engine.truth.rank")]  # the name the engine imports it as
    return leaves


#: short names the docs use for a class or an instance of the public API
_SHORT = {"Memory": hippo.Memory, "Recall": hippo.Recall, "Hit": hippo.Hit, "MemoryItem": hippo.MemoryItem,
          "Config": hippo.Config(), "config": hippo.Config(), "IndexEntry": "hippo.engine.entries.IndexEntry",
          "Completion": "hippo.engine.entries.Completion", "ProfileIndex": "hippo.engine.profiles.ProfileIndex",
          "NamespaceState": "hippo.engine.state.NamespaceState", "Truth": "hippo.engine.truth.state.Truth()",
          "QueryTime": "hippo.text.timeexpr.QueryTime", "IntMap": "hippo.engine.hierarchy.lazy.IntMap"}
#: dotted names that are not hippo's code: LangGraph's runtime object, a PostgreSQL setting (deploy.md), files
_NOT_CODE = re.compile(r"^runtime\.store$|^hippo\.tenant$|\.(md|py|db|json|jsonl|yaml|txt|zip|c|h)$")


def _has(obj, attr: str) -> bool:
    return (hasattr(obj, attr) or attr in getattr(obj, "__dataclass_fields__", {})
            or attr in getattr(obj, "model_fields", {}))


def _code_reference_problems(text: str, where: str, leaves: dict[str, list]) -> list[str]:
    text = re.sub(r"```sql\n.*?```", "", text, flags=re.S)  # hippo.messages there is a table of the schema
    problems = []
    names = set(re.findall(r"\b((?:hippo|langchain_hippo|llamaindex_hippo)(?:\.\w+)+)", text))
    names |= {m for m in re.findall(r"`(\w+(?:\.\w+)+)(?:\([^`]*\))?`", text) if m.split(".")[0] in _SHORT
              or m.split(".")[0] in leaves}
    for name in sorted(names):
        if _NOT_CODE.search(name):
            continue
        head, *rest = name.split(".")
        if head in ("hippo", "langchain_hippo", "llamaindex_hippo"):
            try:
                _resolve(name)
            except _MissingExtra:
                pass
            except (ImportError, AttributeError):
                problems.append(f"{where}: {name}")
            continue
        start = _SHORT.get(head)
        if isinstance(start, str):  # "X()": an instance, whose attributes (columns, fields) are set by __init__
            start = _resolve(start[:-2])() if start.endswith("()") else _resolve(start)
        candidates = [start] if head in _SHORT else leaves[head]
        ok = False
        for obj in candidates:
            for attr in rest:
                if not _has(obj, attr):
                    break
                obj = getattr(obj, attr, None)
            else:
                ok = True
        if not ok:
            problems.append(f"{where}: {name}")
    return problems


def test_code_the_docs_name_exists():
    """Every module, class, function and attribute README.md and docs/*.md name (``hippo.engine.rank.rank``,
    ``Memory.search_many``, ``timeexpr.each_year``, ``config.decay.policies``) exists under that name."""
    leaves = _module_leaves()
    problems = [p for path in DOCS for p in _code_reference_problems(path.read_text(encoding="utf-8"),
                                                                       path.name, leaves)]
    assert problems == []


def test_the_reference_check_sees_a_missing_name():
    leaves = _module_leaves()
    text = "`Memory._rank(magnitudes=True)`, `timeexpr.no_such`, hippo.engine.nothing, `config.decay.nope`, " \
           "`Memory.search_many(priors=False)`, `timeexpr.each_year`, hippo.engine.rank.rank, `config.decay.rates`"
    assert _code_reference_problems(text, "t", leaves) == [
        "t: Memory._rank", "t: config.decay.nope", "t: hippo.engine.nothing", "t: timeexpr.no_such"]


def _undefined_names(code: str) -> list[str]:
    """Names a block of Python reads without importing or assigning them (builtins aside): what a reader who copies
    the block into a fresh interpreter would meet as NameError."""
    import builtins
    import symtable

    top = symtable.symtable(code, "<doc>", "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    missing: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        for s in table.get_symbols():
            if s.is_referenced() and (table is top or s.is_global()) and s.get_name() not in defined \
                    and not hasattr(builtins, s.get_name()):
                missing.add(s.get_name())
        for child in table.get_children():
            walk(child)

    walk(top)
    return sorted(missing)


def test_python_examples_of_the_docs_define_what_they_use():
    """Every python block of README.md and docs/*.md that is Python (not a signature listing) imports or defines
    every name it uses, so it runs when copied into a fresh interpreter."""
    problems = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in _PYTHON_BLOCK.finditer(text):
            try:
                ast.parse(m.group(1))
            except SyntaxError:  # a signature listing such as ``mem.search(query: str, *, k: int = 10) -> ...``
                continue
            if missing := _undefined_names(m.group(1)):
                problems.append(f"{path.name}:{text[:m.start()].count(chr(10)) + 1}: {missing}")
    assert problems == []


def test_the_name_check_sees_a_fragment():
    assert _undefined_names("mem.search(q)\nimport hippo\nx = hippo.Memory(None)\n"
                            "def f(a):\n    return a + b + len(x)\n") == ["b", "mem", "q"]


def test_docs_time_bounds_example(capsys):
    """docs/time_and_truth.md's example: the event-time window finds the support group (said 8 May 2023, "yesterday"
    = 7 May), and as_of the Boston message's ingestion the Denver move is not in the memory and supersedes nothing."""
    from tests.readme_examples import examples, run

    (where, code), = examples("time-bounds")
    ns = run(code, where)
    mem, t = ns["mem"], ns["t"]
    assert [h.text for h in mem.search("support group", since="2023-05-01", until="2023-06-01")] == [
        "I went to a support group yesterday."]
    assert mem.recall("Where does Maya live?", as_of=t).text == "[5 January 2023]\nMaya: I live in Boston."
    assert "Maya (superseded 10 June 2023): I live in Boston." in mem.recall("Where does Maya live?").text


def test_config_settings_the_docs_name_exist():
    """Every setting the docs name (``Config(retrieval={"standing_share": 0.125})``, ``retrieval.sitting_gap_s``,
    ``Config(synchronous="FULL")``) is a field of hippo.Config; api.md states the defaults, so its values are the
    code's defaults."""
    import dataclasses

    config = hippo.Config()
    sections = {f.name for f in dataclasses.fields(config) if dataclasses.is_dataclass(getattr(config, f.name))}
    problems = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for section, key, value in re.findall(r"Config\((\w+)=\{\"(\w+)\": ([^}]+)\}\)", text):
            if section not in sections or not _has(getattr(config, section), key):
                problems.append(f"{path.name}: Config({section}={{{key!r}: ...}})")
            elif path.name == "api.md" and ast.literal_eval(value) != getattr(getattr(config, section), key):
                problems.append(f"{path.name}: {section}.{key} documented {value}, default "
                                f"{getattr(getattr(config, section), key)!r}")
        for key in re.findall(r"Config\((\w+)=", text):
            if not _has(config, key):
                problems.append(f"{path.name}: Config({key}=...)")
        for section, key in re.findall(r"`(?:Config\.|config\.)?(" + "|".join(sections) + r")\.(\w+)`", text):
            if not _NOT_CODE.search(f"{section}.{key}") and not _has(getattr(config, section), key):
                problems.append(f"{path.name}: {section}.{key}")
    assert problems == []


def test_deploy_md_url_options_are_the_ones_the_store_parses():
    """docs/deploy.md documents exactly the ``hippo_*`` URL options the PostgreSQL store takes out of the URL."""
    pytest.importorskip("psycopg")
    from hippo.store import postgres

    documented = set(re.findall(r"\bhippo_[a-z_]+[a-z]", (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")))
    assert documented == set(postgres._HIPPO_PARAMS)
    for option in sorted(documented):
        _libpq, _shown, ours = postgres.parse_url(f"postgresql://app@db.internal/agents?{option}=5")
        assert ours == {option: "5"}


def _documented_settings(text: str) -> dict[str, object]:
    """``{"retrieval.bm25_k1": 1.2, "seal_tokens": 4096, ...}``: the settings docs/api.md's "Settings" section lists,
    each with the default it states."""
    section = text.split("## Settings (`hippo.Config`)", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```text\n(.*?)```", section, re.S)
    found: dict[str, object] = {}
    prefix = None
    for line in block.splitlines():
        if head := re.match(r"^Config(?:\.(\w+))?\b", line):
            prefix = f"{head.group(1)}." if head.group(1) else ""
        elif setting := re.match(r"^  (\w+) = (.+?)(?:\s{2,}.*)?$", line):
            assert prefix is not None, line
            found[prefix + setting.group(1)] = ast.literal_eval(setting.group(2))
    return found


def test_api_md_lists_every_setting_with_its_default():
    """docs/api.md's "Settings" section names every field of hippo.Config and of its sections, no other, each with
    the code's default (36 of them were documented nowhere)."""
    import dataclasses

    config = hippo.Config()
    expected: dict[str, object] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value):
            expected.update({f"{f.name}.{g.name}": getattr(value, g.name) for g in dataclasses.fields(value)})
        else:
            expected[f.name] = value
    documented = _documented_settings((ROOT / "docs" / "api.md").read_text(encoding="utf-8"))
    assert sorted(documented) == sorted(expected)
    assert {k: v for k, v in documented.items() if v != expected[k]} == {}
