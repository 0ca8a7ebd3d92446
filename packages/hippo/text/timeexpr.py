"""Event time from text: relative and explicit time expressions resolved against the message's timestamp.

"I went to the support group yesterday" said on 8 May 2023 happened on 7 May 2023; "two weeks ago" is a week-wide
interval, "last month" a calendar month, "in 2022" a year. Seed 002 §4.1 (the L4 consolidator's timelines and the
stage-9 temporal boost) needs both the event time of a message and whether a query carries temporal intent; both
are rule-based here, deterministic, and cost a few microseconds per message.

Every resolved expression is an interval ``[start, end)`` in UTC epoch seconds with a granularity
(``day`` / ``week`` / ``weekend`` / ``month`` / ``year``, or ``days`` for a span of days: "in the last week");
its midpoint orders events, except for a period said with "since" ("since 2019": from 2019 up to the day it is said),
whose event is when it began: the middle of the period it began in (:attr:`TimeRef.at`).
"""

from __future__ import annotations

import calendar
import functools
import math
import numbers
import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from hippo.base.errors import InvalidInput
from hippo.base.timeutil import EPOCH_END, EPOCH_MIN, MONTH_NAMES, is_utc_offset, month_year, year_bounds
from hippo.text import anchors

DAY = 86400.0
#: The version of the rules below. Saved time-and-truth annotations record it; annotations saved under another version
#: are computed again from the messages when the namespace is opened (2: the dates written in Chinese, Japanese,
#: Korean, Thai, Arabic and Persian; 3: holidays, the weeks of a month, "on the weekend", a weekday that opens a
#: sentence and the units as chats clip them; 4: "the week of November 6"; 5: a clause that says who told what a
#: sentence says, "We're meeting on Friday, I was told"; a holiday that opens a sentence, "Christmas was lovely"; a
#: range, "between March and May", "from the 3rd to the 5th"; a season spent or opening a sentence, "The winter was
#: harsh"; "a few days back", "the night before last"; "on the third", "the first of May"; "half a year ago"; "by the
#: 20th", "since the 10th"; "a week today", "two weeks on Friday"; "the other night"; "this time next year"; "Canadian
#: Thanksgiving"; "in the next few days"; Boxing Day and St Patrick's Day; "between Christmas and New Year"; 6: the
#: relative days, weeks, months and years of German, Dutch, Spanish, Portuguese, French, Italian, Russian and Turkish,
#: their counts of units back and ahead and their weekdays said with next or last, and the relative days of Chinese,
#: Japanese and Korean; 7: the relative days of Polish, Czech and Slovak, Swedish, Danish and Norwegian, Arabic and
#: Hindi; a range of days, "March 3-5", "from 3 to 5 March"; a weekday said alone in a sentence, "see you Friday", "I
#: saw her Tuesday"; "a year and a half ago", "a decade ago", "the other week"; "the first half of the year", "the turn
#: of the year"; "the Christmas break", "over the holidays", "in the new year"; 8: "in the coming days", "in the days
#: ahead"; "I'll hear back in November"; Black Friday and Cyber Monday; a weekday that is a show's title, "I watched
#: Wednesday on Netflix"; a list of days, "on March 3 and 5"; "the first Monday of April"; "on Tuesday, the 7th";
#: "I saw June 3 times"; "by July", "starting April"; quarters, halves and fiscal years, "in Q3", "last quarter", "H1
#: 2024", "FY24"; Arabic "اليوم" where it is today; a weekday said alone in the languages of OTHER_WEEKDAYS, "el
#: viernes", "am Freitag", "в пятницу"); 9: decades, "the 1990s", "the '90s", "the nineties", "the early 2000s"; a range
#: of quarters, "from Q1 to Q3 2024"; "the past quarter", and "the last quarter" reported as the one before this one;
#: "for the weekend"; "around the 20th"; a Spanish or Portuguese weekday said alone whose clause's verb is a "we" of the
#: present and the past alike ("El sábado salimos") is undated; the past of a German or Dutch weak verb ("Am Freitag
#: kochten wir"), of more strong ones, and the imperfect's plural in Spanish and Portuguese and after a French pronoun
#: place a weekday said alone in the past; 10: Dutch "vorige week", "volgende maand", "vorig jaar", "twee dagen
#: geleden", "over twee weken", "vanavond", "gisteravond", "komende vrijdag", a Dutch weekday said without "op"
#: ("Zaterdag ging ik"; "zaterdagavond"), the Dutch months ("in maart", "op 3 mei"), "morgen" as the morning after a
#: word that makes it one ("goede morgen", "guten morgen"); the past of a Dutch stem in "t" or "d" ("praatte"), more
#: Dutch perfects with "zijn" ("is gebeurd") and the Italian passato remoto ("andò", "parlarono") place a weekday said
#: alone in the past; "in the upcoming week", "this upcoming weekend" as "the coming" ones; a question about what one
#: can do a few words before its time, "Can I finish this in April?", "Is it realistic to move in June?", about what is
#: to come.
RULE = 10

# English names, spelled out: the calendar module's names follow the process's locale (LC_TIME), which the
# application may have set, while the patterns below match English words.
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES, 1)}
MONTHS.update({m[:3]: i for i, m in enumerate(_MONTH_NAMES, 1)})
MONTHS["sept"] = 9
WEEKDAYS = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                         "sunday"))}
# the weekdays as chats clip them ("last Fri", "next Tues", "on Mon"); "Mon", "Wed", "Sat" and "Sun" only
# capitalised (the words "wed", "sat" and "sun" are as common, and "come on mon" is a man)
WEEKDAYS.update({"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5,
                 "sun": 6})
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "a couple of": 2, "a couple": 2,
           "couple of": 2, "a few": 3, "few": 3, "several": 3}

# the days of a month as ordinals spelled out ("on the third", "the first of May", "March twenty-first")
_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                  "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                  "eighteenth", "nineteenth", "twentieth")
ORDINALS = {w: i for i, w in enumerate(_ORDINAL_WORDS, 1)}
ORDINALS.update({f"twenty{sep}{w}": 20 + i for i, w in enumerate(_ORDINAL_WORDS[:9], 1) for sep in ("-", " ")})
ORDINALS.update({"thirtieth": 30, "thirty-first": 31, "thirty first": 31})
_ORDINAL = "(" + "|".join(sorted(ORDINALS, key=len, reverse=True)) + ")"
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_WEEKDAY = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# a weekday named or clipped, after "last", "next", "this", "on", "since", "by", "until"
_WEEKDAY_CLIPPED = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues?|thu(?:rs?)?|fri|" \
                   r"(?-i:Mon|Wed|Sat|Sun))"

# Dates written in scripts other than the Latin one, each with its year (a digit is any script's: "٥", "๕", "５").
# Thai months, full and abbreviated ("5 มีนาคม 2567", "5 มี.ค. 2567"); a Thai year is of the Buddhist era (CE + 543)
# when it says so (พ.ศ.) or is 2400 or later, of the common era when it says so (ค.ศ.) or is earlier.
_THAI_MONTHS = (("มกราคม", "ม.ค."), ("กุมภาพันธ์", "ก.พ."), ("มีนาคม", "มี.ค."), ("เมษายน", "เม.ย."),
                ("พฤษภาคม", "พ.ค."), ("มิถุนายน", "มิ.ย."), ("กรกฎาคม", "ก.ค."), ("สิงหาคม", "ส.ค."),
                ("กันยายน", "ก.ย."), ("ตุลาคม", "ต.ค."), ("พฤศจิกายน", "พ.ย."), ("ธันวาคม", "ธ.ค."))
THAI_MONTHS = {w: i for i, names in enumerate(_THAI_MONTHS, 1) for w in (names[0], names[1], names[1][:-1])}
_THAI_MONTH = "(" + "|".join(re.escape(w) for w in sorted(THAI_MONTHS, key=len, reverse=True)) + ")"
# Arabic months: the Egyptian and Gulf names of the Gregorian months, the Levantine ones (آذار, كانون الثاني), and the
# Persian names of the Gregorian months (مارس, ژانویه)
_ARABIC_MONTHS = (
    ("يناير", "كانون الثاني", "ژانویه"), ("فبراير", "شباط", "فوریه"), ("مارس", "آذار", "اذار"),
    ("أبريل", "ابريل", "إبريل", "نيسان", "آوریل"), ("مايو", "أيار", "ايار", "مه"), ("يونيو", "يونيه", "حزيران", "ژوئن"),
    ("يوليو", "يوليه", "تموز", "ژوئیه", "جولای"), ("أغسطس", "اغسطس", "آب", "اوت"), ("سبتمبر", "أيلول", "ايلول", "سپتامبر"),
    ("أكتوبر", "اكتوبر", "تشرين الأول", "تشرين الاول", "اکتبر"), ("نوفمبر", "تشرين الثاني", "نوامبر"),
    ("ديسمبر", "كانون الأول", "كانون الاول", "دسامبر"))
ARABIC_MONTHS = {w: i for i, names in enumerate(_ARABIC_MONTHS, 1) for w in names}
# the months of the Persian solar calendar (۱۴ اسفند ۱۴۰۲ is 4 March 2024)
PERSIAN_MONTHS = {w: i for i, w in enumerate(("فروردین", "اردیبهشت", "خرداد", "تیر", "مرداد", "شهریور", "مهر",
                                               "آبان", "آذر", "دی", "بهمن", "اسفند"), 1)}
_ARABIC_MONTH = "(" + "|".join(sorted(ARABIC_MONTHS, key=len, reverse=True)) + ")"
_PERSIAN_MONTH = "(" + "|".join(sorted(PERSIAN_MONTHS, key=len, reverse=True)) + ")"
# the eras of Japanese years: 令和元年 is 2019, 平成 1 is 1989, 昭和 1 is 1926
JAPANESE_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925}
_NUM = r"(\d{1,3}|a couple of|a couple|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|" \
       r"couple of|couple|few|several)"
_UNIT = r"(day|week|fortnight|month|year)s?"
_SEASON = r"(spring|summer|fall|autumn|winter)"
# the days as chats also type them (hippo.text.shorthand): "yday", "2day", "tmrw", "tommorow"
_YESTERDAY = r"yesterday|yday|yest"
_TODAY = r"today|2day"
_TOMORROW = r"tomorrow|tmrw|tmrrw|tmr|2moro|2morrow|tomoz|tomorow|tommorow|tommorrow"

# the small words a sentence goes on with: a word in lowercase after a time that is none of them is what the time
# describes ("on the 3rd floor", "this yr first time" where "yr" is "your")
_GOES_ON = (r"(?:of|at|and|or|but|so|to|for|from|in|on|with|when|while|because|as|after|before|until|till|by|i|we|you|"
            r"he|she|they|it|my|our|his|her|their|the|a|an|this|that|which|who|is|was|were|will|would|then|too|again|"
            r"instead|right|if|since|around|about|between)")
# the units as chats clip them ("next wk", "last yr", "this wknd"), read after "last", "next" and "this"; "yr" only
# when the sentence ends or goes on with a small word after it ("this yr" is as often "this your": "is this yr first
# time?")
_UNIT_CLIPPED = {"wk": "week", "wknd": "weekend", "wkend": "weekend", "yr": "year"}
_CLIPPED_UNIT = r"(?:wk|wknd|wkend|yr\b(?!['\u2019]|\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z])))"

# the holidays whose day is the same wherever the speaker is: Christmas (Eve and Day), Boxing Day, New Year's Eve and
# Day, Valentine's Day, St Patrick's Day, Halloween, Easter (its Sunday computed; "Easter" alone is Good Friday to
# Easter Monday), and Black Friday and Cyber Monday (the Friday and the Monday after US Thanksgiving, kept so wherever
# they are kept).
# Thanksgiving alone is not read: the United States keep the fourth Thursday of November, Canada the second Monday
# of October, and a chat seldom says which; said with its country ("Canadian Thanksgiving", "US Thanksgiving") it is
# that country's.
_HOLIDAY = (r"(christmas\s+eve|christmas\s+day|christmas|xmas\s+eve|xmas\s+day|xmas|new\s+year'?s'?\s+eve|"
            r"new\s+year'?s'?\s+day|valentine'?s'?(?:\s+day)?|halloween|easter\s+sunday|easter\s+monday|"
            r"easter\s+weekend|easter|good\s+friday|boxing\s+day|st\.?\s+patrick'?s'?\s+day|"
            r"saint\s+patrick'?s'?\s+day|(?:american|(?-i:US|U\.S\.)|canadian)\s+thanksgiving(?:\s+day)?|"
            r"black\s+friday|cyber\s+monday)")
# the start of a sentence: the text's, or after the mark that ends one and a space
_OPENING = r"|^|(?<=[.!?\n])|(?<=[.!?\n] )"
# the verbs a holiday is spent or celebrated with, read as the one it is at: "we spent Christmas in Oslo", "how did you
# celebrate Easter?"
_SPENDING = ("spend", "spent", "spends", "spending", "celebrate", "celebrated", "celebrates", "celebrating")

# a place named after a holiday: "Easter Island", "Christmas Island", "Valentine Street"
_PLACE_NOUN = (r"(?:Islands?|Isle|Bay|Creek|Street|St|Road|Rd|Avenue|Ave|Lane|Park|Valley|Lake|River|Mountains?|Point|"
               r"Beach|Village|Town|Cove|Hill|Hills)")
# a holiday after a word that places it; a question's "before Christmas" and "after Easter" are read too ({lead}:
# :data:`_QUERY_PATTERNS`)
_HOLIDAY_RX = (r"(?:\b({lead}at|on|over|during|around|for|since|by|until|till|last|this\s+past|this\s+coming|this|"
               r"next)\s+(?:the\s+)?|" + "|".join(rf"(?<=\b{verb} )" for verb in _SPENDING) + _OPENING + ")"
               + _HOLIDAY + r"(?:\s+(?:morning|afternoon|evening|night))?(?:,?\s+((?:19|20)\d{{2}})\b)?"
               r"(?!['\u2019]|\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z])|\s+" + _PLACE_NOUN + r"\b)")

# "on the 3rd", "by the 20th", "since the 10th", "around the 20th" (the day, as "around Christmas" is) (a question's
# "before the 10th" and "after the 3rd" too: {lead}), not "on the 3rd floor" / "by the 18th hole": a word in lowercase
# after the ordinal is what it counts, unless it is one of the small words a sentence goes on with; an ordinal spelled
# out ("on the third") only at the end of its clause or before "of this month" or a few words that go on with a day
# ("on the first draw", "on the First Die", "on the first and second draws" count things)
_NTH_RX = (r"\b({lead}on|by|until|till|since|around) the (?:(\d{{1,2}})(?:st|nd|rd|th)\b(?![-\u2013]|\s+(?!" + _GOES_ON
           + r"\b)(?-i:[a-z]))|" + _ORDINAL + r"(?=\s*(?:[.!?,;:)\n]|$)|\s+(?:of\s+(?:this|next|last|each|every)\s+"
           r"month|at|then|too|so|when|if|but|because|as|instead|though)\b))"
           r"(?:\s+of\s+(this|next|last|each|every)\s+month\b)?")

# a season said with "the" ("in the summer", "we spent the summer", "The winter was harsh": one that opens a sentence
# only before its verb or a comma, since "The summer I turned 16" and "The winter Olympics" name another); a
# question's "before the summer" too ({lead})
_THE_SEASON_RX = (r"(?:\b(?:{lead}in|over|during|throughout)\s+|" + "|".join(rf"(?<=\b{verb} )" for verb in _SPENDING)
                  + r")the\s+" + _SEASON + r"\b(?!\s+(?:of|before|after)\b)|(?:^|(?<=[.!?\n])|(?<=[.!?\n] ))the\s+"
                  r"(spring|summer|autumn|winter)(?=\s*,|\s+(?:was|were|is|has|had|will|flew|passed|seemed|felt|"
                  r"came|ended|began|started|brought|went)\b)")
# "last Friday", "on Friday"; a question's "before Friday", "after Monday" too ({lead})
_LAST_WD_RX = r"\b(?:{lead}last|this past|on|past) " + _WEEKDAY_CLIPPED + r"\b"

# The relative days of other languages, each a day from the day it is said: German and Dutch, Spanish, Portuguese,
# French, Italian, Russian, Turkish, Polish, Czech and Slovak, Swedish, Danish and Norwegian ("i går", "igår") and
# Arabic, with and without their accents as chats type them ("manana", "amanha", "vcera"; "غدا" and "غداً"), and
# Arabic "اليوم" where it is today (_AR_TODAY).
# Spanish "mañana" is also the morning ("por la mañana", "esta mañana" is today), German "Morgen" the morning
# ("heute Morgen", "guten Morgen"; "morgen" in lower case, or opening a sentence before a word, is tomorrow, but not
# after a word that makes it the morning: "guten morgen", "den ganzen morgen", Dutch "goede morgen", "de hele morgen",
# "'s morgens", "elke morgen"), Dutch "morgen" tomorrow as German's is ("vanmorgen" this morning, "morgenavond"
# tomorrow evening), and
# French "hier" is German and Dutch for "here": it is read only in a message with a word of French. The days of
# Chinese, Japanese and Korean ("昨天", "明日") are read by "cjk_day", those of Hindi by "hi_day". Thai's ("เมื่อวาน",
# "พรุ่งนี้") are not: in a Thai chat, whose words are matched by their pieces, the date of a message that shares a
# piece with a question lifts it above the message the question names (the chats of every script, docs/retrieval.md:
# 2 of 14 questions lose their first place).
OTHER_DAYS: dict[str, int] = {
    "vorgestern": -2, "gestern": -1, "heute": 0, "übermorgen": 2, "uebermorgen": 2,
    "eergisteren": -2, "gisteren": -1, "vandaag": 0, "overmorgen": 2,
    "gisteravond": -1, "gisterochtend": -1, "gistermorgen": -1, "gistermiddag": -1, "gisternacht": -1,
    "gisterenavond": -1, "gisterenochtend": -1, "gisterenmorgen": -1, "gisterenmiddag": -1,
    "vanochtend": 0, "vanmorgen": 0, "vanmiddag": 0, "vanavond": 0, "morgenochtend": 1, "morgenvroeg": 1,
    "morgenmiddag": 1, "morgenavond": 1,
    "pasado mañana": 2, "pasado manana": 2, "esta mañana": 0, "esta manana": 0, "anteayer": -2, "antier": -2,
    "anoche": -1, "ayer": -1, "hoy": 0, "hier": -1,
    "depois de amanhã": 2, "depois de amanha": 2, "anteontem": -2, "ontem": -1, "hoje": 0, "amanhã": 1, "amanha": 1,
    "avant-hier": -2, "avant hier": -2, "après-demain": 2, "apres-demain": 2, "après demain": 2, "apres demain": 2,
    "aujourd'hui": 0, "aujourdhui": 0, "demain": 1,
    "l'altro ieri": -2, "l'altroieri": -2, "altro ieri": -2, "dopodomani": 2, "ieri": -1, "oggi": 0, "domani": 1,
    "позавчера": -2, "вчера": -1, "сегодня": 0, "завтра": 1, "послезавтра": 2,
    "evvelsi gün": -2, "öbür gün": 2, "dün": -1, "bugün": 0, "yarın": 1,
    "przedwczoraj": -2, "wczoraj": -1, "dzisiaj": 0, "dziś": 0, "jutro": 1, "pojutrze": 2,
    "předevčírem": -2, "predevcirem": -2, "včera": -1, "vcera": -1, "dnes": 0, "zítra": 1, "zitra": 1, "pozítří": 2,
    "pozitri": 2, "predvčerom": -2, "zajtra": 1, "pozajtra": 2,
    "i forgårs": -2, "i förrgår": -2, "i går": -1, "igår": -1, "i dag": 0, "idag": 0, "i morgen": 1, "i morgon": 1,
    "imorgon": 1, "imorgen": 1, "i overmorgen": 2, "i övermorgon": 2,
    "أول أمس": -2, "أول امس": -2, "أمس": -1, "امس": -1, "بالأمس": -1, "الأمس": -1, "البارحة": -1, "غدا": 1,
    "غدًا": 1, "بكرة": 1, "بعد غد": 2,
    # (Arabic writes "and" onto the next word: "وأمس", "وغدا")
    "وأمس": -1, "وامس": -1, "وبالأمس": -1, "والبارحة": -1, "وغدا": 1, "وغدًا": 1, "وبكرة": 1,
}
# Arabic "اليوم" is today and also "the day": it is today where it stands alone, not after a word that makes it a day
# of its own ("في اليوم التالي" the next day, "مرتين في اليوم" twice a day, "ذلك اليوم" that day, "نفس اليوم" the same
# day, "طوال اليوم" all day) nor before one that describes it ("اليوم الأول" the first day, "اليوم الوطني" the
# national day, "اليوم الذي" the day that, "اليوم كله" the whole day); "صباح اليوم" (this morning) is today.
_AR_DAY_BEFORE = ("في", "فى", "ذلك", "ذاك", "تلك", "هذا", "هذه", "نفس", "ذات", "طوال", "طيلة", "طول", "كل", "منتصف",
                  "نصف", "نهاية", "بداية", "آخر", "اخر", "بقية", "باقي", "حتى", "لغاية", "مثل", "منذ")
_AR_DAY_AFTER = ("الذي", "الذى", "التي", "اللي", "اللى", "نفسه", "ذاته", "كله", "بأكمله", "باكمله", "بكامله", "الأول",
                 "الاول", "الأخير", "الاخير", "الثالث", "الرابع", "الخامس", "السادس", "السابع", "الثامن", "التاسع",
                 "العاشر", "السابق", "المقبل", "القادم", "الموعود", "المحدد", "الكامل", "الطويل", "الواحد")
_AR_TODAY = ("".join(rf"(?<!\b{w} )" for w in _AR_DAY_BEFORE) + r"(و?اليوم)"
             + r"(?!\s+(?:" + "|".join(_AR_DAY_AFTER) + r"|ال\w+ي)(?!\w))")  # (ال...ي: "الوطني", "التالي")
_ARTICLE_BEFORE = "".join(rf"(?<!\b{w} )" for w in ("la", "una", "esta", "esa", "cada", "toda", "buena", "buenas",
                                                    "media", "por", "las", "de"))
_MORNING_BEFORE = "".join(rf"(?<!\b{w} )" for w in (
    "guten", "gute", "schönen", "schoenen", "den", "der", "die", "am", "jeden", "einen", "ganzen", "diesen",
    "nächsten", "naechsten", "goede", "goeie", "fijne", "de", "een", "deze", "elke", "iedere", "hele",
    # the morning of a day named before it: "heute morgen", "gestern morgen", "zaterdag morgen", "Samstag morgen"
    "heute", "gestern", "vorgestern", "gisteren", "eergisteren", "vandaag",
    "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonnabend", "sonntag",
    "maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"))
_OTHER_DAY = ("(" + "|".join(re.escape(w) for w in sorted(OTHER_DAYS, key=len, reverse=True))
              + r"|" + _ARTICLE_BEFORE + r"ma[ñn]ana"
              + r"|" + _MORNING_BEFORE + r"(?-i:morgen)|(?:^|(?<=[.!?\n])\s*|(?<=[.!?]\s))(?-i:Morgen)(?=\s+\w)|"
              + _AR_TODAY + ")")
# a word of French in the message, which makes its "hier" yesterday
_FRENCH = re.compile(r"(?:\b(?:nous|vous|elle|elles|ils|suis|était|étais|avons|avez|sommes|ai|une|au|aux|est|chez|"
                     r"avec|mais|très|soir|matin)\b|\b[jcl]'|\bça\b)", re.I)
# The last, this and next week, month and year of the same languages: "la semana pasada", "letzte Woche", "le mois
# prochain", "в прошлом году", "geçen hafta". Each phrase is (sign, unit, pattern).
_OTHER_UNITS: tuple[tuple[int, str, str], ...] = (
    # Spanish
    (-1, "week", r"la semana pasada"), (-1, "month", r"el mes pasado"), (-1, "year", r"el a[ñn]o pasado"),
    (1, "week", r"la pr[óo]xima semana|la semana (?:pr[óo]xima|que viene)"),
    (1, "month", r"el pr[óo]ximo mes|el mes (?:pr[óo]ximo|que viene)"),
    (1, "year", r"el pr[óo]ximo a[ñn]o|el a[ñn]o (?:pr[óo]ximo|que viene)"),
    (0, "week", r"esta semana"), (0, "month", r"este mes"), (0, "year", r"este a[ñn]o"),
    # Portuguese
    (-1, "week", r"(?:na |a )?semana passada"), (-1, "month", r"(?:no |o )?m[êe]s passado"),
    (-1, "year", r"(?:no |o )?ano passado"),
    (1, "week", r"(?:na |a )?pr[óo]xima semana|(?:na |a )?semana que vem"),
    (1, "month", r"(?:no |o )?pr[óo]ximo m[êe]s|(?:no |o )?m[êe]s que vem"),
    (1, "year", r"(?:no |o )?pr[óo]ximo ano|(?:no |o )?ano que vem"),
    # German
    (-1, "week", r"(?:letzte|vorige|vergangene)n? woche"), (-1, "month", r"(?:letzte|vorige|vergangene)[nm] monat"),
    (-1, "year", r"(?:letzte|vorige|vergangene)[sn] jahr"),
    (1, "week", r"n(?:ä|ae)chste woche"), (1, "month", r"n(?:ä|ae)chsten monat"),
    (1, "year", r"n(?:ä|ae)chstes jahr"),
    (0, "week", r"diese woche"), (0, "month", r"diesen monat"), (0, "year", r"dieses jahr"),
    # French
    (-1, "week", r"la semaine derni[èe]re"), (-1, "month", r"le mois dernier"),
    (-1, "year", r"l'ann[ée]e derni[èe]re|l'an dernier"),
    (1, "week", r"la semaine prochaine"), (1, "month", r"le mois prochain"),
    (1, "year", r"l'ann[ée]e prochaine|l'an prochain"),
    (0, "week", r"cette semaine"), (0, "month", r"ce mois-ci"), (0, "year", r"cette ann[ée]e"),
    # Italian
    (-1, "week", r"la settimana scorsa"), (-1, "month", r"il mese scorso"), (-1, "year", r"l'anno scorso"),
    (1, "week", r"la settimana prossima|la prossima settimana"),
    (1, "month", r"il mese prossimo|il prossimo mese"), (1, "year", r"l'anno prossimo|il prossimo anno"),
    # Dutch
    (-1, "week", r"vorige week"), (-1, "month", r"vorige maand"),
    (-1, "year", r"vorig jaar"), (1, "week", r"volgende week"), (1, "month", r"volgende maand"),
    (1, "year", r"volgend jaar"), (0, "week", r"deze week"), (0, "month", r"deze maand"), (0, "year", r"dit jaar"),
    # Russian
    (-1, "week", r"на прошлой неделе"), (-1, "month", r"в прошлом месяце"), (-1, "year", r"в прошлом году"),
    (1, "week", r"на следующей неделе"), (1, "month", r"в следующем месяце"), (1, "year", r"в следующем году"),
    (0, "week", r"на этой неделе"), (0, "month", r"в этом месяце"), (0, "year", r"в этом году"),
    # Turkish
    (-1, "week", r"geçen hafta"), (-1, "month", r"geçen ay"), (-1, "year", r"geçen (?:yıl|sene)"),
    (1, "week", r"(?:gelecek|önümüzdeki) hafta|haftaya"), (1, "month", r"(?:gelecek|önümüzdeki) ay"),
    (1, "year", r"(?:gelecek|önümüzdeki) (?:yıl|sene)|seneye"),
    (0, "week", r"bu hafta"), (0, "month", r"bu ay"), (0, "year", r"bu (?:yıl|sene)"),
)
_OTHER_UNIT = "|".join(rf"(?P<u{k}>{rx})" for k, (_, _, rx) in enumerate(_OTHER_UNITS))
# A count of days, weeks, months or years back or ahead in the same languages: "hace dos días", "há 3 semanas",
# "dos meses atrás", "il y a deux ans", "tre giorni fa", "vor zwei Wochen", "in drei Tagen", "dentro de un mes", "dans
# 5 jours", "daqui a dois anos", "tra due settimane", "два дня назад", "через неделю", "iki gün önce", "3 hafta sonra".
OTHER_UNIT_WORDS: dict[str, str] = {w: unit for unit, words in {
    "day": "día días dia dias jour jours giorno giorni tag tage tagen день дня дней gün",
    "week": "semana semanas semaine semaines settimana settimane woche wochen неделю недели недель hafta",
    "month": "mes meses mês mois mese mesi monat monate monaten месяц месяца месяцев ay",
    "year": "año años ano anos an ans année années anno anni jahr jahre jahren год года лет yıl sene",
}.items() for w in words.split()}
OTHER_NUMBERS: dict[str, int] = {w: n for n, words in enumerate((
    "un una uno une um uma ein eine einen einem einer один одну одна bir",
    "dos dois duas deux due zwei два две iki", "tres três trois tre drei три üç",
    "cuatro quatro quatre quattro vier четыре dört", "cinco cinq cinque fünf пять beş",
    "seis six sei sechs шесть altı", "siete sete sept sette sieben семь yedi", "ocho oito huit otto acht восемь sekiz",
    "nueve nove neuf neun девять dokuz", "diez dez dix dieci zehn десять on"), 1) for w in words.split()}
_OTHER_NUM = r"(\d{1,3}|" + "|".join(sorted(OTHER_NUMBERS, key=len, reverse=True)) + r")"
_OTHER_UNIT_WORD = "(" + "|".join(sorted(OTHER_UNIT_WORDS, key=len, reverse=True)) + ")"
# The weekdays of the same languages, said with their next or last: "nächsten Freitag", "el viernes pasado", "el
# próximo lunes", "vendredi prochain", "na próxima sexta", "venerdì scorso", "в следующую пятницу", "geçen cuma".
# A weekday said alone ("am Freitag", "el viernes", "vendredi") is the last or the coming one by the tense of its
# clause (_BARE_WD_PHRASES, :func:`_other_bare_weekday`).
OTHER_WEEKDAYS: dict[str, int] = {w: k for k, words in enumerate((
    "montag maandag lunes segunda segunda-feira lundi lunedì lunedi понедельник pazartesi",
    "dienstag dinsdag martes terça terca terça-feira terca-feira mardi martedì martedi вторник salı sali",
    "mittwoch woensdag miércoles miercoles quarta quarta-feira mercredi mercoledì mercoledi среду среда çarşamba "
    "carsamba",
    "donnerstag donderdag jueves quinta quinta-feira jeudi giovedì giovedi четверг perşembe persembe",
    "freitag vrijdag viernes sexta sexta-feira vendredi venerdì venerdi пятницу пятница cuma",
    "samstag sonnabend zaterdag sábado sabado samedi sabato субботу суббота cumartesi",
    "sonntag zondag domingo dimanche domenica воскресенье pazar")) for w in words.split()}
_OTHER_WD = "(" + "|".join(sorted(OTHER_WEEKDAYS, key=len, reverse=True)) + ")"
_OTHER_WD_PHRASES: tuple[tuple[int, str], ...] = (
    (1, r"(?:n(?:ä|ae)chste[nr]?|kommende[nr]?|volgende|komende|aanstaande)\s+{WD}"),
    (-1, r"(?:letzte[nr]?|vorige[nr]?|vergangene[nr]?|afgelopen|vorige)\s+{WD}"),
    (1, r"(?:(?:el|la|il|na|no)\s+)?pr[óo]xim[oa]\s+{WD}"), (1, r"(?:(?:el|il)\s+)?prossim[oa]\s+{WD}"),
    (1, r"(?:(?:el|na|no)\s+)?{WD}\s+(?:que\s+viene|que\s+vem|pr[óo]ximo|prochain|prossim[oa])"),
    (-1, r"(?:(?:el|na|no)\s+)?{WD}\s+(?:pasado|passad[oa]|dernier|scors[oa])"),
    (1, r"в\s+следующ(?:ий|ую|ее)\s+{WD}"), (-1, r"в\s+прошл(?:ый|ую|ое)\s+{WD}"),
    (1, r"(?:gelecek|önümüzdeki|haftaya)\s+{WD}"), (-1, r"geçen\s+{WD}"),
)
_OTHER_WD_PHRASE = "|".join(rf"(?P<a{k}>" + rx.replace("{WD}", rf"(?P<d{k}>{_OTHER_WD[1:-1]})") + ")"
                            for k, (_, rx) in enumerate(_OTHER_WD_PHRASES))
# A weekday said alone, as each language says one day: Spanish "el viernes" (not "los viernes", a habit), Portuguese
# "na sexta", "no sábado" ("às sextas" is a habit; "na segunda vez", "na quinta série" count), French "vendredi"
# alone ("le vendredi", "chaque vendredi" and "les vendredis" are habits; after "depuis", "jusqu'à", "avant" and
# "après" it is left), Italian "venerdì" alone (not "il venerdì", "la domenica", "di sabato", "ogni venerdì"), German "am Freitag", Dutch "op vrijdag", Russian "в пятницу"
# ("по пятницам" is a habit), Turkish "cuma günü"; and with "this": "este viernes", "nesta sexta", "ce vendredi",
# "questo venerdì", "diesen Freitag", "deze vrijdag", "в эту пятницу", "bu cuma günü". Each is the last such day
# before the day it is said when its clause reports the past (_OTHER_PAST), else the coming one after it: these
# languages say a plan in the present ("El viernes voy al cine", "Am Freitag gehe ich schwimmen").
_BARE_WD_PHRASES: tuple[tuple[str, str], ...] = (
    ("es", r"(?:el|este)\s+(lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo)"),
    ("pt", r"(?:na|nesta|nessa)\s+(?:(segunda|ter[çc]a|quarta|quinta|sexta)-feira|(segunda|ter[çc]a|quarta|quinta|"
           r"sexta)(?!\s+(?:vez|vezes|metade|parte|s[ée]rie|posi[çc][ãa]o|coloca[çc][ãa]o|op[çc][ãa]o|tentativa|fase|"
           r"etapa|temporada|rodada|divis[ãa]o|guerra|p[áa]gina|linha|classe|gera[çc][ãa]o|edi[çc][ãa]o|onda|dose|volta|"
           r"semana|aula|pessoa)\b))|(?:no|neste|nesse)\s+(s[áa]bado|domingo)"),
    ("fr", r"(?<!\ble )(?<!\bchaque )(?<!\bdepuis )(?<!\bjusqu'à )(?<!\bjusqu'a )(?<!\bavant )(?<!\baprès )"
           r"(?<!\bapres )(?:ce\s+)?(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)"),
    ("it", r"(?<!\bil )(?<!\bi )(?<!\bla )(?<!\bdi )(?<!\bogni )(?<!\bda )(?<!\bfino a )(?:questo\s+|questa\s+)?"
           r"(luned[iì]|marted[iì]|mercoled[iì]|gioved[iì]|venerd[iì]|sabato|domenica)"),
    ("de", r"(?:am|diesen)\s+(montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag)"),
    ("nl", r"(?<!\belke )(?<!\biedere )(?<!\balle )(?<!\bvan )(?<!\btot )(?<!\bmet )(?<!\ben )(?<!\bof )"
           r"(?<!\bsinds )(?<!\bvoor )(?<!\bna )(?:(?:op|deze)\s+)?(maandag|dinsdag|woensdag|donderdag|vrijdag|"
           r"zaterdag|zondag)(?:ochtend|morgen|middag|avond|nacht)?(?!\s+(?:tot|t/m|en|of)\b)"),
    ("ru", r"(?:в|во)\s+(?:эту\s+|этот\s+|это\s+)?(понедельник|вторник|среду|четверг|пятницу|субботу|воскресенье)"),
    ("tr", r"(?:bu\s+)?(pazartesi|salı|sali|çarşamba|carsamba|perşembe|persembe|cuma|cumartesi|pazar)\s+g[üu]n[üu]"),
)
# The months of Dutch, said with "in" or "op" or with a day or a year ("in maart", "op 3 mei", "12 januari 2024"),
# in a sentence with a word of Dutch (_NL_SENTENCE: "in april" is English's too) or with its year. With its year it is
# that month or day; without, the last one begun when its sentence reports the past (_OTHER_PAST, _weak_past), the
# coming one when it says a plan (_NL_AHEAD: "In mei gaan we naar Rome"), else the nearest.
NL_MONTHS = {w: i for i, w in enumerate(("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus",
                                         "september", "oktober", "november", "december"), 1)}
_NL_MONTH = "(" + "|".join(NL_MONTHS) + ")"
_NL_AHEAD = re.compile(r"(?<!\w)(?:ga|gaat|gaan|zal|zult|zullen|wil|wilt|willen|plan|plannen|binnenkort|komende|"
                       r"volgende|straks)(?!\w)", re.I)
_NL_SENTENCE = re.compile(r"(?<!\w)(?:ik|het|een|naar|niet|heb|hebben|heeft|ben|bent|mijn|wij|jij|jullie|onze|zijn|"
                          r"gaan|gaat|ga|wordt|werd|ook|nog|maar|dat|wat|hoe|waar|wanneer|hij|zij|deze|dit)(?!\w)",
                          re.I)
# the Dutch weekdays said with their part of the day ("zaterdagavond", "vrijdagmiddag")
_NL_WD_PARTS = frozenset(d + p for d in ("maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag")
                         for p in ("ochtend", "morgen", "middag", "avond", "nacht"))
_BARE_WD_PHRASE = "|".join(rf"(?P<b{k}>{rx})" for k, (_, rx) in enumerate(_BARE_WD_PHRASES))
# a date or a holiday after the weekday: "el viernes 15", "vendredi 15 mars", "Viernes Santo", "vendredi saint",
# "Mardi Gras"
_BARE_WD_NOT_BEFORE = re.compile(r",?\s*\d|\s+(?:sant[oa]|saint|gras)\b", re.I)
# A clause that says a habit: "el viernes siempre juego", "am Freitag gehe ich immer schwimmen"
_OTHER_HABIT = re.compile(r"(?<!\w)(?:siempre|normalmente|cada|todos|todas|sempre|geralmente|toujours|chaque|"
                          r"d'habitude|habituellement|ogni|di\s+solito|immer|jeden|jede|normalerweise|meistens|altijd|"
                          r"elke|meestal|всегда|каждую|каждый|обычно|her|hep|genelde)(?!\w)", re.I)
# The verbs that report the past, by language: the irregular forms and the regular endings of the simple past and
# the imperfect, and the perfect (an auxiliary and a participle). The forms that are other words too are left out
# (Spanish "vino", wine; Portuguese "sou", "vou", "estou" in -ou; Russian "школа", "дела", "зал" in -ла, -ла, -л);
# a perfect with "to be" only of the verbs of going and becoming ("je suis allé", "sono andato", "ich bin gefahren":
# "je suis occupé", "sono impegnato", "ich bin verabredet" say how one is); German and Dutch "ge-" words that are no
# participle ("gegen", "gehen", "gezond") are left out.
_ES_PAST = (r"fui|fue|fuiste|fuimos|fueron|estuve|estuvo|estuvimos|estuvieron|tuve|tuvo|tuvimos|tuvieron|hice|hizo|"
            r"hiciste|hicimos|hicieron|dije|dijo|dijimos|dijeron|vi|vio|vimos|vieron|di|dio|dimos|dieron|pude|pudo|"
            r"quise|quiso|puse|puso|vine|vinimos|vinieron|traje|trajo|supe|era|eras|éramos|eran|estaba|estaban|"
            r"(?<!\bel )(?<!\bun )(?<!\bde )(?<!\bdel )(?<!\bmi )(?<!\bbuen )(?<!\bcon )(?<!\bsu )vino|"
            r"había|habían|"
            r"(?:he|has|ha|hemos|habéis|han)\s+\w+(?:ado|ido|cho|to|so)|"
            r"\w+(?:aste|iste|asteis|isteis|aron|ieron|yeron)|\w{2,}(?:aba|abas|ábamos|abamos|aban)|"
            r"\w{2,}(?<!r)(?:íamos|íais|ían)|"
            r"(?!(?:qué|café|josé|bebé|porqué|olé)(?!\w))\w{2,}(?<![aei]r)é|\w{2,}ó")
_PT_PAST = (r"fui|foi|fomos|foram|estive|esteve|estivemos|estiveram|tive|teve|tivemos|tiveram|fiz|fez|fizemos|"
            r"fizeram|disse|dissemos|disseram|vi|viu|vimos|viram|dei|deu|demos|deram|pude|pôde|quis|pus|pôs|vim|veio|"
            r"viemos|vieram|trouxe|soube|era|eram|estava|estavam|tinha|tinham|"
            r"(?!(?:estou|museu|europeu|judeu|ateu|pneu)(?!\w))\w{2,}(?:ou|eu|iu)|\w{2,}(?<![aei]r)ei|"
            r"\w+(?:aste|iste|aram|eram|iram)|\w{2,}(?:ava|avas|ávamos|avamos|avam)|\w{2,}(?<!r)(?:íamos|iam|íam)")
_FR_PARTICIPLE = (r"\w+(?:é|ée|és|ées|i|ie|ies|u|ue|us|ert|erte)|fait|été|eu|vu|pris|mis|dit|su|pu|lu|bu|écrit|"
                  r"appris|compris|promis")
_FR_GONE = (r"(?:all|arriv|rentr|rest|tomb|mont|retourn|pass|n)é[e]?s?|(?:ven|reven|descend)u[e]?s?|"
            r"(?:parti|sorti)[e]?s?|mort|morte")
_FR_PAST = (r"(?:j'|n')?(?:ai|as|avons|avez|ont)\s+(?:(?:pas|déjà|bien|jamais|encore|enfin|vraiment|beaucoup|trop|"
            r"tout|rien)\s+)?(?:" + _FR_PARTICIPLE + r")|(?:il|elle|on|qui|ça|ca|[A-ZÀ-Ý]\w+)\s+(?:n')?a\s+"
            r"(?:(?:pas|déjà|bien|jamais|encore|enfin|vraiment|beaucoup|trop|tout|rien)\s+)?(?:"
            + _FR_PARTICIPLE + r")|(?:suis|es|est|sommes|êtes|sont)\s+(?:(?:pas|déjà|bien)\s+)?(?:" + _FR_GONE
            + r")|étais|était|étions|étiez|étaient|avais|avait|avions|aviez|avaient|\w{2,}aient|"
            r"(?:je|j'|tu|il|elle|on)\s+(?:ne\s+|n')?(?!(?:re)?connai[st]|(?:dis|ap)?parai[st]|nai[st]|plai[st]|"
            r"complai[st]|tai[st])\w{2,}(?<!r)ai[st]")
_IT_PAST = (r"(?:ho|hai|ha|abbiamo|avete|hanno)\s+(?:(?:già|appena|anche|finalmente|poi|sempre|mai)\s+)?"
            r"(?:\w+(?:ato|uto|ito|ati|uti|iti)|fatto|visto|preso|detto|messo|scritto|letto|chiuso|aperto|perso|"
            r"vinto|speso|rotto|corso|bevuto)|(?:sono|sei|è|siamo|siete)\s+(?:(?:già|appena|anche|finalmente|poi)"
            r"\s+)?(?:andat|venut|arrivat|partit|tornat|uscit|entrat|rimast|stat|nat|mort|cadut|salit|sces|passat|"
            r"success)[oaie]|ero|eri|era|eravamo|eravate|erano|avevo|aveva|avevamo|avevano|c'era|"
            r"\w{2,}(?:avamo|avano|evamo|evano|ivamo|ivano)|"
            # the passato remoto: its regular endings ("andò", "parlarono", "mangiammo", "finirono", "vendettero"; not
            # the future's "-rò", "farò", "andrò", nor "però", "ciò", "può", "così", "lunedì", "grammo"; nor the
            # "-ette" of "vendette", which the plural of "ricette", "polpette" writes too) and its irregular forms
            r"(?!(?:però|perciò|ciò|può|giù|più)(?!\w))\w{2,}(?<![eiadvrt]r)ò|"
            r"(?!grammo(?!\w))\w{2,}(?:arono|erono|irono|ammo|emmo|immo|ettero)|"
            r"(?!(?:così|lì|sì|luned[iì]|marted[iì]|mercoled[iì]|gioved[iì]|venerd[iì])(?!\w))\w{2,}ì|"
            r"fece|fecero|feci|disse|dissero|dissi|vide|videro|vidi|venne|vennero|venni|prese|presero|ebbe|ebbero|"
            r"ebbi|fu|furono|fui|diede|diedero|mise|misero|scrisse|scrissero|lesse|lessero|rimase|rimasero|"
            r"chiese|chiesero|rispose|risposero|vinse|persero|scese|scesero|decise|decisero|conobbe|conobbero|"
            r"seppe|volle|vollero|bevve|cadde|tenne|nacque|piacque")
_DE_PARTICIPLE = (r"(?!(?:gegen|gehen|geben|gelten|gewinnen|genießen|geniessen|gehören|gehoeren|geschehen|gestehen|"
                  r"gebrauchen)(?!\w))(?:ab|an|auf|aus|ein|mit|nach|vor|zu|zurück|weg|los|her|hin|um)?ge\w{2,}(?:t|en)|"
                  r"(?:be|ver|er|ent|emp|zer)\w{2,}(?:t|en)|\w{3,}iert")
_DE_GONE = (r"(?:ab|an|auf|aus|ein|mit|nach|weg|los|zurück|hin|her|um)?ge(?:gangen|fahren|flogen|kommen|laufen|"
            r"blieben|wesen|worden|reist|storben|boren|rannt|schwommen|wandert|zogen|standen)|passiert")
_DE_PAST = (r"war|warst|waren|wart|hatte|hattest|hatten|hattet|ging|gingen|kam|kamen|sah|sahen|fuhr|fuhren|flog|"
            r"flogen|traf|trafen|aß|aßen|blieb|blieben|gab|gaben|wurde|wurden|fand|fanden|rief|lag|saß|stand|lief|"
            r"liefen|sagte|sagten|machte|machten|spielte|spielten|kaufte|kauften|trank|tranken|schrieb|schrieben|"
            r"nahm|nahmen|las|lasen|sprach|sprachen|half|halfen|schlief|schliefen|zog|zogen|stieg|stiegen|sang|sangen|"
            r"schwamm|schwammen|gewann|gewannen|verlor|verloren|vergaß|vergaßen|begann|begannen|bekam|bekamen|trug|"
            r"trugen|fiel|fielen|hielt|hielten|schloss|schlossen|starb|brachte|brachten|dachte|dachten|kannte|"
            r"kannten|wusste|wussten|"
            r"(?:habe|hab|hast|hat|haben|habt)\s+(?:\S+\s+){0,8}?(?:" + _DE_PARTICIPLE + r")|"
            r"(?:bin|bist|ist|sind|seid)\s+(?:\S+\s+){0,8}?(?:" + _DE_GONE + r")")
_NL_PAST = (r"was|waren|had|hadden|ging|gingen|kwam|kwamen|zag|zagen|werd|werden|at|aten|dronk|dronken|"
            r"reed|reden|vloog|vlogen|liep|liepen|zat|zaten|stond|stonden|las|lazen|schreef|schreven|nam|namen|"
            r"gaf|gaven|vond|vonden|bleef|bleven|kocht|kochten|bracht|brachten|dacht|dachten|zocht|zochten|"
            r"(?:heb|hebt|heeft|hebben)\s+(?:\S+\s+){0,8}?(?!(?:gezond|geven|genieten|gebruiken|geloven|gebeuren)"
            r"(?!\w))ge\w{2,}(?:d|t|en)|"
            r"(?:heb|hebt|heeft|hebben)\s+(?:\S+\s+){0,8}?(?:laten|moeten|willen|kunnen)\s+\w+en|"
            r"(?:ben|bent|is|zijn)\s+(?:\S+\s+){0,8}?(?:ge(?:gaan|weest|komen|bleven|"
            r"reden|vlogen|lopen|reisd|storven|boren|worden|vallen|beurd|stopt|vlucht|rend|fietst|wandeld|zwommen)|"
            r"(?:aan|terug|thuis|mee|binnen|langs|op|weg|over)ge(?:komen|gaan|lopen|reden|vlogen|staan)|verhuisd|"
            r"vertrokken|begonnen|overleden|verdwenen|ontsnapt|verloren|vergeten)")
_RU_PAST = (r"(?!(?:дело|дела|село|села|тело|мало|зал|вокзал|канал|финал|журнал|сериал|материал|идеал|или|если|школа|"
            r"сила|стола|футбола|земли|пчела|кола|пила|мыла|вилла|начало|михаил|павел|даниил|гавриил)(?!\w))"
            r"\w{1,}(?:[аеиоуыяё]л|[аеиоуыяё]ла|[аеиоуыяё]ло|[аеиоуыяё]ли|шёл|шел|шла|шли)(?:сь|ся)?")
# ... and Turkish, whose verb ends its clause: its last word in the past ("gittik", "yaptın", "gelmişti"; not "şimdi",
# now, "kendi", self, "kedi", a cat, "yedi", seven, "artık", "kadın", "kutu", "batı", "dostum")
_TR_PAST = re.compile(r"(?<!\w)(?!(?:şimdi|simdi|kendi|kedi|yedi|hindi|haydi|artık|artik|kadın|kadin|kutu|batı|bati|"
                      r"dostum|dostun|dostu)(?!\w))\w{2,}(?:[dt][ıiuü](?:m|n|k|nız|niz|nuz|nüz|lar|ler)?|"
                      r"m[ıiuü]ş\w*)\W*$", re.I)
_OTHER_PAST = {lang: re.compile(r"(?<!\w)(?:" + rx + r")(?!\w)", re.I if lang != "fr" else 0)
               for lang, rx in (("es", _ES_PAST), ("pt", _PT_PAST), ("fr", _FR_PAST), ("it", _IT_PAST),
                                ("de", _DE_PAST), ("nl", _NL_PAST), ("ru", _RU_PAST))}
# Spanish and Portuguese write the "we" of a regular verb alike in the present and the simple past: "salimos",
# "viajamos" (Portuguese "comemos" too) is "we go out" and "we went out". A clause whose only verb is such a word and
# that nothing else puts in the past or in the present ("El sábado salimos con Marta") says neither the last nor the
# coming weekday, and is left undated. A verb of the present or the future only ("vamos", "estamos", "tenemos",
# "saldremos", a gerund) places it, and so do the forms that are no such verb: the present's of the verbs whose past
# changes ("vamos", "fuimos"; "decimos", "dijimos"), nouns and adjectives ("primos", "gramos"; the accented "últimos",
# "próximos" are none).
_OTHER_WE = {
    "es": re.compile(r"(?<!\w)(?!(?:vamos|estamos|damos|decimos|venimos|primos|mimos|racimos|ramos|tramos|gramos|"
                     r"kilogramos|amos)(?!\w))[a-zñ]{2,}(?:amos|imos)(?!\w)", re.I),
    "pt": re.compile(r"(?<!\w)(?!(?:vamos|estamos|temos|podemos|fazemos|queremos|sabemos|dizemos|trazemos|vemos|"
                     r"vimos|primos|ramos|gramos|quilogramos|amos|somos|éramos|fomos)(?!\w))[a-zç]{2,}"
                     r"(?:amos|emos|imos)(?!\w)", re.I),
}
_OTHER_NOW = {
    "es": re.compile(r"(?<!\w)(?:voy|vas|va|vamos|vais|van|estoy|estás|está|estamos|están|tengo|tienes|tiene|"
                     r"tenemos|tienen|hay|\w{2,}emos|\w{2,}(?:ré|rás|rá|remos|réis|rán)|\w{2,}(?:ando|iendo))(?!\w)",
                     re.I),
    "pt": re.compile(r"(?<!\w)(?:vou|vais|vai|vamos|vão|estou|está|estamos|estão|tenho|tem|temos|têm|há|podemos|"
                     r"fazemos|queremos|\w{2,}(?:rei|rá|remos|rão)|\w{2,}(?:ando|endo|indo))(?!\w)", re.I),
}
# German and Dutch say a weak verb's past with -te, -ten (Dutch -de, -den too) on its stem ("Am Freitag kochten wir
# Gulasch", "Op zaterdag werkten we in de tuin"), endings adjectives, ordinals and the present of a verb whose stem
# ends in "t" or "d" write too ("die alten Freunde", "vierte"; "wir warten", "we vinden"). The finite verb is the
# clause's second part (V2): the word right after a weekday that opens the clause, else the second or third word of
# the clause, in lower case; it reports the past when it ends so, after a consonant that is not the ending's own
# ("arbeiten", "praten", "zetten" are the present's), and is none of _WEAK_PAST_NOT.
# A Dutch stem in "t" or "d" keeps it before the ending: "praatte", "wachtte", "antwoordde"; in the singular that is
# the past's only ("zetten", "zitten", "redden" are also the present's plural), and in the plural after a long vowel
# the present writes once ("praten", "praatten").
_WEAK_PAST = {"de": re.compile(r"[a-zäöüß]{2,}[^\Waeiouäöüyt](?:te|ten|test|tet)|[a-zäöüß]{2,}[td]ete(?:n|st|t)?"),
              "nl": re.compile(r"[a-z]{2,}[^\Waeiouyjtd](?:te|ten|de|den)|[a-z]{2,}(?:tte|dde)|[a-z]*(?:aa|ee|oo|uu)"
                               r"(?:tten|dden)")}
_WEAK_PAST_NOT = {
    "de": re.compile(r"(?:\w*(?:ste|sten)|(?:be|er|ent|ver|ab|an|auf|aus|ein|zu|um)?(?:wart|halt|acht|richt|start|gelt|"
                     r"antwort|schalt|falt|spalt|wert|fürcht|dicht|beobacht|betracht|übernacht|haft|heft|stift)"
                     r"(?:e|en|est|et)|möchte|möchten|möchtest|hätte|hätten|hättest|könnte|könnten|könntest|sollte|"
                     r"sollten|solltest|müsste|müssten|dürfte|dürften|alte|alten|kalte|kalten|harte|harten|echte|"
                     r"echten|rechte|rechten|schlechte|schlechten|leichte|leichten|bunte|bunten|gesamte|gesamten|"
                     r"vierte|vierten|siebte|siebten|neunte|neunten|zehnte|zehnten|elfte|elften|zwölfte|zwölften|"
                     r"fünfte|fünften|sanfte|sanften)"),
    "nl": re.compile(r"(?:\w*ste|(?:be|ver|ont|op|af|aan|uit|in)?(?:kost|rust|haast|feest|lust|wacht|richt|vecht|zucht|"
                     r"licht|dicht|vind|word|land|brand|meld|zend|wend|antwoord|eind|red)(?:en|e)|hitte|"
                     r"vierde|vijfde|zesde|"
                     r"zevende|tiende|elfde|twaalfde|derde|harde|zachte|lichte|echte|slechte|rechte|wilde|wilden)"),
}
_V2_WORD = re.compile(r"[\w'’]+")


def _weak_past(clause: str, wd_end: int, lang: str) -> bool:
    """Whether the finite verb of the German or Dutch ``clause`` (its weekday ending at ``wd_end``, -1 when the
    weekday does not open it) is a weak verb's past (see :data:`_WEAK_PAST`)."""
    if wd_end >= 0:
        nxt = _V2_WORD.search(clause, wd_end)
        said = [nxt.group(0)] if nxt is not None else []
    else:
        said = _V2_WORD.findall(clause)[1:3]
    return any(w.islower() and _WEAK_PAST[lang].fullmatch(w) is not None
               and _WEAK_PAST_NOT[lang].fullmatch(w) is None for w in said)


# the clause of a weekday said alone: its sentence, up to a comma that does not follow the weekday at the sentence's
# start ("El viernes, fuimos al cine"; "Ayer fui al cine, el viernes voy a la playa"), and from the conjunction that
# opens a clause of what is said or thought ("Le dije que el viernes no puedo": the past is the telling's) up to the
# next one ("El lunes me dijo que estaba cansada"; one right after the weekday describes it, "el viernes que fuimos
# al cine")
_OTHER_SENTENCE_END = re.compile(r"[.!?;\n¿¡]")
_OTHER_THAT = re.compile(r"(?<!\w)(?:que|dass|daß|che|что|dat)(?!\w)|(?<!\w)qu'", re.I)


def _other_sentence(text: str, a: int, b: int) -> tuple[int, int]:
    """(start, end) of the sentence of another language that holds ``text[a:b]``: from the last sentence end before
    it to the first after it, each looked for within 300 characters."""
    start = max((e.end() for e in _OTHER_SENTENCE_END.finditer(text, max(0, a - 300), a)), default=max(0, a - 300))
    end = _OTHER_SENTENCE_END.search(text, b)
    return start, end.start() if end is not None else min(len(text), b + 300)


# the words before the count that say back (-1) or ahead (1), and those after it; German "in" only before its
# plural units of the dative ("in drei Wochen"): English "in 3 weeks" is the English pattern's. Spanish "en",
# Portuguese "em" and Turkish "sonra" are left: "en tres meses aprendí inglés" is how long it took, "iki gün sonra"
# as often two days after another day. A unit without its count is one only in Russian ("неделю назад").
# Dutch counts its units back with "geleden" after them ("twee dagen geleden", "een week geleden", "3 jaar geleden") and
# ahead with "over" before them ("over twee weken", "over een maand"); English "over 2 weeks" (more than) is read
# only with Dutch's words: its plural units ("dagen", "weken"; "jaar" is Dutch's after a count) or its "een".
_NL_NUMBERS = {"een": 1, "één": 1, "twee": 2, "drie": 3, "vier": 4, "vijf": 5, "zes": 6, "zeven": 7, "acht": 8,
               "negen": 9, "tien": 10, "elf": 11, "twaalf": 12, "een paar": 3}
_NL_UNITS = {"dag": "day", "dagen": "day", "week": "week", "weken": "week", "maand": "month", "maanden": "month",
             "jaar": "year", "jaren": "year"}
_NL_NUM = r"(\d{1,3}|een\s+paar|" + "|".join(sorted(_NL_NUMBERS, key=len, reverse=True)) + ")"
_NL_COUNT = (r"|(over)\s+(?:(een|één)\s+(dag|week|maand|jaar)|" + _NL_NUM + r"\s+(dagen|weken|maanden|jaar|jaren))"
             r"|" + _NL_NUM + r"\s+(dag|dagen|week|weken|maand|maanden|jaar|jaren)\s+(geleden)")
_OTHER_BEFORE = {"hace": -1, "há": -1, "il y a": -1, "vor": -1, "dentro de": 1, "daqui a": 1, "dans": 1, "tra": 1,
                 "fra": 1, "через": 1}
_OTHER_AFTER = {"atrás": -1, "atras": -1, "fa": -1, "назад": -1, "önce": -1}

# the words between the first and the last day of a range ("3-5", "3 to 5", "3 through 5", "3 and 5" after
# "between")
_DAYS_TO = r"(?:\s*[-\u2013]\s*|\s+(?:to|through|thru|till|until|and)\s+)"
_DAYS_TO_WORD = re.compile(r"\s+(?:to|through|thru|till|until|and)\s+", re.I)
_BETWEEN = re.compile(r"\bbetween\s+$", re.I)
# a date changed for another: "rescheduled from April 4 to April 6", "the launch was moved from November 15 to
# November 22" (two days, not the days between)
_CHANGED = re.compile(r"\b(?:reschedul\w*|mov(?:e|ed|es|ing)|postpon\w*|push\w*|delay\w*|bump\w*|shift\w*|"
                      r"chang\w*|switch\w*|swap\w*|brought\s+forward|pull\w*|push\w*)\b", re.I)

# A quarter, a half or a fiscal year. A quarter is the calendar's (January-March, April-June, July-September,
# October-December), a half January-June or July-December, and a fiscal year ("FY24", "FY2024", "fiscal 2024") the
# calendar year of its number, unless the text gives its fiscal year another start ("our fiscal year starts in
# July": :data:`_FISCAL_START`), when none of them is read. "Q3" and "H1" are read with their year ("Q3 2024", "Q3 of
# last year", "Q3'24", "Q3 FY24"), and "Q3" also after a word that places it ("in Q3", "for Q3"), since "Q3" is as
# often a question's number and "H1" a heading; "the third quarter" is read with its year, or after a word that
# places it in a sentence that says nothing of a game ("we scored in the third quarter"); "last quarter", "this
# quarter" and "next quarter" are the calendar's quarters next to the one the day is in ("the last quarter", "its
# last quarter" are as often a game's or the moon's; "the next quarter", as "the next week", after another time).
_QUARTER_YEAR = (r"(?:,?\s+(?:of\s+)?(?:(?-i:FY)\s?|fiscal\s+(?:year\s+)?)?(?P<y4>(?:19|20)\d{2})\b"
                 r"(?!\s*[-\u2013/]\s*\d)|"
                 r"\s*(?:'|\s+(?-i:FY)\s?'?)(?P<y2>\d{2})\b(?![-\u2013/]\d)|"
                 r"\s+of\s+(?P<rel>last|this|next|the)\s+(?:fiscal\s+)?year\b(?!'))?")
_QUARTER_RX = (r"(?:\b(?-i:Q)(?P<q>[1-4])\b(?:\s*(?:-|\u2013|to|through|thru|until|till)\s*(?-i:Q)"
               r"(?P<q2>[1-4])\b)?|\b(?-i:H)(?P<h>[12])\b|\bthe\s+(?P<nth>first|1st|second|2nd|third|3rd|"
               r"fourth|4th|last|final)\s+quarter\b)" + _QUARTER_YEAR + r"(?!['\u2019-])|"
               r"(?<!\bthe\s)(?<!\bits\s)(?<!\ba\s)\b(?P<near>last|this|next)\s+quarter\b(?!['\u2019-]|\s+of\b)|"
               r"\b(?:the|this)\s+(?P<past>past)\s+quarter\b(?!['\u2019-]|\s+of\b)|"
               r"\b(?:(?-i:FY)\s?'?(?P<fy2>\d{2})|(?:(?-i:FY)\s?|fiscal\s+(?:year\s+)?)(?P<fy4>(?:19|20)\d{2}))\b"
               r"(?![-\u2013/]\d)|\b(?P<fynear>last|this|next)\s+fiscal\s+year\b")
# a fiscal year's own start or end: "our fiscal year starts in July", "FY runs April to March", "the fiscal year
# ending June 30" (a start in January or an end in December is the calendar's)
_FISCAL_START = re.compile(r"\b(?:fiscal|(?-i:FY))(?:\s+year)?\b[^.!?\n]{0,40}?\b(start|begin|run|end)\w*\b"
                           r"[^.!?\n]{0,25}?\b" + _MONTH + r"\b|\b(?:fiscal|(?-i:FY))(?:\s+year)?\s*\(?\s*()" + _MONTH
                           + r"\s*(?:-|\u2013|to|through)\s*" + _MONTH + r"\b", re.I)
# a count after a month and a number, which are then a name and a count: "I saw June 3 times", "In March 2 of us got
# sick"
_COUNTED = re.compile(r"\s+(?:times|x|people|persons|of\s+(?:us|them|you|my|our|his|her|their))\b", re.I)
# a name after a month ("June's story", "June Smith"), and the verbs whose "by" names who did it ("inspired by April")
_A_NAME_AFTER = re.compile(r"['\u2019]s\b|\s+(?-i:[A-Z][a-z])")
_BY_A_PERSON = re.compile(r"\b(?:inspired|painted|directed|sung|performed|taught|raised|introduced|invited|helped|"
                          r"supported|hosted|loved|liked|followed|photographed|drawn|recommended|told|shown|cooked|"
                          r"baked|visited|called|texted|emailed|hugged|kissed|adopted|mentored|coached|joined|"
                          r"accompanied|greeted|surprised|touched|moved)\s+$", re.I)
# the words that place a quarter said without its year ("in Q3", "for Q3")
_QUARTER_LEAD = re.compile(r"\b(in|during|for|by|until|till|since|through|throughout|from|over|to|of|at)\s+$", re.I)
# a word in lowercase after a quarter that it describes ("in Q3 budget"), or the quarter that ends its range ("from Q1
# to Q3 2024": the year said is the range's)
_QUARTER_DESCRIBES = re.compile(r"\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z])|\s*(?:-|\u2013|to|through|thru)\s*"
                                r"(?-i:Q)[1-4]\b", re.I)
# a question's or an exercise's number: "For Q1, I got 8/10 on the quiz", "did you get to Q4 in the homework?"
_EXERCISE = re.compile(r"\b(?:quiz\w*|questions?|exams?|tests?|homework|problems?|assignments?|worksheets?|answer\w*|"
                       r"exercises?|surveys?|questionnaires?|slides?|sections?|interview\w*)\b", re.I)
# a game's quarters: "we were down 10 in the third quarter"
_GAME = re.compile(r"\b(?:(?:down|up|behind)\s+(?:by\s+)?\d+\b(?!\s*(?:%|percent))|game|match|quarterback|"
                   r"touchdowns?|points?|scor\w*|lead|led|halftime|half-time|overtime|"
                   r"buzzer|baskets?|goals?|nba|nfl|teams?|won|win|lost|loss|play\w*|comeback|rally|defen[cs]e|"
                   r"offen[cs]e|innings?|periods?|referee|coach|fans?|stadium)\b", re.I)

# A decade said with "the": written in full ("the 1990s", "the 1990's"; "the 2000s" is the decade, "the 1800s" and
# "the 1900s" are as often the centuries and are not read), with its two digits after an apostrophe ("the '90s", "the
# '00s"; "the '20s" is as often the 1920s as the 2020s and is not read), or without one or spelled out ("the 90s",
# "the nineties", 1930 to 1999) in a sentence that says nothing of what such a number is also said of ("temperatures
# in the 90s", "a score in the nineties"). "Early", "mid" and "late" are its first four years, the three after and
# its last three ("the early 2000s" is 2000-2003).
_DECADE_WORDS = {"thirties": 1930, "forties": 1940, "fifties": 1950, "sixties": 1960, "seventies": 1970,
                 "eighties": 1980, "nineties": 1990, "noughties": 2000, "aughts": 2000}
_DECADE_RX = (r"\bthe\s+(?:(early|mid|late)[\s-]+)?(?:((?:1[5-9]|20)[1-9]0|2000)'?s|'(\d0)s|([3-9]0)'?s|("
              + "|".join(_DECADE_WORDS) + r"))\b(?!['\u2019-])")
# what a number in the 30s to the 90s also counts: degrees, scores, speeds, a body's measures, percentages
_NOT_DECADE = re.compile(r"\b(?:degrees?|temperatures?|temps?|hot|heat\w*|weather|humid\w*|fahrenheit|celsius|"
                         r"forecast|highs?|lows?|scores?|scored|scoring|grades?|marks?|percent\w*|mph|km|speeds?|"
                         r"bpm|heart\s+rate|pulse|pressure|sugar|glucose|weigh\w*|lbs?|pounds|kgs?|iq|rank\w*|"
                         r"aged?|years?\s+old)\b|[°%]", re.I)

# the words before "for the weekend" that make it the coming one: "any plans for the weekend?", "I've budgeted $50 for
# the weekend" (a present perfect readies what is to come; "I went to my parents' for the weekend" reports the last)
# ("a couple discussing plans for the weekend" is any couple's)
_PLANS_FOR = re.compile(r"\b(?:any|my|our|your|his|her|their|some|no|have|has|had|got|make|making|made)\s+"
                        r"(?:[a-z]+\s+)?plans\s+$", re.I)
_PERFECT = re.compile(r"(?:\b(?:have|has)|'ve)\s+(?:(?:just|already|also)\s+)?\w+ed\b", re.I)

# Order matters: the first pattern that matches at a position wins (longest, most specific first).
_PATTERNS: list[tuple[str, re.Pattern]] = [(name, re.compile(rx, re.I)) for name, rx in [
    ("iso", r"\b(\d{4})-(\d{2})-(\d{2})\b"),
    # Chinese, Japanese and Korean: "2024年3月5日", "2024年3月5号", "令和6年3月5日", "2024년 3월 5일"; "2024年3月" a month
    ("cjk", r"(?<!\d)(?:(\d{4})|(令和|平成|昭和)\s*(\d{1,2}|元))\s*[年년]\s*(\d{1,2})\s*[月월]"
            r"(?:\s*(\d{1,2})\s*[日号號일]|(?!\s*\d))"),
    # a year: "2024年に結婚した", "2019년에", "令和元年"; not a count of years ("1000年の歴史", "3年前") nor a fiscal year
    # ("2024年度")
    ("cjk_year", r"(?<!\d)(?:((?:19|20)\d{2})|(令和|平成|昭和)\s*(\d{1,2}|元))\s*[年년](?!\s*\d|度)"),
    ("thai", r"(?<!\d)(\d{1,2})\s*" + _THAI_MONTH + r"\s*(พ\.\s?ศ\.|ค\.\s?ศ\.)?\s*(\d{4})(?!\d)"),
    ("arabic", r"(?<!\d)(\d{1,2})\s+(?:من\s+)?" + _ARABIC_MONTH + r"\s*(?:،\s*)?(?:(?:سنة|عام|سال)\s+)?(\d{4})(?!\d)"),
    ("persian", r"(?<!\d)(\d{1,2})\s+" + _PERSIAN_MONTH + r"\s+(?:(?:ماه|سال)\s+)?(\d{4})(?!\d)"),
    # a month or a day of a month said in a Dutch sentence: "in maart", "op 3 mei", "12 januari 2024" (_nl_month)
    ("lang_month", r"(?<!\w)(?:(in|op)\s+)?(?:(\d{1,2})\s+)?" + _NL_MONTH + r"(?:\s+((?:19|20)\d{2}))?(?!\w)"),
    # a range of months, days of a month or years: "between March and May", "from January to February 2022", "from
    # the 3rd to the 5th", "between 2019 and 2021" (not "from the 3rd to the 5th floor", "from 2010 to 2020 words")
    ("range", r"\b(?:between|from)\s+(?:" + _MONTH + r"\s+(?:and|to|through|thru|till|until|-|\u2013)\s+" + _MONTH
              + r"\b(?:,?\s+((?:19|20)\d{2})\b)?(?!\.?\s*\d)|the\s+(\d{1,2})(?:st|nd|rd|th)\s+(?:and|to|through|"
              r"thru|till|until)\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b(?:\s+of\s+(this|next|last)\s+month\b|"
              r"(?:\s+of)?\s+" + _MONTH + r"\b(?:,?\s+((?:19|20)\d{2})\b)?)?"
              r"(?!\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z])|\s+of\s+(?:each|every)\b)|((?:19|20)\d{2})\s+(?:and|to|"
              r"through|thru|till|until|-|\u2013)\s+((?:19|20)\d{2})\b(?!\s*[-\u2013]|\s+(?!" + _GOES_ON
              + r"\b)(?-i:[a-z]))|(christmas|xmas)(?:\s+day)?\s+(?:and|to|till|until|through)\s+(?:the\s+)?new\s+"
              r"year(?:'?s)?(?:\s+day)?\b)"),
    # a range of days written with a dash or said: "March 3-5", "3-5 March", "May 3-4, 2024", "March 31 - April 2",
    # "March 23 - March 30, 2024", "from March 3 to 5", "March 3 through March 5", "between 3 and 5 March" (not "March
    # 3-5pm", "March 3 - 5:30", "in March 2-3 times a week", "in March 3 to 5 people came", nor "March 5-3", whose days
    # do not go forward)
    ("day_range", rf"\b{_MONTH}\.? (\d{{1,2}})(?:st|nd|rd|th)?{_DAYS_TO}(?:{_MONTH}\.? )?(\d{{1,2}})"
                  r"(?:st|nd|rd|th)?\b(?!\s*(?:[-\u2013/:.]\d|%|[ap]\.?m\b|hours?\b|hrs?\b|mins?\b|minutes?\b|"
                  r"times\b|x\b))"
                  r"(?:,?\s+((?:19|20)\d{2})\b)?|(?<![\d/.:\u2013-])\b(\d{1,2})(?:st|nd|rd|th)?" + _DAYS_TO
                  + r"(\d{1,2})"
                  rf"(?:st|nd|rd|th)? (?:of )?{_MONTH}\b(?:\.?,?\s+((?:19|20)\d{{2}})\b)?"),
    ("mdy", rf"\b{_MONTH}\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b"),
    ("dmy", rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH}\.?,? (\d{{4}})\b"),
    # a day written as an ordinal, spelled out or after "the": "the first of May", "March the 3rd", "May twenty-first",
    # "on the third of June, 2022"
    ("dm_word", rf"\b(?:on )?the {_ORDINAL} of {_MONTH}\b(?:,?\s+((?:19|20)\d{{2}})\b)?"),
    ("md_word", rf"\b(?:on )?{_MONTH}\.? (?:the )?(?:{_ORDINAL}|(?<=the )(\d{{1,2}})(?:st|nd|rd|th))\b"
                r"(?!\s+(?!" + _GOES_ON + r"\b)[a-z])(?:,?\s+((?:19|20)\d{2})\b)?"),
    # a week of a month: "the first week of November" (days 1-7), "the second week in May 2023" (8-14), "the last week
    # of next month" (its last seven days); "the first week of each month" is a rate, no date
    # a weekday of a month: "the first Monday of April" (3 April 2023), "the last Friday of May 2022", "the second
    # Tuesday of next month"; "the first Saturday of every month" is a rate, no date (and its weekday no day)
    ("wd_of_month", r"\b(first|1st|second|2nd|third|3rd|fourth|4th|last|final)\s+" + _WEEKDAY + r"\s+(?:of|in)\s+"
                    r"(?:(each|every|the)\s+month\b|(next|last|this)\s+month\b|" + _MONTH
                    + r"\b(?:,?\s+((?:19|20)\d{2})\b)?(?!\.?\s*\d))"),
    ("week_of_month", r"\b(first|1st|second|2nd|third|3rd|fourth|4th|last|final)\s+week\s+(?:of|in)\s+(?:(next|last|this)\s+"
                      r"month\b|" + _MONTH + r"\b(?:,?\s+((?:19|20)\d{2})\b)?(?!\.?\s*\d))"),
    # a third of a month: "mid-March", "early May 2023", "the end of next month" ("by the end of the month" is as
    # often a goal of any month in advice as a date)
    ("part_month", r"\b(early|mid|late|(?:the\s+)?(?:start|beginning|middle|end)\s+of)[\s-]+(?:(next|last|this|the)\s+"
                   r"month|" + _MONTH + r"\b(?:,?\s+((?:19|20)\d{2})\b)?(?!\.?\s*\d))"),
    # a third of a week: "the start of next week" (Monday and Tuesday), "midweek" is not read, "the end of the week"
    # (Friday to Sunday)
    ("part_week", r"\b(early|mid|late|(?:the\s+)?(?:start|beginning|middle|end)\s+of)[\s-]+(next|last|this|the)\s+"
                  r"week\b(?!\s+(?:of|before|after)\b)"),
    # a third of a year: "early next year", "mid-2022", "the end of last year" (January to April, May to August,
    # September to December)
    ("part_year", r"\b(early|mid|late|(?:the\s+)?(?:start|beginning|middle|end)\s+of)[\s-]+(?:(next|last|this|the)\s+"
                  r"year\b(?!'|\s+(?:of|before|after)\b)|((?:19|20)\d{2})\b(?!\s*[-\u2013/]\s*\d))"),
    # a half of a year: "the first half of the year", "the second half of 2022", "the back half of next year"
    # (January to June, July to December; "the first half of the year" is placed as "the end of the year" is)
    ("half_year", r"\b(?:the\s+)?(first|1st|second|2nd|latter|back)\s+half\s+of\s+(?:(next|last|this|the)\s+"
                  r"year\b(?!'|\s+(?:of|before|after)\b)|((?:19|20)\d{2})\b(?!\s*[-\u2013/]\s*\d))"),
    # a decade said with "the": "the 1990s", "the '90s", "the nineties", "the early 2000s", "the late 1980s"
    # (:func:`_decade`); not "in my twenties" (an age), nor "the 1900s" (as often the century)
    ("decade", _DECADE_RX),
    # a quarter or a half of a year, or a fiscal year, read as the calendar's (:func:`_quarter`): "in Q3", "Q2 2024",
    # "Q4 of last year", "Q3 FY24", "the third quarter", "last quarter", "H1 2024", "FY2024", "fiscal 2024"
    ("quarter", _QUARTER_RX),
    # the turn of the year: the days around New Year's Day, 25 December to 7 January, the last or the coming one by
    # the clause ("the turn of the century" is no such days)
    ("turn_year", r"\b(?:the\s+)?turn\s+of\s+(?:the\s+)?year\b(?!')"),
    # a season of the northern hemisphere: "last summer", "this winter", "the summer of 2022"
    ("season", r"(?<!\bmy\s)(?<!\bthe\s)(?<!\bhis\s)(?<!\bher\s)(?<!\bour\s)(?<!\byour\s)(?<!\btheir\s)"
               r"\b(last|this past|past|this coming|this|next)\s+" + _SEASON + r"\b(?!\s+(?:of|before|after)\b)|"
               r"\b" + _SEASON + r"\s+(?:of\s+)?((?:19|20)\d{2})\b"),
    # a season said with "the" ("in the summer", "over the winter"): placed by the tense of the clause alone
    # ("we spent the summer in Italy"), and one that opens a sentence before its verb ("The winter was harsh"; not "the
    # fall", as often the one that hurt, nor "The summer house is ours")
    ("the_season", _THE_SEASON_RX.format(lead="")),
    # a holiday whose day no country changes: "at Christmas", "on New Year's Eve", "over Easter" (computed), "last
    # Halloween", "for Valentine's Day 2022"; said after a word that places it, and not before a noun it describes
    # ("a Christmas tree", "for Christmas dinner", "the meaning of Christmas"), or after a verb of spending or
    # celebrating it ("we spent Christmas in Oslo"), or opening a sentence ("Christmas was lovely", "Easter we spent at
    # home": placed by the clause)
    ("holiday", _HOLIDAY_RX.format(lead="")),
    # the Christmas holidays: "over the Christmas break", "during the holiday season", "the Christmas holidays", and
    # "over the holidays" said from November to February (said at another time of the year "the holidays" are as
    # often the summer's or a school's): 24 December to New Year's Day, the last or the coming one by the clause
    ("xmas_break", r"\b(?:the\s+)?(?:christmas|xmas|holiday)\s+(?:break|holidays|vacation|season|period)\b|"
                   r"\b(?:over|during|for|at|since|through|throughout|after)\s+the\s+(holidays)\b(?!['\u2019])"),
    # "the new year": "in the new year" (its first months, January to April, as "early next year"), "since the new
    # year" (from 1 January), "over the new year" (New Year's Eve and Day); not "the new year's resolutions"
    ("new_year", r"\b(in|into|after|since|over|at|for|around|during)\s+the\s+new\s+year\b(?!['\u2019]|\s+(?!"
                 + _GOES_ON + r"\b)(?-i:[a-z]))"),
    ("my", rf"\b(?:in |during |of |since )?{_MONTH},? (\d{{4}})\b"),
    ("md", rf"\b(?:on )?{_MONTH}\.? (\d{{1,2}})(?:st|nd|rd|th)?\b"),
    ("dm", rf"\b(?:on )?(?:the )?(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH}\b"),
    ("daybefore", rf"\bthe (?:day before (?:{_YESTERDAY})|night before last)\b"),
    ("dayafter", rf"\bthe day after (?:{_TOMORROW})\b"),
    # a count of units from a day: "3 days from now", "two weeks from today", "a week from Friday" (always forward:
    # the day they count from is the message's, the next one or a coming weekday); "from now on" and "30 days from
    # today until April 15" are no date
    ("from_day", rf"\b(?<!\bhalf ){_NUM} {_UNIT} from (now|{_TODAY}|{_TOMORROW}|{_WEEKDAY[1:-1]})\b"
                 r"(?!\s+(?:on|until|till|to|through|thru)\b)"),
    # weeks on from a day, as Britain says them: "a week today", "a fortnight tomorrow" (of what is to come: "sober a
    # week today" is today), "two weeks on Friday", "three weeks Friday" (a week after the coming Friday, as "a week on
    # Friday" is)
    # ("40 hours a week Monday to Friday" is a rate and a range of days)
    ("weeks_on", rf"\b(?<!\bhalf )(?<!\bper )(?<!\bhours )(?<!\bhrs )(?<!\btimes )(?<!\bdays )(?<!\bnights )"
                 rf"{_NUM} (week|fortnight)s? (?:(?:on )?({_WEEKDAY[1:-1]})\b(?!\s*(?:-|\u2013|to|through|thru|"
                 rf"until|till|and|or)\b)|({_TODAY}|{_TOMORROW})\b)"),
    # a count back from a day: "a year ago today" (that day a year before), "two weeks ago yesterday"
    ("ago_today", rf"\b(?<!\bhalf ){_NUM} {_UNIT} ago,? ({_TODAY}|{_YESTERDAY}|{_TOMORROW})\b"),
    # the words also as chats type them (hippo.text.shorthand): "yday", "2day", "tonite", "tmrw", "tommorow"
    ("yesterday", r"\b(yesterday|yday|yest|last night)\b"),
    ("today", r"\b(today|2day|tonight|tonite|2nite|this morning|this afternoon|this evening|earlier today)\b"),
    # ("tmr" alone is also a timer in code: read between spaces and before no operator, "see u tmr!")
    ("tomorrow", r"\b(tomorrow|tmrw|tmrrw|2moro|2morrow|tomoz|tomorow|tommorow|tommorrow)\b|"
                 r"(?:^|(?<=\s))(tmr)(?=[!?.,]*(?:\s|$))(?![!?.,]*\s*[-=(\[{;:&|<>+*/%])"),
    # the relative days and the last, this and next weeks, months and years of other languages (OTHER_DAYS,
    # _OTHER_UNITS)
    ("lang_unit", r"(?<!\w)(?:" + _OTHER_UNIT + r")(?!\w)"),
    ("lang_day", r"(?<!\w)" + _OTHER_DAY + r"(?!\w)"),
    # the relative days of Chinese, Japanese and Korean ("昨天", "明日", "어제"); not the names "明日香" and "今日子",
    # nor "后天" as acquired ("后天性", "后天的努力")
    ("cjk_day", r"(一昨日|明後日|昨日|今日|明日|昨天|今天|明天|前天|后天(?![性的])|後天(?![性的]))(?![香子])|"
                r"(?<!\w)(그저께|그제|어제|오늘|내일|모레)"),
    # the relative days of Hindi: "आज" (today), and "कल" and "परसों", which are the day before or after by the tense
    # of their sentence (:func:`_hindi_day`); not "आजकल" (nowadays), "कला" (art): a word is its letters and marks
    ("hi_day", r"(?<![\u0900-\u0963\u0966-\u097f])(आज(?!कल)|कल|परसों|परसो)(?![\u0900-\u0963\u0966-\u097f])"),
    ("lang_wd", r"(?<!\w)(?:" + _OTHER_WD_PHRASE + r")(?!\w)"),
    ("lang_bare_wd", r"(?<!\w)(?:" + _BARE_WD_PHRASE + r")(?!\w|-)"),
    ("lang_count", r"(?<!\w)(?:(" + "|".join(_OTHER_BEFORE) + r")\s+(?:" + _OTHER_NUM + r"\s+|(?<=[а-яё]\s))"
                   + _OTHER_UNIT_WORD + r"|(in)\s+" + _OTHER_NUM + r"\s+(tagen|wochen|monaten|jahren)|"
                   r"(?:" + _OTHER_NUM + r"\s+|(?=[а-яё]))" + _OTHER_UNIT_WORD + r"\s+(" + "|".join(_OTHER_AFTER)
                   + r")" + _NL_COUNT + r")(?!\w)"),
    # a weekday and its day of the month: "on Tuesday, the 7th", "Friday the 13th" (the day of the month that falls
    # on that weekday, placed by the clause; not "Friday the 13th of October", which the day of the month reads)
    ("wd_nth", r"\b(?:(on|by|until|till)\s+)?" + _WEEKDAY + r",?\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b"
               r"(?!\s+(?:of\b|" + _MONTH + r"\b))"),
    ("nth", _NTH_RX.format(lead="")),
    # a weekday of a week some weeks back: "two weeks ago on Monday", "a week ago Tuesday", "on Friday, 3 weeks ago"
    ("ago_wd", rf"\b{_NUM} (week|fortnight)s? ago,? (?:on |last |this )?{_WEEKDAY}\b|"
               rf"\bon {_WEEKDAY},? {_NUM} (week|fortnight)s? ago\b"),
    # "two weekends ago" too, and the units as chats clip them ("2 wks ago", "a yr ago")
    # ... and "back" as chats say "ago" ("a few days back", "two weeks back"; not "my first day back at work", "two days
    # back home", "back-to-back")
    # "half a year ago" is six months back, "half a month ago" two weeks (not "a year ago", "a month ago")
    ("half_ago", r"\bhalf an? (month|year|yr) (?:ago|back)\b"),
    # "a year and a half ago" (18 months back, as "18 months ago" is), "two and a half weeks ago", "a month and a half
    # back"; "a decade ago", "two decades ago" (the year that many tens of years back, as "10 years ago" is)
    ("and_half_ago", rf"\b(?<!\bhalf ){_NUM} (?:(week|wk|month|year|yr)s? and a half|and a half "
                     r"(week|wk|month|year|yr)s) (?:ago|back)\b(?!['\u2019-])"),
    ("decades_ago", rf"\b{_NUM} decades? ago\b"),
    ("ago", rf"\b(?<!\bhalf ){_NUM} (day|weekend|week|wk|fortnight|month|year|yr)s? (?:ago\b|back\b(?!['\u2019-]|"
            r"\s+(?:at|home|in|on|to|into|from|with|and|where|up|then)\b))"),
    # "two Fridays ago": the Friday before the last one
    ("wds_ago", rf"\b{_NUM} {_WEEKDAY}s ago\b"),
    # "in the last week", "over the past few days": the days from that long before the message up to it ("the last
    # week of May", "the last two days of the sprint", "the past week's notes" name no such days)
    ("span_back", rf"\b(?:(?:in|over|during|within|for|throughout) )?the (?:last|past) (?:{_NUM} )?"
                  r"(days?|weeks?|fortnights?|months?|years?)\b(?!'|\s+(?:of|before|after|prior|until|till)\b)"),
    # "in the next few days", "over the next two weeks", "within the coming month": the days from the message's on, when
    # the clause talks about what is to come ("over the next few days I recovered" is after another time); "in the
    # coming days" and "in the days ahead" say no count, and are the next few ("the coming weeks or months" is
    # neither); "in the week ahead" is one
    ("span_ahead", rf"\b(?:in|over|during|within|throughout) the (?:(?:next|coming|upcoming) (?:{_NUM} )?"
                   r"(days?|weeks?|fortnights?|months?|years?)|(days?|weeks?|months?|years?) ahead)\b"
                   r"(?!'|\s+(?:of|before|after|or)\b)"),
    # "this time last year": the week around the same day a year before, not the whole year ("this time next year",
    # "same time next week": a year or a week on)
    ("this_time", r"\b(?:(?:around|about|at|by)\s+)?(?:this|the\s+same|same) time (last|next) (week|month|year)\b"),
    # "Tuesday week", "a week on Tuesday" (said in Britain): a week after the coming Tuesday
    # ("a Monday to Sunday week" is a kind of week)
    ("wd_week", rf"(?:\b(?:on|next|this) |(?<!\bto )(?<!\bthrough )(?<!\bthru )(?<!\buntil )(?<!\bevery )(?<!\beach )"
                rf"(?<!\ba )(?<!\bthe )(?<![-\u2013]))\b{_WEEKDAY} week\b(?!\s*\d)|\ba week on {_WEEKDAY}\b"),
    ("last_unit", r"\b(?:last|(?:this|the) past) (week|weekend|month|year|" + _CLIPPED_UNIT + r")\b(?!\s+of\b)"),
    # "sick since Tuesday": the days from the last Tuesday before the message up to its day
    ("since_wd", rf"\bsince (?:last |this past |past )?{_WEEKDAY_CLIPPED}\b"),
    ("last_wd", _LAST_WD_RX.format(lead="")),
    # a weekday that opens a sentence, before its subject: "Saturday I went to the market", "Sunday we're driving up",
    # "Friday night we went out" (the last or the coming one, by the clause; dated only when the clause says which)
    ("open_wd", r"(?:^|(?<=[.!?\n])|(?<=[.!?]\s))\s*" + _WEEKDAY + r"(?:\s+(?:morning|afternoon|evening|night))?"
                r"(?=,?\s+(?:I|we|he|she|they|(?:my|our)\s+[a-z]+)\b)"),
    # a weekday said alone in a sentence: "see you Friday", "I saw her Tuesday", "the party is Saturday night" (the
    # last or the coming one by the clause, as "on Friday" is; dated only when the clause says which: "Friday works
    # for me" is not). Not after a word that reads it otherwise ("on", "last", "every", "a", "the"), nor in a name
    # ("Black Friday", "Monday Night Football": a capitalised word after it), nor one of a range or a list of days
    # ("Monday to Friday", "Monday-Friday", "Tuesday and Thursday"), nor "Friday's" or "Fridays"
    ("bare_wd", r"(?<![-\u2013/&])(?<![-\u2013/&] )\b" + _WEEKDAY + r"\b(?!['\u2019]|\s*[-\u2013/&]|"
                r"\s+(?:to|through|thru|till|until|vs\.?|versus)\b|(?:,|,?\s+(?:and|or|nor))\s*(?:monday|tuesday|"
                r"wednesday|thursday|friday|saturday|sunday)\b|\s+(?:morning|afternoon|evening|night)s\b|"
                r"\s+(?!(?:Morning|Afternoon|Evening|Night)\b[.!?,;:\n]|\s*$)(?-i:[A-Z][a-z]))"
                r"(?:\s+(?:morning|afternoon|evening|night)\b)?"),
    # "the other day": a few days before the message, within the week before it ("every other day" is a rate)
    # ("the other night", "the other morning" too; not "the other night shift")
    ("other_day", r"\b(?<!every )the other (?:day|(?:night|morning|afternoon|evening)\b(?!\s+(?!" + _GOES_ON
                  + r"\b)(?-i:[a-z])))\b|\b(?<!every )(?<!on )(?<!of )the other (week)\b(?!['\u2019]|\s+(?!" + _GOES_ON
                  + r"\b)(?-i:[a-z]))"),
    # "over the weekend": the last one when the clause reports or says no tense, the coming one when it talks about
    # what is to come ("over the weekend of May 5": the date says which); "during the weekend" is as often any
    # weekend, in advice ("set specific times during the weekend for book discussions")
    # ("on the weekend" and "at the weekend" are as often any weekend, in advice: read only when the clause says its
    # tense, "I went hiking on the weekend", "what are you doing on the weekend?")
    ("over_weekend", r"\b(over|on|at|for) the (?:weekend|wknd|wkend)\b(?!\s+(?:of|before|after)\b)"),
    # "the week after next", "the Friday after next": a week after the next one
    ("after_next", r"\bthe (week|weekend|" + _WEEKDAY[1:-1] + r") after next\b"),
    # "the week before last", "the Friday before last": a week before the last one ("the week before last year's
    # final" is before a year)
    ("before_last", r"\bthe (week|weekend|" + _WEEKDAY[1:-1] + r") before last\b(?!'|\s+(?:night|week|weekend|month|"
                    r"year|time|season|summer|winter|spring|fall|autumn|" + _WEEKDAY[1:-1] + r")\b)"),
    # the days of this week, month or year before or after the day it is said: "earlier this week", "later this month"
    ("earlier_later", r"\b(earlier|later) this (week|month|year)\b"),
    # a deadline or an end: "by Friday", "until Friday" (the coming one unless the clause reports the past)
    ("by_wd", rf"\b(?:by|until|till) {_WEEKDAY_CLIPPED}\b"),
    # "the next week": after something else; "this coming week" and "this coming weekend" are the next ones (said
    # on a Sunday, the week that begins the day after: "coming" is ahead of the day, not the week it ends), and so is
    # "over the coming weekend"
    ("next_unit", r"(?<!the )\b(?:next (week|weekend|month|year|" + _CLIPPED_UNIT + r")|(?:this (?:up)?coming|"
                  r"(?:(?<=\bover )|(?<=\bduring ))the (?:up)?coming(?= weekend)) (week|weekend))\b"),
    ("next_wd", rf"\bnext {_WEEKDAY_CLIPPED}\b"),
    ("this_wd", rf"\bthis (?:coming )?{_WEEKDAY_CLIPPED}\b"),
    ("next_month", rf"\b(?:next|this coming) {_MONTH}\b"),
    ("in_n", rf"\bin {_NUM} (day|week|wk|fortnight|month|year|yr)s?\b"),
    ("this_unit", r"\bthis (week|weekend|month|year|" + _CLIPPED_UNIT + r")\b"),
    # ("by July": a deadline, the coming one unless the clause reports the past; "starting April": a start, the coming
    # one)
    ("in_month", rf"\b(?:in|during|since|this|last|by|starting|beginning) {_MONTH}\b"),
    ("year", r"\b(?:in|since|during|back in) ((?:19|20)\d{2})\b"),
]]


_MONTH_STARTS = tuple(m[:3] for m in _MONTH_NAMES)  # every spelling of a month starts so
_WEEKDAY_STARTS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # every spelling of a weekday starts so
# Per pattern: words one of which every match holds (lowercase). A pattern whose words are all missing from a
# message is not run: Python's regex engine tries each pattern at every position of a long message.
_NEEDS: dict[str, tuple[str, ...]] = {
    "iso": ("-",), "cjk": ("年", "년"), "cjk_year": ("年", "년"), "thai": tuple(THAI_MONTHS), "arabic": tuple(ARABIC_MONTHS),
    "persian": tuple(PERSIAN_MONTHS), "range": ("between ", "from "),
    "week_of_month": ("week of ", "week in "), "wd_of_month": ("day of ", "day in "),
    "part_month": ("early", "mid", "late", "start", "beginning", "end"),
    "part_week": ("early", "mid", "late", "start", "beginning", "end"),
    "part_year": ("early", "mid", "late", "start", "beginning", "end"),
    "half_year": (" half of ",), "turn_year": ("turn of ",),
    "decade": ("0s", "0's", "ties", "aughts"),
    "quarter": ("quarter", "q1", "q2", "q3", "q4", "h1", "h2", "fiscal", "fy'", "fy 1", "fy 2",
                *(f"fy{d}" for d in range(10))),
    "xmas_break": ("holiday", "christmas", "xmas"), "new_year": ("new year",),
    "season": ("spring", "summer", "fall", "autumn", "winter"),
    "holiday": ("christmas", "xmas", "new year", "valentine", "halloween", "easter", "good friday", "thanksgiving",
                "boxing day", "patrick", "black friday", "cyber monday"),
    "the_season": ("the spring", "the summer", "the fall", "the autumn", "the winter"),
    "day_range": _MONTH_STARTS, "mdy": _MONTH_STARTS, "dmy": _MONTH_STARTS, "my": _MONTH_STARTS, "md": _MONTH_STARTS,
    "dm": _MONTH_STARTS,
    "dm_word": _MONTH_STARTS, "md_word": _MONTH_STARTS, "daybefore": ("day before ", "night before last"),
    "dayafter": ("day after ",),
    "from_day": (" from ",),
    "yesterday": ("yesterday", "yday", "yest", "last night"),
    "today": ("today", "2day", "tonight", "tonite", "2nite", "this morning", "this afternoon", "this evening"),
    "tomorrow": ("tomorrow", "tmr", "2mor", "tomoz", "tomor", "tommor"),
    "wd_nth": _WEEKDAY_STARTS,
    "nth": ("on the ", "by the ", "until the ", "till the ", "since the ", "around the ", "before the ",
            "after the ", "prior to the "), "ago_wd": (" ago",), "ago_today": (" ago",),
    "weeks_on": ("week", "fortnight"),
    "ago": (" ago", " back"), "half_ago": ("half a",), "and_half_ago": (" and a half ",), "decades_ago": ("decade",),
    "wds_ago": ("days ago",), "span_back": ("last ", "past "),
    "span_ahead": ("the next ", "the coming ", "the upcoming ", " ahead"),
    "last_unit": ("last ", "past "), "last_wd": _WEEKDAY_STARTS,
    "over_weekend": ("over the weekend", "on the weekend", "at the weekend", "for the weekend", " the wknd",
                     " the wkend"),
    "other_day": ("the other day", "the other night", "the other morning", "the other afternoon",
                  "the other evening", "the other week"), "open_wd": _WEEKDAY_STARTS, "bare_wd": _WEEKDAY_STARTS,
    "since_wd": ("since ",),
    "after_next": (" after next",),
    "before_last": (" before last",), "this_time": ("time last ", "time next "),
    "wd_week": ("day week", "a week on "), "earlier_later": ("earlier this ", "later this "), "by_wd": _WEEKDAY_STARTS,
    "next_unit": ("next ", " coming ", " upcoming "), "next_wd": ("next ",), "this_wd": ("this ",),
    "next_month": ("next ", "this coming "),
    "in_n": ("in ",), "this_unit": ("this ",), "in_month": _MONTH_STARTS, "year": ("in ", "since ", "during "),
}
_NEEDS["cjk_day"] = ("昨", "今", "明", "前天", "后天", "後天", "어제", "오늘", "내일", "모레", "그저께", "그제")
_NEEDS["hi_day"] = ("आज", "कल", "परसों", "परसो")
assert set(_NEEDS) | {"lang_day", "lang_unit", "lang_count", "lang_wd", "lang_bare_wd", "lang_month"} == \
    {name for name, _ in _PATTERNS}
# equal word lists as one object: a message is tested for each list once (:func:`_find`)
_ONE_LIST = {_MONTH_STARTS: _MONTH_STARTS, _WEEKDAY_STARTS: _WEEKDAY_STARTS}
_NEEDS = {name: _ONE_LIST.setdefault(words, words) for name, words in _NEEDS.items()}
# Every pattern naming a month holds the month as a whole word: one search rules them all out together.
_MONTH_WORD = re.compile(rf"\b{_MONTH}\b", re.I)
# and every one naming a weekday the weekday (its clipped forms start words as "month" and "sunny" do), searched in the
# folded text (:func:`_folded`), lowercase, case-sensitively: three times faster, and "sat" finds "Sat" there too
_WEEKDAY_WORD_FOLDED = re.compile(r"\b(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:rs?(?:day)?)?|fri(?:day)?|"
                                  r"sat(?:urday)?|sun(?:day)?)\b")


def _folded(text: str) -> str:
    """``text`` lowercased as the regex engine's case-insensitive matching sees it: it also takes the dotless i
    and the long s for "i" and "s", and the dotted capital I for "i"."""
    return text.replace("\u0130", "i").lower().replace("\u0131", "i").replace("\u017f", "s")


# The words one of which every match of "lang_day" or "lang_unit" holds whole, in the folded text (a Turkish "ı" is an
# "i" there): a pattern looked for by its words as substrings ("ayer" is in "player", "hier" in "hierarchy", "mese"
# in "Vietnamese") ran on English text for nothing.
_LANG_WORDS = frozenset({re.findall(r"\w+", _folded(w))[-1] for w in OTHER_DAYS} | {
    "mañana", "manana", "morgen", "semana", "mes", "mês", "año", "ano", "woche", "monat", "jahr", "semaine", "mois",
    "année", "annee", "dernier", "prochain", "settimana", "mese", "anno", "неделе", "месяце", "году", "hafta",
    "haftaya", "ay", "yil", "sene", "seneye", "اليوم", "واليوم"} | {_folded(w) for w in _OTHER_BEFORE if " " not in w}
    | {_folded(w) for w in _OTHER_AFTER} | {"il", "dentro", "daqui", "tagen", "wochen", "monaten", "jahren"}
    | {_folded(w).split("-")[0] for w in OTHER_WEEKDAYS}
    | {"vorige", "vorig", "volgende", "volgend", "deze", "maand", "jaar", "geleden", "dagen", "weken", "maanden",
       "jaren"} | _NL_WD_PARTS | {m for m in NL_MONTHS if m not in MONTHS}
    | {"ik", "het", "een", "naar", "niet", "heb", "ben", "mijn", "onze", "jullie"})
_WORD = re.compile(r"\w+")


def _has_lang_word(low: str) -> bool:
    """Whether the folded text ``low`` holds a word of :data:`_LANG_WORDS`."""
    return not _LANG_WORDS.isdisjoint(_WORD.findall(low))


# the days' words as the folded text writes them
_DAY_OFFSET = {_folded(w): d for w, d in OTHER_DAYS.items()} | {"اليوم": 0, "واليوم": 0}
_CJK_DAYS = {"一昨日": -2, "昨日": -1, "今日": 0, "明日": 1, "明後日": 2, "前天": -2, "昨天": -1, "今天": 0, "明天": 1,
             "后天": 2, "後天": 2, "그저께": -2, "그제": -2, "어제": -1, "오늘": 0, "내일": 1, "모레": 2}
_OTHER_UNIT_LOWER = {_folded(w): u for w, u in OTHER_UNIT_WORDS.items()}
_OTHER_WD_INDEX = {_folded(w): k for w, k in OTHER_WEEKDAYS.items()}
OTHER_NUMBERS.update({_folded(w): n for w, n in list(OTHER_NUMBERS.items())})
_OTHER_BEFORE.update({_folded(w): n for w, n in list(_OTHER_BEFORE.items())})
_OTHER_AFTER.update({_folded(w): n for w, n in list(_OTHER_AFTER.items())})


@dataclass(frozen=True)
class TimeRef:
    """A resolved time expression: ``[start, end)`` in epoch seconds, its granularity and the matched words."""

    start: float
    end: float
    granularity: str
    phrase: str
    relative: bool
    yearless: bool = False  # a date or month named without its year ("April 6", "in May"): the year was inferred
    # a period said with "since" ("since 2019", "since Tuesday"): the end of the period it began in (2019, that
    # Tuesday), None for every other
    onset_end: float | None = None

    @property
    def mid(self) -> float:
        return (self.start + self.end) / 2.0

    @property
    def at(self) -> float:
        """The instant that dates the event: the middle of the period, or, for a period said with "since", of the
        period it began in ("I've lived here since 2019", said in 2024: the middle of 2019, not of 2019-2024;
        "sick since Tuesday": that Tuesday's noon)."""
        return self.mid if self.onset_end is None else (self.start + self.onset_end) / 2.0

    def label(self) -> str:
        """Human-readable, compact: "7 May 2023", "week of 1 May 2023", "April 2023", "2022"."""
        d = datetime.fromtimestamp(self.start, tz=timezone.utc)
        if self.granularity == "day":
            return f"{d.day} {month_year(d)}"
        if self.granularity == "week":
            return f"week of {d.day} {month_year(d)}"
        if self.granularity == "weekend":
            return f"weekend of {d.day} {month_year(d)}"
        if self.granularity == "month":
            return month_year(d)
        if self.granularity == "days":  # "3-10 May 2023", "26 April-10 May 2023"
            e = datetime.fromtimestamp(self.end - DAY, tz=timezone.utc)
            if d.day == 1 and datetime.fromtimestamp(self.end, tz=timezone.utc).day == 1 and d.month != e.month:
                # whole months (a season, a third of a year): "June-August 2022", "December 2022-February 2023"
                return f"{month_year(d) if d.year != e.year else MONTH_NAMES[d.month - 1]}-{month_year(e)}"
            if d.year != e.year:
                return f"{d.day} {month_year(d)}-{e.day} {month_year(e)}"
            if d.month != e.month:
                return f"{d.day} {MONTH_NAMES[d.month - 1]}-{e.day} {month_year(e)}"
            return f"{d.day}-{e.day} {month_year(e)}"
        return str(d.year)


def _day_start(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


def _ref(start: datetime, granularity: str, phrase: str, relative: bool, yearless: bool = False) -> TimeRef:
    if granularity == "day":
        end = start + timedelta(days=1)
    elif granularity == "week":
        end = start + timedelta(days=7)
    elif granularity == "weekend":
        end = start + timedelta(days=2)
    elif granularity == "month":
        end = _add_months(start, 1)
    else:
        end = start.replace(year=start.year + 1)
    return TimeRef(start.timestamp(), end.timestamp(), granularity, phrase, relative, yearless)


def _add_months(d: datetime, n: int) -> datetime:
    m = d.month - 1 + n
    return d.replace(year=d.year + m // 12, month=m % 12 + 1, day=1)


def _number(word: str) -> int:
    word = word.lower()
    return int(word) if word.isdigit() else NUMBERS.get(word, 1)


def _month_of(word: str) -> int:
    return MONTHS[word.lower().rstrip(".")[:3]]


def _safe_date(y: int, m: int, d: int) -> datetime | None:
    try:
        return datetime(y, m, d, tzinfo=timezone.utc)
    except ValueError:
        return None


# The years a resolved expression may fall in: one year inside datetime's range on each side, so that a period can
# be shifted by a year or extended to its end without leaving it ("valid until 9999-12-31", a sentinel of databases,
# names no time a conversation is about).
_FIRST_YEAR, _LAST_YEAR = 2, 9998


_BEYOND = TimeRef(math.nan, math.nan, "day", "", False)  # a time past the years read: its words name no other
# the instants whose day is read as the day a text is said on: those of the years read (a "yesterday" said on a day
# outside them names none; the day itself may hold no datetime, "now" of 1e12 is the year 33658)
_SAID_LO, _SAID_HI = year_bounds(_FIRST_YEAR, _LAST_YEAR)


def _checked_now(now: object, name: str = "now") -> float | None:
    """``now`` (epoch seconds or None) as a float, None where it is no time: NaN, or a day outside the years read,
    on which only absolute dates resolve; :class:`InvalidInput` naming ``name`` for what is no number."""
    if now is None:
        return None
    if isinstance(now, bool) or not isinstance(now, numbers.Real):
        raise InvalidInput(f"{name} must be epoch seconds or None, got {type(now).__name__}")
    now = float(now)
    return now if _SAID_LO <= now < _SAID_HI else None


# The tense of a Hindi sentence: its future verbs end in "-गा", "-गी", "-गे" after a vowel ("जाऊँगा", "करेंगे",
# "होगी"), say "वाला" (about to) or are a plan in the present continuous ("जा रहे हैं"); its past ones are said with
# "था", "थी", "थे", with "गया", "गई", "गए", "हुआ", "हुई", "आया", "किया", "दिया", "लिया", or with the agent's "ने"
# ("मैंने", "उसने")
_HI_LETTER = r"\u0900-\u0963\u0966-\u097f"
_HI_FUTURE = re.compile(rf"[ेोूँंएओऊ](?:गा|गी|गे)(?![{_HI_LETTER}])|(?<![{_HI_LETTER}])वाल[ाीे](?![{_HI_LETTER}])|"
                        rf"(?<![{_HI_LETTER}])रह[ाीे]\s+(?:है|हैं|हूँ|हूं|हो)(?![{_HI_LETTER}])")
_HI_PAST = re.compile(rf"(?<![{_HI_LETTER}])(?:था|थी|थे|थीं|गया|गई|गईं|गए|गयी|गयीं|गये|हुआ|हुई|हुईं|हुए|आया|आई|"
                      rf"आए|किया|दिया|लिया|ने)(?![{_HI_LETTER}])|[ंै]ने(?![{_HI_LETTER}])")
_HI_SENTENCE = re.compile(r"[^।॥.!?\n]*")
_HI_REACH = 200


def _hindi_day(m: re.Match) -> int | None:
    """The days from the day it is said to the one Hindi "आज", "कल" or "परसों" (matched by ``m``) names: "कल" is
    yesterday in a sentence in the past and tomorrow in one in the future, "परसों" the day before yesterday or after
    tomorrow; None when the sentence is in neither tense or in both."""
    word = m.group(0)
    if word == "आज":
        return 0
    text = m.string
    # the sentence, within _HI_REACH letters of the word either way (a text without a stop is read in pieces)
    low = max(0, m.start() - _HI_REACH)
    start = max(low, *(text.rfind(c, low, m.start()) + 1 for c in "।॥.!?\n"))
    sentence = _HI_SENTENCE.match(text[start:m.end() + _HI_REACH]).group(0)
    future, past = _HI_FUTURE.search(sentence) is not None, _HI_PAST.search(sentence) is not None
    if future == past:
        return None
    return (1 if word == "कल" else 2) * (1 if future else -1)


def _resolve(name: str, m: re.Match, now: datetime | None, tense: str | None = None) -> TimeRef | None:
    """:func:`_resolve_at`, or ``_BEYOND`` for a time outside the years this module resolves (``_FIRST_YEAR`` to
    ``_LAST_YEAR``): "December 9999", "the day before 0001-01-01"."""
    try:
        ref = _resolve_at(name, m, now, tense)
    except (OverflowError, ValueError):
        return _BEYOND  # the arithmetic left datetime's range
    if ref is None or ref is _BEYOND:
        return ref
    first = datetime.fromtimestamp(ref.start, tz=timezone.utc).year
    last = datetime.fromtimestamp(ref.end, tz=timezone.utc).year
    return ref if _FIRST_YEAR <= first and last <= _LAST_YEAR else _BEYOND


def _written_date(name: str, g: tuple, phrase: str) -> TimeRef | None:
    """The day (or month, for "2024年3月") of a date written in Chinese, Japanese, Korean, Thai, Arabic or Persian."""
    if name in ("cjk", "cjk_year"):
        year = int(g[0]) if g[0] is not None else JAPANESE_ERAS[g[1]] + (1 if g[2] == "元" else int(g[2]))
        if name == "cjk_year":
            return _ref(datetime(year, 1, 1, tzinfo=timezone.utc), "year", phrase, False)
        if g[4] is None:
            d = _safe_date(year, int(g[3]), 1)
            return _ref(d, "month", phrase, False) if d else None
        d = _safe_date(year, int(g[3]), int(g[4]))
    elif name == "thai":
        year = int(g[3])
        era = g[2].replace(" ", "") if g[2] else None
        if era == "พ.ศ." or (era is None and year >= 2400):
            year -= 543
        d = _safe_date(year, THAI_MONTHS[g[1]], int(g[0]))
    elif name == "arabic":
        d = _safe_date(int(g[2]), ARABIC_MONTHS[g[1]], int(g[0]))
    else:
        d = _persian_date(int(g[2]), PERSIAN_MONTHS[g[1]], int(g[0]))
    return _ref(d, "day", phrase, False) if d else None


def _persian_date(year: int, month: int, day: int) -> datetime | None:
    """The Gregorian day of a day of the Persian solar calendar (its 33-year arithmetic rule, exact from 1178 to
    1633 SH); None for a day no month of it holds."""
    if not 1 <= day <= (31 if month <= 6 else 30):
        return None
    days = (-355668 + 365 * (year + 1595) + (year + 1595) // 33 * 8 + ((year + 1595) % 33 + 3) // 4 + day
            + ((month - 1) * 31 if month < 7 else (month - 7) * 30 + 186))
    try:
        d = datetime(1, 1, 1, tzinfo=timezone.utc) + timedelta(days=days - 366)
    except OverflowError:
        return None
    if month == 12 and day == 30 and _persian_date(year + 1, 1, 1) == d:
        return None  # 30 Esfand of a common year is the next year's first day
    return d


def _counted(today: datetime, n: int, unit: str, sign: int, phrase: str) -> TimeRef:
    """``n`` units (``"day"``, ``"week"``, ``"fortnight"``, ``"weekend"``, ``"month"``, ``"year"``) back (``sign``
    -1: "3 days ago") or ahead (1: "in 3 days") of ``today``."""
    if unit == "weekend":  # counted back from the last one begun before the day ("one weekend ago")
        return _ref(today - timedelta(days=((today.weekday() - 5) % 7 or 7) + 7 * (n - 1)), "weekend", phrase,
                    True)
    if unit == "day":
        return _ref(today + timedelta(days=sign * n), "day", phrase, True)
    if unit in ("week", "fortnight"):
        start = today + timedelta(days=sign * 7 * n * (2 if unit == "fortnight" else 1))
        return _ref(start - timedelta(days=start.weekday()), "week", phrase, True)
    if unit == "month":
        # "a month ago" is about thirty days back, not the previous calendar month as a whole: the week around
        # the same day of that month
        first = _add_months(today.replace(day=1), sign * n)
        last_day = calendar.monthrange(first.year, first.month)[1]
        return _ref(first.replace(day=min(today.day, last_day)) - timedelta(days=3), "week", phrase, True)
    return _ref(today.replace(year=today.year + sign * n, month=1, day=1), "year", phrase, True)


def _placed_day(month: int, day: int, m: re.Match, today: datetime, tense: str | None) -> datetime | None:
    """The day ``day`` of ``month`` said without its year in ``m`` on ``today``: the year is placed by the clause's
    ``tense``, None when no year near ``today`` has that day."""
    options = [d for y in (today.year - 1, today.year, today.year + 1) if (d := _safe_date(y, month, day))]
    if not options:
        return None
    if tense == "future" and not _STARTING.search(m.string[max(0, m.start() - 20):m.start()]):
        # the next such date ("the next review is planned for September 15", said in February); one that
        # passed less than a month ago is that one still ("to meet the September 1 deadline", said on the 5th)
        return min((o for o in options if o >= today - timedelta(days=31)), default=options[-1])
    # the nearest such date: "on December 20" said in January is last December, "by March 1" said in December is the
    # coming March
    d = min(options, key=lambda o: abs((o - today).total_seconds()))
    if tense == "past" and _reports(m.string, m.start(), m.end()) and d > today + timedelta(days=31):
        # a person's simple past reports a day gone by: the latest such date up to the day it is said ("I flew to
        # Rome on May 20", said on 1 March 2023: 20 May 2022, not eleven weeks on); one less than a month on is
        # that one still, as a plan's that passed is (a timestamp may be a session's, or lag what it reports: "I
        # just attended a workshop on May 3", dated 2 May)
        d = max((o for o in options if o <= today), default=d)
    return d


def _day_range(m: re.Match, g: tuple, today: datetime | None, tense: str | None) -> TimeRef | None:
    """A range of days written with a dash or said ("March 3-5", "3-5 March", "March 31 - April 2, 2024", "from March
    3 to 5", "between 3 and 5 March"): the days from the
    first to the last, both included. Without a year the first day is placed as it would be alone ("March 3") and the
    last follows it; a year said is the last day's ("December 30 - January 2, 2024" starts in 2023). None when the
    last day does not come after the first within two months ("March 5-3", "May 1-30 June"): the first day is then
    read alone, by the patterns after this one."""
    if g[0] is not None:  # "March 3-5", "March 31 - April 2"
        first_word, d1, last_word, d2, year = g[0], g[1], g[2] or g[0], g[3], g[4]
    else:  # "3-5 March"
        d1, d2, first_word, year = g[5], g[6], g[7], g[8]
        last_word = first_word
    if first_word.lower() in ("may", "march") and not first_word[:1].isupper():
        return None  # "may 3-5 people": the verb, unless written as the month
    said = _DAYS_TO_WORD.search(m.group(0))
    if said is not None:
        if said.group(0).split()[0].lower() == "and" and not _BETWEEN.search(m.string, max(0, m.start() - 10),
                                                                             m.start()):
            return None  # "on March 3 and 5": two days, no range
        if re.match(r"\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z])", m.string[m.end():m.end() + 40]):
            return None  # "in March 3 to 5 people came": a count
        if _CHANGED.search(m.string, _clause_start(m.string, m.start()), m.start()):
            return None  # "rescheduled from April 4 to April 6": a day changed for another
    month1, month2, day1, day2 = _month_of(first_word), _month_of(last_word), int(d1), int(d2)
    if year is not None:
        last = _safe_date(int(year), month2, day2)
        first = _safe_date(int(year) - (month1 > month2), month1, day1)
    elif today is not None:
        first = _placed_day(month1, day1, m, today, tense)
        last = _safe_date(first.year + (month1 > month2), month2, day2) if first else None
    else:
        return None
    if first is None or last is None or not first < last <= first + timedelta(days=62):
        return None
    return TimeRef(first.timestamp(), (last + timedelta(days=1)).timestamp(), "days", m.group(0), year is None,
                   yearless=year is None)


def _resolve_at(name: str, m: re.Match, now: datetime | None, tense: str | None = None) -> TimeRef | None:
    """The interval ``m`` (a match of pattern ``name``) means, said at ``now``. ``tense`` is ``"future"`` when the
    speaker talks about what is to come ("I'm training for the Dublin half marathon in October": a date without a
    year, a month, a weekday or a day of the month is then the next one rather than the last one), ``"past"`` when
    the clause reports what happened, None when it does not say."""
    future = tense == "future"
    g = m.groups()
    phrase = m.group(0)
    if name == "iso":
        d = _safe_date(int(g[0]), int(g[1]), int(g[2]))
        return _ref(d, "day", phrase, False) if d else None
    if name in ("cjk", "cjk_year", "thai", "arabic", "persian"):
        return _written_date(name, g, phrase)
    if name == "mdy":
        d = _safe_date(int(g[2]), _month_of(g[0]), int(g[1]))
        return _ref(d, "day", phrase, False) if d else None
    if name == "dmy":
        d = _safe_date(int(g[2]), _month_of(g[1]), int(g[0]))
        return _ref(d, "day", phrase, False) if d else None
    if name == "my":
        d = _safe_date(int(g[1]), _month_of(g[0]), 1)
        return _ref(d, "month", phrase, False) if d else None
    if name == "year":
        return _ref(datetime(int(g[0]), 1, 1, tzinfo=timezone.utc), "year", phrase, False)
    if name == "holiday" and g[2] is not None:  # "at Christmas 2022"
        return _holiday(m, g, None, tense)
    if name == "range" and (g[2] is not None or g[7] is not None or g[8] is not None):  # "from January to February
        # 2022", "from the 3rd to the 5th of April 2022", "2019 to 2021"
        return _range(m, g, None, tense)
    if name == "day_range" and (g[4] is not None or g[8] is not None):  # "May 3-4, 2024"
        return _day_range(m, g, None, tense)
    if name == "wd_of_month" and g[5] is not None:  # "the second Wednesday of August, 2024"
        return _weekday_of_month(m, g, None, tense)
    if name == "week_of_month" and g[3] is not None:  # "the first week of November 2022"
        return _week_of_month(m, g, None, tense)
    if name == "part_year" and g[2] is not None:  # "mid-2022"
        return _part_of_year(m, g, None, tense)
    if name == "half_year" and g[2] is not None:  # "the second half of 2022"
        return _part_of_year(m, g, None, tense)
    if name == "quarter" and (m.group("y4") or m.group("y2") or m.group("fy2") or m.group("fy4")):  # "Q3 2024"
        return _quarter(m, g, None, tense)
    if name == "decade":
        return _decade(m)
    if name == "season" and g[3] is not None:  # "the summer of 2022"
        return _season(m, g, None, tense)
    if name == "lang_month" and g[3] is not None:  # "3 maart 2023"
        return _nl_month(m, g, None)
    if now is None:
        return None
    if name in ("last_unit", "next_unit", "this_unit", "span_back") and _TITLE_CASE.fullmatch(phrase) \
            and m.start() > 0 \
            and not re.search(r"(?:^|[.!?:]\s*|\n\s*)$", m.string[max(0, m.start() - 3):m.start()]):
        return None  # "Review Action Items from Last Week": a heading of a template, not a date
    today = _day_start(now)
    placed = _PLACED_BY_TENSE.get(name)
    if placed is not None:
        return placed(m, g, today, tense)
    if name in ("dm_word", "md_word"):
        month, day = (_month_of(g[1]), ORDINALS[" ".join(g[0].lower().split())]) if name == "dm_word" else \
            (_month_of(g[0]), ORDINALS[" ".join(g[1].lower().split())] if g[1] else int(g[2]))
        if g[-1] is not None:  # "the first of May 2022"
            d = _safe_date(int(g[-1]), month, day)
            return _ref(d, "day", phrase, False) if d else None
        if name == "md_word" and g[0].lower() in ("may", "march") and not g[0][:1].isupper():
            return None  # "you may first want to": the verb
        g = (g[0], str(day)) if name == "md_word" else (str(day), g[1])
        name = "md" if name == "md_word" else "dm"
    if name in ("md", "dm"):
        month, day = (_month_of(g[0]), int(g[1])) if name == "md" else (_month_of(g[1]), int(g[0]))
        if name == "md" and g[0].lower() in ("may", "march") and not phrase.lower().startswith("on") \
                and not g[0][:1].isupper():
            return None  # "may 3 people" / "march 5 miles": the verbs, unless written as the month ("May 25")
        if name == "md" and _COUNTED.match(m.string, m.end()):
            return None  # "I saw June 3 times", "In March 2 of us got sick": a count after a month or a name
        d = _placed_day(month, day, m, today, tense)
        return _ref(d, "day", phrase, True, yearless=True) if d else None
    if name == "wd_nth":  # "on Tuesday, the 7th": the nearest such day of a month that falls on that weekday
        wd, day = WEEKDAYS[g[1].lower()], int(g[2])
        this = today.replace(day=1)
        options = [d for k in range(-14, 15) if (d := _safe_date((f := _add_months(this, k)).year, f.month, day))
                   and d.weekday() == wd]
        if tense is None and (g[0] or "").lower() in ("by", "until", "till"):
            tense = "future"  # "by Friday the 17th", as "by Friday" is
        if tense is None and g[0] is None:
            return None  # "Friday the 13th is a movie": said alone, a weekday is read only by its clause
        if tense == "future":
            d = next((o for o in options if o >= today), None)
        elif tense == "past":
            d = next((o for o in reversed(options) if o <= today), None)
        else:
            d = min(options, key=lambda o: abs((o - today).total_seconds()), default=None)
        return None if d is None else _ref(d, "day", phrase, True)
    if name == "nth":  # "on the 3rd": this month, or last month when that day has not come yet (next month for plans)
        if _ORDINALS_COUNTING.match(m.string, m.end()):
            return None  # "on the 3rd and 5th floors": what the ordinals count
        lead = g[0].lower()
        day = int(g[1]) if g[1] is not None else ORDINALS[" ".join(g[2].lower().split())]
        # "by the 20th", "until the 20th": the coming one unless the clause reports the past, as "by Friday" is;
        # "since the 10th" the days from the last one up to the day it is said
        future = lead != "since" and (future or lead in ("by", "until", "till") and tense != "past")
        if g[3] is not None:  # "on the 20th of this month", "of next month"; "of each month" is no day but a rate
            if g[3].lower() in ("each", "every"):
                return None
            first = _add_months(today.replace(day=1), {"this": 0, "next": 1, "last": -1}[g[3].lower()])
            d = _safe_date(first.year, first.month, day)
            if d is not None and lead == "since":
                return _since_day(d, today, phrase)
            return _ref(d, "day", phrase, True) if d else None
        d = _safe_date(now.year, now.month, day)
        step = 1 if future else -1
        month = today.replace(day=1)
        # "back on the 10th" reaches back from the day it is said: said on the 10th, it is last month's
        before = m.string[max(0, m.start() - 40):m.start()]
        back = not future and _BACK.search(before) is not None and _RETURN.search(before) is None \
            and _ANSWER_BACK.search(before) is None
        # the nearest month that has the day ("on the 31st" said in March of the past is 31 January)
        while d is None or (d < today if future else d >= today if back else d > today):
            month = _add_months(month, step)
            if abs(month.year - today.year) > 1:
                return None  # no such day in any month ("on the 32nd")
            d = _safe_date(month.year, month.month, day)
        return _since_day(d, today, phrase) if lead == "since" else _ref(d, "day", phrase, True)
    if name == "lang_day":
        said = _folded(" ".join(phrase.split()))
        if said == "hier" and not _FRENCH.search(m.string):
            return None  # German or Dutch "here"
        return _ref(today + timedelta(days=_DAY_OFFSET.get(said, 1)), "day", phrase, True)  # else "mañana", "morgen"
    if name == "lang_unit":
        sign, unit, _ = _OTHER_UNITS[int(m.lastgroup[1:])]
        if unit == "week":
            return _ref(today - timedelta(days=today.weekday() - 7 * sign), "week", phrase, True)
        if unit == "month":
            return _ref(_add_months(today.replace(day=1), sign), "month", phrase, True)
        return _ref(today.replace(year=today.year + sign, month=1, day=1), "year", phrase, True)
    if name == "cjk_day":
        said = g[0] or g[1]
        return _ref(today + timedelta(days=_CJK_DAYS[said]), "day", phrase, True)
    if name == "hi_day":
        days = _hindi_day(m)
        return None if days is None else _ref(today + timedelta(days=days), "day", phrase, True)
    if name == "lang_wd":  # the coming such weekday after the day it is said, or the last one before it
        k = int(m.lastgroup[1:])
        wd = _OTHER_WD_INDEX[_folded(m.group(f"d{k}"))]
        if _OTHER_WD_PHRASES[k][0] < 0:
            return _ref(today - timedelta(days=(today.weekday() - wd) % 7 or 7), "day", phrase, True)
        return _ref(today + timedelta(days=(wd - today.weekday()) % 7 or 7), "day", phrase, True)
    if name == "lang_bare_wd":
        return _other_bare_weekday(m, today)
    if name == "lang_month":
        return _nl_month(m, g, today)
    if name == "lang_count":
        if g[0] is not None:  # "hace dos días", "vor zwei Wochen", "dans 5 jours"
            sign, count, unit = _OTHER_BEFORE[_folded(" ".join(g[0].split()))], g[1], g[2]
        elif g[3] is not None:  # "in drei Wochen"
            sign, count, unit = 1, g[4], g[5]
        elif g[8] is not None:  # "tre giorni fa", "два дня назад", "iki gün önce"
            sign, count, unit = _OTHER_AFTER[_folded(g[8])], g[6], g[7]
        else:  # Dutch: "over twee weken", "over een maand", "twee dagen geleden"
            sign, count, unit = (1, g[10] or g[12], g[11] or g[13]) if g[9] is not None else (-1, g[14], g[15])
            n = int(count) if count.isdigit() else _NL_NUMBERS[" ".join(count.lower().split())]
            return _counted(today, n, _NL_UNITS[unit.lower()], sign, phrase)
        n = 1 if count is None else int(count) if count.isdigit() else OTHER_NUMBERS[_folded(count)]
        return _counted(today, n, _OTHER_UNIT_LOWER[_folded(unit)], sign, phrase)
    if name == "daybefore":
        return _ref(today - timedelta(days=2), "day", phrase, True)
    if name == "yesterday":
        return _ref(today - timedelta(days=1), "day", phrase, True)
    if name == "today":
        return _ref(today, "day", phrase, True)
    if name == "tomorrow":
        return _ref(today + timedelta(days=1), "day", phrase, True)
    if name == "dayafter":
        return _ref(today + timedelta(days=2), "day", phrase, True)
    if name == "from_day":
        return _from_day(g, today, phrase)
    if name == "ago_wd":  # the weekday of the week that holds the day that many weeks back
        count, unit, wd = (g[0], g[1], g[2]) if g[0] is not None else (g[4], g[5], g[3])
        back = today - timedelta(days=7 * _number(count) * (2 if unit.lower() == "fortnight" else 1))
        return _ref(back - timedelta(days=back.weekday() - WEEKDAYS[wd.lower()]), "day", phrase, True)
    if name == "ago_today":
        n, unit, base = _number(g[0]), g[1].lower(), g[2].lower()
        day = today + timedelta(days=-1 if re.fullmatch(_YESTERDAY, base) else 1 if re.fullmatch(_TOMORROW, base)
                                else 0)
        if unit in ("day", "week", "fortnight"):
            return _ref(day - timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit]), "day", phrase, True)
        if unit == "month":
            first = _add_months(day.replace(day=1), -n)
            return _ref(first.replace(day=min(day.day, calendar.monthrange(first.year, first.month)[1])), "day",
                        phrase, True)
        return _ref(_shifted(day, -n), "day", phrase, True)
    if name == "wds_ago":  # counted back from the last such weekday before the day it is said
        back = (today.weekday() - WEEKDAYS[g[1].lower()]) % 7 or 7
        return _ref(today - timedelta(days=back + 7 * (_number(g[0]) - 1)), "day", phrase, True)
    if name == "and_half_ago":  # n and a half units back: whole months for years and months, days for weeks
        n = _number(g[0])
        unit = _UNIT_CLIPPED.get((g[1] or g[2]).lower(), (g[1] or g[2]).lower())
        if unit == "week":
            start = today - timedelta(days=round(7 * n + 3.5))
            return _ref(start - timedelta(days=start.weekday()), "week", phrase, True)
        months = 12 * n + 6 if unit == "year" else None
        if months is None:  # "a month and a half ago": six weeks and a bit, the week around that day
            start = today - timedelta(days=round(30.44 * n + 15))
            return _ref(start - timedelta(days=start.weekday()), "week", phrase, True)
        return _counted(today, months, "month", -1, phrase)
    if name == "decades_ago":
        return _counted(today, 10 * _number(g[0]), "year", -1, phrase)
    if name == "half_ago":  # as "6 months ago" and "2 weeks ago" are
        if g[0].lower() == "month":
            start = today - timedelta(days=14)
            return _ref(start - timedelta(days=start.weekday()), "week", phrase, True)
        first = _add_months(today.replace(day=1), -6)
        last_day = calendar.monthrange(first.year, first.month)[1]
        return _ref(first.replace(day=min(today.day, last_day)) - timedelta(days=3), "week", phrase, True)
    if name in ("ago", "in_n"):
        if name == "ago" and phrase.lower().endswith("back") \
                and _MOVED_BACK.search(m.string, max(0, m.start() - 40), m.start()):
            return None  # "the launch was pushed two weeks back", "the records go back two years": no date
        n = _number(g[0])
        if name == "in_n" and n == 1 and (not future and g[1].lower() != "fortnight"
                                          or _PER_UNIT.search(m.string[max(0, m.start() - 60):m.start()])):
            # "what you can do in a day", "the weeks you work in a month": a span or a rate, not a date ("in a
            # fortnight" is "in two weeks", a date as that is)
            return None
        if name == "in_n" and tense == "past":
            return None  # "we've watched 15 movies in 6 weeks": how long it took, told; no date to come
        unit = _UNIT_CLIPPED.get(g[1].lower(), g[1].lower())
        return _counted(today, n, unit, -1 if name == "ago" else 1, phrase)
    if name == "span_back":
        unit = g[1].lower()
        plural = unit.endswith("s")
        unit = unit.rstrip("s")
        if g[0] is None and (plural or unit == "day" and not _SPAN_LEAD.match(phrase)):
            return None  # "over the past months": no saying how many; "the last day": the final one, not a date
        n = _number(g[0]) if g[0] is not None else 1
        if unit == "month":
            first = _add_months(today.replace(day=1), -n)
            start = first.replace(day=min(today.day, calendar.monthrange(first.year, first.month)[1]))
        elif unit == "year":
            start = _shifted(today, -n)
        else:
            start = today - timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit])
        if start < _shifted(today, -1):
            return None  # "the skills developed over the past 22 years": the length of a career, not when it was
        # up to the day the message is said, that day included
        return TimeRef(start.timestamp(), (today + timedelta(days=1)).timestamp(), "days", phrase, True)
    if name == "span_ahead":
        unit = (g[1] or g[2]).lower().rstrip("s")
        if tense != "future":
            return None  # "over the next few days I recovered": after another time
        # "in the coming days", "in the days ahead": a count not said is a few, as "the next few days" says it (three,
        # as "a few days ago" is read); "the coming week" is one
        n = _number(g[0]) if g[0] is not None else NUMBERS["few"] if (g[1] or g[2]).lower().endswith("s") else 1
        if unit == "month":
            first = _add_months(today.replace(day=1), n)
            end = first.replace(day=min(today.day, calendar.monthrange(first.year, first.month)[1]))
        elif unit == "year":
            end = _shifted(today, n)
        else:
            end = today + timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit])
        if end > _shifted(today, 1):
            return None  # "over the next 10 years": how long, not when
        # from the day the message is said, that day included
        return TimeRef(today.timestamp(), (end + timedelta(days=1)).timestamp(), "days", phrase, True)
    if name in ("last_unit", "next_unit", "this_unit"):
        unit = (g[0] or g[-1]).lower()
        unit = _UNIT_CLIPPED.get(unit, unit)
        sign = {"last_unit": -1, "next_unit": 1, "this_unit": 0}[name]
        if unit == "week":
            if sign == 0 and future and today.weekday() == 6:
                sign = 1  # "implement the new plan this week", said on a Sunday: the week that begins tomorrow
            start = today - timedelta(days=today.weekday()) + timedelta(days=7 * sign)
            return _ref(start, "week", phrase, True)
        if unit == "weekend":
            sat = today - timedelta(days=(today.weekday() - 5) % 7)  # the latest Saturday on or before today
            if sign < 0 and sat + timedelta(days=2) > today:
                sat -= timedelta(days=7)
            if sign > 0 or (sign == 0 and today.weekday() < 5 and tense != "past"):
                sat += timedelta(days=7)  # "this weekend" said on a weekday is the coming one, unless it is told
            return _ref(sat, "weekend", phrase, True)
        if unit == "month":
            return _ref(_add_months(today.replace(day=1), sign), "month", phrase, True)
        return _ref(today.replace(year=today.year + sign, month=1, day=1), "year", phrase, True)
    if name == "other_day" and g[0] is not None:  # "the other week": last week or the one before it
        monday = today - timedelta(days=today.weekday())
        return TimeRef((monday - timedelta(days=14)).timestamp(), monday.timestamp(), "days", phrase, True)
    if name == "other_day":  # the week of days before the day it is said
        return TimeRef((today - timedelta(days=7)).timestamp(), today.timestamp(), "days", phrase, True)
    if name == "over_weekend":
        clause = m.string[max(0, m.start() - 120):m.start()]
        clause = clause[max(clause.rfind(c) for c in ".!?\n") + 1:]
        if g[0].lower() == "for":  # what a thing is for is the coming weekend: "any plans for the weekend?", "I've
            # budgeted $50 for the weekend"; a stay reported is the last one ("I went to my parents' for the weekend")
            if tense is None:
                if not _PLANS_FOR.search(clause):
                    return None  # "set aside time for the weekend": advice
                tense = "future"
            elif tense == "past" and _PERFECT.search(clause):
                tense = "future"
            future = tense == "future"
        if tense is None:  # "are you free over the weekend?", "we're painting the fence over the weekend": to come
            if _HABIT.search(clause):
                return None  # "I usually rest over the weekend": every weekend, no date
            if g[0].lower() != "over":
                return None  # "keep the movie night on the weekend", "it is best to rest on the weekend": advice
            future = _PRESENT.search(clause) is not None
        if future:  # the coming Saturday (said on a Saturday, that one)
            return _ref(today + timedelta(days=(5 - today.weekday()) % 7), "weekend", phrase, True)
        # the latest Saturday before the day it is said ("I went hiking over the weekend", said on a Sunday: the
        # day before); a simple past off the list of cues leaves the tense unsaid, and a report is the likelier
        return _ref(today - timedelta(days=(today.weekday() - 5) % 7 or 7), "weekend", phrase, True)
    if name == "after_next":
        unit = g[0].lower()
        if unit == "week":
            return _ref(today - timedelta(days=today.weekday()) + timedelta(days=14), "week", phrase, True)
        if unit == "weekend":  # the Saturday after the coming one ("next weekend" is the coming one)
            sat = today - timedelta(days=(today.weekday() - 5) % 7)
            return _ref(sat + timedelta(days=14), "weekend", phrase, True)
        ahead = (WEEKDAYS[unit] - today.weekday()) % 7 or 7
        return _ref(today + timedelta(days=ahead + 7), "day", phrase, True)
    if name == "this_time":  # "this time last year", "this time next week", "same time next month"
        sign, unit = (-1 if g[0].lower() == "last" else 1), g[1].lower()
        if unit == "week":
            day = today + timedelta(days=7 * sign)
        elif unit == "month":
            first = _add_months(today.replace(day=1), sign)
            day = first.replace(day=min(today.day, calendar.monthrange(first.year, first.month)[1]))
        else:
            day = _shifted(today, sign)
        return _ref(day - timedelta(days=3), "week", phrase, True)
    if name == "weeks_on":
        weeks = _number(g[0]) * (2 if g[1].lower() == "fortnight" else 1)
        if g[2] is not None:  # a week after the coming weekday (the one after when said on it), and so on
            wd = WEEKDAYS[g[2].lower()]
            return _ref(today + timedelta(days=((wd - today.weekday()) % 7 or 7) + 7 * weeks), "day", phrase, True)
        if tense != "future":
            return None  # "I've been sober a week today": today is the day ("today" reads it)
        day = today + timedelta(days=1 if re.fullmatch(_TOMORROW, g[3], re.I) else 0)
        return _ref(day + timedelta(days=7 * weeks), "day", phrase, True)
    if name == "wd_week":
        wd = WEEKDAYS[(g[0] or g[1]).lower()]
        return _ref(today + timedelta(days=((wd - today.weekday()) % 7 or 7) + 7), "day", phrase, True)
    if name == "before_last":
        unit = g[0].lower()
        if unit == "week":
            return _ref(today - timedelta(days=today.weekday() + 14), "week", phrase, True)
        if unit == "weekend":  # the Saturday before the one "last weekend" is
            sat = today - timedelta(days=(today.weekday() - 5) % 7)
            if sat + timedelta(days=2) > today:
                sat -= timedelta(days=7)
            return _ref(sat - timedelta(days=7), "weekend", phrase, True)
        back = (today.weekday() - WEEKDAYS[unit]) % 7 or 7
        return _ref(today - timedelta(days=back + 7), "day", phrase, True)
    if name == "earlier_later":
        unit = g[1].lower()
        first = today - timedelta(days=today.weekday()) if unit == "week" else \
            today.replace(day=1) if unit == "month" else today.replace(month=1, day=1)
        end = first + timedelta(days=7) if unit == "week" else \
            _add_months(first, 1) if unit == "month" else first.replace(year=first.year + 1)
        start, end = (first, today + timedelta(days=1)) if g[0].lower() == "earlier" else (today, end)
        return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, True)
    if name == "open_wd":  # the latest such day (the day itself included) when told, the coming one when to come
        if tense is None:
            return None
        wd = WEEKDAYS[g[0].lower()]
        if tense == "past":
            return _ref(today - timedelta(days=(today.weekday() - wd) % 7), "day", phrase.strip(), True)
        return _ref(today + timedelta(days=(wd - today.weekday()) % 7), "day", phrase.strip(), True)
    if name == "bare_wd":
        return _bare_weekday(m, g, today, tense)
    if name in ("last_wd", "since_wd", "next_wd", "this_wd", "by_wd"):
        if _DATE_AFTER.match(m.string, m.end()):
            return None  # "on Tuesday, June 5": the date that follows says which Tuesday
        wd = WEEKDAYS[g[0].lower()]
        explicit_past = name == "since_wd" or re.match(r"(?:last|this past|past)\b", phrase, re.I) is not None
        # "this Friday" (and "by Friday") is the coming one unless the clause reports the past ("this Monday I
        # went...")
        if name in ("last_wd", "since_wd") and (explicit_past or not future) \
                or name in ("this_wd", "by_wd") and tense == "past":
            back = (today.weekday() - wd) % 7
            if name in ("last_wd", "since_wd"):
                back = back or 7
            if name == "since_wd":  # a period that lasts up to the day it is said, that day included
                first = today - timedelta(days=back)
                return TimeRef(first.timestamp(), (today + timedelta(days=1)).timestamp(), "days", phrase, True,
                               onset_end=(first + timedelta(days=1)).timestamp())
            return _ref(today - timedelta(days=back), "day", phrase, True)
        ahead = (wd - today.weekday()) % 7
        if name not in ("this_wd", "by_wd"):
            ahead = ahead or 7
        return _ref(today + timedelta(days=ahead), "day", phrase, True)
    if name == "next_month":
        month = _month_of(g[0])
        year = now.year if month > now.month else now.year + 1
        return _ref(datetime(year, month, 1, tzinfo=timezone.utc), "month", phrase, True)
    if name == "in_month":
        month = _month_of(g[0])
        lead = phrase.split()[0].lower()
        if lead in ("by", "starting", "beginning"):
            if g[0].lower() in ("may", "march") and g[0][:1].islower() or _A_NAME_AFTER.match(m.string, m.end()) \
                    or lead == "by" and _BY_A_PERSON.search(m.string, max(0, m.start() - 20), m.start()):
                return None  # "followed by may": the verb; "inspired by June's story", "painted by June Smith": a name
            # "reduce my hours by July": to come unless the clause reports it ("I finished it by February"); "we agreed
            # on $200 starting April": what starts is to come, whatever the agreeing was
            future = tense != "past" or lead != "by"
        if phrase.lower().startswith("last"):
            year = now.year if month < now.month else now.year - 1
        elif future or phrase.lower().startswith("this") and month > now.month:
            year = now.year if month >= now.month else now.year + 1  # "in October", said in May of a plan
        else:
            year = now.year if month <= now.month else now.year - 1
        return _ref(datetime(year, month, 1, tzinfo=timezone.utc), "month", phrase, True,
                    yearless=not phrase.lower().startswith(("last", "this")))
    return None


# the words before a weekday said alone that read it otherwise: a rate ("every Friday", "a Friday", "my Saturday
# sessions"), a day of a list or range ("from Monday", "between Monday and"), one a pattern before reads ("on
# Friday", "last Friday") or none ("the Friday", "that Friday", "which Friday", "it's Friday": the day it is
# said, named)
_BARE_WD_BEFORE = re.compile(r"\b(?:on|last|next|this|past|coming|by|until|till|since|every|each|a|an|the|that|one|"
                             r"any|some|which|what|most|from|between|to|through|thru|and|or|before|after|of|per|"
                             r"following|previous|same|other|weekday|like|than|no|every|except|but|including|"
                             r"about|my|your|his|our|their|typical|usual|normal|regular|weekly|"
                             r"(?:it|today|tomorrow)(?:'s|\s+is)|yesterday\s+was)\s+$", re.I)
# a weekday that is a heading or a label of a plan ("#### Sunday", "**Monday**:", "- Tuesday:"), not a day said
_WD_HEADING = re.compile(r"(?:^|\n)[\s#>*_|-]*$")
_WD_LABEL = re.compile(r"[\s*_]*(?::|$|\n|\|)")
# a weekday that describes what follows it, "Saturday classes", "my Friday 10 AM sessions": a word in lowercase
# after it (and a time of day) that is none of the small words a sentence goes on with
_WD_DESCRIBES = re.compile(r"(?:\s+\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?)?\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z])", re.I)
_THE_NTH_AFTER = re.compile(r",?\s+the\s+\d{1,2}(?:st|nd|rd|th)\b", re.I)
# a weekday proposed for what is to come: "Friday works for me", "does Tuesday suit you?", "Monday would be great"
_PROPOSED = re.compile(r"\s+(?:works|work|suits|suit|is\s+(?:good|fine|better|best|great|perfect|ok|okay)|would\s+"
                       r"(?:work|suit|be\s+(?:good|fine|better|best|great|perfect)))\b", re.I)
# the days named after a weekday: "Black Friday", "Cyber Monday", "Ash Wednesday", "Super Tuesday"
_NAMED_WD = re.compile(r"\b(?:black|cyber|good|holy|maundy|ash|palm|easter|super|blue|manic|freaky|fat|casual|girl|"
                       r"man|bloody|giving|business|whit|low|shrove|plough|pancake|spy|cheap|ruby|bowl)\s+$", re.I)
# a weekday that is the title of a show ("I watched Wednesday on Netflix", "we binged Wednesday", "have you seen
# Wednesday?"): capitalised, right after a verb of watching or before the service it streams on, and not before a
# time of day ("we watched Wednesday night" is a day)
_WATCHED = re.compile(r"\b(?:watch|watches|watched|watching|re-?watch(?:es|ed|ing)?|binge(?:s|d)?|bingeing|binging|"
                      r"binge-?watch(?:es|ed|ing)?|stream(?:s|ed|ing)?|seen)\s+$", re.I)
_STREAMED_ON = re.compile(r"\s+on\s+(?:Netflix|Hulu|HBO|Max|Disney|Prime|Amazon|Apple\s+TV|Peacock|Paramount|"
                          r"YouTube|Crunchyroll|TV)\b")


def _bare_weekday(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """A weekday said alone ("see you Friday", "I saw her Tuesday"): the last one when the clause reports what
    happened, the coming one when it talks about what is to come or proposes the day ("Friday works for me", "does
    Tuesday suit you?"; neither the day it is said on, as "on Friday" is not), None when it does not say, after a word
    that reads it otherwise, in the name of a day ("Black Friday", "Cyber Monday") or of a show ("I watched
    Wednesday on Netflix", "Friday Night Lights"), in a heading or a label of a plan
    ("#### Sunday"), before a word it describes ("Saturday classes") or in a habit ("I usually swim Monday")."""
    text, a = m.string, m.start()
    proposed = _PROPOSED.match(text, m.end()) is not None
    if tense is None and proposed:
        tense = "future"
    if tense is None:
        return None
    before = text[max(0, a - 24):a]
    if _BARE_WD_BEFORE.search(before) or _NAMED_WD.search(before) \
            or _DATE_AFTER.match(text, m.end()) or _HABIT.search(text, _clause_start(text, a), a) \
            or _WD_HEADING.search(before) and _WD_LABEL.match(text, m.end()) \
            or not proposed and _WD_DESCRIBES.match(text, m.end()) \
            or text.startswith("]", m.end()) or _THE_NTH_AFTER.match(text, m.end()) \
            or g[0][:1].isupper() and m.group(0) == g[0] and (_WATCHED.search(before)
                                                              or _STREAMED_ON.match(text, m.end())):
        # "on [Selected Saturday]": a template's blank; "Friday the 13th": the day of the month says which; "I watched
        # Wednesday on Netflix": a show
        return None
    wd = WEEKDAYS[g[0].lower()]
    if tense == "past":
        return _ref(today - timedelta(days=(today.weekday() - wd) % 7 or 7), "day", m.group(0), True)
    return _ref(today + timedelta(days=(wd - today.weekday()) % 7 or 7), "day", m.group(0), True)


def _other_bare_weekday(m: re.Match, today: datetime) -> TimeRef | None:
    """A weekday said alone in another language (:data:`_BARE_WD_PHRASES`): the last one before ``today`` when its
    clause reports the past (:data:`_OTHER_PAST`), else the coming one after it; None before a date or in a habit."""
    text, a, b = m.string, m.start(), m.end()
    k = int(m.lastgroup[1:])
    lang = _BARE_WD_PHRASES[k][0]
    said = next(d for d in m.groups()[m.re.groupindex[m.lastgroup]:] if d is not None)
    if _BARE_WD_NOT_BEFORE.match(text, b):
        return None
    if lang in ("fr", "it") and said[:1].isupper() and a and not _OTHER_SENTENCE_END.search(text[max(0, a - 3):a]):
        return None  # French and Italian write a weekday in lower case: "Domenica", "Samedi" inside a sentence are names
    start, end = _other_sentence(text, a, b)
    comma = text.rfind(",", start, a)
    start = comma + 1 if comma >= 0 else start
    opens = not text[start:a].strip()
    comma = text.find(",", b, end)
    if comma >= 0 and not (opens and comma - b <= 2):
        end = comma
    elif comma >= 0:  # "El viernes, fuimos al cine": the clause after the comma
        nxt = text.find(",", comma + 1, end)
        end = nxt if nxt >= 0 else end
    for that in _OTHER_THAT.finditer(text, start, a):
        start = that.end()
    for that in _OTHER_THAT.finditer(text, b, end):
        if text[b:that.start()].strip():
            end = that.start()
            break
    clause = text[start:end]
    if _OTHER_HABIT.search(clause):
        return None
    past = _TR_PAST.search(clause) is not None if lang == "tr" else _OTHER_PAST[lang].search(clause) is not None
    if not past and lang in _WEAK_PAST:  # "Am Freitag kochten wir Gulasch"
        opening = not text[start:a].strip()
        past = _weak_past(clause, b - start if opening else -1, lang)
    wd = _OTHER_WD_INDEX[_folded(said)]
    if not past and lang in _OTHER_WE and _OTHER_WE[lang].search(clause) and not _OTHER_NOW[lang].search(clause):
        return None  # "El sábado salimos": the last Saturday or the coming one
    if past:
        return _ref(today - timedelta(days=(today.weekday() - wd) % 7 or 7), "day", m.group(0), True)
    return _ref(today + timedelta(days=(wd - today.weekday()) % 7 or 7), "day", m.group(0), True)


def _nl_month(m: re.Match, g: tuple, today: datetime | None) -> TimeRef | None:
    """A Dutch month or day of a month (see :data:`NL_MONTHS`); None outside a Dutch sentence or without "in", "op",
    a day or a year."""
    lead, day, word, year = g
    if lead is None and day is None and year is None:
        return None
    text, a, b = m.string, m.start(), m.end()
    start, end = _other_sentence(text, a, b)
    sentence = text[start:end]
    if year is None and _NL_SENTENCE.search(sentence) is None:
        return None
    month = NL_MONTHS[word.lower()]
    if year is not None:
        y = int(year)
    elif today is None:
        return None
    else:
        past = _OTHER_PAST["nl"].search(sentence) is not None or _weak_past(sentence, -1, "nl")
        first = datetime(today.year, month, 1, tzinfo=timezone.utc)
        options = [(_shifted(first, k), _add_months(_shifted(first, k), 1)) for k in (-1, 0, 1)]
        tense = "past" if past else "future" if _NL_AHEAD.search(sentence) else None
        if day is not None:  # a day: the options are its days in the years that have it ("29 februari")
            days = [_safe_date(o.year, month, int(day)) for o, _ in options]
            options = [(d, d + timedelta(days=1)) for d in days if d is not None]
            if not options or tense == "future" and options[-1][1] <= today \
                    or tense == "past" and options[0][0] > today:
                return None  # no such day in the years around it the tense reads
        y = _yearless_by_tense(options, tense, today)[0].year
    if day is None:
        return _ref(datetime(y, month, 1, tzinfo=timezone.utc), "month", m.group(0), year is None,
                    yearless=year is None)
    d = _safe_date(y, month, int(day))
    return None if d is None else _ref(d, "day", m.group(0), year is None, yearless=year is None)


def _since_day(d: datetime, today: datetime, phrase: str) -> TimeRef | None:
    """The days from ``d`` up to ``today``, that day included ("since the 10th"); None when ``d`` is after it."""
    if d > today:
        return None
    return TimeRef(d.timestamp(), (today + timedelta(days=1)).timestamp(), "days", phrase, True,
                   onset_end=(d + timedelta(days=1)).timestamp())


def _from_day(g: tuple, today: datetime, phrase: str) -> TimeRef:
    """"3 days from now", "two weeks from today", "a week from Friday": forward from the message's day, the next
    one or the coming weekday (that day itself when it is said on it, as "this Friday" is). Counted from now it is
    what "in two weeks" is (the week that holds the day); counted from a day it is that day."""
    n = _number(g[0])
    unit = g[1].lower()
    base = g[2].lower()
    if re.fullmatch(_TODAY, base):
        base = "today"
    elif re.fullmatch(_TOMORROW, base):
        base = "tomorrow"
    if base == "now":
        if unit == "day":
            return _ref(today + timedelta(days=n), "day", phrase, True)
        if unit in ("week", "fortnight"):
            start = today + timedelta(days=7 * n * (2 if unit == "fortnight" else 1))
            return _ref(start - timedelta(days=start.weekday()), "week", phrase, True)
        if unit == "month":  # about n months on: the week around the same day of that month, as "in 3 months"
            first = _add_months(today.replace(day=1), n)
            last_day = calendar.monthrange(first.year, first.month)[1]
            return _ref(first.replace(day=min(today.day, last_day)) - timedelta(days=3), "week", phrase, True)
        return _ref(today.replace(year=today.year + n, month=1, day=1), "year", phrase, True)
    if base == "today":
        day = today
    elif base == "tomorrow":
        day = today + timedelta(days=1)
    else:
        day = today + timedelta(days=(WEEKDAYS[base] - today.weekday()) % 7)
    if unit in ("day", "week", "fortnight"):
        return _ref(day + timedelta(days=n * {"day": 1, "week": 7, "fortnight": 14}[unit]), "day", phrase, True)
    if unit == "month":
        first = _add_months(day.replace(day=1), n)
        return _ref(first.replace(day=min(day.day, calendar.monthrange(first.year, first.month)[1])), "day", phrase,
                    True)
    return _ref(_shifted(day, n), "day", phrase, True)


_ENDING = re.compile(r"\b(?<!was\s)(?<!were\s)(?:ending|ends|starting|starts|due)\s+(?:in\s+|on\s+|by\s+|around\s+)?"
                     r"(?:the\s+)?$", re.I)


def _yearless_by_tense(options: list[tuple[datetime, datetime]], tense: str | None,
                       today: datetime) -> tuple[datetime, datetime]:
    """Of a yearless span's ``options`` (last year's, this year's, next year's), the one a ``tense`` means: the first
    not yet over for a future, the latest begun for a past, else the one whose middle is nearest ``today``."""
    if tense == "future":
        return next(o for o in options if o[1] > today)
    if tense == "past":
        return [o for o in options if o[0] <= today][-1]
    return min(options, key=lambda o: abs((o[0] + (o[1] - o[0]) / 2 - today).total_seconds()))


def _part_of_month(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """A third of a month ("early May", "mid-March", "the end of next month"): days 1-10, 11-20 or 21 to the end.
    A month named without its year is the next such third when the clause talks about what is to come, the last
    one begun when it reports, and the nearest one otherwise."""
    part, rel, month_word, year = g
    if month_word is not None and month_word.lower() in ("may", "march") and month_word[:1].islower() \
            and m.group(0)[m.start(3) - m.start() - 1] != "-":
        return None  # "start of march": the verb is not the month ("as early may be best")
    words = part.lower().split()  # "early", "mid", or "[the] end of" with any white space between
    third = {"early": 0, "start": 0, "beginning": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}[
        words[-2] if len(words) > 1 else words[0]]

    def days(first: datetime) -> tuple[datetime, datetime]:
        if third == 2:
            return first.replace(day=21), _add_months(first, 1)
        return first.replace(day=1 + 10 * third), first.replace(day=11 + 10 * third)

    if month_word is None and rel.lower() == "the":  # "at the end of the month": see _the_part
        start, end = _the_part([days(_add_months(today.replace(day=1), k)) for k in (-1, 0, 1)], m, today, tense)
        return None if start is None else TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)
    if month_word is None:  # "the end of next month", "mid last month", "early this month"
        offset = {"next": 1, "last": -1}.get((rel or "").lower(), 0)
        start, end = days(_add_months(today.replace(day=1), offset))
        return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)
    month = _month_of(month_word)
    if year is not None:
        start, end = days(datetime(int(year), month, 1, tzinfo=timezone.utc))
        return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), False)
    options = [days(datetime(y, month, 1, tzinfo=timezone.utc)) for y in (today.year - 1, today.year, today.year + 1)]
    if _ENDING.search(m.string, max(0, m.start() - 30), m.start()):
        tense = "future"  # "the course, extended by two weeks, now ending mid-October": when it ends, still to come
    start, end = _yearless_by_tense(options, tense, today)
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True, yearless=True)


def _range(m: re.Match, g: tuple, today: datetime | None, tense: str | None) -> TimeRef | None:
    """A range ("between March and May", "from the 3rd to the 5th", "from 2019 to 2021"): from the first day of
    its first month (day, year) to the last day of its last. A range of months named without its year is the first
    one not over when the clause talks about what is to come, the latest one over by the day it is said when it
    reports, and no date when the clause says neither or tells a habit ("the park is open from April to October"); a
    range of days of the month is placed so, in this month, the last one or the next, the last one when the clause
    says no tense as "on the 3rd" is (in "this", "next" or "last month" when it says so, in the month it names:
    "from the 3rd to the 5th of April"; "of each month" is a rate). A range that ends before it starts runs on into
    the next month or year ("from November to February", "from the 28th to the 3rd")."""
    month1, month2, year, day1, day2, rel, day_month, day_year, year1, year2, christmas = g
    phrase = m.group(0)
    if christmas is not None:  # "between Christmas and New Year": 25 December to 1 January
        if tense is None or _habitual(m):
            return None  # "the office closes between Christmas and New Year": any year's
        weeks = [(datetime(y, 12, 25, tzinfo=timezone.utc), datetime(y + 1, 1, 2, tzinfo=timezone.utc))
                 for y in (today.year - 2, today.year - 1, today.year)]
        if tense == "future":
            start, end = next(o for o in weeks if o[1] > today)
        else:
            start, end = [o for o in weeks if o[0] <= today][-1]
        return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, True)
    if year1 is not None:  # "between 2019 and 2021"
        first, last = sorted((int(year1), int(year2)))
        return TimeRef(datetime(first, 1, 1, tzinfo=timezone.utc).timestamp(),
                       datetime(last + 1, 1, 1, tzinfo=timezone.utc).timestamp(), "days", phrase, False)
    if month1 is not None:
        a, b = _month_of(month1), _month_of(month2)

        def months(y: int) -> tuple[datetime, datetime]:
            start = datetime(y, a, 1, tzinfo=timezone.utc)
            return start, _add_months(start, (b - a) % 12 + 1)

        if year is not None:  # the year is the last month's: "from November to February 2023" ends in 2023
            start, end = months(int(year) - (1 if b < a else 0))
            return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, False)
        if tense is None or _habitual(m):
            return None  # "the park is open from April to October", "we always go from March to May": any year's
        options = [months(y) for y in (today.year - 2, today.year - 1, today.year, today.year + 1)]
    else:
        if _habitual(m):
            return None  # "I usually travel from the 1st to the 5th": any month's
        d1, d2 = int(day1), int(day2)
        if not (1 <= d1 <= 31 and 1 <= d2 <= 31):
            return None
        if day_month is not None:  # "from the 3rd to the 5th of April (2022)": that month's days
            if day_month.lower() in ("may", "march") and day_month[:1].islower() or d2 < d1:
                return None  # "from the 3rd to the 5th may be": the verb
            month = _month_of(day_month)

            def of_year(y: int) -> tuple[datetime, datetime] | None:
                start, end = _safe_date(y, month, d1), _safe_date(y, month, d2)
                return None if start is None or end is None else (start, end + timedelta(days=1))

            if day_year is not None:
                span = of_year(int(day_year))
                return None if span is None else TimeRef(span[0].timestamp(), span[1].timestamp(), "days", phrase,
                                                         False)
            spans = [o for y in (today.year - 1, today.year, today.year + 1) if (o := of_year(y)) is not None]
            if not spans:
                return None
            if tense == "future":
                start, end = next((o for o in spans if o[1] > today), spans[-1])
            elif tense == "past":
                start, end = next((o for o in reversed(spans) if o[1] <= today + timedelta(days=1)), spans[0])
            else:
                start, end = min(spans, key=lambda o: abs((o[0] + (o[1] - o[0]) / 2 - today).total_seconds()))
            return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, True, yearless=True)

        def in_month(first: datetime) -> tuple[datetime, datetime] | None:
            start = _safe_date(first.year, first.month, d1)
            last = _add_months(first, 1) if d2 < d1 else first
            end = _safe_date(last.year, last.month, d2)
            return None if start is None or end is None else (start, end + timedelta(days=1))

        this = today.replace(day=1)
        if rel is not None:
            days = in_month(_add_months(this, {"this": 0, "next": 1, "last": -1}[rel.lower()]))
            return None if days is None else TimeRef(days[0].timestamp(), days[1].timestamp(), "days", phrase, True)
        options = [o for k in range(-3, 4) if (o := in_month(_add_months(this, k))) is not None]
        if not options:
            return None
    if tense == "future":
        start, end = next(o for o in options if o[1] > today)
    else:  # reported, or a range of days said with no tense: the latest one over by the day it is said
        start, end = next((o for o in reversed(options) if o[1] <= today + timedelta(days=1)), options[0])
    return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, True, yearless=month1 is not None)


_WEEK_OF_MONTH = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3,
                  "last": -1, "final": -1}


def easter(year: int) -> datetime:
    """Easter Sunday of ``year`` in the Gregorian calendar (the anonymous Gregorian computus): 9 April 2023, 31 March
    2024."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    k = (32 + 2 * e + 2 * (c // 4) - h - c % 4) % 7
    n = (a + 11 * h + 22 * k) // 451
    month, day = divmod(h + k - 7 * n + 114, 31)
    return datetime(year, month, day + 1, tzinfo=timezone.utc)


_FIXED_HOLIDAYS = {"christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas eve": (12, 24),
                   "xmas day": (12, 25), "xmas": (12, 25), "new years eve": (12, 31), "new years day": (1, 1),
                   "valentines day": (2, 14), "valentines": (2, 14), "halloween": (10, 31),
                   "boxing day": (12, 26), "st patricks day": (3, 17), "saint patricks day": (3, 17)}


def _holiday_days(name: str, year: int) -> tuple[datetime, datetime]:
    """The days ``[start, end)`` holiday ``name`` (lowercase, single-spaced, without apostrophes) is in ``year``."""
    if name in ("black friday", "cyber monday"):  # the Friday and the Monday after US Thanksgiving, the world over
        first = datetime(year, 11, 1, tzinfo=timezone.utc)
        first += timedelta(days=(3 - first.weekday()) % 7 + 21 + (1 if name == "black friday" else 4))
        return first, first + timedelta(days=1)
    if name.endswith(("thanksgiving", "thanksgiving day")):  # the country's: said with it, "Canadian Thanksgiving"
        if name.startswith("canad"):  # the second Monday of October
            first = datetime(year, 10, 1, tzinfo=timezone.utc)
            first += timedelta(days=(0 - first.weekday()) % 7 + 7)
        else:  # the fourth Thursday of November
            first = datetime(year, 11, 1, tzinfo=timezone.utc)
            first += timedelta(days=(3 - first.weekday()) % 7 + 21)
        return first, first + timedelta(days=1)
    if name.startswith(("easter", "good")):
        sunday = easter(year)
        first, n = {"easter sunday": (sunday, 1), "easter monday": (sunday + timedelta(days=1), 1),
                    "good friday": (sunday - timedelta(days=2), 1)}.get(name, (sunday - timedelta(days=2), 4))
        return first, first + timedelta(days=n)
    month, day = _FIXED_HOLIDAYS[name]
    first = datetime(year, month, day, tzinfo=timezone.utc)
    return first, first + timedelta(days=1)


def _holiday(m: re.Match, g: tuple, today: datetime | None, tense: str | None) -> TimeRef | None:
    """A holiday ("at Christmas", "over Easter", "last Halloween", "since New Year's Day", "Christmas 2022"): that
    year's when a year is named; "last" the latest one over before the day it is said, "next" the first one after it,
    "since" the days from the latest one up to the day it is said; otherwise ("this Christmas" too), as a date
    without its year, the next one (the day it is said included) when the clause talks about what is to come or the
    time is what something is for or due by ("a gift for Christmas", "done by Christmas"), the latest one begun when
    it reports. Said with neither, or told as a habit ("at Christmas the whole family gets together", "we always go to
    my parents' at Christmas"), it is any one: no date."""
    lead, name, year = " ".join((g[0] or "").lower().split()), " ".join(g[1].lower().split()), g[2]
    name = re.sub("['\u2019.]", "", name)
    if year is not None:
        start, end = _holiday_days(name, int(year))
        return TimeRef(start.timestamp(), end.timestamp(), "day" if end - start == timedelta(days=1) else "days",
                       m.group(0), False)
    if today is None or _habitual(m):
        return None
    options = [_holiday_days(name, y) for y in (today.year - 1, today.year, today.year + 1)]
    if lead in ("last", "this past"):
        start, end = [o for o in options if o[1] <= today][-1]
    elif lead in ("next", "this coming"):
        start, end = next(o for o in options if o[0] > today)
    elif lead == "since":
        start, end = [o for o in options if o[0] <= today][-1]
        return TimeRef(start.timestamp(), (today + timedelta(days=1)).timestamp(), "days", m.group(0), True,
                       onset_end=min(end, today + timedelta(days=1)).timestamp())
    elif tense == "past" and lead == "after":  # a question's "what did I do after Easter?": the latest one over
        start, end = [o for o in options if o[1] <= today][-1]
    elif tense == "past":
        start, end = [o for o in options if o[0] <= today][-1]
    elif tense == "future" or lead in ("for", "by", "until", "till"):
        start, end = next(o for o in options if o[1] > today)
    else:
        return None  # "at Christmas the whole family gets together", "what do they love during Halloween?": any one
    return TimeRef(start.timestamp(), end.timestamp(), "day" if end - start == timedelta(days=1) else "days",
                   m.group(0), True)


def _habitual(m: re.Match) -> bool:
    """Whether the sentence that holds ``m`` tells a habit ("the last week of May is always busy", "we usually go to my
    parents' at Christmas"): a time said of every such period, no date."""
    text = m.string
    head = text[max(0, m.start() - 120):m.start()]
    head = head[max(head.rfind(c) for c in ".!?\n") + 1:]
    tail = re.match(r"[^.!?\n]{0,120}", text[m.end():m.end() + 120]).group(0)
    return _HABIT.search(head) is not None or _HABIT.search(tail) is not None


def _weekday_of_month(m: re.Match, g: tuple, today: datetime | None, tense: str | None) -> TimeRef | None:
    """A weekday of a month ("the first Monday of April", "the last Friday of May 2022", "the second Tuesday of next
    month"): that day, a month named without its year placed as a week of a month is (:func:`_week_of_month`).
    ``_BEYOND`` (its words name no day, and its weekday none either) for a rate ("the first Saturday of every month")
    or a habit ("the last Friday of May is always busy")."""
    nth, wd_word, rate, rel, month_word, year = g
    if rate is not None or year is None and _habitual(m):
        return _BEYOND
    if month_word is not None and month_word.lower() in ("may", "march") and month_word[:1].islower():
        return None  # "the first Monday in march": the verb is not the month
    k, wd = _WEEK_OF_MONTH[nth.lower()], WEEKDAYS[wd_word.lower()]

    def day(first: datetime) -> tuple[datetime, datetime]:
        if k < 0:  # the last such weekday: back from the month's last day
            last = _add_months(first, 1) - timedelta(days=1)
            d = last - timedelta(days=(last.weekday() - wd) % 7)
        else:
            d = first + timedelta(days=(wd - first.weekday()) % 7 + 7 * k)
        return d, d + timedelta(days=1)

    if year is not None:
        start, _ = day(datetime(int(year), _month_of(month_word), 1, tzinfo=timezone.utc))
        return _ref(start, "day", m.group(0), False)
    if today is None:
        return None
    if month_word is None:  # "the second Tuesday of next month"
        start, _ = day(_add_months(today.replace(day=1), {"next": 1, "last": -1}.get(rel.lower(), 0)))
        return _ref(start, "day", m.group(0), True)
    month = _month_of(month_word)
    start, _ = _yearless_by_tense([day(datetime(y, month, 1, tzinfo=timezone.utc))
                                   for y in (today.year - 1, today.year, today.year + 1)], tense, today)
    return _ref(start, "day", m.group(0), True, yearless=True)


def _week_of_month(m: re.Match, g: tuple, today: datetime | None, tense: str | None) -> TimeRef | None:
    """A week of a month ("the first week of November", "the last week of May 2023", "the second week of next
    month"): days 1-7, 8-14, 15-21 or 22-28, or the month's last seven days. A month named without its year is read
    as a third of it is (:func:`_part_of_month`): the next such week when the clause talks about what is to come, the
    last one begun when it reports, and the nearest one otherwise."""
    nth, rel, month_word, year = g
    k = _WEEK_OF_MONTH[nth.lower()]
    if year is None and _habitual(m):
        return None  # "the last week of May is always busy": every May's

    def days(first: datetime) -> tuple[datetime, datetime]:
        if k < 0:
            end = _add_months(first, 1)
            return end - timedelta(days=7), end
        return first + timedelta(days=7 * k), first + timedelta(days=7 * k + 7)

    if year is not None:
        start, end = days(datetime(int(year), _month_of(month_word), 1, tzinfo=timezone.utc))
        return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), False)
    if today is None:
        return None
    if month_word is None:  # "the last week of next month"
        start, end = days(_add_months(today.replace(day=1), {"next": 1, "last": -1}.get(rel.lower(), 0)))
        return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)
    month = _month_of(month_word)
    options = [days(datetime(y, month, 1, tzinfo=timezone.utc)) for y in (today.year - 1, today.year, today.year + 1)]
    start, end = _yearless_by_tense(options, tense, today)
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True, yearless=True)


# the present of "be", said of a weekend, is what is to come ("are you free", "what is Maya doing", "let's meet"); a
# habit is none ("'s" alone is as often a possessive: "Maya's dog ran off over the weekend")
_PRESENT = re.compile(r"\b(?:am|is|are|'m|'re|let's)\b", re.I)
_HABIT = re.compile(r"\b(?:usually|always|often|normally|typically|generally|every|most|used\s+to)\b", re.I)
_HALF = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "latter": 1, "back": 1}
_THIRD = {"early": 0, "start": 0, "beginning": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
_BY = re.compile(r"\bby\s+$", re.I)
# a deadline someone sets: "I'll finish it by the end of the week", "we're going to launch by", "let's aim to"
_DEADLINE = re.compile(r"\b(?:(?:I|we|you|he|she|they|it)(?:'ll|\s+will|\s+shall|(?:'m|'re|'s|\s+am|\s+are|\s+is)"
                       r"\s+going\s+to|\s+(?:plan|aim|need|have|want|hope|intend|expect)s?\s+to)|let's)\b", re.I)


def _the_part(options: list[tuple[datetime, datetime]], m: re.Match, today: datetime, tense: str | None
              ) -> tuple[datetime, datetime] | tuple[None, None]:
    """Of a third of the last, this and the next month, week or year (``options``, in that order), the one "the end
    of the month" ("the start of the week") names: this one's when it is still to come and the clause talks about what
    is to come, else the next one's; this one's when it has begun and the clause reports before it, else the last one's.
    A clause that says neither is as often a habit ("I pay the rent at the end of the month") or advice as a date:
    no date. "By the end of the month" is a deadline when someone sets it for what is to come ("I'll have it done
    by", "we're going to launch by", "let's aim to"), the end of this one (the next one's when this one's has
    passed), and otherwise no date ("aim to finish a chapter by the end of the month": advice, said of any)."""
    if tense is None:
        return None, None
    head = m.string[max(0, m.start() - 300):m.start()]
    cuts = [c.end() for c in _CLAUSE_END.finditer(head)]
    if _BY.search(m.string, max(0, m.start() - 10), m.start()) \
            and not (tense == "future" and _DEADLINE.search(head, cuts[-1] if cuts else 0)):
        return None, None  # "aim to finish a chapter by the end of the month": advice, of any month
    if tense == "future":
        return next(o for o in options[1:] if o[1] > today)
    if not _PAST_CUE.search(head, cuts[-1] if cuts else 0) \
            and not _reported(m.string, m.start() - len(head) + (cuts[-1] if cuts else 0), m.start(), m.end()):
        return None, None  # "At the end of the week, reflect on whether it has improved": the report is another's
    return next(o for o in reversed(options[:2]) if o[0] <= today)


def _part_of_year(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """A third of a year ("early next year", "mid-2022", "the end of last year"): January to April, May to August or
    September to December; a half ("the first half of the year", "the second half of 2022"): January to June or July
    to December. "The end of the year" is read as "the end of the month" is (:func:`_the_part`), and so is "the first
    half of the year"."""
    part, rel, year = g
    words = part.lower().split()
    if words[0] in _HALF:
        length, index = 6, _HALF[words[0]]
    else:
        length, index = 4, _THIRD[words[-2] if len(words) > 1 else words[0]]

    def days(y: int) -> tuple[datetime, datetime]:
        first = datetime(y, 1 + length * index, 1, tzinfo=timezone.utc)
        return first, _add_months(first, length)

    if year is not None:
        start, end = days(int(year))
        return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), False)
    if rel.lower() == "the":
        start, end = _the_part([days(today.year + k) for k in (-1, 0, 1)], m, today, tense)
        if start is None:
            return None
    else:
        start, end = days(today.year + {"next": 1, "last": -1}.get(rel.lower(), 0))
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)


def _sentence(text: str, a: int, b: int) -> str:
    """The sentence of ``text`` that holds ``text[a:b]`` (at most 200 characters on each side)."""
    lo, hi = max(0, a - 200), min(len(text), b + 200)
    start = max((text.rfind(c, lo, a) for c in ".!?\n"), default=-1) + 1
    ends = [k for k in (text.find(c, b, hi) for c in ".!?\n") if k >= 0]
    return text[max(start, lo):min(ends, default=hi)]


def _two_digit_year(digits: str) -> int:
    """The year a fiscal year's or a quarter's two digits name: "FY24" is 2024, "Q3'98" 1998."""
    return (2000 if int(digits) < 70 else 1900) + int(digits)


_QUARTER_NTH = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2}


def _quarter(m: re.Match, g: tuple, today: datetime | None, tense: str | None) -> TimeRef | None:
    """A quarter, a half or a fiscal year (:data:`_QUARTER_RX`), as the calendar's: "Q3 2024" is July-September 2024,
    "H1 2024" January-June 2024, "FY2024" 2024, "last quarter" the calendar quarter before the one ``today`` is in,
    "Q4 of last year" October-December of the year before. Said without its year ("in Q3", "in the third quarter")
    it is placed by the clause: the next one not over when it talks about what is to come or the quarter is what a
    thing is for or due by ("the allocation for Q3"), the latest begun when it reports, and no date when it says
    neither. None when the text gives its fiscal year another start than January, or a quarter is a game's."""
    text = m.string
    for f in _FISCAL_START.finditer(text):
        verb, first = (f.group(1) or "start").lower(), _month_of(f.group(2) or f.group(4))
        if not (first == 1 and verb != "end" or first == 12 and verb == "end"):
            return None  # "our fiscal year starts in July": its quarters and years are not the calendar's
    gd = m.groupdict()
    lead = _QUARTER_LEAD.search(text, max(0, m.start() - 12), m.start())
    lead = lead.group(1).lower() if lead else ""
    phrase = m.group(0)
    if gd["fy2"] or gd["fy4"]:  # "FY24", "fiscal 2024"
        year = int(gd["fy4"]) if gd["fy4"] else _two_digit_year(gd["fy2"])
        return TimeRef(datetime(year, 1, 1, tzinfo=timezone.utc).timestamp(),
                       datetime(year + 1, 1, 1, tzinfo=timezone.utc).timestamp(), "days", phrase, False)
    year = int(gd["y4"]) if gd["y4"] else _two_digit_year(gd["y2"]) if gd["y2"] else None
    if today is None and year is None:
        return None
    if gd["fynear"]:  # "this fiscal year"
        year = today.year + {"last": -1, "next": 1}.get(gd["fynear"].lower(), 0)
        return TimeRef(datetime(year, 1, 1, tzinfo=timezone.utc).timestamp(),
                       datetime(year + 1, 1, 1, tzinfo=timezone.utc).timestamp(), "days", phrase, True)
    if gd["near"] or gd["past"]:  # "last quarter", "this quarter", "next quarter", "over the past quarter"
        return _near_quarter(today, (gd["near"] or "last").lower(), phrase)
    if gd["h"]:
        length, index = 6, int(gd["h"]) - 1
    elif gd["q"]:
        length, index = 3, int(gd["q"]) - 1
    else:  # "the third quarter"; "the last quarter" is the fourth
        length, index = 3, _QUARTER_NTH.get(gd["nth"].lower(), 3)
    first_month, back = 1 + length * index, 0
    if gd["q2"]:  # "from Q1 to Q3 2024": January to September; "from Q3 to Q1 2024": July 2023 to March 2024 (the
        # year said is the last quarter's)
        quarters = int(gd["q2"]) - index
        if quarters <= 0:
            quarters, back = quarters + 4, 1
        length = 3 * quarters
    rel = (gd["rel"] or "").lower()
    if year is None and rel in ("last", "this", "next"):
        year = today.year + {"last": -1, "next": 1}.get(rel, 0)
    if year is None and not rel:
        # "Q3" alone is as often a question's number and "H1" a heading, and a game has quarters: read after a word
        # that places it, and "the third quarter" in a sentence of no game
        if gd["h"] or not lead or _QUARTER_DESCRIBES.match(text, m.end()) \
                or gd["nth"] and _GAME.search(text, max(0, m.start() - 200), m.end() + 200) \
                or gd["q"] and _EXERCISE.search(_sentence(text, m.start(), m.end())):
            return None
    elif year is None and gd["nth"] and _GAME.search(text[max(0, m.start() - 200):m.end() + 200]):
        return None  # "the last quarter of the year" is a season's; "of the game" is not read
    if year is None and not rel and gd["nth"] and gd["nth"].lower() == "last" and tense == "past":
        return _near_quarter(today, "last", phrase)  # "sales grew in the last quarter": the one before this one

    def days(y: int) -> tuple[datetime, datetime]:
        first = datetime(y - back, first_month, 1, tzinfo=timezone.utc)
        return first, _add_months(first, length)

    if year is not None:
        start, end = days(year)
        return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, gd["y4"] is None and gd["y2"] is None)
    if tense is None and lead in ("for", "by", "until", "till"):
        tense = "future"  # "the $8,000 allocation for Q3": what a thing is for or due by is to come
    if tense is None:
        return None  # "Revenue is strong in Q3": any year's, as a month's range said with no tense is
    start, end = _yearless_by_tense([days(today.year + k) for k in (-1, 0, 1)], tense, today)
    return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, True, yearless=True)


def _near_quarter(today: datetime, near: str, phrase: str) -> TimeRef:
    """The calendar quarter before (``near`` "last"), after ("next") or holding ("this") the one ``today`` is in."""
    first = _add_months(today.replace(day=1), -((today.month - 1) % 3) + 3 * {"last": -1, "next": 1}.get(near, 0))
    return TimeRef(first.timestamp(), _add_months(first, 3).timestamp(), "days", phrase, True)


def _by_clause(options: list[tuple[datetime, datetime]], today: datetime, tense: str | None, phrase: str
               ) -> TimeRef | None:
    """Of yearly periods (``options``, ascending, the last ending after ``today``), the latest begun by ``today`` when
    the clause reports (``tense`` "past"), the coming one or the one under way when it talks about what is to come,
    None when it says neither."""
    if tense is None:
        return None
    if tense == "future":
        start, end = next(o for o in options if o[1] > today)
    else:
        start, end = next(o for o in reversed(options) if o[0] <= today)
    return TimeRef(start.timestamp(), end.timestamp(), "days", phrase, True)


def _decade(m: re.Match) -> TimeRef | None:
    """A decade (:data:`_DECADE_RX`): "the 1990s" is 1990-1999, "the '90s" and "the nineties" too, "the early 2000s"
    2000-2003, "the mid-1980s" 1984-1986, "the late 1970s" 1977-1979. None for a number said of another thing than
    time ("temperatures in the 90s")."""
    part, full, two, bare, word = m.groups()
    if full:
        first = int(full)
    elif two:
        if two == "20":
            return None  # "the '20s": the 1920s or the 2020s
        first = (2000 if two in ("00", "10") else 1900) + int(two)
    else:
        if _NOT_DECADE.search(_sentence(m.string, m.start(), m.end())):
            return None
        first = 1900 + int(bare) if bare else _DECADE_WORDS[word.lower()]
    years = {"early": (0, 4), "mid": (4, 7), "late": (7, 10)}.get((part or "").lower(), (0, 10))
    start = datetime(first + years[0], 1, 1, tzinfo=timezone.utc)
    end = datetime(first + years[1], 1, 1, tzinfo=timezone.utc)
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), False)


def _christmas_break(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """"The Christmas break", "over the holidays": 24 December to 1 January, by the clause (:func:`_by_clause`);
    "the holidays" alone only when said from November to February."""
    if g[0] is not None and today.month not in (11, 12, 1, 2):
        return None
    return _by_clause([(datetime(y, 12, 24, tzinfo=timezone.utc), datetime(y + 1, 1, 2, tzinfo=timezone.utc))
                       for y in (today.year - 2, today.year - 1, today.year)], today, tense, m.group(0))


def _new_year(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """"Since the new year": from the latest 1 January up to ``today``; "over the new year", "at", "for", "around":
    31 December and 1 January; "in the new year", "into", "after", "during": January to April; each of the last two
    by the clause (:func:`_by_clause`)."""
    lead = g[0].lower()
    if lead == "since":
        first = today.replace(month=1, day=1)
        return TimeRef(first.timestamp(), (today + timedelta(days=1)).timestamp(), "days", m.group(0), True,
                       onset_end=(first + timedelta(days=1)).timestamp())
    years = (today.year - 1, today.year, today.year + 1)
    if lead in ("over", "at", "for", "around"):
        options = [(datetime(y - 1, 12, 31, tzinfo=timezone.utc), datetime(y, 1, 2, tzinfo=timezone.utc))
                   for y in years]
    else:
        options = [(datetime(y, 1, 1, tzinfo=timezone.utc), datetime(y, 5, 1, tzinfo=timezone.utc)) for y in years]
        if tense == "future":  # "I'll start in the new year": the year to come, not the one under way
            options = options[2:]
    return _by_clause(options, today, tense, m.group(0))


def _turn_of_year(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """"The turn of the year": 25 December to 7 January, the latest begun by the day it is said when the clause reports,
    the coming one (or the one under way) when it talks about what is to come, no date when it says neither."""
    if tense is None:
        return None
    options = [(datetime(y, 12, 25, tzinfo=timezone.utc), datetime(y + 1, 1, 8, tzinfo=timezone.utc))
               for y in (today.year - 2, today.year - 1, today.year)]
    if tense == "future":
        start, end = next(o for o in options if o[1] > today)
    else:
        start, end = next(o for o in reversed(options) if o[0] <= today)
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)


_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def _season(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """A season of the northern hemisphere, as the weather services count them: spring is March to May, summer
    June to August, autumn September to November, winter December to February. "Last summer" is the latest one over
    before the day it is said, "next summer" the first one begun after it, and "this summer" the one the day is in,
    else the nearest one ("this summer was great", said in October; "this winter", said in May, is the one before),
    or the coming one when the clause talks about what is to come and the nearest is over ("I'll ski this winter",
    said in May); "the summer of 2022" is that year's ("winter 2022" may be either winter, and is no date)."""
    rel, name, named, year = g
    if year is not None:
        if named.lower() == "winter":
            return None
        first = datetime(int(year), _SEASON_START[named.lower()], 1, tzinfo=timezone.utc)
        return TimeRef(first.timestamp(), _add_months(first, 3).timestamp(), "days", m.group(0), False)
    month = _SEASON_START[name.lower()]
    firsts = [datetime(y, month, 1, tzinfo=timezone.utc) for y in range(today.year - 2, today.year + 2)]
    options = [(first, _add_months(first, 3)) for first in firsts]
    rel = " ".join(rel.lower().split())
    if rel in ("last", "this past", "past"):
        start, end = [o for o in options if o[1] <= today][-1]
    elif rel in ("next", "this coming"):
        start, end = next(o for o in options if o[0] > today)
    else:
        now = [o for o in options if o[0] <= today < o[1]]
        start, end = now[0] if now else \
            min(options, key=lambda o: abs((o[0] + (o[1] - o[0]) / 2 - today).total_seconds()))
        if tense == "future" and end <= today:
            start, end = next(o for o in options if o[0] > today)
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)


# An injury said before "in the fall" in its clause: the fall is the one that caused it ("I broke my wrist in the
# fall", "she hurt her hip during the fall"), not autumn ("we moved in the fall"; "in the fall of 2020" is autumn).
_BODY = (r"(?:wrist|ankle|hip|arm|leg|knee|back|head|shoulder|neck|ribs?|nose|tooth|teeth|elbow|foot|feet|hand|"
         r"fingers?|toes?|thumb|collarbone|spine|pelvis|jaw|skull|tailbone|ligament|acl|bones?)")
_INJURY = re.compile(r"\b(?:(?:fractur|injur|sprain|bruis|dislocat|concuss)\w*|wounded|"
                     r"hurt(?:ing)?\s+(?:my|his|her|their|our|your|myself|himself|herself|themselves|ourselves)|"
                     r"(?:got|get|gets|was|were|been|badly)\s+hurt|(?:broke|broken|tore|torn|twisted|cracked)\s+"
                     r"(?:[\w'-]+\s+){0,2}" + _BODY + r")\b", re.I)


def _the_season(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """A season said with "the" ("in the summer", "over the winter", "during the fall"): the latest one begun before
    the day it is said when the clause reports the past ("I learned to swim over the summer", said in May 2023:
    June-August 2022; said in July, the summer it is in; said on 1 June, the summer before), the one the day is in
    or else the next when it talks about what is to come ("I'll go to Italy in the summer": June-August 2023). Said
    with no tense or as a habit ("it's hot in the summer", "we always went to the lake in the summer"), it is any
    summer: no date."""
    if tense is None:
        return None
    clause = m.string[max(0, m.start() - 120):m.start()]
    clause = clause[max(clause.rfind(c) for c in ".!?\n") + 1:]
    if _HABIT.search(clause):
        return None
    if (g[0] or "").lower() == "fall" and _INJURY.search(clause):
        return None  # "I slipped and broke my wrist in the fall": the fall that hurt, no season
    season = (g[0] or g[1]).lower()
    month = _SEASON_START[season]
    options = [(first, _add_months(first, 3)) for first in
               (datetime(y, month, 1, tzinfo=timezone.utc) for y in range(today.year - 2, today.year + 2))]
    if tense == "future":
        start, end = next(o for o in options if o[1] > today)
    else:
        start, end = [o for o in options if o[0] < today][-1]
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)


def _part_of_week(m: re.Match, g: tuple, today: datetime, tense: str | None) -> TimeRef | None:
    """A third of a week ("the start of next week", "late this week", "the end of the week"): Monday and Tuesday,
    Wednesday and Thursday, or Friday to Sunday."""
    part, rel = g
    words = part.lower().split()
    third = _THIRD[words[-2] if len(words) > 1 else words[0]]
    monday = today - timedelta(days=today.weekday())

    def days(first: datetime) -> tuple[datetime, datetime]:
        return first + timedelta(days=2 * third), first + timedelta(days=7 if third == 2 else 2 * third + 2)

    if rel.lower() == "the":
        start, end = _the_part([days(monday + timedelta(days=7 * k)) for k in (-1, 0, 1)], m, today, tense)
        if start is None:
            return None
    else:
        start, end = days(monday + timedelta(days=7 * {"next": 1, "last": -1}.get(rel.lower(), 0)))
    return TimeRef(start.timestamp(), end.timestamp(), "days", m.group(0), True)


# Patterns whose direction the tense decides: a date without a year, a month, a weekday, a day of the month.
# The periods placed from the day they are said by the tense of their clause, each read by its function (``g``: the
# match's groups)
_PLACED_BY_TENSE: dict[str, Callable[[re.Match, tuple, datetime, str | None], TimeRef | None]] = {
    "holiday": _holiday, "part_month": _part_of_month, "week_of_month": _week_of_month, "range": _range,
    "wd_of_month": _weekday_of_month,
    "day_range": _day_range, "part_week": _part_of_week, "part_year": _part_of_year, "half_year": _part_of_year,
    "quarter": _quarter,
    "turn_year": _turn_of_year, "xmas_break": _christmas_break, "new_year": _new_year, "season": _season,
    "the_season": _the_season,
}

_TENSED = frozenset({"over_weekend", "week_of_month", "wd_of_month",
                     "range", "wd_nth", "weeks_on", "span_ahead", "dm_word", "half_year",
                     "quarter",
                     "turn_year", "xmas_break", "new_year",
                     "md_word", "holiday", "open_wd", "bare_wd", "part_month", "part_week", "part_year",
                     "season", "the_season", "md", "dm", "day_range", "nth",
                     "last_wd",
                     "this_wd", "by_wd",
                     "in_month", "this_unit", "in_n"})
_CLAUSE_END = re.compile(r"[.!?;\n]|,\s+(?:but|and|so|though|although|while)\b|\s+but\s+", re.I)
# Who a verb that sets the tense is said of, besides the pronouns: a person named ("Caroline joined a gym at the start
# of the year", "In March Maya will start school": a capitalised word that is no word of a sentence's frame,
# "Everything changed", "Two hundred came"), or one of the speaker's people ("my sister moved in October", "our kids",
# "the kids").
_PERSON_NOUNS = ("mom|mum|mother|dad|father|parents?|sister|brother|siblings?|wife|husband|partner|boyfriend|"
                 "girlfriend|fianc[eé]e?|son|daughter|kids?|children|child|baby|friends?|family|grandma|grandpa|"
                 "grandmother|grandfather|grandparents|aunt|uncle|cousin|niece|nephew|boss|manager|coworkers?|"
                 "colleagues?|roommates?|neighbou?rs?|team|doctor|teacher|coach|mentor")
_NOT_A_NAME = ("(?:I|It|Its|This|That|These|Those|There|Here|Then|Now|So|And|But|Or|If|As|When|What|Where|Which|Who|"
               "Why|How|Everyone|Everybody|Everything|Someone|Somebody|Something|Nobody|Nothing|Anyone|Anything|"
               "One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Hundred|Thousand|Each|Every|All|Both|Some|Many|"
               "Most|Few|No|Not|Just|Also|Only|Even|Still|Yes|Well|Oh|Please|Thanks|Thank|Hey|Hi|Hello|Dear|The|"
               "A|An|My|Our|Your|His|Her|Their|We|He|She|They|You|Today|Tonight|Yesterday|Tomorrow|Last|Next|Red|"
               + "|".join(m.capitalize() for m in _MONTH_NAMES) + "|"
               + "|".join(d.capitalize() for d in WEEKDAYS) + ")")
_PERSON = (r"(?:(?:my|our|his|her|their|the)\s+(?:(?:best|little|big|older|younger|new|old)\s+)?(?:" + _PERSON_NOUNS
           + r"))")
_NAMED = r"(?-i:(?!" + _NOT_A_NAME + r"\b)[A-Z][a-z]+)"
# An arrangement made ("I've booked a flight to Rome in October", "she has registered for a race in May") or being
# made ("I've been training for the marathon in October") is of what is to come: the time is the event's.
_ARRANGED = r"(?:booked|scheduled|planned|reserved|arranged|registered|enrolled|signed\s+up)"
_READYING = r"(?:planning|preparing|training|saving\s+up|getting\s+ready|looking\s+forward|counting\s+down)"
# What someone is asked, told or invited to do, said in the passive ("I was asked to finish it by Friday", "we were
# invited to a wedding in June", "I've been told to", "I got invited to a party on Saturday"), is to come.
_SET_UP = (r"(?:just\s+|already\s+|also\s+)?(?:(?:asked|told|invited|reminded|allowed)\s+to|"
           r"invited\s+for)\b")
# What a timetable says, in the present simple ("I fly to Rome on Friday", "my flight leaves on Friday", "school
# starts in September", "I start my new job on Monday", "in May I turn 30"): what is to come. (A noun after an
# article or a possessive is none: "the move in October", "my return on Friday", nor an infinitive, which what comes
# before it governs: "is expected to arrive on April 4".)
_SCHEDULED_VERB = (r"(?<!\bto\s)(?<!\bthe\s)(?<!\ba\s)(?<!\ban\s)(?<!\bmy\s)(?<!\byour\s)(?<!\bour\s)(?<!\bhis\s)"
                   r"(?<!\bher\s)(?<!\btheir\s)(?<!\bits\s)\b(?:(?:start|begin|leave|depart|arrive|land|open|return|"
                   r"move|graduate|retire|resume)s?|fl(?:y|ies)|launch(?:es)?|kicks?\s+off|takes?\s+off|"
                   r"go(?:es)?\s+live|turns?\s+\d+)\b")
_SCHEDULED = re.compile(_SCHEDULED_VERB + r"(?:\s+[\w'-]+){0,4}\s+$", re.I)
# An arrangement in the present progressive: "I'm flying", "Tom and I are skiing", "my sister is getting", "what are
# you doing", "is Maya coming"; and being free or busy then ("are you free on Friday?", "I'm busy on the 20th"); not
# how one is doing or getting on ("I'm doing well after the surgery on Monday", "I'm getting better")
_ARRANGED_VERB = (r"(?:going|flying|leaving|heading|travell?ing|driving|moving|meeting|seeing|visiting|hosting|having|"
                  r"attending|running|starting|taking|celebrating|throwing|playing|performing|presenting|speaking|"
                  r"training|getting(?!\s+(?:better|worse|well|used|over|sick|tired)\b)|off|skiing|camping|hiking|"
                  r"vacationing|holidaying|touring|competing|racing|"
                  r"graduating|retiring|relocating|returning|coming|spending|staying|launching|opening|joining|"
                  r"interviewing|turning|doing(?!\s+(?:well|great|fine|good|better|worse|okay|ok|alright|amazing|"
                  r"awesome|bad|badly|terrible|much|so|really|pretty|a\s+lot)\b))\b")
_ARRANGING = (
    r"(?:I'm|we're|you're|he's|she's|they're|(?:I|we|you|he|she|they|" + _PERSON + "|" + _NAMED + r")(?:\s+and\s+"
    r"(?:I|me|" + _PERSON + "|" + _NAMED + r"))?\s+(?:am|is|are))\s+(?:(?:\w+\s+)?" + _ARRANGED_VERB + r"|"
    r"(?:free|busy|available|away)\b)|"
    r"\b(?:am|is|are)\s+(?:I|we|you|he|she|they|" + _PERSON + "|" + _NAMED + r")\s+(?:(?:\w+\s+)?" + _ARRANGED_VERB
    + r"|(?:free|busy|available|away)\b)")
# What the speaker will do, plans or has arranged ("I'll", "I'm going to", "I'm training for", "I've got a meeting
# on", "is due", "the review is planned for", "might"), and what says the clause reports the past after all.
_FUTURE_CUE = re.compile(
    # ("will" after a possessive or an article is a document, "I updated my will on November 5"; "free will" an idea)
    r"\b(?:(?<!my\s)(?<!your\s)(?<!the\s)(?<!a\s)(?<!his\s)(?<!her\s)(?<!our\s)(?<!free\s)will|won't|'ll|shall|"
    r"help\s+you\s+(?:to\s+)?(?!with\b)\w+|going\s+to|gonna|plan(?:s|ning)?\s+(?:to|on)|planned\s+(?:for|on)|"
    r"scheduled|"
    r"intend(?:s|ing)?\s+to|hop(?:e|es|ing)\s+to|wants?\s+to|wanna|(?:would|'d)\s+(?:like|love)|"
    r"(?:can|shall)\s+we|good\s+luck|wish\s+(?:me|you|us)\s+luck|looking\s+forward|can't\s+wait|"
    r"upcoming|coming\s+up|(?:training|preparing|prepare|ready)\s+for|about\s+to|expect(?:s|ing)?\s+to|"
    r"aim(?:s|ing)?\s+(?:to|for)|deadline|due|next|should|might|could|see\s+you|excited\s+to|get\s+started|"
    r"(?:I|we|you)(?:'ve\s+got|\s+have\s+got|\s+have)\s+(?:a|an|my|our|the)\b|"
    r"(?:have|has|'ve|'s)\s+(?:already\s+|just\s+)?(?:" + _ARRANGED + r"|been\s+" + _READYING + r")|"
    r"(?:was|were|been|got|get|gets|am|is|are|'m|'re)\s+" + _SET_UP + r"|"
    + _ARRANGING + r")", re.I)
# A future a person says, with its subject ("I'll", "we won't", "Maya is going to", "I'm gonna", an arrangement: "I'm
# flying", "my sister is getting married", "we have to", "I have a meeting"): the verb group that governs a time said
# right before it ("On Friday I'm flying to Rome"), and one that a past said earlier in the clause is not ("I went to
# the doctor and I'll go again in April").
_SUBJECT = (r"(?:I|we|you|he|she|they|" + _PERSON + "|" + _NAMED + r")(?:\s+and\s+(?:I|me|" + _PERSON + "|" + _NAMED
            + r"))?")  # a person or two: "my team and I", "Tom and I"
_FUTURE_GROUP = re.compile(
    r"\b(?:" + _SUBJECT + r"(?:'ll|\s+will|\s+won't|\s+shall|"
    r"(?:\s+are|'re|'m|\s+am|\s+is|'s)\s+(?:going\s+to|gonna)|\s+gonna|"
    # ("I have to say", "I want to thank", "I must admit" are said of what was as often: no future)
    r"\s+(?:(?:have|has|need|needs|plan|plans|want|wants|hope|hopes)\s+to(?!\s+(?:say|admit|confess|agree|mention|"
    r"thank|tell\s+you))|(?:have|'ve\s+got|have\s+got)\s+"
    r"(?:a|an|my|our|the)\b))|let's|" + _ARRANGING + r")", re.I)
# what a future of remembering or telling is of: as often what happened ("I'll never forget our trip in October")
_RECALLING = re.compile(r"\b(?:forget|remember|miss|tell\s+(?:\w+\s+)?about|talk\s+about|think\s+(?:about|of)|"
                        r"share|show\s+(?:\w+\s+)?(?:the\s+)?(?:photos|pictures|pics))\b", re.I)
# right after the time, a timetable's present of a person is what is to come too ("On Friday I fly to Rome"; before
# it, "did I begin" is a past)
_WILL_AFTER = re.compile(r",?\s+(?=" + _FUTURE_GROUP.pattern[2:] + r"|" + _SUBJECT + r"\s+" + _SCHEDULED_VERB + r")",
                         re.I)
# "let's" a few words before the time ("Let's meet on Friday", "let's go to the beach on Saturday"); further off the
# time is as often an object's, a meeting's that a chat's lagging timestamp has passed ("let's discuss the details in
# our meeting on the 17th")
_LETS = re.compile(r"\blet's\s+(?:[\w'-]+\s+){0,4}$", re.I)
# ... and a question about what one can do, at most six words before the time ("Can I finish this in April?", "Is it
# realistic to move in June?"); not one that asks to tell of what was ("Can I tell you about my trip in April?"), nor
# a "how can I" whose time is further off, as often another verb's ("How can I support the program, introduced on
# October 1, ...")
_CAN_I = re.compile(r"\b(?:can\s+I\s+(?!(?:[\w'-]+\s+)?(?:tell|ask|share|show|talk|remind|remember|recall|describe|"
                    r"mention)\b)|is\s+it\s+(?:\w+\s+)?(?:possible|realistic|feasible|doable|too\s+late|too\s+early|"
                    r"wise|smart|a\s+good\s+idea)\s+to\s+)(?:[\w'-]+\s+){0,6}$", re.I)
_STARTING = re.compile(r"\b(?:starting|beginning|effective|as\s+of|from)\s+(?:on\s+)?$", re.I)
_DATE_AFTER = re.compile(r",?\s+(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"|" + _MONTH +
                         r"\.?\s+\d)", re.I)
_SPAN_LEAD = re.compile(r"(?:in|over|during|within|for|throughout)\s", re.I)
_TITLE_CASE = re.compile(r"(?:[A-Z][a-z]+\s+)+[A-Z][a-z]+")
# ("since" that gives a reason, "especially since my exam is in October", and "I was wondering if", "I was hoping
# to", which ask politely about what is to come, report nothing)
_PAST_CUE = re.compile(r"\b(?:ago|yesterday|yday|yest|last|already(?!\s+" + _ARRANGED + r"\b)|went|"
                       r"(?:was|were)(?!\s+(?:just\s+|really\s+)?(?:wondering|thinking|hoping|curious|planning|"
                       r"considering)\b|\s+" + _SET_UP + r")|did|had|happened|used\s+to|"
                       r"since(?!\s+(?:\w+\s+){0,3}?(?:is|are|am|will|won't|can|can't|need|needs|have\s+to|has\s+to|"
                       r"want|wants|plan|plans)\b|\s+(?:\w+\s+){0,2}?\w+(?:'re|'m|'ll)\b)|"
                       r"(?:have|has|'ve|'s)\s+(?:already\s+|just\s+)?(?!" + _ARRANGED + r"\b)(?:been(?!\s+" + _READYING
                       + r"\b|\s+" + _SET_UP + r")|\w+ed))\b", re.I)
# A simple past the cues above miss, said by a person right before or after the time ("I finished it by Friday", "At
# the start of the year I joined a gym", "we finally moved in October"): a subject pronoun ("it" is as often the
# object of a plan: "I'll have it finished by Friday", "get it signed by Friday"), at most two adverbs, and a regular
# past ("-ed", not "need" or "feed") or an irregular one ("won't" is no "won"). The past of a verb that sets up what
# is to come is left out: an arrangement ("I booked a table for Friday"), a wish, a decision or a request, whose
# infinitive governs the date ("I wanted to finish by Friday", "I decided to move in October", "I asked him to"), a
# verb that says, learns or thinks a clause of its own ("I mentioned I'm free on Friday", "I realized the exam is next
# week"), and a past after "if", a supposition ("If I joined a gym at the end of the month, would that help?").
_PAST_IRREGULAR = ("went|ran|saw|bought|made|took|gave|met|kept|left|brought|began|wrote|ate|drew|sang|won|lost|"
                   "built|taught|caught|became|blew|came|dealt|dug|drank|drove|fell|fought|fled|flew|forgave|"
                   "froze|grew|hid|held|led|lent|paid|rode|rang|sought|sold|sent|shook|slept|spoke|spent|stood|stole|"
                   "struck|swam|threw|woke|wore|withdrew|did|had|was|were|sat|burnt|leapt|broke|got|tore|beat|shot|"
                   "hung")
_PAST_SETUP = ("planned|booked|scheduled|rescheduled|reserved|arranged|registered|enrolled|signed|postponed|delayed|"
               "extended|pushed|promised|decided|agreed|hoped|wanted|intended|expected|needed|asked|offered|"
               "volunteered|invited|meant|ordered|requested|proposed|suggested|committed|confirmed|cancell?ed|"
               "recommended|mentioned|realized|realised|noticed|guessed|figured|assumed|remembered|reminded|announced|"
               "explained|replied|answered|wondered|worried|imagined|believed|supposed|heard|emailed|texted|messaged|"
               "chose|tried")
# After a name the verb is in lowercase, so that a heading's "Task Completed" is none, and a participle that describes
# a thing ("Payment required by Friday"), a noun in -ed ("Ikea bed arriving by Friday") or a feeling ("Super excited
# about Paris at the end of the month", "Really stressed") is no report of a person.
_DESCRIBING = ("required|needed|expected|allowed|accepted|welcomed|preferred|included|attached|listed|provided|based|"
               "located|limited|closed|reserved|booked|scheduled|planned|updated|completed|approved|renewed|"
               "due|hundred|red|bed|shed|sled|excited|interested|tired|bored|scared|worried|stressed|overwhelmed|"
               "thrilled|pleased|delighted|relieved|exhausted|motivated|inspired|surprised|disappointed|frustrated|"
               "confused|amazed|blessed|pumped|stoked|obsessed|prepared|committed|determined|concerned|ashamed|"
               "embarrassed|annoyed|energized|energised|exhilarated|devastated|heartbroken|gutted|honou?red|humbled|"
               "impressed|intrigued|shocked|stunned|terrified|touched|fed")
_VERB_ADVERBS = (r"(?:(?:just|finally|already|actually|recently|also|only|then|even|first|eventually|never|really|"
                 r"officially|both|all|originally)\s+){0,2}")
_PAST_VERB = (r"(?!(?:" + _PAST_SETUP + r")\b|(?:had|got)\s+to\b|(?:was|were|got)\s+" + _SET_UP + r")"
              r"(?:[a-z]*[a-df-z]ed|agreed|freed|" + _PAST_IRREGULAR + r")\b(?!['’]t\b)")
_SIMPLE_PAST = re.compile(
    r"(?<!\bif\s)(?<!\bunless\s)\b(?:(?:I|we|he|she|they|" + _PERSON + r")\s+" + _VERB_ADVERBS + _PAST_VERB
    + r"|(?-i:" + _NAMED + r"\s+" + _VERB_ADVERBS + r"(?!(?:" + _DESCRIBING + r")\b)" + _PAST_VERB + r")"
    # a relative clause's past after its noun: "the conference that started on Monday", "the box which arrived"
    + r"|(?<=\w\s)(?:that|which|who)\s+" + _VERB_ADVERBS + r"(?!(?:" + _DESCRIBING + r")\b)" + _PAST_VERB + r")", re.I)
_TO_OR_FOR = re.compile(r"\bto\s+$|\bfor\s+(?:[\w'-]+\s+){0,3}$", re.I)
_SIMPLE_PAST_AFTER = re.compile(r",?\s+(?=(?:I|we|he|she|they|" + _PERSON + "|" + _NAMED + r")\s)", re.I)
# "back in November", "back on the 30th": then, in the past; but "back" after a verb of coming, going or being is a
# return, said of what is to come unless the clause reports the past ("I'll be back on the 30th", "I fly back on
# Friday"; "I was back on the 30th" is told)
_BACK = re.compile(r"\bback\s+$", re.I)
_RETURN = re.compile(r"\b(?:be|am|'m|is|'s|are|'re|come|comes|coming|go|goes|going|get|gets|getting|fly|flies|"
                     r"flying|head|heads|heading|drive|drives|driving|travel|travels|travell?ing|return|returns|"
                     r"returning|move|moves|moving)\s+back\s+$", re.I)
# "back" after a verb of answering is the answer, no return and no "then": "I'll hear back in November", "we'll get
# the results and call back on Friday" (the clause's other words say its tense: "I heard back in November" is told)
_ANSWER_BACK = re.compile(r"\b(?:hear|hears|heard|hearing|call|calls|called|calling|ring|rings|rang|ringing|phone|"
                          r"phones|phoned|phoning|write|writes|wrote|writing|text|texts|texted|texting|e-?mail|"
                          r"e-?mails|e-?mailed|e-?mailing|message|messages|messaged|messaging|reply|replies|replied|"
                          r"replying|report|reports|reported|reporting|circle|circles|circled|circling|check|checks|"
                          r"checked|checking)\s+back\s+$", re.I)
_IS_ON = re.compile(r"\b(?:is|are|'s)\s+(?:now\s+|still\s+|set\s+|moved\s+|rescheduled\s+|scheduled\s+)?"
                    r"(?:(?:on|for|in|at)\s*)?$", re.I)
# a verb that moves a thing back by a span, or reaches back over one: "back" is then no "ago"
_MOVED_BACK = re.compile(r"\b(?:push\w*|set|sets|setting|mov\w*|put|puts|putting|delay\w*|bump\w*|pull\w*|roll\w*|"
                         r"shift\w*|postpon\w*|knock\w*|step\w*|go|goes|going|gone|went|dat(?:e|es|ed|ing)|trac\w+|"
                         r"reach\w*|look\w*|think\w*|thought|turn\w*|fell|fall\w*|pushed)\b(?:\s+[\w'-]+){0,3}\s*$",
                         re.I)
_PER_UNIT = re.compile(r"\b(?:per|times|how\s+many|number\s+of|hours|days|weeks|months|minutes|sessions|"
                       r"pages|words)\b[^.!?;,]*$", re.I)


# A clause that only says who told or heard what the sentence says, after a comma and closing it or set off by commas
# ("We're meeting on Friday, I was told.", "The party is on Saturday, I heard", "On Friday, she said, we're meeting"):
# its past is of the telling, not of the time, which the rest of the sentence places.
_TOLD = re.compile(r"[^.!?\n]{0,160}?(,\s*(?:" + _SUBJECT + r")\s+(?:(?:was|were|(?:have|has|'ve|had)\s+been|got)\s+"
                   r"(?:told|informed|reminded)|(?:just\s+)?(?:heard|hear|said|says|read|learned|learnt|think|thought|"
                   r"guess|guessed|believe|believed|reckon|gather|understand|mentioned|told\s+(?:me|us|him|her|them)|"
                   r"was\s+saying)))\s*(?=[.!?,;)\n]|$)", re.I)


def _tense(text: str, a: int, b: int) -> str | None:
    """``"future"`` when the clause around ``text[a:b]`` talks about what is to come, ``"past"`` when it reports
    what happened, None when it does not say. A clause that says who told what the sentence says ("We're meeting on
    Friday, I was told") is read without: its past is the telling's."""
    told = _TOLD.match(text, b)
    if told is not None:
        return _clause_tense(text[:told.start(1)] + text[told.end(1):], a, b)
    return _clause_tense(text, a, b)


def _clause_tense(text: str, a: int, b: int) -> str | None:
    """:func:`_tense` of a sentence without a clause that says who told it."""
    start = _clause_start(text, a)
    tail = _CLAUSE_END.search(text, b, min(len(text), b + 200))
    before = text[max(0, a - 40):a]
    returning = _RETURN.search(before) is not None
    if not returning and _BACK.search(before) and not _ANSWER_BACK.search(before):
        return "past"
    # the verb group that holds the time governs it, not a past said elsewhere in the clause: a future right after
    # the time ("I was busy, on Friday I'm flying to Rome"; "On Friday I'll send the draft that was late"), and a
    # past before it unless a future of a person follows that past ("I went to the doctor and I'll go again in April")
    after = _WILL_AFTER.match(text, b)
    # (after a comma, the future is the time's only when the time opens its clause: "On Friday, I'll send it"; not
    # "you've watched 8 movies over the weekend, let's plan the next")
    if after is not None and ("," not in after.group(0) or len(text[start:a].split()) <= 2):
        return "future"
    last = None
    for last in _PAST_CUE.finditer(text, start, a):
        pass
    end = tail.start() if tail else min(len(text), b + 200)
    future = _FUTURE_GROUP.search(text, start, a) if last is None else None
    if future is not None and not _RECALLING.search(text, future.end(), a):
        # a future before the time holds it up to the comma that follows it: a past after that comma is a remark of
        # its own ("I'll send it on Friday, I already told Ana"), while what one will remember or tell of may be
        # past ("I'll never forget our trip in October, it was amazing")
        comma = text.find(",", b, end)
        end = end if comma < 0 else comma
    if last is not None and not _FUTURE_GROUP.search(text, last.end(), a) or _reports_after(text, b, end):
        return "past"
    if returning:  # "I'll be back on the 30th", "she flies back on Friday": a return still to come
        return "future"
    if _reported(text, start, a, b):
        return "past"
    # what governs a date is said before it ("I'm training for ... in October") or right after it ("on Friday
    # I'll ..."); a cue further on belongs to another verb ("my journaling starting April 1 will help me")
    if _FUTURE_CUE.search(text[start:a]) or _IS_ON.search(text[start:a]) or _LETS.search(text, start, a) \
            or _CAN_I.search(text, max(start, a - 120), a) \
            or _SCHEDULED.search(text, start, a) or after is not None:
        return "future"
    return None


# a perfect said with a modal after the time is a goal set by then, not a report ("by the end of the first week of
# April, you should have gathered your sources", "by Friday, we will have finished")
_MODAL_PERFECT = re.compile(r"\b(?:will|shall|should|must)\s+$", re.I)


def _reports_after(text: str, b: int, end: int) -> bool:
    """Whether a past cue said after the time, up to ``end``, reports it: one not of a modal's perfect."""
    for cue in _PAST_CUE.finditer(text, b, end):
        if not _MODAL_PERFECT.search(text, max(b, cue.start() - 12), cue.start()):
            return True
    return False


def _clause_start(text: str, a: int) -> int:
    """Where the clause holding ``text[a]`` starts (at most 300 characters before it)."""
    lo = max(0, a - 300)
    cuts = [m.end() for m in _CLAUSE_END.finditer(text, lo, a)]
    return cuts[-1] if cuts else lo


def _reports(text: str, a: int, b: int) -> bool:
    """Whether a person's simple past governs ``text[a:b]`` in its clause (:func:`_reported`)."""
    return _reported(text, _clause_start(text, a), a, b)


def _reported(text: str, start: int, a: int, b: int) -> bool:
    """Whether a person's simple past (:data:`_SIMPLE_PAST`) governs ``text[a:b]``: the verb right after it ("At the
    start of the year I joined a gym"), or, when no other verb of a person follows it ("on Monday I'll send it", "in
    the summer I travel"), the last verb said before it in its clause (from ``start``) with no word of the future
    between ("I finished it by Friday", not "I finished the draft and I'll send it by Friday"). A time that a thing
    is moved to or is for ("I moved the meeting to this Friday", "I printed the tickets for this Friday", "I packed
    for the trip this weekend") is what is to come, and the verb before says nothing of it."""
    if _WILL_AFTER.match(text, b):
        return False
    after = _SIMPLE_PAST_AFTER.match(text, b)
    # after a comma, the subject is the time's own only when the time opens its clause ("On Friday, we celebrated";
    # not "I'm going to the mixer on May 10, Laura recommended it")
    if after is not None and ("," not in after.group(0) or len(text[start:a].split()) <= 2):
        return _SIMPLE_PAST.match(text, after.end()) is not None
    if _TO_OR_FOR.search(text, max(start, a - 40), a):
        return False
    last = None
    for last in _SIMPLE_PAST.finditer(text, start, a):
        pass
    return last is not None and not _FUTURE_CUE.search(text, last.end(), a) \
        and not _IS_ON.search(text[last.end():a])


# Every pattern needs one of these words or a number (or 元年, the first year of a Japanese era): one search rules
# most messages out before the patterns run.
_ANY = re.compile(r"\d|\b(?:yesterday|yday|yest|today|tonight|tonite|tmrw|tmrrw|tmr|tomoz|tomm?orr?ow|ago|back|last|"
                  r"next|"
                  r"this|past|on|in|since|during|from|"
                  r"morning|night|month|week|weekend|year|other day|spring|summer|fall|autumn|winter|" +
                  "|".join(_DECADE_WORDS) + r"|" +
                  r"christmas|xmas|holidays?|easter|halloween|valentines?|thanksgiving|boxing|patrick'?s|wknd|wkend|" +
                  _MONTH[1:-1] + r"|" + _WEEKDAY[1:-1] + r"|mon|tues?|wed|thu|thurs?|fri|sat|sun)\b|元年|"
                  r"昨|今日|今天|明日|明天|明後日|前天|后天|後天|어제|오늘|내일|모레|그제|그저께|"
                  r"आज|कल|परसों|परसो", re.I)

# The same search on the folded text (:func:`_folded`), case-sensitive: its words are lowercase, and folding keeps
# every character's length, word-ness and digit-ness, so it finds a match exactly where _ANY does, three times
# faster than matching case-insensitively.
_ANY_FOLDED = re.compile(_ANY.pattern)


def find(text: str, now: float | None, offset: float | None = None) -> list[TimeRef]:
    """Every time expression in ``text`` resolved against ``now`` (the message's epoch timestamp or None), in text
    order, without overlaps. Without ``now`` only absolute dates resolve.

    ``offset`` (seconds east of UTC, the timestamp's own: ``MessageRow.utc_offset``) puts the message on the
    speaker's calendar: "yesterday" said at 23:30 on 3 March in New York (04:30 UTC on 4 March) is 2 March. The
    periods are the days of that calendar as every date is kept (from midnight UTC: "2 March 2023" is the same
    interval whether written or resolved). Without it the calendar is UTC's."""
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    if offset is not None and not is_utc_offset(offset):
        raise InvalidInput(f"offset must be seconds east of UTC within a day or None, got {offset!r}")
    now, _ = _on_calendar(_checked_now(now), offset)
    return _find(text, _checked_now(now), _PATTERNS, since=True)


def _on_calendar(now: float | None, offset: float | None) -> tuple[float | None, float | None]:
    """(``now`` moved onto the calendar of ``offset``, the offset) when both are known; (``now``, None) otherwise: the
    UTC day is read. The callers pass a checked ``now`` (:func:`_checked_now`, within the years read) and offset
    (within a day), so the local day is one a datetime holds."""
    if now is None or offset is None:
        return now, None
    return now + offset, offset


# A question's period is read as before the days reaching back were read in messages: "in the last week" asked is
# the calendar week before the memory's latest message, and "over the past few months" no period. Recall is measured
# with these windows; reading those phrases in questions is a change of ranking of its own. A count of days or weeks
# back ("the past few days", "the last couple of weeks", "the past 10 days") is read as in a message: those days up
# to the asker's, which no other pattern reads. Every other expression is read as in a message, from the asker's
# day: "the day after tomorrow", the counts from a day ("two weeks from today"), "since Tuesday" (the days from the
# last Tuesday up to the asker's), "the week after next", "by Friday" and the thirds of a month ("mid-March"), which
# read by their last word, or not at all, named other days.
_QUERY_SPAN_BACK = re.compile(rf"\b(?:(?:in|over|during|within|for|throughout) )?the (?:last|past) {_NUM} "
                              r"(days|weeks|fortnights)\b(?!'|\s+(?:of|before|after|prior|until|till)\b)", re.I)
_QUERY_BOUNDED = {name: re.compile(rx.format(lead=r"before|after|prior\s+to|"), re.I)
                  for name, rx in (("holiday", _HOLIDAY_RX), ("nth", _NTH_RX), ("the_season", _THE_SEASON_RX),
                                   ("last_wd", _LAST_WD_RX))}
_QUERY_PATTERNS = [(name, _QUERY_SPAN_BACK if name == "span_back" else _QUERY_BOUNDED.get(name, rx))
                   for name, rx in _PATTERNS]


# "since March", "since last summer", "since 2019": the period from then up to the day it is said, as "since Tuesday"
# is (a question's "since March" is open on the right: :func:`_bounds`). A day ("since May 2") is the day.
_SINCE_PERIODS = frozenset({"my", "in_month", "year", "last_unit", "season", "part_month", "part_year", "decade"})
_SINCE = re.compile(r"\bsince\s+$", re.I)


def _since(name: str, m: re.Match, ref: TimeRef, now: datetime | None) -> TimeRef:
    """``ref`` (pattern ``name``'s reading of ``m``), or the days from its start up to the day of ``now``, that day
    included, when it is a month, a season or a year said after "since" and begun by then."""
    if name not in _SINCE_PERIODS or now is None or ref is _BEYOND or ref.granularity == "weekend":
        return ref
    if not (m.group(0)[:6].lower() == "since " or _SINCE.search(m.string, max(0, m.start() - 12), m.start())):
        return ref
    end = _day_start(now) + timedelta(days=1)
    if not ref.start < end.timestamp():
        return ref  # "since 2030" said in 2023: no period up to the day it is said
    return TimeRef(ref.start, end.timestamp(), "days", ref.phrase, ref.relative,
                   onset_end=min(ref.end, end.timestamp()))


# A list of days of one month: "on March 3 and 5", "March 3, 5 and 7", "on the 3rd and the 5th", "the 3rd and 5th of
# March": each day, in the month (and the year) its named day is read in. A list ends with "and" ("On March 3, 5
# people came" is a count) and its days go forward; a number before a word it counts is none ("March 3 and 5 more").
_LISTING = frozenset({"md", "md_word", "nth", "dm", "dmy"})
_LISTED_DAY = r"(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\b"
_DAYS_AFTER = re.compile(r"((?:\s*,\s*" + _LISTED_DAY + r")*)(?:\s*,)?\s+(?:and|&)\s+" + _LISTED_DAY
                         + r"(?!\s*(?:[-\u2013/:.]\d|%|[ap]\.?m\b)|\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z]))"
                         r"(?:,?\s+((?:19|20)\d{2})\b)?", re.I)
# a list of ordinals before what they count: "on the 3rd and 5th floors" (no day, the first one either)
_ORDINALS_COUNTING = re.compile(r"(?:\s*,\s*(?:the\s+)?\d{1,2}(?:st|nd|rd|th))*(?:\s*,)?\s+(?:and|&|or)\s+(?:the\s+)?"
                                r"\d{1,2}(?:st|nd|rd|th)\s+(?!" + _GOES_ON + r"\b)(?-i:[a-z])", re.I)
_DAYS_BEFORE = re.compile(r"(?:(?<=\bon\s)|(?<=\bthe\s)|(?<![\w$\u00a3\u20ac.,:/-])(?=\d{1,2}(?:st|nd|rd|th)))"
                          r"(\d{1,2})(?:st|nd|rd|th)?\b((?:\s*,\s*" + _LISTED_DAY + r")*)(?:\s*,)?\s+(?:and|&)\s+"
                          r"(?:the\s+)?$", re.I)
_A_DAY = re.compile(_LISTED_DAY, re.I)


def _listed_days(name: str, m: re.Match, ref: TimeRef) -> list[tuple[int, int, TimeRef]]:
    """The days of a list that ``m`` (a day of pattern ``name``, read as ``ref``) opens ("on March 3 and 5", "on the
    3rd and the 5th") or closes ("the 3rd and 5th of March"), each with where it is said, in text order, the day of
    ``m`` among them; empty when ``m`` is in no list."""
    if ref is _BEYOND or ref.granularity != "day" or name == "nth" and not m.group(0).lower().startswith("on "):
        return []
    text = m.string
    first = datetime.fromtimestamp(ref.start, tz=timezone.utc)
    said: list[tuple[int, int, int]] = []  # (start, end, day) of the other days
    year = None
    if name in ("md", "md_word", "nth") and not (name == "md_word" and m.group(4) is not None):
        after = _DAYS_AFTER.match(text, m.end())
        if after is None or _COUNTED.match(text, after.end()):
            return []  # "On March 3 and 4 of us went": a count
        said = [(d.start(1), d.end(), int(d.group(1))) for d in _A_DAY.finditer(text, after.start(), after.start(3))]
        last = _A_DAY.match(text, after.start(3))
        said.append((last.start(1), last.end(), int(last.group(1))))
        year = after.group(4)
        days = [first.day] + [d for _, _, d in said]
    elif name in ("dm", "dmy"):  # "the 3rd and 5th of March", "3rd and 5th March 2024"
        before = _DAYS_BEFORE.search(text, max(0, m.start() - 60), m.start())
        if before is None:
            return []
        one = _A_DAY.match(text, before.start(1))
        said = [(one.start(1), one.end(), int(one.group(1)))]
        said += [(d.start(1), d.end(), int(d.group(1))) for d in _A_DAY.finditer(text, before.start(2), before.end(2))]
        days = [d for _, _, d in said] + [first.day]
    else:
        return []
    if any(not a < b for a, b in zip(days, days[1:])):
        return []  # "March 5 and 3": no list of days that go forward
    month_first = datetime(int(year), first.month, 1, tzinfo=timezone.utc) if year else first.replace(day=1)
    out = []
    for a, b, day in said:
        d = _safe_date(month_first.year, month_first.month, day)
        if d is None:
            return []
        out.append((a, b, TimeRef(d.timestamp(), (d + timedelta(days=1)).timestamp(), "day", text[a:b],
                                  ref.relative and year is None, ref.yearless and year is None)))
    own = ref
    if year is not None:
        d = month_first.replace(day=first.day)
        own = TimeRef(d.timestamp(), (d + timedelta(days=1)).timestamp(), "day", ref.phrase, False, False)
    out.append((m.start(), m.end(), own))
    out.sort(key=lambda t: t[0])
    return out


# "the week of November 6", "the week of 6 November": the seven days from the day named (the week a planner names by
# its first day), not the day alone
_WEEK_OF = re.compile(r"\bweek\s+of\s+(?:the\s+)?$", re.I)


def _week_of(m: re.Match, ref: TimeRef) -> TimeRef:
    """``ref``, or the week from its day when the day is said after "the week of"."""
    if ref is _BEYOND or ref.granularity != "day" or not _WEEK_OF.search(m.string, max(0, m.start() - 16), m.start()):
        return ref
    return TimeRef(ref.start, ref.start + 7 * DAY, "week", ref.phrase, ref.relative, ref.yearless)


# the characters case-insensitive matching takes for ASCII letters, and those letters (the case kept)
_FOLDS_ONTO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")
_ASCII_LETTER = str.maketrans({"\u0130": "I", "\u0131": "i", "\u017f": "s", "\u212a": "K"})
# Per pattern, where its matches can begin (:func:`hippo.text.anchors.starts`), read on first use: a pattern is tried
# only there, instead of at every position of a long message.
_STARTS: dict[re.Pattern, tuple[tuple[str, ...], int] | None] = {}
_UNREAD = object()


def _find(text: str, now: float | None, patterns: list[tuple[str, re.Pattern]], since: bool = False
          ) -> list[TimeRef]:
    """:func:`find` with ``patterns`` (a selection of :data:`_PATTERNS`, in their order); with ``since``, a period
    said after "since" lasts up to ``now`` (:func:`_since`)."""
    if "\u2019" in text:  # a phone's apostrophe ("I\u2019ll", "won\u2019t", "last year\u2019s") is the typed one
        text = text.replace("\u2019", "'")
    low = _folded(text)
    lang: bool | None = None
    if not _ANY_FOLDED.search(low):
        lang = _has_lang_word(low)
        if not lang:
            return []
    ref_dt = datetime.fromtimestamp(now, tz=timezone.utc) if now is not None else None
    spans: list[tuple[int, int, TimeRef]] = []
    # the spans taken so far, disjoint, by start (their ends then ascend too): a match overlaps one of them iff it
    # overlaps the last one starting before it ends (a long message with code holds hundreds of numbers)
    starts: list[int] = []
    ends: list[int] = []
    month: bool | None = None
    weekday: bool | None = None
    # English words are read from their ASCII letters: case-insensitive matching takes the dotted and the dotless i,
    # the long s and the Kelvin sign for "i", "s" and "k" ("next FRİDAY" typed on a Turkish keyboard), and the
    # tables that read the words hold the letters (other languages' words are read from the text as written)
    english = text.translate(_ASCII_LETTER) if _FOLDS_ONTO_ASCII.search(text) else text
    places = anchors.Places(english, low)
    holds: dict[int, bool] = {}  # per list of words (by identity), whether the text holds one
    for name, rx in patterns:
        source = english
        if name in ("lang_day", "lang_unit", "lang_count", "lang_wd", "lang_bare_wd", "lang_month"):
            source = text
            if lang is None:
                lang = _has_lang_word(low)
            if not lang:
                continue
        needs = _NEEDS.get(name, ())
        if needs:
            held = holds.get(id(needs))
            if held is None:
                held = holds[id(needs)] = any(map(low.__contains__, needs))
            if not held:
                continue
        if needs is _WEEKDAY_STARTS:
            if weekday is None:
                weekday = _WEEKDAY_WORD_FOLDED.search(low) is not None
            if not weekday:
                continue
        if needs is _MONTH_STARTS:
            if month is None:
                month = _MONTH_WORD.search(text) is not None
            if not month:
                continue
        key = _STARTS.get(rx, _UNREAD)
        if key is _UNREAD:
            key = _STARTS[rx] = anchors.starts(rx)
        for m in anchors.matches(rx, key, places, source):
            a, b = m.span()
            k = bisect_left(starts, b)
            if k and ends[k - 1] > a:
                continue
            ref = _resolve(name, m, ref_dt, _tense(source, a, b) if name in _TENSED else None)
            if since and ref is not None:
                ref = _since(name, m, ref, ref_dt)
            if ref is not None:
                ref = _week_of(m, ref)
            if ref is None:
                continue
            listed = _listed_days(name, m, ref) if name in _LISTING else ()
            # a time past the years read keeps its words: "Dec 31" of "Dec 31, 9999" is no date
            for a, b, ref in listed or ((a, b, ref),):
                k = bisect_left(starts, b)
                if k and ends[k - 1] > a:
                    continue
                spans.append((a, b, ref))
                starts.insert(k, a)
                ends.insert(k, b)
    spans.sort(key=lambda t: t[0])
    return [r for _, _, r in spans if r is not _BEYOND]


def event_time(text: str, now: float | None) -> TimeRef | None:
    """The event time a message reports: its first past-or-present time expression (a plan for "next week" is
    also an event, dated in the future). None when the text carries no time expression."""
    refs = find(text, now)
    return refs[0] if refs else None


# -- queries ---------------------------------------------------------------------------------------------------

_TEMPORAL_Q = re.compile(
    r"\b(when|what (?:time|date|day|year|month|week)|which (?:year|month|day|date)|how long|how many "
    r"(?:days|weeks|months|years)|before|after|first|last|earliest|latest|most recent(?:ly)?|recently|ago|since|"
    r"until|during|in what order|order|sequence|timeline|chronolog\w*|date|dated|yesterday|"
    r"(?:19|20)\d{2})\b", re.I)
_ORDER_Q = re.compile(
    r"\b(in what order|what order|order of|in order|sequence|timeline|chronolog\w*|progress(?:ion|ed)?|"
    r"over time|evolv\w*|first\b.*\bthen|before or after|which came first|how (?:has|have|did) .{1,40} "
    r"chang\w*|history of)\b", re.I)
_CURRENT_Q = re.compile(r"\b(now|current(?:ly)?|these days|still|latest|at the moment|today|anymore|any more)\b",
                        re.I)
# A question asking for a span of time ("How long has Nate had his turtles?", "For how long ...", "How many years
# ...") is answered by a message that states one ("I've had them for 3 years now"), which carries no date.
_SPAN_Q = re.compile(r"\bhow\s+long\b|\bhow\s+many\s+(?:minutes|hours|days|weeks|months|years|decades)\b", re.I)
_SPAN_UNIT = r"(?:minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|wks?|months?|years?|yrs?|decades?)"
_SPAN_COUNT = (r"(?:\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
               r"thirty|forty|fifty|a\s+few|a\s+couple(?:\s+of)?|several|many|half\s+an?|a\s+half)")
_SPAN_UNIT_STARTS = ("min", "hour", "hr", "day", "night", "week", "wk", "month", "year", "yr", "decade")
# a span as said: "3 years", "a few months", "two-week", "half a year", "a year and a half"
_SPAN = re.compile(r"\b" + _SPAN_COUNT + r"(?:\s+|-)" + r"(?:more\s+|whole\s+|full\s+)?" + _SPAN_UNIT + r"\b",
                   re.I)


@dataclass(frozen=True)
class QueryTime:
    temporal: bool           # the query asks about time ("when", "before", dates...)
    ordering: bool           # the query asks for an order or a progression
    current: bool            # the query asks for the current value ("now", "currently")
    window: tuple[float, float] | None  # a period the query names ("in May 2023"; "before May 2023": from -inf)
    span: bool = False       # the query asks for a span of time ("how long", "how many years")
    yearless: bool = False   # every date of the period is named without its year ("April 6-7", "in May")
    # the offset from UTC (seconds east) of the calendar the period's days are on, None for UTC's: ``window`` holds
    # its days as every date is kept (from midnight UTC), and an instant is in them by the wall clock it was read on
    offset: float | None = None


def analyze_query(query: str, now: float | None = None, offset: float | None = None) -> QueryTime:
    """Temporal intent of ``query``; a period it names is resolved against ``now`` (the memory's latest
    timestamp: "in November", "last week") or, without it, only when absolute ("in May 2023"). ``offset`` (seconds
    east of UTC: the latest message's ``utc_offset``, the asker's) puts ``now`` on that calendar, as :func:`find`
    does a message's: "yesterday" asked after a message said at 23:30 on 3 March in New York is 2 March, a day of
    New York's calendar (``QueryTime.offset``). Without it the calendar is UTC's. Cached: a recall reads it at
    several stages, and an agent asks again. A ``now`` on a day outside the years read (``_FIRST_YEAR`` to
    ``_LAST_YEAR``) is read as none."""
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a str, got {type(query).__name__}")
    if offset is not None and not is_utc_offset(offset):
        raise InvalidInput(f"offset must be seconds east of UTC within a day or None, got {offset!r}")
    return _analyze_query(query, _checked_now(now), offset)


@functools.lru_cache(maxsize=256)
def _analyze_query(query: str, now: float | None, offset: float | None) -> QueryTime:
    """:func:`analyze_query` of its checked arguments."""
    window = None
    now, offset = _on_calendar(now, offset)
    now = _checked_now(now)
    found = _find(query, now, _QUERY_PATTERNS)
    located = _anchored(query, _with_open_years(query, _with_open_months(query, _located(query, found), now)))
    refs = [ref for _, ref in located]
    open_ended = False
    for at, ref in located:
        lo, hi = _bounds(query, at, ref)
        open_ended = open_ended or lo == -math.inf or hi == math.inf
        window = (lo, hi) if window is None else (min(window[0], lo), max(window[1], hi))
    return QueryTime(temporal=bool(_TEMPORAL_Q.search(query)) or window is not None,
                     ordering=bool(_ORDER_Q.search(query)), current=bool(_CURRENT_Q.search(query)), window=window,
                     span=bool(_SPAN_Q.search(query)),
                     yearless=bool(refs) and not open_ended and all(r.yearless for r in refs),
                     offset=None if window is None else offset)


# "before May 2023", "until June", "since March 2023", "after the 3rd": the period the query asks about is open on
# one side. "The week before August 3", "two days after the party on May 5", "the Sunday before October 25" name a
# time next to the date instead, which the date itself stands for.
_BEFORE = re.compile(r"\b(?:(?P<strict>before|prior\s+to)|until|till|up\s+to)\s+(?:the\s+)?$", re.I)
_AFTER = re.compile(r"\b(?:(?P<strict>after)|since)\s+(?:the\s+)?$", re.I)
_LEAD = re.compile(r"(?:since|after|before|prior\s+to|until|till)\s+", re.I)
_NEXT_TO = re.compile(r"\b(?:days?|nights?|weeks?|weekends?|fortnights?|months?|years?|mornings?|evenings?|"
                      r"afternoons?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?)\s+"
                      r"(?:before|after|prior\s+to)\s+(?:the\s+)?$", re.I)


# "before May", "until June": a month a question bounds, which the month patterns of messages do not read ("after May"
# in a message is no date of its own). Questions only.
_OPEN_MONTH = re.compile(r"\b(?:before|after|until|till) " + _MONTH + r"\b(?!\.?\s*,?\s*\d)", re.I)


# "before 2022", "after 2019", "until 2020": a year a question bounds, which the year pattern of messages does not read
# ("after 2019" in a message dates nothing); a count of a unit ("before 2000 words") is no year. Questions only.
_OPEN_YEAR = re.compile(r"\b(?:before|after|until|till) ((?:19|20)\d{2})\b(?!\s*(?:words|hours|minutes|seconds|"
                        r"calories|steps|dollars|euros|pounds|points|people|users|miles|km|meters|metres|pages|"
                        r"lines|tokens|characters|items|rows|records|times)\b)", re.I)


def _located(query: str, refs: list[TimeRef]) -> list[tuple[int, TimeRef]]:
    """Each of ``refs`` (:func:`find`'s, in text order) with where its phrase starts in ``query``."""
    out, after = [], 0
    for ref in refs:
        at = query.find(ref.phrase, after)
        out.append((at, ref))
        after = at + len(ref.phrase)
    return out


def _with_open_months(query: str, located: list[tuple[int, TimeRef]], now: float | None
                      ) -> list[tuple[int, TimeRef]]:
    """``located`` and the months ``query`` bounds without a day or a year ("before May"), each the latest such
    month up to ``now``, in text order."""
    if now is None or now != now:
        return located
    ref_dt = datetime.fromtimestamp(now, tz=timezone.utc)
    found = list(located)
    for m in _OPEN_MONTH.finditer(query):
        if m.group(1)[:1].islower() and m.group(1).lower() in ("may", "march"):
            continue  # "before may": the verb
        if any(a < m.end() and m.start() < a + len(r.phrase) for a, r in located):
            continue
        month = _month_of(m.group(1))
        year = ref_dt.year if month <= ref_dt.month else ref_dt.year - 1
        if not _FIRST_YEAR <= year <= _LAST_YEAR:
            continue  # "before May" asked in January of the year 1: no May before it that a date is read in
        found.append((m.start(), _ref(datetime(year, month, 1, tzinfo=timezone.utc), "month", m.group(0), True)))
    return sorted(found, key=lambda t: t[0]) if len(found) > len(located) else located


def _with_open_years(query: str, located: list[tuple[int, TimeRef]]) -> list[tuple[int, TimeRef]]:
    """``located`` and the years ``query`` bounds ("before 2022", :data:`_OPEN_YEAR`), in text order."""
    found = list(located)
    for m in _OPEN_YEAR.finditer(query):
        if any(a < m.end() and m.start() < a + len(r.phrase) for a, r in located):
            continue
        found.append((m.start(), _ref(datetime(int(m.group(1)), 1, 1, tzinfo=timezone.utc), "year", m.group(0),
                                      False)))
    return sorted(found, key=lambda t: t[0]) if len(found) > len(located) else located


_BETWEEN_ANCHOR = re.compile(r"\s*(?:before|after|prior\s+to)\s+(?:the\s+)?", re.I)
# "last Friday on 23 January, 2022", "last week, as mentioned on November 6, 2023": the day the relative expression
# was said on
_SAID_ON = re.compile(r"\s*,?\s*(?:as\s+(?:\w+\s+)?(?:mentioned|said|stated|discussed|noted|shared|told|written)\s+)?"
                      r"on\s+(?:the\s+)?", re.I)


def _anchored(query: str, located: list[tuple[int, TimeRef]]) -> list[tuple[int, TimeRef]]:
    """``located`` with a relative expression that a date anchors ("last weekend before April 10, 2023") resolved
    against that date instead of the memory's latest timestamp, in place of both: the weekend of 8-9 April 2023,
    not the one before the last message. One said on a date ("last Friday on 23 January, 2022", "last week, as
    mentioned on November 6, 2023") is resolved against it too, and the date kept beside it (the message that
    said it was said then): 21-23 January 2022, not every day from 23 January 2022 to the last message's Friday."""
    out: list[tuple[int, TimeRef]] = []
    k = 0
    while k < len(located):
        at, ref = located[k]
        if k + 1 < len(located) and ref.relative and not located[k + 1][1].relative:
            nxt, anchor = located[k + 1]
            if _BETWEEN_ANCHOR.fullmatch(query, at + len(ref.phrase), nxt):
                again = find(ref.phrase, anchor.start)
                if again:
                    out.append((at, again[0]))
                    k += 2
                    continue
            if _SAID_ON.fullmatch(query, at + len(ref.phrase), nxt):
                again = find(ref.phrase, anchor.start)
                if again:
                    out += [(at, again[0]), (nxt, anchor)]
                    k += 2
                    continue
        out.append((at, ref))
        k += 1
    return out


_HEAD_CHARS = 80


def _bounds(query: str, at: int, ref: TimeRef) -> tuple[float, float]:
    """The interval of ``query`` that ``ref`` (its phrase starting at ``at``) marks: ``ref`` itself, or open on one
    side when the query asks for what was before, until, after or since it."""
    # the words just before the phrase decide, and the patterns are short: a window of them (with the character
    # before it, so that a word cut by the window does not read as a whole one) keeps a question of many dates linear
    lo = max(0, at - _HEAD_CHARS)
    head = query[max(0, lo - 1):at]
    lead = _LEAD.match(ref.phrase)  # the phrase may hold its preposition: "since March 2023"
    if lead:
        head += lead.group(0)
    if not head or _NEXT_TO.search(head):
        return ref.start, ref.end
    if ref.granularity == "days" and lead and lead.group(0)[:1] in "sS":
        return ref.start, ref.end  # "since Tuesday": the days from then up to the asker's, which it holds already
    m = _BEFORE.search(head)
    if m:
        return -math.inf, (ref.start if m.group("strict") else ref.end)
    m = _AFTER.search(head)
    if m:
        return (ref.end if m.group("strict") else ref.start), math.inf
    return ref.start, ref.end


_MAX_YEARS = 100


def each_year(window: tuple[float, float], first: float | None, last: float | None
              ) -> list[tuple[float, float]]:
    """``window`` and the same dates in the other years of a history said from ``first`` to ``last`` (epoch
    seconds): the copies shifted by whole years that overlap ``[first, last]``, ``window`` first.

    A question that names a date without its year ("the titles I mentioned for April 6-7") is resolved against
    the history's last message, the nearest such date to it. In a history of more than a year the April meant may
    be any of its Aprils, and the question does not say which."""
    if not (isinstance(window, tuple) and len(window) == 2 and all(isinstance(x, (int, float)) for x in window)
            and window[0] == window[0] and window[1] == window[1] and window[0] < window[1]):
        raise InvalidInput(f"window must be a (start, end) pair of epoch seconds with start < end, got {window!r}")
    for name, value in (("first", first), ("last", last)):
        if value is not None and not isinstance(value, (int, float)):
            raise InvalidInput(f"{name} must be epoch seconds or None, got {type(value).__name__}")
    if not EPOCH_MIN <= window[0] < window[1] <= EPOCH_END:
        raise InvalidInput(f"window must lie within the years 1 to 9999, got {window!r}")
    for name, value in (("first", first), ("last", last)):
        if value is not None and value == value and not EPOCH_MIN <= value < EPOCH_END:
            raise InvalidInput(f"{name} must lie within the years 1 to 9999, got {value!r}")
    lo, hi = window
    if first is None or last is None or not (first == first and last == last) or last < first:
        return [window]
    start = datetime.fromtimestamp(lo, tz=timezone.utc)
    end = datetime.fromtimestamp(hi, tz=timezone.utc)
    y0 = datetime.fromtimestamp(first, tz=timezone.utc).year
    y1 = datetime.fromtimestamp(last, tz=timezone.utc).year
    out = [window]
    for year in range(max(y0, y1 - _MAX_YEARS), y1 + 1):
        k = year - start.year
        if k == 0:
            continue
        s = _shifted(start, k)
        e = _shifted(end, k)
        if e > s and s.timestamp() <= last and e.timestamp() > first:
            out.append((s.timestamp(), e.timestamp()))
    return out


def _shifted(d: datetime, years: int) -> datetime:
    """``d`` moved by whole ``years``; 29 February becomes 28 February in a common year."""
    try:
        return d.replace(year=d.year + years)
    except ValueError:
        return d.replace(year=d.year + years, day=28)


def states_span(text: str) -> bool:
    """Whether ``text`` states a span of time: a count and a unit ("for 3 years", "a few months", "two-week",
    "half an hour"). The answer a "how long" question asks for, and no date (:func:`find` reads dates)."""
    if not isinstance(text, str):
        return False
    low = _folded(text)
    for unit in _SPAN_UNIT_STARTS:  # every match names a unit: most messages name none, and the pattern is not run
        if unit in low:
            return _SPAN.search(text) is not None
    return False
