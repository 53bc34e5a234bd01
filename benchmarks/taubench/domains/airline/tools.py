"""The 14 airline tools with tau2's exact behaviour: checks, error texts, DB effects and results.

Arguments arrive unvalidated (JSON-decoded), as in tau2: list arguments of objects are turned into
models only when every element is a JSON object, and checks run in the reference's order, so the
first error reported is the same. The class and method names matter too: a missing or unexpected
argument is reported with Python's own message, which names `AirlineTools.<tool>()`.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

from benchmarks.taubench.arithmetic import calculate_expression
from benchmarks.taubench.domain_tools import DomainTools, tool
from benchmarks.taubench.domains.airline.data_model import (
    AirportCode,
    CabinClass,
    Certificate,
    DirectFlight,
    Flight,
    FlightDateStatus,
    FlightDateStatusAvailable,
    FlightDB,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)

NOW = "2024-05-15T15:00:00"
"""The simulated current time: every booking is created at this instant."""

NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""Ids given to new reservations, first free one first."""

NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""Ids given to new certificates, first free one first."""

AIRPORTS = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
    ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
    ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"),
    ("MCO", "Orlando"), ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"),
    ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)

INSURANCE_FEE = 30
"""Travel insurance, per passenger, in dollars."""
BAG_FEE = 50
"""Each non-free checked bag, in dollars."""


def _as_models(items: Any, model: type[Any]) -> Any:
    """Build `model`s from a list of JSON objects; anything else is returned untouched."""
    if all(isinstance(item, dict) for item in items):
        return [model(**item) for item in items]
    return items


class AirlineTools(DomainTools):
    """The airline customer-service tools over a `FlightDB`."""

    db: FlightDB

    # --- lookups -----------------------------------------------------------------------------

    def _user(self, user_id: str) -> User:
        if user_id not in self.db.users:
            raise ValueError(f"User {user_id} not found")
        return self.db.users[user_id]

    def _reservation(self, reservation_id: str) -> Reservation:
        if reservation_id not in self.db.reservations:
            raise ValueError(f"Reservation {reservation_id} not found")
        return self.db.reservations[reservation_id]

    def _flight(self, flight_number: str) -> Flight:
        if flight_number not in self.db.flights:
            raise ValueError(f"Flight {flight_number} not found")
        return self.db.flights[flight_number]

    def _flight_on(self, flight_number: str, date: str) -> FlightDateStatus:
        flight = self._flight(flight_number)
        if date not in flight.dates:
            raise ValueError(f"Flight {flight_number} not found on date {date}")
        return flight.dates[date]

    def _direct_flights(
        self,
        date: str,
        origin: Optional[str] = None,
        destination: Optional[str] = None,
        leave_after: Optional[str] = None,
    ) -> list[DirectFlight]:
        """Bookable legs on `date`; `None` filters match anything, times compare as strings."""
        found = []
        for flight in self.db.flights.values():
            if origin is not None and flight.origin != origin:
                continue
            if destination is not None and flight.destination != destination:
                continue
            on_date = flight.dates.get(date)
            if not isinstance(on_date, FlightDateStatusAvailable):
                continue
            if leave_after is not None and flight.scheduled_departure_time_est < leave_after:
                continue
            found.append(
                DirectFlight(
                    flight_number=flight.flight_number,
                    origin=flight.origin,
                    destination=flight.destination,
                    status="available",
                    scheduled_departure_time_est=flight.scheduled_departure_time_est,
                    scheduled_arrival_time_est=flight.scheduled_arrival_time_est,
                    available_seats=on_date.available_seats,
                    prices=on_date.prices,
                )
            )
        return found

    def _charge_for_change(self, user: User, payment_id: str, amount: int) -> Optional[Payment]:
        """Charge (or refund, if negative) a change to a saved method; certificates are refused."""
        if payment_id not in user.payment_methods:
            raise ValueError("Payment method not found")
        method = user.payment_methods[payment_id]
        if method.source == "certificate":
            raise ValueError("Certificate cannot be used to update reservation")
        if method.source == "gift_card" and method.amount < amount:
            raise ValueError("Gift card balance is not enough")
        if method.source == "gift_card":
            method.amount -= amount
        if amount == 0:
            return None
        return Payment(payment_id=payment_id, amount=amount)

    # --- tools -------------------------------------------------------------------------------

    @tool("write")
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[FlightInfo],
        passengers: list[Passenger],
        payment_methods: list[Payment],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Reservation:
        """Create a new reservation for a user and charge it to their saved payment methods.

        The price is the cabin fare of every flight leg times the number of passengers, plus $30 per
        passenger with insurance, plus $50 per non-free bag. The payments must add up to exactly
        that total; gift cards and certificates must hold enough value, and a certificate used here
        is consumed entirely.

        Args:
            user_id: Id of the user who books, e.g. 'sara_doe_496'.
            origin: IATA code of the airport where the trip starts, e.g. 'SFO'.
            destination: IATA code of the trip's destination, e.g. 'JFK'.
            flight_type: 'one_way' or 'round_trip'.
            cabin: 'basic_economy', 'economy' or 'business'; applies to every leg.
            flights: Every flight leg to book, in travel order, each with its flight number and date.
            passengers: Every traveller, each with first name, last name and date of birth.
            payment_methods: How to pay: saved payment method ids with the amount taken from each.
            total_baggages: Number of checked bags in total.
            nonfree_baggages: Number of checked bags that must be paid for.
            insurance: 'yes' to add travel insurance, otherwise 'no'.

        Returns:
            The new reservation.

        Raises:
            ValueError: If the user, a flight or a payment method does not exist, a flight is not
                bookable or lacks seats, a balance is too low, or the payments do not match the price.
        """
        flights = _as_models(flights, FlightInfo)
        passengers = _as_models(passengers, Passenger)
        payment_methods = _as_models(payment_methods, Payment)
        user = self._user(user_id)
        reservation_id = next((rid for rid in NEW_RESERVATION_IDS if rid not in self.db.reservations), None)
        if reservation_id is None:
            raise ValueError("Too many reservations")
        reservation = Reservation(
            reservation_id=reservation_id,
            user_id=user_id,
            origin=origin,
            destination=destination,
            flight_type=flight_type,
            cabin=cabin,
            flights=[],
            passengers=copy.deepcopy(passengers),
            payment_history=copy.deepcopy(payment_methods),
            created_at=NOW,
            total_baggages=total_baggages,
            nonfree_baggages=nonfree_baggages,
            insurance=insurance,
        )

        price = 0
        legs: list[FlightDateStatusAvailable] = []
        for leg in flights:
            flight = self._flight(leg.flight_number)
            on_date = self._flight_on(leg.flight_number, leg.date)
            if not isinstance(on_date, FlightDateStatusAvailable):
                raise ValueError(f"Flight {leg.flight_number} not available on date {leg.date}")
            if on_date.available_seats[cabin] < len(passengers):
                raise ValueError(f"Not enough seats on flight {leg.flight_number}")
            fare = on_date.prices[cabin]
            reservation.flights.append(
                ReservationFlight(
                    origin=flight.origin,
                    destination=flight.destination,
                    flight_number=leg.flight_number,
                    date=leg.date,
                    price=fare,
                )
            )
            legs.append(on_date)
            price += fare * len(passengers)
        if insurance == "yes":
            price += INSURANCE_FEE * len(passengers)
        price += BAG_FEE * nonfree_baggages

        for payment in payment_methods:
            if payment.payment_id not in user.payment_methods:
                raise ValueError(f"Payment method {payment.payment_id} not found")
            method = user.payment_methods[payment.payment_id]
            if method.source in {"gift_card", "certificate"} and method.amount < payment.amount:
                raise ValueError(f"Not enough balance in payment method {payment.payment_id}")
        paid = sum(payment.amount for payment in payment_methods)
        if paid != price:
            raise ValueError(f"Payment amount does not add up, total price is {price}, but paid {paid}")

        for payment in payment_methods:
            method = user.payment_methods[payment.payment_id]
            if method.source == "gift_card":
                method.amount -= payment.amount
            elif method.source == "certificate":
                user.payment_methods.pop(payment.payment_id)
        for on_date in legs:
            on_date.available_seats[cabin] -= len(passengers)
        self.db.reservations[reservation_id] = reservation
        self.db.users[user_id].reservations.append(reservation_id)
        return reservation

    @tool("generic")
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression and round the result to two decimals.

        Args:
            expression: Numbers combined with +, -, *, / and parentheses, e.g. '(200 + 30) * 2'.

        Returns:
            The result as text, e.g. '460.0'.

        Raises:
            ValueError: If the expression has other characters or cannot be evaluated.
        """
        return calculate_expression(expression)

    @tool("write")
    def cancel_reservation(self, reservation_id: str) -> Reservation:
        """Cancel a whole reservation and refund every payment made for it to its original method.

        Args:
            reservation_id: Id of the reservation, e.g. 'ZFA04Y'.

        Returns:
            The reservation after cancellation.

        Raises:
            ValueError: If the reservation does not exist.
        """
        reservation = self._reservation(reservation_id)
        refunds = [
            Payment(payment_id=payment.payment_id, amount=-payment.amount)
            for payment in reservation.payment_history
        ]
        reservation.payment_history.extend(refunds)
        reservation.status = "cancelled"
        # As in tau2, seats are not released on cancellation.
        return reservation

    @tool("read")
    def get_reservation_details(self, reservation_id: str) -> Reservation:
        """Look up a reservation: itinerary, passengers, cabin, bags, insurance and payments.

        Args:
            reservation_id: Id of the reservation, e.g. '8JX2WO'.

        Returns:
            The reservation.

        Raises:
            ValueError: If the reservation does not exist.
        """
        return self._reservation(reservation_id)

    @tool("read")
    def get_user_details(self, user_id: str) -> User:
        """Look up a user's profile: contact details, membership, saved payment methods and reservation ids.

        Args:
            user_id: Id of the user, e.g. 'sara_doe_496'.

        Returns:
            The user profile.

        Raises:
            ValueError: If the user does not exist.
        """
        return self._user(user_id)

    @tool("read")
    def list_all_airports(self) -> list[AirportCode]:
        """List every airport the airline serves, with its city.

        Returns:
            IATA code and city of each airport.
        """
        return [AirportCode(iata=iata, city=city) for iata, city in AIRPORTS]

    @tool("read")
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[DirectFlight]:
        """Find non-stop flights between two airports that can still be booked on a date.

        Args:
            origin: IATA code of the departure airport, e.g. 'JFK'.
            destination: IATA code of the arrival airport, e.g. 'LAX'.
            date: Travel date, YYYY-MM-DD, e.g. '2024-05-20'.

        Returns:
            The bookable flights with schedule, free seats and fares per cabin.
        """
        return self._direct_flights(date=date, origin=origin, destination=destination)

    @tool("read")
    def search_onestop_flight(
        self, origin: str, destination: str, date: str
    ) -> list[tuple[DirectFlight, DirectFlight]]:
        """Find bookable connections with exactly one stop between two airports, leaving on a date.

        The second leg departs after the first one arrives; it may be on the next day when the first
        leg arrives after midnight.

        Args:
            origin: IATA code of the departure airport, e.g. 'JFK'.
            destination: IATA code of the final arrival airport, e.g. 'LAX'.
            date: Date of the first leg, YYYY-MM-DD, e.g. '2024-05-20'.

        Returns:
            Pairs of legs (first leg, second leg), each with its date.
        """
        pairs: list[Any] = []
        for first in self._direct_flights(date=date, origin=origin):
            first.date = date
            # Day rollover as the reference computes it (May dates, no zero padding).
            next_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first.scheduled_arrival_time_est else date
            for second in self._direct_flights(
                date=next_date,
                origin=first.destination,
                destination=destination,
                leave_after=first.scheduled_arrival_time_est,
            ):
                second.date = next_date
                pairs.append([first, second])
        return pairs

    @tool("write")
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Give a user a travel certificate worth an amount, e.g. as compensation. Use with care.

        Args:
            user_id: Id of the user, e.g. 'sara_doe_496'.
            amount: Value of the certificate in dollars.

        Returns:
            A confirmation naming the new certificate.

        Raises:
            ValueError: If the user does not exist.
        """
        user = self._user(user_id)
        for certificate_id in NEW_CERTIFICATE_IDS:
            if certificate_id not in user.payment_methods:
                user.payment_methods[certificate_id] = Certificate(
                    id=certificate_id, amount=amount, source="certificate"
                )
                return f"Certificate {certificate_id} added to user {user_id} with amount {amount}."
        raise ValueError("Too many certificates")

    @tool("generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation over to a human agent, with a summary of the customer's issue.

        Transfer only when the customer explicitly asks for a human, or when the request cannot be
        handled with the policy and the tools available.

        Args:
            summary: Short description of the customer's issue.

        Returns:
            A confirmation of the transfer.
        """
        return "Transfer successful"

    @tool("write")
    def update_reservation_baggages(
        self,
        reservation_id: str,
        total_baggages: int,
        nonfree_baggages: int,
        payment_id: str,
    ) -> Reservation:
        """Change the number of checked bags on a reservation.

        Each additional non-free bag costs $50, charged to the given payment method.

        Args:
            reservation_id: Id of the reservation, e.g. 'ZFA04Y'.
            total_baggages: New total number of checked bags.
            nonfree_baggages: New number of checked bags that must be paid for.
            payment_id: Saved payment method to charge, e.g. 'credit_card_7815826' or 'gift_card_7815826'.

        Returns:
            The updated reservation.

        Raises:
            ValueError: If the reservation, user or payment method does not exist, the payment method
                is a certificate, or a gift card balance is too low.
        """
        reservation = self._reservation(reservation_id)
        user = self._user(reservation.user_id)
        extra = BAG_FEE * max(0, nonfree_baggages - reservation.nonfree_baggages)
        payment = self._charge_for_change(user, payment_id, extra)
        if payment is not None:
            reservation.payment_history.append(payment)
        reservation.total_baggages = total_baggages
        reservation.nonfree_baggages = nonfree_baggages
        return reservation

    @tool("write")
    def update_reservation_flights(
        self,
        reservation_id: str,
        cabin: CabinClass,
        flights: list[FlightInfo],
        payment_id: str,
    ) -> Reservation:
        """Replace the flights and/or cabin of a reservation and settle the fare difference.

        Give the complete new itinerary: legs that stay the same must be listed too. Unchanged legs
        in an unchanged cabin keep the fare already paid; other legs are priced at today's fare. The
        difference for all passengers is charged to, or refunded to, the given payment method.

        Args:
            reservation_id: Id of the reservation, e.g. 'ZFA04Y'.
            cabin: Cabin for the whole reservation: 'basic_economy', 'economy' or 'business'.
            flights: Every flight leg of the updated reservation, each with flight number and date.
            payment_id: Saved payment method for the difference, e.g. 'credit_card_7815826' or 'gift_card_7815826'.

        Returns:
            The updated reservation.

        Raises:
            ValueError: If the reservation, user, a flight or the payment method does not exist, a
                new flight is not bookable or lacks seats, the payment method is a certificate, or a
                gift card balance is too low.
        """
        flights = _as_models(flights, FlightInfo)
        reservation = self._reservation(reservation_id)
        user = self._user(reservation.user_id)
        travellers = len(reservation.passengers)

        price = 0
        new_legs: list[ReservationFlight] = []
        for leg in flights:
            kept = next(
                (
                    old
                    for old in reservation.flights
                    if old.flight_number == leg.flight_number and old.date == leg.date and cabin == reservation.cabin
                ),
                None,
            )
            if kept is not None:
                price += kept.price * travellers
                new_legs.append(kept)
                continue
            flight = self._flight(leg.flight_number)
            on_date = self._flight_on(leg.flight_number, leg.date)
            if not isinstance(on_date, FlightDateStatusAvailable):
                raise ValueError(f"Flight {leg.flight_number} not available on date {leg.date}")
            if on_date.available_seats[cabin] < travellers:
                raise ValueError(f"Not enough seats on flight {leg.flight_number}")
            new_leg = ReservationFlight(
                flight_number=leg.flight_number,
                date=leg.date,
                price=on_date.prices[cabin],
                origin=flight.origin,
                destination=flight.destination,
            )
            price += new_leg.price * travellers
            new_legs.append(new_leg)
        price -= sum(old.price for old in reservation.flights) * travellers

        payment = self._charge_for_change(user, payment_id, price)
        if payment is not None:
            reservation.payment_history.append(payment)
        reservation.flights = new_legs
        reservation.cabin = cabin
        # As in tau2, seat counts are not updated on a flight change.
        return reservation

    @tool("write")
    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger]) -> Reservation:
        """Replace the passenger details of a reservation; the number of passengers cannot change.

        Args:
            reservation_id: Id of the reservation, e.g. 'ZFA04Y'.
            passengers: Every passenger of the reservation, in order, with their corrected details.

        Returns:
            The updated reservation.

        Raises:
            ValueError: If the reservation does not exist or the number of passengers differs.
        """
        passengers = _as_models(passengers, Passenger)
        reservation = self._reservation(reservation_id)
        if len(passengers) != len(reservation.passengers):
            raise ValueError("Number of passengers does not match")
        reservation.passengers = copy.deepcopy(passengers)
        return reservation

    @tool("read")
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """Get the status of a flight on a date.

        Args:
            flight_number: Flight number, e.g. 'HAT001'.
            date: Flight date, YYYY-MM-DD, e.g. '2024-05-15'.

        Returns:
            One of 'available', 'on time', 'delayed', 'flying', 'landed', 'cancelled'.

        Raises:
            ValueError: If the flight does not operate on that date.
        """
        return self._flight_on(flight_number, date).status
