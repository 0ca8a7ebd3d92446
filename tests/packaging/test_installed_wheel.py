"""The distribution as a user gets it: sdist -> wheel -> a fresh virtual environment outside the source tree.

Every other test runs from the editable install, which sees the whole source tree; only this one notices a module
that the distribution leaves out, package data that is missing, or a test or benchmark file that slips in. One
build and one environment serve every test of the module (pip's cache makes the install cheap after the first).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

from tests.readme_examples import examples

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"hippo": ROOT / "packages" / "hippo", "langchain_hippo": ROOT / "langchain_hippo",
            "llamaindex_hippo": ROOT / "llamaindex_hippo", "_hippo_cli": ROOT / "packages" / "_hippo_cli"}
EXTRAS = "langchain,classic,llamaindex"
# Package data the wheel may carry besides Python modules and the compiled extension.
PACKAGE_DATA = {"hippo/py.typed", "hippo/data/demo_conversation.jsonl", "hippo/data/relatives.txt"}


def _clean_env(venv_dir: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    if venv_dir is not None:
        env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv_dir)
    return env


def _run(argv: list, cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{argv} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """``python -m build`` as ``make dist`` runs it: the sdist, then the wheel built from the unpacked sdist."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT], cwd=ROOT, env=_clean_env())
    (sdist,) = out.glob("hippo_memory-*.tar.gz")
    (wheel,) = out.glob("hippo_memory-*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> dict[str, Path]:
    """A fresh virtual environment with the wheel and the adapters' extras; ``cwd`` is outside the source tree."""
    home = tmp_path_factory.mktemp("user")
    env_dir = home / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    _run([python, "-m", "pip", "install", "--quiet", f"{dist['wheel']}[{EXTRAS}]"], cwd=home,
         env=_clean_env(env_dir))
    return {"python": python, "bin": env_dir / "bin", "cwd": home, "env_dir": env_dir}


def _source_modules() -> set[str]:
    """Every module file of the three import packages in the source tree, as wheel paths."""
    found = set()
    for name, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            rel = path.relative_to(root)
            if "__pycache__" in rel.parts or rel.parts[0] == "bench":
                continue
            found.add("/".join((name, *rel.parts)))
    return found


def test_wheel_holds_the_library_and_nothing_else(dist) -> None:
    names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    missing = _source_modules() - names
    assert not missing, f"modules left out of the wheel: {sorted(missing)}"
    tops = {n.split("/")[0] for n in names}
    assert tops - set(PACKAGES) == {n.split("/")[0] for n in names if ".dist-info/" in n}
    assert not [n for n in names if n.split("/")[0] in {"tests", "bench", "notebooks", "core_c", "packages"}]
    assert not [n for n in names if "/bench/" in n or "/tests/" in n or n.endswith(("_test.py", ".ipynb"))]
    payload = {n for n in names if ".dist-info/" not in n}
    extension = {n for n in payload if n.startswith("hippo/_hippo_c") and n.endswith((".so", ".pyd"))}
    assert len(extension) == 1, payload
    assert PACKAGE_DATA <= payload, sorted(PACKAGE_DATA - payload)  # the data the library reads at run time
    others = payload - _source_modules() - extension - PACKAGE_DATA
    # what the wheel holds beyond the source modules: only the declared data (and no stray data files)
    assert others == set(), sorted(others)
    meta = zipfile.ZipFile(dist["wheel"]).read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
    assert "hippo = _hippo_cli:main" in meta.decode()


def test_sdist_builds_everything_from_its_own_files(dist) -> None:
    with tarfile.open(dist["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    c_sources = {f"core_c/{p.name}" for p in (ROOT / "core_c").iterdir() if p.suffix in {".c", ".h", ".inc"}}
    assert c_sources <= names, sorted(c_sources - names)
    assert {"pyproject.toml", "setup.py", "README.md", "packages/hippo/_build_native.py"} <= names
    assert {f"packages/{m}" if m.startswith(("hippo/", "_hippo_cli/")) else m for m in _source_modules()} <= names


def test_import_resolves_to_the_installed_copy(installed) -> None:
    code = "import hippo, langchain_hippo, llamaindex_hippo, json; print(json.dumps([hippo.__file__, " \
           "langchain_hippo.__file__, llamaindex_hippo.__file__]))"
    out = _run([installed["python"], "-c", code], cwd=installed["cwd"], env=_clean_env(installed["env_dir"]))
    for path in json.loads(out.stdout):
        assert Path(path).resolve().is_relative_to(installed["env_dir"].resolve()), path
        assert not Path(path).resolve().is_relative_to(ROOT), path


def test_readme_quickstart_runs_installed(installed) -> None:
    (where, code), *_ = examples("quickstart")
    script = installed["cwd"] / "quickstart.py"
    script.write_text(code, encoding="utf-8")
    out = _run([installed["python"], script], cwd=installed["cwd"], env=_clean_env(installed["env_dir"]))
    assert "Atlas Removals" in out.stdout, (where, out.stdout)
    assert (installed["cwd"] / "agent.db").exists()


def test_console_script_demo_and_help(installed) -> None:
    env = _clean_env(installed["env_dir"])
    hippo = installed["bin"] / "hippo"
    demo = _run([hippo, "demo"], cwd=installed["cwd"], env=env)
    lines = (PACKAGES["hippo"] / "data" / "demo_conversation.jsonl").read_text(encoding="utf-8").splitlines()
    assert f"ingested {sum(1 for line in lines if line.strip())} messages" in demo.stdout, demo.stdout[:500]
    assert demo.stdout.count("Q: ") == 6 and "greyhound" in demo.stdout.lower()
    usage = _run([hippo, "--help"], cwd=installed["cwd"], env=env)
    assert "ingest" in usage.stdout and "recall" in usage.stdout
    bench = subprocess.run([hippo, "bench", "kernels"], cwd=installed["cwd"], env=env, capture_output=True,
                           text=True, timeout=120)
    assert bench.returncode == 2 and "source checkout" in bench.stderr and "Traceback" not in bench.stderr


def test_every_adapter_module_imports(installed) -> None:
    code = textwrap.dedent("""
        import importlib, json, pkgutil
        import langchain_hippo, llamaindex_hippo
        done = []
        for pkg in (langchain_hippo, llamaindex_hippo):
            for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
                importlib.import_module(info.name)
                done.append(info.name)
        for name in langchain_hippo.__all__:
            getattr(langchain_hippo, name)
        for name in llamaindex_hippo.__all__:
            getattr(llamaindex_hippo, name)
        print(json.dumps(sorted(done)))
    """)
    out = _run([installed["python"], "-c", code], cwd=installed["cwd"], env=_clean_env(installed["env_dir"]))
    imported = set(json.loads(out.stdout))
    expected = {m[:-3].replace("/", ".").removesuffix(".__init__") for m in _source_modules()
                if m.startswith(("langchain_hippo/", "llamaindex_hippo/"))} - {"langchain_hippo", "llamaindex_hippo"}
    assert imported == expected
