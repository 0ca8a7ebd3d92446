"""Which way a relative time expression points: forward when the speaker talks about the future, back when they
report, and no date at all when the words name a span, a rate or a heading.

Each case is synthetic and pins a resolution a review of real conversations found wrong (docs/time_and_truth.md,
"Precision, checked by hand"); the expected dates are worked out by hand from the calendar."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

import hippo
from hippo.text import timeexpr


def at(*a) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


def label(text: str, now: float) -> str | None:
    ref = timeexpr.event_time(text, now)
    return None if ref is None else ref.label()


MAY_10 = at(2023, 5, 10, 12)      # a Wednesday


@pytest.mark.parametrize("text, now, want", [
    # plans point forward
    ("I'm training for the Dublin half marathon in October", MAY_10, "October 2023"),
    ("We will visit my aunt in March", MAY_10, "March 2024"),
    ("Next March we fly to Rome", MAY_10, "March 2024"),
    ("I've got a meeting with my family on March 25 to discuss the house", at(2024, 5, 2), "25 March 2025"),
    ("The next review is planned for September 15, but you can add notes before", at(2025, 2, 20),
     "15 September 2025"),
    ("I'm meeting her on Friday", MAY_10, "12 May 2023"),
    # what the speaker is doing at a time named: an arrangement, still to come
    ("I'm camping on Saturday", MAY_10, "13 May 2023"),
    ("She's graduating on the 30th", MAY_10, "30 May 2023"),
    ("We're skiing in January with the kids", at(2023, 12, 28, 12), "January 2024"),
    ("See you this Friday!", MAY_10, "12 May 2023"),
    ("The party is on the 3rd", MAY_10, "3 June 2023"),
    ("I'll talk to Sam before our meeting on the 17th", at(2024, 9, 18), "17 October 2024"),
    ("I'll see you in a week", MAY_10, "week of 15 May 2023"),
    ("I'll start by having a chat with Ana this weekend.", at(2024, 3, 15), "weekend of 16 March 2024"),
    ("Here are some steps to help you implement the new structure this week:", at(2024, 3, 3),
     "week of 4 March 2024"),  # said on a Sunday
    # "back" after a verb of coming, going or being is a return, and a return is still to come unless told
    ("I'll be back on the 30th", MAY_10, "30 May 2023"),
    ("I'm going back on the 3rd", MAY_10, "3 June 2023"),
    ("Mom flies back on Friday", MAY_10, "12 May 2023"),
    ("I'll be back in October", MAY_10, "October 2023"),
    ("I was back on the 30th", MAY_10, "30 April 2023"),
    # a week after the next one; a weekday something lasts since; a weekday a thing is due by
    ("We move the week after next", MAY_10, "week of 22 May 2023"),
    ("the weekend after next we fly to Rome", MAY_10, "weekend of 20 May 2023"),
    ("the party is the Friday after next", MAY_10, "19 May 2023"),
    ("I start the week after next", at(2023, 12, 28, 12), "week of 8 January 2024"),
    ("I've been sick since Tuesday", MAY_10, "9-10 May 2023"),
    ("I've been sick since Wednesday", MAY_10, "3-10 May 2023"),
    ("I need the draft by Friday", MAY_10, "12 May 2023"),
    ("I'm away until Monday", MAY_10, "15 May 2023"),
    ("I had finished it by Monday", MAY_10, "8 May 2023"),
    # a third of a month: days 1-10, 11-20 or 21 to its end, the year by the tense like a month's
    ("I went to Paris in mid-March", MAY_10, "11-20 March 2023"),
    ("I'll be in Paris in mid-June", MAY_10, "11-20 June 2023"),
    ("The start of June was rainy", MAY_10, "1-10 June 2022"),
    ("The report is due at the end of next month", MAY_10, "21-30 June 2023"),
    ("I'll finish it by end\nof June", MAY_10, "21-30 June 2023"),  # a line break between the words
    ("We moved in early May 2021", MAY_10, "1-10 May 2021"),
    # since then, up to the day it is said
    ("I've been documenting it since late February", at(2024, 3, 3), "21 February-3 March 2024"),
    ("the course that was extended by two weeks, now ending mid-October", at(2024, 9, 15), "11-20 October 2024"),
    ("In early January we'll fly to Oslo", at(2023, 12, 28, 12), "1-10 January 2024"),
    ("In late December we skied", at(2024, 1, 2, 12), "21-31 December 2023"),
    # "back on the 30th" alone is then, in the past, and said on the 10th "back on the 10th" is last month's
    ("Back on the 30th we had a party", MAY_10, "30 April 2023"),
    ("That was back on the 10th", MAY_10, "10 April 2023"),
    # reports point back
    ("I ran the Dublin half marathon in October", MAY_10, "October 2022"),
    ("I got my first tattoo back in November, a small fern.", at(2024, 2, 7), "November 2023"),
    ("I met her on Friday", MAY_10, "5 May 2023"),
    ("We married on the 3rd", MAY_10, "3 May 2023"),
    ("On the 3rd Sam came over", MAY_10, "3 May 2023"),
    # the month the day is of, when it is said
    ("The money was transferred on the 20th of this month", MAY_10, "20 May 2023"),
    ("We meet on the 3rd of next month", MAY_10, "3 June 2023"),
    ("we met on the 3rd and talked for hours", MAY_10, "3 May 2023"),
    ("This weekend was so much fun", at(2024, 3, 18), "weekend of 16 March 2024"),
    ("I've been so busy this week", at(2024, 3, 3), "week of 26 February 2024"),
    # "my will" is a document, not the future
    ("I just updated my will to add my accounts on November 5", at(2024, 11, 12), "5 November 2024"),
    ("I confirmed with my attorney on February 12 that my will complies", at(2025, 2, 20), "12 February 2025"),
    # a future word that governs another verb does not turn the date
    ("My daily journaling starting April 1 will help me understand myself", at(2024, 6, 1), "1 April 2024"),
    ("It's 75% complete by July 5, with 12 of 16 scenes filmed, can you help me meet the deadline",
     at(2024, 7, 10), "5 July 2024"),
    # a date a plan names that passed days ago is that date, not next year's
    ("Managing your time to meet the September 1 deadline for your edit", at(2024, 9, 5), "1 September 2024"),
    # without a tense, the nearest such date
    ("Extending your reading goal to 12 books by March 1 is a great ambition!", at(2023, 12, 12), "1 March 2024"),
    ("on December 20 we married", at(2023, 1, 9), "20 December 2022"),
    ("it improved by 15 points since May 25 when I paid off the card", at(2024, 9, 2), "25 May 2024"),
    # a weekday followed by its date is that date
    ("Please join us on Tuesday, June 5, at 10 AM.", at(2024, 5, 2), "5 June 2024"),
    # "a month ago" is about thirty days back
    ("I bought a kayak a month ago, can't wait for summer.", at(2023, 10, 30), "week of 27 September 2023"),
])
def test_direction_follows_what_the_speaker_talks_about(text, now, want):
    assert label(text, now) == want


@pytest.mark.parametrize("text, now", [
    ("Multiply your weekly income by the number of weeks you plan to work in a month", at(2024, 5, 10)),
    ("Be realistic about what you can accomplish in a day.", at(2024, 6, 1)),
    ("Review Action Items from Last Week (5 minutes): discuss status", at(2024, 3, 3)),
    ("read a standalone novel one week and a book from a series the next week", at(2024, 2, 28)),
    ("spend 15 minutes reviewing past week's progress, 30 minutes planning", at(2024, 9, 5)),
    # an ordinal that counts something is no day of the month
    ("I live on the 3rd floor, next to the lift", MAY_10),
    ("we won it on the 18th hole", MAY_10),
    ("a lecture on the 21st century economy", MAY_10),
    ("the rent is paid on the 1st of each month", MAY_10),   # a rate, no day
])
def test_spans_rates_and_headings_are_no_dates(text, now):
    assert timeexpr.event_time(text, now) is None


def test_a_plan_is_shown_with_its_coming_date_in_context():
    mem = hippo.Memory()
    mem.add("I'm training for the Dublin half marathon in October!", speaker="Maya", timestamp=datetime(2023, 5, 10))
    mem.add("I ran my first marathon in October, it was tough.", speaker="Tom", timestamp=datetime(2023, 5, 10))
    text = mem.recall("When is Maya's half marathon?", budget_tokens=200).text
    assert "Maya (October 2023): I'm training for the Dublin half marathon" in text
    text = mem.recall("When did Tom run his first marathon?", budget_tokens=200).text
    assert "Tom (October 2022): I ran my first marathon" in text


_TEXTS = [
    "I moved here in 2019 and started on March 3rd, 2021; the launch is next Friday, see 2024-05-01.",
    "three weeks ago we met, and in two months it ships. Last night was fun, tomorrow too.",
    "Meeting on the 14th, then this coming June, then this weekend; the day before yesterday it rained.",
    "\u0130N 2020 we left; \u017fince 1999; \u0131n 2021; ON MAY 5; Jan. 3, 2022; 7 of Sept 2023",
    "The market summary: primary numbers only, no dates at all -- 12-34-5678, 3 months, a year.",
    "Since March I have run this past Sunday and last week; on Monday, this Tuesday, next month.",
    "def parse(x):\n    return x[2023-1:12]  # in 10 days, 5 years ago, this year, during 2018",
    "Back by mid-March, the Middle of May or the end of next month; in the last week, since Friday, by Monday, "
    "the week after next, over the past couple of days; end\nof May.",
    "Two weeks ago on Monday, over the weekend, the other day, since last Friday; on Sunday, 3 weeks ago.",
]


@pytest.mark.parametrize("text", _TEXTS)
def test_skipping_patterns_a_message_cannot_match_changes_nothing(text, monkeypatch):
    # reference: every pattern run on every text (a need that every text holds, a month search that always passes)
    now = at(2024, 6, 15, 12)
    fast = timeexpr.find(text, now)
    monkeypatch.setattr(timeexpr, "_NEEDS", {name: ("",) for name in timeexpr._NEEDS})
    monkeypatch.setattr(timeexpr, "_MONTH_WORD", timeexpr.re.compile(""))
    assert timeexpr.find(text, now) == fast
    assert fast or text.startswith("The market")


def test_month_and_weekday_names_do_not_follow_the_locale():
    # an application may set LC_TIME before importing hippo: the calendar module then names months in that language,
    # while the patterns match English words (a German "Mai" table made "on May 5" raise KeyError in add)
    import subprocess
    import sys

    code = (
        "import calendar\n"
        "calendar.month_name = ['', 'Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August',"
        " 'September', 'Oktober', 'November', 'Dezember']\n"
        "calendar.month_abbr = ['', 'Jan', 'Feb', 'Mär', 'Apr', 'Mai', 'Jun', 'Jul', 'Aug', 'Sep', 'Okt', 'Nov', 'Dez']\n"
        "calendar.day_name = ['Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag', 'Samstag', 'Sonntag']\n"
        "from datetime import datetime, timezone\n"
        "from hippo.text import timeexpr\n"
        "now = datetime(2024, 6, 15, 12, tzinfo=timezone.utc).timestamp()\n"
        "print(timeexpr.event_time('We met on May 5, 2023.', now).label())\n"
        "print(timeexpr.event_time('See you next Friday in October', now).label())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["5 May 2023", "21 June 2024"]


def _german_locale(tmp_path):
    """A directory holding a compiled de_DE.UTF-8 locale (for LOCPATH), or None where none can be made."""
    import os
    import shutil
    import subprocess

    if shutil.which("localedef") is None or not os.path.exists("/usr/share/i18n/locales/de_DE"):
        return None
    subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(tmp_path / "de_DE.UTF-8")],
                   capture_output=True, text=True, timeout=120)
    return tmp_path if (tmp_path / "de_DE.UTF-8").exists() else None


def test_dates_written_into_a_context_are_english_whatever_the_locale(tmp_path):
    # an application may set LC_TIME (here German): strftime's month names then follow it, while the dates hippo
    # writes next to a message, and the days it heads a session with, are English ("7 Mai 2023" was written)
    import os
    import subprocess
    import sys

    locales = _german_locale(tmp_path)
    if locales is None:
        pytest.skip("no German locale can be compiled here")
    code = (
        "import locale\n"
        "locale.setlocale(locale.LC_TIME, 'de_DE.UTF-8')\n"
        "from datetime import datetime\n"
        "assert datetime(2023, 5, 1).strftime('%B') == 'Mai'\n"
        "import hippo\n"
        "from hippo.text import timeexpr\n"
        "print(timeexpr.event_time('we met in the last week', datetime(2023, 5, 10, 12).timestamp()).label())\n"
        "mem = hippo.Memory()\n"
        "mem.add('I went to the support group yesterday', speaker='Caroline', timestamp=datetime(2023, 5, 8))\n"
        "print(mem.recall('support group').text)\n"
    )
    env = {**os.environ, "LOCPATH": str(locales)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert "3-10 May 2023" in out.stdout
    assert "[8 May 2023]" in out.stdout and "Caroline (7 May 2023): I went to the support group" in out.stdout
    assert "Mai" not in out.stdout


@pytest.mark.parametrize("text, want", [
    # the days as chats type them (hippo.text.shorthand), and the common misspellings of "tomorrow"
    ("first day at the aquarium tmrw!!", "11 May 2023"),
    ("see u tommorow", "11 May 2023"),
    ("went to the vet yday", "9 May 2023"),
    ("party 2nite", "10 May 2023"),
    ("2day was so long", "10 May 2023"),
])
def test_the_days_as_chats_type_them(text: str, want: str) -> None:
    assert label(text, MAY_10) == want
    assert label(text, None) is None  # relative: nothing without the message's time


def test_a_timer_in_code_is_no_day() -> None:
    assert label("clearTimeout(tmr); tmr = setTimeout(poll, 500)", MAY_10) is None
    assert label("if tmr: tmr.cancel()", MAY_10) is None
    assert label("tmr && clearTimeout(tmr)", MAY_10) is None


@pytest.mark.parametrize("text, want", [
    # "tmr", as chats in Singapore and Hong Kong type "tomorrow", between spaces and before no operator
    ("see u tmr!", "11 May 2023"),
    ("Tmr we go hiking", "11 May 2023"),
    ("meeting tmr at 3", "11 May 2023"),
    ("we fly the day after tmr", "12 May 2023"),
])
def test_tmr_between_words_is_tomorrow(text: str, want: str) -> None:
    assert label(text, MAY_10) == want


@pytest.mark.parametrize("text, now, want, start, end", [
    # a period reaching back from the message: from that long before it up to its day, that day included
    ("I've run three times in the last week", MAY_10, "3-10 May 2023", at(2023, 5, 3), at(2023, 5, 11)),
    ("I've been so tired over the past few days", MAY_10, "7-10 May 2023", at(2023, 5, 7), at(2023, 5, 11)),
    ("the last couple of days were busy", MAY_10, "8-10 May 2023", at(2023, 5, 8), at(2023, 5, 11)),
    ("in the past two weeks I read four books", MAY_10, "26 April-10 May 2023", at(2023, 4, 26), at(2023, 5, 11)),
    ("So much has happened in the last month", at(2023, 7, 16, 16), "16 June-16 July 2023", at(2023, 6, 16),
     at(2023, 7, 17)),
    ("I've learned a lot over the past year", at(2024, 1, 5, 9), "5 January 2023-5 January 2024", at(2023, 1, 5),
     at(2024, 1, 6)),
    ("the past 3 months were hard", at(2024, 5, 31), "29 February-31 May 2024", at(2024, 2, 29), at(2024, 6, 1)),
])
def test_a_period_reaching_back_from_the_message_ends_on_its_day(text, now, want, start, end):
    ref = timeexpr.event_time(text, now)
    assert ref is not None and (ref.label(), ref.start, ref.end) == (want, start, end)


@pytest.mark.parametrize("text", [
    "the last week of May is always busy",       # a week of May, not the week before the message
    "I cried on the last day of school",         # the final day
    "the last two days of the sprint are for testing",
    "look at the skills you developed over the past 22 years",  # the length of a career
    "over the past months I changed a lot",      # no saying how many
    "at the end of the day it is your call",     # no month
    "as early may be better, start now",         # "may" the verb
])
def test_the_last_of_something_is_no_period_reaching_back(text):
    assert timeexpr.event_time(text, MAY_10) is None


def test_a_period_reaching_back_is_shown_filtered_and_kept_across_a_reopen(tmp_path):
    path = tmp_path / "m.db"
    said = datetime(2022, 4, 17, 18, 44, tzinfo=timezone.utc)
    with hippo.Memory(path) as mem:
        item = mem.add("I've been reading a lot in the past week!", speaker="Nate", timestamp=said)
        assert "Nate (10-17 April 2022): I've been reading" in mem.recall("What has Nate been reading?").text
    with hippo.Memory(path) as mem:
        assert "Nate (10-17 April 2022): I've been reading" in mem.recall("What has Nate been reading?").text
        # the days it covers, and not the calendar week before (4-10 April)
        assert [h.id for h in mem.search("reading", since=datetime(2022, 4, 12), until=datetime(2022, 4, 14))] \
            == [item.id]
        assert mem.search("reading", since=datetime(2022, 4, 4), until=datetime(2022, 4, 10)) == []


@pytest.mark.parametrize("text, want", [
    # said on Wed 10 May 2023; worked out from the calendar
    ("We meet the day after tomorrow.", "12 May 2023"),
    ("I'll see her 3 days from now.", "13 May 2023"),
    ("I'll see her two weeks from today.", "24 May 2023"),
    ("a fortnight from today we leave", "24 May 2023"),
    ("The deadline is a week from Friday.", "19 May 2023"),
    ("three weeks from Wednesday", "31 May 2023"),          # said on that Wednesday: counted from it
    ("a month from tomorrow", "11 June 2023"),
    ("I will move a month from now.", "week of 7 June 2023"),   # as "in a month": the week around 10 June
    ("Two weeks from now I fly out", "week of 22 May 2023"),    # as "in two weeks"
    ("A year from now I will be in Rome", "2024"),
    # forward whatever the clause: the count starts from the message's day
    ("I said I'd call two weeks from today", "24 May 2023"),
])
def test_a_count_from_a_day_and_the_day_after_tomorrow_point_forward(text, want):
    assert label(text, MAY_10) == want


@pytest.mark.parametrize("text", [
    "Two weeks from now on, no sugar for me.",
    "you have 30 days from today until April 15 to finish the draft",
])
def test_a_count_from_now_on_or_until_is_no_date(text):
    assert all("from" not in r.phrase for r in timeexpr.find(text, MAY_10))


@pytest.mark.parametrize("text, now, want", [
    ("This coming weekend we go camping.", MAY_10, "weekend of 13 May 2023"),
    ("This coming weekend we go camping.", at(2023, 5, 13, 12), "weekend of 20 May 2023"),  # said on a Saturday
    ("We leave in 3 days.", MAY_10, "13 May 2023"),
    # how long something took, told: no date to come
    ("We did it in 3 weeks.", MAY_10, None),
    ("we've already watched 15 family movies in 6 weeks and exceeded our goal", MAY_10, None),
])
def test_the_coming_weekend_and_a_span_told_in_the_past(text, now, want):
    assert label(text, now) == want


# -- a person's simple past off the list of cues, right before or right after the time --------------------------------

@pytest.mark.parametrize("text, want", [
    ("I finished it by Friday.", "5 May 2023"),                          # the Friday before, not the coming one
    ("i finished it by friday", "5 May 2023"),
    ("At the start of the year I joined a gym.", "January-April 2023"),  # undated before: no cue before the time
    ("I joined a gym at the end of the month.", "21-30 April 2023"),
    ("At the end of the week we hiked.", "5-7 May 2023"),
    ("I started my new job in mid-June.", "11-20 June 2022"),            # the nearest mid-June was the coming one
    ("We finally moved in October.", "October 2022"),
    ("On Friday, we celebrated.", "5 May 2023"),
])
def test_a_simple_past_of_a_person_reports_the_past(text, want):
    assert label(text, MAY_10) == want


@pytest.mark.parametrize("text, want", [
    ("I'll have it finished by Friday.", "12 May 2023"),                 # "it finished": a participle of a plan
    ("I need to get it signed by Friday.", "12 May 2023"),               # "need" is no past
    ("I finished the draft and I'll send it by Friday.", "12 May 2023"),  # a future word after the past
    ("I finished the draft so I'll send it by Friday.", "12 May 2023"),
    ("I finished the report and on Monday I'll present it.", "15 May 2023"),   # a future word right after the time
    ("I joined the club and in October I'm going to race.", "October 2023"),
    ("I moved the meeting to this Friday.", "12 May 2023"),                  # the time it was moved to
    ("I printed the tickets for this Friday.", "12 May 2023"),               # the time they are for
    ("If I joined a gym at the end of the month, would that help?", None),  # a supposition, not a report
    ("I packed my bags for the trip this weekend.", "weekend of 13 May 2023"),
    ("I wanted to finish it by Friday.", "12 May 2023"),                 # the infinitive governs
    ("I asked him to finish by Friday.", "12 May 2023"),
    ("I booked a table for this Friday.", "12 May 2023"),                # an arrangement for what is to come
    ("They cancelled the trip this weekend.", "weekend of 13 May 2023"),
    ("I realized the report goes out by Friday.", "12 May 2023"),        # a clause of its own
    ("I heard the party is on Friday.", "12 May 2023"),
    ("At the end of the week, reflect on whether it has improved.", None),  # advice: no report
    ("By Friday I'll be done.", "12 May 2023"),
    ("I won't finish it by Friday.", "12 May 2023"),                     # "won't" is no "won"
    ("I won't be home on Saturday.", "13 May 2023"),
    ("We won't be in Paris in October.", "October 2023"),
    ("I won't be home at the end of the month.", "21-31 May 2023"),
])
def test_a_simple_past_that_sets_up_what_is_to_come_leaves_the_future(text, want):
    assert label(text, MAY_10) == want


# -- a phone's apostrophe (U+2019) is read as the typed one -------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("I\u2019ll go to Paris in October.", "October 2023"),              # was October 2022: "I'll" unread
    ("We\u2019re skiing in January.", "January 2024"),
    ("I\u2019ve got a meeting on March 25.", "25 March 2024"),
    ("I won\u2019t be home on Saturday.", "13 May 2023"),
    ("Let\u2019s meet over the weekend.", "weekend of 13 May 2023"),
    ("I\u2019ll have the report done by the end of the month.", "21-31 May 2023"),   # was no date
])
def test_a_phone_apostrophe_reads_as_the_typed_one(text, want):
    assert label(text, MAY_10) == want
    assert label(text.replace("\u2019", "'"), MAY_10) == want


# -- a day of a month without its year, in a clause a person's simple past governs -------------------------------

MARCH_1 = at(2023, 3, 1, 12)


@pytest.mark.parametrize("text, now, want", [
    ("I flew to Rome on May 20.", MARCH_1, "20 May 2022"),               # was 20 May 2023: eleven weeks on
    ("We visited them on the 20th of May.", MARCH_1, "20 May 2022"),
    ("I finally met her on August 3.", MARCH_1, "3 August 2022"),        # the nearest was the August to come
    ("I just attended a workshop on March 5.", MARCH_1, "5 March 2023"),  # less than a month on: a lagging timestamp
    ("I went to Rome on May 20.", MAY_10, "20 May 2023"),                # said before that day: the nearest, still
    ("I flew to Rome on December 20.", MARCH_1, "20 December 2022"),     # the nearest is in the past already
    ("I'll fly to Rome on May 20.", MARCH_1, "20 May 2023"),             # a plan
    ("Rome on May 20 sounds great.", MARCH_1, "20 May 2023"),            # no tense: the nearest
    ("I moved the meeting to May 20.", MARCH_1, "20 May 2023"),          # the day it was moved to
    ("I had to cancel the trip on May 20.", MARCH_1, "20 May 2023"),     # the infinitive governs the day
    ("I booked a table for May 20.", MARCH_1, "20 May 2023"),            # an arrangement
])
def test_a_reported_day_without_its_year_is_the_latest_one_gone_by(text, now, want):
    assert label(text, now) == want


# -- a simple past after a person named or one of the speaker's people -------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("Caroline joined a gym at the start of the year.", "January-April 2023"),   # was no date
    ("Maya joined a gym at the end of the month.", "21-30 April 2023"),           # was no date
    ("Maya finished it by Friday.", "5 May 2023"),                                # was the coming Friday, 12 May
    ("At the start of the year Caroline joined a gym.", "January-April 2023"),
    ("On Friday, Mom visited.", "5 May 2023"),
    ("My sister visited in the summer.", "June-August 2022"),                     # was no date
    ("my best friend finally moved in the fall", "September-November 2022"),
    ("The kids finished the puzzle by Friday.", "5 May 2023"),
    ("Grandma passed away in the winter.", "December 2022-February 2023"),
    # no report of a person: the tense is read as before
    ("Payment required by Friday.", "12 May 2023"),                               # a participle of a notice
    ("Super excited about Paris at the end of the month!", None),                  # a feeling, no report
    ("Really stressed about the exam at the end of the month.", None),
    ("Ikea bed arriving by Friday!", "12 May 2023"),                             # a noun in -ed
    ("Task Completed by Friday", "12 May 2023"),                                  # a heading
    ("If Maya joined a gym at the end of the month, would that help?", None),     # a supposition
    ("Maya wanted to finish by Friday.", "12 May 2023"),                          # the infinitive governs
    ("Maya finished the draft and she'll send it by Friday.", "12 May 2023"),
    ("Maya moved the meeting to this Friday.", "12 May 2023"),
    ("I'm going to the mixer on Friday, Laura recommended it.", "12 May 2023"),  # the name opens another clause
])
def test_a_simple_past_of_a_person_named_reports_the_past(text, want):
    assert label(text, MAY_10) == want


def test_a_day_a_person_named_reports_is_the_latest_gone_by():
    assert label("Mom flew to Rome on May 20.", MARCH_1) == "20 May 2022"          # was 20 May 2023
    assert label("Since Laura recommended the mixer on May 20, I'll go.", MARCH_1) == "20 May 2023"


# -- "the fall" that hurt someone is no autumn ----------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("I slipped and broke my wrist in the fall.", None),                  # was September-November 2022
    ("I went skiing and broke my wrist in the fall.", None),
    ("I fell and hurt my back in the fall.", None),
    ("She was injured during the fall.", None),
    ("I tore my ACL in the fall.", None),
    # autumn
    ("We moved in the fall.", "September-November 2022"),
    ("I'll start college in the fall.", "September-November 2023"),
    ("I went back to school and broke the record in the fall.", "September-November 2022"),  # no body hurt
    ("I broke my wrist in the fall of 2020.", "September-November 2020"),  # a year: the season
    ("I hurt my back over the winter.", "December 2022-February 2023"),    # only "fall" is also a noun
    ("She got hurt in the fall.", None),
    ("It won't hurt to apply in the fall.", "September-November 2023"),     # "hurt" of no one: autumn
])
def test_the_fall_that_hurt_is_no_autumn(text, want):
    assert label(text, MAY_10) == want


@pytest.mark.parametrize("text, now, want", [
    ("In the fall, I broke my wrist skiing.", MAY_10, "September-November 2022"),   # was no date: "broke" unread
    ("We broke up in the summer.", MAY_10, "June-August 2022"),
    ("We finally broke the record in the fall.", MAY_10, "September-November 2022"),   # no one hurt: autumn
    ("I got married on May 20.", MARCH_1, "20 May 2022"),
    ("I tore my ACL at the end of the month.", MAY_10, "21-30 April 2023"),
    ("I got to finish it by Friday.", MAY_10, "12 May 2023"),                    # "got to": the infinitive governs
    ("I got tickets for this Friday.", MAY_10, "12 May 2023"),                   # what they are for
])
def test_more_irregular_pasts_report_the_past(text, now, want):
    assert label(text, now) == want


@pytest.mark.parametrize("text, want", [
    ("In March Maya will start school.", "March 2024"),                  # was March 2023, two months gone
    ("In March, my sister is going to move.", "March 2024"),            # was March 2023
    ("On the 3rd Maya will fly out.", "3 June 2023"),                   # was 3 May 2023
    ("In March he is going to move.", "March 2024"),                    # "is going to" after a pronoun too
    ("In March she will start school.", "March 2024"),
    ("In March Maya moved.", "March 2023"),
])
def test_a_future_said_right_after_the_time_by_a_person_named_points_forward(text, want):
    assert label(text, MAY_10) == want


@pytest.mark.parametrize("text, want", [
    ("Maya is flying to Paris in March.", "March 2024"),                # was March 2023: only pronouns were read
    ("My sister is getting married in March.", "March 2024"),
    ("Tom and I are skiing in January.", "January 2024"),
    ("They are visiting in March.", "March 2024"),                       # "they're" was read, "they are" not
    ("He is moving to Denver in March.", "March 2024"),
    ("Maya's flying to Paris in March.", "March 2023"),                  # "'s" after a name may be a possessive
    ("Paris is lovely in March.", "March 2023"),                         # no arrangement: the nearest March
])
def test_an_arrangement_of_a_person_named_points_forward(text, want):
    assert label(text, MAY_10) == want


@pytest.mark.parametrize("text, want", [
    ("I need help, especially since my exam is in October.", "October 2023"),     # was October 2022
    ("Since Tanya is visiting Toronto in October, let's plan around it.", "October 2023"),
    ("I'm stressed since tax season is coming up in April.", "April 2024"),
    ("I am nervous since we're moving in October.", "October 2023"),
    ("I was wondering if I should move in October.", "October 2023"),            # was October 2022
    ("I was hoping we could go to Rome in October.", "October 2023"),
    # "since" of time and "was" of a report still report
    ("Since I moved here in October, things are better.", "October 2022"),
    ("It has been quiet since we met in October.", "October 2022"),
    ("I was in Rome in October.", "October 2022"),
    ("I have been studying since October.", "1 October 2022-10 May 2023"),
])
def test_since_of_a_reason_and_a_polite_was_report_nothing(text, want):
    assert label(text, MAY_10) == want


@pytest.mark.parametrize("text, now, want", [
    ("I debated free will on Friday.", MAY_10, "5 May 2023"),                 # was the coming Friday
    ("I believe in free will after attending that panel on August 3.", at(2023, 10, 20, 12),
     "3 August 2023"),                                                        # was 3 August 2024
    ("I will debate free will in October.", MAY_10, "October 2023"),
])
def test_free_will_is_no_future(text, now, want):
    assert label(text, now) == want


@pytest.mark.parametrize("text, want", [
    ("I've booked a flight to Rome in October.", "October 2023"),               # was October 2022
    ("I have planned a trip in October.", "October 2023"),
    ("She has registered for a race in October.", "October 2023"),
    ("I've enrolled in a course starting in September.", "September 2023"),
    ("I've been training for the marathon in October.", "October 2023"),
    ("I've already booked the hotel for the end of the month.", "21-31 May 2023"),   # was 21-30 April
    ("Tanya is visiting in October and has already booked her flight.", "October 2023"),
    ("I've booked a flight for March 3.", "3 March 2024"),
    # a present perfect of anything else reports, as before
    ("I've visited Rome in October.", "October 2022"),
    ("I've been to Rome in October.", "October 2022"),
    ("I already went in October.", "October 2022"),
])
def test_an_arrangement_made_in_the_present_perfect_is_of_what_is_to_come(text, want):
    assert label(text, MAY_10) == want


MAR_15 = at(2023, 3, 15, 12)      # a Wednesday


@pytest.mark.parametrize("text, want", [
    # a future right after the time governs it, whatever past the clause holds before or after it
    ("I was busy, on Friday I will send it to Ana", "17 March 2023"),             # was 10 March
    ("I went to the doctor, in April I will go again", "April 2023"),             # was April 2022
    ("We had dinner and in June we will travel to Spain", "June 2023"),           # was June 2022
    ("On Friday I will send Ana the draft that was late", "17 March 2023"),       # was 10 March
    ("On Friday I'll send the report I already wrote", "17 March 2023"),
    ("In October I will visit the house where I was born", "October 2023"),       # was October 2022
    # an arrangement, a "gonna", a "have to" said right after the time are what is to come too
    ("On Friday I'm flying to Rome", "17 March 2023"),                            # was 10 March
    ("On Saturday we're going hiking", "18 March 2023"),                          # was 11 March
    ("In October my sister is getting married", "October 2023"),                  # was October 2022
    ("On the 20th we're having a party", "20 March 2023"),                        # was 20 February
    ("On Friday I'm gonna rest", "17 March 2023"),
    ("On Friday I have to submit it", "17 March 2023"),
    ("On Friday we have a meeting", "17 March 2023"),
    ("On Friday my team and I will present", "17 March 2023"),                   # was 10 March
    ("In June Tom and I will travel to Spain", "June 2023"),                      # was June 2022
    # "I have to say", "I have to admit" tell of what was as often: the past after them reports
    ("On Friday I have to say it was great", "10 March 2023"),
    ("On Friday I have to admit I was nervous", "10 March 2023"),
    # a past before the time is another verb's when a future of a person follows it
    ("I went to the doctor and I'll go again in April", "April 2023"),            # was April 2022
    ("I finished the draft and I will send it to Ana on Friday", "17 March 2023"),
    # the past that holds the time still reports it
    ("On Friday I had a meeting", "10 March 2023"),
    ("On Friday we went hiking", "10 March 2023"),
    ("I'll never forget the trip we had in October", "October 2022"),
    ("I had a deadline in April", "April 2022"),
    ("I was going to go in April", "April 2022"),
    ("Last year in October we had a blast", "2022"),
])
def test_the_verb_group_that_holds_the_time_sets_its_tense(text, want):
    assert label(text, MAR_15) == want


@pytest.mark.parametrize("text, now, want", [
    # the weekdays as chats clip them (LoCoMo's: said on Saturday 15 July, Thursday 20 July and Friday 20 January)
    ("Last Fri I finally took my kids to a pottery workshop.", at(2023, 7, 15, 13), "14 July 2023"),
    ("I just joined a new LGBTQ activist group last Tues.", at(2023, 7, 20, 20), "18 July 2023"),
    ("Wanna see my moves next Fri? Can't wait!", at(2023, 1, 20, 16), "27 January 2023"),
    ("see you on Mon", MAR_15, "20 March 2023"),
    ("I'll have it done by Thurs", MAR_15, "16 March 2023"),
    ("Let's meet this Sat", MAR_15, "18 March 2023"),
    ("I've been sick since Tue", MAR_15, "14-15 March 2023"),
    # "wed", "sat", "sun" and "mon" in lowercase are words of their own
    ("I sat on the sofa all day", MAR_15, None),
    ("We lay on sun loungers by the pool", MAR_15, None),
    ("come on mon, let's go", MAR_15, None),
])
def test_the_weekdays_as_chats_clip_them(text, now, want):
    assert label(text, now) == want


@pytest.mark.parametrize("text, now, want", [
    # "this coming week" is the next one, as "this coming weekend" is (said on Wednesday 15 March 2023, on Sunday 19
    # March: the week of 20 March)
    ("I have three exams this coming week", MAR_15, "week of 20 March 2023"),
    ("This coming week I start the new job", at(2023, 3, 19, 12), "week of 20 March 2023"),
    ("this coming weekend we fly to Rome", MAR_15, "weekend of 18 March 2023"),
    # "a couple" without its "of" counts two, as "a couple of" does
    ("I'll see her in a couple weeks", MAR_15, "week of 27 March 2023"),
    ("I'll be back in a couple days", MAR_15, "17 March 2023"),
    ("I moved here a couple weeks ago", MAR_15, "week of 27 February 2023"),
    ("I'll see her in a couple of weeks", MAR_15, "week of 27 March 2023"),
])
def test_this_coming_week_and_a_couple_without_of(text, now, want):
    assert label(text, now) == want


@pytest.mark.parametrize("text, want", [
    # a future before the time holds it up to the comma after it: a past after that comma is a remark of its own
    ("I'll send it on Friday, I already told Ana", "17 March 2023"),                 # was 10 March
    ("I'll present the draft on the 20th, the one we had discussed", "20 March 2023"),  # was 20 February
    ("I'm flying to Rome in October, it was cheap", "October 2023"),                  # was October 2022
    # what one will remember or tell of may be past
    ("I'll never forget our trip in October, it was amazing", "October 2022"),
    ("I'll tell you about the party on Friday, it was wild", "10 March 2023"),
    # a past after the time without a comma between is still the time's
    ("I'll never forget how on Friday we went hiking", "10 March 2023"),
])
def test_a_past_after_a_comma_is_no_tense_of_a_time_a_future_holds(text, want):
    assert label(text, MAR_15) == want


@pytest.mark.parametrize("text, want", [
    # what someone is asked, told or invited to do, said in the passive, is to come
    ("I was asked to finish it by Friday", "17 March 2023"),                           # was 10 March
    ("We were told to submit the form by Friday", "17 March 2023"),
    ("I was invited to a wedding in June", "June 2023"),                               # was June 2022
    ("I'm invited to a wedding in June", "June 2023"),
    ("We were invited to speak at the conference in October", "October 2023"),
    ("I just got invited to a party on Saturday", "18 March 2023"),                    # was 11 March
    ("I've been asked to give a talk in May", "May 2023"),                             # was May 2022
    # the telling and the invitation still report when the time is theirs, or another past follows
    ("I was told on Friday that I got the job", "10 March 2023"),
    ("I was invited to a party on Saturday and it was great", "11 March 2023"),
    ("I was invited to Sarah's party last Friday", "10 March 2023"),
    # a forecast is no such set-up: "is expected to" leaves the date the nearest
    ("The order is expected to arrive on April 4", "4 April 2023"),
])
def test_what_someone_is_asked_or_invited_to_do_is_to_come(text, want):
    assert label(text, MAR_15) == want


@pytest.mark.parametrize("text, want", [
    # the ways a chat asks for or proposes what is to come
    ("Let's meet on Friday", "17 March 2023"),                                  # was 10 March
    ("Let's go in October", "October 2023"),                                    # was October 2022
    ("It was nice, let's do it again in June", "June 2023"),                    # was June 2022
    ("On Friday, let's meet", "17 March 2023"),
    ("Can we meet on Friday?", "17 March 2023"),
    ("I'd love to meet on Friday", "17 March 2023"),
    ("Do you wanna hang out on Saturday?", "18 March 2023"),                    # was 11 March
    ("Are you free on Friday?", "17 March 2023"),
    ("I'm busy on the 20th", "20 March 2023"),                                  # was 20 February
    ("Are you coming on Saturday?", "18 March 2023"),
    ("What are you doing on Saturday?", "18 March 2023"),
    ("Is Maya coming on Saturday?", "18 March 2023"),
    ("Good luck on Friday!", "17 March 2023"),
    ("Wish me luck on the 20th", "20 March 2023"),
    # the past still reports
    ("What did you do on Saturday?", "11 March 2023"),
    ("What were you doing on Saturday?", "11 March 2023"),
    ("I was busy on the 20th", "20 February 2023"),
    ("Let's talk about what happened on Friday", "10 March 2023"),
    # how one is doing or getting on is no arrangement
    ("I'm doing well after the surgery on Monday", "13 March 2023"),
    ("I'm getting better after the surgery on Monday", "13 March 2023"),       # was 20 March
    # a future after a comma is the time's only when the time opens its clause
    ("I've already watched 8 movies over the weekend, I'll watch more soon", "weekend of 11 March 2023"),
    ("I've already watched 8 movies over the weekend, let's plan the next", "weekend of 11 March 2023"),
])
def test_what_a_chat_proposes_or_asks_of_what_is_to_come(text, want):
    assert label(text, MAR_15) == want


@pytest.mark.parametrize("text, want", [
    # what a timetable says, in the present simple, is to come
    ("I fly to Rome on Friday", "17 March 2023"),                               # was 10 March
    ("On Friday I fly to Rome", "17 March 2023"),
    ("My flight leaves on Friday", "17 March 2023"),
    ("The train leaves on the 20th", "20 March 2023"),                          # was 20 February
    ("I start my new job on Monday", "20 March 2023"),                          # was 13 March
    ("School starts in September", "September 2023"),                           # was September 2022
    ("In May I turn 30", "May 2023"),                                           # was May 2022
    ("In May I'm turning 30", "May 2023"),
    # a noun, an infinitive, a past and a question in the past are none
    ("The move in October was hard", "October 2022"),
    ("I decided to move in October", "October 2022"),
    ("I flew to Rome on Friday", "10 March 2023"),
    ("Did you land on Friday?", "10 March 2023"),
    ("It is expected to arrive on April 4", "4 April 2023"),
])
def test_what_a_timetable_says_in_the_present_is_to_come(text, want):
    assert label(text, MAR_15) == want


@pytest.mark.parametrize("text, want", [
    # a relative clause's past right before the time reports it, whatever future the sentence opened with
    ("I'm flying home on Friday after the conference that started on Monday", "13 March 2023"),   # was 20 March
    ("I'll return the package that arrived on Monday", "13 March 2023"),
    ("I'll see the doctor who treated me in October", "October 2022"),                           # was October 2023
    # a past that sets up what is to come is none
    ("I'll finish the task that needed to be done by Friday", "17 March 2023"),
])
def test_a_relative_clause_past_reports_the_time_it_holds(text, want):
    refs = timeexpr.find(text, MAR_15)
    assert refs[-1].label() == want
