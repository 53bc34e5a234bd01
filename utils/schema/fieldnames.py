"""Plausible strings for fields whose name says what they hold (`email`, `img_url`, `day`, `city`, `currency`, …).

The instance generator (`utils.schema.instance`) asks `value_for_name` for a string field without a `format` it
knows; a name no rule recognises gives None and the generator falls back to its own placeholders. Every value is
chosen by `pick` (the generator's seeded hash), so it is deterministic per seed; the generator still applies the
schema's `pattern` and length limits afterwards (and `enum`/`const` are decided before a string is generated).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import uuid
from collections.abc import Callable

Pick = Callable[[str, int], int]
"""`pick(salt, n)`: a deterministic integer in `[0, n)` for the current field and seed."""

FIRST_NAMES = ("Ada", "Bruno", "Chloe", "Diego", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Keiko", "Liam",
               "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tara")
LAST_NAMES = ("Almeida", "Brooks", "Chen", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova", "Jensen",
              "Kim", "Lopez", "Murphy", "Novak", "Okafor", "Patel", "Rossi", "Schmidt", "Tanaka", "Walker")
CITIES = ("Lisbon", "Toronto", "Osaka", "Nairobi", "Lyon", "Denver", "Krakow", "Melbourne", "Bogota", "Oslo",
          "Austin", "Seoul", "Porto", "Dublin", "Valencia", "Seattle")
COUNTRIES = (("US", "United States"), ("FR", "France"), ("DE", "Germany"), ("JP", "Japan"), ("BR", "Brazil"),
             ("CA", "Canada"), ("IN", "India"), ("GB", "United Kingdom"), ("ES", "Spain"), ("KE", "Kenya"))
CURRENCIES = ("USD", "EUR", "GBP", "JPY", "CAD", "AUD", "CHF", "INR")
STREETS = ("Maple Avenue", "Harbor Street", "Cedar Lane", "River Road", "Oak Boulevard", "Elm Street", "Pine Court")
NOUNS = ("order", "invoice", "meeting", "report", "delivery", "project", "ticket", "booking", "payment", "review")
VERBS = ("confirmed", "updated", "scheduled", "shipped", "approved", "received", "reviewed", "completed")
LANGUAGES = ("en", "fr", "de", "es", "ja", "pt")
_IMAGE_WORDS = {"img", "image", "images", "avatar", "photo", "picture", "pic", "thumbnail", "thumb", "icon", "logo",
                "banner", "cover"}
_URL_WORDS = {"url", "uri", "link", "href", "website", "homepage", "site", "webpage"}
_TEXT_WORDS = {"message", "text", "body", "content", "comment", "comments", "description", "desc", "note", "notes",
               "summary", "bio", "about", "details", "remark", "remarks", "feedback", "review", "caption", "reply"}
_PERSON_WORDS = {"user", "full", "display", "customer", "contact", "author", "owner", "person", "sender",
                 "recipient", "passenger", "guest", "employee", "member", "client", "holder", "driver", "assignee"}


def tokens(key: str) -> list[str]:
    """The words of a field name: `imgURL[0]` → `["img", "url"]`, `first_name` → `["first", "name"]`."""
    base = re.sub(r"[\[#~].*$", "", key)
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", base))
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def _any_pick(salt: str, n: int) -> int:
    return 0


@functools.lru_cache(maxsize=4096)
def _rule_for(key: str) -> tuple[tuple[str, ...], Callable[[list[str], Pick], str | None]] | None:
    """The words of a name and the first rule that recognises it (whether a rule does depends on the name alone,
    never on the seed): decided once per name, not on every generated value."""
    words = tokens(key)
    if not words:
        return None
    rule = next((r for r in _RULES if r(words, _any_pick) is not None), None)
    return None if rule is None else (tuple(words), rule)


def value_for_name(key: str, pick: Pick) -> str | None:
    """A string fitting what the field name `key` says it holds, or None when no rule recognises the name."""
    found = _rule_for(key)
    return None if found is None else found[1](list(found[0]), pick)


def _first(pick: Pick) -> str:
    return FIRST_NAMES[pick("first", len(FIRST_NAMES))]


def _last(pick: Pick) -> str:
    return LAST_NAMES[pick("last", len(LAST_NAMES))]


def _date(pick: Pick) -> dt.date:
    return dt.date(2024, 1, 1) + dt.timedelta(days=pick("date", 730))


def _time(pick: Pick) -> str:
    minutes = pick("time", 24 * 4) * 15
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _email(words: list[str], pick: Pick) -> str | None:
    if not {"email", "mail", "emailaddress"} & set(words) and words[-1] not in ("email", "mail"):
        return None
    return f"{_first(pick).lower()}.{_last(pick).lower()}{pick('n', 90) + 10}@example.com"


def _url(words: list[str], pick: Pick) -> str | None:
    if not _URL_WORDS & set(words) and not (set(words) & _IMAGE_WORDS and words[-1] in ("src", "path")):
        return None
    slug = f"{pick('slug', 16**6):06x}"
    if _IMAGE_WORDS & set(words):
        return f"https://images.example.com/{slug}.jpg"
    return f"https://www.example.com/{NOUNS[pick('noun', len(NOUNS))]}s/{slug}"


def _moment(words: list[str], pick: Pick) -> str | None:
    last = words[-1]
    if last in ("timestamp", "datetime") or (last == "at" and len(words) > 1) or words[-2:] == ["date", "time"]:
        return f"{_date(pick).isoformat()}T{_time(pick)}:00Z"
    if last in ("date", "day", "birthday", "dob", "birthdate") or (last == "on" and len(words) > 1):
        return _date(pick).isoformat()
    if last in ("time", "hour") or words[-2:] in (["start", "time"], ["end", "time"]):
        return _time(pick)
    if last in ("month",):
        return _date(pick).strftime("%Y-%m")
    if last in ("year",):
        return str(_date(pick).year)
    return None


def _phone(words: list[str], pick: Pick) -> str | None:
    if not {"phone", "mobile", "tel", "telephone", "fax", "cell", "msisdn"} & set(words):
        return None
    return f"+1-202-555-{pick('phone', 10000):04d}"


def _person(words: list[str], pick: Pick) -> str | None:
    joined = "_".join(words)
    if joined in ("first_name", "firstname", "given_name", "givenname", "forename") or words[-2:] == ["first", "name"]:
        return _first(pick)
    if joined in ("last_name", "lastname", "surname", "family_name", "familyname") or words[-2:] == ["last", "name"]:
        return _last(pick)
    if words[-1] in ("username", "login", "handle", "nickname", "screenname") or words[-2:] == ["user", "name"]:
        return f"{_first(pick).lower()}{_last(pick).lower()[:3]}{pick('n', 90) + 10}"
    if words[-1] == "name" and (len(words) == 1 or _PERSON_WORDS & set(words[:-1])) or words[-1] in (
            "author", "fullname", "assignee", "owner", "contact", "recipient", "sender"):
        return f"{_first(pick)} {_last(pick)}"
    return None


def _place(words: list[str], pick: Pick) -> str | None:
    last = words[-1]
    if {"zip", "zipcode", "postcode", "postal"} & set(words):
        return f"{pick('zip', 90000) + 10000:05d}"
    if "country" in words:
        code, name = COUNTRIES[pick("country", len(COUNTRIES))]
        return code if last in ("code", "iso", "iso2") or "code" in words else name
    if "city" in words or last in ("town", "locality"):
        return CITIES[pick("city", len(CITIES))]
    if last in ("address", "street", "addr", "line1", "address1") or words[-2:] == ["address", "line"]:
        return f"{pick('number', 980) + 20} {STREETS[pick('street', len(STREETS))]}"
    if "currency" in words:
        return CURRENCIES[pick("currency", len(CURRENCIES))]
    if {"language", "lang", "locale"} & set(words):
        return LANGUAGES[pick("lang", len(LANGUAGES))]
    return None


def _misc(words: list[str], pick: Pick) -> str | None:
    last = words[-1]
    if last in ("uuid", "guid"):
        return str(uuid.UUID(int=pick("uuid", 2**63) << 64 | pick("uuid2", 2**63), version=4))
    if last in ("color", "colour"):
        return f"#{pick('color', 16**6):06x}"
    if last in ("ip", "ipv4") or words[-2:] == ["ip", "address"]:
        return f"192.0.2.{pick('ip', 254) + 1}"
    return None


def _text(words: list[str], pick: Pick) -> str | None:
    last = words[-1]
    noun, verb = NOUNS[pick("noun", len(NOUNS))], VERBS[pick("verb", len(VERBS))]
    if last in ("title", "subject", "headline", "label", "topic"):
        return f"{noun.capitalize()} {verb} for {_first(pick)}"
    if last in _TEXT_WORDS:
        return f"The {noun} was {verb} by {_first(pick)} {_last(pick)} on {_date(pick).isoformat()}."
    if last == "name":  # a thing's name: two words that read as one
        return f"{CITIES[pick('city', len(CITIES))]} {noun.capitalize()}"
    return None


_RULES: tuple[Callable[[list[str], Pick], str | None], ...] = (
    _email, _url, _phone, _place, _moment, _person, _misc, _text)
"""First rule that recognises the name wins: an `email_url` is an email, a `country_code` a code, a `start_date`
a date, a `user_name` a person's handle."""
