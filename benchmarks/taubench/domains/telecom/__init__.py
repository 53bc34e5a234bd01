"""The telecom domain (dual control): the carrier's tools for the agent, the phone's tools for the customer."""

from benchmarks.taubench.domains.telecom.data_model import TelecomDB
from benchmarks.taubench.domains.telecom.sync import sync
from benchmarks.taubench.domains.telecom.tools import TelecomTools
from benchmarks.taubench.domains.telecom.user_data_model import TelecomUserDB
from benchmarks.taubench.domains.telecom.user_tools import TelecomUserTools

__all__ = ["TelecomDB", "TelecomTools", "TelecomUserDB", "TelecomUserTools", "sync"]
