"""The endings of Turkish, Finnish and German nouns, for a question asked in one of those languages, the verbs
of German and the Romance languages, and Dutch's nouns and verbs. Turkish and
Finnish write a noun's number, owner and case as endings onto it: "ev" (a house), "evler" (houses), "evlerimizden"
(from our houses); "talo", "talossa" (in the house), "taloissamme" (in our houses). German changes a noun's ending
and often its vowel in the plural: "Haus", "Häuser"; "Buch", "Bücher"; "Kind", "Kinder". A question names the thing
in one form and the chat in another, and words are matched whole.

These languages are written in Latin letters, where a word gives no sign of its language, and their endings glued
onto English words write other English words ("pan" + "da", "hold" + "er"). So the endings are put only on the words
of a question that is in the language (:func:`language`: its question words and little words, :data:`SIGNS`), and
on every word of it: a word asked is also matched in every form its language's endings make of it
(:func:`variants`). The index holds the text as written, so the forms are generated, not stripped. The word asked may
be inflected itself ("evlerimiz", "Häuser"): its bases are the word and the two shortest words (of :data:`MIN_BASE`
letters or more) one of whose forms it is, and each base is given every ending.

- **Turkish**: a plural (-lAr), an owner (-(I)m, -(I)n, -(s)I, -(I)mIz, -(I)nIz) and a case (-(y)I, -(y)A, -DA,
  -DAn, -(n)In, -(y)lA, and -DAki), in that order, each by the vowel harmony of what it follows (A is "a" or "e",
  I one of "ı", "i", "u", "ü"), "d" as "t" after a voiceless consonant ("kitapta"), the buffer letter after a
  vowel ("arabaya") and the "n" a case takes after the third person's owner ("evinde"), and the final "k", "p",
  "t", "ç" of a word of two syllables or more voiced before a vowel ("çocuk", "çocuğu"; "kitap", "kitabı"; "ağaç",
  "ağacı"), both ways: "kitabı" asked is "kitap" + "ı". Words of one syllable keep theirs ("top", "topu"; "renk",
  "rengi" is left).
- **Finnish**: the cases, singular and plural (-i-, -j-: "taloissa", "taloja", "talojen"; a final "a" or "ä"
  dropped or "a" as "o" before the plural's "i": "metsissä", "kirjoissa"), and the owners (-ni,
  -si, -nsA, -mme, -nne) after the local cases, by vowel harmony (A is "a" after a back vowel, "ä" otherwise); the
  consonants before the stem's last vowel in their weak grade before an ending that closes its syllable ("Helsinki",
  "Helsingissä"; "katu", "kadulla"; "pankki", "pankissa"; "ranta", "rannalla"), and the stem in -se- and -s- of a
  word in -nen ("nainen", "naisen", "naista"), both ways: "kadulla" asked is "katu" + "lla"; a "k" between vowels
  that drops in a word in -a or -ä ("ruoka", "ruoan"; "reikä", "reiässä"), and the stem in -ee- of a word in -e
  ("huone", "huoneessa"; "perhe", "perheen"), in -ii- of one in -is ("kaunis", "kauniin"; "kallis",
  "kalliita") and in -aa- of one in -as ("vieras", "vieraan"), the consonants of the two in their strong grade too
  ("liikenne", "liikenteen"; "rikas", "rikkaan"), both ways. A "k" that drops before another vowel ("joki", "joen";
  "luku", "luvun") is left: its weak stems write other words ("join", "I drank"; "luun", "of the bone").
- **German**: the endings of number and case (-e, -en, -n, -er, -ern, -es, -s, -nen) on the word and on the word
  with its last stem vowel in umlaut (a, o, u, au as ä, ö, ü, äu: "Haus", "Häuser"; "Apfel", "Äpfel"); a word asked
  with an umlaut is also taken without it ("Bücher" is "Buch" + "er").
- **French, Spanish, Portuguese, Italian** (a question known by its question words, an opening "¿", an elided
  article, or a verb or little word English has not, :data:`_ROMANCE_LITTLE`: "A viagem foi boa?"): the plurals
  that are not the word and an "s" (:data:`ROMANCE_PLURALS`:
  "journal", "journaux"; "jornal", "jornais"; "avião", "aviões"; "luz", "luces"; "libro", "libri"), both ways, on
  the word with and without its accents, and after the articles French and Italian elide ("l'hôtel",
  "dell'albergo"); and a verb's regular forms, present, simple past, imperfect, participle, gerund and infinitive
  (:data:`_VERB_CLASSES`: "trabajaba", "trabaja", "trabajó"; "travaillait", "travaillé"), all of them for a word
  whose ending only a verb has, the verb's only for one whose ending a noun has too ("trabaja" finds "trabajó",
  "libro" no "libre"), never the first person's present, the verb's noun ("trabajo", a job); and the forms of the
  irregular verbs a chat says most (:data:`_ROMANCE_IRREGULAR_VERBS`: "hizo", "hace"; "fez", "faz"; "pris",
  "prend"; "scrisse", "scritto").
- **German** verbs: a word in lower case (a German noun is capitalised) in the present, the past in -te- or the
  participle of a weak verb is matched in the others ("gearbeitet", "arbeitet", "arbeitete"; :data:`_DE_VERB`), of a
  strong or mixed verb of :data:`_DE_STRONG_VERBS` in its others ("gefahren", "fährt", "fuhr"; "gebracht",
  "brachte"), and of a verb with a separable prefix in its forms with the prefix and without, as the verb is written
  where the prefix stands apart ("eingekauft", "einkaufen", "kaufen ... ein"; :data:`_DE_SEPARABLE`).

- **Dutch** (a question known by its question words, "waar", "wanneer", or two little words, :data:`_DUTCH`): a
  word's plurals in -en and -s and its diminutives ("boom", "bomen", "boompje"; "kat", "katten"; "huis", "huizen")
  and a verb's present, past and participle ("wonen", "woont", "woonde", "gewoond"; "gepraat", "praatte";
  "gebeurd", "gebeurde"), for every word, a Dutch noun not being capitalised (:func:`_dutch_forms`), both ways; and
  the forms of a strong verb of :data:`_NL_STRONG_VERBS` in its others ("gegeten", "at", "eten").

A question in one of these languages, or in Russian, is also read without its language's little words
(:data:`STOPWORDS`), as an English one is without "what", "the" and "is"; in French and Italian the word an article
is elided onto is the word asked (:data:`ELISION`: "l'hôpital" is "hôpital").
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["language", "variants", "plain", "SIGNS", "STOPWORDS", "ELISION", "ROMANCE_PLURALS", "MIN_BASE"]

# The words that say a question is in the language: its question words, and for German, whose little words are
# fewer and some of them English words too ("die", "was", "hat", "den"), its little words, two of them (or one, and
# the frame of a German question: :data:`_DE_PARTICIPLE_END`). A Turkish
# question is also known by a letter of its own ("ı", "ğ", "ş").
SIGNS: dict[str, frozenset[str]] = {
    "tr": frozenset(("ne", "neyi", "neler", "mı", "mu", "mü", "misin", "mısın", "musun", "müsün", "nerede", "nereye",
                     "nereden", "neden", "niye", "niçin", "nasıl", "hangi", "hangisi", "kaç", "zaman", "kimler",
                     "kimin", "kime", "kimle", "kiminle")),
    "fi": frozenset(("missä", "mistä", "mihin", "mikä", "mitä", "mitkä", "kuka", "ketä", "kenen", "kenelle",
                     "keneltä", "milloin", "miksi", "miten", "kuinka", "paljonko", "onko", "oliko", "minun",
                     "meidän", "sinun", "hänen", "heidän", "minä", "sinä", "hän", "että")),
    "de": frozenset(("wo", "wann", "wer", "wen", "wem", "wessen", "wie", "welche", "welcher", "welches", "welchen",
                     "welchem", "warum", "wohin", "woher", "wieso", "weshalb", "wieviel", "wieviele", "ich", "du",
                     "mein", "meine", "meinen", "meinem", "meiner", "dein", "deine", "deinen", "hast", "habe",
                     "haben", "sind", "bist", "ist", "nicht", "und", "der", "das", "dem", "ein", "eine", "einen",
                     "einem", "einer", "vom", "zum", "zur", "auf", "für", "über", "zu", "bei", "nach", "heißt",
                     "gibt")),
}
# French, Spanish, Portuguese and Italian share their plurals' rules (:data:`ROMANCE_PLURALS`): a question is in
# one of them by its question words or the opening "¿".
_ROMANCE = frozenset(("que", "qui", "quoi", "como", "porque", "où", "quand", "quel", "quelle", "quels", "quelles",
                      "pourquoi", "combien", "qu'est-ce", "est-ce", "qué", "dónde", "cuándo", "cómo", "quién",
                      "quiénes", "cuál", "cuáles", "cuánto", "cuántos", "cuántas", "onde", "quem", "qual", "quais",
                      "quantos", "quantas", "você", "vocês", "não", "dove", "quando", "chi", "cosa", "perché",
                      "quale", "quali", "quanti", "quante"))
# ... or, a question without a question word ("A viagem foi boa?", "La luz está rota?", "Le travail était long ?"), by
# a verb or little word of theirs that English has not, in lower case (at the start of the question, in any case:
# "Foi boa?"; "Uma" and "Una" there are names)
_ROMANCE_LITTLE = frozenset(("foi", "foram", "fue", "fueron", "fui", "fuiste", "é", "è", "está", "estás", "están",
                             "estão", "estava", "estavam", "estaba", "estaban", "estuvo", "são", "eram", "têm", "tem",
                             "tinha", "tiene", "tienen", "tenía", "muy", "muito", "muita", "uma", "una", "sont",
                             "était", "étaient", "êtes", "avez", "avons", "sono", "hanno", "molto"))
_TURKISH_LETTERS = re.compile("[ığşĞŞİ]")
# A German question that holds one little word of :data:`SIGNS` only ("Was haben die Nachbarn gekocht?") is known by
# the frame German puts a question in, each a sign: an opening "Was" before a verb of German's (English writes "Was"
# before "it", "he", "the"), and a participle at its end, in lower case ("gekocht", "gegangen", "eingekauft": "ge" and
# three letters or more, then "t" or "en"; English's "geologist", "gentlemen", "gestalt" are left; or in "-iert",
# "renoviert").
_DE_WAS_VERBS = frozenset(("haben", "hat", "hast", "habe", "habt", "ist", "sind", "bist", "seid", "war", "waren",
                           "warst", "wird", "werden", "wirst", "kann", "kannst", "können", "macht", "machst",
                           "machen", "gibt", "weißt", "soll", "sollen", "muss", "müssen", "möchtest"))
_DE_PARTICIPLE_END = re.compile(r"(?:ab|an|auf|aus|ein|mit|nach|vor|zu|zurück|weg|los)?ge(?!o|ntlem|stalt)"
                                r"[a-zäöüß]{3,}(?:t|en)|[a-zäöüß]{3,}iert")
# ... and the ones that are English words or names too ("a dove", "tai chi", "Lake Como", "Omaha, NE"): a sign only
# when they open the question ("Dove sono i libri?", "Chi è venuto?", "Ne yedin?")
_OPENING_ONLY = frozenset(("dove", "chi", "como", "cosa", "ne", "qui", "mu"))
# ... or after the preposition that opens an Italian question ("A cosa", "Di cosa", "Con chi", "Per che")
_ITALIAN_ASKING_AFTER = frozenset(("a", "di", "da", "con", "per", "su", "in", "tra", "fra"))

# The little words of a question in each language, which a question holds and says nothing of what it asks about:
# its question words, articles, pronouns, prepositions and the verb "to be" (as English's are, textnorm.STOPWORDS).
# Compared in lower case without accents ("qué" is "que").
STOPWORDS: dict[str, frozenset[str]] = {lang: frozenset(words.split()) for lang, words in {
    "romance": """que qui quoi ou quand comment quel quelle quels quelles pourquoi combien donde cuando como quien
        quienes cual cuales cuanto cuantos cuantas onde quando quem qual quais quanto quantos quantas dove chi cosa
        perche quale quali quanti quante el la lo los las le les un una uno unos unas une des du o os as um uma il
        gli i de del al a au aux en em no na nos nas do da dos das di con com por para pour sur dans per su y e et
        ou me te se je tu elle nous vous ils elles eu ele ela eles elas voce voces io lui lei mi mis mon ma mes meu
        minha meus minhas mio mia miei mie es est esta esto son sont sao era etait fue foi ha hay ai est-ce ne pas
        ce cet cette ces che suis sommes etes sono sei siamo siete estao estan estas ont avez avons as avait avais
        avaient ho hai abbiamo avete hanno he has hemos han tem tenho temos""",
    "de": """wo wann wer wen wem wessen wie was welche welcher welches welchen welchem warum wohin woher wieso weshalb
        wieviel wieviele der die das den dem des ein eine einen einem einer ist sind war waren hat haben hast habe
        ich du er sie es wir ihr mein meine meinen meinem meiner dein deine deinen und oder in im am an auf mit von
        vom zu zum zur fur uber bei nach aus""",
    "tr": """ne neyi neler nerede nereye nereden neden niye nicin nasil hangi hangisi kac kim kimler kimin kime kimle
        kiminle mi mu zaman ve bir bu su o da de ile icin""",
    "fi": """missa mista mihin mika mita mitka kuka keta kenen kenelle kenelta milloin miksi miten kuinka paljonko
        onko oliko on oli ja se ne minun meidan sinun hanen heidan mina sina han etta""",
    "nl": """wat waar wanneer wie waarom hoe welke welk hoeveel waarheen waarvandaan hoelang waarvoor waarmee waarover
        de het een is zijn was waren ben bent heeft hebben heb hebt ik jij je hij zij ze wij we jullie mijn jouw
        haar ons onze in op aan met van voor naar bij uit om over en of niet er dat die deze dit ook nog al""",
    "ru": """что где когда кто как какои какая какое какие какую каком почему зачем сколько чеи чья куда откуда ли
        я ты он она оно мы вы они мои моя мое мою твои наш в во на с со к ко по о об от до из у за для и а но не
        это этот эта был была было были есть""",
}.items()}
# A Dutch question, by a question word of its own ("waar", "wanneer", "waarom", "hoeveel", "welke"), or by two of
# its little words, English or German words never or rarely ("het", "een", "ik", "heeft", "niet", "naar"; not "er",
# German's "he"), an
# opening "Wat", "Wie" or "Hoe" counting as one (English writes "Wat Pho", a "hoe"; German "Wie", which is German's
# when German's signs are two: "Wie heißt das Haus?"), and so a participle in -d at its end.
_DUTCH = frozenset(("waar", "wanneer", "waarom", "hoeveel", "welke", "welk", "waarheen", "waarvandaan", "hoelang",
                    "waarvoor", "waarmee", "waarover"))
_DUTCH_LITTLE = frozenset(("het", "een", "ik", "jij", "wij", "jullie", "mijn", "jouw", "onze", "heeft", "hebben",
                           "heb", "hebt", "ben", "bent", "zijn", "niet", "naar", "ook", "nog", "gisteren", "vandaag",
                           "bij", "voor", "uit", "deze", "dit", "hij", "zij", "gedaan", "gaan", "gaat", "gegaan",
                           "kunnen", "kan", "wil", "wilt", "zou", "je", "heet"))
# ... and a participle in -d that ends the question, which German and English do not write ("gebeurd", "gewoond",
# "gereisd"; English's "geared" ends in -ed)
_DUTCH_PARTICIPLE_END = re.compile(r"ge[a-z]{2,}[^e\W]d")
_DUTCH_OPENING = frozenset(("wat", "wie", "hoe"))
# A Russian question, by its question words (Russian's endings are text.russian's, for every Cyrillic word)
_RUSSIAN = frozenset(("что", "где", "когда", "кто", "как", "какой", "какая", "какое", "какие", "какую", "каком",
                      "почему", "зачем", "сколько", "куда", "откуда"))
# French and Italian write an article, pronoun or preposition onto the next word ("l'hôpital", "d'Anne",
# "qu'a", "dell'albergo"), and Italian its question words onto "è" and "era" ("dov'è", "com'era", "cos'è"): the word
# of a Romance question is the one after it
ELISION = re.compile(r"\b(?:l|d|j|qu|c|n|s|m|t|lorsqu|puisqu|jusqu|dell|all|nell|dall|sull|un|quest|quell|dov|com|"
                     r"cos|quand)['’](?=\w)", re.I)

# an article or pronoun elided before a vowel, as French and Italian write them ("l'avocat", "d'Anne", "qu'a")
_ELIDED = re.compile(ELISION.pattern + r"(?=[aeiouhàâäéèêëîïôöùûüAEIOUHÀÂÉÈÊÎÔÙ])", re.I)

# ... which a message writes onto its nouns as well: a Romance question's word that opens with a vowel or "h" is
# also looked for after them ("avocat" in "l'avocat", "albergo" in "dell'albergo")
_ARTICLES = tuple(a + q for a in ("l", "d", "L", "D", "qu", "all", "dell", "nell", "dall", "sull", "un")
                  for q in ("'", "’"))


def plain(word: str) -> str:
    """``word`` in lower case without its accents, as :data:`STOPWORDS` holds it ("Qué" -> "que", "nasıl" ->
    "nasil")."""
    low = word.replace("ı", "i").replace("İ", "i").lower()
    return "".join(c for c in unicodedata.normalize("NFD", low) if not unicodedata.combining(c))


_WORD = re.compile(r"[\w'-]+")

# A word's endings are a few hundred phrases to look for, which take 10-40 ms to build: a question's first
# MAX_WORDS words get them (a long message given as the question, as an agent's middleware gives it, is not slowed
# by its length), and a word of at most MAX_LETTERS letters (a longer one is no noun's form, or a pasted blob). A
# word's endings take at most MAX_ENDING letters (Turkish "-larımızdaki"), and its bases are looked for there only.
MAX_WORDS = 12
MAX_LETTERS = 32
MAX_ENDING = 16
# The shorter bases of a word asked that are given the endings, besides the word: the shortest ones (see
# :func:`variants`).
BASES = 2
# Letters a base keeps: Turkish nouns of two letters are common ("ev", "su", "iş"), Finnish and German ones are not.
MIN_BASE = {"tr": 2, "fi": 3, "de": 3, "romance": 3, "nl": 3}


def _german_frame(found: list[str]) -> int:
    """How many of the two signs of a German question's frame the words ``found`` hold (see
    :data:`_DE_PARTICIPLE_END`)."""
    if not found:
        return 0
    was = found[0] == "Was" and len(found) > 1 and found[1] in _DE_WAS_VERBS
    return was + (_DE_PARTICIPLE_END.fullmatch(found[-1]) is not None)


def language(text: str) -> str | None:
    """``"tr"``, ``"fi"`` or ``"de"`` when ``text`` (a question) is in Turkish, Finnish or German by its words
    (:data:`SIGNS`), ``"romance"`` when it is in French, Spanish, Portuguese or Italian, ``"nl"`` in Dutch, ``"ru"``
    in Russian; else None."""
    found = _WORD.findall(text)
    words = {w.lower() for w in found} - _OPENING_ONLY | {w.lower() for w in found[:1]}
    if _TURKISH_LETTERS.search(text):
        return "tr"
    if "¿" in text or words & _ROMANCE or _ELIDED.search(text):  # before Turkish's words: French "ne"
        return "romance"
    if len(found) > 1 and found[0].lower() == "che" and found[1].islower():  # "Che cosa...", not "Che Guevara"
        return "romance"
    if len(found) > 1 and found[0].lower() in _ITALIAN_ASKING_AFTER and found[1] in _OPENING_ONLY | {"che"}:
        return "romance"  # "A cosa ha risposto Giulia?", "Di cosa parlarono?", "Con chi sei uscita?"
    said = {w for w in found if w.islower()} | ({found[0].lower()} - {"uma", "una"} if found else set())
    if said & _ROMANCE_LITTLE:
        return "romance"
    if words & SIGNS["tr"]:
        return "tr"
    if words & SIGNS["fi"]:
        return "fi"
    dutch = len(words & _DUTCH_LITTLE) + (found[0].lower() in _DUTCH_OPENING if found else 0) \
        + (_DUTCH_PARTICIPLE_END.fullmatch(found[-1]) is not None if found else 0)
    if words & _DUTCH or dutch >= 2:
        return "nl"  # (before German, whose frame a Dutch participle writes too: "Wie is er gisteren gekomen?")
    if len(words & SIGNS["de"]) + _german_frame(found) >= 2:
        return "de"
    if words & _RUSSIAN:
        return "ru"
    return None


_VOWELS = "aeıioöuüyä"  # of the three languages ("y" is Finnish's)
_TR_VOWELS = "aeıioöuü"


def _last_vowel(s: str) -> str:
    """The last Turkish vowel of ``s``."""
    for c in reversed(s):
        if c in _TR_VOWELS:
            return c
    return "e"


# Turkish: two-way (A) and four-way (I) harmony by the last vowel
_A = {"a": "a", "ı": "a", "o": "a", "u": "a", "e": "e", "i": "e", "ö": "e", "ü": "e"}
_I = {"a": "ı", "ı": "ı", "o": "u", "u": "u", "e": "i", "i": "i", "ö": "ü", "ü": "ü"}
_VOICELESS = frozenset("çfhkpsşt")


def _tr_attach(stem: str, template: str) -> str:
    """``stem`` + a Turkish suffix template: "(y)", "(n)", "(s)" are written after a vowel, "(I)" after a consonant;
    A and I by harmony, D as "t" after a voiceless consonant."""
    out = stem
    k = 0
    while k < len(template):
        c = template[k]
        if c == "(":
            buffer = template[k + 1]
            k += 3
            after_vowel = out[-1:] in _TR_VOWELS
            if buffer == "I":
                if not after_vowel:
                    out += _I.get(_last_vowel(out), "i")
            elif after_vowel:
                out += buffer
            continue
        if c == "A":
            out += _A.get(_last_vowel(out), "e")
        elif c == "I":
            out += _I.get(_last_vowel(out), "i")
        elif c == "D":
            out += "t" if out[-1:] in _VOICELESS else "d"
        else:
            out += c
        k += 1
    return out


_TR_OWNERS = ("", "(I)m", "(I)n", "(s)I", "(I)mIz", "(I)nIz")
_TR_CASES = ("", "(y)I", "(y)A", "DA", "DAn", "(n)In", "(y)lA", "DAki")
_TR_CASES_AFTER_HIS = ("", "nI", "nA", "ndA", "ndAn", "nIn", "ylA", "ndAki")  # "evini", "evine", "evinde"


# A final "k", "p", "t", "ç" of a word of two syllables or more is voiced before an ending that opens with a vowel
# ("çocuk", "çocuğu"; "kitap", "kitabı"; "ağaç", "ağacı"; "kağıt", "kağıdı"; a "k" after "n" as "g": "ahenk",
# "ahengi"). Words of one syllable mostly keep theirs ("top", "topu"; "at", "atı", where "adı" is a name): they are
# left as they are, "renk", "rengi" with them.
_TR_SOFT = {"k": "ğ", "p": "b", "t": "d", "ç": "c"}
_TR_HARD = {v: k for k, v in _TR_SOFT.items()} | {"g": "k"}


def _tr_softened(base: str) -> str | None:
    """``base`` with its final consonant voiced as before a vowel ("çocuk" -> "çocuğ", "denk" -> "deng"), or None
    when it ends otherwise or has one syllable."""
    last = base[-1:]
    if last not in _TR_SOFT or sum(c in _TR_VOWELS for c in base) < 2:
        return None
    return base[:-1] + ("g" if last == "k" and base[-2:-1] == "n" else _TR_SOFT[last])


@lru_cache(maxsize=4096)
def _turkish_forms(base: str) -> frozenset[str]:
    out = set()
    soft = _tr_softened(base)
    for plural in ("", "lAr"):
        p = _tr_attach(base, plural)
        for owner in _TR_OWNERS:
            o = _tr_attach(p, owner)
            for case in _TR_CASES_AFTER_HIS if owner == "(s)I" else _TR_CASES:
                form = _tr_attach(o, case)
                out.add(form)
                if soft is not None and form[len(base):len(base) + 1] in tuple(_TR_VOWELS):
                    out.add(soft + form[len(base):])  # "kitabı", "çocuğumuzu"
    return frozenset(out)


_FI_CASES = ("", "n", "t", "A", "tA", "nA", "ksi", "ssA", "stA", "llA", "ltA", "lle", "ttA", "hin", "seen")
_FI_PLURAL = ("issA", "istA", "illA", "iltA", "ille", "inA", "iksi", "ihin", "ittA", "jA", "jen", "t", "ssA")
_FI_OWNERS = ("ni", "si", "nsA", "mme", "nne")
_FI_OWNED = ("", "ssA", "stA", "llA", "ltA", "lle", "ksi", "nA", "A")


# Finnish consonant gradation: the consonants before a stem's last vowel are weaker before the endings that close its
# syllable ("katu", "kadulla"; "pankki", "pankissa"; "Helsinki", "Helsingissä"; "ranta", "rannalla"; "halpa",
# "halvalla"), strong to
# weak, the longer first; and the endings of the weak stem, singular and plural (the plural's "i" after an "a" or "ä"
# dropped, an "a" as "o", an "i" as "e": "kaduilla", "pankeissa")
_FI_WEAK = (("kk", "k"), ("pp", "p"), ("tt", "t"), ("nk", "ng"), ("mp", "mm"), ("nt", "nn"), ("lt", "ll"),
            ("rt", "rr"), ("ht", "hd"), ("lp", "lv"), ("rp", "rv"), ("lk", "l"), ("hk", "h"), ("t", "d"), ("p", "v"))
_FI_STRONG = tuple((weak, strong) for strong, weak in _FI_WEAK)
# A "k" between vowels drops in the weak grade ("ruoka", "ruoan"; "reikä", "reiän"; "ikä", "iässä"): in a word in
# -a or -ä only. A "k" before another vowel drops too, but there its weak stems write other words ("joki", "join",
# "I drank"; "luku", "luun", "of the bone") or take a "v" ("puku", "puvun"): those are left.
_FI_K_DROPS = "aä"
_FI_CLOSED = ("n", "t", "ssA", "stA", "llA", "ltA", "lle", "ksi", "ttA")
_FI_CLOSED_PLURAL = ("issA", "istA", "illA", "iltA", "ille", "iksi", "ittA")
# the words in -nen, whose stem is in -se- and -s- ("nainen", "naisen", "naista", "naiset"; "Virtanen", "Virtaselle")
_FI_NEN = ("sen", "sessA", "sestA", "sellA", "seltA", "selle", "seksi", "senA", "seen", "stA", "set", "sissA",
           "sistA", "sillA", "siltA", "sille", "siksi", "sinA", "siin", "siA", "sten", "sien")


def _fi_plural_stems(stem: str) -> set[str]:
    """The stems the plural's "i" goes on (see :func:`_finnish_forms`)."""
    last = stem[-1:]
    return {stem[:-1], stem[:-1] + "o"} if last == "a" else {stem[:-1]} if last == "ä" else \
        {stem, stem[:-1] + "e"} if last == "i" else {stem}


def _fi_weak(base: str) -> str | None:
    """``base`` (ending in a vowel) with the consonants before its last vowel in the weak grade, or None."""
    stem = base[:-1]
    for strong, weak in _FI_WEAK:
        if stem.endswith(strong) and (len(strong) == 2 or stem[-2:-1] in _VOWELS):
            return stem[:len(stem) - len(strong)] + weak + base[-1]
    if base[-1] in _FI_K_DROPS and stem.endswith("k") and stem[-2:-1] in _VOWELS:
        return stem[:-1] + base[-1]  # "ruoka", "ruoa-"
    return None


# The words in -e take their endings on a stem in -ee- ("huone", "huoneen", "huoneessa", "huoneeseen"; "perhe",
# "perheen"), the partitive on the word ("huonetta"), the plural on -ei- ("huoneissa", "huoneita", "huoneiden");
# the adjectives in -is on a stem in -ii- ("kaunis", "kauniin", "kauniissa"; "kallis", "kalliit", "kalliita"), the
# partitive on the word ("kallista"); the words in -as and -äs on a stem in -aa-, -ää- ("vieras", "vieraan",
# "vieraassa", "vierasta", "vieraita"). Words of two syllables or more, the -e after a consonant: "tee" (tea) is
# "teen", and "kolme" (three) "kolmen". The word said alone is the weak grade of its stem, so a word in -e or -as
# takes its endings on the strong grade too (:data:`_FI_STRENGTHEN`): "liikenne", "liikenteen"; "sade", "sateen";
# "osoite", "osoitteen"; "rikas", "rikkaan"; "puhdas", "puhtaan"; "kuningas", "kuninkaan". A word whose consonant
# stays ("kappale", "kappaleen"; "terve", "terveen") has both stems, the one that writes no word left unmatched.
_FI_LONG_STEM = ("n", "t", "ssA", "stA", "llA", "ltA", "lle", "ksi", "nA", "seen", "ttA")
_FI_LONG_PLURAL = ("tA", "den", "tten", "siin", "ssA", "stA", "llA", "ltA", "lle", "ksi", "nA", "ttA", "hin")
# the weak consonants before a stem's last vowel and their strong grade, the longer first ("nn" before "n"), without
# the "l" and "h" that stay far more often than they take a "k" ("kappale", "perhe")
_FI_STRENGTHEN = tuple((weak, strong) for weak, strong in _FI_STRONG if weak not in ("l", "h"))


def _fi_strong(stem: str) -> str | None:
    """``stem`` (a stem without its last vowel, "liiken"+"n") with its last consonants in the strong grade
    ("liikent"), or None when they have none."""
    for weak, strong in _FI_STRENGTHEN:
        if stem.endswith(weak) and (len(weak) == 2 or stem[-2:-1] in _VOWELS):
            return stem[:len(stem) - len(weak)] + strong
    return None


def _fi_long_stems(base: str) -> tuple[str, ...]:
    """The stems in -ee- of a word in -e ("huone" -> "huonee"; "liikenne" -> "liikennee", "liikentee"), in -ii- of
    one in -is ("kaunis" -> "kaunii"), in -aa- or -ää- of one in -as or -äs ("vieras" -> "vieraa"; "rikas" ->
    "rikaa", "rikkaa"); none for another word."""
    syllables = sum(1 for k, c in enumerate(base) if c in _VOWELS and base[k - 1:k] not in tuple(_VOWELS))
    if syllables < 2:
        return ()
    if base.endswith("e") and base[-2:-1] not in tuple(_VOWELS):
        strong = _fi_strong(base[:-1])
        return (base + "e",) + ((strong + "ee",) if strong is not None else ())
    if base.endswith("is") and base[-3:-2] not in tuple(_VOWELS):
        return (base[:-1] + "i",)
    if base.endswith(("as", "äs")) and base[-3:-2] not in tuple(_VOWELS):
        vowel = base[-2]
        strong = _fi_strong(base[:-2])
        return (base[:-1] + vowel,) + ((strong + vowel * 2,) if strong is not None else ())
    return ()


@lru_cache(maxsize=4096)
def _finnish_forms(base: str) -> frozenset[str]:
    a = "a" if any(c in "aou" for c in base) else "ä"
    def put(s: str) -> str:
        return s.replace("A", a)
    out = {base + put(c) for c in _FI_CASES}
    if base.endswith("nen") and len(base) > 4:
        out |= {base[:-3] + put(c) for c in _FI_NEN}
    weak = _fi_weak(base) if base[-1:] in _VOWELS else None
    if weak is not None:
        out |= {weak + put(c) for c in _FI_CLOSED}
        out |= {p + put(c) for p in _fi_plural_stems(weak) for c in _FI_CLOSED_PLURAL}
        out |= {weak + put(c) + put(o) for c in _FI_OWNED[1:7] for o in _FI_OWNERS}
    if base[-1:] in _VOWELS:
        out.add(base + base[-1] + "n")  # the illative: "taloon"
        # the plural's stem: the word ("taloissa"), a final "a" or "ä" dropped or an "a" as "o" ("metsissä",
        # "koirissa", "kirjoissa")
        plural = {base} | _fi_plural_stems(base)
        out |= {p + put(c) for p in plural for c in _FI_PLURAL}
        out |= {base + put(c) + put(o) for c in _FI_OWNED for o in _FI_OWNERS}
    longs = _fi_long_stems(base)
    if longs:
        out.add(base + put("tA"))
    for long in longs:
        out |= {long + put(c) for c in _FI_LONG_STEM}
        out |= {long[:-1] + "i" + put(c) for c in _FI_LONG_PLURAL}
        out |= {long + put(c) + put(o) for c in _FI_OWNED for o in _FI_OWNERS}
    return frozenset(out)


_DE_ENDINGS = ("", "e", "en", "n", "er", "ern", "es", "s", "nen")
_DE_UMLAUT_ENDINGS = ("", "e", "er", "en", "ern", "n")
_UMLAUT = {"a": "ä", "o": "ö", "u": "ü"}
_PLAIN = {"ä": "a", "ö": "o", "ü": "u"}


def _umlaut(base: str) -> str | None:
    """``base`` with the vowel of its last stem syllable in umlaut ("haus" -> "häus", "apfel" -> "äpfel"); None if
    that vowel has none."""
    stem = base[:-2] if len(base) > 4 and base.endswith(("el", "er", "en")) else base
    for k in range(len(stem) - 1, -1, -1):
        c = stem[k]
        if c in "aeiouäöüy":
            if c == "u" and k and stem[k - 1] == "a":  # "au" -> "äu"
                return base[:k - 1] + "ä" + base[k:]
            if c in _UMLAUT and not (k and stem[k - 1] in "aeiou"):  # not "ei", "eu", "ie"
                return base[:k] + _UMLAUT[c] + base[k + 1:]
            return None
    return None


@lru_cache(maxsize=4096)
def _german_forms(base: str) -> frozenset[str]:
    out = {base + e for e in _DE_ENDINGS}
    umlauted = _umlaut(base)
    if umlauted is not None:
        out |= {umlauted + e for e in _DE_UMLAUT_ENDINGS}
    return frozenset(out)


# The endings of a German weak verb: its present, its past in -te- and its infinitive ("lernen", "lernt", "lernte"),
# with the "e" a stem in -t or -d takes ("arbeitet", "arbeitete"), and its participle, "ge" + stem + "t" ("gelernt",
# "gearbeitet"). A question's word in lower case is a verb or an adjective (a German noun is capitalised): ending in
# one of them, on a stem of MIN_VERB_STEM letters or more, it is matched in the others ("Wo hat Lena gearbeitet?" finds
# "Lena arbeitet als Ärztin"). The strong verbs, whose vowel changes ("fahren", "fuhr", "gefahren"), are
# :data:`_DE_STRONG`'s, and the verbs with a separable prefix ("eingekauft") :data:`_DE_SEPARABLE`'s.
_DE_VERB = ("e", "st", "est", "t", "et", "en", "te", "test", "ten", "tet", "ete", "etest", "eten", "etet")


@lru_cache(maxsize=4096)
def _german_verb_forms(word: str) -> frozenset[str]:
    """The forms of the weak verb ``word`` (in lower case) is one of (see :data:`_DE_VERB`): its stem is the word
    without the longest of the endings that leaves a consonant at its end; none for a stem shorter than
    MIN_VERB_STEM."""
    body = word[2:] if word.startswith("ge") and word.endswith("t") and len(word) - 3 >= MIN_VERB_STEM else word
    ends = ("t", "et") if body is not word else _DE_VERB
    # (a verb's stem ends in a consonant: "arbeitet" is "arbeit" + "et", not "arbei" + "tet" nor "arbeite" + "t";
    # a stem in -t asked in a form in -ten or -te is read both ways: "antworten" is "antwort" + "en" as well as
    # "antwor" + "ten", "richtete" "richt" + "ete")
    e = max((e for e in ends if body.endswith(e) and len(body) - len(e) >= MIN_VERB_STEM
             and body[len(body) - len(e) - 1] not in "aeiouäöüy"), key=len, default=None)
    if e is None:
        return frozenset()
    stems = {body[:len(body) - len(e)]}
    if e[:1] == "t" and e[1:] in ends:  # "antwor" + "ten": also "antwort" + "en"
        stems.add(body[:len(body) - len(e) + 1])
    return frozenset(f for stem in stems for f in
                     {stem + f for f in _DE_VERB} | {"ge" + stem + "t", "ge" + stem + "et"})


# The strong verbs of German, whose vowel changes ("fahren", "fährt", "fuhr", "gefahren"), and the mixed ones, which
# take the weak endings on a changed stem ("bringen", "brachte", "gebracht"): the most frequent of a chat, each by
# its infinitive, its present's stem where the vowel changes (else the infinitive's), its past and its participle.
# A word asked that is one of a verb's forms is matched in all of them ("Wohin seid ihr gefahren?" finds "Wir fuhren
# nach Wien"); a form shared by two verbs gives both.
_DE_STRONG_VERBS = """fahren fähr fuhr gefahren; gehen geh ging gegangen; kommen komm kam gekommen; sehen sieh sah
    gesehen; geben gib gab gegeben; nehmen nimm nahm genommen; essen iss aß gegessen; trinken trink trank getrunken;
    finden find fand gefunden; schreiben schreib schrieb geschrieben; lesen lies las gelesen; sprechen sprich sprach
    gesprochen; treffen triff traf getroffen; helfen hilf half geholfen; laufen läuf lief gelaufen; schlafen schläf
    schlief geschlafen; fliegen flieg flog geflogen; ziehen zieh zog gezogen; bleiben bleib blieb geblieben; steigen
    steig stieg gestiegen; singen sing sang gesungen; schwimmen schwimm schwamm geschwommen; gewinnen gewinn gewann
    gewonnen; verlieren verlier verlor verloren; vergessen vergiss vergaß vergessen; beginnen beginn begann begonnen;
    bekommen bekomm bekam bekommen; tragen träg trug getragen; waschen wäsch wusch gewaschen; fallen fäll fiel
    gefallen; halten hält hielt gehalten; rufen ruf rief gerufen; schließen schließ schloss geschlossen; sitzen sitz
    saß gesessen; stehen steh stand gestanden; liegen lieg lag gelegen; werfen wirf warf geworfen; sterben stirb starb
    gestorben; streiten streit stritt gestritten; schneiden schneid schnitt geschnitten; leihen leih lieh geliehen;
    bringen bring brachte gebracht; denken denk dachte gedacht; kennen kenn kannte gekannt; rennen renn rannte
    gerannt; wissen weiß wusste gewusst"""


def _de_strong_forms(infinitive: str, present: str, past: str, participle: str) -> frozenset[str]:
    """The forms of a strong or mixed verb (see :data:`_DE_STRONG_VERBS`): present, past, infinitive, participle."""
    stem = infinitive[:-2] if infinitive.endswith("en") else infinitive[:-1]
    out = {infinitive, participle, stem + "e", stem + "t", stem + "et", present, present + "st", present + "t",
           present + "est"}
    ends = ("", "st", "n", "t") if past.endswith("te") else ("", "st", "en", "t", "est", "et")
    return frozenset(out | {past + e for e in ends})


_DE_STRONG: dict[str, frozenset[str]] = {}
for _verb in _DE_STRONG_VERBS.split(";"):
    _forms = _de_strong_forms(*_verb.split())
    for _form in _forms:
        _DE_STRONG[_form] = _DE_STRONG.get(_form, frozenset()) | _forms
del _verb, _forms, _form
# The prefixes a German verb puts at its clause's end ("Wir kaufen morgen ein"), its participle's "ge" after them
# ("eingekauft") and its infinitive's "zu" ("einzukaufen"). A word asked that opens with one, on a verb's form, is
# matched in the verb's forms with the prefix ("einkaufen", "eingekauft", "einkauft") and without ("kaufen",
# "kauft", "kaufte"), which is how the verb is written where the prefix stands apart.
_DE_SEPARABLE = tuple(sorted(("ab", "an", "auf", "aus", "ein", "mit", "nach", "vor", "zu", "zurück", "weg", "los",
                              "fest", "her", "hin", "um", "weiter", "zusammen", "vorbei", "heim"), key=len,
                             reverse=True))


@lru_cache(maxsize=4096)
def _german_all_verb_forms(word: str) -> frozenset[str]:
    """The forms of the weak (:func:`_german_verb_forms`), strong (:data:`_DE_STRONG`) or separable verb ``word`` (in
    lower case) is one of."""
    if word in _DE_STRONG:  # (its weak reading is none: "gefahren" is no "gefahr" + "en")
        return _DE_STRONG[word]
    out = set(_german_verb_forms(word))
    for prefix in _DE_SEPARABLE:
        rest = word[len(prefix):]
        if not word.startswith(prefix) or len(rest) < 4:
            continue
        forms = _DE_STRONG.get(rest) or _german_verb_forms(rest)
        if forms:
            out |= forms | {prefix + f for f in forms}  # ("antworten" is no "an" + "tworten": both readings)
            break
    return frozenset(out)


# The plurals of French, Spanish, Portuguese and Italian that are not the word and an "s": the singular's ending and
# the plurals' endings that take its place, with and without the accents chats drop ("hotéis", "hoteis").
ROMANCE_PLURALS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("al", ("aux", "ais", "ales", "ali")),                # journal, journaux; jornal, jornais; animal, animales
    ("ail", ("aux",)), ("eau", ("eaux",)), ("eu", ("eux",)), ("au", ("aux",)),  # travail, travaux; bateau, bateaux
    ("el", ("éis", "eis", "eles")), ("ol", ("óis", "ois", "oles")), ("il", ("is", "iles")),  # hotel, hotéis
    ("ão", ("ões", "ães", "ãos")), ("ao", ("oes", "aes", "aos")),  # avião, aviões; pão, pães; mão, mãos
    ("em", ("ens",)), ("im", ("ins",)), ("om", ("ons",)), ("um", ("uns",)),  # viagem, viagens; jardim, jardins
    ("z", ("ces", "zes")),                                # luz, luces (Spanish), luzes (Portuguese)
    ("n", ("nes",)), ("r", ("res",)), ("d", ("des",)), ("l", ("les",)),  # jardín, jardines; ciudad, ciudades
    ("o", ("i",)), ("a", ("e",)), ("e", ("i",)), ("ca", ("che",)), ("ga", ("ghe",)), ("co", ("chi", "ci")),
    ("go", ("ghi",)), ("io", ("i",)),                     # Italian: libro, libri; casa, case; amica, amiche
)


@lru_cache(maxsize=4096)
def _romance_forms(base: str) -> frozenset[str]:
    out = {base, base + "s", base + "es"}
    for one, many in ROMANCE_PLURALS:
        if base.endswith(one):
            stem = base[:len(base) - len(one)]
            out |= {stem + m for m in many}
        for m in many:  # a plural asked: its singular and the other plurals
            if base.endswith(m) and len(base) - len(m) >= 2:
                stem = base[:len(base) - len(m)]
                out |= {stem + one} | {stem + o for o in many}
    return frozenset(out)


# The regular verbs of Spanish, Portuguese, Italian and French: each class's endings of the present, the simple past,
# the imperfect, the participle, the gerund, the infinitive, the future and the conditional ("trabaja", "trabajó",
# "trabajaba", "trabajado", "trabajando", "trabajar"), and the ones among them that end nouns and adjectives too
# ("trabajo", a job; "libro", "libre"; "puerta", "puerto"; "marché", "marcher"; the third person's plural, "trabajan",
# "travaillent", is a verb's only). A question's word that ends in an
# ending of a class, on a stem of MIN_VERB_STEM letters or more, is matched in the class's other forms: all of them
# when its ending is a verb's only ("trabajaba", "lavorava", "travaillait"), the verb's only when it is also a
# noun's ("trabaja" finds "trabajó" and "trabajaba", not "trabajo"), so that a noun asked finds no other noun. A stem
# of three letters is left ("comer", "vivir", "estar": "com" + "o" is "como", "est" + "e" "este"), and so are the
# stems that change ("puedo", "pude"; "tengo", "tuve") and the verbs of -isc- ("finisco").
_VERB_CLASSES: tuple[tuple[tuple[str, ...], frozenset[str]], ...] = tuple(
    (tuple(forms.split()), frozenset(shared.split())) for forms, shared in (
        # Spanish -ar, -er, -ir
        ("o as a amos áis an é aste ó asteis aron aba abas ábamos abais aban ado ada ados adas ando ar aré arás ará "
         "aremos arán aría arías aríamos arían", "o as a ado ada ados adas ar"),
        ("o es e emos éis en í iste ió imos isteis ieron ía ías íamos íais ían ido ida idos idas iendo er eré erás "
         "erá eremos erán ería erías eríamos erían", "o es e í ido ida idos idas er"),
        ("o es e imos ís en í iste ió isteis ieron ía ías íamos ían ido ida idos idas iendo ir iré irás irá iremos "
         "irán iría irías iríamos irían", "o es e í ido ida idos idas ir"),
        # Portuguese -ar, -er, -ir
        ("o as a amos am ei aste ou aram ava avas ávamos avam ado ada ados adas ando ar arei ará aremos arão aria",
         "o as a ado ada ados adas ar"),
        ("o es e emos em i este eu eram ia ias íamos iam ido ida idos idas endo er erei erá eremos erão eria",
         "o es e i este eu ido ida idos idas er"),
        ("o es e imos em i iste iu iram ia ias íamos iam ido ida idos idas indo ir irei irá iremos irão iria",
         "o es e i ido ida idos idas ir"),
        # Italian -are, -ere, -ire
        ("o i a iamo ate ano ai asti ò ammo arono avo avi ava avamo avate avano ato ata ati ando are erò erai erà "
         "eremo eranno erei erebbe", "o i a ate ai ato ata ati are"),
        ("o i e iamo ete ono ei esti é emmo erono evo evi eva evamo evano uto uta uti ute endo ere erò erà eremo "
         "eranno erei erebbe", "o i e ete ei uto uta uti ute ere"),
        ("o i e iamo ite ono ii isti ì immo irono ivo ivi iva ivamo ivano ito ita iti endo ire irò irà iremo iranno "
         "irei irebbe", "o i e ite ii ito ita iti ire"),
        # French -er, -ir (finir), -re (vendre)
        ("e es ent ons ez ais ait ions iez aient é ée és ées ant er erai eras era erons erez eront erais erait",
         "e es ons ez ais é ée és ées ant er"),
        ("is it issons issez issent issais issait issions issaient i ie ies issant ir irai iras ira irons irez iront "
         "irais irait", "is it i ie ies ir"),
        ("s ons ez ent ais ait ions iez aient u ue us ues ant re rai ras ra rons rez ront rais rait",
         "s ons ez ais u ue us ues ant re"),
    ))
MIN_VERB_STEM = 4
# the endings that end a noun or an adjective in one of the languages (French "marché", a market; Italian "lei")
_SHARED = frozenset().union(*(shared for _, shared in _VERB_CLASSES))
# ... and the forms not given even to a verb's word: the first person's present, which is the verb's noun ("trabajo",
# "trabalho", "lavoro", a job; "estudio", a study), and Italian's second person, a noun's plural ("lavori")
_NOUN_LIKE = frozenset(("o", "i"))


@lru_cache(maxsize=4096)
def _romance_verb_forms(word: str) -> frozenset[str]:
    """The forms of the regular verb ``word`` (in lower case) is one of (see :data:`_VERB_CLASSES`), and those whose
    ending drops an accent that is not on its last letter ("trabajábamos", "trabajabamos"; "trabajó" is no "trabajo"),
    without the little words of a question (:data:`STOPWORDS`: "como", "era"). The word's ending is the longest of a
    class's that it ends in, and its classes those whose ending is the longest ("trabajaba" is "trabaj" + "aba" of
    Spanish's -ar, not "trabajab" + "a"; "comió" "com" + "ió" of -er and -ir, a stem too short)."""
    parses = []
    for forms, shared in _VERB_CLASSES:
        for e in sorted((e for e in forms if e and word.endswith(e)), key=len, reverse=True):
            stem = word[:len(word) - len(e)]
            if len(stem) >= MIN_VERB_STEM and stem.isalpha():
                parses.append((e not in _SHARED, len(e), stem, e, forms, shared))
    verb = [p for p in parses if p[0]]  # an ending only verbs have: every reading by one ("estudió": "estudi" + "ó"
    # of -ar, "estud" + "ió" of -er and -ir)
    if not verb:  # ... else the longest of the shared endings, and only the verb's forms
        longest = max((p[1] for p in parses), default=0)
        verb = [p for p in parses if p[1] == longest]
    out: set[str] = set()
    for only_verb, _, stem, e, forms, shared in verb:
        said = [f for f in forms if (only_verb or f not in shared) and f not in _NOUN_LIKE]
        out |= {stem + f for f in said} | {stem + plain(f) for f in said if plain(f)[-1:] == f[-1:]}
    little = STOPWORDS["romance"]
    return frozenset(f for f in out if plain(f) not in little)


# The irregular verbs of Spanish, Portuguese, French and Italian a chat says most, whose stems change ("hacer", "hizo",
# "hecho"; "faire", "fait", "font"; "fare", "fece"; "fazer", "fez"), each a line of its forms: a word asked that is
# one of them is matched in all of them ("¿Qué hizo Ana?" finds "Ana hace pan"). The forms that are nouns or other
# words too are given to none and give none ("hecho", a fact; "vino", wine; "été", summer; "part", a share; "bois",
# wood; "fatto"; "feito"; French "fait", said far more often as a verb, is kept), nor are the little words of a
# question (:data:`STOPWORDS`) nor forms of fewer than three letters. "Ser", "estar", "être", "avoir", "essere" and
# "avere" are left: their forms are those little words, and as the auxiliaries of the past they are in every other
# message.
_ROMANCE_IRREGULAR_VERBS = """
    hacer hago haces hace hacemos hacen hice hiciste hizo hicimos hicieron hacía hacían haciendo haré hará harán haría;
    tener tengo tienes tiene tenemos tienen tuve tuviste tuvo tuvimos tuvieron tenía tenían tenido teniendo tendré
    tendrá tendrán tendría;
    poder puedo puedes puede podemos pueden pude pudiste pudo pudimos pudieron podía podían podido pudiendo podré
    podrá podría;
    decir digo dices dice decimos dicen dije dijiste dijo dijimos dijeron decía decían diciendo diré dirá diría;
    poner pongo pones pone ponemos ponen puse pusiste puso pusimos pusieron ponía ponían puesto puesta poniendo pondré
    pondrá;
    venir vengo vienes viene venimos vienen vine viniste vinimos vinieron venía venían venido viniendo vendré vendrá;
    querer quiero quieres quiere queremos quieren quise quisiste quiso quisimos quisieron quería querían querido
    queriendo querré querrá;
    saber sabes sabe sabemos saben supe supiste supo supimos supieron sabía sabían sabido sabiendo sabré sabrá;
    traer traigo traes trae traemos traen traje trajiste trajo trajimos trajeron traía traído trayendo traeré;
    ir voy vas vamos van fui fuiste fuimos fueron iba ibas íbamos iban yendo iré irás irá iremos irán;
    ver veo ves vemos ven vi viste vio vimos vieron veía veían visto vista viendo veré verá;
    dar doy das damos dan di diste dio dimos dieron daba daban dado dando daré dará;
    fazer faço fazes faz fazemos fazem fiz fizeste fez fizemos fizeram fazia faziam feito feita fazendo farei fará;
    ter tenho tens tem temos têm tive tiveste teve tivemos tiveram tinha tinham tido tendo terei terá;
    dizer digo dizes diz dizemos dizem disse disseste dissemos disseram dizia diziam dito dizendo direi dirá;
    vir venho vens vem vimos vêm vim vieste veio viemos vieram vinha vinham vindo virei virá;
    trazer trago trazes traz trazemos trazem trouxe trouxeste trouxemos trouxeram trazia trazido trazendo trarei;
    querer quero queres quer queremos querem quis quiseste quisemos quiseram queria queriam querido querendo;
    poder posso podes pode podemos podem pude pôde pudemos puderam podia podiam podido podendo poderei;
    ir vou vais vai vamos vão fui foste fomos foram ia iam ido indo irei irá;
    ver vejo vês vê vemos veem vi viste viu vimos viram via viam visto vendo verei;
    aller vais vas va allons allez vont allais allait allions allaient allé allée allés allées irai iras ira irons
    iront irais irait;
    faire fais fait faisons faites font faisais faisait faisions faisaient fait faite faits ferai fera ferons feront
    ferais ferait fis fit;
    venir viens vient venons venez viennent venais venait venaient venu venue venus venues viendrai viendra vint;
    prendre prends prend prenons prenez prennent prenais prenait prenaient pris prise prises prendrai prendra prit;
    voir vois voit voyons voyez voient voyais voyait voyaient vu vue vus vues verrai verra vit;
    dire dis dit disons dites disent disais disait disaient dite dits dirai dira;
    pouvoir peux peut pouvons pouvez peuvent pouvais pouvait pouvaient pu pourrai pourra pourrait put;
    vouloir veux veut voulons voulez veulent voulais voulait voulaient voulu voudrai voudra voudrait voulut;
    mettre mets met mettons mettez mettent mettais mettait mis mise mises mettrai mettra mit;
    boire bois boit buvons buvez boivent buvais buvait bu boirai boira but;
    lire lis lit lisons lisez lisent lisais lisait lu lue lus lues lirai lira lut;
    écrire écris écrit écrivons écrivez écrivent écrivais écrivait écrite écrits écrirai écrira écrivit;
    andare vado vai va andiamo andate vanno andavo andava andavamo andavano andato andata andati andate andrò andrà
    andai andò andarono;
    fare faccio fai fa facciamo fate fanno facevo faceva facevamo facevano fatto fatta fatti farò farà feci fece
    facemmo fecero;
    dire dico dici dice diciamo dite dicono dicevo diceva dicevano detto detta dirò dirà dissi disse dicemmo dissero;
    venire vengo vieni viene veniamo venite vengono venivo veniva venivano venuto venuta venuti verrò verrà venni venne
    vennero;
    vedere vedo vedi vede vediamo vedete vedono vedevo vedeva vedevano visto vista veduto vedrò vedrà vidi vide
    vedemmo videro;
    prendere prendo prendi prende prendiamo prendete prendono prendevo prendeva preso presa presi prenderò prenderà
    prese prendemmo presero;
    bere bevo bevi beve beviamo bevete bevono bevevo beveva bevuto berrò berrà bevvi bevve bevvero;
    potere posso puoi può possiamo potete possono potevo poteva potuto potrò potrà potei poté;
    volere voglio vuoi vuole vogliamo volete vogliono volevo voleva voluto vorrò vorrà volli volle vollero;
    scrivere scrivo scrivi scrive scriviamo scrivono scrivevo scriveva scritto scriverò scrissi scrisse scrissero;
    leggere leggo leggi legge leggiamo leggono leggevo leggeva letto letta leggerò lessi lesse lessero;
    chiedere chiedo chiedi chiede chiediamo chiedono chiedevo chiedeva chiesto chiederò chiesi chiese chiesero;
    rispondere rispondo rispondi risponde rispondiamo rispondono rispondeva risposto risponderò risposi rispose
    risposero;
    decidere decido decidi decide decidiamo decidono decideva deciso decisa deciderò decisi decise decisero;
    mettere metto metti mette mettiamo mettono metteva metterò misi mise misero;
    scegliere scelgo scegli sceglie scegliamo scelgono sceglieva scelto sceglierò scelsi scelse scelsero;
    perdere perdo perdi perde perdiamo perdono perdeva perso perderò persi perse persero;
    vincere vinco vinci vince vinciamo vincono vinceva vinto vincerò vinsi vinse vinsero;
    conoscere conosco conosci conosce conosciamo conoscono conosceva conosciuto conoscerò conobbi conobbe conobbero;
    nascere nasco nasce nascono nasceva nato nata nati nacqui nacque nacquero;
    rimanere rimango rimani rimane rimaniamo rimangono rimaneva rimasto rimasta rimarrò rimasi rimase rimasero"""
# the forms that are nouns, adjectives or words of another of the languages too
_ROMANCE_IRREGULAR_OTHER = frozenset(("hecho", "dicho", "dado", "visto", "vista", "puesto", "puesta", "vino",
                                      "été", "vue", "vues", "part", "bois", "mis", "mise",
                                      "mises", "prise", "prises", "lit", "fatto", "fatti", "fatta", "detto", "presa",
                                      "preso", "presi", "feito", "feita", "dito", "ira", "via", "vendo", "tendo",
                                      "vinda", "vindo", "but", "put", "fit", "vit", "lut", "hacia", "faro", "fara",
                                      "vendre", "tenia", "venia", "letto", "legge", "chiese", "vinci", "decide",
                                      "mette"))


def _romance_irregular() -> dict[str, frozenset[str]]:
    """Each form of :data:`_ROMANCE_IRREGULAR_VERBS`, with and without its accents, and the forms of its verbs."""
    little = STOPWORDS["romance"]
    out: dict[str, frozenset[str]] = {}
    for line in _ROMANCE_IRREGULAR_VERBS.split(";"):
        # (with the accents dropped, as chats drop them, where that leaves the last letter: "hacían", "hacian";
        # "farò" is no "faro", a lighthouse)
        said = set(line.split()[1:] + line.split()[:1])
        said |= {plain(f) for f in said if plain(f)[-1:] == f[-1:]}
        forms = frozenset(f for f in said if len(f) >= 3 and f not in _ROMANCE_IRREGULAR_OTHER
                          and plain(f) not in little)
        for f in forms:
            out[f] = out.get(f, frozenset()) | forms
    return out


_ROMANCE_IRREGULAR = _romance_irregular()


# Dutch: a noun's plural in -en or -s ("boek", "boeken"; "tafel", "tafels"; "kind", "kinderen") and its diminutive in
# -je, -tje, -pje ("huisje", "boompje", "autootje"), a verb's present ("werkt", "werken"), past in -de or -te
# ("woonde", "werkte") and participle ge- -d or -t ("gewoond", "gewerkt"). A Dutch noun is not capitalised, so every
# word of a question is given both. Before an ending that opens with a vowel a long vowel is written once and a
# short one's consonant twice ("boom", "bomen"; "kat", "katten"), and an "f" or "s" is voiced ("brief", "brieven";
# "huis", "huizen"); the stem said alone writes them as its word does ("wonen", "woon", "woonde"; "leven", "leef").
# A word asked is read as each stem one of whose forms it is, and given each such stem's forms.
_NL_VOWELS = "aeiouy"
_NL_ENDINGS = ("en", "s", "eren", "je", "jes", "tje", "tjes", "pje", "pjes", "etje", "etjes", "t", "de", "den", "te",
               "ten")


def _nl_open(stem: str) -> set[str]:
    """``stem`` as it is written before an ending that opens with a vowel: a long vowel once ("woon" -> "won"), a
    short vowel's consonant twice ("kat" -> "katt"), an "f" and an "s" voiced or not ("leef" -> "lev", "huis" ->
    "huiz", "mens" -> "mens")."""
    out = {stem}
    if len(stem) >= 3 and stem[-1] not in _NL_VOWELS:
        if stem[-2] in _NL_VOWELS and stem[-3] == stem[-2] and stem[-2] in "aeou":  # "boom" -> "bom"
            out = {stem[:-2] + stem[-1]}
        elif stem[-2] in _NL_VOWELS and stem[-3] not in _NL_VOWELS and stem[-1] not in "wjh":  # "kat" -> "katt"
            out.add(stem + stem[-1])
    out |= {o[:-1] + {"f": "v", "s": "z"}[o[-1]] for o in out if o[-1:] in ("f", "s")}
    return out


# A stem in "t" or "d" takes no second one in its participle ("praat", "gepraat"; "antwoord", "geantwoord"), and a
# verb with an unstressed prefix none of "ge-" ("gebeuren", "gebeurd"; "betalen", "betaald"; "vertellen", "verteld").
_NL_PREFIXES = ("be", "ge", "ver", "her", "ont", "er")
_NL_PREFIXED_STEM = 5  # the letters of a prefixed stem at least ("gebeur", "betaal", "erken")


@lru_cache(maxsize=4096)
def _dutch_forms(stem: str) -> frozenset[str]:
    """The forms of the Dutch noun or verb ``stem`` (its word, or a verb's stem: "boek", "woon")."""
    out = {stem, stem + "s", stem + "'s", stem + "t", stem + "de", "ge" + stem + "d", "ge" + stem + "t",
           stem + "den", stem + "te", stem + "ten", stem + "je", stem + "jes", stem + "tje", stem + "tjes",
           stem + "pje", stem + "pjes", stem + "etje", stem + "etjes", stem + "eren"}
    if stem[-1:] in ("t", "d"):  # "gepraat", "geantwoord"
        out.add("ge" + stem)
    if stem.startswith(_NL_PREFIXES) and len(stem) >= _NL_PREFIXED_STEM:  # "gebeurd", "betaald", "ontmoet"
        out |= {stem + "d", stem + "t"}
    if stem[-1:] == "e":  # "auto" -> "autootje", "tafel"; "ziekte" -> "ziektes", "ziekten"
        out.add(stem + "n")
    out |= {o + e for o in _nl_open(stem) for e in ("en", "eren", "etje", "etjes")}
    if stem[-1:] in _NL_VOWELS and stem[-1:] != "e":
        out |= {stem + stem[-1] + "tje", stem + stem[-1] + "tjes"}
    return frozenset(out)


def _dutch_stems(word: str) -> set[str]:
    """The stems the Dutch word ``word`` (in lower case) is a form of (see :func:`_dutch_forms`)."""
    out = {word}
    if word.startswith("ge") and word[-1:] in "dt" and len(word) >= 6:
        out |= {word[2:-1], word[2:]}  # "gewerkt": "werk"; "gepraat": "praat"
    if word.startswith(_NL_PREFIXES) and word[-1:] in "dt" and len(word) > _NL_PREFIXED_STEM:
        out.add(word[:-1])  # "gebeurd": "gebeur"
    for e in _NL_ENDINGS:
        if word.endswith(e) and len(word) - len(e) >= MIN_BASE["nl"]:
            s = word[:len(word) - len(e)]
            out.add(s)
            if len(s) >= 2 and s[-1] == s[-2] and s[-1] not in _NL_VOWELS:  # "katt" -> "kat"
                out.add(s[:-1])
            if s[-1:] in ("v", "z"):  # "lev" -> "leef", "huiz" -> "huis"
                out.add(s[:-1] + {"v": "f", "z": "s"}[s[-1]])
            for t in list(out - {word}):  # "won" -> "woon", "bom" -> "boom", "lef" -> "leef"
                if len(t) >= 3 and t[-1] not in _NL_VOWELS and t[-2] in "aeou" and t[-3] not in _NL_VOWELS:
                    out.add(t[:-2] + t[-2] + t[-2:])
    return {s for s in out if len(s) >= MIN_BASE["nl"] and word in _dutch_forms(s)}


# The strong and irregular verbs of Dutch a chat says most, whose vowel changes ("lopen", "liep", "gelopen"; "eten",
# "at", "gegeten"; "schrijven", "schreef", "geschreven"), each a line of its infinitive, present, pasts and
# participle: a word asked that is one of them is matched in all of them ("Wat heeft Anna gegeten?" finds "Anna at
# pizza"). The forms of fewer than three letters ("at", "ga") and those that are English words or nouns too ("deed",
# "reed", "lag", "nam", "reden", a reason) give and are given none; "hebben", "zijn", "worden", "kunnen" are left,
# the auxiliaries of every other message.
_NL_STRONG_VERBS = """
    lopen loop loopt liep liepen gelopen; eten eet at aten gegeten; schrijven schrijf schrijft schreef schreven
    geschreven; drinken drink drinkt dronk dronken gedronken; rijden rijd rijdt reed reden gereden; vliegen vlieg
    vliegt vloog vlogen gevlogen; zien zie ziet zag zagen gezien; komen kom komt kwam kwamen gekomen; gaan ga gaat
    ging gingen gegaan; doen doe doet deed deden gedaan; nemen neem neemt nam namen genomen; geven geef geeft gaf
    gaven gegeven; lezen lees leest las lazen gelezen; vinden vind vindt vond vonden gevonden; blijven blijf blijft
    bleef bleven gebleven; zingen zing zingt zong zongen gezongen; zwemmen zwem zwemt zwom zwommen gezwommen; winnen
    win wint won wonnen gewonnen; beginnen begin begint begon begonnen; kopen koop koopt kocht kochten gekocht;
    brengen breng brengt bracht brachten gebracht; denken denk denkt dacht dachten gedacht; zoeken zoek zoekt zocht
    zochten gezocht; krijgen krijg krijgt kreeg kregen gekregen; spreken spreek spreekt sprak spraken gesproken;
    helpen help helpt hielp hielpen geholpen; slapen slaap slaapt sliep sliepen geslapen; vallen val valt viel vielen
    gevallen; houden houd houdt hield hielden gehouden; roepen roep roept riep riepen geroepen; staan sta staat stond
    stonden gestaan; zitten zit zat zaten gezeten; liggen lig ligt lag lagen gelegen; vergeten vergeet vergat
    vergaten; verliezen verlies verliest verloor verloren; kiezen kies kiest koos kozen gekozen; sterven sterf sterft
    stierf stierven gestorven; trekken trek trekt trok trokken getrokken; breken breek breekt brak braken gebroken;
    zeggen zeg zegt zei zeiden gezegd; vragen vraag vraagt vroeg vroegen gevraagd; dragen draag draagt droeg droegen
    gedragen; vechten vecht vocht vochten gevochten; sluiten sluit sloot sloten gesloten; bieden bied biedt bood
    boden geboden; verbieden verbied verbiedt verbood verboden; vertrekken vertrek vertrekt vertrok vertrokken;
    ontvangen ontvang ontvangt ontving ontvingen; wassen was wast waste wasten gewassen; bakken bak bakt bakte bakten
    gebakken"""
_NL_STRONG_OTHER = frozenset(("deed", "reed", "reden", "lag", "lagen", "nam", "namen", "had", "was", "wassen", "waste",
                              "wasten", "gelegen", "sloten", "geboden", "boden", "verboden"))


def _nl_strong() -> dict[str, frozenset[str]]:
    """Each form of :data:`_NL_STRONG_VERBS` and the forms of its verb."""
    out: dict[str, frozenset[str]] = {}
    for line in _NL_STRONG_VERBS.split(";"):
        forms = frozenset(f for f in line.split() if len(f) >= 3 and f not in _NL_STRONG_OTHER)
        for f in forms:
            out[f] = out.get(f, frozenset()) | forms
    return out


_NL_STRONG = _nl_strong()

_FORMS = {"tr": _turkish_forms, "fi": _finnish_forms, "de": _german_forms, "romance": _romance_forms,
          "nl": _dutch_forms}


def _lower(word: str, lang: str) -> str:
    return word.replace("İ", "i").lower() if lang == "tr" else word.lower()


@lru_cache(maxsize=4096)
def variants(word: str, lang: str | None) -> frozenset[str]:
    """``word`` and the forms of its bases (see the module) in the language ``lang`` (``"tr"``, ``"fi"``, ``"de"``,
    ``"romance"``), in lower case; ``{word}`` for another language, or a word of digits, of fewer letters than a base
    keeps or of more than :data:`MAX_LETTERS`."""
    forms_of = _FORMS.get(lang or "")
    if forms_of is None or not word.isalpha() or not MIN_BASE[lang] <= len(word) <= MAX_LETTERS:
        return frozenset((word,))
    low = _lower(word, lang)
    if lang == "nl":  # "boeken": "boek", "boekje"; "woonde": "woon", "wonen", "gewoond"; "liep": "lopen", "gelopen"
        return frozenset({word} | {f for stem in _dutch_stems(low) for f in _dutch_forms(stem)}
                         | _NL_STRONG.get(low, frozenset()))
    if lang == "romance":  # the word and its letters without accents ("jardín", "jardines"; "ciudad", "ciudades")
        forms = {word} | _romance_forms(low) | _romance_forms(plain(low))
        if plain(low)[:1] in "aeiouh":
            forms |= {a + f for a in _ARTICLES for f in forms}
        irregular = _ROMANCE_IRREGULAR.get(low, frozenset()) | _ROMANCE_IRREGULAR.get(plain(low), frozenset())
        # "trabajaba": "trabaja", "trabajó", "trabajando"; "hizo": "hace", "hicimos"
        return frozenset(forms | _romance_verb_forms(low) | irregular)
    # the word and the two shortest words it is a form of ("kedim": "ked" + "im" and "kedi" + "m"; "evlerimiz": "ev"
    # and "evler", whose forms hold the longer ones): each base's forms are a few hundred phrases to look for
    found = [b for b in (low[:k] for k in range(max(MIN_BASE[lang], len(low) - MAX_ENDING), len(low)))
             if any(c in _VOWELS for c in b) and low in forms_of(b) and not (lang == "de" and low == b + "s")]
    bases = {low, *found[:BASES]}  # (a German word in -s is no genitive asked: "Haus" is no "Hau")
    if lang == "fi":  # a weak stem asked ("kadulla", "Helsingissä") or one in -se- ("naisen"): the word said alone
        for k in range(max(MIN_BASE[lang], len(low) - MAX_ENDING), len(low)):
            b = low[:k]
            strong = [b[:-1] + "nen" for _ in (0,) if b.endswith("s")] + [b[:-2] + "nen" for _ in (0,) if
                                                                            b.endswith("se")]
            if b[-1:] in _VOWELS:
                stem = b[:-1]
                strong += [stem[:len(stem) - len(w)] + st + b[-1] for w, st in _FI_STRONG if stem.endswith(w)]
                if b[-1] in _FI_K_DROPS and stem[-1:] in _VOWELS:
                    strong.append(stem + "k" + b[-1])  # "ruoan": "ruoka"
            if b.endswith("ii"):
                strong.append(b[:-1] + "s")  # "kauniin": "kaunis"
            if b.endswith(("aa", "ää")):  # "vieraan": "vieras"; "rikkaan": "rikas"
                weak = _fi_weak(b[:-1])
                strong += [b[:-1] + "s"] + ([weak + "s"] if weak is not None else [])
            if b.endswith("e") and b[-2:-1] not in tuple(_VOWELS):  # "liikenteen": "liikenne"
                weak = _fi_weak(b)
                strong += [weak] if weak is not None else []
            bases.update(c for c in strong if len(c) >= MIN_BASE[lang] and low in _finnish_forms(c))
    if lang == "tr":  # a voiced final consonant asked ("kitabı", "çocuğu"): the base as it is said alone
        for k in range(max(MIN_BASE[lang], len(low) - MAX_ENDING), len(low)):
            hard = _TR_HARD.get(low[k - 1])
            if hard is not None and low[k:k + 1] in tuple(_TR_VOWELS) and low in _turkish_forms(low[:k - 1] + hard):
                bases.add(low[:k - 1] + hard)
    verbs: frozenset[str] = frozenset()
    if lang == "de":  # "häuser" is "haus" + "er" in umlaut: its bases without the umlaut too
        for b in list(bases):
            bare = "".join(_PLAIN.get(c, c) for c in b.replace("äu", "au"))
            if bare != b and low in _german_forms(bare):
                bases.add(bare)
        if word[:1].islower():  # a verb ("gearbeitet": "arbeitet", "arbeitete"; "gefahren": "fuhr")
            verbs = _german_all_verb_forms(low)
    return frozenset({word} | {f for b in bases for f in forms_of(b)} | verbs)
