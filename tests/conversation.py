"""The small two-person conversation several test packages seed a store with (CLI, MCP, LangChain, both store
backends): four sessions, two speakers, a few facts that change over time. Each package takes the turns it needs."""

from __future__ import annotations

from datetime import datetime, timezone

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)

# (session, speaker, text)
CONVERSATION = [
    ("s1", "Ann", "I just got back from a hiking trip in the Dolomites."),
    ("s1", "Bob", "Nice! Did you see any ibex up there?"),
    ("s1", "Ann", "Yes, three ibex near the Tre Cime refuge."),
    ("s1", "Bob", "My sister adopted a beagle named Pixel last week."),
    ("s2", "Ann", "I started learning the cello in January."),
    ("s2", "Bob", "How are the cello lessons going?"),
    ("s2", "Ann", "Slowly, my teacher says my bow hold needs work."),
    ("s2", "Bob", "I am reading a novel about lighthouse keepers."),
    ("s3", "Ann", "The beagle Pixel chewed my sister's slippers."),
    ("s3", "Bob", "Classic beagle behaviour."),
    ("s3", "Ann", "I moved to Lisbon last month for the new job."),
    ("s3", "Bob", "Lisbon suits you; how is the commute?"),
    ("s4", "Ann", "The commute is a 20 minute tram ride along the river."),
    ("s4", "Bob", "I finally fixed the leaking kitchen tap myself."),
    ("s4", "Ann", "My cello teacher moved to Porto, so I take lessons online now."),
    ("s4", "Bob", "Pixel the beagle graduated from puppy school!"),
]


def remind_five_mornings(memory) -> None:
    """The same question asked on five mornings, then the message that answers it: a recall holds the question once
    (five times written) and the answer (``hippo.engine.pack``, a context holds each text once)."""
    for day in range(1, 6):
        memory.add("Can you remind me when my dentist appointment is?", role="user", session_id=f"d{day}",
                   timestamp=f"2024-03-0{day}T09:00:00Z")
    memory.add("I moved my dentist appointment to May 10.", role="user", session_id="d9",
               timestamp="2024-03-09T09:00:00Z")


def consolidated_days(memory) -> None:
    """Two hundred short turns about five recurring topics over ten sessions, consolidated: a history whose recall
    units (episodes, semantics, themes) hold more text than a small context leaves room for."""
    topics = ["cello lessons", "the beagle Pixel", "the Lisbon tram", "the kitchen tap", "the lighthouse novel"]
    for i in range(200):
        memory.add(f"Day {i}: more news about {topics[i % 5]}, and how {topics[(i * 3) % 5]} went this week.",
                   speaker="Ann" if i % 2 else "Bob", session_id=f"s{i // 20}")
    memory.consolidate()


# words to draw random sentences of many distinct messages from (a hierarchy's tests need texts that differ)
NOUNS = ("beagle pottery kiln teapot garden tomato bicycle marathon violin guitar recipe lasagna passport flight hotel "
         "museum camera lens novel chapter printer laptop budget invoice").split()
VERBS = "bought fixed painted cooked booked visited repaired sold borrowed finished".split()
