"""Places by kind: "Which cities has John been to?" finds "It's Seattle, I'm stoked for my game there".

A question that asks for places of a kind names the kind ("cities", "countries", "states", "places"); the messages
that answer it name the places ("I was in Chicago", "that trip to England", "a solo trip in Spain") and share no
word with it. A query word that names a kind of place also matches the names of that kind, half an occurrence each
as a derivational relative's (:data:`hippo.index.channels.SLIP_WEIGHT`): where the word itself occurs, its messages
come first.

The names are short lists written by hand: the countries and the constituent countries of the United Kingdom in
their common English names, the fifty states of the United States, and the cities people most often travel to or
live in (about two hundred). A name is matched as written, capitalised (or in capitals for an abbreviation such as
"UK", "USA", "NYC"): "turkey" and "us" are other words. Names that are more often something else are left out:
first names ("Jordan", "Chad", "Florence"), animals ("Guinea"), "Split", "Nice", "Reading", "Mobile". A place not
listed is found only by its own name.
"""

from __future__ import annotations

from functools import lru_cache

from hippo.base.errors import InvalidInput
from hippo.text import textnorm

COUNTRIES = (
    "Afghanistan", "Albania", "Algeria", "Andorra", "Angola", "Argentina", "Armenia", "Australia", "Austria",
    "Azerbaijan", "Bahamas", "Bahrain", "Bangladesh", "Barbados", "Belarus", "Belgium", "Belize", "Benin", "Bhutan",
    "Bolivia", "Bosnia", "Botswana", "Brazil", "Brunei", "Bulgaria", "Burkina Faso", "Burundi", "Cambodia",
    "Cameroon", "Canada", "Chile", "China", "Colombia", "Congo", "Costa Rica", "Croatia", "Cuba", "Cyprus",
    "Czech Republic", "Czechia", "Denmark", "Dominican Republic", "Ecuador", "Egypt", "El Salvador", "England",
    "Eritrea", "Estonia", "Ethiopia", "Fiji", "Finland", "France", "Gabon", "Gambia", "Germany", "Ghana", "Greece",
    "Greenland", "Guatemala", "Guyana", "Haiti", "Honduras", "Hong Kong", "Hungary", "Iceland", "India", "Indonesia",
    "Iran", "Iraq", "Ireland", "Israel", "Italy", "Ivory Coast", "Jamaica", "Japan", "Kazakhstan", "Kenya", "Korea",
    "South Korea", "North Korea", "Kosovo", "Kuwait", "Kyrgyzstan", "Laos", "Latvia", "Lebanon", "Lesotho",
    "Liberia", "Libya", "Liechtenstein", "Lithuania", "Luxembourg", "Madagascar", "Malawi", "Malaysia", "Maldives",
    "Mali", "Malta", "Mauritius", "Mexico", "Moldova", "Monaco", "Mongolia", "Montenegro", "Morocco", "Mozambique",
    "Myanmar", "Namibia", "Nepal", "Netherlands", "Holland", "New Zealand", "Nicaragua", "Nigeria",
    "Northern Ireland", "Norway", "Oman", "Pakistan", "Palestine", "Panama", "Papua New Guinea", "Paraguay", "Peru",
    "Philippines", "Poland", "Portugal", "Puerto Rico", "Qatar", "Romania", "Russia", "Rwanda", "Samoa",
    "Saudi Arabia", "Scotland", "Senegal", "Serbia", "Seychelles", "Sierra Leone", "Singapore", "Slovakia",
    "Slovenia", "Somalia", "South Africa", "Spain", "Sri Lanka", "Sudan", "Suriname", "Sweden", "Switzerland",
    "Syria", "Taiwan", "Tajikistan", "Tanzania", "Thailand", "Togo", "Tonga", "Trinidad", "Tunisia", "Turkey",
    "Turkmenistan", "Uganda", "Ukraine", "United Arab Emirates", "UAE", "United Kingdom", "UK", "Britain",
    "Great Britain", "United States", "USA", "America", "Uruguay", "Uzbekistan", "Vatican", "Venezuela", "Vietnam",
    "Wales", "Yemen", "Zambia", "Zimbabwe",
)

STATES = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware", "Florida",
    "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky", "Louisiana", "Maine",
    "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada",
    "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio", "Oklahoma",
    "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota", "Tennessee", "Texas", "Utah",
    "Vermont", "Virginia", "Washington", "West Virginia", "Wisconsin", "Wyoming",
)

CITIES = (
    # the United States and Canada
    "New York", "New York City", "NYC", "Manhattan", "Brooklyn", "Los Angeles", "Hollywood", "San Francisco",
    "San Diego", "San Jose", "Sacramento", "Oakland", "Santa Monica", "Chicago", "Houston", "Dallas", "Austin",
    "San Antonio", "Phoenix", "Tucson", "Philadelphia", "Seattle", "Portland", "Denver", "Boston", "Nashville",
    "Memphis", "Las Vegas", "Detroit", "Atlanta", "Savannah", "Miami", "Orlando", "Tampa", "New Orleans",
    "Minneapolis", "Cleveland", "Columbus", "Cincinnati", "Pittsburgh", "Baltimore", "Indianapolis", "Milwaukee",
    "Kansas City", "St. Louis", "Salt Lake City", "Albuquerque", "Charlotte", "Raleigh", "Charleston", "Honolulu",
    "Anchorage", "Boise", "Omaha", "Louisville", "Buffalo", "Toronto", "Montreal", "Vancouver", "Calgary", "Ottawa",
    "Quebec", "Edmonton", "Winnipeg", "Halifax",
    # Europe
    "London", "Paris", "Berlin", "Madrid", "Barcelona", "Seville", "Valencia", "Rome", "Milan", "Venice", "Naples",
    "Amsterdam", "Brussels", "Vienna", "Salzburg", "Prague", "Budapest", "Warsaw", "Krakow", "Lisbon", "Porto",
    "Dublin", "Galway", "Cork", "Belfast", "Edinburgh", "Glasgow", "Manchester", "Liverpool", "Birmingham", "Oxford",
    "Cambridge", "Bristol", "Munich", "Hamburg", "Frankfurt", "Cologne", "Zurich", "Geneva", "Copenhagen",
    "Stockholm", "Oslo", "Helsinki", "Reykjavik", "Athens", "Santorini", "Istanbul", "Moscow", "Kyiv", "Kiev",
    "Lyon", "Marseille", "Bordeaux", "Dubrovnik", "Ibiza", "Mallorca",
    # Asia, Oceania, Latin America, Africa
    "Tokyo", "Kyoto", "Osaka", "Seoul", "Beijing", "Shanghai", "Taipei", "Bangkok", "Phuket", "Bali", "Jakarta",
    "Manila", "Hanoi", "Ho Chi Minh City", "Kuala Lumpur", "Mumbai", "Delhi", "New Delhi", "Bangalore", "Goa",
    "Dubai", "Abu Dhabi", "Doha", "Tel Aviv", "Jerusalem", "Kathmandu", "Sydney", "Melbourne", "Brisbane", "Perth",
    "Auckland", "Wellington", "Mexico City", "Cancun", "Havana", "Rio de Janeiro", "Rio", "Sao Paulo", "Buenos Aires",
    "Lima", "Cusco", "Bogota", "Santiago", "Cairo", "Marrakech", "Cape Town", "Johannesburg", "Nairobi", "Lagos",
    "Accra",
)

# query words (by stem) naming a kind of place -> the kinds whose names they match
_KINDS = {
    "country": ("countries",), "nation": ("countries",),
    "state": ("states",),
    "city": ("cities",), "town": ("cities",),
    "place": ("countries", "states", "cities"), "location": ("countries", "states", "cities"),
    "destination": ("countries", "states", "cities"),
}
_NAMES = {"countries": COUNTRIES, "states": STATES, "cities": CITIES}


@lru_cache(maxsize=None)
def _names(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The names of ``kinds`` less those holding another of them as whole words ("New York City" holds "New York",
    "West Virginia" "Virginia"): a place in the text counts once, by its shortest listed name."""
    names = tuple(dict.fromkeys(n for k in kinds for n in _NAMES[k]))
    listed = set(names)

    def nested(n: str) -> bool:
        w = n.split()
        return any(" ".join(w[i:j]) in listed for i in range(len(w)) for j in range(i + 1, len(w) + 1)
                   if j - i < len(w))

    return tuple(n for n in names if not nested(n))


@lru_cache(maxsize=None)
def _by_stem() -> dict[str, tuple[str, ...]]:
    out = {}
    for cue, kinds in _KINDS.items():
        names = _names(kinds)
        for w in (cue, cue + "s", cue[:-1] + "ies" if cue.endswith("y") else cue + "es"):
            out[textnorm.stem(w)] = names
    return out


def names_of_kind(word: str) -> tuple[str, ...]:
    """The place names a query ``word`` asks for: those of its kind when it names a kind of place ("cities",
    "country", "places"), else ``()``."""
    if not isinstance(word, str):
        raise InvalidInput(f"word must be a str, got {type(word).__name__}")
    return _by_stem().get(textnorm.stem(word), ())
