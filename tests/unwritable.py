"""A store this user can read but not write, for the tests of read-only opens (the CLI, the MCP server, Memory)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def unwritable_store(prefix: str, build: Callable[[Path], None]) -> Iterator[tuple[Path, str]]:
    """``(path, drop)``: ``build(path)`` writes the store in a new folder under /tmp (outside pytest's private tmp,
    so that another user can enter it); then, as root, the reader is to run ``drop`` first (Python statements that
    become the user ``nobody``, who may read the file and not write it or its folder), and otherwise the file and
    its folder are made read-only and ``drop`` is empty. Skips as root without a ``nobody`` user. The folder is
    removed afterwards."""
    root = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    try:
        os.chmod(root, 0o755)
        path = Path(root) / "store.db"
        build(path)
        if os.geteuid() == 0:
            try:
                import pwd

                nobody = pwd.getpwnam("nobody")
            except KeyError:
                pytest.skip("running as root without a 'nobody' user to drop to")
            os.chmod(path, 0o644)
            drop = f"os.setgid({nobody.pw_gid}); os.setuid({nobody.pw_uid})"
        else:
            os.chmod(path, 0o444)
            os.chmod(root, 0o555)
            drop = ""
        yield path, drop
    finally:
        os.chmod(root, 0o755)
        shutil.rmtree(root, ignore_errors=True)
