"""Attribute statements: who said what about whom, read offline from one message (one vocabulary, one set of
patterns, one result type).

Two followers of a namespace read the same statements:

* the speaker profiles (seed 002 §4.1 stage 5, the L0 engram: "an attribute map of preferences and identity") keep
  every first-person value over time;
* time and truth (seed 002 §4.1 stage 3, contradiction records "indexed by entity and predicate"; seed 003 §3.3,
  updates resolved by recency) link a statement to the later one that gives a different value of the same
  attribute of the same subject, for the attributes that hold one value at a time (:func:`single_valued`).

Statements are read by anchored patterns chosen for precision, never by the mere presence of a trigger word: a
missed statement costs a boost or a mark, a wrong one pushes an unrelated message up or marks a true statement
"superseded". A pattern names its subject: the speaker ("I live in Boston", "my partner Felix", chat's implicit
subject in "Moved to Denver!"), or a named project for a deadline ("The Orion project is due on March 18"). Values
that are names (places, employers, partners, pets, phones, cars) must be written as names; values that are
common nouns (an occupation, a liked activity, a favourite dish) are cut at the first clause boundary and must be
short. Questions about oneself ("Do I live in Boston?") and hypotheticals ("if I moved to Denver") state nothing.

:data:`CUES` maps the question words that ask about an attribute to the attributes they ask about; both the
profile prior and the truth ranking read questions with it (:func:`query_targets`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hippo.base.errors import InvalidInput
from hippo.text import textnorm

__all__ = ["Statement", "extract", "restated", "restated_head", "single_valued", "matches", "query_targets",
           "favorite_attribute", "fold",
           "noun_key", "CUES", "OCCUPATIONS", "UPDATE_CUES"]


@dataclass(frozen=True)
class Statement:
    """One attribute stated in a message: ``entity``'s ``attribute`` is ``value``.

    ``entity`` is the lower-case subject: the speaker for first-person statements (``""`` when the message has no
    speaker), else the named subject (a project for a deadline). ``update`` is true when the sentence announces a
    change ("moved", "now", "new", "no longer", "switched"...); ``negated`` when it says the value stops holding
    ("I'm not in Lyon anymore", "I quit Globex", "Biscuit passed away"). Provenance: the ``sentence`` it was read
    from and the ``span`` of the value in the message text (``text[span[0]:span[1]]`` starts with the value as
    written, before cleaning).
    """

    entity: str
    attribute: str
    value: str
    update: bool
    negated: bool
    first_person: bool
    sentence: str
    span: tuple[int, int]
    reread: bool = False  # read again for an update's attribute (:func:`restated`), not by a pattern

    @property
    def norm(self) -> str:
        """The value folded for comparison: lower case, words only ("New York!" -> "new york")."""
        return fold(self.value)


def fold(value: str) -> str:
    """``value`` folded for comparison: lower-case words and whole numbers ("$92,500" -> "92,500")."""
    return " ".join(re.findall(r"[a-z0-9]+(?:[.,][0-9]+)*", value.lower().replace("’", "'").replace("'s ", " ")))


# -- vocabulary ---------------------------------------------------------------------------------------------------

# Pets, and the canonical noun of each: a kitten is a cat, so "our new kitten Mochi" follows "our cat Biscuit".
PETS = {"dog": "dog", "dogs": "dog", "puppy": "dog", "pup": "dog", "cat": "cat", "cats": "cat", "kitten": "cat",
        "kitty": "cat", "parrot": "parrot", "bird": "bird", "hamster": "hamster", "rabbit": "rabbit",
        "bunny": "rabbit", "fish": "fish", "turtle": "turtle", "tortoise": "tortoise", "horse": "horse",
        "pony": "pony", "snake": "snake", "lizard": "lizard", "guinea pig": "guinea_pig", "ferret": "ferret",
        "pet": "pet"}
_PET_RX = r"(?:guinea\s+pig|dogs?|puppy|pup|cats?|kitten|kitty|parrot|bird|hamster|rabbit|bunny|fish|turtle|" \
          r"tortoise|horse|pony|snake|lizard|ferret|pet)"
_PET_WORDS = "dog dogs puppy pup cat cats kitten kitty parrot bird hamster rabbit bunny fish turtle tortoise horse " \
             "pony snake lizard pig ferret pet"
PET_ATTRIBUTES = frozenset(f"{p}_name" for p in set(PETS.values()))
_PARTNERS = r"(?:partner|boyfriend|girlfriend|husband|wife|fianc[eé]e?|spouse)"

# Occupations recognised after "I'm a ..." (otherwise the value is an identity statement).
OCCUPATIONS = frozenset(
    """accountant actor actress architect artist athlete attorney baker banker barista bartender biologist
    builder butcher carpenter cashier ceo chef chemist cleaner clerk coach consultant cook counselor counsellor
    dancer dentist designer developer doctor driver economist editor electrician engineer entrepreneur farmer
    firefighter founder gardener guard hairdresser historian illustrator instructor intern janitor journalist
    judge lawyer lecturer librarian manager mechanic midwife musician nurse nanny officer painter paramedic
    pharmacist photographer physician physicist physiotherapist pianist pilot planner plumber poet policeman
    policewoman politician producer professor programmer psychologist psychiatrist realtor receptionist
    researcher salesman saleswoman scientist secretary singer soldier student surgeon tailor teacher technician
    therapist trainer translator tutor veterinarian vet volunteer waiter waitress writer author youtuber
    streamer blogger influencer analyst administrator marketer recruiter mentor player gamer""".split()
)

# Attributes that hold several values at once: a second liked thing is not a correction of the first, and neither
# is a second child's name. Every other attribute holds one value at a time, so a later different value supersedes
# the earlier one.
_MULTI = frozenset({"likes", "dislikes", "prefers", "identity", "allergy", "family", "plays"})
_MULTI_NAMES = frozenset({"son_name", "daughter_name", "brother_name", "sister_name", "baby_name", "kid_name",
                          "child_name", "friend_name", "cousin_name"})


def single_valued(attribute: str) -> bool:
    """Whether ``attribute`` holds one value at a time (so that a new value supersedes the old one)."""
    return attribute not in _MULTI and attribute not in _MULTI_NAMES and attribute != "favorite" \
        and not attribute.endswith("*")


def matches(attribute: str, wanted: tuple[str, ...] | list[str]) -> bool:
    """Whether ``attribute`` is one of ``wanted``, where ``"favorite*"`` and ``"*_name"`` are prefix / suffix
    patterns and ``"pet*"`` stands for the names of pets."""
    for w in wanted:
        if w == attribute or (w == "pet*" and attribute in PET_ATTRIBUTES):
            return True
        if (w.endswith("*") and w != "pet*" and attribute.startswith(w[:-1])) or \
                (w.startswith("*") and attribute.endswith(w[1:])):
            return True
    return False


# question cue -> attributes it asks about (stems of the cue words). The profile prior and the truth ranking both
# read questions through this table.
CUES: dict[str, tuple[str, ...]] = {}
for _cues, _attrs in (
    ("like love enjoy fan into passion passionate hobby hobbies interest interested pastime fond prefer preference "
     "favorite favourite", ("likes", "prefers", "favorite*", "plays")),
    ("dislike hate avoid detest", ("dislikes",)),
    ("prefer preference rather", ("prefers",)),
    ("favorite favourite", ("favorite*",)),
    ("job occupation profession career", ("occupation", "employer", "identity")),
    ("promoted promotion position title", ("occupation",)),
    ("employ employer company boss work", ("employer", "occupation")),
    ("live reside resident residence address city based", ("residence",)),
    ("hometown", ("residence", "origin")),
    ("from origin originally grew born nationality heritage native", ("origin", "birth_year")),
    ("identity identify gender orientation religion", ("identity", "occupation")),
    ("name named called", ("*_name", "name")),
    ("pet dog cat puppy kitten", ("pet*",)),
    ("age old", ("age", "birth_year")),
    ("allergic allergy allergies", ("allergy",)),
    ("major degree study studies studying", ("studies", "school")),
    ("school university college", ("school",)),
    ("instrument", ("plays", "likes")),
    ("married spouse partner boyfriend girlfriend wife husband dating fiance fiancee", ("partner",)),
    ("phone smartphone mobile iphone", ("phone",)),
    ("car drive vehicle", ("car",)),
    ("salary earn paid pay income wage", ("salary",)),
    ("deadline due ship launch", ("deadline",)),
):
    for _c in _cues.split():
        _s = textnorm.stem(_c)
        CUES[_s] = tuple(dict.fromkeys(CUES.get(_s, ()) + _attrs))

# words whose presence marks the later statement as an update of the earlier one (seed 002 stage 4: "explicit
# contradiction detection for update verbs")
UPDATE_CUES = frozenset(
    """moved move moving relocated relocating changed change changing switched switch switching now no longer anymore
    new newly instead finally became become becoming replaced replace upgraded upgrade joined left quit started
    starting pushed postponed delayed rescheduled updated update actually currently since transferred
    promoted raise raised bumped retrained hired accepted broke ended passed adopted sold bought increased reduced
    adjusted extended lowered decreased upped shifted""".split())

# -- value shapes -------------------------------------------------------------------------------------------------

_ADV = r"(?:(?:really|absolutely|just|also|totally|truly|especially|always|still|definitely|genuinely|kinda|" \
       r"kind of|sort of|do|actually|honestly|generally|personally|mostly|mainly|now|simply|so)\s+)"
_WHEN = r"(?:(?:currently|now|still|just|recently|finally|actually|officially|happily|already)\s+)*"
_I_AM = r"\b(?:I'm|I\s+am|we're|we\s+are)\s+"
_I = r"(?:\b(?:I|we)\b|^)"        # a subject, or chat's implicit one at the start of a sentence
_NEG = r"(?:don't|do\s+not|dont|never|can't\s+say\s+I|won't\s+ever)\s+"
# Patterns are case-insensitive; names are not: (?-i:...) keeps "Boston" a name and "boston" a word.
_CAP = r"(?-i:[A-Z])[\w'’&.-]*"
# a name as written: capitalized words, with digits and short joiners inside ("Kestrel Labs", "Model 3",
# "Galaxy S24", "Bank of Montreal")
_NAME = _CAP + r"(?:\s+(?:(?!I\b)" + _CAP + r"|\d[\w+]*|of|de|del|la|le|da|&)(?=\s|$|[,.;:!?)]))*"
_MONEY = r"\$?\d{1,3}(?:,\d{3})+(?:\.\d+)?|\$\d+(?:\.\d+)?k?|\d+(?:\.\d+)?k\b|\d{4,7}"
# an amount as said: "$3,500", "42", "12%", "180KB", with a unit after it ("12 books", "$550/month", "42 weekly")
_QTY = r"(?:\d{1,2}:\d{2}\s*(?:am|pm)?|\$\s?\d+(?:,\d{3})*(?:\.\d+)?(?:k\b)?|" \
       r"\d+(?:,\d{3})*(?:\.\d+)?(?:\s?%|(?-i:[a-zA-Z]{1,3})\b)?)" \
       r"(?:\s*(?:/|per\s+)(?:month|week|year|day|hour)|\s+(?:monthly|weekly|yearly|annually|daily|hourly|am|pm)\b|" \
       r"\s+(?-i:[a-z]{2,}s)\b)?"
# the thing an amount is of, as said after "my": "snack budget", "weekly word count", "budget for attorney fees"
_THING = r"[a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,3}?(?:\s+(?:for|of)\s+[a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,3}?)?"
# what an amount "of" is: "my snack budget of $70", "my $600 annual budget"
_AMOUNT_NOUNS = "budget budgets limit goal target cap quota salary rent allowance fund savings fee fees price cost " \
                "deposit payment balance"
_AMOUNT_NOUN = r"(?:" + "|".join(_AMOUNT_NOUNS.split()) + r")"
_CHANGED_WORDS = "increased raised reduced cut adjusted changed extended lowered upped bumped set updated shifted " \
                 "decreased boosted capped trimmed brought"
_CHANGED = r"(?:" + "|".join(_CHANGED_WORDS.split()) + r")"
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DATE = r"(?:" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + \
        _MONTH + r"(?:,?\s+\d{4})?)"
# a time of day, and when something is scheduled: "April 22 at 11 AM", "3 PM on June 2", "March 22"
_CLOCK = r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)"
_WHEN_SET = r"(?:" + _DATE + r"(?:,?\s+(?:at\s+)?" + _CLOCK + r")?|" + _CLOCK + r"(?:\s+on\s+" + _DATE + r")?)"
# something that happens at a time: "Zoom call with the creative director", "session with an immigration
# consultant", "final decision meeting" (a bare "meeting" is one of many)
_EVENT_NOUNS = "meeting meetings call session sessions appointment interview webinar workshop presentation " \
               "consultation class exam test flight visit demo retreat ceremony checkup check-up review hearing " \
               "screening shoot rehearsal conference recital"
_EVENT = r"(?:[a-z][a-z'-]*\s+){0,3}?(?:" + "|".join(_EVENT_NOUNS.split()) + r")(?:\s+(?:with|for)\s+" \
         r"(?:[A-Za-z][\w'-]*\s+){0,3}?[A-Za-z][\w'-]*)?"
# makes and models: a phone or a car is recognised as one, not by a verb that could take any object
_PHONE = r"(?-i:(?:iPhone|Pixel|Galaxy|Fairphone|Moto|Motorola|Nokia|Xperia|Redmi|OnePlus|Huawei|Xiaomi|Oppo)" \
         r"(?:\s+(?:[A-Z0-9][\w+]*))*)\b"
# (words that are also common nouns or brands of other things, like Golf, Polo, Jazz or Swift, are left out)
_CAR_WORDS = (
    "Toyota Honda Ford Volkswagen VW Tesla Skoda Škoda Nissan Hyundai Renault Dacia Subaru Kia BMW Audi Mercedes "
    "Mazda Volvo Fiat Peugeot Citroen Citroën Opel Vauxhall Jeep Chevrolet Chevy Dodge Lexus Porsche "
    "Suzuki Mitsubishi Yaris Corolla Civic Octavia Qashqai Prius Outback Ioniq Clio Kuga Sandero "
    "Passat Mondeo Camry RAV4 Micra Juke Tucson Kona Sportage Forester Impreza Mustang CR-V Fabia Megane Captur "
    "Astra Corsa Punto Wrangler F-150 Tiguan Touran Vitara").split() + ["Model 3", "Model S", "Model X", "Model Y"]
_CAR_TOKENS = " ".join(sorted({t for w in _CAR_WORDS for t in re.findall(r"[a-z0-9]+", w.lower())}))
_CAR = r"(?-i:(?:" + "|".join(re.escape(w) for w in sorted(set(_CAR_WORDS), key=len, reverse=True)) + r")\b" + \
       r"(?:\s+(?:[A-Z0-9][\w-]*))*)\b"

_BOUNDARY = re.compile(
    r"\s*(?:[,;:()\[\]—–!?]|(?:^|\s|(?<=\w))-(?:\s|$)|\.\s|\.$|\b(?:but|because|since|so|when|while|although|though|which|"
    r"whereas|"
    r"cause|coz|as|if|until|unless|and\s+I|and\s+i'm|and\s+it|and\s+that|and\s+they|"
    r"and\s+we|and\s+my|and\s+have|and\s+has|and\s+am|and\s+was|that\s+I|that\s+you|lately|these\s+days|"
    r"nowadays|right\s+now|now|too|anymore|recently|ago|earlier|soon|"
    r"(?:last|this|next)\s+(?:week|month|year|night|weekend|summer|winter|spring|fall|autumn|time)|"
    r"again|already|today|yesterday|tomorrow|tonight|lol|haha)\b)",
    re.I,
)
# Words that start a value which is not an attribute ("I love that you came", "I'm a bit tired").
_BAD_FIRST = frozenset(
    """it it's its that this these those you you're your yours them they their he she him her his hers how what
    when where why who which if so too to_see seeing hearing knowing watching_you being_able having_you everything
    all bit little lot lots part fan huge big sure here there one ones anything something nothing any some
    such more much way the_way us our we myself me i every is are was were has had be been can will would could
    does did do makes made to to_hear to_see to_say to_think to_know to_read to_talk to_chat to_help_you""".split()
)
# Capitalized words that are not names (sentence openers, days, months, pronouns).
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll the a an my our your his her their this that these those it we you he she they and
    but or so if then there here what when where who why how which yes no not hey hi hello thanks ok okay oh wow
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight
    january february march april may june july august september october november december mom mum dad
    everyone someone nobody home work school""".split()
)
_NAME_WORDS = re.compile(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
_REFERENTIAL = re.compile(r"\b(?:it|them|this|that|these|those|him|her|you|your)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")
_LEAD_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_INTENSIFIERS = re.compile(r"^(?:(?:big|huge|massive|total|real|true|great|die[- ]hard|avid|proud|"
                           r"self[- ]taught|professional|full[- ]time|part[- ]time|former)\s+)+", re.I)
_BRIT = {"colour": "color", "favourite": "favorite", "flavour": "flavor", "neighbourhood": "neighborhood",
         "jewellery": "jewelry", "theatre": "theater"}
_FOOD_WORDS = frozenset({"food", "meal", "meals", "dish", "dishes", "cuisine", "snack", "snacks", "dinner", "lunch",
                         "breakfast"})
# A question about oneself states nothing ("Do I live in Boston?", "Should I move...").
_SELF_QUESTION = re.compile(r"^\W*(?:do|did|does|should|shall|can|could|would|will|have|has|am|is|are|was|were|"
                            r"may|might|must)\s+(?:I|we)\b", re.I)
# ... and neither does a hypothetical or a wish before the statement in the same clause.
_HYPOTHETICAL = re.compile(r"\b(?:if|whether|unless|in\s+case|what\s+if|imagine|suppose|pretend|wish|"
                           r"would|could|might|should|hope\s+to|want\s+to|wanted\s+to|plan(?:ning)?\s+to|"
                           r"going\s+to|gonna|thinking\s+(?:about|of)|dream(?:ing)?\s+(?:of|about))\b",
                           re.I)
_CLAUSE_START = re.compile(r"[,;:—–(\"“]|\b(?:and|but|so|because|then)\b", re.I)


def _clean_value(raw: str, *, max_words: int = 6) -> str | None:
    """The value phrase at the start of ``raw``: cut at the first clause boundary, at most ``max_words`` words."""
    cut = _BOUNDARY.search(raw)
    value = raw[: cut.start()] if cut else raw
    value = value.strip(" \t\"'“”‘’.*")
    value = re.sub(r"\s+", " ", value)
    if not value:
        return None
    words = value.split()
    if len(words) > max_words:
        return None
    first = words[0].lower().replace("’", "'")
    two = "_".join(w.lower() for w in words[:2])
    if first in _BAD_FIRST or two in _BAD_FIRST:
        return None
    if not any(c.isalnum() for c in value):
        return None
    return value


def _name_value(raw: str, *, max_words: int = 4) -> str | None:
    """The name at the start of ``raw`` ("Kestrel Labs", "East Janethaven", "Model 3"), or None."""
    raw = raw.lstrip(" \"'“”‘’")
    m = re.match(_NAME, raw)
    if m is None:
        return None
    words = m.group(0).rstrip(".'’").split()
    while words and words[-1].lower() in ("of", "de", "del", "la", "le", "da", "and", "&"):
        words.pop()
    if not words or len(words) > max_words or words[0].lower().rstrip("'’s") in _NOT_NAMES:
        return None
    value = " ".join(words)
    return value.removesuffix("'s").removesuffix("’s")


def noun_key(noun: str) -> str:
    """The attribute key of a noun phrase: "favourite kind of colour" -> "color", "meal" -> "food"."""
    words = [_BRIT.get(w, w) for w in re.findall(r"[a-z0-9]+", noun.lower())]
    words = [w for w in words if w not in {"kind", "type", "sort", "genre", "of", "the", "all", "time", "absolute"}]
    if words and words[-1] in _FOOD_WORDS:
        return "food"  # a favourite meal, dish or snack is a favourite food
    return "_".join(words)


# the last word of a phrase that names a person or an animal, not a thing with an amount ("my son is 12")
_NOT_THINGS = textnorm.STOPWORDS | frozenset(
    """favorite favourite name son daughter kid kids child children brother sister friend dog cat wife husband
    partner mom mum dad mother father baby""".split())
# ... and words that alone name no thing ("my point is 2", "my guess is 40")
# (a bare "budget" or "goal" is one of many in a long conversation: only a named one is an attribute)
_VAGUE = frozenset("""way point goal guess question problem issue idea answer reason plan number budget budgets limit
    target cap quota fund savings fee fees price cost deposit payment balance total amount""".split())


_MONTH_NAMES = frozenset("""january february march april may june july august september october november december jan
    feb mar apr jun jul aug sep sept oct nov dec""".split())
_VAGUE_EVENTS = frozenset(_EVENT_NOUNS.split()) | {"next", "first", "last", "weekly", "daily", "monthly", "new",
                                                   "regular", "usual", "team", "work", "online", "zoom", "video",
                                                   "phone", "quick", "short", "long", "big", "important", "one"}
# the period an amount holds for, said right after it: "for April to June", "for the month of May", "for Q3"
_PERIOD = re.compile(
    r"\s+for\s+(?:the\s+)?(?:(?:month|months|week|weeks|year|quarter|period|semester|season)\s+of\s+)?"
    r"(?P<p>" + _MONTH + r"(?:\s*(?:-|–|to|through|and)\s*" + _MONTH + r")?(?:\s+\d{4})?|q[1-4]|\d{4}|"
    r"(?:this|next|the)\s+(?:month|week|year|quarter|semester|season|summer|winter|spring|fall|autumn))\b", re.I)
_LATER = re.compile(r"[^.;!?]{0,60}?\b(?:and\s+)?(?:later|then|since\s+then|now)\s+(?:up\s+|down\s+)?to\s+"
                    r"(?P<v>" + _QTY + ")", re.I)


def _thing_key(thing: str, vague: frozenset[str] = _VAGUE) -> str | None:
    """The attribute key of the thing an amount is of ("snack budget" -> "snack_budget"; a period goes last:
    "April-June book budget" and "book budget for April to June" -> "book_budget_for_april_june"), or None when the
    phrase is not a thing ("my point is 2", "my son is 12": an age is not kept as an amount) or names only its kind
    ("budget", "the meeting", "a Zoom call": one of many)."""
    words = [w for w in re.findall(r"[a-z0-9]+", thing.lower()) if w not in ("a", "an", "the")]
    lead = 0
    while lead < len(words) and (words[lead] in _MONTH_NAMES or (lead and words[lead] in ("to", "through", "and"))):
        lead += 1
    head, tail = words[lead:], words[:lead]
    if "for" in head:
        k = head.index("for")
        head, tail = head[:k], head[k + 1:] + tail
    tail = [w for w in tail if w not in ("to", "through", "and", "of", "month")]
    if not head or len(head) + len(tail) > 8 or head[0] in textnorm.STOPWORDS or head[-1] in _NOT_THINGS:
        return None
    if all(w in vague for w in head) and all(w in _MONTH_NAMES or w.isdigit() for w in tail):
        return None  # "budget" alone, or "budget for May", is one of many; "budget for attorney fees" is one
    if any(w in ("i", "you", "he", "she", "it", "we", "they", "is", "are", "was", "be", "and", "or")
           for w in head + tail):
        return None
    return "_".join(head + (["for"] + tail if tail else []))


def favorite_attribute(low: str) -> str | None:
    """``favorite_<thing>`` for a lower-case sentence or question: the noun after favourite, with meals and dishes
    folded into food ("my favourite meal", "... is my favourite now" about food)."""
    m = re.search(r"favou?rite ([a-z]+)", low)
    noun = m.group(1) if m else None
    if noun is None or noun in textnorm.STOPWORDS or noun in ("now", "these", "ever", "thing", "one"):
        words = set(re.findall(r"[a-z]+", low))
        noun = "food" if words & _FOOD_WORDS else None
    if noun is None:
        return None
    return f"favorite_{noun_key(noun)}"


# -- patterns -----------------------------------------------------------------------------------------------------

# Each rule: (compiled pattern, kind, attribute or None, negated). The pattern has a group ``v`` (the value) and
# may have ``n`` (a noun that names the attribute: "favourite <colour>", "my <dog>'s name") and ``e`` (the named
# entity of a thing: a project). Order matters: the first rule that yields a value from a given start wins;
# negative rules precede positive ones.
_Rule = tuple[re.Pattern, str, str | None, bool, frozenset]


def _rules() -> list[_Rule]:
    r: list[_Rule] = []

    def add(pattern: str, kind: str, attribute: str | None = None, negated: bool = False, *, needs: str) -> None:
        # ``needs``: words one of which the sentence must contain for the pattern to be tried at all
        r.append((re.compile(pattern, re.I), kind, attribute, negated, frozenset(needs.split())))

    # -- the value stops holding ------------------------------------------------------------------------------
    add(_I_AM + r"(?:not|no\s+longer)\s+(?:living\s+|based\s+)?in\s+(?P<v>" + _NAME + r")(?=\s+(?:any\s*more|now))",
        "place", "residence", True, needs="not longer")
    add(_I_AM + r"no\s+longer\s+(?:living\s+|based\s+)?in\s+(?P<v>" + _NAME + ")", "place", "residence", True,
        needs="longer")
    add(r"\b(?:I|we)\s+(?:don't|do\s+not|no\s+longer)\s+live\s+in\s+(?P<v>" + _NAME + ")", "place", "residence", True,
        needs="live")
    add(_I_AM + r"(?:not|no\s+longer)\s+(?:working\s+)?(?:at|with|for)\s+(?P<v>" + _NAME +
        r")(?=\s+(?:any\s*more|now))",
        "org", "employer", True, needs="not longer")
    add(_I_AM + r"no\s+longer\s+(?:working\s+)?(?:at|with|for)\s+(?P<v>" + _NAME + ")", "org", "employer", True,
        needs="longer")
    add(_I + r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+|finally\s+|officially\s+)?(?:quit|left)\s+(?:my\s+job\s+at\s+)?"
        r"(?P<v>" + _NAME + ")", "org", "employer", True, needs="quit left")
    add(r"\bmy\s+last\s+day\s+(?:at|with)\s+(?P<v>" + _NAME + ")", "org", "employer", True, needs="last")
    add(_I + r"\s*(?:\s+just\s+)?\s*quit\s+being\s+(?:a|an)\s+(?P<v>.+)", "occupation", "occupation", True,
        needs="quit")
    add(_I_AM + r"no\s+longer\s+(?:a|an)\s+(?P<v>.+)", "occupation", "occupation", True, needs="longer")
    add(r"(?:^|\b(?:and|but|so)\s+)(?P<v>" + _NAME + r")\s+and\s+I\s+(?:have\s+|'ve\s+)?(?:broke\s+up|split(?:\s+up)?|"
        r"separated|divorced|ended\s+things)", "person", "partner", True, needs="broke split separated divorced ended")
    add(r"\bI\s+(?:just\s+)?(?:broke\s+up|split\s+up)\s+with\s+(?P<v>" + _NAME + ")", "person", "partner", True,
        needs="broke split")
    add(r"\bthings\s+with\s+(?P<v>" + _NAME + r")\s+(?:ended|are\s+over|fell\s+apart)", "person", "partner", True,
        needs="things")
    add(r"(?:^|\bnews,?\s+|\b(?:our|my)\s+(?:dear\s+|sweet\s+|old\s+)?" + _PET_RX + r",?\s+)(?P<v>" + _NAME +
        r")\s+(?:has\s+)?(?:passed\s+away|died)", "pet_gone", "pet*", True, needs="passed died")

    # -- dislikes and preferences (profiles) ------------------------------------------------------------------
    add(r"\bI\s+" + _ADV + r"{0,2}" + _NEG + _ADV + r"{0,2}(?:like|enjoy|love|care\s+for)\s+(?P<v>.+)", "free",
        "dislikes", needs="like enjoy love care")
    add(r"\bI\s+" + _ADV + r"{0,2}(?:hate|dislike|detest|despise|can't\s+stand|cannot\s+stand|can't\s+bear)\s+"
        r"(?P<v>.+)", "free", "dislikes", needs="hate dislike detest despise stand bear")
    add(_I_AM + r"not\s+(?:really\s+|a\s+|much\s+of\s+a\s+|)+(?:big\s+|huge\s+)?(?:fan\s+of|into)\s+(?P<v>.+)",
        "free", "dislikes", needs="fan into")
    add(r"\bI\s+" + _ADV +
        r"{0,2}prefer\s+(?:to\s+)?(?P<v>.+?)(?=\s+(?:over|to|rather\s+than|instead\s+of|than)\s|$|[,.;!?])",
        "free", "prefers", needs="prefer")
    add(r"\bI(?:'d|\s+would)\s+rather\s+(?P<v>.+?)(?=\s+(?:than|instead\s+of)\s|$|[,.;!?])", "free", "prefers",
        needs="rather")

    # -- favourites: "my favourite colour is green", "Harry Potter is my favorite book", "falafel is my
    # favourite now" (no noun: the follower gives it the kind the speaker last named)
    add(r"\bmy\s+(?:absolute\s+|all[- ]time\s+|current\s+|new\s+)?favou?rite\s+(?P<n>(?:[a-z]+\s+){0,2}?[a-z]+)"
        r"\s+(?:is|are|was|has\s+to\s+be|would\s+be|has\s+always\s+been)\s+(?:now\s+|definitely\s+|probably\s+)?"
        r"(?P<v>.+)",
        "favorite", needs="favorite favourite")
    add(r"\bmy\s+(?:absolute\s+|all[- ]time\s+)?favou?rite\s+(?:one\s+|thing\s+)?(?:is|was)\s+(?P<v>.+)", "favorite",
        needs="favorite favourite")
    add(r"\b(?P<v>(?-i:[A-Z])[^,.;!?]{1,40}?)\s+(?:is|are)\s+(?:now\s+)?my\s+(?:absolute\s+|all[- ]time\s+|new\s+)?"
        r"favou?rite\s+(?P<n>(?:[a-z]+\s+){0,2}?[a-z]+)\b", "favorite", needs="favorite favourite")
    add(r"(?:^|[;,]\s*|\b(?:and|but|so)\s+)(?P<v>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are)\s+(?:now\s+)?my\s+(?:new\s+)?"
        r"favou?rite(?:\s+now)?(?=\s*[.!,;]|\s*$)", "favorite", needs="favorite favourite")

    # -- names: "my dog's name is Rex", "my cat is called Tom", "I have a dog named Rex", "Our cat Biscuit",
    # "Meet Waffles, our new cat", "we adopted a rescue dog, her name is Mochi", "my name is Ann"
    add(r"\bmy\s+(?P<n>[a-z]+(?:\s+[a-z]+)?)'s\s+name\s+is\s+(?P<v>.+)", "name_of", needs="name")
    add(r"\bmy\s+(?P<n>" + _PET_RX + r"|" + _PARTNERS + r"|son|daughter|brother|sister|baby|kid|car|boat|band|"
        r"business|company|shop|studio|blog|channel|podcast)\s+(?:is\s+)?(?:called|named)\s+(?P<v>.+)", "name_of",
        needs="called named")
    add(r"\b(?:I|we)\s+(?:'ve\s+|have\s+)?(?:just\s+)?(?:have|got|adopted|own)\s+(?:a|an)\s+(?:new\s+)?(?:[a-z]+\s+)?"
        r"(?P<n>" + _PET_RX + r")(?:\s+now)?,?\s+(?:(?:her|his|its|their)\s+name\s+is\s+|(?:called|named)\s+)?"
        r"(?P<v>" + _NAME + ")", "name_of",
        needs=_PET_WORDS)
    add(r"\b(?:my|our)\s+(?:new\s+|rescue\s+|little\s+|old\s+|sweet\s+|baby\s+)*(?P<n>" + _PET_RX + r")\s*,?\s+"
        r"(?P<v>" + _NAME + r")(?=\W|$)", "name_of",
        needs=_PET_WORDS)
    add(r"\bmeet\s+(?P<v>" + _NAME + r"),\s+(?:my|our)\s+(?:new\s+|rescue\s+|little\s+)*(?P<n>" + _PET_RX + ")",
        "name_of", needs="meet")
    add(r"\bmy\s+name\s+is\s+(?P<v>.+)", "name_of", "name", needs="name")

    # -- partner: "my partner Felix", "Theo and I have been together", "I've started dating Nadia"
    add(r"\b(?:my|our)\s+(?:new\s+|current\s+|lovely\s+)?" + _PARTNERS + r"\s*,?\s+(?P<v>" + _NAME + r")(?=\W|$)",
        "person", "partner", needs="partner boyfriend girlfriend husband wife fiance fiancee fianc spouse")
    add(_I_AM + r"(?:happily\s+)?(?:married|engaged)\s+to\s+(?P<v>" + _NAME + ")", "person", "partner",
        needs="married engaged")
    add(_I + r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+|recently\s+)?started\s+(?:dating|seeing)\s+(?P<v>" + _NAME + ")",
        "person", "partner", needs="dating seeing")
    add(_I_AM + r"(?:now\s+)?(?:dating|seeing)\s+(?:someone\s+new,?\s+)?(?P<v>" + _NAME + ")", "person", "partner",
        needs="dating seeing")
    add(r"(?:^|\b(?:and|but|so|now)\s+|[.,;:]\s*)(?P<v>" + _NAME +
        r")\s+and\s+I\s+(?:have\s+been|'ve\s+been|are|got)\s+"
        r"(?:now\s+)?(?:together|dating|married|engaged)", "person", "partner", needs="together dating married engaged")
    add(r"\bI\s+(?:just\s+|finally\s+)?moved\s+in\s+with\s+(?:my\s+(?:new\s+)?" + _PARTNERS + r"\s+)?(?P<v>" +
        _NAME + ")",
        "person", "partner", needs="moved")

    # -- occupation and employer
    add(r"\bI(?:'m|\s+am)?\s+(?:currently\s+|now\s+)?(?:work|working)\s+as\s+(?P<v>(?:a|an)\s+.+|[a-z]+(?:\s+[a-z]+)?)",
        "occupation", "occupation", needs="work working")
    add(r"\bmy\s+(?:current\s+|new\s+|day\s+)?job\s+is\s+(?:being\s+)?(?P<v>(?:a|an)\s+.+)", "occupation", "occupation",
        needs="job")
    add(_I +
        r"\s*(?:\s+just\s+|\s+finally\s+)?\s*(?:got|was|'ve\s+been|have\s+been)\s+hired\s+as\s+(?P<v>(?:a|an)\s+.+)",
        "occupation", "occupation", needs="hired")
    add(_I + r"\s*\s*retrained\s+as\s+(?P<v>(?:a|an)\s+.+)", "occupation", "occupation", needs="retrained")
    add(r"\bmy\s+first\s+(?:shift|day|week)\s+as\s+(?P<v>(?:a|an)\s+.+)", "occupation", "occupation", needs="first")
    add(_I_AM + r"(?:currently\s+|now\s+)?(?:employed|working)\s+(?:at|for)\s+(?P<v>" + _NAME + ")", "org", "employer",
        needs="employed working")
    add(r"\b(?:I|we)\s+(?:currently\s+|now\s+|still\s+)?work\s+(?:at|for)\s+(?P<v>" + _NAME + ")", "org", "employer",
        needs="work")
    add(r"\bmy\s+(?:first|second)\s+day\s+(?:at|with)\s+(?P<v>" + _NAME + ")", "org", "employer", needs="first second")
    add(r"\bmy\s+new\s+(?:team|job|employer|company|role|position|office|boss)\s+(?:at|with)\s+(?P<v>" + _NAME + ")",
        "org", "employer", needs="new")
    add(r"\bmy\s+(?:new\s+|current\s+)?(?:employer|company)\s+is\s+(?P<v>" + _NAME + ")", "org", "employer",
        needs="employer company")
    add(_I + r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+|finally\s+)?accepted\s+(?:the|an?|their)\s+(?:job\s+)?offer\s+"
        r"(?:from|at|with)\s+(?P<v>" + _NAME + ")", "org", "employer", needs="accepted")
    add(_I + r"\s*(?:\s+just\s+)?\s*(?:got\s+|was\s+)?hired\s+(?:at|by)\s+(?P<v>" + _NAME + ")", "org", "employer",
        needs="hired")
    add(_I + r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+|finally\s+|officially\s+)?joined\s+(?P<v>" + _NAME + ")",
        "org_joined", "employer", needs="joined")

    # -- residence and origin
    add(_I + r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+)?(?:moved|relocated)\s+"
        r"(?:back\s+|over\s+|out\s+)?to\s+(?P<v>" + _NAME + ")", "place", "residence", needs="moved relocated")
    add(r"\b(?:I|we)(?:'re|'m|\s+am|\s+are)?\s+" + _WHEN + r"(?:live|living|reside|residing)\s+in\s+(?P<v>" +
        _NAME + ")",
        "place", "residence", needs="live living reside residing")
    add(_I_AM + _WHEN + r"(?:based|settled)\s+in\s+(?P<v>" + _NAME + ")", "place", "residence", needs="based settled")
    add(r"\b(?:my|our)\s+(?:new\s+)?(?:place|flat|apartment|house|home)\s+in\s+(?P<v>" + _NAME + ")", "place",
        "residence", needs="place flat apartment house home")
    add(r"(?:^|[:,]\s*)home\s+is\s+(?:now\s+)?(?P<v>" + _NAME + ")", "place", "residence", needs="home")
    add(_I_AM + r"(?:originally\s+)?from\s+(?P<v>" + _NAME + ")", "place", "origin", needs="from")
    add(r"\bI\s+(?:originally\s+)?(?:come|came)\s+from\s+(?P<v>" + _NAME + ")", "place", "origin", needs="come came")
    add(r"\bI\s+grew\s+up\s+in\s+(?P<v>" + _NAME + ")", "place", "origin", needs="grew")
    add(r"\bI\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<v>.+)", "born_in", needs="born")

    # -- things: phone, car, salary, a project's deadline
    add(r"\bmy\s+(?:new\s+)?(?:phone|smartphone|mobile)\s+is\s+(?:now\s+)?(?:a|an|the)?\s*(?P<v>" + _PHONE +
        ")", "thing",
        "phone", needs="phone smartphone mobile")
    add(r"(?:\bmy|" + _I + r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+|finally\s+)?(?:bought|got|have|use|switched\s+to|"
        r"upgraded\s+to|replaced\s+\S+(?:\s+\S+){0,3}?\s+with))\s+(?:(?:a|an|the|my|new|brand\s+new)\s+)*"
        r"(?P<v>" + _PHONE + ")", "thing", "phone",
        needs="iphone pixel galaxy fairphone moto motorola nokia xperia redmi oneplus huawei xiaomi oppo")
    add(r"\bmy\s+(?:new\s+)?car\s+is\s+(?:now\s+)?(?:a|an|the)?\s*(?P<v>" + _NAME + ")", "thing", "car", needs="car")
    add(_I +
        r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+)?sold\s+(?:the|my|our)\s+\S+(?:\s+\S+)?\s+and\s+(?:bought|got)\s+"
        r"(?:a|an|the)\s+(?P<v>" + _NAME + ")", "vehicle", "car", needs="sold")
    add(r"(?:\bmy|" + _I + r"\s*(?:'ve\s+|\s+have\s+|\s+)?(?:just\s+|finally\s+|now\s+)?(?:bought|got|drive|own|"
        r"switched\s+to|traded\s+up\s+to|leased))\s+(?:(?:a|an|the|my|new|brand\s+new|used|second-hand)\s+)*"
        r"(?P<v>" + _CAR + ")", "thing", "car", needs=_CAR_TOKENS)
    add(r"\bmy\s+(?:new\s+|current\s+|annual\s+|yearly\s+|base\s+|monthly\s+)?(?:salary|pay|income|wage)\s+is\s+"
        r"(?:now\s+)?(?P<v>" + _MONEY + ")", "money", "salary", needs="salary pay income wage")
    add(r"\b(?:I|we)\s+(?:now\s+)?(?:make|earn)\s+(?P<v>" + _MONEY + r")\s+(?:a|per|an|annually|yearly|before)",
        "money", "salary", needs="make earn")
    add(_I_AM + r"(?:now\s+)?(?:earning|making)\s+(?P<v>" + _MONEY + r")(?=\s+(?:a|per|an|annually|yearly|before))",
        "money", "salary", needs="earning making")
    add(r"\b(?:bumped|raised|increased|upped)\s+my\s+(?:pay|salary)\s+(?:from\s+\S+\s+)?to\s+(?P<v>" + _MONEY + ")",
        "money", "salary", needs="pay salary")
    add(_I_AM + r"(?:now\s+)?on\s+(?P<v>" + _MONEY + r")(?:\s+now|\s+a\s+year)", "money_context", "salary", needs="on")
    add(r"\b(?:the\s+)?(?P<e>" + _CAP + r")\s+(?:project\s+)?(?:is|was)\s+(?:now\s+)?due\s+(?:on\s+|by\s+)?"
        r"(?P<v>" + _DATE + ")", "date", "deadline", needs="due")
    add(r"\b(?:our|the|my)\s+deadline\s+for\s+(?:the\s+)?(?P<e>" + _CAP + r")(?:\s+project)?\s+is\s+(?:now\s+)?"
        r"(?P<v>" + _DATE + ")", "date", "deadline", needs="deadline")
    add(r"\bthe\s+(?P<e>" + _CAP + r")\s+(?:project\s+)?deadline\s+(?:is\s+|was\s+|got\s+|has\s+been\s+)?(?:now\s+)?"
        r"(?:pushed\s+(?:back\s+)?|moved\s+|changed\s+|extended\s+|brought\s+forward\s+|set\s+)?(?:to|for|on)\s+"
        r"(?P<v>" + _DATE + ")", "date", "deadline", needs="deadline")
    add(r"\b(?:moved|pushed|changed|extended|shifted)\s+the\s+(?P<e>" + _CAP + r")\s+(?:project\s+)?deadline\s+"
        r"(?:back\s+)?to\s+(?P<v>" + _DATE + ")", "date", "deadline", needs="deadline")
    add(r"\b(?P<e>" + _CAP + r")\s+(?:ships|launches|goes\s+live)\s+on\s+(?P<v>" + _DATE + ")", "date", "deadline",
        needs="ships launches live")

    # -- amounts the speaker keeps and changes: "I've increased my snack budget to $65", "my budget limit is $650",
    # "my grocery budget was increased to $550 monthly" (seed 002 stage 4: update verbs)
    add(r"\b(?:I|we)(?:'ve|\s+have|'d|\s+had)?\s+(?:just\s+|already\s+|recently\s+|also\s+|finally\s+|now\s+|"
        r"managed\s+to\s+)*" + _CHANGED + r"\s+(?:down\s+|up\s+)?(?:my|our|the)\s+(?P<n>" + _THING + r")\s+"
        r"(?:down\s+|up\s+)?(?:from\s+[$\d][\w,.$%/]*(?:\s+[a-z]+)?\s+)?to\s+(?P<v>" + _QTY + ")", "amount",
        needs=_CHANGED_WORDS)
    add(r"\b(?:my|our)\s+(?P<n>" + _THING + r")\s+(?:was|has\s+been|got|had\s+been|is\s+now|were|have\s+been)\s+"
        r"(?:just\s+)?" + _CHANGED + r"\s+(?:from\s+[$\d][\w,.$%/]*(?:\s+[a-z]+)?\s+)?to\s+(?P<v>" + _QTY + ")",
            "amount",
        needs=_CHANGED_WORDS)
    add(r"\bmy\s+(?:new\s+|current\s+|total\s+|updated\s+)?(?P<n>" + _THING + r")\s+(?:is|was)\s+"
        r"(?:now\s+|currently\s+|still\s+)?(?:set\s+(?:at|to)\s+|at\s+|up\s+to\s+)?(?P<v>" + _QTY +
        r")(?=[\s,.;!?)]|$)",
        "amount", needs="my")
    add(r"(?:\b(?:my|our)|\b(?:I|we)(?:\s+have|'ve\s+got|\s+set)\s+(?:a|an))\s+(?:new\s+|increased\s+|updated\s+|"
        r"current\s+|total\s+|revised\s+|reduced\s+)*(?P<n>(?:[a-z][a-z'-]*\s+){0,3}?" + _AMOUNT_NOUN + r")\s+of\s+"
        r"(?P<v>" + _QTY + ")", "amount", needs=_AMOUNT_NOUNS)
    add(r"\b(?:my|our)\s+(?:new\s+|increased\s+|updated\s+|current\s+|total\s+|revised\s+|reduced\s+)*"
        r"(?P<v>\$\d+(?:,\d{3})*(?:\.\d+)?k?)\s+(?P<n>(?:[a-z][a-z'-]*\s+){0,2}?" + _AMOUNT_NOUN + r")\b", "amount",
        needs=_AMOUNT_NOUNS)
    # -- when something the speaker has is scheduled: "I have a Zoom meeting with Professor Danielle on March 22
    # at 3 PM", "I rescheduled my final meeting to April 2", "the Zoom call with the creative director got moved to
    # April 22 at 11 AM". A new time supersedes the old one only when the change is said (a second meeting with
    # the same person is not a correction of the first).
    add(r"(?:\b(?:I|we)(?:'ve|\s+have)?|\band)\s+(?:just\s+|already\s+|now\s+)?(?:got|have|booked|scheduled|set\s+up|"
        r"arranged|planned)\s+(?:a|an|my|our|the)\s+(?P<n>" + _EVENT + r")\s+(?:on|for|at)\s+(?P<v>" + _WHEN_SET + ")",
        "event", needs=_EVENT_NOUNS)
    add(r"\b(?:I|we)(?:'ve|\s+have|'d|\s+had)?\s+(?:just\s+|already\s+|now\s+|had\s+to\s+)?(?:rescheduled|moved|pushed|"
        r"postponed|shifted|changed|bumped|brought\s+forward)\s+(?:back\s+)?(?:the|my|our|a)\s+(?P<n>" + _EVENT +
        r")\s+(?:back\s+)?(?:from\s+[^,;]{1,30}?\s+)?to\s+(?P<v>" + _WHEN_SET + ")", "event", needs=_EVENT_NOUNS)
    add(r"\b(?:moving|rescheduling|postponing)\s+(?:the|my|our)\s+(?P<n>" + _EVENT + r")\s+to\s+(?P<v>" +
        _WHEN_SET + ")",
        "event", needs=_EVENT_NOUNS)
    add(r"\b(?:the|my|our)\s+(?P<n>" + _EVENT + r")\s+(?:is|was|has\s+been|got|had\s+been)\s+(?:now\s+|just\s+)?"
        r"(?:rescheduled|moved|pushed(?:\s+back)?|postponed|shifted|changed|brought\s+forward)\s+"
        r"(?:from\s+[^,;]{1,30}?\s+)?to\s+(?P<v>" + _WHEN_SET + ")", "event", needs=_EVENT_NOUNS)

    add(r"(?:\b(?:I|we)\s+|^)(?:just\s+)?lost\s+my\s+job\s+(?:at|with)\s+(?:the\s+)?(?P<v>" + _NAME + ")",
        "org", "employer", True,
        needs="lost")
    add(r"(?:\b(?:I|we)\s+|^)(?:just\s+)?lost\s+my\s+job\s+as\s+(?P<v>(?:a|an)\s+.+)", "occupation", "occupation", True,
        needs="lost")

    # -- age, allergies, family, study, instruments and sports (profiles)
    add(_I_AM + r"(?P<v>\d{1,3})\s+(?:years?\s+old|yrs?\s+old|y/?o)\b", "age", "age", needs="old yrs yo y")
    add(_I_AM + r"(?:very\s+|really\s+|super\s+|severely\s+|a\s+bit\s+)?allergic\s+to\s+(?P<v>.+)", "free", "allergy",
        needs="allergic")
    add(r"\bI\s+have\s+(?P<v>(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
        r"(?:kids|children|sons|daughters|son|daughter|child|kid|brothers|sisters|siblings|dogs|cats|pets))\b",
        "family", "family", needs="have")
    add(r"\bI(?:'m|\s+am)?\s+(?:currently\s+)?(?:study|studying|majoring\s+in|major\s+in)\s+(?P<v>.+)", "free",
        "studies", needs="study studying majoring major")
    add(_I_AM + r"(?:a\s+)?(?:student|freshman|sophomore|junior|senior)\s+at\s+(?P<v>.+)", "free", "school",
        needs="student freshman sophomore junior senior")
    add(r"\bI\s+" + _ADV + r"{0,2}play\s+(?P<v>the\s+[a-z]+|[a-z]+(?:ball|tennis|golf|hockey|chess|soccer|"
        r"rugby|cricket|guitar|piano|drums|violin|cello|bass|saxophone|flute|ukulele))\b", "plays", "plays",
        needs="play")

    # -- likes: "I love hiking", "I'm a big fan of pottery", "I'm really into jazz", "I'm passionate about art"
    add(_I_AM + r"(?:a\s+|such\s+a\s+)?(?:really\s+|so\s+)?(?:big|huge|massive|total|real|true|great|die[- ]hard|"
        r"avid)?\s*fan\s+of\s+(?P<v>.+)", "free", "likes", needs="fan")
    add(_I_AM + r"(?:a\s+)?(?:big|huge|massive|total|real|true|great|die[- ]hard|avid)\s+(?P<v>[a-z]+(?:\s+[a-z]+)?)"
        r"\s+(?:fan|lover|enthusiast|buff|nerd|geek)\b", "free", "likes", needs="fan lover enthusiast buff nerd geek")
    add(_I_AM + _ADV + r"{0,2}(?:into|passionate\s+about|obsessed\s+with|crazy\s+about|hooked\s+on)\s+(?P<v>.+)",
        "free", "likes", needs="into passionate obsessed crazy hooked")
    add(r"\bI\s+" + _ADV + r"{0,3}(?:love|like|enjoy|adore)\s+(?P<v>.+)", "free", "likes",
        needs="love like enjoy adore")
    add(r"\bI(?:'ve|\s+have)\s+(?:always|long|been)\s+(?:loved|liked|enjoyed|adored|into)\s+(?P<v>.+)", "free",
        "likes", needs="loved liked enjoyed adored into")
    add(r"\bmy\s+(?:biggest\s+|real\s+|true\s+|greatest\s+)?passion\s+is\s+(?P<v>.+)", "free", "likes", needs="passion")
    # identity: "I'm a nurse" (an occupation), "I am a single parent", "I'm an introvert"
    add(_I_AM + r"(?:now\s+)?(?:a|an)\s+(?P<v>.+)", "identity", "identity", needs="a an")
    return r


_RULES = _rules()
# Word -> the rules that need it, ascending: a sentence tries only the rules one of whose words it holds, in order.
_RULES_BY_WORD: dict[str, tuple[int, ...]] = {}
for _k, _rule in enumerate(_RULES):
    for _w in _rule[4]:
        _RULES_BY_WORD[_w] = (*_RULES_BY_WORD.get(_w, ()), _k)

# Statements are conversational: only the head of a very long message and of a run-on sentence is read, which keeps
# extraction linear in the capped size whatever the input (a 10 MB paste costs the same as a 20 kB one).
MAX_EXTRACT_CHARS = 20_000
MAX_SENTENCE_CHARS = 1_000
# Every pattern needs one of these: one search rules most messages out before the patterns run.
_ANY = re.compile(r"\b(?:I|I'm|I've|I'd|we|we're|we've|my|our|me|home|due|deadline|ships|launches|meet|moved|"
                  r"relocated|switched|sold|started|quit|left|joined|accepted|hired|retrained|favou?rite|passed|"
                  r"died)\b", re.I)
# _ANY on the text as re.I folds it (textnorm.regex_folded), case-sensitive: the same answer, faster.
_ANY_FOLDED = re.compile(_ANY.pattern.lower())
_WORK_CONTEXT = re.compile(r"\b(?:job|jobs|work|working|worked|team|company|role|position|hired|offer|employer|"
                           r"colleagues?|office|startup|firm|boss|career|contract|shift|not\s+at|as\s+an?)\b", re.I)
_SALARY_CONTEXT = re.compile(r"\b(?:raise|salary|pay|paid|earn|earning|income|wage|payrise)\b", re.I)


def _sentences(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) pairs of the head of ``text``; curly apostrophes read as straight ones."""
    text = text[:MAX_EXTRACT_CHARS].replace("’", "'").replace("‘", "'")
    out, pos = [], 0
    for m in _SENTENCE.finditer(text):
        out.append((pos, text[pos:m.start()]))
        pos = m.end()
    out.append((pos, text[pos:]))
    res = []
    for off, s in out:
        stripped = s.strip()
        if stripped:
            res.append((off + s.index(stripped[0]), stripped[:MAX_SENTENCE_CHARS]))
    return res


def _hypothetical(sent: str, start: int) -> bool:
    """Whether the clause before ``start`` makes the statement a hypothesis, a plan or a wish."""
    head = sent[:start]
    cuts = [m.end() for m in _CLAUSE_START.finditer(head)]
    clause = head[cuts[-1]:] if cuts else head
    return bool(_HYPOTHETICAL.search(clause))


def extract(text: str, speaker: str | None = None) -> list[Statement]:
    """Attribute statements in ``text`` said by ``speaker``, in order of appearance (deterministic, offline).

    A statement read by an earlier rule is not read again by a later rule from the same start ("I'm a big fan of
    jazz" is a like of "jazz", not the identity "big fan of jazz"); each (attribute, value) is reported once.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    if speaker is not None and not isinstance(speaker, str):
        raise InvalidInput(f"speaker must be a str or None, got {type(speaker).__name__}")
    if not _ANY_FOLDED.search(textnorm.regex_folded(text[:MAX_EXTRACT_CHARS])):
        return []
    me = (speaker or "").strip().lower()
    out: list[Statement] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for offset, sent in _sentences(text):
        if _SELF_QUESTION.match(sent):
            continue
        low = sent.lower()
        words = set(re.findall(r"[a-z0-9]+", low))
        update = bool(words & UPDATE_CUES) or "no longer" in low
        claimed: set[int] = set()  # start offsets already read as a statement
        tried = sorted({k for w in words if w in _RULES_BY_WORD for k in _RULES_BY_WORD[w]})
        for pattern, kind, attr, negated, _needs in (_RULES[k] for k in tried):
            pos = 0
            while pos < len(sent):
                m = pattern.search(sent, pos)
                if m is None:
                    break
                # values run to the end of the sentence; search again inside the value for a second statement
                pos = m.start("v") if m.start("v") > m.start() else m.end()
                if m.start() in claimed or _hypothetical(sent, m.start()):
                    continue
                got = _read(kind, attr, m, sent, text)
                if got is None:
                    continue
                attribute, value, entity = got
                claimed.add(m.start())
                first_person = entity is None
                ent = me if entity is None else entity
                key = (ent, attribute, fold(value), negated)
                if key in seen:
                    continue
                seen.add(key)
                a = offset + m.start("v")
                out.append(Statement(ent, attribute, value, update or negated, negated, first_person, sent,
                                     (a, a + len(m.group("v")))))
    return out


# -- an earlier statement of an updated amount, read again --------------------------------------------------------
#
# An update names its attribute ("I've adjusted my relocation budget to $3,500"); the statement it updates was often
# said in other words ("I've budgeted $3,000 for relocation expenses"), which no pattern reads as that attribute.
# Once the update is known, the earlier messages of the same speaker that hold the attribute's head word are read
# again for it: a sentence that holds the head word, one of the attribute's other words near it, and an amount of the
# same kind next to the head word, with another value.

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# the words of a sentence, an amount as one word: "$3,000", "65%", "12"
_AMOUNT_WORD = re.compile(r"\$\s?(?:" + _NUMBER + r")k?|(?:" + _NUMBER + r")\s?%|(?:" + _NUMBER + r")(?![\w.])"
                          r"|[A-Za-z][A-Za-z'-]*")
_RESTATE_NEAR = 4    # words between the head word and the amount (either side)
_PHRASE_END = re.compile(r",(?!\d{3})|[;:()]|\s(?:and|but|or|so|was|were|is|are)\s")  # not "$3,000"
_UNIT_WORDS = frozenset("""second seconds minute minutes hour hours day days week weeks month months year years
    percent percentage times""".split())
_RESTATE_MODS = 3    # words between the head word and one of the attribute's other words, in one phrase


def _amount_kind(value: str) -> tuple[str, str | None] | None:
    """("money" | "percent" | "count", the unit's stem for a count with a unit) of an amount as said, or None for a
    value that is not an amount (a name, a date, a time of day)."""
    v = value.strip().lower()
    if re.search(r"\b(?:am|pm)\b|:\d{2}", v) or re.search(r"[a-z]{3,}\s+\d", v):
        return None  # a time of day, or a date ("April 5")
    if v.startswith("$"):
        return "money", None
    if re.match(r"(?:" + _NUMBER + r")\s?%", v):
        return "percent", None
    m = re.match(r"(?:" + _NUMBER + r")\s*([a-z]{2,})?", v)
    if not m:
        return None
    unit = m.group(1)
    if unit in ("monthly", "weekly", "yearly", "annually", "daily", "hourly", "per", "a", "an"):
        unit = None
    return "count", (textnorm.stem(unit) if unit else None)


def restated_head(st: Statement) -> str | None:
    """The word an earlier statement of ``st``'s attribute must hold (the attribute's last word: "budget" for
    "relocation_budget"), for an update of an amount that holds one value at a time and names no period or time of
    day; None otherwise (nothing is read again for it)."""
    if not st.update or st.negated or not single_valued(st.attribute) or st.attribute.endswith("_time"):
        return None
    if "_for_" in st.attribute or _amount_kind(st.value) is None:
        return None  # an amount for a period ("book_budget_for_april_june") is one of several
    words = [w for w in st.attribute.split("_") if w]
    if len(words) < 2 or words[-1] in _UNIT_WORDS:
        return None  # a bare "budget" is one of many; "hours" (of work) is a unit, said of every span of time
    return words[-1]


def restated(text: str, st: Statement) -> Statement | None:
    """The statement of ``st``'s attribute that ``text`` (an earlier message of the same speaker) makes in other
    words, or None: a sentence of it, not a question about oneself nor a hypothetical, that holds the attribute's
    head word (:func:`restated_head`), one of the attribute's other words within a few words of it, and an amount of
    the kind ``st``'s value is (money, a percentage, a count of the same unit) within a few words of the head word,
    whose value differs from ``st``'s; the nearest such amount. The statement is ``st``'s attribute and entity with
    that value, said in ``text`` (no update cue)."""
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    head = restated_head(st)
    if head is None:
        return None
    kind, unit = _amount_kind(st.value)  # type: ignore[misc]
    head_stem = textnorm.stem(head)
    # a word with the head word's stem starts with what the head word and its stem share, less the letter a stem
    # may change ("happy" -> "happi"): a text without those letters holds no such word
    n = 0
    while n < min(len(head), len(head_stem)) and head[n] == head_stem[n]:
        n += 1
    shared = head[: n - 1]
    if shared and shared not in text.lower():
        return None
    mods = {textnorm.stem(w) for w in st.attribute.split("_")[:-1] if w and w not in textnorm.STOPWORDS}
    new = _number_of(st.value)
    for offset, sent in _sentences(text):
        if _SELF_QUESTION.match(sent):
            continue
        words = [(m.start(), m.group(0)) for m in _AMOUNT_WORD.finditer(sent)]
        stems = [textnorm.stem(w.lower()) if w[0].isalpha() else None for _, w in words]
        best = None
        for h, st_h in enumerate(stems):
            if st_h != head_stem:
                continue
            near = range(max(0, h - _RESTATE_MODS), min(len(words), h + _RESTATE_MODS + 1))
            if mods and not any(stems[k] in mods and not _PHRASE_END.search(sent, min(words[k][0], words[h][0]),
                                                                             max(words[k][0], words[h][0]))
                                for k in near if k != h):
                continue
            for k in range(max(0, h - _RESTATE_NEAR - 1), min(len(words), h + _RESTATE_NEAR + 2)):
                start, w = words[k]
                if w[0].isalpha() or _hypothetical(sent, start):
                    continue
                if (kind == "money") != w.startswith("$") or (kind == "percent") != w.endswith("%"):
                    continue
                if kind == "count":
                    after = stems[k + 1] if k + 1 < len(stems) else None
                    if unit is not None and after != unit:
                        continue
                    if unit is None and k + 1 != h and not (k + 2 == h and stems[k + 1] in mods):
                        continue  # a bare number counts the head's thing: "10 practice sessions"
                value = _number_of(w)
                if value is None or value == new:
                    continue
                if best is None or abs(k - h) < best[0]:
                    best = (abs(k - h), start, w)
        if best is not None:
            a = offset + best[1]
            return Statement(st.entity, st.attribute, best[2], False, False, True, sent, (a, a + len(best[2])), True)
    return None


def _number_of(value: str) -> float | None:
    """The first number of an amount as said ("$3,500" -> 3500.0, "12 books" -> 12.0), or None."""
    m = re.search(_NUMBER, value)
    if not m:
        return None
    n = float(m.group(0).replace(",", ""))
    if re.match(r"\$?\s?(?:" + _NUMBER + r")k\b", value.strip().lower()):
        n *= 1000
    return n


def _read(kind: str, attr: str | None, m: re.Match, sent: str, text: str) -> tuple[str, str, str | None] | None:
    """(attribute, value, entity or None for the speaker) of one match, or None when the value is not one."""
    raw = m.group("v")
    if kind in ("place", "org", "org_joined", "person"):
        value = _name_value(raw)
        if value is None:
            return None
        if kind == "org_joined" and not _WORK_CONTEXT.search(sent):
            return None  # "I joined Toastmasters": a club, unless the sentence is about work
        return attr, value, None
    if kind == "pet_gone":
        value = _name_value(raw)
        return ("pet*", value, None) if value else None
    if kind == "thing":
        value = re.match(r"\S+(?:\s+\S+)*", raw.strip()).group(0).rstrip(".,!?")
        return attr, value, None
    if kind == "vehicle":
        value = _name_value(raw)
        if value is None:
            return None
        return ("phone" if re.fullmatch(_PHONE, value) else "car"), value, None
    if kind in ("money", "money_context"):
        if kind == "money_context" and not _SALARY_CONTEXT.search(text[:MAX_EXTRACT_CHARS]):
            return None
        return attr, raw.strip(), None
    if kind == "date":
        entity = m.group("e")
        if entity.lower() in _NOT_NAMES or entity.lower() in textnorm.STOPWORDS:
            return None
        return attr, re.sub(r"\s+", " ", raw.strip()), entity.lower()
    if kind == "event":
        key = _thing_key(m.group("n"), vague=_VAGUE_EVENTS)
        if key is None:
            return None
        return f"{key}_time", re.sub(r"\s+", " ", raw.strip()), None
    if kind == "amount":
        key = _thing_key(m.group("n"))
        if key is None:
            return None
        period = _PERIOD.match(sent, m.end("n") if m.end("n") > m.end("v") else m.end())
        if period:  # "my $60 book budget for April to June" is not the February book budget
            key = _thing_key(f"{m.group('n')} for {period.group('p')}")
            if key is None:
                return None
        later = _LATER.match(sent, m.end())
        if later:  # "increased to $500 monthly starting Sept 1, and later to $550": the last value holds
            raw = later.group("v")
        words = raw.split()
        if len(words) > 1 and words[-1].lower() in textnorm.STOPWORDS:
            words = words[:-1]  # "$3,500 to cover": the amount ends before the clause goes on
        return key, " ".join(words), None
    if kind == "age":
        return "age", raw, None
    if kind == "family":
        return "family", raw.lower(), None
    if kind == "name_of":
        cap = _NAME_WORDS.match(raw.strip(" \"'“”‘’"))
        value = cap.group(0) if cap else None
        if value is None or value.lower() in _BAD_FIRST or value.lower() in _NOT_NAMES or len(value.split()) > 3:
            return None
        if attr == "name":
            return "name", value, None
        noun = m.group("n").lower()
        noun = re.sub(r"\s+", " ", noun)
        if noun in PETS:
            return f"{PETS[noun]}_name", value, None
        if re.fullmatch(_PARTNERS, noun):
            return "partner", value, None
        key = noun_key(noun)
        return (f"{key}_name", value, None) if key else None
    if kind == "favorite":
        value = _clean_value(raw)
        if value is None:
            return None
        noun = noun_key(m.groupdict().get("n") or "")
        if not noun or noun in {"one", "thing", "part", "is", "was", "now"} or noun.endswith("_one"):
            return "favorite", value, None
        return f"favorite_{noun}", value, None
    if kind == "born_in":
        value = _clean_value(raw, max_words=4)
        if value is None:
            return None
        if re.fullmatch(r"\d{4}", value):
            return "birth_year", value, None
        name = _name_value(value)
        return ("origin", name, None) if name else None
    if kind == "plays":
        value = re.sub(r"^the\s+", "", raw.strip(), flags=re.I)
        return ("plays", value, None) if value.lower() not in _BAD_FIRST else None
    if kind in ("identity", "occupation"):
        value = _clean_value(raw, max_words=5 if kind == "occupation" else 4)
        if value is None:
            return None
        had_article = bool(_LEAD_ARTICLE.match(value))
        value = _INTENSIFIERS.sub("", _LEAD_ARTICLE.sub("", value))
        words = value.split()
        if not words or words[0].lower() in _BAD_FIRST or len(words) > 3:
            return None
        # a trailing preposition means the noun phrase continues into a clause ("a part of", "a mom to")
        if words[-1].lower() in {"of", "to", "for", "in", "on", "at", "with", "about", "from", "by"}:
            return None
        if words[-1].lower() in OCCUPATIONS:
            return "occupation", value, None
        if kind == "occupation" and had_article:
            return "occupation", value, None
        return ("identity", value, None) if kind == "identity" else None
    value = _clean_value(raw)
    if value is None:
        return None
    if attr in ("likes", "dislikes", "prefers"):
        value = re.sub(r"^to\s+", "", value, flags=re.I)
        if not value or value.split()[0].lower() in _BAD_FIRST:
            return None
        if _REFERENTIAL.search(value):
            return None  # "having them around", "the way it looks": the object is elsewhere in the dialogue
    return attr, value, None


# -- questions ----------------------------------------------------------------------------------------------------

def query_targets(query: str) -> tuple[list[str], set[str]]:
    """(attributes the query asks about, as :func:`matches` patterns; lower-case names it mentions).

    "Where does Maya live now?" -> (["residence"], {"maya"}); "What food does Cal like best?" asks for
    ``favorite_food``; "What does Ann do for a living?" for an occupation."""
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a str, got {type(query).__name__}")
    low = query.lower().replace("’", "'")
    wanted: list[str] = []
    if re.search(r"\bfor\s+a\s+living\b", low):
        wanted += ["occupation", "employer"]
        low = re.sub(r"\bfor\s+a\s+living\b", " ", low)
    m = re.search(
        r"\bwhat (?:kind of |type of )?([a-z]+) does .{1,40} (?:like|love|enjoy|prefer)(?: the)? (?:best|most)\b", low)
    fav = favorite_attribute(f"favourite {m.group(1)}") if m else favorite_attribute(low) if "favo" in low else None
    if fav:
        wanted.append(fav)
    stems = [textnorm.stem(w) for w in textnorm.words(low)]
    for k, s in enumerate(stems):
        if s == textnorm.stem("from") and not (k == len(stems) - 1 and textnorm.stem("where") in stems):
            continue  # "where is she from?" asks for an origin; "a gift from her" does not
        for a in CUES.get(s, ()):
            if fav and a == "favorite*":
                continue
            if a not in wanted:
                wanted.append(a)
    if re.search(r"\bwhere\b.*\b(live|based|stay)", low) and "residence" not in wanted:
        wanted.append("residence")
    if fav or m:
        wanted = [w for w in wanted if w not in ("likes", "prefers", "plays")] or wanted
    names = {w.lower().removesuffix("'s").removesuffix("’s") for w in textnorm.words(query) if w[:1].isupper()}
    names -= textnorm.STOPWORDS | textnorm.QUESTION_WORDS
    return wanted, names
