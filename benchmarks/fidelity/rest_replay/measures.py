"""The figures of a replay, per class of fidelity, counted call by call and sequence by sequence.

| class | counted over | passes when |
|---|---|---|
| `creates_only_sent` | valid creates Gecko accepted | the record Gecko stored has only the fields sent plus the server's own (id, readOnly, defaults), with the values sent |
| `put_replaces` | valid PUTs of an existing record Gecko accepted | the stored record is the body plus the server's own fields (a field not sent is gone) |
| `status_exact` | successes of valid calls on an operation that declares a 2xx | the status is the lowest declared 2xx (creates, deletes, others) |
| `declared_headers_present`, `no_body_when_declared_without_content` | the same successes, where declared | the declared response headers are there (e.g. `Location`); no body where the status has no content (204) |
| `invented_fields` | records in Gecko's read and list answers | counts fields its own state's record lacks, and fields the real server's answer lacks |
| `own_list_vs_state` | each collection at the end of a sequence | Gecko's unfiltered list holds exactly the records of its own state |
| `page_size_honoured` | lists with the page-size parameter Gecko answered | no more items than asked, and as many as its state holds when unfiltered |
| `list_agrees_with_real` | lists both sides answered, by the roles of the query parameters given | the same records (by creation order), in the same order when sorted |
| `final_state_exact` | sequences | every record the real server holds, Gecko holds, with the same fields; sent values equal (values the server makes, such as ids, compared by presence) |
| `outcome_agreement` | calls sent to both sides | ok / not found / rejected agree (by intent: valid, missing id, invalid) |

Each `*_real` figure is the same check on the real server's answers: it shows the check itself is right (1.0 on
a faithful server).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.fidelity.rest_replay.calls import Call
from benchmarks.fidelity.rest_replay.contract import Resource
from benchmarks.fidelity.rest_replay.replay import Answer, Side

EXAMPLES = 3
"""Failing examples kept per class."""


@dataclass
class Rate:
    """Passes over checks."""

    hits: int = 0
    n: int = 0

    def add(self, ok: bool) -> bool:
        self.hits += ok
        self.n += 1
        return ok

    def public(self) -> dict[str, Any]:
        return {"rate": round(self.hits / self.n, 4) if self.n else None, "n": self.n}


def _items(body: Any) -> list[Any] | None:
    if isinstance(body, list):
        return body
    if isinstance(body, Mapping):
        return next((v for v in body.values() if isinstance(v, list)), None)
    return None


def _holds_only(record: Any, sent: Any, owned: frozenset[str]) -> bool:
    """`record` has only the keys of `sent` plus `owned`, with the values sent."""
    if not isinstance(record, Mapping) or not isinstance(sent, Mapping):
        return False
    return set(record) <= set(sent) | owned and all(record.get(k) == v for k, v in sent.items())


@dataclass
class Tally:
    """Every class's counters over a run."""

    creates_only_sent: Rate = field(default_factory=Rate)
    creates_only_sent_real: Rate = field(default_factory=Rate)
    put_replaces: Rate = field(default_factory=Rate)
    put_replaces_real: Rate = field(default_factory=Rate)
    status_exact: dict[str, Rate] = field(default_factory=lambda: {k: Rate() for k in ("create", "delete", "other")})
    status_exact_real: dict[str, Rate] = field(default_factory=lambda: {k: Rate() for k in ("create", "delete", "other")})
    invented: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("records_checked", "records_with_invented_vs_state", "fields_vs_state", "compared_with_real",
         "fields_vs_real", "answered_but_not_held"), 0))
    declared_headers: Rate = field(default_factory=Rate)
    declared_headers_real: Rate = field(default_factory=Rate)
    no_content: Rate = field(default_factory=Rate)
    no_content_real: Rate = field(default_factory=Rate)
    own_list_vs_state: Rate = field(default_factory=Rate)
    list_agrees: dict[str, Rate] = field(default_factory=dict)
    page_size_honoured: Rate = field(default_factory=Rate)
    page_size_agrees_real: Rate = field(default_factory=Rate)
    final_state_exact: Rate = field(default_factory=Rate)
    outcome: dict[str, Rate] = field(default_factory=lambda: {k: Rate() for k in ("all", "valid", "missing", "invalid")})
    gecko_rejects_invalid: Rate = field(default_factory=Rate)
    server_errors: dict[str, int] = field(default_factory=lambda: {"gecko": 0, "real": 0})
    examples: dict[str, list[str]] = field(default_factory=dict)
    ignores_unheld_filters: bool = False
    """The real server drops a filter on a field no record holds (see `Backend`): such lists are not compared."""
    forgiven_lists: int = 0

    def example(self, name: str, text: str) -> None:
        kept = self.examples.setdefault(name, [])
        if len(kept) < EXAMPLES:
            kept.append(text[:400])

    def call(self, res: Resource, call: Call, real: Answer | None, gecko: Answer, held: Mapping[str, Any],
             real_side: Side, gecko_side: Side) -> None:
        """Count one call: Gecko's answer and `held` (its state after the call), and the real answer if sent."""
        self.server_errors["gecko"] += gecko.status >= 500
        if real is not None:
            self.server_errors["real"] += real.status >= 500
            for key in ("all", call.intent):
                if not self.outcome[key].add(real.outcome == gecko.outcome):
                    self.example(f"outcome_{call.intent}", f"{call.kind} {res.name} ({call.intent}): real "
                                 f"{real.status}, gecko {gecko.status} {str(gecko.body)[:160]}")
        elif call.intent == "invalid":
            self.gecko_rejects_invalid.add(gecko.outcome == "rejected")
        if call.intent != "valid":
            return
        self._status(res, call, gecko, self.status_exact, "gecko")
        if real is not None:
            self._status(res, call, real, self.status_exact_real, "real")
        records = held.get(res.name, {})
        if call.kind == "create" and gecko.outcome == "ok":
            new_id = gecko.body.get(res.id_field) if isinstance(gecko.body, Mapping) else None
            stored = records.get(str(new_id))
            if not self.creates_only_sent.add(_holds_only(stored, gecko.sent, res.owned)):
                self.example("creates_only_sent", f"{res.name}: sent {gecko.sent}, stored {stored}")
            if real is not None and real.outcome == "ok":
                self.creates_only_sent_real.add(_holds_only(real.body, real.sent, res.owned))
        if call.kind == "replace" and gecko.outcome == "ok" and call.ref is not None:
            stored = records.get(str(gecko_side.resolve(call.ref)))
            if not self.put_replaces.add(_holds_only(stored, gecko.sent, res.owned)):
                self.example("put_replaces", f"{res.name}: sent {gecko.sent}, stored {stored}")
            if real is not None and real.outcome == "ok":
                self.put_replaces_real.add(_holds_only(real.body, real.sent, res.owned))
        if call.kind in ("read", "list") and gecko.outcome == "ok":
            self._invented(res, call, real, gecko, records, real_side, gecko_side)
        if call.kind == "list" and gecko.outcome == "ok":
            if real is not None and self._server_specific(res, call, real_side):
                self.forgiven_lists += 1
                real = None
            self._page_size(res, call, real, gecko, records)
            if real is not None and real.outcome == "ok":
                self._list_agrees(res, call, real, gecko, real_side, gecko_side)

    def _server_specific(self, res: Resource, call: Call, real_side: Side) -> bool:
        """A list whose answer on the real server is its own quirk (a filter on a field no record it holds has)."""
        assert res.listing is not None
        filters = [p.name for p in res.listing.params if p.role == "filter" and p.name in call.query]
        if not self.ignores_unheld_filters or not filters:
            return False
        held = [r for r in real_side.listing(res) or [] if isinstance(r, Mapping)]
        return any(not any(name in r for r in held) for name in filters)

    def _status(self, res: Resource, call: Call, answer: Answer, rates: dict[str, Rate], side: str) -> None:
        operation = res.operations()[call.kind]
        declared = operation.success
        if answer.outcome != "ok" or declared is None:
            return
        if operation.headers:
            present = set(operation.headers) <= answer.headers
            (self.declared_headers if side == "gecko" else self.declared_headers_real).add(present)
            if not present and side == "gecko":
                self.example("declared_headers", f"{call.kind} {res.name}: declared {list(operation.headers)}, "
                             f"answered {sorted(answer.headers)}")
        if operation.empty:
            (self.no_content if side == "gecko" else self.no_content_real).add(not answer.raw)
        kind = call.kind if call.kind in ("create", "delete") else "other"
        if not rates[kind].add(answer.status == declared) and side == "gecko":
            self.example(f"status_{kind}", f"{call.kind} {res.name}: declared {declared}, answered {answer.status}")

    def _invented(self, res: Resource, call: Call, real: Answer | None, gecko: Answer,
                  records: Mapping[str, Any], real_side: Side, gecko_side: Side) -> None:
        answered = [gecko.body] if call.kind == "read" else (_items(gecko.body) or [])
        real_items = ([real.body] if call.kind == "read" else (_items(real.body) or [])) \
            if real is not None and real.outcome == "ok" else []
        real_by_id = {str(r.get(res.id_field)): r for r in real_items if isinstance(r, Mapping)}
        for item in answered:
            if not isinstance(item, Mapping):
                continue
            self.invented["records_checked"] += 1
            held = records.get(str(item.get(res.id_field)))
            if held is None:
                self.invented["answered_but_not_held"] += 1
                self.example("answered_but_not_held", f"{call.kind} {res.name}: {item}")
            else:
                extra = set(item) - set(held)
                self.invented["fields_vs_state"] += len(extra)
                self.invented["records_with_invented_vs_state"] += bool(extra)
                if extra:
                    self.example("invented_vs_state", f"{call.kind} {res.name}: answered {item}, holds {held}")
            index = gecko_side.index_of(res.name, item.get(res.id_field))
            twin = real_by_id.get(str(real_side.ids[res.name][index])) if index is not None and \
                index < len(real_side.ids[res.name]) else None
            if twin is not None:
                self.invented["compared_with_real"] += 1
                self.invented["fields_vs_real"] += len(set(item) - set(twin))

    def _list_agrees(self, res: Resource, call: Call, real: Answer, gecko: Answer, real_side: Side,
                     gecko_side: Side) -> None:
        """The same records, by the list's query parameter roles (`plain`: none); in the same order when a sort
        was asked for (else the order is the server's own: temba moves a replaced record to the end)."""
        assert res.listing is not None
        roles: list[str] = sorted({p.role for p in res.listing.params if p.name in call.query}) or ["plain"]
        rate = self.list_agrees.setdefault("+".join(roles), Rate())

        def order(side: Side, answer: Answer) -> list[int | None]:
            return [side.index_of(res.name, i.get(res.id_field)) if isinstance(i, Mapping) else None
                    for i in _items(answer.body) or []]

        mine, theirs = order(gecko_side, gecko), order(real_side, real)
        if "sort" not in roles:
            mine, theirs = sorted(mine, key=str), sorted(theirs, key=str)
        if not rate.add(mine == theirs):
            self.example("list_vs_real", f"{res.name} {dict(gecko.query)}: gecko #{mine}, real #{theirs}")

    def _page_size(self, res: Resource, call: Call, real: Answer | None, gecko: Answer,
                   records: Mapping[str, Any]) -> None:
        assert res.listing is not None
        roles = {p.role: p.name for p in reversed(res.listing.params)}
        size_name = roles.get("page_size")
        if size_name is None or size_name not in call.query:
            return
        size = int(call.query[size_name])
        page = int(call.query.get(roles.get("page", ""), 1))
        items = _items(gecko.body) or []
        narrowed = any(p.role in ("filter", "search") and p.name in call.query for p in res.listing.params)
        expected = min(size, max(0, len(records) - (page - 1) * size))
        ok = len(items) <= size and (narrowed or len(items) == expected)
        if not self.page_size_honoured.add(ok):
            self.example("page_size", f"{res.name} {dict(call.query)}: {len(items)} items, state holds {len(records)}")
        if real is not None and real.outcome == "ok":
            theirs = _items(real.body) or []
            if not self.page_size_agrees_real.add(len(items) == len(theirs)):
                self.example("page_size_vs_real", f"{res.name} {dict(gecko.query)}: gecko {len(items)} items, real "
                             f"{len(theirs)} ({dict(real.query)})")

    def public(self) -> dict[str, Any]:
        """The figures as JSON."""
        invented = dict(self.invented)
        return {
            "creates_only_sent": self.creates_only_sent.public(),
            "put_replaces": self.put_replaces.public(),
            "status_exact": {k: v.public() for k, v in self.status_exact.items()},
            "declared_headers_present": self.declared_headers.public(),
            "no_body_when_declared_without_content": self.no_content.public(),
            "invented_fields": invented,
            "own_list_disagrees_with_state": {
                "rate": round(1 - self.own_list_vs_state.hits / self.own_list_vs_state.n, 4)
                if self.own_list_vs_state.n else None, "n": self.own_list_vs_state.n},
            "page_size_honoured": self.page_size_honoured.public(),
            "page_size_agrees_with_real": self.page_size_agrees_real.public(),
            "list_agrees_with_real": {k: v.public() for k, v in sorted(self.list_agrees.items())},
            "lists_not_compared_server_specific": self.forgiven_lists,
            "final_state_exact": self.final_state_exact.public(),
            "outcome_agreement": {k: v.public() for k, v in self.outcome.items()},
            "gecko_rejects_invalid_only_gecko_saw": self.gecko_rejects_invalid.public(),
            "server_errors": dict(self.server_errors),
            "real_server_checks": {"creates_only_sent": self.creates_only_sent_real.public(),
                                   "put_replaces": self.put_replaces_real.public(),
                                   "declared_headers_present": self.declared_headers_real.public(),
                                   "no_body_when_declared_without_content": self.no_content_real.public(),
                                   "status_exact": {k: v.public() for k, v in self.status_exact_real.items()}},
            "examples": self.examples,
        }
