"""Semantics' terms (stem ids) share one int object per stem, live and after a reopen, with the values unchanged."""

from __future__ import annotations

from hippo import Memory
from hippo.engine.hierarchy.semantics import stem_terms
from hippo.text import vocab as V

_TEXTS = ["We adopted a beagle named Rufus from the shelter in Portland on {d}.",
          "The pottery class on {d} made three bowls and a vase for the garden.",
          "My sister Carla flies to Lisbon on {d} for the marathon she trained for."]


def _items(n: int) -> list[dict]:
    # stems numbered past the small ints Python shares anyway (0-256): a word of its own in every text, after 300
    # other stems
    vocab = V.vocab()
    for k in range(300):
        vocab.stem_id(f"zz{k:03d}filler", create=True)
    return [{"text": _TEXTS[k % 3].format(d=f"day {k}").replace(" the ", " the zarquon "),
             "speaker": "Ann" if k % 2 else "Bob", "session_id": f"s{k // 6}"} for k in range(n)]


def _terms(mem: Memory) -> dict[int, tuple]:
    h = mem.engine.state().life().hier
    return {sid: s.terms for sid, s in h.semantics.items()}


def _one_object_per_stem(terms: dict[int, tuple]) -> bool:
    seen: dict[int, int] = {}
    return all(seen.setdefault(t, id(t)) == id(t) for ts in terms.values() for t in ts)


def test_stem_terms_is_the_tuple_with_shared_ints():
    a = stem_terms([70_000 + k for k in range(5)])
    b = stem_terms(list(dict.fromkeys([70_004, 70_000, 70_004, 70_009])))
    assert a == tuple(range(70_000, 70_005)) and b == (70_004, 70_000, 70_009) and type(a) is tuple
    assert b[0] is a[4] and b[1] is a[0]


def test_semantics_share_their_terms_ints_live_and_reopened(tmp_path):
    path = str(tmp_path / "s.db")
    with Memory(path) as mem:
        mem.add_many(_items(60))
        mem.consolidate("deep")
        live = _terms(mem)
    assert live and sum(len(t) for t in live.values()) > len({t for ts in live.values() for t in ts})
    assert max(t for ts in live.values() for t in ts) > 256 and _one_object_per_stem(live)
    with Memory(path) as mem:
        again = _terms(mem)
    assert again == live and _one_object_per_stem(again)
