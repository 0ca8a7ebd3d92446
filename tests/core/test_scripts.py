"""Words of every script: what counts as a word (hippo.text.textnorm.words) and that the lexical channel finds
them, against hand-labelled examples, the previous Latin-only rule (unchanged on Latin text) and a naive BM25 over
CJK bigrams."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo import Memory
from hippo.index import channels
from hippo.text import textnorm, tokenizer
from hippo.text.query import analyze

from bm25ref import bm25

WORDS = [
    ("Я купила новую машину вчера, она красная.", ["Я", "купила", "новую", "машину", "вчера", "она", "красная"]),
    ("Η Ωμέγα είναι ένα γράμμα.", ["Η", "Ωμέγα", "είναι", "ένα", "γράμμα"]),
    ("اشْتَرَيْتُ سيارة جديدة", ["اشْتَرَيْتُ", "سيارة", "جديدة"]),
    ("שָׁלוֹם עוֹלָם", ["שָׁלוֹם", "עוֹלָם"]),
    ("मैंने कल एक नई कार खरीदी।", ["मैंने", "कल", "एक", "नई", "कार", "खरीदी"]),
    ("나는 어제 새 차를 샀다", ["나는", "어제", "새", "차를", "샀다"]),
    ("北京大学很好", ["北京", "京大", "大学", "学很", "很好"]),
    ("我在东京。猫", ["我在", "在东", "东京", "猫"]),
    ("カメラを買った", ["カメ", "メラ", "ラを", "を買", "買っ", "った"]),
    ("café naïve e\u0301te\u0301", ["café", "naïve", "e\u0301te\u0301"]),
    ("I don't know Caroline's dog_house 2x3", ["I", "don't", "know", "Caroline's", "dog", "house", "2x3"]),
    ("東京Tower_x, 北京's café", ["東京", "Tower", "x", "北京", "café"]),
]


@pytest.mark.parametrize("text,expected", WORDS)
def test_words_of_every_script(text, expected):
    assert textnorm.words(text) == expected


_LATIN_BEFORE = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['’][A-Za-z]+)?")  # the rule before other scripts counted


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x24F,
                                      blacklist_characters="\u00d7\u00f7\u00aa\u00b2\u00b3\u00b5\u00b9\u00ba"
                                                           "\u00bc\u00bd\u00be"), max_size=80))
def test_latin_text_splits_as_before(text):
    assert textnorm.words(text) == _LATIN_BEFORE.findall(text)


MESSAGES = [
    "Я купила новую машину вчера, она красная.",
    "Завтра поедем на дачу к бабушке.",
    "Η Ωμέγα είναι ένα γράμμα.",
    "اشتريت سيارة جديدة أمس",
    "שָׁלוֹם עוֹלָם",
    "मैंने कल एक नई कार खरीदी।",
    "나는 어제 새 차를 샀다",
    "我昨天在北京买了一只小猫，名字叫咪咪。",
    "明天我们去上海看展览吧。",
    "昨日、東京で新しいカメラを買いました。",
    "We adopted a greyhound from the rescue in Dublin.",
]


@pytest.mark.parametrize("query,expected", [
    ("машину", 0), ("бабушке", 1), ("Ωμέγα", 2), ("سيارة", 3), ("עוֹלָם", 4), ("कार", 5), ("차를", 6),
    ("北京", 7), ("小猫叫什么名字？", 7), ("上海", 8), ("カメラをどこで買いましたか", 9), ("greyhound rescue", 10),
])
def test_search_finds_the_message_in_its_script(query, expected):
    with Memory(None) as mem:
        items = mem.add_many({"text": t} for t in MESSAGES)
        hits = mem.search(query, k=3)
        assert hits and hits[0].id == items[expected].id


def test_cjk_bm25_matches_a_naive_bigram_reference():
    """BM25 over the Content DWM for a CJK question equals BM25 over the messages' character bigrams (the store's
    k1 / b, lengths in tokens), on messages whose bigrams keep their tokens in context."""
    texts = ["我在北京工作。", "北京的冬天很冷，北京的夏天很热。", "上海和北京都很大。", "我喜欢上海的夜景。",
             "他在东京学习日语。"]
    with Memory(None, config={"retrieval": {"neighbor_weight": 0.0}}) as mem:
        mem.add_many({"text": t} for t in texts)
        idx = mem.engine.state().index
        q = analyze("北京和上海")
        got = channels.lexical(idx, q, mem.config)
        got = dict(zip(got.rows.tolist(), got.scores.tolist()))
        terms = list(dict.fromkeys(q.keywords))
        want = bm25([[t.count(term) for t in texts] for term in terms], [len(tokenizer.encode(t)) for t in texts],
                    mem.config.retrieval.bm25_k1, mem.config.retrieval.bm25_b)
        assert set(q.keywords) >= {"北京", "上海"}
        assert set(got) == set(want)
        for r, v in want.items():
            assert got[r] == pytest.approx(v, rel=1e-9)
