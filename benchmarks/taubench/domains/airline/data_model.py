"""Airline records: flights with per-date status, users with payment methods, reservations.

Field names, types and order follow the tau2 airline `db.json` schema, because tool outputs are
these models dumped to JSON and the DB fingerprint hashes their dump: any difference would change
what the agent sees and the reward. Only the database root forbids unknown fields (as in tau2).
"""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]
MembershipLevel = Literal["gold", "silver", "regular"]


class AirportCode(BaseModel):
    """An airport the airline serves."""

    iata: str = Field(description="Three-letter IATA airport code, e.g. 'JFK'")
    city: str = Field(description="City the airport serves")


class Name(BaseModel):
    """A person's name."""

    first_name: str = Field(description="Given name")
    last_name: str = Field(description="Family name")


class Address(BaseModel):
    """A postal address."""

    address1: str = Field(description="Street line")
    address2: Optional[str] = Field(None, description="Second address line, if any")
    city: str = Field(description="City")
    country: str = Field(description="Country")
    state: str = Field(description="State or province")
    zip: str = Field(description="Postal code")


class Payment(BaseModel):
    """One charge (positive) or refund (negative) against a saved payment method."""

    payment_id: str = Field(description="Id of the payment method in the user's profile, e.g. 'credit_card_7815826'")
    amount: int = Field(description="Amount in whole dollars")


class PaymentMethodBase(BaseModel):
    """Fields shared by every saved payment method."""

    source: str = Field(description="Kind of payment method")
    id: str = Field(description="Payment method id")


class CreditCard(PaymentMethodBase):
    """A saved credit card."""

    source: Literal["credit_card"] = Field(description="Always 'credit_card'")
    brand: str = Field(description="Card network, e.g. 'visa'")
    last_four: str = Field(description="Last four digits of the card number")


class GiftCard(PaymentMethodBase):
    """A gift card with a remaining balance."""

    source: Literal["gift_card"] = Field(description="Always 'gift_card'")
    amount: float = Field(description="Remaining balance in dollars")
    id: str = Field(description="Payment method id")


class Certificate(PaymentMethodBase):
    """A travel certificate: single use, worth a fixed amount."""

    source: Literal["certificate"] = Field(description="Always 'certificate'")
    amount: float = Field(description="Value in dollars")


PaymentMethod = Union[CreditCard, GiftCard, Certificate]


class Passenger(BaseModel):
    """A traveller on a reservation (or saved in a profile)."""

    first_name: str = Field(description="Given name")
    last_name: str = Field(description="Family name")
    dob: str = Field(description="Date of birth, YYYY-MM-DD")


SeatCounts = dict[CabinClass, int]


class FlightDateStatusAvailable(BaseModel):
    """A flight date still open for booking."""

    status: Literal["available"] = Field(description="Always 'available'")
    available_seats: SeatCounts = Field(description="Free seats per cabin")
    prices: SeatCounts = Field(description="Fare per passenger per cabin, in dollars")


class FlightDateStatusLanded(BaseModel):
    """A flight date that has already flown."""

    status: Literal["landed"] = Field(description="Always 'landed'")
    actual_departure_time_est: str = Field(description="Departure time (EST), YYYY-MM-DDTHH:MM:SS")
    actual_arrival_time_est: str = Field(description="Arrival time (EST), YYYY-MM-DDTHH:MM:SS")


class FlightDateStatusCancelled(BaseModel):
    """A cancelled flight date."""

    status: Literal["cancelled"] = Field(description="Always 'cancelled'")


class FlightDateStatusDelayed(BaseModel):
    """A delayed flight date."""

    status: Literal["delayed"] = Field(description="Always 'delayed'")
    estimated_departure_time_est: str = Field(description="Expected departure (EST), YYYY-MM-DDTHH:MM:SS")
    estimated_arrival_time_est: str = Field(description="Expected arrival (EST), YYYY-MM-DDTHH:MM:SS")


class FlightDataStatusFlying(BaseModel):
    """A flight date currently in the air."""

    status: Literal["flying"] = Field(description="Always 'flying'")
    actual_departure_time_est: str = Field(description="Departure time (EST), YYYY-MM-DDTHH:MM:SS")
    estimated_arrival_time_est: str = Field(description="Expected arrival (EST), YYYY-MM-DDTHH:MM:SS")


class FlightDataStatusOnTime(BaseModel):
    """A flight date expected to leave on schedule (no longer bookable)."""

    status: Literal["on time"] = Field(description="Always 'on time'")
    estimated_departure_time_est: str = Field(description="Expected departure (EST), YYYY-MM-DDTHH:MM:SS")
    estimated_arrival_time_est: str = Field(description="Expected arrival (EST), YYYY-MM-DDTHH:MM:SS")


FlightDateStatus = Union[
    FlightDateStatusAvailable,
    FlightDateStatusLanded,
    FlightDateStatusCancelled,
    FlightDateStatusDelayed,
    FlightDataStatusFlying,
    FlightDataStatusOnTime,
]


class FlightBase(BaseModel):
    """A scheduled flight leg."""

    flight_number: str = Field(description="Flight number, e.g. 'HAT001'")
    origin: str = Field(description="IATA code of the departure airport")
    destination: str = Field(description="IATA code of the arrival airport")


class Flight(FlightBase):
    """A flight with its schedule and its status on each date it operates."""

    scheduled_departure_time_est: str = Field(description="Scheduled departure (EST), HH:MM:SS")
    scheduled_arrival_time_est: str = Field(
        description="Scheduled arrival (EST), HH:MM:SS; a '+1' suffix means the next day"
    )
    dates: dict[str, FlightDateStatus] = Field(description="Status per date (YYYY-MM-DD)")


class DirectFlight(FlightBase):
    """A bookable flight on one date, as returned by the flight searches."""

    status: Literal["available"] = Field(description="Always 'available'")
    scheduled_departure_time_est: str = Field(description="Scheduled departure (EST), HH:MM:SS")
    scheduled_arrival_time_est: str = Field(
        description="Scheduled arrival (EST), HH:MM:SS; a '+1' suffix means the next day"
    )
    date: Optional[str] = Field(None, description="Flight date, YYYY-MM-DD (set in one-stop results)")
    available_seats: SeatCounts = Field(description="Free seats per cabin")
    prices: SeatCounts = Field(description="Fare per passenger per cabin, in dollars")


class ReservationFlight(FlightBase):
    """One flight leg of a reservation, with the fare paid per passenger."""

    date: str = Field(description="Flight date, YYYY-MM-DD")
    price: int = Field(description="Fare per passenger, in dollars")


class FlightInfo(BaseModel):
    """A flight leg to book: flight number and date."""

    flight_number: str = Field(description="Flight number, e.g. 'HAT001'")
    date: str = Field(description="Flight date, YYYY-MM-DD, e.g. '2024-05-01'")


class User(BaseModel):
    """A customer profile."""

    user_id: str = Field(description="User id, e.g. 'sara_doe_496'")
    name: Name = Field(description="Customer's name")
    address: Address = Field(description="Customer's address")
    email: str = Field(description="Email address")
    dob: str = Field(description="Date of birth, YYYY-MM-DD")
    payment_methods: dict[str, PaymentMethod] = Field(description="Saved payment methods by id")
    saved_passengers: list[Passenger] = Field(description="Passengers saved for quick booking")
    membership: MembershipLevel = Field(description="Membership tier")
    reservations: list[str] = Field(description="Ids of the user's reservations")


class Reservation(BaseModel):
    """A booking: itinerary, passengers, payments and extras."""

    reservation_id: str = Field(description="Reservation id, e.g. 'ZFA04Y'")
    user_id: str = Field(description="Owner's user id")
    origin: str = Field(description="IATA code where the trip starts")
    destination: str = Field(description="IATA code of the trip's destination")
    flight_type: FlightType = Field(description="'one_way' or 'round_trip'")
    cabin: CabinClass = Field(description="Cabin for every leg")
    flights: list[ReservationFlight] = Field(description="Flight legs")
    passengers: list[Passenger] = Field(description="Travellers")
    payment_history: list[Payment] = Field(description="Charges and refunds, oldest first")
    created_at: str = Field(description="Booking time, YYYY-MM-DDTHH:MM:SS")
    total_baggages: int = Field(description="Checked bags in total")
    nonfree_baggages: int = Field(description="Checked bags that were paid for")
    insurance: Insurance = Field(description="Whether travel insurance was bought")
    status: Optional[Literal["cancelled"]] = Field(None, description="'cancelled', or null while active")


class FlightDB(BaseModel):
    """The airline database: flights, users and reservations, each keyed by id."""

    model_config = ConfigDict(extra="forbid")

    flights: dict[str, Flight] = Field(description="Flights by flight number")
    users: dict[str, User] = Field(description="Users by user id")
    reservations: dict[str, Reservation] = Field(description="Reservations by reservation id")
