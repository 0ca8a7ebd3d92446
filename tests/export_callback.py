"""An export's ``progress`` callback that calls the memory, on any store (tests/core/test_memory.py runs it on a
SQLite file, tests/store/test_postgres.py on a server with a pool of one connection)."""

from __future__ import annotations

import json
import threading

import pytest

from hippo import Memory
from tests.forked import DEADLINE_S


def check_calls_made_from_an_export_progress_callback_answer(target, folder, n: int = 2600) -> None:
    """An export's ``progress`` callback that calls the memory (a count after another process wrote, a search, an
    add, an add to another namespace) waited for the export it was called from: on SQLite for ever (the export held
    the read lock the callback's write or catch-up waited on), on PostgreSQL with ``hippo_pool_max=1`` until
    ``StoreBusy`` (the export's scan held the pool's one connection). The export now reads in a thread of its own
    and calls ``progress`` from the caller's: the callback's calls answer, those that change the namespace once the
    export has read it, and the file holds the namespace as it was when the export began."""
    mem, other = Memory(target), Memory(target)  # ``other``: another process's handle on the same store
    mem.add_many([{"text": f"note {i} about the harbour ferry"} for i in range(n)])
    answers: list = []

    def progress(done: int, total: int) -> None:
        if answers:
            return
        other.add("written by another process during the export")
        answers.append(mem.count())  # catches up with the other handle's message
        answers.append(mem.search("harbour ferry", k=1)[0].text.startswith("note"))
        answers.append(mem.add("written from the callback").text)
        answers.append(mem.using("elsewhere").add("another namespace").text)

    out, box = folder / "e.jsonl", {}
    worker = threading.Thread(target=lambda: box.update(n=mem.export(out, progress=progress)), daemon=True)
    worker.start()
    worker.join(DEADLINE_S)
    if worker.is_alive():  # left open: closing would wait for the stuck export too
        pytest.fail("the export waited for the calls of its own progress callback")
    try:
        assert box["n"] == n
        lines = out.read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["text"] for line in lines[1:]] == [f"note {i} about the harbour ferry"
                                                                     for i in range(n)]
        assert answers == [n + 1, True, "written from the callback", "another namespace"]
        assert mem.count() == n + 2
    finally:
        mem.close()
        other.close()
