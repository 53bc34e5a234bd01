"""String formats Gecko checks (and the rules synthesizer produces): one definition for both sides."""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
import uuid

from jsonschema import FormatChecker

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s]*$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*$")
_TIME = re.compile(r"^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+\-]\d{2}:\d{2})?$")

FORMAT_HINTS = {
    "date": "a date as YYYY-MM-DD",
    "date-time": "a date-time as YYYY-MM-DDTHH:MM:SSZ (RFC 3339)",
    "time": "a time as HH:MM:SS",
    "email": "an email address",
    "uuid": "a UUID",
    "uri": "an absolute URI such as https://example.com/x",
    "ipv4": "an IPv4 address",
    "ipv6": "an IPv6 address",
    "hostname": "a host name",
}


def _date(value: str) -> bool:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return False
    dt.date.fromisoformat(value)
    return True


def _date_time(value: str) -> bool:
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2}(?:\.\d+)?)([Zz]|[+\-]\d{2}:\d{2})", value)
    if not match:
        return False
    date, time, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    dt.datetime.fromisoformat(f"{date}T{time}{zone}")
    return True


def _time(value: str) -> bool:
    if not _TIME.fullmatch(value):
        return False
    dt.time.fromisoformat(value[:8])
    return True


def _uuid(value: str) -> bool:
    uuid.UUID(value)
    return len(value) == 36


def build_format_checker() -> FormatChecker:
    """A jsonschema FormatChecker for the formats Gecko enforces (unknown formats pass, per the spec)."""
    checker = FormatChecker(formats=())
    checks = {
        "date": _date,
        "date-time": _date_time,
        "time": _time,
        "email": lambda v: bool(_EMAIL.match(v)),
        "uuid": _uuid,
        "uri": lambda v: bool(_URI.match(v)),
        "ipv4": lambda v: bool(ipaddress.IPv4Address(v)),
        "ipv6": lambda v: bool(ipaddress.IPv6Address(v)),
        "hostname": lambda v: bool(_HOSTNAME.match(v)),
    }
    for name, func in checks.items():
        def check(value: object, _func=func) -> bool:
            if not isinstance(value, str):
                return True
            try:
                return _func(value)
            except ValueError:
                return False
        checker.checks(name, raises=())(check)
    return checker


FORMAT_CHECKER = build_format_checker()
