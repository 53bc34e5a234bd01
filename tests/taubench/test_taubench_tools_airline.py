"""Airline tools: kinds, results as tau2 serialises them, error texts and effects on the DB."""

from __future__ import annotations

import json

import pytest

from benchmarks.taubench.environment import DomainRuntime, Environment
from benchmarks.taubench.messages import MessageToolCall

USER = "mei_hernandez_8984"  # credit card, gift card and two certificates
BOOKING = {
    "user_id": USER,
    "origin": "JFK",
    "destination": "SEA",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [{"flight_number": "HAT069", "date": "2024-05-20"}],
    "passengers": [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1990-04-05"}],
    "payment_methods": [{"payment_id": "credit_card_2140654", "amount": 121}],
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
}


@pytest.fixture
def env(airline: DomainRuntime) -> Environment:
    return airline.environment()


def test_tool_list_and_kinds(airline: DomainRuntime) -> None:
    names = airline.tool_names()
    assert len(names) == 14
    writes = {n for n in names if airline.kind(n) == "write"}
    assert writes == {
        "book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
        "update_reservation_flights", "update_reservation_passengers",
    }
    assert airline.tool_type("calculate") == "generic" and airline.kind("calculate") == "read"
    assert airline.tool_type("transfer_to_human_agents") == "generic"
    assert airline.tool_type("get_flight_status") == "read"


def test_string_results_are_passed_through(env: Environment) -> None:
    assert env.execute("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-03"}).content == "cancelled"
    assert env.execute("transfer_to_human_agents", {"summary": "x"}).content == "Transfer successful"
    assert env.execute("calculate", {"expression": "(100 + 21) / 3"}).content == "40.33"


def test_model_results_are_json_in_field_order(env: Environment) -> None:
    airports = env.execute("list_all_airports", {}).json()
    assert len(airports) == 20 and airports[0] == {"iata": "SFO", "city": "San Francisco"}
    content = env.execute("get_reservation_details", {"reservation_id": "R9QDGB"}).content
    assert content.startswith('{"reservation_id": "R9QDGB", "user_id": "mei_hernandez_8984", "origin": ')
    assert content.endswith('"nonfree_baggages": 0, "insurance": "yes", "status": null}')


def test_direct_search_leaves_the_date_null(env: Environment) -> None:
    flights = env.execute("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}).json()
    assert {f["flight_number"] for f in flights} == {"HAT069", "HAT083"}
    assert all(f["date"] is None and f["status"] == "available" for f in flights)
    assert list(flights[0]) == [
        "flight_number", "origin", "destination", "status", "scheduled_departure_time_est",
        "scheduled_arrival_time_est", "date", "available_seats", "prices",
    ]


def test_onestop_search_sets_dates_and_rolls_over(env: Environment) -> None:
    pairs = env.execute("search_onestop_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}).json()
    assert pairs and all(len(p) == 2 and p[0]["date"] == "2024-05-20" for p in pairs)
    assert all(p[1]["scheduled_departure_time_est"] >= p[0]["scheduled_arrival_time_est"] for p in pairs)
    # HAT021 SEA->JFK arrives at 01:00:00+1: its connections are searched on the next day.
    rolled = env.execute("search_onestop_flight", {"origin": "SEA", "destination": "ATL", "date": "2024-05-20"}).json()
    overnight = [p for p in rolled if "+1" in p[0]["scheduled_arrival_time_est"]]
    assert overnight and all(p[1]["date"] == "2024-05-21" for p in overnight)


def test_booking_prices_charges_and_updates_the_db(env: Environment) -> None:
    seats = env.db.flights["HAT069"].dates["2024-05-20"].available_seats["economy"]
    outcome = env.execute(
        "book_reservation",
        {**BOOKING, "insurance": "yes", "total_baggages": 2, "nonfree_baggages": 1,
         "payment_methods": [{"payment_id": "credit_card_2140654", "amount": 201}]},
    )
    reservation = outcome.json()
    assert not outcome.error and reservation["reservation_id"] == "HATHAT"
    assert reservation["created_at"] == "2024-05-15T15:00:00"
    assert reservation["flights"] == [
        {"flight_number": "HAT069", "origin": "JFK", "destination": "SEA", "date": "2024-05-20", "price": 121}
    ]
    assert env.db.flights["HAT069"].dates["2024-05-20"].available_seats["economy"] == seats - 1
    assert env.db.users[USER].reservations[-1] == "HATHAT"
    assert env.execute("book_reservation", BOOKING).json()["reservation_id"] == "HATHAU"


def test_booking_errors_come_in_the_reference_order(env: Environment) -> None:
    def error(**changes: object) -> str:
        outcome = env.execute("book_reservation", {**BOOKING, **changes})
        assert outcome.error
        return outcome.content

    assert error(user_id="nobody") == "Error: User nobody not found"
    assert error(payment_methods=[{"payment_id": "credit_card_2140654", "amount": 100}]) == (
        "Error: Payment amount does not add up, total price is 121, but paid 100"
    )
    assert error(payment_methods=[{"payment_id": "gift_card_0", "amount": 121}]) == (
        "Error: Payment method gift_card_0 not found"
    )
    assert error(flights=[{"flight_number": "HAT001", "date": "2024-05-03"}]) == (
        "Error: Flight HAT001 not available on date 2024-05-03"
    )
    assert error(flights=[{"flight_number": "HAT001", "date": "2023-01-01"}]) == (
        "Error: Flight HAT001 not found on date 2023-01-01"
    )
    assert error(flights=["HAT069"]) == "Error: 'str' object has no attribute 'flight_number'"
    assert error(cabin="premium").startswith("Error: 1 validation error for Reservation\ncabin\n")
    assert error(passengers=[{"first_name": "Mei"}]).startswith("Error: 2 validation errors for Passenger")
    assert len(env.writes) == 8  # failed writes are logged too: a failing tool may have mutated the DB


def test_a_certificate_is_consumed_by_a_booking(env: Environment) -> None:
    certificate = env.db.users[USER].payment_methods["certificate_7502997"]
    assert certificate.amount >= 121
    env.execute("book_reservation", {**BOOKING, "payment_methods": [{"payment_id": "certificate_7502997", "amount": 121}]})
    assert "certificate_7502997" not in env.db.users[USER].payment_methods


def test_reservation_and_certificate_ids_run_out(env: Environment) -> None:
    ids = [env.execute("book_reservation", BOOKING).json()["reservation_id"] for _ in range(3)]
    assert ids == ["HATHAT", "HATHAU", "HATHAV"]
    assert env.execute("book_reservation", BOOKING).content == "Error: Too many reservations"
    messages = [env.execute("send_certificate", {"user_id": USER, "amount": 100}).content for _ in range(4)]
    assert messages[0] == f"Certificate certificate_3221322 added to user {USER} with amount 100."
    assert messages[2].startswith("Certificate certificate_3221324")
    assert messages[3] == "Error: Too many certificates"


def test_cancellation_refunds_but_keeps_seats(env: Environment) -> None:
    reservation = env.execute("get_reservation_details", {"reservation_id": "R9QDGB"}).json()
    leg = reservation["flights"][0]
    seats_before = env.db.flights[leg["flight_number"]].dates[leg["date"]].model_dump()
    cancelled = env.execute("cancel_reservation", {"reservation_id": "R9QDGB"}).json()
    paid = reservation["payment_history"]
    assert cancelled["status"] == "cancelled"
    assert cancelled["payment_history"] == paid + [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in paid]
    assert env.db.flights[leg["flight_number"]].dates[leg["date"]].model_dump() == seats_before


def test_changes_refuse_certificates_and_charge_gift_cards(env: Environment) -> None:
    bags = {"reservation_id": "R9QDGB", "total_baggages": 3, "nonfree_baggages": 2}
    assert env.execute("update_reservation_baggages", {**bags, "payment_id": "certificate_7502997"}).content == (
        "Error: Certificate cannot be used to update reservation"
    )
    assert env.execute("update_reservation_baggages", {**bags, "payment_id": "nope"}).content == (
        "Error: Payment method not found"
    )
    card = env.db.users[USER].payment_methods["gift_card_5309492"]
    assert card.amount == 98.0 and env.db.reservations["R9QDGB"].nonfree_baggages == 0
    assert env.execute("update_reservation_baggages", {**bags, "payment_id": "gift_card_5309492"}).content == (
        "Error: Gift card balance is not enough"
    )
    result = env.execute("update_reservation_baggages", {**bags, "nonfree_baggages": 1, "payment_id": "gift_card_5309492"})
    assert card.amount == 48.0
    assert result.json()["payment_history"][-1] == {"payment_id": "gift_card_5309492", "amount": 50}
    assert (result.json()["total_baggages"], result.json()["nonfree_baggages"]) == (3, 1)


def test_flight_change_prices_only_new_legs(env: Environment) -> None:
    reservation = env.db.reservations["R9QDGB"]
    same = [{"flight_number": f.flight_number, "date": f.date} for f in reservation.flights]
    history = len(reservation.payment_history)
    env.execute("update_reservation_flights", {"reservation_id": "R9QDGB", "cabin": reservation.cabin,
                                               "flights": same, "payment_id": "credit_card_2140654"})
    assert len(env.db.reservations["R9QDGB"].payment_history) == history  # nothing to pay: no payment
    outcome = env.execute("update_reservation_flights", {"reservation_id": "R9QDGB", "cabin": "premium",
                                                         "flights": same, "payment_id": "credit_card_2140654"})
    assert outcome.content == "Error: 'premium'"


def test_passenger_update_keeps_the_count(env: Environment) -> None:
    assert env.execute("update_reservation_passengers", {"reservation_id": "R9QDGB", "passengers": []}).content == (
        "Error: Number of passengers does not match"
    )


def test_argument_errors_use_pythons_messages(env: Environment) -> None:
    assert env.execute("get_user_details", {}).content == (
        "Error: AirlineTools.get_user_details() missing 1 required positional argument: 'user_id'"
    )
    assert env.execute("get_user_details", {"user_id": USER, "x": 1}).content == (
        "Error: AirlineTools.get_user_details() got an unexpected keyword argument 'x'"
    )
    assert env.execute("think", {"thought": "x"}).content == "Error: Tool 'think' not found."


def test_respond_builds_tool_messages_and_rejects_user_calls(env: Environment) -> None:
    message = env.respond(MessageToolCall(id="c1", name="get_user_details", arguments={"user_id": "nobody"}))
    assert (message.id, message.error, message.content) == ("c1", True, "Error: User nobody not found")
    user_call = env.respond(MessageToolCall(id="c2", name="calculate", arguments={"expression": "1"}, requestor="user"))
    assert (user_call.requestor, user_call.content) == ("user", "Error: User tools not available")


def test_fork_replays_writes_and_keeps_the_hash(airline: DomainRuntime) -> None:
    env = airline.environment()
    env.execute("get_user_details", {"user_id": USER})
    assert env.db_hash() == airline.initial_hash and not env.writes
    env.execute("book_reservation", BOOKING)
    env.execute("send_certificate", {"user_id": USER, "amount": 10})
    fork = env.fork()
    assert fork.db_hash() == env.db_hash() != airline.initial_hash
    fork.execute("cancel_reservation", {"reservation_id": "HATHAT"})
    assert fork.db_hash() != env.db_hash()
    assert json.loads(env.execute("get_reservation_details", {"reservation_id": "HATHAT"}).content)["status"] is None
