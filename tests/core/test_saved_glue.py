"""The co-index snapshot keeps the per-token glue flags and the per-message digests, so that an open reads them
instead of making them again from every token of the namespace; a snapshot without them, or made by another rule,
has them made again, with the same result."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from hippo import Memory
from hippo.index import coindex
from hippo.index.coindex import NamespaceIndex

TEXTS = [
    "I met 李明 in 北京 and bought an iPhone15 ⭐ at the café in Medellín.",
    "win11 and covid19 and ｉＰｈｏｎｅ１５ glued to letters",
    "المَدْرَسَةِ قريبة من السيارة",
    "🎉🎉 party tonight!! soooo excited, birthdayyy",
    "Tokyoに行く, Netflix를 봤어, 我买了iPhone",
    "errors.DuplicateKeyError in src/UserService.java line 42",
    "Ελένη went to Αθήνας; Москва зимой; থাকা; naïve résumé",
]


def corpus(n: int) -> list[dict]:
    return [{"text": f"{TEXTS[k % len(TEXTS)]} (note {k})", "speaker": "ann" if k % 2 else "bo"}
            for k in range(n)]


def made_from_tokens(monkeypatch) -> dict[str, int]:
    """Counts the tokens whose glue flags and digests are made from the tokens (not read from a snapshot)."""
    made = {"glue": 0, "digests": 0}
    glue_of, digests_of = NamespaceIndex._glue_of, NamespaceIndex._digests_of

    def glue(tokens, ends):
        made["glue"] += int(np.asarray(tokens).size)
        return glue_of(tokens, ends)

    def digests(tokens, ends):
        made["digests"] += int(np.asarray(tokens).size)
        return digests_of(tokens, ends)

    monkeypatch.setattr(NamespaceIndex, "_glue_of", staticmethod(glue))
    monkeypatch.setattr(NamespaceIndex, "_digests_of", staticmethod(digests))
    return made


def from_the_tokens(mem: Memory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(glue, digests, the index's own) made from the stored tokens, beside what the loaded index holds."""
    st = mem.engine.state()
    idx = st.index
    tokens = mem.engine.rt.store.load_tokens(st.name)
    ends = idx.ends.view
    return NamespaceIndex._glue_of(tokens, ends), NamespaceIndex._digests_of(tokens, ends), idx


def check_against_the_tokens(mem: Memory) -> None:
    glue, digests, idx = from_the_tokens(mem)
    assert np.array_equal(idx.glue, glue)
    assert np.array_equal(idx.digests, digests)


def test_an_open_reads_the_saved_flags_and_digests_instead_of_making_them_from_every_token(tmp_path, monkeypatch):
    path = tmp_path / "g.db"
    with Memory(path) as mem:
        mem.add_many(corpus(300))
        expected = mem.recall("Where did I buy the iPhone15?", budget_tokens=400).text
    made = made_from_tokens(monkeypatch)
    with Memory(path) as mem:
        assert mem.recall("Where did I buy the iPhone15?", budget_tokens=400).text == expected
        assert made == {"glue": 0, "digests": 0}
        monkeypatch.undo()
        check_against_the_tokens(mem)
        # appended after the open: extended from the new message's tokens
        mem.add("Copy: " + TEXTS[0])
        mem.add(TEXTS[3])
        mem.add(TEXTS[3])
        check_against_the_tokens(mem)
        idx = mem.engine.state().index
        assert idx.digests[-1] == idx.digests[-2] != idx.digests[-3]


@pytest.mark.parametrize("which", ["glue", "digests"])
def test_flags_or_digests_saved_by_another_rule_are_made_again_from_the_tokens(tmp_path, monkeypatch, which):
    path = tmp_path / "g.db"
    with Memory(path) as mem:
        mem.add_many(corpus(200))
    made = made_from_tokens(monkeypatch)
    monkeypatch.setattr(coindex, "_GLUE_RULE" if which == "glue" else "_DIGEST_KEY", -1)
    with Memory(path) as mem:
        mem.recall("party tonight", budget_tokens=300)
        n_tokens = len(mem.engine.state().index.content)
        assert made[which] == n_tokens
        assert made["digests" if which == "glue" else "glue"] == 0
        check_against_the_tokens(mem)


def test_after_a_deletion_the_next_open_holds_the_flags_and_digests_of_the_messages_left(tmp_path):
    path = tmp_path / "g.db"
    with Memory(path) as mem:
        items = mem.add_many(corpus(120))
        mem.delete([items[3].id, items[50].id, items[119].id])
    with Memory(path) as mem:
        mem.recall("café", budget_tokens=300)
        check_against_the_tokens(mem)
        assert len(mem.engine.state().index) == 117


def test_the_glue_rule_names_the_flags_it_makes():
    """The flags of texts that exercise every part of them (spaces, joiners, cut characters, scripts written without
    spaces meeting Latin letters, digits after letters). A change of the flags must change
    ``coindex._GLUE_RULE`` too (so that snapshots saved before are made again), and then this record."""
    from hippo.text import tokenizer

    tokens, ends = [], []
    for text in TEXTS:
        tokens += [int(t) for t in tokenizer.encode(text)]
        ends.append(len(tokens))
    flags = NamespaceIndex._glue_of(np.asarray(tokens, dtype=np.uint32), np.asarray(ends, dtype=np.int64))
    digest = hashlib.sha256(np.packbits(flags).tobytes()).hexdigest()[:16]
    assert (coindex._GLUE_RULE, flags.size, digest) == (1, RECORDED_SIZE, RECORDED_DIGEST)


RECORDED_SIZE = 152
RECORDED_DIGEST = "49b66a1194a5b89b"
