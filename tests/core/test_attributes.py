"""The one attribute extractor (hippo.text.attributes) and the supersedes links truth draws from it.

Every case is synthetic text written for the test; each one pins a mistake a review of real conversations found
(a mark no later message justified) or a statement a correct mark needs."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

import hippo
from hippo.base.errors import InvalidInput
from hippo.text import attributes
from hippo.text.attributes import Statement, extract


def utc(*a) -> datetime:
    return datetime(*a, tzinfo=timezone.utc)


def said(text: str, speaker: str | None = "Ana") -> set[tuple[str, str, str, bool]]:
    return {(s.entity, s.attribute, s.value, s.negated) for s in extract(text, speaker)}


def links(mem: hippo.Memory) -> list[tuple[str, str, str, str]]:
    return [(c["attribute"], c["old_value"], c["new_value"], c["kind"])
            for c in mem.contradictions(include_updates=True)]


# -- no statement where a trigger word is used in another sense (round 1: 100 of 100 sampled marks) ------------

@pytest.mark.parametrize("text", [
    "Let's work together to make a real difference in the neighbourhood.",
    "I usually work during regular hours, but sometimes I bring work home too.",
    "You've worked so hard on this, keep going!",
    "I'm not sure which hook will work best, can you help me choose?",
    "It took a lot of work, but seeing the impact on the community was worth it.",
    "I'm trying to fix this KeyError in my transaction handler ->-> 2,21",
    "The probability of drawing the first ace is 4/52, and 51 cards are left.",
    "Visit the site to check that everything is working as expected.",
    "My cousin is flying to Lisbon for a conference.",
    "Have you ever been to Porto? The food is amazing.",
    "My neighbour just bought a Clio.",
    "I just resumed my Audible subscription to get the audiobooks.",
])
def test_no_statement_from_a_word_in_another_sense(text):
    assert extract(text, "Ana") == []


@pytest.mark.parametrize("text", [
    "Do I live in Boston or in Cambridge, legally speaking?",
    "If I moved to Denver I would need a car.",
    "I'm thinking of moving to Denver next year.",
    "Should I work at Globex or at Initech?",
])
def test_questions_about_oneself_and_hypotheticals_state_nothing(text):
    assert [s for s in extract(text, "Ana") if s.attribute in ("residence", "employer")] == []


def test_the_result_type_carries_subject_attribute_value_cue_negation_and_provenance():
    text = "Hi! We finally relocated to Denver last month."
    (st,) = extract(text, "Ana")
    assert isinstance(st, Statement)
    assert (st.entity, st.attribute, st.value, st.update, st.negated, st.first_person) == \
        ("ana", "residence", "Denver", True, False, True)
    assert st.sentence == "We finally relocated to Denver last month."
    assert text[st.span[0]:st.span[1]].startswith("Denver")
    assert st.norm == "denver"
    with pytest.raises(InvalidInput, match="text"):
        extract(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="speaker"):
        extract("I live in Oslo.", 3)  # type: ignore[arg-type]


def test_a_message_without_speaker_is_the_unnamed_speakers():
    assert said("I live in Oslo.", None) == {("", "residence", "Oslo", False)}


@pytest.mark.parametrize("text, want", [
    ("I'm not in Utrecht anymore, we moved to Gdansk.",
     {("ana", "residence", "Utrecht", True), ("ana", "residence", "Gdansk", False)}),
    ("I quit being a pharmacist; I'm working as a data analyst these days.",
     {("ana", "occupation", "pharmacist", True), ("ana", "occupation", "data analyst", False)}),
    ("Marcus and I broke up; I'm seeing someone new, Ines.",
     {("ana", "partner", "Marcus", True), ("ana", "partner", "Ines", False)}),
    ("Sad news, Ziggy passed away. We have a new kitten now, Noodle.",
     {("ana", "pet*", "Ziggy", True), ("ana", "cat_name", "Noodle", False)}),
    ("Since I lost my job at Door Dash, things have been tough.", {("ana", "employer", "Door Dash", True)}),
    ("Thanks! Now that I'm an assistant manager- it's a stepping stone.",
     {("ana", "occupation", "assistant manager", False)}),
    ("The Atlas deadline got pushed to June 14.", {("atlas", "deadline", "June 14", False)}),
    ("I take all my photos with my iPhone 13.", {("ana", "phone", "iPhone 13", False)}),
    ("Sold the Kuga and bought a Sandero.", {("ana", "car", "Sandero", False)}),
])
def test_statements_and_negations(text, want):
    assert said(text) == want


@pytest.mark.parametrize("text, want", [
    ("I've increased my snack budget to $65, so I can order cupcakes.", ("snack_budget", "$65")),
    ("I'm trying to stay within my book budget of $35 this month.", ("book_budget", "$35")),
    ("I'm close to my $600 annual budget for sneakers.", ("annual_budget", "$600")),
    ("I'm deciding how to allocate my $60 book budget for April to June.", ("book_budget_for_april_june", "$60")),
    ("I've increased my April-June book budget to $75.", ("book_budget_for_april_june", "$75")),
    ("We increased our grocery budget to $500 monthly in September, and later to $550.",
     ("grocery_budget", "$550")),
    ("I've reduced my work hours from 50 to 42 weekly.", ("work_hours", "42 weekly")),
    ("I have a Zoom call with the creative director on April 21 at 3 PM.",
     ("zoom_call_with_creative_director_time", "April 21 at 3 PM")),
])
def test_amounts_and_scheduled_times_are_attributes(text, want):
    assert {(s.attribute, s.value) for s in extract(text, "Ana")} == {want}


@pytest.mark.parametrize("text", [
    "My budget is $400 for the trip.",          # a bare budget is one of many
    "My point is 2, not 3.",
    "My son is 12 and my daughter is 9.",
    "I have a meeting on Monday at 3 PM.",      # a bare meeting is one of many
])
def test_vague_things_are_no_attributes(text):
    assert extract(text, "Ana") == []


def test_single_and_multi_valued_attributes():
    assert attributes.single_valued("residence") and attributes.single_valued("snack_budget")
    assert attributes.single_valued("favorite_food") and attributes.single_valued("dog_name")
    assert not attributes.single_valued("likes") and not attributes.single_valued("son_name")
    assert attributes.matches("cat_name", ("pet*",)) and not attributes.matches("son_name", ("pet*",))
    assert attributes.matches("favorite_color", ("favorite*",)) and attributes.matches("dog_name", ("*_name",))


def test_question_targets():
    assert attributes.query_targets("What did John recently get promoted to?") == (["occupation"], {"john"})
    assert attributes.query_targets("What does Ann do for a living now?")[0][:2] == ["occupation", "employer"]
    assert "pet*" in attributes.query_targets("What is Maya's pet called now?")[0]
    with pytest.raises(InvalidInput, match="query"):
        attributes.query_targets(None)  # type: ignore[arg-type]


# -- links: a mark only where a later message restates the same attribute of the same subject ------------------

def test_an_assistants_first_person_text_makes_no_link():
    mem = hippo.Memory()
    mem.add("I live in Boston, the harbour is lovely.", role="assistant", speaker="assistant",
            timestamp=utc(2024, 1, 1))
    mem.add("I moved to Denver last week.", role="assistant", speaker="assistant", timestamp=utc(2024, 2, 1))
    assert links(mem) == []
    mem.add("I live in Boston.", role="user", speaker="user", timestamp=utc(2024, 3, 1))
    mem.add("I moved to Denver.", role="user", speaker="user", timestamp=utc(2024, 4, 1))
    assert links(mem) == [("residence", "boston", "denver", "update")]


def test_chat_that_only_uses_trigger_words_makes_no_link():
    mem = hippo.Memory()
    for k, text in enumerate(["Let's work together on this!", "You've worked so hard, keep going.",
                              "Thanks, I'll keep working hard on it.", "My team and I hit it off."]):
        mem.add(text, speaker="Nate", timestamp=utc(2023, 1, 1 + k))
    assert links(mem) == []


def test_a_value_that_stops_holding_supersedes_its_statement():
    mem = hippo.Memory()
    a = mem.add("Our cat Biscuit knocked a glass off the table.", speaker="Ana", timestamp=utc(2023, 1, 1))
    b = mem.add("Sad news, Biscuit passed away.", speaker="Ana", timestamp=utc(2023, 3, 1))
    (c,) = mem.contradictions(include_updates=True)
    assert (c["old_id"], c["new_id"], c["attribute"], c["kind"]) == (a.id, b.id, "cat_name", "update")
    assert mem.search("What is Ana's cat called?", k=3)[0].superseded_by in (b.id, None)


def test_a_scheduled_time_is_superseded_only_when_the_change_is_said():
    mem = hippo.Memory()
    mem.add("I have a call with the landlord on May 3 at 2 PM.", speaker="user", timestamp=utc(2024, 4, 1))
    mem.add("I have a call with the landlord on May 10 at 2 PM.", speaker="user", timestamp=utc(2024, 4, 2))
    assert links(mem) == []  # a second call, not a correction of the first
    mem.add("I moved the call with the landlord to May 12 at 4 PM.", speaker="user", timestamp=utc(2024, 4, 3))
    assert links(mem) == [("call_with_landlord_time", "may 10 at 2 pm", "may 12 at 4 pm", "update")]


def test_amounts_link_by_their_numbers_and_periods():
    mem = hippo.Memory()
    mem.add("I've increased my grocery budget to $550 monthly.", speaker="user", timestamp=utc(2024, 9, 1))
    mem.add("My grocery budget of $550/month is fine for now.", speaker="user", timestamp=utc(2024, 9, 5))
    assert links(mem) == []  # the same amount, said two ways
    mem.add("I'm within my book budget of $35.", speaker="user", timestamp=utc(2024, 9, 6))
    mem.add("I'm deciding how to spend my $60 book budget for April to June.", speaker="user",
            timestamp=utc(2024, 9, 7))
    assert links(mem) == []  # budgets of two periods
    mem.add("I've adjusted the grocery budget to $600.", speaker="user", timestamp=utc(2024, 9, 8))
    # the amount and its restatement are both replaced
    assert links(mem) == [("grocery_budget", "550 monthly", "600", "update"),
                          ("grocery_budget", "550 month", "600", "update")]


def test_deadlines_that_differ_by_month_are_different():
    mem = hippo.Memory()
    mem.add("Our deadline for Orion is April 28.", speaker="Ana", timestamp=utc(2023, 7, 10))
    mem.add("They moved the Orion deadline to October 28, ugh.", speaker="Ana", timestamp=utc(2023, 8, 23))
    assert links(mem) == [("deadline", "april 28", "october 28", "update")]


def test_profiles_and_truth_read_the_same_statements():
    mem = hippo.Memory()
    mem.add("I work at Globex.", speaker="Ann", timestamp=utc(2023, 1, 1))
    mem.add("I switched jobs, now I work at Hooli.", speaker="Ann", timestamp=utc(2023, 3, 1))
    mem.add("I'm not at Hooli anymore.", speaker="Ann", timestamp=utc(2023, 5, 1))
    prof = mem.profile("Ann")
    assert [v["value"] for v in prof["attributes"]["employer"]] == ["Globex", "Hooli"]  # a negation is no value
    assert [(c["old_value"], c["new_value"]) for c in mem.contradictions(include_updates=True)] == \
        [("globex", "hooli"), ("hooli", "(no longer) hooli")]
