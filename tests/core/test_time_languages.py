"""Relative days, weeks, months and years said in other languages ("ayer", "gestern", "la semana pasada", "в прошлом
году") are resolved against the message's day as the English words are; the words those languages also use for
something else ("por la mañana", "guten Morgen", German "hier") are not."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hippo import Memory
from hippo.text import timeexpr

from chats_of_word_forms import ASKED, DAYS

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
    # a count of units back or ahead, as "3 days ago" and "in 2 weeks" are: a day, the week (from Monday) holding the
    # day that many weeks away, the week around the same day that many months away, the year
    ("Hace dos días fui al médico.", "2024-03-04"), ("Fui a Roma hace 3 semanas.", "2024-02-12"),
    ("Dos meses atrás me mudé.", "2024-01-03"), ("Il y a deux ans, j'ai déménagé.", "2022-01-01"),
    ("Sono tornato tre giorni fa.", "2024-03-03"), ("Vor zwei Wochen war ich in Rom.", "2024-02-19"),
    ("In drei Tagen fliege ich.", "2024-03-09"), ("Dentro de un mes me caso.", "2024-04-03"),
    ("Dans 5 jours je pars.", "2024-03-11"), ("Daqui a dois anos vou me formar.", "2026-01-01"),
    ("Tra due settimane parto.", "2024-03-18"), ("Два дня назад я был в кино.", "2024-03-04"),
    ("Через неделю еду в Казань.", "2024-03-11"), ("Неделю назад мы купили машину.", "2024-02-26"),
    ("İki gün önce geldim.", "2024-03-04"), ("3 hafta önce taşındık.", "2024-02-12"),
    # a weekday with its next or last: the coming one after the day (Wednesday), the last one before it
    ("Nächsten Freitag fliege ich nach Berlin.", "2024-03-08"), ("Letzten Montag war ich krank.", "2024-03-04"),
    ("El viernes pasado fuimos al cine.", "2024-03-01"), ("El próximo lunes empiezo.", "2024-03-11"),
    ("Vendredi prochain je pars.", "2024-03-08"), ("Mercredi dernier il a plu.", "2024-02-28"),
    ("Na próxima sexta vou ao Porto.", "2024-03-08"), ("Na sexta-feira passada fui ao médico.", "2024-03-01"),
    ("Venerdì scorso sono andato a Roma.", "2024-03-01"), ("В следующую пятницу еду в Казань.", "2024-03-08"),
    ("В прошлый понедельник я заболел.", "2024-03-04"), ("Geçen cuma sinemaya gittik.", "2024-03-01"),
    ("Gelecek pazartesi başlıyorum.", "2024-03-11"),
    # a weekday said alone: the last one before the day when its clause reports the past, else the coming one after
    # it (these languages say a plan in the present)
    ("El viernes voy al cine.", "2024-03-08"), ("El viernes fuimos al cine.", "2024-03-01"),
    ("¿Qué hiciste el viernes?", "2024-03-01"), ("El lunes empecé el trabajo nuevo.", "2024-03-04"),
    ("El martes estaba enfermo.", "2024-03-05"), ("El jueves compraré un coche.", "2024-03-07"),
    ("Este domingo es mi cumpleaños.", "2024-03-10"),
    # a "we" in -amos or -imos beside a verb of one tense is placed by it
    ("El sábado vamos al cine.", "2024-03-09"), ("El sábado salimos y fuimos al cine.", "2024-03-02"),
    ("El sábado salimos con Marta porque tenemos entradas.", "2024-03-09"),
    ("El sábado estamos saliendo.", "2024-03-09"),
    ("El sábado mis primos vienen a casa.", "2024-03-09"), ("No sábado vamos viajar.", "2024-03-09"),
    ("Na sexta temos prova.", "2024-03-08"), ("El sábado saldremos con Marta.", "2024-03-09"),
    # the past of a weak verb in German and Dutch (its finite verb, second in the clause), of a strong one, and the
    # imperfect of the plural in Spanish and Portuguese and after a French pronoun; the present and the verbs whose
    # stem ends in "t" or "d" ("warten", "vinden"), modal wishes ("möchte") and adjectives ("alten") are no past
    ("Am Freitag kochten wir Gulasch.", "2024-03-01"), ("Am Montag arbeitete ich lange.", "2024-03-04"),
    ("Am Freitag tranken wir Bier.", "2024-03-01"), ("Meine Schwester kochte am Freitag Gulasch.", "2024-03-01"),
    ("Op zaterdag werkten we in de tuin.", "2024-03-02"), ("Op vrijdag kookte ik soep.", "2024-03-01"),
    ("Op zaterdag fietsten we naar Gouda.", "2024-03-02"), ("El sábado salíamos con amigos.", "2024-03-02"),
    ("No sábado comíamos fora.", "2024-03-02"), ("Samedi on mangeait chez Paul.", "2024-03-02"),
    ("Am Freitag warten wir auf dich.", "2024-03-08"), ("Am Freitag arbeiten wir.", "2024-03-08"),
    ("Am Freitag möchte ich ins Kino.", "2024-03-08"), ("Am Samstag besuchen wir die alten Freunde.", "2024-03-09"),
    ("Die alten Freunde kommen am Samstag.", "2024-03-09"), ("Meine Schwester kocht am Freitag Gulasch.", "2024-03-08"),
    ("Op zaterdag vinden we het feest.", "2024-03-09"), ("Op zaterdag wachten we op je.", "2024-03-09"),
    ("Op vrijdag kook ik soep.", "2024-03-08"), ("Samedi je fais du sport.", "2024-03-09"),
    ("Samedi je connais le programme.", "2024-03-09"), ("El sábado harían una fiesta.", "2024-03-09"),
    # what is said after "que" is placed by its own verbs, not by the telling's
    ("Le dije que el viernes no puedo.", "2024-03-08"), ("El lunes me dijo que estaba cansada.", "2024-03-04"),
    ("El miércoles José vino a casa.", "2024-02-28"), ("Je lui ai dit que vendredi je ne peux pas.", "2024-03-08"),
    ("Am Freitag gehe ich schwimmen.", "2024-03-08"), ("Am Freitag war ich im Kino.", "2024-03-01"),
    ("Was hast du am Freitag gemacht?", "2024-03-01"), ("Am Samstag sind wir nach Berlin gefahren.", "2024-03-02"),
    ("Am Freitag ist das Geschäft geschlossen.", "2024-03-08"), ("Am Freitag bin ich verabredet.", "2024-03-08"),
    ("Vendredi je vais au cinéma.", "2024-03-08"), ("Vendredi j'ai vu Marc.", "2024-03-01"),
    ("Qu'est-ce que tu as fait vendredi ?", "2024-03-01"), ("Vendredi je suis occupé.", "2024-03-08"),
    ("Samedi nous sommes allés à Lyon.", "2024-03-02"), ("Venerdì sono andato al cinema.", "2024-03-01"),
    ("Venerdì sono impegnato.", "2024-03-08"), ("Sabato ho una partita.", "2024-03-09"),
    ("Na sexta vou ao Porto.", "2024-03-08"), ("No sábado comprei um carro.", "2024-03-02"),
    ("Op vrijdag was ik ziek.", "2024-03-01"), ("Op zaterdag heb ik een fiets gekocht.", "2024-03-02"),
    ("В пятницу я иду в кино.", "2024-03-08"), ("Что ты делал в пятницу?", "2024-03-01"),
    ("В понедельник школа закрыта.", "2024-03-11"), ("Во вторник я купил машину.", "2024-03-05"),
    ("Cuma günü sinemaya gittik.", "2024-03-01"), ("Cuma günü ne yaptın?", "2024-03-01"),
    ("Pazar günü annemlere gidiyoruz.", "2024-03-10"),
    # the relative days of Chinese, Japanese and Korean, written without spaces
    ("我昨天和王丽在北京吃了烤鸭。", "2024-03-05"), ("我后天去上海", "2024-03-08"), ("明天早上七点要起床。", "2024-03-07"),
    ("昨日、田中さんと新宿でラーメンを食べました。", "2024-03-05"), ("一昨日東京に行った", "2024-03-04"),
    ("明後日は休みです", "2024-03-08"), ("어제 민수랑 강남에서 삼겹살 먹었어.", "2024-03-05"),
    ("내일 아침 일곱 시에 일어나야 해.", "2024-03-07"),
    # Polish, Czech and Slovak, with and without their accents
    ("Wczoraj byłam u dentysty.", "2024-03-05"), ("Jutro jadę do Krakowa.", "2024-03-07"),
    ("Przedwczoraj padał śnieg.", "2024-03-04"), ("Pojutrze mam egzamin.", "2024-03-08"),
    ("Dziś pracuję z domu.", "2024-03-06"), ("Včera jsem byl v kině.", "2024-03-05"),
    ("Zítra jedu do Brna.", "2024-03-07"), ("zitra jedu do Brna", "2024-03-07"), ("Předevčírem pršelo.", "2024-03-04"),
    ("Pozítří máme zkoušku.", "2024-03-08"), ("Zajtra idem do Bratislavy.", "2024-03-07"),
    # Swedish, Danish and Norwegian, in two words or one
    ("I går var vi på bio.", "2024-03-05"), ("Igår åt vi pizza.", "2024-03-05"), ("Vi ses i morgon.", "2024-03-07"),
    ("Imorgon åker jag till Göteborg.", "2024-03-07"), ("Jeg skal til Bergen i morgen.", "2024-03-07"),
    ("I forgårs regnede det.", "2024-03-04"), ("I övermorgon flyger vi.", "2024-03-08"),
    # Arabic, with and without the tanwin
    ("ذهبت أمس إلى الطبيب.", "2024-03-05"), ("سأسافر غداً إلى دبي.", "2024-03-07"),
    ("سأسافر غدًا إلى دبي.", "2024-03-07"), ("وغداً سأذهب إلى العمل.", "2024-03-07"),
    ("وأمس اشترينا سيارة جديدة.", "2024-03-05"),
    ("البارحة تعشينا في مطعم لبناني.", "2024-03-05"), ("بالأمس زرت جدتي.", "2024-03-05"),
    ("أول أمس اشتريت سيارة.", "2024-03-04"), ("بعد غد عندي امتحان.", "2024-03-08"),
    # "اليوم" is today where it stands alone, "صباح اليوم" this morning
    ("ذهبت اليوم إلى السوق.", "2024-03-06"), ("اليوم عيد ميلاد أختي.", "2024-03-06"),
    ("سأزور جدتي اليوم.", "2024-03-06"), ("واليوم طبخت المقلوبة.", "2024-03-06"),
    ("صباح اليوم شربت القهوة مع سارة.", "2024-03-06"),
    # Hindi: "कल" and "परसों" are before or after by the tense of their sentence
    ("कल मैं डॉक्टर के पास गया था।", "2024-03-05"), ("कल मैं दिल्ली जाऊँगा।", "2024-03-07"),
    ("आज मैं घर पर हूँ।", "2024-03-06"), ("परसों हम शादी में गए थे।", "2024-03-04"),
    ("परसों हमारी परीक्षा होगी।", "2024-03-08"), ("मैंने कल नई किताब खरीदी।", "2024-03-05"),
    ("कल बारिश हुई।", "2024-03-05"), ("कल माँ घर आई।", "2024-03-05"), ("कल हम बाज़ार जा रहे हैं।", "2024-03-07"),
    ("कल क्या करोगे?", "2024-03-07"),
])
def test_relative_times_of_other_languages_are_resolved(text, day):
    assert _day(text) == day


@pytest.mark.parametrize("text", [
    "Guten Morgen! Wie geht's?", "Morgen, Leute! Alles klar?", "Ich laufe jeden Morgen.", "Ich bin hier in Köln.",
    "Wir sind hier, kommst du?",
    "Ik ben hier, kom je?", "Corro por la mañana.", "Toda la mañana estuve trabajando.", "Fue una mañana tranquila.",
    "I love the piano and my messages.", "Hace días que no te veo.", "En tres meses aprendí inglés.",
    "I stayed in Rome for a day, ha.",
    # a weekday of a habit ("los viernes", "le vendredi", "il venerdì", "siempre"), before a date or of a holiday,
    # after "depuis", and a name ("Domenica", "Mardi Gras")
    "Los viernes juego al pádel.", "El viernes siempre juego al pádel.", "El viernes 15 tengo examen.",
    "El Viernes Santo no trabajo.", "Le vendredi je fais du sport.", "Chaque vendredi on mange des crêpes.",
    "Depuis lundi il pleut.", "Il venerdì gioco a calcetto.", "I met Domenica at the party.", "Mardi Gras was fun.",
    # Portuguese "segunda", "quinta" counting ("the second time", "the fifth grade")
    # a Spanish or Portuguese "we" that is present and past alike, and nothing else that gives the tense: either
    # Saturday
    "El sábado salimos con Marta.", "El sábado viajamos a Roma.", "No sábado viajamos para o Porto.",
    "Na sexta comemos pizza.",
    "Na segunda vez que fui lá, choveu.", "Na quinta série eu estudava em Braga.", "Ela ficou na quarta posição.",
    "明日香と映画を見た。", "今日子さんが来た。", "后天性疾病很难治。",
    # "går" is Swedish for "walks", "أمسك" for "held", "कला" art, "आजकल" nowadays, and
    # "कल" in a sentence of neither tense is either day
    "Jag går hem nu.", "أمسكت الكرة بيدي.", "कला प्रदर्शनी बहुत अच्छी है।",
    "आजकल मैं योग करता हूँ।", "कल की बात है।",
    # "اليوم" as "the day": the next, the first, the national day, the day that, the whole day, that day, the same
    # day, twice a day
    "في اليوم التالي ذهبنا إلى البحر.", "كان اليوم الأول في المدرسة صعبا.", "اليوم الوطني عطلة رسمية.",
    "لن أنسى اليوم الذي تخرجت فيه.", "قضينا اليوم كله في الحديقة.", "في ذلك اليوم التقيت بزوجي.",
    "في نفس اليوم وصل أخي.", "أشرب القهوة مرتين في اليوم.",
])
def test_words_of_other_meanings_are_no_date(text):
    assert timeexpr.find(text, SAID) == []


WED_15_MARCH_2023 = datetime(2023, 3, 15, 10, tzinfo=timezone.utc).timestamp()


def _period(text: str) -> tuple[str, str] | None:
    """The first and last day of the first time of ``text`` said on Wednesday 15 March 2023."""
    refs = timeexpr.find(text, WED_15_MARCH_2023)
    if not refs:
        return None
    first, last = (datetime.fromtimestamp(t, tz=timezone.utc).date().isoformat() for t in (refs[0].start,
                                                                                          refs[0].end - 1))
    return first, last


@pytest.mark.parametrize("text, first, last", [
    # Dutch: the week (from Monday), month and year before, of and after the day; a count back ("geleden") and ahead
    # ("over"), a day as "a week ago" and "in two weeks" are (the week that holds the day that many weeks away, the
    # week around the same day that many months away, the year); the days of the evening and the morning
    ("Ik was vorige week in Parijs.", "2023-03-06", "2023-03-12"),
    ("Ik ga volgende week naar Parijs.", "2023-03-20", "2023-03-26"),
    ("Deze week werk ik thuis.", "2023-03-13", "2023-03-19"),
    ("Vorige maand ben ik verhuisd.", "2023-02-01", "2023-02-28"),
    ("Volgende maand begin ik een nieuwe baan.", "2023-04-01", "2023-04-30"),
    ("Vorig jaar waren we in Spanje.", "2022-01-01", "2022-12-31"),
    ("Volgend jaar gaan we naar Italië.", "2024-01-01", "2024-12-31"),
    ("Dit jaar blijven we thuis.", "2023-01-01", "2023-12-31"),
    ("Ik ga over twee weken naar Parijs.", "2023-03-27", "2023-04-02"),
    ("Over een maand is de bruiloft.", "2023-04-12", "2023-04-18"),
    ("Twee dagen geleden was ik in Utrecht.", "2023-03-13", "2023-03-13"),
    ("Ik was een week geleden bij de tandarts.", "2023-03-06", "2023-03-12"),
    ("Drie jaar geleden zijn we getrouwd.", "2020-01-01", "2020-12-31"),
    ("Ik ga vanavond naar de bioscoop.", "2023-03-15", "2023-03-15"),
    ("Vanochtend heb ik hardgelopen.", "2023-03-15", "2023-03-15"),
    ("Ik was gisteravond in Utrecht.", "2023-03-14", "2023-03-14"),
    ("Ik kom morgenavond langs.", "2023-03-16", "2023-03-16"),
    ("Ik ga morgen naar Parijs.", "2023-03-16", "2023-03-16"),
    # a weekday said with "komende" or "aanstaande" is the coming one, said alone the last or the coming one by
    # the tense of its clause, with its part of the day too
    ("Ik ga komende vrijdag naar de bioscoop.", "2023-03-17", "2023-03-17"),
    ("Aanstaande zaterdag is het feest.", "2023-03-18", "2023-03-18"),
    ("Zaterdag ging ik naar de markt.", "2023-03-11", "2023-03-11"),
    ("Ik ging zaterdag naar de markt.", "2023-03-11", "2023-03-11"),
    ("Zaterdag ga ik naar de markt.", "2023-03-18", "2023-03-18"),
    ("Ik was zaterdagavond thuis.", "2023-03-11", "2023-03-11"),
    # a Dutch month said with "in" or "op" or with its day: the last one when the sentence reports the past, the
    # coming one when it says a plan, else the nearest; with its year, that one
    ("Ik was in maart in Parijs.", "2023-03-01", "2023-03-31"),
    ("Ik was in april in Parijs.", "2022-04-01", "2022-04-30"),
    ("Ik ga in april naar Parijs.", "2023-04-01", "2023-04-30"),
    ("In mei gaan we naar Rome.", "2023-05-01", "2023-05-31"),
    ("In augustus werkte ik in de tuin.", "2022-08-01", "2022-08-31"),
    ("Ik was op 3 maart in Parijs.", "2023-03-03", "2023-03-03"),
    ("Ik ga op 20 maart naar Parijs.", "2023-03-20", "2023-03-20"),
    ("Op 4 maart heb ik mijn fiets laten repareren.", "2023-03-04", "2023-03-04"),
    ("Ik ga op 29 februari naar Parijs.", "2024-02-29", "2024-02-29"),
    ("Ik ben geboren op 4 juli 1990.", "1990-07-04", "1990-07-04"),
    # the past of a Dutch verb whose stem ends in "t" or "d", and a perfect with "zijn" of more verbs
    ("Op zaterdag praatte ik met Anna.", "2023-03-11", "2023-03-11"),
    ("Op zaterdag antwoordde ze niet.", "2023-03-11", "2023-03-11"),
    ("Op zaterdag is er iets vreemds gebeurd.", "2023-03-11", "2023-03-11"),
    ("Op zaterdag ben ik naar Utrecht verhuisd.", "2023-03-11", "2023-03-11"),
    ("Op zaterdag zitten we in de tuin.", "2023-03-18", "2023-03-18"),
    # the Italian passato remoto, regular and irregular, and the future beside it
    ("Venerdì andò al cinema con Luca.", "2023-03-10", "2023-03-10"),
    ("Venerdì Marco fece una torta.", "2023-03-10", "2023-03-10"),
    ("Venerdì parlarono a lungo.", "2023-03-10", "2023-03-10"),
    ("Venerdì mangiammo la pizza.", "2023-03-10", "2023-03-10"),
    ("Venerdì finirono il lavoro.", "2023-03-10", "2023-03-10"),
    ("Venerdì andrò al cinema.", "2023-03-17", "2023-03-17"),
    ("Venerdì faccio le polpette.", "2023-03-17", "2023-03-17"),
    ("Venerdì può venire Luca.", "2023-03-17", "2023-03-17"),
])
def test_dutch_times_and_the_italian_simple_past_are_read(text, first, last):
    assert _period(text) == (first, last)


@pytest.mark.parametrize("text", [
    # "morgen" as the morning, in Dutch and in German in lower case; a Dutch weekday of a habit or a range; English
    # "over" of more than
    "Goede morgen!", "Guten morgen!", "Ich habe den ganzen morgen gearbeitet.", "Ik werk de hele morgen.",
    "Ik ga 's morgens hardlopen.", "Elke zaterdag ga ik zwemmen.", "Ik werk van maandag tot vrijdag.",
    "Ik werk maandag tot vrijdag.", "It lasted over 2 weeks.", "It took over a week.",
    # a Dutch month said alone, or of a day no year around it has
    "Maart is koud.", "Ik was op 29 februari 2023 thuis.", "Ik was op 31 april thuis.",
])
def test_dutch_words_of_other_meanings_are_no_date(text):
    assert timeexpr.find(text, WED_15_MARCH_2023) == []


@pytest.mark.parametrize("text, day", [
    # "morgen" after a day it is the morning of: that day alone, no tomorrow beside it (was a second time, 16 March)
    ("Ich war heute morgen joggen.", "2023-03-15"), ("Ich war gestern morgen joggen.", "2023-03-14"),
    ("Ik was zaterdag morgen thuis.", "2023-03-11"), ("Ik was gisterenavond thuis.", "2023-03-14"),
])
def test_the_morning_of_a_day_named_is_that_day_alone(text, day):
    assert [datetime.fromtimestamp(r.start, tz=timezone.utc).date().isoformat()
            for r in timeexpr.find(text, WED_15_MARCH_2023)] == [day]


def test_a_message_said_in_spanish_shows_the_day_it_means():
    with Memory(None) as mem:
        mem.add("Ayer fui al dentista en Sevilla.", speaker="Lucía", timestamp=SAID)
        hit = mem.search("dentista", k=1)[0]
        assert hit.event_time.date().isoformat() == "2024-03-05"
        assert "5 March 2024" in mem.recall("dentista", budget_tokens=200).text


@pytest.mark.parametrize("question, answer", [
    ("¿Qué hice ayer?", 1), ("¿Qué hice anteayer?", 0), ("Qu'est-ce que j'ai fait hier ?", 1),
    ("Was habe ich gestern gemacht?", 1), ("Что я делал вчера?", 1), ("昨天我做了什么？", 1), ("Dün ne yaptım?", 1),
    ("Co robiłam wczoraj?", 1), ("Co jsem dělal včera?", 1), ("Vad gjorde jag igår?", 1), ("Hvad lavede jeg i går?", 1),
    ("ماذا فعلت أمس؟", 1), ("मैंने कल क्या किया?", 1), ("Co robiłam przedwczoraj?", 0), ("ماذا فعلت اليوم؟", 2),
    ("¿Qué hice el lunes?", 0), ("Was habe ich am Dienstag gemacht?", 1), ("Что я делал в понедельник?", 0),
])
def test_a_question_asks_for_the_day_its_words_name(question, answer):
    """"ayer" in a question asked on 6 March is 5 March, as "yesterday" is: the messages of that day answer it."""
    said = ["Fui al gimnasio por la tarde.", "Cené con Marta en un restaurante japonés.", "Compré un libro de cocina."]
    with Memory(None) as mem:
        for day, text in zip(("2024-03-04T10:00:00", "2024-03-05T20:00:00", "2024-03-06T10:00:00"), said):
            mem.add(text, speaker="Ana", timestamp=day)
        hits = mem.search(question, k=3, asked_at="2024-03-06T12:00:00")
        assert [h.text for h in hits] == [said[answer]]


# (language, question) -> why its message is not in the context
DAYS_NOT_IN_CONTEXT = {
    ("hi", "मैंने 2024-03-05 को क्या किया?"): "its words are those of every message: the messages said that day rank "
                                       "first",
}


@pytest.mark.parametrize("lang", sorted(DAYS))
def test_a_chat_of_relative_days_has_each_days_message_in_a_small_context(lang):
    """A message says the day it names by a word of its language ("Wczoraj byłam u dentysty" said on 6 March is of 5
    March), and a question names it by such a word asked later ("Co robiłam przedwczoraj?") or by its date: the
    message of that day, not the one said that day, is in a 150-token context."""
    messages, questions = DAYS[lang]
    with Memory(None) as mem:
        for said, text in messages:
            mem.add(text, speaker="Ana", timestamp=said)
        missed = [q for q, a in questions if (lang, q) not in DAYS_NOT_IN_CONTEXT
                  and messages[a][1] not in mem.recall(q, budget_tokens=150, asked_at=ASKED).text]
        assert not missed, missed


def test_the_known_limits_of_relative_days_are_questions_of_the_chats():
    for lang, q in DAYS_NOT_IN_CONTEXT:
        assert q in dict(DAYS[lang][1]), (lang, q)


def test_the_tense_of_hindi_days_is_read_in_their_sentence_only(monkeypatch):
    """"कल" is read by the tense of the letters around it, not of all the text before and after: a long message
    without a stop, "कल" in every few words, reads each one's neighbourhood (it read the whole text for each, and
    120,000 letters took 80 s)."""
    class Counting:
        def __init__(self, rx):
            self.rx, self.read = rx, 0

        def search(self, s):
            self.read += len(s)
            return self.rx.search(s)

    past = Counting(timeexpr._HI_PAST)
    monkeypatch.setattr(timeexpr, "_HI_PAST", past)
    text = "कल मैं घर गया " * 1000
    refs = timeexpr.find(text, SAID)
    assert len(refs) == 1000 and all(r.start == refs[0].start for r in refs)
    assert past.read <= 1000 * (2 * timeexpr._HI_REACH + 20)
