"""Shared by the tool search tests: OpenAI function definitions in one line each, and a small corpus of them."""

from __future__ import annotations

from pathlib import Path

from gecko.convert import from_openai
from gecko.convert.document import write_document


def openai_function(name: str, description: str, **params: str) -> dict:
    """An OpenAI tool definition whose parameters are the given names, each a string with that description."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {p: {"type": "string", "description": d} for p, d in params.items()}}}}


def write_airline_and_weather(root: Path) -> Path:
    """Write two toolkits into `root` (made if missing): an airline (search, book, cancel) and a weather service."""
    root.mkdir(parents=True, exist_ok=True)
    write_document(from_openai([
        openai_function("search_flights", "Find flights between two airports on a date.",
                        origin="IATA code of the departure airport"),
        openai_function("book_flight", "Book a seat on a flight for a passenger.", flight_id="the flight"),
        openai_function("cancelReservation", "Cancel an existing reservation.", reservation_id="the booking"),
    ], title="Airline"), root / "airline.json")
    write_document(from_openai([
        openai_function("get_weather", "Current weather for a city.", city="city name"),
        openai_function("get_forecast", "Seven-day weather forecast.", city="city name"),
    ], title="Weather"), root / "weather.json")
    return root
