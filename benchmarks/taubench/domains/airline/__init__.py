"""The airline domain: flight bookings, changes, cancellations and compensation."""

from benchmarks.taubench.domains.airline.data_model import FlightDB
from benchmarks.taubench.domains.airline.tools import AirlineTools

__all__ = ["AirlineTools", "FlightDB"]
