"""Standing instructions: what a user tells an assistant to do from now on.

"Always include version numbers when I ask about software dependencies." is not a fact about the world but a rule
for every later answer within its scope. A later question rarely shares its words ("Which Flask version should I
pin?"), yet the rule applies to it; a memory that leaves it out of the context makes the assistant break it. The
recall packer (:mod:`hippo.engine.evidence`) therefore treats such messages as likely to matter to any question.

Detection is deliberately narrow (precision over recall): the message opens with ``always`` or ``never`` (after an
optional ``please``) and a scope clause says when the rule applies. Either the next word is an imperative verb from
a fixed list and the scope is any "when I ...", "whenever we ...", "for all future answers"; or the scope addresses
the assistant's answers ("when I ask / request / bring up ...") and the next word is not one of the adjectives,
adverbs and auxiliaries that open a remark. "Always good to hear!" and "Always happy when I see you" are not
instructions; "Never use emoji when I ask for code" and "Always tailor resumes to ATS standards when I ask about
applications" are.

Stated preferences are the other kind of standing rule a user gives: "I prefer e-books for their portability",
"I'd rather keep human oversight". They say how the user wants the next suggestion, not what happened, and a later
request for advice ("I want something easy to carry around. What would you suggest?") is answered in their terms
while rarely sharing their words. :func:`states_preference` recognises a message that states one in the first person;
:func:`asks_for_advice` a question that asks the assistant for a suggestion rather than to recount the history.
"""

from __future__ import annotations

import re

__all__ = ["ADVICE_WORDS", "OPENERS", "PREFERENCE_WORDS", "asks_for_advice", "is_standing_instruction",
           "states_preference"]

# The words a standing instruction opens with: the first token of such a message is one of their spellings.
OPENERS = ("Always", "always", "ALWAYS", "Never", "never", "NEVER", "Please", "please")

_VERBS = frozenset("""
add address answer ask assume avoid be begin break bring call check cite clarify compare confirm consider convert
define describe detail display double-check emphasise emphasize end explain express flag focus follow format give
group highlight include keep label lead let limit list make mark mention note number offer open order organise
organize outline phrase point present prioritise prioritize provide put quote rank recommend refer remind reply
report respond round say separate share show sort specify spell start state stick structure suggest summarise
summarize tag tell translate treat try use verify warn write
""".split())

# Words after "always" / "never" that open a remark rather than a rule ("Always good to hear", "Never been there").
_NOT_VERBS = frozenset("""
a about all an are as at been being better busy by fun glad good great happy here in is just late like lovely more
most much my nice not now on one our ready really right so such sure that the their there this too true up very was
welcome were with your
""".split())

_OPEN = re.compile(
    r"\s*(?:please[\s,]+)?(?:always|never)\s+(?:(?:please|also|make sure to|be sure to)\s+)?(?P<verb>[a-z][a-z-]*)\b",
    re.IGNORECASE)
_SCOPE = re.compile(
    r"\b(?:when(?:ever)?|if|each time|every time|any time|anytime)\s+(?:I|we)\b"
    r"|\bfor (?:all|any|every) (?:future |later )?(?:questions?|answers?|responses?|replies|requests?)\b",
    re.IGNORECASE)
_ASKING = re.compile(
    r"\b(?:when(?:ever)?|if|each time|every time|any time|anytime)\s+(?:I|we)\s+"
    r"(?:ask|request|need|want|query|inquire|bring up|mention|talk about|discuss|look for|search for)\b",
    re.IGNORECASE)
_HEAD = 400  # characters read: an instruction states its rule and scope up front


def is_standing_instruction(text: str) -> bool:
    """Whether ``text`` is a standing instruction to an assistant (see the module's description)."""
    if not isinstance(text, str):
        return False
    head = text[:_HEAD]
    m = _OPEN.match(head)
    if not m:
        return False
    verb = m.group("verb").lower()
    if verb in _VERBS:
        return _SCOPE.search(head) is not None
    return verb not in _NOT_VERBS and _ASKING.search(head) is not None


# -- stated preferences and requests for advice -------------------------------------------------------------------

# The words a first-person statement of preference holds ("I prefer", "I'd rather", "my preference"): a message is
# read only when one of them occurs in it.
PREFERENCE_WORDS = ("prefer", "Prefer", "preference", "preferences", "rather")

_PREFERS = re.compile(
    r"\bI(?:'d|\u2019d|\s+would)?\s+(?:[a-z]+\s+){0,2}?prefer\b"   # I prefer, I really prefer, I'd still prefer
    r"|\bI(?:'d|\u2019d|\s+would)\s+(?:much\s+)?rather\b"             # I'd rather, I would much rather
    r"|\bmy\s+(?:personal\s+)?preferences?\b",                          # my preference is ...
    re.IGNORECASE)
# A request for the assistant's suggestion ("Can you suggest ...", "How should I ...", "What would you recommend")
_ADVICE = re.compile(
    r"\b(?:suggest|suggestions?|recommend|recommendations?|advise|advice|should\s+I|would\s+you|could\s+you|"
    r"can\s+you|how\s+can\s+I|how\s+do\s+I|help\s+me)\b", re.IGNORECASE)
# ... by the asker for themselves or of the assistant ("I", "my", "you": not "What would Caroline suggest?") ...
_PERSON = re.compile(r"\b(?:I|me|my|mine|myself|you|your)\b", re.IGNORECASE)
# ... unless it asks to recount the history: what was said, suggested or done, when (not "what should I consider
# when choosing"), or a summary of it
_RECOUNT = re.compile(
    r"\b(?:did|have|had|was|were)\s+(?:I|you|we)\b"
    r"|\bI(?:'ve|\u2019ve|\s+have)?\s+(?:mentioned|said|told|asked|noted|shared|brought)\b"
    r"|\b(?:recommended|suggested|advised)\b"
    r"|^\W*when\b|\bwhen\s+(?:did|do|does|is|was|were|will|would|am|are|have|has|had)\b"
    r"|\bsummar|\brecap\b", re.IGNORECASE)
_MAX_CHARS = 20_000  # a preference is stated in a message's prose, not at the end of a pasted log
# The words of a request's form: in "Can you suggest some options I might like?" they say what is asked, not what
# about, and an assistant writes "I'd suggest" and "I recommend" in most of its replies (:mod:`hippo.text.query`).
ADVICE_WORDS = ("suggest", "suggestion", "suggestions", "recommend", "recommendation", "recommendations", "advise",
                "advice")


def states_preference(text: str) -> bool:
    """Whether ``text`` states its writer's preference in the first person: "I prefer X", "I'd rather X", "my
    preference is X" (a hedge of at most two words may sit between: "I really prefer", "I'd still prefer")."""
    if not isinstance(text, str):
        return False
    return _PREFERS.search(text[:_MAX_CHARS]) is not None


def asks_for_advice(question: str) -> bool:
    """Whether ``question`` asks the assistant for a suggestion, in the first or second person ("Can you suggest some
    books for me?", "How should I approach the editing?", "Can you explain step by step how to ...?"), rather than
    to recount the history ("What did I say about ...?", "When did I ...?", "Can you summarise ...?") or about
    someone else ("What would Caroline suggest?")."""
    if not isinstance(question, str):
        return False
    return (_ADVICE.search(question) is not None and _PERSON.search(question) is not None
            and _RECOUNT.search(question) is None)
