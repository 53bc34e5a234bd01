"""The domains of the runtime, registered by name: each pairs a database model with its tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from benchmarks.taubench.domain_tools import DomainTools
from benchmarks.taubench.domains.airline import AirlineTools, FlightDB
from benchmarks.taubench.domains.retail import RetailDB, RetailTools

DomainName = Literal["airline", "retail"]


@dataclass(frozen=True)
class DomainSpec:
    """The static parts of a domain.

    Attributes:
        name: domain name, as in tau2 (`airline`, `retail`).
        db_model: pydantic model of the whole database.
        tools: the class of the domain's tools, operating on that database.
    """

    name: DomainName
    db_model: type[BaseModel]
    tools: type[DomainTools]


DOMAINS: dict[str, DomainSpec] = {
    "airline": DomainSpec("airline", FlightDB, AirlineTools),
    "retail": DomainSpec("retail", RetailDB, RetailTools),
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
