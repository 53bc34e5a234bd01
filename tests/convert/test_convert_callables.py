"""Python callables: signature, type hints, pydantic models and docstrings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from gecko.convert import ConversionError, from_callables
from gecko.convert.callables import callable_tools
from gecko.toolkits import ToolkitRegistry


class Passenger(BaseModel):
    """A traveller."""

    first_name: str
    last_name: str
    dob: str = Field(description="Date of birth, YYYY-MM-DD.")


class Booking(BaseModel):
    booking_id: str
    passengers: list[Passenger]


def book(passengers: list[Passenger], cabin: Literal["economy", "business"], bags: int = 0,
         note: Optional[str] = None) -> Booking:
    """Book a flight.

    Books seats for every passenger.

    Args:
        passengers: Who travels.
        cabin: Cabin class.
        bags: Checked bags.
        note: Free text for the crew.

    Returns:
        The new booking.
    """
    raise NotImplementedError


def ping(host):  # unannotated on purpose
    """Check a host."""


def nothing() -> None:
    """Do nothing."""


class Kit:
    def count(self, prefix: str = "") -> int:
        """Count things.

        :param prefix: Only names starting with this.
        :returns: How many.
        """
        return 0

    def update(self, key: str, **fields: Any) -> dict[str, Any]:
        """Update a record with any fields."""
        return {}


def params(tool_doc: dict[str, Any], op_id: str) -> dict[str, Any]:
    return tool_doc["paths"][f"/{op_id}"]["post"]["requestBody"]["content"]["application/json"]["schema"]


def result(tool_doc: dict[str, Any], op_id: str) -> dict[str, Any]:
    return tool_doc["paths"][f"/{op_id}"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]


def test_signature_hints_and_google_docstring() -> None:
    doc = from_callables([book], title="air", access={"book": "write"})
    op = doc["paths"]["/book"]["post"]
    assert op["description"] == "Book a flight.\n\nBooks seats for every passenger."
    assert op["x-gecko-access"] == "write"
    schema = params(doc, "book")
    assert schema["required"] == ["passengers", "cabin"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert list(props) == ["passengers", "cabin", "bags", "note"]
    assert props["passengers"] == {"type": "array", "items": {"$ref": "#/components/schemas/Passenger"}, "description": "Who travels."}
    assert props["cabin"]["enum"] == ["economy", "business"]
    assert props["bags"] == {"type": "integer", "description": "Checked bags.", "default": 0}
    assert props["note"]["default"] is None
    assert {"type": "null"} in props["note"]["anyOf"]
    assert all("title" not in p for p in props.values())


def test_pydantic_models_become_shared_components_and_the_result() -> None:
    doc = from_callables([book], title="air")
    schemas = doc["components"]["schemas"]
    assert set(schemas) == {"Booking", "Passenger"}
    assert schemas["Booking"]["properties"]["passengers"]["items"] == {"$ref": "#/components/schemas/Passenger"}
    assert schemas["Passenger"]["properties"]["dob"]["description"] == "Date of birth, YYYY-MM-DD."
    assert result(doc, "book") == {"$ref": "#/components/schemas/Booking"}
    response = doc["paths"]["/book"]["post"]["responses"]["200"]
    assert response["description"] == "The new booking."
    assert doc["paths"]["/book"]["post"]["x-gecko-response-origin"] == "source"


def test_missing_annotations() -> None:
    doc = from_callables([ping, nothing], title="t")
    assert params(doc, "ping")["properties"]["host"] == {}
    assert params(doc, "ping")["required"] == ["host"]
    assert doc["paths"]["/ping"]["post"]["x-gecko-response-origin"] == "generic"
    assert result(doc, "nothing") == {"type": "null"}


def test_bound_methods_rest_docstring_and_kwargs() -> None:
    kit = Kit()
    doc = from_callables([kit.count, kit.update], title="kit")
    assert params(doc, "count")["properties"]["prefix"]["description"] == "Only names starting with this."
    assert "self" not in params(doc, "count")["properties"]
    assert result(doc, "count") == {"type": "integer"}
    assert params(doc, "update")["additionalProperties"] is True
    assert params(doc, "update")["required"] == ["key"]


def test_unbound_method_skips_self_and_mapping_names_tools() -> None:
    doc = from_callables({"count_things": Kit.count}, title="kit")
    assert list(doc["paths"]) == ["/count_things"]
    assert "self" not in params(doc, "count_things")["properties"]


def test_positional_only_and_var_args_are_refused() -> None:
    def pos(a: int, /) -> int:
        return a

    def star(*names: str) -> None:
        return None

    for func in (pos, star):
        with pytest.raises(ConversionError, match="cannot be passed by name"):
            callable_tools([func])


def test_undescribable_type_is_refused() -> None:
    def takes(callback: Callable[[int], int]) -> None:
        return None

    with pytest.raises(ConversionError, match="JSON Schema"):
        callable_tools([takes])


def test_documents_load_and_validate_in_the_server(load_docs: Callable[..., ToolkitRegistry]) -> None:
    registry = load_docs(air=from_callables([book], title="air", access={"book": "write"}))
    op = registry.get("air", "book")
    assert op.access == "write"
    good = {"passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}], "cabin": "economy"}
    assert op.args_validator.is_valid(good)
    assert not op.args_validator.is_valid({**good, "cabin": "first"})
    assert not op.args_validator.is_valid({**good, "passengers": [{"first_name": "A"}]})
    assert op.response_validator.is_valid({"booking_id": "X", "passengers": []})


def test_tau2_tool_kits_convert_when_present(load_docs: Callable[..., ToolkitRegistry]) -> None:
    from benchmarks.taubench.domains.airline import tools as airline
    from benchmarks.taubench.domains.retail import tools as retail

    docs = {}
    for name, kit in (("airline", airline.AirlineTools(None)), ("retail", retail.RetailTools(None))):
        docs[name] = from_callables(kit.callables(), title=name, access={n: kit.kind(n) for n in kit.names()})
    registry = load_docs(**docs)
    assert len(registry.toolkit("airline").operations) == 14
    assert len(registry.toolkit("retail").operations) == 16
    assert registry.get("airline", "book_reservation").access == "write"
    assert registry.get("retail", "get_order_details").access == "read"
