"""What the query arguments of a list operation mean, read from the document: each argument's name, description
and schema, never a name list alone.

| role | recognised by name | or by its description (and schema) |
|---|---|---|
| limit | `limit`, `_limit`, `per_page`, `page_size`, `top`, `count`, `first`, `max_results`, `size`, `n` … | an integer "maximum number of results", "items per page", "how many" |
| offset | `offset`, `_start`, `skip`, `start` | an integer "number of items to skip", "offset" |
| page | `page`, `_page`, `page_number` | an integer "page number", "which page" |
| cursor | `cursor`, `after`, `starting_after`, `page_token`, `next_token`, `continuation` | a string "cursor", "pagination token" |
| sort | `sort`, `_sort`, `sort_by`, `order_by`, `orderby` | "sort by", "field to order by" |
| order | `order`, `_order`, `direction`, `sort_order`, `dir` | an enum of `asc`/`desc` |
| search | `q`, `query`, `search`, `keyword(s)`, `term`, `text`, `filter` (a string) | "full-text search", "search term" |

An argument that is none of these, nor a record field, a range (`min_price`) or the collection itself, is
*ignored*: the binding lists it, the toolkit's load logs it once, and a call that gives it says so in its notes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from gecko.toolkits.model import QueryRoles

_NAMES: dict[str, frozenset[str]] = {
    "limit": frozenset({"limit", "per_page", "perpage", "page_size", "pagesize", "top", "count", "first", "last",
                        "max_results", "maxresults", "max_items", "maxitems", "size", "n", "num", "num_results",
                        "number", "results", "max", "take", "rows", "page_limit", "batch_size", "max_records"}),
    "offset": frozenset({"offset", "skip", "start", "from", "start_index", "startindex", "start_at"}),
    "page": frozenset({"page", "page_number", "pagenumber", "page_num", "pageno", "page_index", "pageindex"}),
    "cursor": frozenset({"cursor", "after", "starting_after", "startingafter", "page_token", "pagetoken",
                         "next_token", "nexttoken", "continuation", "continuation_token", "next_page_token",
                         "marker", "since_id", "after_id"}),
    "sort": frozenset({"sort", "sort_by", "sortby", "order_by", "orderby", "sort_field", "sortfield", "sort_key"}),
    "order": frozenset({"order", "direction", "sort_order", "sortorder", "sort_direction", "dir", "sort_dir"}),
    "search": frozenset({"q", "query", "search", "keyword", "keywords", "term", "text", "search_term",
                         "searchterm", "search_query", "filter", "fulltext", "full_text"}),
}
_DESCRIPTIONS: dict[str, re.Pattern[str]] = {
    "limit": re.compile(r"\b(max(imum)?\s+(number|count|amount)\s+of|number\s+of\s+(results|items|records|"
                        r"entries|rows|objects)\s+(to\s+)?(return|per\s+page|in\s+(the|a|each)\s+page)|"
                        r"(items|results|records|entries)\s+per\s+page|page\s+size|how\s+many|limit(s)?\s+the\s+"
                        r"(number|results)|at\s+most)", re.I),
    "offset": re.compile(r"\b(number\s+of\s+(results|items|records|entries|rows)\s+to\s+skip|offset|skip\s+the\s+"
                         r"first|index\s+of\s+the\s+first)", re.I),
    "page": re.compile(r"\b(page\s+(number|index)|which\s+page|the\s+page\s+to\s+(return|fetch|retrieve))", re.I),
    "cursor": re.compile(r"\b(cursor|pagination\s+token|continuation\s+token|next\s+page\s+token|page\s+token)",
                         re.I),
    "sort": re.compile(r"\b(sort(ed)?\s+(by|on)|field\s+to\s+(sort|order)\s+by|order(ed)?\s+by)", re.I),
    "order": re.compile(r"\b(sort\s+(order|direction)|ascending|descending|\basc\b|\bdesc\b)", re.I),
    "search": re.compile(r"\b(full[- ]text|search\s+(term|text|query|string)|free[- ]text|keywords?\s+to\s+"
                         r"search)", re.I),
}
_TYPES: dict[str, tuple[str, ...]] = {
    "limit": ("integer", "number"), "offset": ("integer", "number"), "page": ("integer", "number"),
    "cursor": ("string", "integer"), "sort": ("string", "array"), "order": ("string",), "search": ("string",),
}
_ORDER_WORDS = frozenset({"asc", "desc", "ascending", "descending"})
_ROLES = ("order", "page", "offset", "cursor", "limit", "sort", "search")
"""The order roles are tried in: the narrower first (`order` before `sort`, `page` before `limit`)."""


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()).strip("_")


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, Mapping):
        return set()
    declared = schema.get("type")
    found = {declared} if isinstance(declared, str) else set(declared) if isinstance(declared, list) else set()
    for combiner in ("anyOf", "oneOf"):
        for branch in schema.get(combiner, []) or []:
            found |= _types(branch)
    if not found and isinstance(schema.get("enum"), list):
        found = {"string" if all(isinstance(v, str) for v in schema["enum"]) else "number"}
    return found - {"null"}


def _is_order_enum(schema: Any) -> bool:
    enum = schema.get("enum") if isinstance(schema, Mapping) else None
    return isinstance(enum, list) and bool(enum) and all(str(v).lower() in _ORDER_WORDS for v in enum)


def _fits(role: str, schema: Any) -> bool:
    types = _types(schema)
    return not types or bool(types & set(_TYPES[role]))


def role_of(name: str, schema: Any, description: str) -> str | None:
    """The role of one query argument, or None: by its name (with a `_`, `$` or `page[…]`-style prefix ignored)
    when its schema fits the role, else by its description; an enum of asc/desc is always `order`."""
    if _is_order_enum(schema):
        return "order"
    key = _key(name.lstrip("_$"))
    for role in _ROLES:
        if key in _NAMES[role] and _fits(role, schema):
            return role
    text = description or (schema.get("description", "") if isinstance(schema, Mapping) else "")
    if text:
        for role in _ROLES:
            if _DESCRIPTIONS[role].search(text) and _fits(role, schema):
                return role
    return None


def classify(arguments: Mapping[str, Any], descriptions: Mapping[str, str], understood: Iterable[str]) -> QueryRoles:
    """The roles of a list operation's arguments.

    Args:
        arguments: argument name → JSON schema (the operation's argument properties).
        descriptions: argument name → the parameter's description in the document.
        understood: arguments already interpreted otherwise (record fields, ranges, parents, the collection): they
            keep that meaning, never take a role, and are never reported as ignored.
    """
    known = set(understood)
    found: dict[str, str] = {}
    ignored: list[str] = []
    for name, schema in arguments.items():
        if name in known:
            continue
        role = role_of(name, schema, descriptions.get(name, ""))
        if role is not None and role not in found:
            found[role] = name
        else:
            ignored.append(name)
    limit = found.get("limit")
    default = arguments.get(limit, {}).get("default") if limit and isinstance(arguments.get(limit), Mapping) else None
    default_limit = default if isinstance(default, int) and not isinstance(default, bool) and default > 0 else None
    return QueryRoles(limit=limit, offset=found.get("offset"), page=found.get("page"), cursor=found.get("cursor"),
                      sort=found.get("sort"), order=found.get("order"), search=found.get("search"),
                      default_limit=default_limit, ignored=tuple(ignored))


__all__ = ["classify", "role_of"]
