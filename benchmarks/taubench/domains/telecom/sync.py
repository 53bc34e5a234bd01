"""Keeping the two sides of the telecom world consistent (tau2's `TelecomEnvironment.sync_tools`).

After every tool call, task set-up call and conversation step, the customer's surroundings follow the carrier's
records: whether the line is active and may roam, whether the data allowance is used up; a paid payment request
marks its bill paid and is cleared; a bill awaiting payment puts a payment request on the phone.
"""

from __future__ import annotations

from benchmarks.taubench.domains.telecom.data_model import LineStatus
from benchmarks.taubench.domains.telecom.tools import TelecomTools
from benchmarks.taubench.domains.telecom.user_tools import TelecomUserTools


def sync(agent: TelecomTools, user: TelecomUserTools) -> None:
    """Bring the customer's surroundings in line with the carrier's DB (a no-op before the customer is known).

    Args:
        agent: the carrier's tools (agent DB).
        user: the customer's tools (user DB).

    Raises:
        ValueError: when the customer's line or plan does not exist (a broken task).
    """
    place = user.surroundings
    if place.phone_number is None:
        return
    line = agent.line_by_phone(place.phone_number)
    place.line_active = line.status == LineStatus.ACTIVE
    place.roaming_allowed = bool(line.roaming_enabled)
    plan = agent.plan(line.plan_id)
    place.mobile_data_usage_exceeded = line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb
    request = place.payment_request
    if request is not None and request.paid:
        agent.set_bill_paid(request.bill_id)
        place.payment_request = None
    if place.payment_request is None:
        awaiting = agent.bills_awaiting_payment(agent.get_customer_by_phone(place.phone_number))
        if awaiting:
            user.set_payment_request(awaiting[0].bill_id, awaiting[0].total_due)
