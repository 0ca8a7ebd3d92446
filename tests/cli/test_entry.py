"""The ``hippo`` console script as pip installs it: the ``[project.scripts]`` entry behind a generated wrapper."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _entry_point() -> tuple[str, str]:
    """(module, function) of the ``hippo`` script in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    scripts = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    match = re.search(r'^hippo\s*=\s*"([\w.]+):(\w+)"', scripts, re.M)
    assert match, scripts
    return match.group(1), match.group(2)


def _wrapper(tmp_path: Path) -> Path:
    """The script pip writes for a console entry point (pip's own template)."""
    module, function = _entry_point()
    script = tmp_path / "hippo"
    script.write_text("import re\nimport sys\n"
                      f"from {module} import {function}\n"
                      "if __name__ == '__main__':\n"
                      "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                      f"    sys.exit({function}())\n", encoding="utf-8")
    return script


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TQDM_", "HIPPO_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "packages"), str(ROOT), env.get("PYTHONPATH", "")])
    return env


def test_console_script_runs_the_command_line(tmp_path) -> None:
    proc = subprocess.run([sys.executable, _wrapper(tmp_path), "--version"], capture_output=True, text=True,
                          env=_env(), timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("hippo "), proc
    proc = subprocess.run([sys.executable, "-m", "hippo", "search", "x", "--path", tmp_path / "none.db"],
                          capture_output=True, text=True, env=_env(), timeout=300)
    assert proc.returncode == 2 and proc.stderr.startswith("hippo: error: no store at --path"), proc


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
@pytest.mark.parametrize("entry", ["script", "hippo", "hippo.cli"])
def test_ctrl_c_while_hippo_loads_is_one_line_and_exit_130(tmp_path, entry) -> None:
    """Ctrl-C in the most of a second ``import hippo`` takes ended the console script with a Python traceback
    before the command line could report it, and ``python -m hippo`` (which imports the package before its
    ``__main__``) too. The interrupt is sent once Python reports (``-X importtime``) that a module of hippo's has
    loaded, so it lands while the rest of hippo is still loading."""
    command = [_wrapper(tmp_path)] if entry == "script" else ["-m", entry]
    proc = subprocess.Popen([sys.executable, "-X", "importtime", *command, "ingest", "/dev/stdin",
                             "--path", tmp_path / "store.db"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(),
                            # as a terminal starts it: a test run started in the background ignores SIGINT, and
                            # a child inherits that
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        timings = []
        for line in proc.stderr:
            timings.append(line)
            if line.startswith("import time:") and line.rsplit("|", 1)[-1].strip().startswith("hippo."):
                proc.send_signal(signal.SIGINT)
                break
        _, rest = proc.communicate(timeout=300)  # closes stdin: a child that went on reads the end of it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = [line for line in rest.splitlines() if not line.startswith("import time:")]
    assert any("hippo." in line for line in timings), "".join(timings)[-2000:]
    assert proc.returncode == 130, (proc.returncode, said[-20:])
    assert said == ["hippo: interrupted"]
    assert not (tmp_path / "store.db").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT's disposition in a child process")
def test_a_module_run_with_python_m_that_imports_hippo_keeps_its_ctrl_c(tmp_path) -> None:
    """Only the command line's own modules answer Ctrl-C while hippo loads: another program run with ``python -m``
    whose package imports hippo gets Python's KeyboardInterrupt, as it would without hippo."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("import hippo\n", encoding="utf-8")
    (tmp_path / "app" / "__main__.py").write_text(
        "import signal\nprint(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n", encoding="utf-8")
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    for module, says in (("app", "True"), ("hippo", "hippo ")):
        proc = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True, env=env,
                              timeout=300, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert proc.returncode == 0 and proc.stdout.startswith(says), proc


def test_the_commands_the_docs_say_print_json_take_json():
    """README.md lists the commands that take ``--json`` ("every read command" included export, which takes none),
    docs/api.md's command table says what each prints with it; both name exactly the commands whose options have
    ``--json``."""
    import argparse
    import re
    from pathlib import Path

    from hippo.cli import build_parser

    root = Path(__file__).resolve().parent.parent.parent
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    takes = {name for name, p in sub.choices.items() if any("--json" in a.option_strings for a in p._actions)}
    readme = (root / "README.md").read_text(encoding="utf-8")
    (listed,) = re.findall(r"Every command that answers on standard output \((.*?)\) takes `--json`", readme, re.S)
    assert set(re.findall(r"`([a-z-]+)`", listed)) == takes
    table = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `hippo ([a-z-]+)(?:\\\||[^|])*\| (?:\\\||[^|])*\| ((?:\\\||[^|])*)\|$",
                                                                 (root / "docs" / "api.md").read_text(encoding="utf-8"),
                                                                 re.M)}
    assert {name for name, prints in table.items() if prints} == takes - {"mcp"}
