"""One side of a replay (the real server, or a Gecko session): calls sent by creation order, answers observed.

A side keeps, per resource, the id it gave each record in creation order, and resolves a sequence's `Ref`s
(in the path, in link fields of a body, in filter values) to its own ids; an id no server issued is the
same made-up value on both sides. The Gecko side also reads its session's state after every call, so an answer
can be checked against what Gecko itself holds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from benchmarks.fidelity.rest_replay.calls import Call, Ref
from benchmarks.fidelity.rest_replay.contract import Operation, Resource

SESSION_HEADER = "X-Session-ID"
VERSION_HEADER = "X-Gecko-State-Version"


def outcome(status: int) -> str:
    """`ok` (2xx), `not_found` (404), `rejected` (400/409/422) or `error <status>`."""
    if 200 <= status < 300:
        return "ok"
    if status == 404:
        return "not_found"
    if status in (400, 409, 422):
        return "rejected"
    return f"error {status}"


@dataclass(frozen=True)
class Answer:
    """What a side answered to one call."""

    status: int
    body: Any
    sent: Any
    """The body as this side sent it (its own ids at link fields)."""
    query: Mapping[str, Any]
    headers: frozenset[str] = frozenset()
    """The response's header names (lower case)."""
    raw: bytes = b""

    @property
    def outcome(self) -> str:
        return outcome(self.status)


class Side:
    """A server under replay: a base URL (and for Gecko, the toolkit prefix and session header)."""

    def __init__(self, client: httpx.Client, resources: list[Resource], prefix: str = "",
                 headers: Mapping[str, str] | None = None, create_gap: float = 0.0) -> None:
        self.client = client
        self.create_gap = create_gap
        """Seconds left after each create (a server whose ids are the clock)."""
        self.resources = {r.name: r for r in resources}
        self.prefix = prefix
        self.headers = dict(headers or {})
        self.ids: dict[str, list[Any]] = {r.name: [] for r in resources}

    def made_up(self, res: Resource, token: int) -> Any:
        """An id no server issued (of the id field's type)."""
        return 900_000_000 + token if res.id_type == "integer" else f"never-issued-{token}"

    def resolve(self, ref: Ref) -> Any:
        """This side's id of the record `ref` names (a made-up one for a record it never gave an id)."""
        res = self.resources[ref.resource]
        ids = self.ids[ref.resource]
        if ref.index is None or ref.index >= len(ids) or ids[ref.index] is None \
                or any(str(later) == str(ids[ref.index]) for later in ids[ref.index + 1:]):
            # never given an id, or its id went to a later record (a server that reuses freed ids)
            return self.made_up(res, ref.token if ref.index is None else 500_000 + ref.index)
        return ids[ref.index]

    def index_of(self, resource: str, record_id: Any) -> int | None:
        """The creation index of the record this side gave `record_id` (the newest, if the id was reused)."""
        ids = self.ids[resource]
        for index in range(len(ids) - 1, -1, -1):
            if ids[index] is not None and str(ids[index]) == str(record_id):
                return index
        return None

    def _resolved(self, value: Any) -> Any:
        if isinstance(value, Ref):
            return self.resolve(value)
        if isinstance(value, dict):
            return {k: self._resolved(v) for k, v in value.items()}
        return value

    def _operation(self, call: Call) -> Operation:
        ops = self.resources[call.resource].operations()
        return ops["list" if call.kind == "list" else call.kind]

    def send(self, call: Call) -> Answer:
        """Send `call`; a create's new id is recorded under its creation index."""
        res = self.resources[call.resource]
        operation = self._operation(call)
        path = operation.path
        if call.ref is not None:
            path = path.replace(f"{{{res.id_param}}}", str(self.resolve(call.ref)))
        body = self._resolved(call.body)
        query = {k: (str(v).lower() if isinstance(v, bool) else str(v))
                 for k, v in self._resolved(dict(call.query)).items()}
        response = self.client.request(operation.method, self.prefix + path, params=query,
                                       json=body if call.body is not None else None, headers=self.headers)
        self.answered(response)
        try:
            parsed = response.json() if response.content else None
        except ValueError:
            parsed = response.text
        if call.kind == "create" and self.create_gap:
            time.sleep(self.create_gap)
        if call.kind == "create" and call.creates is not None:
            new_id = parsed.get(res.id_field) if isinstance(parsed, dict) and 200 <= response.status_code < 300 \
                else None
            self.record_id(call.resource, call.creates, new_id)
        return Answer(response.status_code, parsed, body, query, frozenset(k.lower() for k in response.headers),
                      response.content)

    def answered(self, response: httpx.Response) -> None:
        """Hook: a response arrived (the Gecko side notes its session's state version)."""

    def record_id(self, resource: str, index: int, record_id: Any) -> None:
        """Remember that this side gave the record of creation index `index` the id `record_id`."""
        ids = self.ids[resource]
        ids.extend([None] * (index + 1 - len(ids)))
        ids[index] = record_id

    def listing(self, res: Resource) -> Any:
        """Every record of `res` as this side lists it (no query parameters)."""
        response = self.client.get(self.prefix + res.path, headers=self.headers)
        return response.json() if response.status_code == 200 else None


class GeckoSide(Side):
    """A Gecko session on the document's own routes (`/{toolkit}{path}`)."""

    def __init__(self, client: httpx.Client, resources: list[Resource], toolkit: str, state: Mapping[str, Any]) -> None:
        created = client.post("/sessions", json={"config": {"toolkits": [toolkit]}, "state": dict(state)})
        created.raise_for_status()
        self.session = str(created.json()["session_id"])
        self.toolkit = toolkit
        self.version: str | None = None
        self._held: tuple[str, dict[str, dict[str, Any]]] | None = None
        super().__init__(client, resources, prefix=f"/{toolkit}", headers={SESSION_HEADER: self.session})

    def answered(self, response: httpx.Response) -> None:
        pending = response.headers.get("X-Gecko-State") == "pending"  # the version does not tell the change yet
        self.version = None if pending else response.headers.get(VERSION_HEADER, self.version)

    def state(self) -> dict[str, dict[str, Any]]:
        """The session's records per collection, keyed by id text (what Gecko itself holds); read again only when
        a call moved the session's state version."""
        if self._held is not None and self.version is not None and self._held[0] == self.version:
            return self._held[1]
        response = self.client.get(f"/sessions/{self.session}/state")
        response.raise_for_status()
        data = response.json()
        held = self._records((data.get("state") or {}).get(self.toolkit) or {})
        self._held = (str(data.get("version")), held)
        self.version = str(data.get("version"))
        return held

    def _records(self, part: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        held: dict[str, dict[str, Any]] = {}
        for name, res in self.resources.items():
            records = part.get(name)
            if isinstance(records, dict):
                held[name] = {str(k): v for k, v in records.items() if isinstance(v, dict)}
            elif isinstance(records, list):
                held[name] = {str(r.get(res.id_field)): r for r in records if isinstance(r, dict)}
            else:
                held[name] = {}
        return held

    def close(self) -> None:
        """Delete the session."""
        self.client.delete(f"/sessions/{self.session}")
