"""Scripted conversations in which facts change over time, and the probes that score a memory on them.

Used by ``hippo bench temporal``. :func:`generate` builds, from one seeded :class:`random.Random`, a few
multi-session conversations between two or three friends. Over dated sessions each speaker

* states facts about themselves (where they live, employer, job, partner, pet, phone, favourite food, salary,
  number of houseplants, car, a project's deadline) and later changes them one to three times, in the ways
  people say it: an update verb ("I moved to ...", "we finally relocated to ..."), a correction that names the
  old value ("I'm not at X anymore, I joined Y"), or a plain statement of the new state without any update
  verb ("our flat in Y finally has heating"); sometimes the value is restated later unchanged;
* tells about things that happened to them, often with a relative time expression ("last week I ran my first
  marathon", "two days ago we adopted a puppy", "on 3 March ..."), so that the order in which events were told
  differs from the order in which they happened in about half of the ordering probes.

Between these, the speakers chat about nothing in particular, react to each other, and mention the same values
in other contexts ("my cousin is flying to Lisbon", "my dad still uses a Pixel 7").

An :class:`UpdateProbe` asks for a current value ("Where does Maya live now?") and knows the current value, the
superseded values and the turns that stated each. An :class:`OrderProbe` asks for the order of one person's
events and knows the true order (by event time) and, for every event, a key phrase that occurs in exactly one
turn of its conversation, the time expression used and the window of days any reasonable reading of that
expression allows. The windows of one probe's events are disjoint, so the true order does not depend on how a
reader interprets "last week" or "last Friday".

Everything is deterministic in ``seed``; :meth:`ProbeSet.validate` checks every probe against its own script.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

DEFAULT_SEED = 20240611
DEFAULT_CONVERSATIONS = 6

# ------------------------------------------------------------------------------------------------ data types


@dataclass(frozen=True)
class Turn:
    """One message of a scripted conversation.

    ``kind`` is ``"statement"`` (states a value of the update probe ``ref``), ``"event"`` (tells an event of
    the order probe ``ref``), ``"mention"`` (names a probe's value in another context; ``ref`` is that probe)
    or ``"chat"`` (neither).
    """

    index: int
    speaker: str
    text: str
    timestamp: datetime
    session_id: str
    kind: str = "chat"
    ref: str | None = None


@dataclass(frozen=True)
class Statement:
    """A turn that states a value of an update probe; ``style`` is ``initial``, ``change`` or ``restate``."""

    turn: int
    value: str
    style: str


@dataclass(frozen=True)
class UpdateProbe:
    """A fact that changed: ``current`` is the value stated last, ``superseded`` the earlier values (oldest
    first); ``statements`` are the turns that state a value, in conversation order."""

    id: str
    conversation: str
    person: str
    attribute: str
    question: str
    current: str
    superseded: tuple[str, ...]
    statements: tuple[Statement, ...]

    @property
    def values(self) -> tuple[str, ...]:
        """Every value the probe's fact ever had, oldest first."""
        return (*self.superseded, self.current)


@dataclass(frozen=True)
class OrderEvent:
    """One event of an ordering probe.

    ``event_time`` is the canonical reading of ``expression`` against the telling turn's timestamp (noon UTC of
    that day); ``earliest`` .. ``latest`` (inclusive) is the window of days any reasonable reading allows.
    """

    key: str
    turn: int
    expression: str
    event_time: datetime
    earliest: date
    latest: date


@dataclass(frozen=True)
class OrderProbe:
    """Events of one person; ``events`` are in true (event-time) order, ``entity`` is the name to pass to
    ``Memory.timeline``."""

    id: str
    conversation: str
    person: str
    entity: str
    question: str
    events: tuple[OrderEvent, ...]

    @property
    def true_order(self) -> tuple[str, ...]:
        return tuple(e.key for e in self.events)

    @property
    def told_order(self) -> tuple[str, ...]:
        """The key phrases in the order the events were told (message time)."""
        return tuple(e.key for e in sorted(self.events, key=lambda e: e.turn))


@dataclass(frozen=True)
class Conversation:
    id: str
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]

    def sessions(self) -> list[list[Turn]]:
        """Turns grouped by session, in conversation order."""
        groups: list[list[Turn]] = []
        for t in self.turns:
            if not groups or groups[-1][0].session_id != t.session_id:
                groups.append([])
            groups[-1].append(t)
        return groups

    @staticmethod
    def message(turn: Turn) -> dict:
        """The ``Memory.add_many`` item for ``turn``: what a user of the library would store."""
        return {"text": turn.text, "speaker": turn.speaker, "timestamp": turn.timestamp,
                "session_id": turn.session_id}


@dataclass(frozen=True)
class ProbeSet:
    seed: int
    conversations: tuple[Conversation, ...]
    updates: tuple[UpdateProbe, ...]
    orders: tuple[OrderProbe, ...]

    def conversation(self, conversation_id: str) -> Conversation:
        for c in self.conversations:
            if c.id == conversation_id:
                return c
        raise KeyError(conversation_id)

    def validate(self) -> None:
        """Check every probe against its own script; raises ``ValueError`` naming the first inconsistency.

        * an update probe's statements are in time order, each contains its value, the last states ``current``,
          ``superseded`` lists the earlier distinct values in order; every turn of the conversation that names
          one of the probe's values is one of its statements or a mention tagged with it;
        * an order probe's events are sorted by event time, each key phrase occurs in exactly one turn (the
          event's, spoken by the person), the expression is in that turn, and the events' windows are disjoint
          and contain their canonical days.
        """
        for conv in self.conversations:
            for k, t in enumerate(conv.turns):
                if t.index != k:
                    raise ValueError(f"{conv.id}: turn {k} has index {t.index}")
                if k and t.timestamp <= conv.turns[k - 1].timestamp:
                    raise ValueError(f"{conv.id}: turn {k} is not after turn {k - 1}")
        for p in self.updates:
            turns = self.conversation(p.conversation).turns
            prev = None
            seen: list[str] = []
            for s in p.statements:
                t = turns[s.turn]
                if t.kind != "statement" or t.ref != p.id or t.speaker != p.person:
                    raise ValueError(f"{p.id}: turn {s.turn} is not a statement of {p.person}")
                if not contains(t.text, s.value):
                    raise ValueError(f"{p.id}: turn {s.turn} does not contain {s.value!r}")
                if prev is not None and t.timestamp <= prev:
                    raise ValueError(f"{p.id}: statements out of order")
                prev = t.timestamp
                if s.value not in seen:
                    seen.append(s.value)
            if p.statements[-1].value != p.current or tuple(seen[:-1]) != p.superseded or seen[-1] != p.current:
                raise ValueError(f"{p.id}: current / superseded values disagree with the statements")
            own = {s.turn for s in p.statements}
            for t in turns:
                if any(contains(t.text, v) for v in p.values) and t.index not in own and t.ref != p.id:
                    raise ValueError(f"{p.id}: turn {t.index} names a value but is not tagged with the probe")
        for o in self.orders:
            turns = self.conversation(o.conversation).turns
            times = [e.event_time for e in o.events]
            if times != sorted(times) or len(set(times)) != len(times):
                raise ValueError(f"{o.id}: events are not in strict event-time order")
            for e in o.events:
                holders = [t.index for t in turns if e.key.lower() in t.text.lower()]
                if holders != [e.turn]:
                    raise ValueError(f"{o.id}: key phrase {e.key!r} occurs in turns {holders}")
                t = turns[e.turn]
                if t.kind != "event" or t.ref != o.id or t.speaker != o.person:
                    raise ValueError(f"{o.id}: turn {e.turn} is not an event of {o.person}")
                if e.expression.lower() not in t.text.lower():
                    raise ValueError(f"{o.id}: expression {e.expression!r} not in turn {e.turn}")
                if not e.earliest <= e.event_time.date() <= e.latest or e.event_time.date() > t.timestamp.date():
                    raise ValueError(f"{o.id}: event {e.key!r} outside its window")
            for a, b in zip(o.events, o.events[1:]):
                if not a.latest < b.earliest:
                    raise ValueError(f"{o.id}: windows of {a.key!r} and {b.key!r} overlap")


def contains(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` as whole words, ignoring case ("Lyon" is not in "Lyons")."""
    return re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text, re.IGNORECASE) is not None


# --------------------------------------------------------------------------------------------------- content

SPEAKERS = ("Maya", "Tom", "Priya", "Lukas", "Amara", "Diego", "Hana", "Oliver", "Sofia", "Kwame", "Elena",
            "Ravi", "Greta", "Samir", "Ingrid", "Mateo", "Zainab", "Callum")


@dataclass(frozen=True)
class Attribute:
    """A fact about a person that can change. Templates use ``{v}`` (value), ``{a_v}`` (value with "a"/"an"),
    ``{old}`` / ``{a_old}`` (the previous value), ``{proj}`` (the project of a deadline)."""

    name: str
    values: tuple[str, ...]
    questions: tuple[str, ...]
    initial: tuple[str, ...]
    change: tuple[str, ...]
    restate: tuple[str, ...]
    mention: tuple[str, ...]
    ordered: str = ""          # "up" when successive values grow (salaries), "later" for deadlines


def _dates(months: Sequence[str], days: Sequence[int]) -> tuple[str, ...]:
    return tuple(f"{m} {d}" for m in months for d in days)


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        "city",
        ("Lisbon", "Porto", "Valencia", "Lyon", "Leeds", "Bristol", "Utrecht", "Gdansk", "Tallinn", "Seattle",
         "Denver", "Austin", "Toronto", "Melbourne", "Auckland", "Dublin", "Glasgow", "Bologna"),
        ("Where does {p} live now?", "Which city is {p} living in these days?", "Where is {p} based at the moment?"),
        ("I live in {v}, it's a good place for me.", "Our flat in {v} is tiny but I love the neighbourhood.",
         "Home is {v} for me, I can walk everywhere."),
        ("I moved to {v}, still unpacking boxes.", "We finally relocated to {v}! The move was exhausting.",
         "I'm not in {old} anymore, we moved to {v}.", "Big change: I live in {v} now.",
         "Writing this from my new place in {v}, the movers left an hour ago.",
         "Our flat in {v} finally has working heating, so cosy."),
        ("The tram in {v} was packed this morning.", "Loving the farmers market here in {v}."),
        ("My cousin is flying to {v} for a conference.", "Have you ever been to {v}? The food is amazing.",
         "I read an article about rent prices in {v}.", "There's a documentary about {v} on tonight."),
    ),
    Attribute(
        "employer",
        ("Northwind", "Brightlane", "Kestrel Labs", "Bluepeak", "Orchid Health", "Tidewater Bank", "Copperleaf",
         "Halcyon Games", "Summit Logistics", "Greenway Energy", "Lumen Analytics", "Redwood Press"),
        ("Where does {p} work now?", "Which company is {p} working for these days?", "Who is {p}'s current employer?"),
        ("I work at {v}, mostly on the operations side.", "I've been at {v} since I finished my studies.",
         "Things at {v} are calm this month."),
        ("I'm not at {old} anymore, I joined {v}.", "Today was my first day at {v}!",
         "I accepted the offer from {v} and started right away.", "Quick update: I left {old}, I'm with {v} now.",
         "My new team at {v} is lovely."),
        ("Long day at {v} again.", "The coffee at {v} is terrible but the people are nice."),
        ("My cousin interviewed at {v} but didn't get it.", "Did you see {v} in the news?",
         "A guy from {v} sat next to me on the train."),
    ),
    Attribute(
        "job",
        ("nurse", "paramedic", "architect", "pharmacist", "data analyst", "sous chef", "bus driver",
         "primary school teacher", "physiotherapist", "carpenter", "translator", "lab technician"),
        ("What is {p}'s current job?", "What does {p} do for a living now?"),
        ("I work as {a_v}.", "Being {a_v} is tiring but I like it."),
        ("I retrained and I'm {a_v} now.", "I quit being {a_old}; I'm working as {a_v} these days.",
         "New chapter: I got hired as {a_v}!", "Started my first shift as {a_v} yesterday."),
        ("Another long shift as {a_v}, I'm wiped.",),
        ("My neighbour is {a_v} too.", "I watched a documentary about {a_v} in Alaska."),
    ),
    Attribute(
        "partner",
        ("Daniel", "Chloe", "Marcus", "Ines", "Felix", "Nadia", "Jonah", "Leila", "Oscar", "Rosa", "Theo", "Yuki"),
        ("Who is {p}'s partner now?", "What is the name of {p}'s partner?", "Who is {p} dating these days?"),
        ("My partner {v} is cooking dinner tonight.", "{v} and I have been together for a while now."),
        ("{old} and I broke up; I'm seeing someone new, {v}.", "I've started dating {v}, we met at a friend's party.",
         "I moved in with my new partner {v}.", "Things with {old} ended. {v} and I are together now."),
        ("{v} surprised me with theatre tickets.", "Weekend plans with {v}: hiking and pizza."),
        ("{v} from the office brought cake today.", "I bumped into an old classmate, {v}, at the station."),
    ),
    Attribute(
        "pet",
        ("Biscuit", "Mochi", "Waffles", "Ziggy", "Noodle", "Juniper", "Pickles", "Clementine", "Pretzel",
         "Bramble", "Marmalade", "Gizmo"),
        ("What is {p}'s pet called now?", "What is the name of {p}'s current pet?"),
        ("Our cat {v} knocked a glass off the table again.", "My dog {v} loves the beach."),
        ("We adopted a rescue dog, her name is {v}.", "Sad news, {old} passed away. We have a new kitten now, {v}.",
         "Meet {v}, our new cat!"),
        ("{v} has been sleeping on my keyboard all day.", "Took {v} to the vet, all good."),
        ("The neighbours named their goat {v}, of all things.", "There's a bakery downtown called {v}."),
    ),
    Attribute(
        "phone",
        ("Pixel 7", "Pixel 8", "iPhone 13", "iPhone 15", "Galaxy S22", "Galaxy S24", "Fairphone 4", "Moto G54",
         "Nokia X30", "Xperia 10", "Pixel 6", "iPhone 12", "Galaxy A54", "Redmi Note 12"),
        ("What phone does {p} use now?", "Which phone model does {p} have?"),
        ("My {v} battery barely lasts a day.", "I take all my photos with my {v}."),
        ("My new phone is {a_v}.", "I finally replaced the {old} with {a_v}.",
         "Switched to {a_v} last night, still moving my apps over."),
        ("The camera on the {v} is great in low light.",),
        ("My dad still refuses to upgrade from his {v}.", "Saw an ad for the {v} on the bus."),
    ),
    Attribute(
        "food",
        ("ramen", "tacos", "lasagna", "pho", "paella", "dumplings", "falafel", "sushi", "risotto", "curry laksa",
         "pierogi", "shakshuka"),
        ("What is {p}'s favourite food now?", "What food does {p} like best these days?"),
        ("My favourite food is {v}, I could eat it every day.", "Nothing beats {v}, honestly my favourite."),
        ("I've gone off {old}; {v} is my favourite now.", "New obsession: {v}. Best food ever.",
         "These days my favourite meal is {v}."),
        ("Had {v} again for dinner, still the best.",),
        ("The canteen served {v} today, it was bland.", "My sister is learning to make {v}."),
    ),
    Attribute(
        "salary",
        tuple(f"{n:,}" for n in range(41_500, 96_000, 1_500)),
        ("How much does {p} earn now?", "What is {p}'s salary these days?"),
        ("I make {v} a year before tax.", "My salary is {v}, which is fine for now."),
        ("Got a raise! I'm on {v} now.", "My new salary is {v} a year.", "They bumped my pay from {old} to {v}."),
        ("On {v} a year I still can't afford a flat downtown.",),
        ("My brother earns {v}, he told me at dinner.", "The car they tried to sell me costs {v}."),
        ordered="up",
    ),
    Attribute(
        "plants",
        tuple(f"{n} houseplants" for n in range(5, 41)),
        ("How many houseplants does {p} have now?", "How many plants does {p} own at the moment?"),
        ("I have {v} at home, my flat is basically a greenhouse.", "Counted them today: {v}."),
        ("I'm up to {v} now, I have a problem.", "Current count: {v}.", "Gave some away to friends, {v} left."),
        ("Watering {v} takes me a whole hour.",),
        ("My aunt keeps {v} in her conservatory.", "The garden centre had {v} in the window."),
    ),
    Attribute(
        "car",
        ("Yaris", "Corolla", "Civic", "Octavia", "Qashqai", "Model 3", "Prius", "Outback", "Ioniq 5", "Clio",
         "Kuga", "Sandero"),
        ("What car does {p} drive now?", "Which car does {p} have at the moment?"),
        ("I drive {a_v}, nothing fancy.", "My {v} needs new tyres."),
        ("Sold the {old} and bought {a_v}.", "I've got {a_v} now, picked it up yesterday.", "My new car is {a_v}."),
        ("Drove the {v} up to the coast, smooth ride.",),
        ("My neighbour just bought {a_v}.", "{a_V} blocked our driveway this morning."),
    ),
    Attribute(
        "deadline",
        _dates(("March", "April", "May", "June", "September", "October", "November"), (11, 14, 18, 22, 25, 28)),
        ("When is the {proj} deadline now?", "What is the current deadline for the {proj} project?"),
        ("The {proj} project is due on {v}.", "Our deadline for {proj} is {v}."),
        ("The {proj} deadline got pushed to {v}.", "They moved the {proj} deadline to {v}, ugh.",
         "Good news, {proj} is now due {v} instead of {old}.", "{proj} ships on {v} now, final answer from my boss."),
        ("Still aiming for {v} with {proj}, fingers crossed.",),
        ("My dentist appointment is on {v}.", "{v} is my mum's birthday."),
        ordered="later",
    ),
)

PROJECTS = ("Atlas", "Beacon", "Falcon", "Meridian", "Quartz", "Larkspur", "Orion", "Tundra", "Cobalt",
            "Harbor", "Sprout", "Vantage")

CHAT = (
    "Hey! How was your week?", "Not bad, a bit busy.", "It rained all weekend here.",
    "I finally finished that series everyone keeps talking about.", "Any plans for the weekend?",
    "I need a holiday, honestly.", "Did you try that new coffee place?", "My knees hurt from all the stairs.",
    "I've been sleeping badly lately.", "The train was late again this morning.",
    "I'm trying to drink less coffee.", "Work has been a lot.", "We should catch up properly soon.",
    "I started reading a crime novel, can't put it down.", "My mum called, she says hi.",
    "The weather is finally getting nicer.", "I burnt the rice again, classic me.", "Ha, that's so true.",
    "Sorry for the late reply!", "I'm so tired today.", "Let's do a video call next week.",
    "I cleaned the whole flat, feels great.", "Have you been watching the football?",
    "I'm learning a few words of Japanese with an app.", "My laptop keeps freezing.",
    "I went for a long walk by the river.", "Our neighbours are renovating, so much noise.",
    "I found a great podcast about history.", "It's been ages since we talked!", "Good morning!",
    "I bought new running shoes.", "The supermarket was out of eggs.", "I think I'm getting a cold.",
    "My sister's kids stayed over, chaos.", "Funny, I was just thinking about you.", "Same here, honestly.",
    "Nothing much new on my side.", "I've been cooking more at home.", "The internet was down all evening.",
    "I'm repainting the hallway this weekend.", "Traffic was terrible today.", "I missed the bus by a minute.",
)

REACTIONS = (
    "Oh wow, how is it going?", "No way! Tell me more.", "That's big news.", "Congrats!", "Nice, good for you.",
    "How do you feel about it?", "Haha, of course.", "Oh no, sorry to hear.", "Wait, really?", "Amazing!",
    "That sounds like a lot.", "Ooh, exciting.", "I had no idea.", "Fair enough.",
)


@dataclass(frozen=True)
class EventKind:
    key: str                     # occurs verbatim in the telling turn and nowhere else in the conversation
    phrase: str                  # noun phrase used in the question
    templates: tuple[str, ...]   # "{when}" in the middle / end, "{When}" at the start


EVENTS: tuple[EventKind, ...] = (
    EventKind("first marathon", "running a first marathon",
              ("I ran my first marathon {when}, my legs still hurt.", "{When} I ran my first marathon!")),
    EventKind("adopted a puppy", "adopting a puppy",
              ("{When} we adopted a puppy, he chews everything.", "We adopted a puppy {when}.")),
    EventKind("piano lessons", "starting piano lessons",
              ("I started piano lessons {when}.", "{When} I started piano lessons, harder than it looks.")),
    EventKind("driving test", "passing the driving test",
              ("I passed my driving test {when}!", "{When} I finally passed my driving test.")),
    EventKind("broke my wrist", "breaking a wrist",
              ("I broke my wrist {when}, fell off my bike.", "{When} I slipped on ice and broke my wrist.")),
    EventKind("first tattoo", "getting a first tattoo", ("I got my first tattoo {when}, a small fern.",)),
    EventKind("sourdough loaf", "baking a sourdough loaf",
              ("I baked my first sourdough loaf {when}.", "{When} I baked a sourdough loaf from scratch.")),
    EventKind("bungee jump", "doing a bungee jump", ("{When} I did a bungee jump off a bridge, terrifying.",)),
    EventKind("wisdom tooth", "having a wisdom tooth out",
              ("I had a wisdom tooth out {when}, my face is still swollen.",)),
    EventKind("salsa class", "going to a salsa class", ("I went to my first salsa class {when}.",)),
    EventKind("camping trip", "going on a camping trip",
              ("We went on a camping trip to the lakes {when}.", "{When} we got back from a camping trip.")),
    EventKind("jazz concert", "seeing a jazz concert", ("I saw a jazz concert at the old theatre {when}.",)),
    EventKind("bought a kayak", "buying a kayak", ("I bought a kayak {when}, can't wait for summer.",)),
    EventKind("chess tournament", "playing a chess tournament",
              ("I played in a chess tournament {when} and won two games.",)),
    EventKind("vegetable garden", "planting a vegetable garden", ("We planted a vegetable garden {when}.",)),
    EventKind("scuba course", "finishing a scuba course", ("I finished my scuba course {when}.",)),
    EventKind("book club", "joining a book club", ("{When} I joined a book club at the library.",)),
)

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")
_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 10: "ten"}


@dataclass(frozen=True)
class _Reading:
    expression: str
    canonical: date
    earliest: date
    latest: date


def read_expression(kind: str, said: date, arg: int = 0) -> _Reading:
    """The phrase for a time expression of ``kind`` said on ``said``, with its canonical day and the window of
    days any reasonable reading allows (inclusive). Raises ``ValueError`` for an unknown kind or an ``arg`` the
    kind cannot express on that day.

    * ``today``: "this morning"; ``earlier``: "earlier today" (the same day);
    * ``yesterday``; ``day_before``: "the day before yesterday";
    * ``days``: "``arg`` days ago" in words, ``days_digits``: in digits (exact);
    * ``couple``: "a couple of days ago": canonically two days back, two or three allowed;
    * ``last_week``: "last week": the previous Monday..Sunday week; canonically seven days back;
    * ``weeks``: "``arg`` weeks ago": canonically ``7 * arg`` days back, +-3 days; ``fortnight``: "a fortnight
      ago", the same as two weeks;
    * ``month_ago``: "a month ago": canonically 30 days back, 24..37 allowed;
    * ``weekday``: "last <weekday ``arg``>": canonically the most recent such day strictly before ``said``;
      some readers mean the one a week earlier, so the window spans both; ``on_weekday``: "on <weekday>", the
      most recent such day (exact);
    * ``weekend``: "last weekend": canonically the Saturday of the latest weekend that ended before ``said``
      (when said on a weekend day or a Monday, the window also covers the weekend before);
    * ``date``: "on <day> <Month>" ``arg`` days back (exact; the most recent such date);
    * ``ordinal``: "on the <day ordinal>" ``arg`` days back within the same month (exact);
    * ``back_in``: "back in <Month>", ``arg`` calendar months back: the whole month; canonically its 15th.
    """
    def exact(text: str, d: date) -> _Reading:
        return _Reading(text, d, d, d)

    back = timedelta
    if kind == "today":
        return exact("this morning", said)
    if kind == "earlier":
        return exact("earlier today", said)
    if kind == "yesterday":
        return exact("yesterday", said - back(days=1))
    if kind == "day_before":
        return exact("the day before yesterday", said - back(days=2))
    if kind == "days":
        return exact(f"{_NUMBERS[arg]} days ago", said - back(days=arg))
    if kind == "days_digits":
        return exact(f"{arg} days ago", said - back(days=arg))
    if kind == "couple":
        return _Reading("a couple of days ago", said - back(days=2), said - back(days=3), said - back(days=2))
    if kind == "last_week":
        monday = said - back(days=said.weekday()) - back(days=7)
        return _Reading("last week", said - back(days=7), monday, monday + back(days=6))
    if kind in ("weeks", "fortnight"):
        weeks = 2 if kind == "fortnight" else arg
        d = said - back(days=7 * weeks)
        text = "a fortnight ago" if kind == "fortnight" else f"{_NUMBERS[weeks]} weeks ago"
        return _Reading(text, d, d - back(days=3), d + back(days=3))
    if kind == "month_ago":
        return _Reading("a month ago", said - back(days=30), said - back(days=37), said - back(days=24))
    if kind in ("weekday", "on_weekday"):
        d = said - back(days=(said.weekday() - arg) % 7 or 7)
        if kind == "on_weekday":
            return exact(f"on {_WEEKDAYS[arg]}", d)
        return _Reading(f"last {_WEEKDAYS[arg]}", d, d - back(days=7), d)
    if kind == "weekend":
        sunday = said - back(days=(said.weekday() - 6) % 7 or 7)
        saturday = sunday - back(days=1)
        earliest = saturday - back(days=7) if said.weekday() in (0, 5, 6) else saturday
        return _Reading("last weekend", saturday, earliest, sunday)
    if kind == "date":
        d = said - back(days=arg)
        return exact(f"on {d.day} {_MONTH_NAMES[d.month - 1]}", d)
    if kind == "ordinal":
        d = said - back(days=arg)
        if arg < 1 or d.month != said.month:
            raise ValueError(f"the {arg}-day-back day of {said} is not in the same month")
        suffix = "th" if 10 <= d.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
        return exact(f"on the {d.day}{suffix}", d)
    if kind == "back_in":
        if arg < 1:
            raise ValueError("back_in needs at least one month back")
        months = said.year * 12 + said.month - 1 - arg
        first = date(months // 12, months % 12 + 1, 1)
        last = date(first.year + (first.month == 12), first.month % 12 + 1, 1) - back(days=1)
        return _Reading(f"back in {_MONTH_NAMES[first.month - 1]}", first.replace(day=15), first, last)
    raise ValueError(f"unknown time expression kind {kind!r}")


def _article(value: str) -> str:
    return ("an " if value[:1].lower() in "aeiou" else "a ") + value


def _fill(template: str, value: str, old: str | None, proj: str | None) -> str:
    a_v = _article(value)
    text = template.format(v=value, a_v=a_v, a_V=a_v[0].upper() + a_v[1:], old=old or "", a_old=_article(old or "x"),
                           proj=proj or "")
    return text[0].upper() + text[1:]


# ------------------------------------------------------------------------------------------------- generator


@dataclass
class _Draft:
    """A turn before timestamps are assigned: placed in a session, optionally followed by a reaction."""

    speaker: str
    text: str
    kind: str = "chat"
    ref: str | None = None
    react: bool = False


@dataclass
class _PlannedUpdate:
    id: str
    person: str
    attribute: Attribute
    question: str
    steps: list[tuple[int, str, str, str]]   # (session, value, style, text)


def _sample_values(rng: random.Random, attr: Attribute, pool: list[str], n: int) -> list[str]:
    picked = [pool.pop(rng.randrange(len(pool))) for _ in range(n)]
    if attr.ordered == "up":
        picked.sort(key=lambda v: int(v.replace(",", "")))
    elif attr.ordered == "later":
        picked.sort(key=lambda v: (_MONTH_NAMES.index(v.split()[0]), int(v.split()[1])))
    return picked


def _plan_update(rng: random.Random, pid: str, person: str, attr: Attribute, pool: list[str], n_sessions: int,
                 proj: str | None) -> _PlannedUpdate:
    changes = rng.choice((1, 1, 2, 2, 3))
    values = _sample_values(rng, attr, pool, changes + 1)
    seq: list[tuple[str, str]] = [(values[0], "initial")]
    if rng.random() < 0.2:
        seq.append((values[0], "restate"))
    for v in values[1:]:
        seq.append((v, "change"))
    if rng.random() < 0.35:
        seq.append((values[-1], "restate"))
    sessions = sorted(rng.sample(range(n_sessions), len(seq)))
    steps = []
    prev: str | None = None
    for s, (v, style) in zip(sessions, seq):
        if style == "change":
            # "{old}" templates need a previous value; every change has one.
            template = rng.choice(attr.change)
        else:
            template = rng.choice(attr.initial if style == "initial" else attr.restate)
        steps.append((s, v, style, _fill(template, v, prev, proj)))
        prev = v
    question = rng.choice(attr.questions).format(p=person, proj=proj or "")
    return _PlannedUpdate(pid, person, attr, question, steps)


_EXPRESSIONS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("today", (0,)), ("earlier", (0,)), ("yesterday", (0,)), ("day_before", (0,)), ("days", (2, 3, 4, 5, 10)),
    ("days_digits", (3, 4, 6, 9)), ("couple", (0,)), ("last_week", (0,)), ("weeks", (2, 3)), ("fortnight", (0,)),
    ("month_ago", (0,)), ("weekday", tuple(range(7))), ("on_weekday", tuple(range(7))), ("weekend", (0,)),
    ("date", tuple(range(3, 41))), ("ordinal", tuple(range(2, 12))), ("back_in", (1, 2, 3)),
)


def _plan_order(rng: random.Random, person: str, kinds: list[EventKind], session_days: list[date],
                want_inversion: bool) -> list[tuple[int, EventKind, _Reading, str]]:
    """Choose telling sessions and time expressions so that the events' windows are pairwise disjoint and, when
    ``want_inversion``, the told order differs from the event order."""
    n = len(kinds)
    for _ in range(5000):
        sessions = sorted(rng.sample(range(len(session_days)), n))
        readings = []
        for s in sessions:
            while True:
                kind, args = rng.choice(_EXPRESSIONS)
                try:
                    readings.append(read_expression(kind, session_days[s], rng.choice(args)))
                    break
                except ValueError:   # e.g. "on the 5th" asked for on the 3rd of a month
                    continue
        order = sorted(range(n), key=lambda i: readings[i].canonical)
        disjoint = all(readings[a].latest < readings[b].earliest for a, b in zip(order, order[1:]))
        if not disjoint or (order != list(range(n))) != want_inversion:
            continue
        out = []
        for s, kind, r in zip(sessions, kinds, readings):
            template = rng.choice(kind.templates)
            when = r.expression
            text = template.replace("{When}", when[0].upper() + when[1:]).replace("{when}", when)
            out.append((s, kind, r, text))
        return out
    raise RuntimeError(f"no consistent event schedule for {person} ({n} events)")


def _generate_conversation(rng: random.Random, number: int, speakers: list[str]):
    cid = f"conv{number:02d}"
    n_sessions = rng.randint(10, 13)
    start = date(2023, 1, 2) + timedelta(days=rng.randrange(0, 330))
    days = [start]
    for _ in range(n_sessions - 1):
        days.append(days[-1] + timedelta(days=rng.randint(5, 19)))
    sessions: list[list[_Draft]] = [[] for _ in range(n_sessions)]

    pools = {a.name: list(a.values) for a in ATTRIBUTES}
    projects = list(PROJECTS)
    updates: list[_PlannedUpdate] = []
    uid = 0
    for person in speakers:
        for attr in rng.sample(ATTRIBUTES, rng.randint(3, 5)):
            proj = projects.pop(rng.randrange(len(projects))) if attr.name == "deadline" else None
            plan = _plan_update(rng, f"{cid}/u{uid:02d}", person, attr, pools[attr.name], n_sessions, proj)
            uid += 1
            updates.append(plan)
            for s, v, style, text in plan.steps:
                sessions[s].append(_Draft(person, text, "statement", plan.id, react=rng.random() < 0.5))

    # Mentions of the conversation's values in other contexts, by anyone, anywhere.
    for plan in updates:
        vals = [v for _, v, _, _ in plan.steps]
        for _ in range(rng.randint(1, 2)):
            v = rng.choice(vals)
            text = _fill(rng.choice(plan.attribute.mention), v, None, None)
            sessions[rng.randrange(n_sessions)].append(_Draft(rng.choice(speakers), text, "mention", plan.id))

    orders = []
    kinds = rng.sample(EVENTS, min(len(EVENTS), 5 * len(speakers)))
    for j, person in enumerate(speakers):
        n = rng.randint(3, 5)
        mine, kinds = kinds[:n], kinds[n:]
        oid = f"{cid}/o{j:02d}"
        schedule = _plan_order(rng, person, mine, days, want_inversion=rng.random() < 0.5)
        for s, kind, r, text in schedule:
            sessions[s].append(_Draft(person, text, "event", oid, react=rng.random() < 0.5))
        orders.append((oid, person, schedule))

    for s in range(n_sessions):
        for _ in range(rng.randint(5, 9)):
            sessions[s].append(_Draft(rng.choice(speakers), rng.choice(CHAT)))

    turns: list[Turn] = []
    index_of: dict[tuple[str, str], int] = {}   # (ref, text) -> turn index
    for s, drafts in enumerate(sessions):
        rng.shuffle(drafts)
        sid = f"{cid}-s{s + 1:02d}"
        clock = datetime.combine(days[s], time(hour=rng.randint(17, 20), minute=rng.randrange(60)), timezone.utc)
        for d in drafts:
            clock += timedelta(seconds=rng.randint(20, 240))
            if d.kind in ("statement", "event"):
                index_of[(d.ref, d.text)] = len(turns)
            turns.append(Turn(len(turns), d.speaker, d.text, clock, sid, d.kind, d.ref))
            if d.react and len(speakers) > 1:
                clock += timedelta(seconds=rng.randint(20, 120))
                other = rng.choice([p for p in speakers if p != d.speaker])
                turns.append(Turn(len(turns), other, rng.choice(REACTIONS), clock, sid))

    update_probes = []
    for plan in updates:
        statements = tuple(Statement(index_of[(plan.id, text)], v, style) for _, v, style, text in plan.steps)
        seen: list[str] = []
        for st in statements:
            if st.value not in seen:
                seen.append(st.value)
        update_probes.append(UpdateProbe(plan.id, cid, plan.person, plan.attribute.name, plan.question,
                                         seen[-1], tuple(seen[:-1]), statements))
    order_probes = []
    for oid, person, schedule in orders:
        events = sorted(
            (OrderEvent(kind.key, index_of[(oid, text)], r.expression,
                        datetime.combine(r.canonical, time(12), timezone.utc), r.earliest, r.latest)
             for _, kind, r, text in schedule),
            key=lambda e: e.event_time,
        )
        phrases = [k.phrase for _, k, _, _ in schedule]
        rng.shuffle(phrases)
        question = f"In what order did these happen to {person}: {', '.join(phrases[:-1])} and {phrases[-1]}?"
        order_probes.append(OrderProbe(oid, cid, person, person, question, tuple(events)))
    return Conversation(cid, tuple(speakers), tuple(turns)), update_probes, order_probes


def generate(seed: int = DEFAULT_SEED, conversations: int = DEFAULT_CONVERSATIONS) -> ProbeSet:
    """The probe set for ``seed``: ``conversations`` scripted conversations (two or three speakers, 10-13
    sessions each) with their update and ordering probes. Same seed, same probes; validated before returning."""
    if isinstance(conversations, bool) or not isinstance(conversations, int) or conversations < 1:
        raise ValueError(f"conversations must be a positive int, got {conversations!r}")
    rng = random.Random(seed)
    convs, updates, orders = [], [], []
    people = list(SPEAKERS)
    rng.shuffle(people)
    for number in range(conversations):
        if len(people) < 3:
            people = list(SPEAKERS)
            rng.shuffle(people)
        n = rng.choice((2, 3, 3))
        speakers, people = people[:n], people[n:]
        conv, ups, ords = _generate_conversation(rng, number, speakers)
        convs.append(conv)
        updates.extend(ups)
        orders.extend(ords)
    probes = ProbeSet(seed, tuple(convs), tuple(updates), tuple(orders))
    probes.validate()
    return probes


__all__ = [
    "ATTRIBUTES", "DEFAULT_CONVERSATIONS", "DEFAULT_SEED", "EVENTS", "Conversation", "OrderEvent", "OrderProbe",
    "ProbeSet", "Statement", "Turn", "UpdateProbe", "contains", "generate", "read_expression",
]
