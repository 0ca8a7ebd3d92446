"""Helpers for the command-line tests: ``hippo`` as a subprocess (optionally on a pseudo-terminal), in-process
``hippo.cli.main``, and a seeded store."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

import hippo
from tests.conversation import CONVERSATION as ALL
from tests.conversation import T0

CONVERSATION = ALL[:12]


def conversation_items() -> list[dict]:
    return [{"text": text, "speaker": speaker, "session_id": session, "timestamp": T0 + timedelta(days=7 * k),
             "metadata": {"turn": k}} for k, (session, speaker, text) in enumerate(CONVERSATION)]


@pytest.fixture()
def store(tmp_path) -> Path:
    """A store file with the conversation in namespace 'ann' and two messages in namespace 'other'."""
    path = tmp_path / "store.db"
    with hippo.Memory(path, namespace="ann") as mem:
        mem.add_many(conversation_items())
        mem.using("other").add_many([{"text": "A message in another namespace about ibex."},
                                     {"text": "Another one about cellos."}])
    return path


@dataclass
class Run:
    code: int
    out: str
    err: str


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TQDM_", "HIPPO_"))}
    env.update(extra or {})
    return env


def hippo_cmd(*args: object, stdin: str | None = None, env: dict[str, str] | None = None,
              timeout: float = 300) -> Run:
    """``hippo ARGS`` in a fresh interpreter, stdin a pipe (or /dev/null), stdout and stderr pipes."""
    feed = {"stdin": subprocess.DEVNULL} if stdin is None else {"input": stdin}
    proc = subprocess.run([sys.executable, "-m", "hippo.cli", *map(str, args)], text=True, capture_output=True,
                          env=_env(env), timeout=timeout, **feed)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def hippo_tty(*args: object, answer: str | None = None, stdin_tty: bool = False, timeout: float = 300) -> Run:
    """``hippo ARGS`` with stderr (and, with ``stdin_tty``, stdin) on a pseudo-terminal, as a person runs it.
    ``answer`` is typed once the confirmation prompt shows."""
    import pty
    import termios

    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO  # keep the typed answer out of the captured screen
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen([sys.executable, "-m", "hippo.cli", *map(str, args)], env=_env({"COLUMNS": "100"}),
                            stdin=slave if stdin_tty else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO once the child closed its side
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if answer is not None:
        deadline = time.monotonic() + timeout
        while b"[y/N]" not in b"".join(chunks) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.write(master, answer.encode())
    out, _ = proc.communicate(timeout=timeout)
    reader.join(10)
    os.close(master)
    return Run(proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace"))


def cli(capsys, *args: object) -> Run:
    """``hippo.cli.main([...])`` in this process."""
    from hippo.cli import main

    capsys.readouterr()
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def assert_one_line_error(run: Run, *needles: str) -> None:
    """The CLI's error contract: non-zero exit, exactly one line on stderr, no traceback, naming ``needles``."""
    assert run.code != 0, run
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert "Traceback" not in run.err
    for needle in needles:
        assert needle.lower() in run.err.lower(), (needle, run.err)
