"""The domains of the runtime, registered by name: each pairs a database model with its tools."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Optional

from pydantic import BaseModel

from benchmarks.taubench.domain_tools import DomainTools
from benchmarks.taubench.domains.airline import AirlineTools, FlightDB
from benchmarks.taubench.domains.retail import RetailDB, RetailTools
from benchmarks.taubench.domains.telecom import TelecomDB, TelecomTools, TelecomUserDB, TelecomUserTools, sync

DomainName = Literal["airline", "retail", "telecom"]


@dataclass(frozen=True)
class DomainSpec:
    """The static parts of a domain.

    Attributes:
        name: domain name, as in tau2 (`airline`, `retail`, `telecom`).
        db_model: pydantic model of the whole database.
        tools: the class of the domain's tools, operating on that database.
        user_db_model: model of the user's own state, for a dual-control domain (telecom), else None.
        user_tools: the class of the user's tools over that state, else None.
        sync: called with (agent tools, user tools) after every tool call and step, to keep the two sides consistent.
    """

    name: DomainName
    db_model: type[BaseModel]
    tools: type[DomainTools]
    user_db_model: Optional[type[BaseModel]] = None
    user_tools: Optional[type[DomainTools]] = None
    sync: Optional[Callable[[Any, Any], None]] = None

    @property
    def dual_control(self) -> bool:
        """Whether the user has tools of their own."""
        return self.user_tools is not None


DOMAINS: dict[str, DomainSpec] = {
    "airline": DomainSpec("airline", FlightDB, AirlineTools),
    "retail": DomainSpec("retail", RetailDB, RetailTools),
    "telecom": DomainSpec("telecom", TelecomDB, TelecomTools, TelecomUserDB, TelecomUserTools, sync),
}
"""Registered domains (read-only by convention; add a domain by adding an entry here)."""


def get_domain(name: str) -> DomainSpec:
    """Look up a domain by name.

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    try:
        return DOMAINS[name]
    except KeyError:
        raise ValueError(f"unknown tau2 domain {name!r}; known: {', '.join(DOMAINS)}") from None
