"""The masked form's field patterns (hippo.text.masking) pass over the letters inside words: a field that begins with a
letter has no ASCII letter or digit before it. Their matches are those of the patterns gated only by the first
character, on generated machine outputs and chat, over whole texts and over the parts of a text they are run on."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.text import masking

_FIRST_ONLY = "(?=[0-9A-FJMNOSTWa-f])"  # the gate before: a field's possible first characters
_PATTERNS = [masking._FIELDS, masking._FIELDS_DRAWN, masking._FIELDS_SMALL, masking._FIELDS_BOTH]
_REFERENCE = [re.compile(rx.pattern.replace(masking._GATE, _FIRST_ONLY), rx.flags) for rx in _PATTERNS]

_PIECES = ["3f2b9c1e-8d4a-4b2c-9e1f-0a1b2c3d4e5f", "2026-03-01T10:07:33.25Z", "10:07:33", "2026-03-01", "01/03/2026",
           "12:05", '"ts": 1709287207', "ts=1709287207.25", '"req":"07923986"', 'id="9f1c2ab3d"', "9f1c2ab",
           "0x7ffe3a2b", "7d4b9c8f6-x2kqp", "dfbaaafa", "10.0.0.1", "v1.4.2", "33ms", "3.41s", "5d4h", "3 hours",
           "12m", "07923986", "4096", "3,5", "42", "7", "Sun, 01 Mar 2026", "01/Mar/2026", "Mar  1", "Sun Mar  1",
           "Sept 3, 2024", "Wed, 04 Mar 2026", "Thu Mar  5", "Nov 11", "Aug 2, 2025", "xKqPzRtYvWmNbHgF",
           "getElementById", "AuthService", "a1b2c3d4e5", "python3", "x2kqp9v1",
           "deadbeef", "Feb", "Monday", "Oct", "ABCDEF12", "cafe", "face", "bead", "Jan5", "e2e", "req-07923986",
           "web-3", "=====", "passed", "in", "the", "é", "ß", "İ"]
_GLUE = ["", " ", "  ", "\n", ":", "=", '"', "_", "-", ".", "/", ",", "x", "Z", "9", "é"]
_TEXT = st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_GLUE)), max_size=30).map(
    lambda parts: "".join(p + g for p, g in parts))


def _found(rx: re.Pattern, text: str, *bounds: int) -> list[tuple]:
    return [(m.span(), m.lastgroup, m.groupdict()) for m in rx.finditer(text, *bounds)]


@settings(max_examples=1500, deadline=None)
@given(_TEXT, st.integers(0, 400), st.integers(0, 400))
def test_fields_gated_by_the_character_before_equal_the_first_character_gate(text, a, b):
    a, b = sorted((min(a, len(text)), min(b, len(text))))
    for rx, ref in zip(_PATTERNS, _REFERENCE):
        assert _found(rx, text) == _found(ref, text)
        assert _found(rx, text, a, b) == _found(ref, text, a, b)


def test_the_gate_is_in_every_field_pattern():
    for rx, ref in zip(_PATTERNS, _REFERENCE):
        assert masking._GATE in rx.pattern and ref.pattern != rx.pattern
