"""A hand-made open-world task set over the small pool's tools (tau2-airline, BFCL single-turn apps, the BFCL
multi-turn MathAPI class), until the task engine makes them: four templates with machine-checkable constraints,
instantiated with different values."""

from __future__ import annotations

from pathlib import Path

from benchmarks.openworld.tasks.model import OpenWorldTask, write_tasks

AIRPORTS = ("JFK", "SFO", "LAX", "ORD", "SEA", "BOS", "DEN", "ATL")


def _cancel(i: int) -> dict:
    rid, a, b = f"R{i:04d}X", 100 + i, 25 + i
    return {
        "id": f"hand-cancel-{i}", "apps": ["tau2-airline", "mathapi"], "toolkits": ["tau2-airline", "bfcl-mt-mathapi"],
        "instruction": (f"Look up the details of airline reservation {rid} first, then cancel that reservation. "
                        f"Finally add the two refund amounts {a} and {b} to get the total. Use at most 8 tool calls."),
        "constraints": [
            {"id": "look-first", "kind": "order", "text": "Look up the reservation before cancelling it.",
             "check": {"before": "get_reservation_details", "after": "cancel_reservation"}},
            {"id": "budget", "kind": "budget", "text": "Use at most 8 tool calls.", "check": {"max_calls": 8}},
        ],
        "checklist": [f"Reservation {rid} was looked up", f"Reservation {rid} is cancelled",
                      f"The refund total {a} + {b} was computed"],
        "reference": [
            {"toolkit": "tau2-airline", "tool": "get_reservation_details", "arguments": {"reservation_id": rid}},
            {"toolkit": "tau2-airline", "tool": "cancel_reservation", "arguments": {"reservation_id": rid}},
            {"toolkit": "bfcl-mt-mathapi", "tool": "add", "arguments": {"a": a, "b": b}},
        ],
    }


def _math(i: int) -> dict:
    n, m = 4 + i % 6, 50 + 3 * i
    return {
        "id": f"hand-math-{i}", "apps": ["math", "mathapi"], "toolkits": ["bfcl-math", "bfcl-mt-mathapi"],
        "instruction": (f"Calculate the factorial of {n}, then the square root of {m} with a precision of "
                        "2 decimal places."),
        "constraints": [{"id": "precision", "kind": "preference", "text": "Use a precision of 2 decimal places.",
                         "check": {"tool": "square_root", "argument": "precision", "value": 2}}],
        "checklist": [f"The factorial of {n} was computed", f"The square root of {m} was computed to 2 places"],
        "reference": [
            {"toolkit": "bfcl-math", "tool": "math_factorial", "arguments": {"number": n}},
            {"toolkit": "bfcl-mt-mathapi", "tool": "square_root", "arguments": {"number": m, "precision": 2}},
        ],
    }


def _flights(i: int) -> dict:
    origin, destination = AIRPORTS[i % len(AIRPORTS)], AIRPORTS[(i + 3) % len(AIRPORTS)]
    date, flight = f"2024-05-{10 + i % 15:02d}", f"HAT{100 + i:03d}"
    return {
        "id": f"hand-flights-{i}", "apps": ["tau2-airline"], "toolkits": ["tau2-airline"],
        "instruction": (f"Check the status of flight {flight} on {date}, then search direct flights from {origin} "
                        f"to {destination} on the same day. Use three-letter airport codes; the trip must be no later "
                        "than 2024-05-30."),
        "constraints": [
            {"id": "codes", "kind": "format", "text": "Use three-letter airport codes.",
             "check": {"tool": "search_direct_flight", "argument": "origin", "pattern": "^[A-Z]{3}$"}},
            {"id": "deadline", "kind": "deadline", "text": "No later than 2024-05-30.",
             "check": {"tool": "search_direct_flight", "argument": "date", "not_after": "2024-05-30"}},
        ],
        "checklist": [f"The status of flight {flight} on {date} was checked",
                      f"Direct flights {origin}–{destination} on {date} were searched"],
        "reference": [
            {"toolkit": "tau2-airline", "tool": "get_flight_status", "arguments": {"flight_number": flight, "date": date}},
            {"toolkit": "tau2-airline", "tool": "search_direct_flight",
             "arguments": {"origin": origin, "destination": destination, "date": date}},
        ],
    }


def _weather(i: int) -> dict:
    city, days = ("Seattle", "Denver", "Boston", "Miami")[i % 4], 3 + i % 4
    numbers = [60 + i, 70 + i, 80 + i]
    return {
        "id": f"hand-weather-{i}", "apps": ["weather", "mathapi"], "toolkits": ["bfcl-weather", "bfcl-mt-mathapi"],
        "instruction": (f"Get the humidity forecast for {city} for the next {days} days, then compute the mean of "
                        f"the readings {numbers}."),
        "constraints": [{"id": "forecast-first", "kind": "order", "text": "Get the forecast before computing.",
                         "check": {"before": "weather_humidity_forecast", "after": "mean"}}],
        "checklist": [f"The humidity forecast for {city} was fetched", "The mean of the readings was computed"],
        "reference": [
            {"toolkit": "bfcl-weather", "tool": "weather_humidity_forecast", "arguments": {"location": city, "days": days}},
            {"toolkit": "bfcl-mt-mathapi", "tool": "mean", "arguments": {"numbers": numbers}},
        ],
    }


TEMPLATES = (_cancel, _math, _flights, _weather)


def handmade_tasks(count: int = 8) -> list[OpenWorldTask]:
    """`count` tasks, the templates in turn."""
    return [OpenWorldTask.model_validate({**TEMPLATES[i % len(TEMPLATES)](i), "origin": {"engine": "hand"}})
            for i in range(count)]


def write_taskset(directory: Path, count: int = 8) -> Path:
    """Write `count` tasks as `<directory>/tasks.jsonl`; return the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    write_tasks(directory / "tasks.jsonl", handmade_tasks(count))
    return directory
