"""Relative days, weeks, months and years said in other languages ("ayer", "gestern", "la semana pasada", "в прошлом
году") are resolved against the message's day as the English words are; the words those languages also use for
something else ("por la mañana", "guten Morgen", German "hier") are not."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo import Memory
from hippo.text import timeexpr

SAID = datetime(2024, 3, 6, 10, tzinfo=timezone.utc).timestamp()  # Wednesday 6 March 2024


def _day(text: str) -> str | None:
    refs = timeexpr.find(text, SAID)
    return datetime.fromtimestamp(refs[0].start, tz=timezone.utc).date().isoformat() if refs else None


@pytest.mark.parametrize("text, day", [
    ("Ayer fui al cine con Lucía.", "2024-03-05"), ("Mañana voy a Madrid.", "2024-03-07"),
    ("manana voy a Madrid", "2024-03-07"), ("Pasado mañana empiezo el curso.", "2024-03-08"),
    ("Anteayer llovió mucho.", "2024-03-04"), ("Hoy tengo examen.", "2024-03-06"),
    ("Esta mañana corrí 5 km.", "2024-03-06"), ("Anoche cenamos en casa de Pedro.", "2024-03-05"),
    ("Gestern war ich im Kino.", "2024-03-05"), ("Ich fliege morgen nach Berlin.", "2024-03-07"),
    ("Morgen fliege ich nach Berlin.", "2024-03-07"), ("Übermorgen ist das Konzert.", "2024-03-08"),
    ("Vorgestern hat Jonas angerufen.", "2024-03-04"), ("Heute Morgen war ich joggen.", "2024-03-06"),
    ("Gisteren was ik in Utrecht.", "2024-03-05"),
    ("Ontem fui ao médico.", "2024-03-05"), ("Amanhã vou ao Porto.", "2024-03-07"),
    ("amanha vou ao Porto", "2024-03-07"), ("Depois de amanhã é o casamento da Rita.", "2024-03-08"),
    ("Hier soir, je suis allée au théâtre.", "2024-03-05"), ("J'ai vu Marc hier.", "2024-03-05"),
    ("Demain je pars à Lyon.", "2024-03-07"), ("Après-demain c'est mon anniversaire.", "2024-03-08"),
    ("Avant-hier il a neigé.", "2024-03-04"), ("Aujourd’hui je travaille.", "2024-03-06"),
    ("Ieri sono andato a Roma.", "2024-03-05"), ("Domani parto per Napoli.", "2024-03-07"),
    ("Вчера я был в кино.", "2024-03-05"), ("Завтра еду в Казань.", "2024-03-07"),
    ("Позавчера звонила мама.", "2024-03-04"), ("Послезавтра у нас экзамен.", "2024-03-08"),
    ("Dün Kadıköy'de balık yedik.", "2024-03-05"), ("Yarın Ankara'ya gidiyorum.", "2024-03-07"),
    ("YARIN gidiyorum", "2024-03-07"), ("Bugün çok yoruldum.", "2024-03-06"),
    # the week (from Monday), month and year before, of and after the day
    ("La semana pasada compramos un coche.", "2024-02-26"), ("El mes que viene me mudo.", "2024-04-01"),
    ("El año pasado estuve en México.", "2023-01-01"), ("Letzte Woche hat Anna geheiratet.", "2024-02-26"),
    ("Nächstes Jahr ziehen wir nach Wien.", "2025-01-01"), ("Le mois dernier, j'ai changé de travail.", "2024-02-01"),
    ("La semaine prochaine je vais à Lille.", "2024-03-11"), ("Na semana passada fui a Lisboa.", "2024-02-26"),
    ("No ano que vem vou casar.", "2025-01-01"), ("L'anno scorso ho visitato Firenze.", "2023-01-01"),
    ("На прошлой неделе я купил машину.", "2024-02-26"), ("В следующем году поеду в Сочи.", "2025-01-01"),
    ("Geçen hafta İzmir'e gittim.", "2024-02-26"), ("Gelecek ay taşınıyoruz.", "2024-04-01"),
])
def test_relative_times_of_other_languages_are_resolved(text, day):
    assert _day(text) == day


@pytest.mark.parametrize("text", [
    "Guten Morgen! Wie geht's?", "Ich laufe jeden Morgen.", "Ich bin hier in Köln.", "Wir sind hier, kommst du?",
    "Ik ben hier, kom je?", "Corro por la mañana.", "Toda la mañana estuve trabajando.", "Fue una mañana tranquila.",
    "I love the piano and my messages.",
])
def test_words_of_other_meanings_are_no_date(text):
    assert timeexpr.find(text, SAID) == []


def test_a_message_said_in_spanish_shows_the_day_it_means():
    with Memory(None) as mem:
        mem.add("Ayer fui al dentista en Sevilla.", speaker="Lucía", timestamp=SAID)
        hit = mem.search("dentista", k=1)[0]
        assert hit.event_time.date().isoformat() == "2024-03-05"
        assert "5 March 2024" in mem.recall("dentista", budget_tokens=200).text
