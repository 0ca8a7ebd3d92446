"""The check shared by the SQLite and PostgreSQL stores that a newer schema this code may use is used as it is."""

from __future__ import annotations

from typing import Callable

from hippo import Memory


def uses_a_newer_schema_as_it_is(open_memory: Callable[..., Memory], upgrade: Callable[[], None]) -> None:
    """A handle opened before ``upgrade()`` (a newer version's migration older code can live with, said so in
    ``compatible``) and one opened after it both read and write the store, and a read-only one reads it whole.
    ``open_memory(**kwargs)`` opens a ``Memory`` on the store (``read_only=True`` among the kwargs)."""
    old = open_memory()
    first = old.add("the heron nests by the north pond")
    upgrade()
    second = old.add("the kestrel hunts over the meadow")  # a handle open across the upgrade
    with open_memory() as mem:  # and one opened after it
        assert [it.text for it in mem.list()] == [first.text, second.text]
        third = mem.add("the wren sings at dawn")
        assert mem.search("kestrel meadow", k=1)[0].id == second.id
        assert mem.check()["ok"]
    assert [it.text for it in old.list()] == [first.text, second.text, third.text]
    old.close()
    with open_memory(read_only=True) as ro:
        assert ro.count() == 3 and ro.check()["ok"]


def words_read_again(tmp_path, monkeypatch, texts: list[str], question: str, older: list[tuple]) -> None:
    """A store saved under an older rule for reading the words of several tokens (``older``: the
    ``monkeypatch.setattr`` arguments that bring it back, the co-index's ``_WORDS_RULE`` among them), in which
    ``question`` finds nothing, finds ``texts[0]`` once reopened by this code, as a store that never saved does."""
    path = tmp_path / "m.db"
    for args in older:
        monkeypatch.setattr(*args)
    with Memory(path) as mem:
        mem.add_many({"text": t} for t in texts)
        assert mem.search(question, k=1) == []
    monkeypatch.undo()
    with Memory(path) as mem, Memory(None) as ref:
        ref.add_many({"text": t} for t in texts)
        want = [h.text for h in ref.search(question, k=1)]
        assert want == texts[:1] and [h.text for h in mem.search(question, k=1)] == want
