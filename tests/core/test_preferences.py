"""The user's stated preferences answer a request for advice.

References: hand-labelled sentences and questions for the two detectors; a brute-force scan of every stored
message for the cached, incrementally extended set of preference rows (through appends, a deletion and a reopen);
the same store with the prior switched off for the exact factor each score gets, and for the questions that must
leave every score as it was."""

from __future__ import annotations

import pytest

from hippo import Memory
from hippo.base.config import ABLATIONS
from hippo.base.errors import InvalidInput
from hippo.engine import evidence
from hippo.text.directives import asks_for_advice, states_preference
from hippo.text.query import analyze

PREFS = [
    "I prefer e-books for their portability, but I also enjoy print for collectible editions.",
    "I'm kinda concerned about using AI for hiring, so I prefer a balanced approach.",
    "I'd rather keep human oversight in the final round.",
    "I would much rather walk than drive.",
    "I really prefer writing in the mornings between 7-9 AM.",
    "I\u2019d still prefer print for gifts.",
    "My preference is Excel, for control.",
]
NOT_PREFS = [
    "We prefer cats.",                       # not the writer alone
    "She prefers tea.",
    "Use a list rather than a dict here.",
    "Preferably before noon.",
    "I preferred the old logo.",            # a past taste, not a standing one
    "",
]
ADVICE = [
    "I'm looking to add some new books to my collection. What would you suggest?",
    "How should I approach the editing steps?",
    "Can you recommend a few sneakers I might like?",
    "Can you help me plan my writing sessions for the upcoming week?",
    "How can I track the status of each step in my deployment workflow?",
    "Can you explain step by step how to calculate the odds?",                  # to the assistant: "you"
    "If I want to appoint an executor, what should I consider when choosing?",  # "when" is not a time here
]
RECOUNT = [
    "What did I say about e-books?",
    "When did I start the budget tracker?",
    "Can you summarize how my reading goals developed?",
    "Have I mentioned a dining out budget?",
    "Which books did I mention I'd buy?",
    "What is my favourite colour?",
    "When should I visit the store?",
    "What would Caroline suggest for her garden?",                              # about someone else
    "Can you tell me which book Sam recommended to me?",                        # what was suggested, not a request
]


@pytest.mark.parametrize("text,expected", [(t, True) for t in PREFS] + [(t, False) for t in NOT_PREFS])
def test_stated_preferences(text, expected):
    assert states_preference(text) is expected


@pytest.mark.parametrize("question,expected", [(q, True) for q in ADVICE] + [(q, False) for q in RECOUNT])
def test_requests_for_advice(question, expected):
    assert asks_for_advice(question) is expected


def test_a_request_leaves_its_advice_words_out():
    # hand-computed: content words minus stopwords, then the first-person words; a request's "suggest" / "advice"
    # are its form, a recounting question's "recommend" its subject
    assert analyze("Can you suggest some sneakers I might like?").keywords == ["sneakers", "i"]
    assert analyze("What advice would you give me about sneakers?").keywords == ["sneakers", "me"]
    assert analyze("What book did Melanie recommend?").keywords == ["book", "Melanie", "recommend"]
    assert analyze("Can you suggest some sneakers I might like?", self_reference=False).keywords == ["suggest",
                                                                                                      "sneakers"]


def test_non_text_is_neither():
    assert not states_preference(None)  # type: ignore[arg-type]
    assert not asks_for_advice(None)  # type: ignore[arg-type]


def _brute(mem: Memory) -> list[int]:
    """Rows of stored non-assistant messages that state a preference, by reading every message."""
    idx = mem.engine.state().index
    roles = {it.id: it.role for it in mem.list()}
    return [r for r in range(len(idx))
            if roles[int(idx.ids.view[r])] not in ("assistant", "tool") and states_preference(idx.text_of(r))]


def _chat(mem: Memory, k0: int, n: int) -> dict[str, list[int]]:
    ids: dict[str, list[int]] = {"pref": [], "other": []}
    for k in range(k0, k0 + n):
        ids["other"].append(mem.add(f"Step {k} of the reading plan: the shelf, rather full.", role="user").id)
        ids["other"].append(mem.add(f"Here is step {k}. I prefer to be brief.", role="assistant").id)
        if k % 3 == 0:
            ids["pref"].append(mem.add(PREFS[k // 3 % len(PREFS)], role="user").id)
    return ids


def test_preference_rows_follow_appends_deletes_and_reopen(tmp_path):
    path = tmp_path / "prefs.db"
    with Memory(path) as mem:
        ids = _chat(mem, 0, 10)
        assert evidence.preference_rows(mem.engine.state()).tolist() == _brute(mem)
        assert len(_brute(mem)) == len(ids["pref"]) == 4          # the assistant's "I prefer" is not the user's
        _chat(mem, 10, 8)                                          # extended with the appended rows only
        assert evidence.preference_rows(mem.engine.state()).tolist() == _brute(mem)
        mem.delete([ids["pref"][0], ids["other"][1]])             # rows renumbered: rebuilt
        assert evidence.preference_rows(mem.engine.state()).tolist() == _brute(mem)
    with Memory(path) as mem:
        assert evidence.preference_rows(mem.engine.state()).tolist() == _brute(mem)


BOOKS = [
    ("user", "I prefer e-books for my collection, they are light to carry."),
    ("assistant", "Both have their place; a reader app keeps a library light."),
    ("user", "The book club met on Tuesday and we talked about the new collection at the library."),
    ("user", "My collection of travel guides keeps growing, I added two new books from the market."),
    ("user", "I moved the books to the new shelf in the hall."),
    ("assistant", "I prefer to suggest short books for trips."),
]


def _books(share: float | None = None) -> Memory:
    mem = Memory(None, config=None if share is None else {"retrieval": {"asker_preferences": share}})
    for role, text in BOOKS:
        mem.add(text, role=role)
    return mem


def _scores(mem: Memory, question: str) -> dict[str, float]:
    return {h.text: h.score for h in mem.search(question, k=20)}


def test_a_request_values_the_stated_preferences_at_the_share():
    question = "I want to add some new books to my collection. What would you suggest?"
    on, off = _books(), _books(0.0)
    share = on.engine.config.retrieval.asker_preferences
    assert share == 0.6
    got, ref = _scores(on, question), _scores(off, question)
    assert got.keys() == ref.keys() and BOOKS[0][1] in got
    for text, score in got.items():
        factor = 1 + share if text == BOOKS[0][1] else 1.0   # the assistant's "I prefer" is not a preference
        assert score == pytest.approx(ref[text] * factor)
    # without the prior the user's preference is not the first hit; with it, it is
    assert max(ref, key=ref.get) != BOOKS[0][1]
    assert max(got, key=got.get) == BOOKS[0][1]
    on.close(), off.close()


def test_a_small_context_holds_the_preference_only_with_the_prior():
    question = "I want to add some new books to my collection. What would you suggest?"
    on, off = _books(), _books(0.0)
    budget = 30                            # room for one of the user's lines and the assistant's short one
    with_it = [m.text for m in on.recall(question, budget_tokens=budget).messages]
    without = [m.text for m in off.recall(question, budget_tokens=budget).messages]
    assert BOOKS[0][1] in with_it
    assert BOOKS[0][1] not in without
    on.close(), off.close()


@pytest.mark.parametrize("question", [
    "What did I say about new books for my collection?",     # recounts
    "What would Sam suggest for new books in the collection?",  # about someone else
    "Which new books did Sam add to the collection?",         # about someone else
])
def test_other_questions_leave_every_score_as_it_was(question):
    on, off = _books(), _books(0.0)
    got, ref = _scores(on, question), _scores(off, question)
    assert got.keys() == ref.keys()
    assert all(got[t] == pytest.approx(ref[t]) for t in got)
    on.close(), off.close()


def test_search_many_without_priors_leaves_preferences_out():
    question = "I want to add some new books to my collection. What would you suggest?"
    on, off = _books(), _books(0.0)
    a = {h.text: h.score for h in on.search_many(["default"], question, k=20, priors=False)}
    b = {h.text: h.score for h in off.search_many(["default"], question, k=20, priors=False)}
    assert a.keys() == b.keys() and all(a[t] == pytest.approx(b[t]) for t in a)
    # with the priors, the preference's score is the same store's without this one times 1.6; the others equal
    c = {h.text: h.score for h in on.search_many(["default"], question, k=20)}
    d = {h.text: h.score for h in off.search_many(["default"], question, k=20)}
    assert c.keys() == d.keys()
    assert all(c[t] == pytest.approx(d[t] * (1.6 if t == BOOKS[0][1] else 1.0)) for t in c)
    on.close(), off.close()


def test_config_validation_and_ablation():
    for bad in (-0.1, 4.5):
        with pytest.raises(InvalidInput, match="asker_preferences"):
            Memory(None, config={"retrieval": {"asker_preferences": bad}})
    assert ABLATIONS["no-asker-preferences"] == {"retrieval": {"asker_preferences": 0.0}}
